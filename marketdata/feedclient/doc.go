// Package feedclient receives the fixvenue market data feed and keeps
// books that other programs can use.
//
// A Client reads UDP datagrams (unicast or a multicast group), applies the
// sequenced messages in order and keeps, per instrument, the book by price
// level (best first, with order counts), the last trade, the day's volume
// (0 again at an InstrumentStatus of reason EndOfDay) and the trading status. Market-by-order messages are checked (their rptSeq) and
// handed to OnMessage for programs that keep their own order books.
//
// Joining: the client asks the TCP recovery service for a snapshot, which
// states the last sequence it reflects, and applies the live packets from
// there. Gaps: a packet beyond the next expected sequence is held (a
// bounded reorder buffer) for GapTimeout, since UDP may reorder; then the
// client asks for a retransmission of the missing range and, when the
// service refuses (too old, too many) or the exchange fails, takes a
// snapshot. A refusal for the service's rate limit, which is per
// connection and would refuse the snapshot too, has the gap wait (its
// packets held) and the client ask again after rateLimitedWait: the books
// stay as they are, right up to the gap. A heartbeat announcing a later sequence reveals a lost
// tail; one announcing an earlier sequence than the next expected reveals a
// feed that numbers anew (a venue started on another data directory), whose
// packets would read as duplicates, and the client takes a snapshot
// (ErrSeqWentBack), unless it was sent before a sequenced packet the client
// already has (its sending time earlier than that packet's) or before the
// last event of the snapshot it applied (a snapshot's packets carry that
// event's time): one the network reordered, or one the feed sent while
// idle before the client joined and read after its joining snapshot,
// counted in Stats.StaleHeartbeats and otherwise ignored. (A feed that numbers anew on a machine whose clock is behind
// the old one's last event is found by the next heartbeat stamped later.)
// A message that disagrees with the book (an rptSeq that skips, a
// level number that does not match) also leads to a snapshot. Every gap and
// its outcome is reported to OnRecovery; when both retransmission and
// snapshot fail the outcome is Unrecovered, the books are marked stale
// (NextSeq 0) and the client tries again after a pause. The connection to
// the recovery service is kept between requests; a retransmission or
// snapshot request that fails on a kept connection before any answer is sent
// once more on a new one, since the service may have restarted or moved (a cluster's new
// leader behind the same address). Given several addresses (a cluster's nodes), a request
// that a new connection cannot carry, refused (a node down) or closed unanswered (a
// NotServingError: a follower, which serves no market data), goes to the next address at
// once, each tried once per request; those passed over are reported
// (Recovery.PassedOver), and when none takes it the error names each (NoneServing when
// none serves).
//
// Recovery is synchronous on the client's goroutine: while it runs, the
// kernel buffers the live feed (ReceiveBufferBytes), which keeps the client
// single-threaded and its books free of locks. Callbacks run on that
// goroutine; other goroutines read books through Inspect.
//
// Arbitrary datagrams are safe: the packet framing is checked before any
// message is used, messages are decoded by the generated flyweights, and
// FuzzPacket checks that no input panics the client or breaks its books'
// order; FuzzRecoveryAnswers does the same for whatever a recovery service
// answers, as a snapshot or as a retransmission. The feed has no authentication, so a forged packet with the right
// sequence number is believed; run it on a trusted network.
//
// Two ready-made readers sit on top of the Client: Watch draws one
// instrument's top levels and recent trades (an uncross's marked auction:
// they have no aggressor) on an ANSI terminal, waiting, and saying so, for
// a symbol the feed does not list yet (one an operator is about to add),
// and BookJSON joins, waits for the live edge and returns one book as JSON
// (`fixvenue md watch` and `fixvenue md book`). Both give up, saying so,
// when no recovery address serves for five seconds from the start: a
// cluster elects a leader well within that, so the leader's address is
// missing from those given.
//
// A unicast feed reaches one socket, so one client per destination address;
// several clients on one host or network need the multicast feed.
//
// A and B lines: with Config.FeedBAddr (or ConnB) the client reads the
// feed's B line beside its A line, each on a goroutine of its own that
// hands the datagrams to the client's goroutine in the order read (at most
// lineBuffers ahead; while a recovery runs the readers stop there and the
// kernel buffers the rest, as with one line). A message is applied from
// whichever line brings it first; the other line's copy is a duplicate
// (Stats.Lines counts each line's datagrams and duplicates). A gap on one
// line is a gap like any other: it waits GapTimeout, by when the other
// line has usually brought what was missing, before it is recovered over
// TCP. Two heartbeat rules change, as the lines keep each their own order
// but not each other's: a heartbeat announcing messages the client lacks
// opens such a gap rather than recovering at once (the other line may
// still bring them), and one announcing less than the client expects, but
// no less than its own line brought, is of a line behind the other
// (StaleHeartbeats), not a feed numbering anew; one announcing less than
// its own line brought is. A line that has brought no packet since the
// join (or since a snapshot behind what it brought: a feed that numbers
// anew) while the other has is behind it too: its reader lags (a loaded
// machine), and the first datagram it brings can be a heartbeat sent
// before the packets the other line brought; a feed that numbers anew is
// told by the other line's heartbeat. While neither line has brought a
// packet, heartbeats are checked as with one line.
//
// Limits: InstrumentsMax books, LevelsMax levels per side, ReorderPacketsMax
// held packets, lineBuffers datagrams read ahead of the client, SeqAheadMax (a packet claiming a sequence further ahead is
// dropped as garbage rather than treated as a gap).
package feedclient
