package pace

import "time"

// runtimeSleepMarginNs is the overshoot of time.Sleep that Sleep avoids:
// long waits sleep in the runtime for all but this margin, then finish in
// nanosleep.
const runtimeSleepMarginNs = 2 * time.Millisecond

// Sleep waits for d. A wait shorter than runtimeSleepMarginNs is one
// nanosleep of the calling thread; a longer one sleeps in the runtime first.
func Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	if d > runtimeSleepMarginNs {
		time.Sleep(d - runtimeSleepMarginNs)
		d = runtimeSleepMarginNs
	}
	threadSleep(d)
}
