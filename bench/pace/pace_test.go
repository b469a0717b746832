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

// After the runtime's sleep, Sleep sleeps only for what is left by the clock:
// when the runtime's timer overshoots (it does, by up to a millisecond or
// more when the process is idle), the nanosleep that follows is shorter by
// at least the overshoot. Assuming the margin was left intact made every
// wait just over the margin a millisecond late.
func TestSleepMeasuresWhatIsLeftAfterTheRuntimeSleep(t *testing.T) {
	const overshoot = 1500 * time.Microsecond
	var asked []time.Duration
	runtimeSleep = func(d time.Duration) { time.Sleep(d + overshoot) }
	kernelSleep = func(d time.Duration) { asked = append(asked, d) }
	t.Cleanup(func() { runtimeSleep, kernelSleep = time.Sleep, threadSleep })
	for _, d := range []time.Duration{runtimeSleepMarginNs + 100*time.Microsecond, runtimeSleepMarginNs + 5*time.Millisecond} {
		asked = asked[:0]
		Sleep(d)
		if len(asked) > 1 {
			t.Fatalf("Sleep(%v) slept in the kernel %d times", d, len(asked))
		}
		if len(asked) == 1 && asked[0] > runtimeSleepMarginNs-overshoot {
			t.Errorf("Sleep(%v) asked nanosleep for %v after the runtime overshot by %v; at most %v was left",
				d, asked[0], overshoot, runtimeSleepMarginNs-overshoot)
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
