// Package pipeharness measures the venue's core in process, without FIX or
// sockets: a producer goroutine encodes NewOrder and CancelOrder commands
// into the command ring open loop, the real core/pipeline runs the journal
// (optionally) and core.Matcher on its locked OS thread, and a stand-in for
// the gateway's outbound consumer reads the event ring. It is the engine of
// `fixvenue bench pipeline`.
//
// What is measured: command i is due at start + i/rate; its latency runs
// from that due time to the moment the stand-in consumer sees the last event
// the command caused. With the journal on, the consumer first waits until
// the command is durable (Durable() ≥ causeSeq), exactly as the gateway's
// outbound does, so the figure includes group commit. The due time travels
// in the command's timestampNs (the matcher copies it into every event), so
// the consumer needs no clock shared with the producer beyond the start
// instant. A command's last event is known when the next
// command's first event arrives (or when the run drains); the time recorded
// is when the last event was seen, not when it was known to be the last.
//
// The producer is itself a client of the ring: when it falls behind its
// schedule (sleep granularity, a busy machine, a full ring) the lateness is
// inside the latency, as it must be for an open-loop measurement, and is
// also reported on its own as the send lag. Because a late producer delays
// every command it publishes late, the send lag's quantiles do not say which
// part of a latency quantile is the pipeline's own, so the result also gives
// the latency of the same commands from their publication (the producer
// stores each publication instant in a side table indexed by command
// sequence). Pace "yield", the default, yields the processor once after
// publishing, then sleeps until the next due time and publishes every
// command already due; waits of less than sleepSlackNs (every wait at
// 100,000 commands/s) loop on the clock and yield the processor at every
// check. A gateway goroutine that blocks on its socket after publishing
// gives its processor to the goroutine it woke in the same way.
// Pace "sleep" loops on the clock without yielding, and pace "spin" burns a
// core to publish each command on time (long waits too), which is only
// sensible on a machine with cores to spare. Both hold the producer's
// processor, and the goroutine a publication woke is queued on that
// processor until another one steals it: on two cores that wait was most of
// the pipeline's median at 100,000 commands/s (docs/benchmarks.md,
// "Harness producer pacing"), a cost of the producer, not of the pipeline.
//
// Procs sets GOMAXPROCS for a run. With one P the producer, the matcher
// and the stand-in consumer hand commands and events to each other on one
// OS thread: a publication readies the waiting goroutine, and the
// producer's yield (or the matcher's park) runs it at once. With more Ps
// than the pipeline keeps busy, every wake-up of a parked goroutine also
// wakes an idle P's thread through the kernel (the runtime's wakep), and on
// a two-CPU virtual machine those thread wake-ups are what put
// milliseconds into the tail at 100,000 commands/s (docs/benchmarks.md,
// "P count"). The matcher must be unlocked for this to help: a locked
// matcher thread owns the only P while it runs.
//
// With rate 0 the producer publishes as fast as the ring accepts: the
// result is a throughput (commands per second), and the "latency" is then
// from publication to the last event, closed loop, and says so.
//
// The order flow keeps the book flat and the matcher's bounds untouched:
// passive orders rest a few ticks off the reference price over eight levels
// per side and each is cancelled cancelLagUnits orders later (the first ones
// seed a standing book instead); crossing pairs trade in full. All orders
// are GTC, so the EndOfDay commands the producer inserts when the ClOrdIDs
// of the day approach the matcher's bound expire nothing and cause no
// events; they are counted in the result, because each compacts the
// ClOrdID index and may show as a latency spike.
//
// Limits: the matcher is sized for clOrdIDsMax ClOrdIDs per day and
// ordersMax resting orders; the journal, when on, writes to a temporary
// directory that is removed afterwards unless one is given; a run stops
// after commandsMax commands whatever its duration.
package pipeharness
