package pipeline

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkParkedWake measures what waking a parked goroutine costs, with and
// without runtime.LockOSThread on the goroutine that is woken: one round trip
// is a ping to a parked echo goroutine and its pong back (two wake-ups), after
// an idle gap long enough for the echo goroutine to park and its thread to
// sleep. ns/op includes the gap; the metric "µs/roundtrip" does not.
//
// This is the cost the matcher pays per wake-up under the park strategy: a
// goroutine locked to its thread is woken by handing it a processor on that
// very thread (a futex wake of the thread, then the waker's thread gives up
// its processor), where an unlocked goroutine is simply queued on the waker's
// processor. On the 2-core VM of docs/benchmarks.md ("Locked matcher
// thread") the locked round trip is 7-20 times the unlocked one (80-118 µs
// against 11-14 µs on average; 70 µs against 3.5 µs at the median), which
// is why the trade-off of locking the
// matcher's thread is measured and configurable (engine.lock_os_thread).
func BenchmarkParkedWake(b *testing.B) {
	const gapNs = 200 * time.Microsecond
	for _, locked := range []bool{false, true} {
		b.Run(fmt.Sprintf("locked=%v", locked), func(b *testing.B) {
			ping, pong := make(chan struct{}), make(chan struct{})
			go func() {
				if locked {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				for range ping {
					pong <- struct{}{}
				}
			}()
			defer close(ping)
			var roundTripNs time.Duration
			for b.Loop() {
				time.Sleep(gapNs)
				start := time.Now()
				ping <- struct{}{}
				<-pong
				roundTripNs += time.Since(start)
			}
			b.ReportMetric(float64(roundTripNs.Microseconds())/float64(b.N), "µs/roundtrip")
		})
	}
}
