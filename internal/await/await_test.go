package await

import "testing"

// TestWaits: an answer reaches its own wait once; answers nobody waits for,
// and answers to a forgotten wait, are dropped without blocking.
func TestWaits(t *testing.T) {
	var w Waits[uint64, string]
	w.Deliver(9, "nobody waits") // must not block or panic on the zero value
	a, b := w.Expect(1), w.Expect(2)
	w.Forget(2)
	w.Deliver(2, "forgotten")
	w.Deliver(1, "one")
	w.Deliver(1, "again") // the wait is gone after its answer
	if got := <-a; got != "one" {
		t.Fatalf("wait 1 got %q", got)
	}
	select {
	case got := <-a:
		t.Fatalf("wait 1 got a second answer %q", got)
	case got := <-b:
		t.Fatalf("forgotten wait 2 got %q", got)
	default:
	}
}
