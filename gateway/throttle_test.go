package gateway

import "testing"

func TestSlidingWindow(t *testing.T) {
	w := slidingWindow{limit: 3}
	base := int64(1_000_000_000_000)
	for i := 0; i < 3; i++ {
		if !w.allow(base + int64(i)) {
			t.Fatalf("event %d refused under the limit", i)
		}
	}
	if w.allow(base + 10) {
		t.Fatal("fourth event in the same second allowed")
	}
	if w.allow(base + 900_000_000) {
		t.Fatal("event 0.9 s later allowed while three are still in the window")
	}
	if !w.allow(base + 1_000_000_001 + bucketWidthNs) {
		t.Fatal("event after the window slid past the first three refused")
	}
	unlimited := slidingWindow{}
	for i := 0; i < 1000; i++ {
		if !unlimited.allow(base) {
			t.Fatal("limit 0 must mean unlimited")
		}
	}
}

// TestSlidingWindowAfterTheClockSteppedBack: a wall clock stepped back an
// hour keeps the events of the second before the step in the window for a
// second of the new clock, then takes events at the limit again.
func TestSlidingWindowAfterTheClockSteppedBack(t *testing.T) {
	w := slidingWindow{limit: 3}
	base := int64(1_700_000_000_000_000_000) // 2023
	for i := 0; i < 3; i++ {
		if !w.allow(base + int64(i)) {
			t.Fatalf("event %d refused under the limit", i)
		}
	}
	back := base - 3600*1_000_000_000
	if w.allow(back) {
		t.Fatal("fourth event allowed with three in the window, the clock stepped back")
	}
	later := back + 1_000_000_000 + bucketWidthNs
	for i := 0; i < 3; i++ {
		if !w.allow(later + int64(i)) {
			t.Fatalf("event %d a second after the clock stepped back refused: %d in the window", i, w.countAt(later))
		}
	}
	if w.allow(later + 10) {
		t.Fatal("fourth event in the same second allowed")
	}
	if got := w.countAt(later + 2*1_000_000_000); got != 0 {
		t.Fatalf("%d events in the window two seconds on", got)
	}
}
