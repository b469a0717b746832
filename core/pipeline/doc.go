// Package pipeline runs the venue's core: the command ring, the journal
// goroutine, the matcher goroutine and the event ring.
//
//	producers (FIX sessions) ──claim/publish──▶ command ring (multi-producer)
//	                                              │             │
//	                        journal goroutine ◀───┘             └──▶ matcher goroutine
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
// WaitDurable sleeps until the journal's next flush wakes it (or its timeout):
// each waiting goroutine holds a wake token (a one-slot channel and a timer,
// made once and reused, durableTokensFree kept), so neither a wait nor a
// flush allocates.
//
// Command sequence numbers continue the journal: a command in ring slot
// sequence s carries seq SeqBase()+s, where SeqBase is the journal's next
// sequence at start-up.
//
// Fail-stop: if the matcher panics or returns an error, the pipeline records
// the error with the sequence of the command that caused it, stops consuming,
// and calls OnFail; the venue halts trading and acknowledges nothing further.
// If the journal fails (fsync error, full disk), the durable sequence stops and
// OnFail is called the same way. The error wraps ErrMatcher or ErrJournal, so
// the venue can tell clients which part failed without the cause
// (docs/ARCHITECTURE.md, "A venue that failed"). Stop then waits for no
// drain: nothing more becomes durable. A part outside the pipeline halts
// it with Halt (a FIX store): claims are refused from then on, but the
// pipeline stays Sound, its published commands are journaled and applied,
// and Stop drains it as it does a running one.
//
// The matcher goroutine never allocates, never logs on its hot path and never
// blocks on a channel: it waits with Config.Wait only (SpinThenPark is the
// matcher's alone: the rings and their other waiters then park as SpinPark).
// It runs locked to its OS thread (runtime.LockOSThread) unless
// Config.UnlockedMatcher says otherwise, and pinned to a CPU with
// Config.PinMatcher. The lock has a price on shared cores: waking a parked
// goroutine locked to its thread costs a futex hand-off of that thread
// (BenchmarkParkedWake: 7-20 times an unlocked wake-up on a 2-core VM). The
// venue busy-spins a locked matcher with 4 CPUs or more; below that it
// parks after a short spin, measured better on 2 CPUs than spinning longer
// (SpinThenPark), which holds a processor the sessions need
// (config.Engine.MatcherThread; docs/benchmarks.md, "Locked matcher thread").
// With a journal and more than one P, no event is used before its command
// is durable, so the publications do not wake the matcher: the journal
// does, once per batch, after appending it and before its sync
// (ring.Barrier.WakeOnlyByCall), and the matcher applies the batch while
// the disk syncs it. A parked matcher thus costs one wake-up per journal
// batch rather than one per command (MatcherParks; docs/benchmarks.md,
// "Matcher woken by the journal"). Without a journal, or with one P (where
// the matcher would wait for the P the journal's thread holds in its sync),
// the publications wake it. A command's events are published together, once the command is
// applied (and every eventPublishBatchMax events within one). When the
// matcher is a Prefetcher, the loop shows it the published commands up to
// Config.PrefetchDistance ahead (Prefetch) before applying the current one.
package pipeline
