package periodic

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestRunCallsUntilStopped: Run calls the function on every tick with the
// tick's time, in order, and returns once stop is closed, with no call after.
func TestRunCallsUntilStopped(t *testing.T) {
	stop := make(chan struct{})
	var calls atomic.Int64
	var last time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(stop, time.Millisecond, func(now time.Time) {
			if now.Before(last) {
				t.Errorf("tick %v before the previous one %v", now, last)
			}
			last = now
			if calls.Add(1) == 5 {
				close(stop)
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after stop was closed")
	}
	if n := calls.Load(); n != 5 {
		t.Fatalf("%d calls, want 5 (none after stop)", n)
	}
}

// TestRunReturnsWhenStoppedBeforeATick: a closed stop ends Run without a call.
func TestRunReturnsWhenStoppedBeforeATick(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	Run(stop, time.Hour, func(time.Time) { t.Error("called after stop") })
}
