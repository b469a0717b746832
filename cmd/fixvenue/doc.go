// Command fixvenue is the venue's one binary.
//
//	fixvenue serve   [--config FILE] [--data DIR] [--fix-addr A] [--admin-addr A] [--metrics-addr A] [--ready-file F] ...
//	fixvenue journal verify|dump|book [--data DIR] [--config FILE] [--from SEQ] [--symbol SYM]
//	fixvenue backup  [--data DIR] [--config FILE] --to DIR   a copy of a running venue's data directory that starts
//	fixvenue md      watch|book [--symbol SYM] [--feed-addr A] [--feed-b-addr B] [--recovery-addr A], md latency [--duration D]
//	fixvenue admin   status|instruments|sessions|halt|resume|close|cancel|band|instrument add|phase|eod|
//	                 logout|disable|enable|risk show|kill|reset|limits|hash-token [options]
//	fixvenue load    [options]          open-loop FIX load generator
//	fixvenue bench   pipeline|echo|plot|table [options]   the latency lab
//	fixvenue events  tail|verify [--config FILE] [--nats URL]   the event stream on NATS JetStream
//	fixvenue risk    show|kill|reset|limits [options]   the same as fixvenue admin risk
//	fixvenue cluster status|transfer --config FILE [--to NODE] [--token T] [--tls] [--ca-file F] [--cert-file F --key-file F]
//	fixvenue version
//
// "fixvenue -h" lists the commands, "fixvenue COMMAND -h" (or "fixvenue
// help COMMAND") a command's options (on standard output, exit 0). Options may come before or after a
// command's arguments; an argument a command does not take is refused
// (exit 2), as a bad option is.
//
// Exit status: 0 success; 2 a usage error, said in one line naming the
// option or argument, before anything is sent or dialled: an option or
// argument missing or one no run can take (an admin option the command
// needs, a load rate out of bounds), a configuration or a file it names
// (a CA, a NATS credentials file) that cannot be read, or one a load or
// bench pipeline would write at its end (--hgrm, --svg) that cannot be
// written; 1 a failure at run
// time: a venue or NATS that does not answer or refuses, a mismatch, I/O,
// an events verify stopped by a signal, a load run or ramp stopped by a
// signal or a ramp by a step's error (it shows what it ran). `load` exits 3 for a run that
// completed without holding its rate (answers lost, a session failed, every
// order refused, p99 over --p99-max).
//
// Each subcommand lives in its own file (serve.go, journal.go, backup.go, admin.go, md.go,
// load.go, bench.go, events.go, risk.go, cluster.go) and registers itself in the commands table; the work is done by
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
