// Command fixvenue is the venue's one binary.
//
//	fixvenue serve   [--config FILE] [--data DIR] [--fix-addr A] [--metrics-addr A] [--ready-file F]
//	fixvenue journal verify|dump|book --data DIR
//	fixvenue admin   status|instruments|sessions|halt|resume|close|cancel|eod|logout|disable|enable|hash-token
//	fixvenue md      watch|book|latency --symbol SYM
//	fixvenue load    [options]          open-loop FIX load generator
//	fixvenue bench   pipeline|echo|plot|table [options]   the latency lab
//	fixvenue cluster status|transfer --config FILE [--to NODE]
//	fixvenue version
//
// Each subcommand lives in its own file (serve.go, journal.go, admin.go, md.go,
// load.go, bench.go) and registers itself in the commands table; the work is done by
// the library packages (server, ops, journal, marketdata/feedclient, bench/...), so that tests
// can drive the same code. Tests that need the real binary build it once
// (main_test.go) and run it as a child process, learning its addresses from
// its --ready-file: kill -9 crash cycles, the market data book, the known
// crash shapes, QuickFIX/C++ interop, and three cluster nodes behind
// fault-injecting proxies (cluster_test.go). With [cluster] in its
// configuration, serve runs a Raft replica (cluster.go): it re-executes
// itself when it loses the leadership it served with, to rebuild from the
// committed log.
package main
