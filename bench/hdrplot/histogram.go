package hdrplot

import (
	"math"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds used across the latency lab. Values are nanoseconds.
const (
	// LowestNsFIX is the finest latency the FIX load generator tells apart:
	// a loopback round trip alone is tens of microseconds, so 1 µs is ample.
	LowestNsFIX = 1_000
	// LowestNsPipeline is the finest latency the in-process pipeline harness
	// tells apart: a ring hop is nanoseconds, so it records to the nanosecond.
	LowestNsPipeline = 1
	// HighestNs is the largest latency recorded (60 s); anything slower is
	// recorded as 60 s and counted as clamped, never dropped.
	HighestNs = 60_000_000_000
	// SignificantDigits is the precision of every histogram (0.1%).
	SignificantDigits = 3
	// nsPerUs converts nanoseconds to microseconds.
	nsPerUs = 1_000
)

// NewHistogram returns an empty latency histogram from lowestNs to HighestNs
// with SignificantDigits of precision.
func NewHistogram(lowestNs int64) *hdrhistogram.Histogram {
	return hdrhistogram.New(lowestNs, HighestNs, SignificantDigits)
}

// Record adds one latency to h, clamping it into [0, the histogram's highest
// trackable value] so that a value out of range is still counted (and never
// makes RecordValue allocate an error). It reports whether it clamped.
func Record(h *hdrhistogram.Histogram, ns int64) (clamped bool) {
	if ns < 0 {
		ns, clamped = 0, true
	}
	if high := h.HighestTrackableValue(); ns > high {
		ns, clamped = high, true
	}
	_ = h.RecordValue(ns) // in range by construction
	return clamped
}

// Summary holds the headline figures of a latency histogram in microseconds.
type Summary struct {
	Count  int64   `json:"count"`
	P50Us  float64 `json:"p50_us"`
	P90Us  float64 `json:"p90_us"`
	P99Us  float64 `json:"p99_us"`
	P999Us float64 `json:"p99_9_us"`
	MaxUs  float64 `json:"max_us"`
	MeanUs float64 `json:"mean_us"`
}

// Summarize reads the headline percentiles of a histogram of nanoseconds.
// An empty histogram gives a zero Summary.
func Summarize(h *hdrhistogram.Histogram) Summary {
	if h == nil || h.TotalCount() == 0 {
		return Summary{}
	}
	us := func(ns int64) float64 { return float64(ns) / nsPerUs }
	return Summary{
		Count:  h.TotalCount(),
		P50Us:  us(h.ValueAtQuantile(50)),
		P90Us:  us(h.ValueAtQuantile(90)),
		P99Us:  us(h.ValueAtQuantile(99)),
		P999Us: us(h.ValueAtQuantile(99.9)),
		MaxUs:  us(h.Max()),
		MeanUs: math.Round(h.Mean()) / nsPerUs,
	}
}

// FormatUs prints a duration given in microseconds with a unit that keeps
// three significant figures readable: "850ns", "12.3µs", "4.56ms", "1.20s".
func FormatUs(us float64) string {
	switch {
	case us < 1:
		return trimFloat(us*1000, 0) + "ns"
	case us < 1000:
		return trimFloat(us, sigDecimals(us)) + "µs"
	case us < 1_000_000:
		return trimFloat(us/1000, sigDecimals(us/1000)) + "ms"
	default:
		return trimFloat(us/1_000_000, sigDecimals(us/1_000_000)) + "s"
	}
}

// sigDecimals is the number of decimals that shows three significant figures.
func sigDecimals(v float64) int {
	switch {
	case v >= 100:
		return 0
	case v >= 10:
		return 1
	default:
		return 2
	}
}

// trimFloat formats v with the given number of decimals.
func trimFloat(v float64, decimals int) string {
	return strconv.FormatFloat(v, 'f', decimals, 64)
}
