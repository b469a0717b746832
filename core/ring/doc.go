// Package ring connects the venue's goroutines with bounded rings of
// fixed-size byte slots, so that a command or an event is encoded once, in
// place, by a flyweight codec, and is read in place by every consumer: no
// copy, no allocation, no channel.
//
// # Shape
//
// A Ring is one []byte of Slots*SlotSize bytes allocated by New, never grown
// and never holding a pointer, so the garbage collector does not scan it.
// Slots is a power of two so that sequence s maps to slot s&(Slots-1).
// Sequences are int64s starting at 0; at ten million a second they last for
// tens of thousands of years, so wrap-around of the counter is not handled.
//
// # Producing
//
// A producer calls Claim, encodes into the returned slot, and calls Publish.
// In MultiProducer mode (the command ring: one producer per FIX session) a
// claim is a compare-and-swap on a shared cursor and a publication marks the
// slot with its sequence in an availability array, so consumers only see the
// contiguous published prefix even when producers finish out of order.
// Consumers read only the markers, never the cursor, so that claims do not
// have to take the cursor's cache line back from polling consumers, and the
// markers of neighbouring sequences lie on different cache lines, so that
// producers publishing them do not write the same line. In
// SingleProducer mode (the event ring: the matcher) a claim is plain
// arithmetic and a publication is one atomic store.
//
// A producer with several items at once claims them together with ClaimN
// and publishes them with one PublishRange. When a consumer keeps up with its
// producer, each publication costs about one cross-core cache-line round
// trip: it is an atomic store, on amd64 a locking instruction that waits
// until the slot bytes written before it and the cursor's line, which the
// polling consumer has just read, are back in the producer's cache. That,
// not the ring's bookkeeping, is most of a one-item hand-off, and it is of
// the same order as a channel's. Single-producer, a batch pays it once;
// multi-producer, a batch saves the compare-and-swaps of the claims but
// still marks each slot. ClaimN is all or nothing: when the ring has no room
// for the whole batch it waits and then refuses the whole batch, claiming
// nothing.
//
// # Gating and back-pressure
//
// Consumers register their Sequence with AddGatingSequences; a producer never
// receives a slot that the slowest gating sequence has not passed. When the
// ring is full a producer waits with the wait strategy for at most
// Config.ClaimTimeout and then gets ErrBusy; nothing is claimed, so no hole is
// left in the sequence (this is why multi-producer claims use CAS rather than
// an atomic add: an added sequence cannot be given back). BusyCount counts
// these refusals; the gateway turns one into a "system busy" reject. The
// minimum gating sequence is cached so that claims only scan the gates when
// the ring looks full.
//
// # Consuming
//
// A consumer owns a Barrier (Ring.NewBarrier) and a Sequence. It calls
// WaitFor(next), reads every slot from next to the returned sequence with
// Slot, and stores the last one in its Sequence, which releases those slots to
// the producers. A barrier built with dependency sequences never passes them,
// which orders consumers: a consumer that depends on another sees each slot
// only after the other is done with it. A parked dependent consumer is woken
// when the consumer it depends on next calls WaitFor on the same ring; a
// sequence stored by a goroutine that does not (a consumer of another ring)
// should be followed by Ring.Wake, or the dependent consumer sees it only
// after its park timeout. A barrier marked WakeOnlyByCall is passed over by
// publications and woken by its Wake alone, for a consumer whose work waits
// for another's anyway (the matcher, woken by the journal). Alert stops one consumer; Close stops
// producers and lets consumers drain what was published, then WaitFor returns
// ErrClosed.
//
// # Wait strategies and the two-core machine
//
// BusySpin re-checks in a loop (calling runtime.Gosched once per thousand
// failed checks, so that it never holds its P for a whole preemption slice
// when the goroutine it waits for is queued behind it): the lowest latency on
// an idle machine, but every waiting goroutine keeps a core at 100% even when
// the venue is idle. On a two-core machine a spinning matcher plus a spinning
// consumer own both cores, and the gateway's session goroutines, the journal
// and the garbage collector must preempt them to run, which costs far more
// latency than spinning saves. SpinYield spins briefly then calls
// runtime.Gosched; it lets other goroutines run but still shows as a busy core
// and still burns power. SpinPark, the default, spins for well under a
// microsecond, then parks the consumer on a channel (it does not yield in
// between: a yielded goroutine waits on the global run queue, where no
// producer can wake it, and a trace showed those waits as most of the
// pipeline's scheduling delay). A
// producer wakes a parked consumer only when one is parked: after each publish
// it reads one atomic counter, so publishing costs nothing extra while
// consumers keep up. The consumer announces itself before its final re-check,
// so a wake-up cannot be lost; a park timeout is a safety net, 1 ms and
// doubled by each park that finds nothing up to 64 ms (with 1 ms throughout,
// an idle venue's consumers woke thousands of times a second: 7% of a core).
// Waking a
// parked goroutine costs a few microseconds (tens when the goroutine is
// locked to its OS thread: see pipeline.BenchmarkParkedWake), which is the
// price of giving the cores back to the gateway; use BusySpin only on a machine with cores to
// spare and pin the venue to them. What a wake-up costs depends on where
// the woken goroutine runs: when another P is idle the runtime also wakes
// that P's thread through the kernel, and on a two-CPU virtual machine those
// thread wake-ups put milliseconds into one hand-off in a hundred, while
// with one P the hand-off is a goroutine switch on the waker's thread
// (docs/benchmarks.md, "P count"; `fixvenue bench pipeline --procs`).
// Producers waiting for space use the same tiers. Under SpinPark a single producer (the matcher on the event ring)
// parks and is woken by the consumer whose Sequence frees the slot, at that
// consumer's next WaitFor or Ring.Wake, by the same announce-then-re-check
// protocol as a parked consumer; multiple producers (FIX sessions on the
// command ring) sleep for short intervals instead, because a full command
// ring is already an overload that ends in "system busy" rejects.
//
// # Limits
//
// A claimed sequence (every one of a ClaimN batch too) must always be
// published: consumers stop at the first unpublished sequence, so a producer
// that dies between Claim and Publish stalls the ring (and then every
// producer gets ErrBusy). Gating sequences and barriers are meant to be set
// up at start-up; a barrier stays registered for the ring's life. A Barrier
// serves one consumer goroutine. The ring has no gating until
// AddGatingSequences is called.
package ring
