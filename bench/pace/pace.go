package pace

import "time"

// runtimeSleepMarginNs is the overshoot of time.Sleep that Sleep avoids:
// long waits sleep in the runtime for all but this margin, then finish in
// nanosleep.
const runtimeSleepMarginNs = 2 * time.Millisecond

// Sleep waits for d. A wait shorter than runtimeSleepMarginNs is one
// nanosleep of the calling thread; a longer one sleeps in the runtime first,
// then sleeps in nanosleep for whatever is left of d by the clock (the
// runtime's sleep overshoots by up to a millisecond or more, so the rest is
// measured, never assumed).
func Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	if d > runtimeSleepMarginNs {
		deadline := time.Now().Add(d)
		runtimeSleep(d - runtimeSleepMarginNs)
		if d = time.Until(deadline); d <= 0 {
			return
		}
	}
	kernelSleep(d)
}

// The two ways of sleeping, variables so that a test can watch what Sleep
// asks of each.
var (
	runtimeSleep = time.Sleep
	kernelSleep  = threadSleep
)
