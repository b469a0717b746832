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
