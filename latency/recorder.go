package latency

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fixvenue/fixvenue/internal/periodic"
)

// Bounds of a Recorder (see the package documentation).
const (
	ValueMaxNs         = int64(10 * time.Second)
	SignificantFigures = 2
	SliceDuration      = time.Second
	WindowSlices       = 60
)

// Percentiles are the points of a Summary's distribution curve: enough to
// draw a percentile plot from the median to the maximum.
var Percentiles = [...]float64{0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100}

// Distribution is one histogram's figures.
type Distribution struct {
	Count  int64
	P50Ns  int64
	P99Ns  int64
	P999Ns int64
	MaxNs  int64
	// CurveNs holds the value at each of Percentiles.
	CurveNs [len(Percentiles)]int64
}

// Summary is what a reader sees: the last minute and since start.
type Summary struct {
	Name       string
	LastMinute Distribution
	SinceStart Distribution
	// Clamped counts values above ValueMaxNs (recorded as ValueMaxNs).
	Clamped int64
	// AtUnixNs is when the summary was made (the last rotation).
	AtUnixNs int64
}

// Recorder is one latency's histograms.
type Recorder struct {
	name string

	mu      sync.Mutex // held by Record for one RecordValue, by Rotate for a swap
	active  *hdrhistogram.Histogram
	clamped atomic.Int64

	// Owned by the rotating goroutine.
	slices  [WindowSlices]*hdrhistogram.Histogram
	next    int // index in slices of the oldest slice
	total   *hdrhistogram.Histogram
	window  *hdrhistogram.Histogram // scratch for the merge of slices
	summary atomic.Pointer[Summary]
}

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, ValueMaxNs, SignificantFigures)
}

// New allocates a Recorder's histograms.
func New(name string) *Recorder {
	r := &Recorder{name: name, active: newHistogram(), total: newHistogram(), window: newHistogram()}
	for i := range r.slices {
		r.slices[i] = newHistogram()
	}
	r.summary.Store(&Summary{Name: name})
	return r
}

// Record adds one value in nanoseconds. It does not allocate; a nil
// Recorder records nothing.
func (r *Recorder) Record(ns int64) {
	if r == nil {
		return
	}
	if ns < 1 {
		ns = 1
	}
	if ns > ValueMaxNs {
		ns = ValueMaxNs
		r.clamped.Add(1)
	}
	r.mu.Lock()
	_ = r.active.RecordValue(ns) // in range: checked above
	r.mu.Unlock()
}

// Rotate ends the current slice and publishes a new Summary. Call it from
// one goroutine, once per SliceDuration (Run does).
func (r *Recorder) Rotate(now time.Time) {
	spare := r.slices[r.next]
	spare.Reset()
	r.mu.Lock()
	done := r.active
	r.active = spare
	r.mu.Unlock()
	r.slices[r.next] = done
	r.next = (r.next + 1) % WindowSlices
	r.total.Merge(done)
	r.window.Reset()
	for _, h := range r.slices {
		r.window.Merge(h)
	}
	s := &Summary{Name: r.name, Clamped: r.clamped.Load(), AtUnixNs: now.UnixNano()}
	fill(&s.LastMinute, r.window)
	fill(&s.SinceStart, r.total)
	r.summary.Store(s)
}

func fill(d *Distribution, h *hdrhistogram.Histogram) {
	d.Count = h.TotalCount()
	if d.Count == 0 {
		return
	}
	d.P50Ns, d.P99Ns, d.P999Ns, d.MaxNs = h.ValueAtQuantile(50), h.ValueAtQuantile(99), h.ValueAtQuantile(99.9), h.Max()
	for i, p := range Percentiles {
		d.CurveNs[i] = h.ValueAtQuantile(p)
	}
	d.CurveNs[0], d.CurveNs[len(Percentiles)-1] = h.Min(), d.MaxNs
}

// Summary returns the figures published by the last Rotate (safe from any
// goroutine; the caller must not modify it).
func (r *Recorder) Summary() *Summary { return r.summary.Load() }

// Run rotates the recorders every SliceDuration until stop is closed.
func Run(stop <-chan struct{}, recorders ...*Recorder) {
	periodic.Run(stop, SliceDuration, func(now time.Time) {
		for _, r := range recorders {
			r.Rotate(now)
		}
	})
}
