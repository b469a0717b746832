package progress

import (
	"sync"
	"time"

	"github.com/fixvenue/fixvenue/internal/periodic"
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
		periodic.Run(done, interval, func(time.Time) { tick() })
	}()
	return func() { close(done); wg.Wait() }
}
