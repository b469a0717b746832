package pace

import (
	"syscall"
	"time"
)

// threadSleep blocks the calling OS thread in nanosleep for d, resuming
// after signals (the Go runtime sends some) so that it never returns early.
func threadSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
