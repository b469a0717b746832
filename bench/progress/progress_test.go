package progress

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestEveryTicksUntilStopped(t *testing.T) {
	var ticks atomic.Int64
	stop := Every(time.Millisecond, func() { ticks.Add(1) })
	for deadline := time.Now().Add(10 * time.Second); ticks.Load() < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("%d ticks in 10 s at 1 ms", ticks.Load())
		}
		time.Sleep(time.Millisecond)
	}
	stop()
	after := ticks.Load()
	time.Sleep(20 * time.Millisecond)
	if got := ticks.Load(); got != after {
		t.Fatalf("%d ticks after stop returned", got-after)
	}
}
