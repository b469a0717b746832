package pace

import (
	"syscall"
	"time"
)

// prSetTimerSlack is PR_SET_TIMERSLACK from <linux/prctl.h>.
const prSetTimerSlack = 29

// timerSlackNs is the timer slack asked of the kernel for the sleeping
// thread: the default, 50 µs, would be added to most sleeps.
const timerSlackNs = 1_000

// threadSleep blocks the calling OS thread in nanosleep for d, resuming
// after signals (the Go runtime sends some) so that it never returns early.
// The thread's timer slack is lowered first; the goroutine may run on a
// different thread each time, so it is set on every call (one cheap
// syscall against a sleep of tens of microseconds or more).
func threadSleep(d time.Duration) {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, timerSlackNs, 0)
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
