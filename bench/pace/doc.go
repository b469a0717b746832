// Package pace sleeps until an open-loop schedule's next due time with
// tens of microseconds of precision instead of a millisecond.
//
// Why it exists: Go's time.Sleep waits on the runtime's timers, and when
// the process is otherwise idle the runtime blocks in epoll_pwait, whose
// timeout is in whole milliseconds; a 300 µs sleep then lasts a millisecond
// or more. An open-loop load generator that sleeps between sends would add
// that overshoot to every latency it records (the latency runs from the
// due time), and a venue would look half a millisecond slower than it is at
// low rates. Sleep therefore hands short waits to the kernel's nanosleep on
// the calling thread, after lowering that thread's timer slack from the
// default 50 µs to 1 µs (prctl PR_SET_TIMERSLACK), and leaves long waits to
// time.Sleep, keeping a margin that nanosleep then covers. What remains is
// the kernel's wake-up latency, which on a busy machine is tens of
// microseconds; the load generator reports it as its send lag.
//
// Limits: a short sleep blocks its OS thread (the Go runtime starts another
// for other goroutines), so it suits a few pacing goroutines, not thousands.
// On systems without nanosleep support here, Sleep is time.Sleep.
package pace
