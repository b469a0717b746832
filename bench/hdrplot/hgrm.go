package hdrplot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// TicksPerHalfDistance is how finely a .hgrm file samples the percentiles:
// this many rows between 0% and 50%, as many again between 50% and 75%, and
// so on for each halving of the remaining distance to 100% (HdrHistogram's
// own default is 5).
const TicksPerHalfDistance = 5

// hgrmRowsMax bounds the rows ReadHgrm accepts from one file. A histogram
// of 60 s at three digits printed at TicksPerHalfDistance has well under a
// thousand rows; a file with more is not one of ours.
const hgrmRowsMax = 100_000

// Point is one row of a percentile distribution.
type Point struct {
	// Quantile is the fraction of values at or below ValueUs, in [0, 1].
	Quantile float64
	// ValueUs is the latency in microseconds.
	ValueUs float64
	// Count is the number of values at or below ValueUs.
	Count int64
}

// WriteHgrm writes the percentile distribution of h (nanoseconds) to w in
// the HdrHistogram text format, values in microseconds.
func WriteHgrm(w io.Writer, h *hdrhistogram.Histogram) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")
	if h.TotalCount() > 0 {
		for _, p := range Distribution(h) {
			inv := "inf"
			if p.Quantile < 1 {
				inv = strconv.FormatFloat(1/(1-p.Quantile), 'f', 2, 64)
			}
			fmt.Fprintf(bw, "%12.3f %14.12f %10d %14s\n", p.ValueUs, p.Quantile, p.Count, inv)
		}
	}
	fmt.Fprintf(bw, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", h.Mean()/nsPerUs, h.StdDev()/nsPerUs)
	fmt.Fprintf(bw, "#[Max     = %12.3f, Total count    = %12d]\n", float64(h.Max())/nsPerUs, h.TotalCount())
	return bw.Flush()
}

// WriteHgrmFile writes the percentile distribution of h to the file path
// (created or truncated), as WriteHgrm does.
func WriteHgrmFile(path string, h *hdrhistogram.Histogram) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteHgrm(f, h); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Distribution samples the percentile distribution of h (nanoseconds) the
// way WriteHgrm prints it. An empty histogram has no points.
func Distribution(h *hdrhistogram.Histogram) []Point {
	if h.TotalCount() == 0 {
		return nil
	}
	brackets := h.CumulativeDistributionWithTicks(TicksPerHalfDistance)
	out := make([]Point, 0, len(brackets))
	for _, b := range brackets {
		out = append(out, Point{Quantile: b.Quantile / 100, ValueUs: float64(b.ValueAt) / nsPerUs, Count: b.Count})
	}
	return out
}

// ErrHgrm reports a file that is not a percentile distribution.
var ErrHgrm = errors.New("hdrplot: not an .hgrm percentile distribution")

// ReadHgrm reads the rows of a percentile distribution written by WriteHgrm
// (or by HdrHistogram's tools, whose values are then taken as microseconds).
// Blank lines, the column header and '#' footer lines are skipped.
func ReadHgrm(r io.Reader) ([]Point, error) {
	sc := bufio.NewScanner(r)
	var out []Point
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") || strings.HasPrefix(text, "Value") {
			continue
		}
		if len(out) == hgrmRowsMax {
			return nil, fmt.Errorf("%w: more than %d rows", ErrHgrm, hgrmRowsMax)
		}
		p, err := parseHgrmRow(text)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrHgrm, line, err)
		}
		if n := len(out); n > 0 && (p.Quantile < out[n-1].Quantile || p.ValueUs < out[n-1].ValueUs) {
			return nil, fmt.Errorf("%w: line %d: percentiles or values go down", ErrHgrm, line)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func parseHgrmRow(text string) (Point, error) {
	// HdrHistogram's Java tools leave the 1/(1-Percentile) column off the
	// 100% row; ours print "inf". The column is derived, so it is not read.
	cols := strings.Fields(text)
	if len(cols) != 3 && len(cols) != 4 {
		return Point{}, fmt.Errorf("want 3 or 4 columns, got %d", len(cols))
	}
	v, err := strconv.ParseFloat(cols[0], 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return Point{}, fmt.Errorf("bad value %q", cols[0])
	}
	q, err := strconv.ParseFloat(cols[1], 64)
	if err != nil || q < 0 || q > 1 || math.IsNaN(q) {
		return Point{}, fmt.Errorf("bad percentile %q", cols[1])
	}
	n, err := strconv.ParseInt(cols[2], 10, 64)
	if err != nil || n < 0 {
		return Point{}, fmt.Errorf("bad count %q", cols[2])
	}
	return Point{Quantile: q, ValueUs: v, Count: n}, nil
}
