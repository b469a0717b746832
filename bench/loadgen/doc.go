// Package loadgen is the venue's open-loop FIX 4.4 load generator, the
// engine of `fixvenue load`.
//
// It speaks raw FIX over TCP, without QuickFIX, so that the client is not the
// bottleneck it measures. Every NewOrderSingle and OrderCancelRequest is
// pre-encoded once per session as a template; sending one is a copy and an
// in-place patch of MsgSeqNum, SendingTime, TransactTime, the order index
// inside ClOrdID and the checksum. The patched fields have fixed widths
// (MsgSeqNum is zero-padded to nine digits, which FIX allows for int fields),
// so BodyLength never changes. Inbound messages are framed and split into
// sub-slices of one read buffer by internal/fixwire. Neither path allocates (see the
// AllocsPerRun test), so the garbage collector never pauses the client.
//
// The schedule is open loop: order i of the run is due at start + i/rate and
// goes to session i mod N. Its latency runs from that due time, not from
// when it was actually sent, to the first answer for it (an
// ExecutionReport, or a reject naming it). When the venue stalls, every
// order due during the stall carries the stall in its latency, which is the
// cure for coordinated omission. The client's own lateness is reported
// separately as the send lag, so a reader can tell a slow venue from a
// client that fell behind. Orders due in the warm-up are sent but not
// recorded.
//
// Mixes: passive orders rest on both sides of the price and each is
// cancelled a few orders later (cancelLagSlots), so the book stays flat;
// crossing orders come in buy/sell pairs at one price that trade (the two
// sides use different accounts so self-trade prevention does not apply);
// mixed alternates the two. The rate counts NewOrderSingle only; passive
// cancels come on top and have their own latency figures.
//
// Session handling is what a well-behaved client needs and no more: Logon
// with ResetSeqNumFlag (141=Y), so each run starts at sequence 1 and nothing
// is kept between runs; Heartbeat in answer to TestRequest and when idle;
// ResendRequest answered with one SequenceReset-GapFill, because orders whose
// due time has passed are never replayed; inbound sequence gaps counted;
// Logout at the end. A venue-initiated Logout or a broken connection ends
// that session, is reported, and its unanswered orders count as lost.
//
// Echo is a trivial raw-FIX venue (no matching, no journal) that answers
// every order at once; run against it, the load generator measures itself
// and the loopback, the floor under every venue figure. A durable Echo
// (NewDurableEcho) also appends every order and cancel to a journal (the
// venue's journal package: group commit, one write and one fdatasync per
// batch) and answers only once it is durable: the floor under any venue
// that, like fixvenue, answers nothing before it is on disk. Its journal
// holds raw FIX messages, not venue commands, so the venue's journal tools
// cannot replay it.
//
// Limits, each named in the code: at most SessionsMax sessions,
// OrdersPerRunMax orders per run (flags are preallocated), RateMax orders/s,
// messageBytesMax per inbound message (a larger BodyLength is a framing
// error), sendBatchMax slots per write when catching up, rejectKindsMax
// distinct reject kinds per session (the rest are "other"), RampStepsMax
// ramp steps. ClOrdIDs carry a per-run prefix so runs against one venue day
// never collide; they are 17 characters.
package loadgen
