//go:build !linux

package pace

import "time"

func threadSleep(d time.Duration) { time.Sleep(d) }
