// Package pipeline runs the venue's core: the command ring, the journal
// goroutine, the matcher goroutine and the event ring.
//
//	producers (FIX sessions) ──claim/publish──▶ command ring (multi-producer)
//	                                              │             │
//	                        journal goroutine ◀───┘             └──▶ matcher goroutine (LockOSThread)
//	                        append + one fdatasync per batch          Apply → events
//	                        → durable sequence                        │
//	                                                                  ▼
//	                                                event ring (single producer) ──▶ consumers
//
// The journal reads the command ring in parallel with the matcher: fsync
// overlaps matching, and nothing waits for the disk except what must, namely
// consumers that send answers out of the process, which gate each event on
// Durable() >= its causeSeq. Both the journal and the matcher are gating
// sequences of the command ring, so a slot is reused only after both passed it.
//
// Command sequence numbers continue the journal: a command in ring slot
// sequence s carries seq SeqBase()+s, where SeqBase is the journal's next
// sequence at start-up.
//
// Fail-stop: if the matcher panics or returns an error, the pipeline records
// the error with the sequence of the command that caused it, stops consuming,
// and calls OnFail; the venue halts trading and acknowledges nothing further.
// If the journal fails (fsync error, full disk), the durable sequence stops and
// OnFail is called the same way.
//
// The matcher goroutine never allocates, never logs on its hot path and never
// blocks on a channel: it waits with the ring's wait strategy only.
package pipeline
