package progress

import (
	"sync"
	"time"
)

// Every calls tick every interval, from a goroutine of its own, until the
// returned stop is called; stop returns once that goroutine has ended, so
// no tick runs after it.
func Every(interval time.Duration, tick func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				tick()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
