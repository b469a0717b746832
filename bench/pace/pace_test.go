package pace

import (
	"testing"
	"time"
)

// Sleep never returns before the time asked for (the schedule depends on
// it: a send before its due time would understate latency).
func TestSleepNeverReturnsEarly(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Millisecond, time.Microsecond, 150 * time.Microsecond, time.Millisecond, 3 * time.Millisecond} {
		start := time.Now()
		Sleep(d)
		if got := time.Since(start); got < d {
			t.Errorf("Sleep(%v) returned after %v", d, got)
		}
	}
}

func TestSleepDoesNotAllocate(t *testing.T) {
	if a := testing.AllocsPerRun(100, func() { Sleep(time.Microsecond) }); a != 0 {
		t.Errorf("%.1f allocations per Sleep", a)
	}
}

// BenchmarkSleep100us shows the overshoot of a 100 µs sleep; compare with
// BenchmarkTimeSleep100us (the runtime's timers) on the same machine.
func BenchmarkSleep100us(b *testing.B) {
	for b.Loop() {
		Sleep(100 * time.Microsecond)
	}
}

func BenchmarkTimeSleep100us(b *testing.B) {
	for b.Loop() {
		time.Sleep(100 * time.Microsecond)
	}
}
