// Command fixconform runs FIX conformance scripts (.def files) against a
// running acceptor and exits non-zero when any script fails.
//
//	fixconform -addr 127.0.0.1:5005 [-scripts dir1,dir2,file.def] [-run regexp] [-deadline 20s] [-skip-echo] [-hook-addr 127.0.0.1:9464]
//
// Without -scripts it runs the QuickFIX FIX 4.4 server scripts from
// $FIXVENUE_QUICKFIX_DEFS, or ../shared/conformance/quickfix-fix44 next to the
// module root. -hook-addr names the venue's metrics listener, whose test hook
// (metrics.test_hooks) carries out iSET_SESSION lines. The report ends with the line "N passed, M failed". Exit
// status: 0 when every script passed, 1 when one failed, 2 when the run could
// not start or selected no script. All logic lives in package fixtests; this
// is flag parsing, so the team can expose the same run as a fixvenue
// subcommand.
package main
