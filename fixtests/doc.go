// Package fixtests runs scripted FIX sessions against a live acceptor and
// reports, for each script, whether the acceptor answered exactly as the
// script expects.
//
// Scripts use the QuickFIX acceptance-test ".def" format, implemented here
// from its written description (../shared/conformance/README.md), not from
// QuickFIX code. A script is a list of lines; each line is one step:
//
//	iCONNECT / i2,CONNECT      open TCP connection 1 (or 2, ... 9)
//	iDISCONNECT                close our side of the connection
//	eDISCONNECT                the acceptor must close within DisconnectTimeout
//	                           (10 s) without sending a single byte first
//	I8=FIX.4.4|35=A|...        send a message (SOH shown here as |)
//	E8=FIX.4.4|9=61|35=A|...   read the next message and compare it
//	iSET_SESSION FIX.4.4:ISLD->TW NEXTSENDERSEQNUM=n
//	                           set the acceptor's next sequence numbers
//	                           through Options.Setter (a test hook)
//
// Before sending, "<TIME>" and "<TIME+n>"/"<TIME-n>" become the current UTC
// time to the second, and a message line starting with "8=" gets BodyLength
// (9) and CheckSum (10) filled in when they are absent. Values that are
// present are sent as written, because that is how scripts send wrong
// lengths and checksums on purpose. The reference runner inserts a BodyLength
// one byte short when a line has CheckSum but no BodyLength; this runner
// reproduces that, since the scripts were written against it.
//
// A received message matches an expectation when both have the same number
// of fields, the same tags in the same positions, and equal values, except
// for tags 10, 42, 52, 60 and 122, whose received values only have to
// contain a timestamp (or three-digit checksum) pattern. As an extension for
// our own scripts, an expected value written "<ANY>" matches any received
// value of that tag (for identifiers the venue assigns, and the BodyLength
// they change); the QuickFIX scripts never use it. Every expectation
// has a deadline (Options.Deadline, 20 s by default) because a reference run
// would otherwise wait forever for a message that never comes.
//
// Scripts run one after another against one long-lived acceptor, each after
// an empty probe connection that the acceptor must shrug off. The runner
// keeps no state between scripts; it leaves the acceptor's sessions as the
// script left them. After a failed script it pauses (SettleAfterFailure) so
// that the acceptor notices the connections the runner closed before the
// next script logs on. PauseAfterDisconnect, off by default, pauses after
// each disconnect too, for acceptors known to release a session late.
//
// iSET_SESSION goes through Options.Setter: HTTPSetter calls the venue's
// test hook (POST /test/seqnums on its metrics listener, mounted only with
// metrics.test_hooks); the tests use QuickFIX/Go's stores directly.
//
// scripts/session and scripts/venue hold our scripts; conformance*.toml are
// the venue configurations they run against (see README.md). It does not check that every message the acceptor sent
// was expected: unread messages at the end of a script are ignored, as in
// the reference runner, so a script must end with an expectation (usually
// eDISCONNECT) to prove the acceptor's final behaviour.
//
// Framing, CheckSum and reading the stream are internal/fixwire's; this
// package keeps what the reference suite's scripts need: the filling rule
// above and splitting a message into fields with garbled ones kept.
//
// Limits: a received message may be at most MessageBytesMax long; a script
// file at most MaxScriptBytes; connection numbers are one digit, 1 to 9. The
// runner talks TCP without TLS.
package fixtests
