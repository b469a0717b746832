package latency

import (
	"testing"
	"time"
)

func TestRecorderWindowAndTotal(t *testing.T) {
	r := New("test")
	if s := r.Summary(); s.SinceStart.Count != 0 {
		t.Fatalf("new recorder has %d values", s.SinceStart.Count)
	}
	now := time.Unix(1000, 0)
	for i := int64(1); i <= 1000; i++ {
		r.Record(i * 1000) // 1µs .. 1ms
	}
	r.Record(2 * ValueMaxNs)
	r.Rotate(now)
	s := r.Summary()
	if s.LastMinute.Count != 1001 || s.SinceStart.Count != 1001 {
		t.Fatalf("counts %d %d, want 1001", s.LastMinute.Count, s.SinceStart.Count)
	}
	if s.Clamped != 1 || s.SinceStart.MaxNs < ValueMaxNs*99/100 {
		t.Fatalf("clamped %d max %d", s.Clamped, s.SinceStart.MaxNs)
	}
	if p := s.LastMinute.P50Ns; p < 495_000 || p > 505_000 {
		t.Fatalf("p50 %d, want about 500µs", p)
	}
	for i := 1; i < len(Percentiles); i++ {
		if s.LastMinute.CurveNs[i] < s.LastMinute.CurveNs[i-1] {
			t.Fatalf("curve not monotonic at %v: %v", Percentiles[i], s.LastMinute.CurveNs)
		}
	}
	// After WindowSlices more rotations the values leave the window but stay in the total.
	for i := 0; i < WindowSlices; i++ {
		r.Record(7)
		now = now.Add(SliceDuration)
		r.Rotate(now)
	}
	s = r.Summary()
	if s.LastMinute.Count != WindowSlices || s.SinceStart.Count != 1001+WindowSlices {
		t.Fatalf("after a minute: window %d total %d", s.LastMinute.Count, s.SinceStart.Count)
	}
	if s.LastMinute.MaxNs > 10 {
		t.Fatalf("window max %d: old values still in the window", s.LastMinute.MaxNs)
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	r := New("test")
	var v int64
	if n := testing.AllocsPerRun(1000, func() { v += 997; r.Record(v) }); n != 0 {
		t.Fatalf("Record allocates %v per call", n)
	}
	var nilRec *Recorder
	nilRec.Record(5) // a nil recorder records nothing and does not panic
}

func BenchmarkRecord(b *testing.B) {
	r := New("bench")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Record(int64(i&0xFFFFF) + 1)
	}
}
