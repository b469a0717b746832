package hdrplot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

func TestRecordClamps(t *testing.T) {
	h := NewHistogram(LowestNsFIX)
	cases := []struct {
		ns      int64
		clamped bool
	}{
		{5_000, false},
		{-7, true},
		{HighestNs * 2, true},
		{HighestNs, false},
	}
	for _, c := range cases {
		if got := Record(h, c.ns); got != c.clamped {
			t.Errorf("Record(%d) clamped = %v, want %v", c.ns, got, c.clamped)
		}
	}
	if h.TotalCount() != int64(len(cases)) {
		t.Fatalf("count %d, want %d: a clamped value must still be counted", h.TotalCount(), len(cases))
	}
	if h.Min() != 0 || !h.ValuesAreEquivalent(h.Max(), HighestNs) {
		t.Fatalf("min %d max %d, want 0 and %d", h.Min(), h.Max(), int64(HighestNs))
	}
}

func TestSummarize(t *testing.T) {
	h := NewHistogram(LowestNsPipeline)
	for v := int64(1); v <= 1000; v++ {
		Record(h, v*1000) // 1 µs .. 1000 µs
	}
	s := Summarize(h)
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > want*0.002 { // three significant digits
			t.Errorf("%s = %v µs, want %v µs", name, got, want)
		}
	}
	if s.Count != 1000 {
		t.Fatalf("count %d", s.Count)
	}
	near("p50", s.P50Us, 500)
	near("p90", s.P90Us, 900)
	near("p99", s.P99Us, 990)
	near("p99.9", s.P999Us, 999)
	near("max", s.MaxUs, 1000)
	near("mean", s.MeanUs, 500.5)
	if (Summarize(NewHistogram(1)) != Summary{}) {
		t.Fatal("empty histogram must summarize to zero")
	}
}

func TestFormatUs(t *testing.T) {
	cases := []struct {
		us   float64
		want string
	}{
		{0.1, "100ns"},
		{0.85, "850ns"},
		{1, "1.00µs"},
		{12.34, "12.3µs"},
		{123.4, "123µs"},
		{1000, "1.00ms"},
		{4560, "4.56ms"},
		{250_000, "250ms"},
		{1_200_000, "1.20s"},
		{60_000_000, "60.0s"},
	}
	for _, c := range cases {
		if got := FormatUs(c.us); got != c.want {
			t.Errorf("FormatUs(%v) = %q, want %q", c.us, got, c.want)
		}
	}
}

func TestHgrmRoundTrip(t *testing.T) {
	h := NewHistogram(LowestNsFIX)
	for i := int64(0); i < 10_000; i++ {
		Record(h, 20_000+i*100) // 20 µs .. 1020 µs
	}
	Record(h, 250_000_000) // one 250 ms outlier
	var buf bytes.Buffer
	if err := WriteHgrm(&buf, h); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if !strings.HasPrefix(text, "       Value     Percentile TotalCount 1/(1-Percentile)\n\n") {
		t.Fatalf("header:\n%s", text[:80])
	}
	if !strings.Contains(text, "#[Max     =   "+trimFloat(float64(h.Max())/1000, 3)+", Total count    =        10001]") {
		t.Fatalf("footer missing max and count:\n%s", text[len(text)-200:])
	}
	pts, err := ReadHgrm(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := Distribution(h)
	if len(pts) != len(want) || len(pts) < 20 {
		t.Fatalf("read %d rows, wrote %d", len(pts), len(want))
	}
	for i := range pts {
		// Values are printed with three decimals of a microsecond (1 ns),
		// quantiles with twelve decimals.
		if math.Abs(pts[i].ValueUs-want[i].ValueUs) > 0.0005 || math.Abs(pts[i].Quantile-want[i].Quantile) > 1e-12 || pts[i].Count != want[i].Count {
			t.Fatalf("row %d: read %+v, wrote %+v", i, pts[i], want[i])
		}
	}
	first, last := pts[0], pts[len(pts)-1]
	if first.Quantile != 0 || math.Abs(first.ValueUs-20) > 1 { // 1 µs is the finest step of this histogram
		t.Errorf("first row %+v, want 0%% at 20 µs", first)
	}
	if last.Quantile != 1 || last.Count != 10_001 || math.Abs(last.ValueUs-250_000) > 250 {
		t.Errorf("last row %+v, want 100%% at 250 ms with every value", last)
	}
	if !strings.Contains(text, " inf\n") {
		t.Error("the 100% row must print inf for 1/(1-p)")
	}
}

func TestWriteHgrmEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHgrm(&buf, NewHistogram(1)); err != nil {
		t.Fatal(err)
	}
	pts, err := ReadHgrm(&buf)
	if err != nil || len(pts) != 0 {
		t.Fatalf("empty histogram read back as %d rows, err %v", len(pts), err)
	}
}

func TestReadHgrmJavaStyleLastRow(t *testing.T) {
	// HdrHistogram's Java tools print the 100% row with three columns.
	in := "       Value     Percentile TotalCount 1/(1-Percentile)\n\n" +
		"      10.000 0.000000000000          1           1.00\n" +
		"      20.000 0.500000000000          2           2.00\n" +
		"      40.000 1.000000000000          4\n" +
		"#[Mean    =       25.000, StdDeviation   =       11.180]\n"
	pts, err := ReadHgrm(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 3 || pts[2] != (Point{Quantile: 1, ValueUs: 40, Count: 4}) {
		t.Fatalf("got %+v", pts)
	}
}

func TestReadHgrmRefuses(t *testing.T) {
	cases := map[string]string{
		"two columns":     "10.0 0.5\n",
		"letters":         "abc 0.5 1 2.00\n",
		"negative value":  "-1.0 0.5 1 2.00\n",
		"quantile over 1": "1.0 1.5 1 2.00\n",
		"bad count":       "1.0 0.5 x 2.00\n",
		"going down":      "5.0 0.5 1 2.00\n4.0 0.9 2 10.00\n",
		"quantile down":   "5.0 0.5 1 2.00\n6.0 0.4 2 1.60\n",
	}
	for name, in := range cases {
		if _, err := ReadHgrm(strings.NewReader(in)); !errors.Is(err, ErrHgrm) {
			t.Errorf("%s: err %v, want ErrHgrm", name, err)
		}
	}
}

func TestDecadeLabel(t *testing.T) {
	want := map[int]string{-3: "1ns", -1: "100ns", 0: "1µs", 2: "100µs", 3: "1ms", 4: "10ms", 6: "1s", 7: "10s"}
	for e, w := range want {
		if got := decadeLabel(e); got != w {
			t.Errorf("decadeLabel(%d) = %q, want %q", e, got, w)
		}
	}
}

func TestPercentileLabel(t *testing.T) {
	want := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%", "99.99999%"}
	for d, w := range want {
		if got := percentileLabel(d); got != w {
			t.Errorf("percentileLabel(%d) = %q, want %q", d, got, w)
		}
	}
}

// svgDoc is the part of the SVG the tests look at.
type svgDoc struct {
	Width     int `xml:"width,attr"`
	Polylines []struct {
		Stroke string `xml:"stroke,attr"`
		Points string `xml:"points,attr"`
	} `xml:"polyline"`
	Texts []string `xml:"text"`
}

func parseSVG(t *testing.T, b []byte) svgDoc {
	t.Helper()
	var d svgDoc
	if err := xml.Unmarshal(b, &d); err != nil {
		t.Fatalf("SVG is not well-formed XML: %v\n%s", err, b)
	}
	return d
}

func TestWriteSVGAxesAndLines(t *testing.T) {
	a := Series{Label: "10k/s <journal>", Points: []Point{{0, 20, 1}, {0.9, 40, 9}, {0.99, 100, 99}, {0.999, 900, 999}, {1, 5000, 1000}}}
	b := Series{Label: "100k/s", Points: []Point{{0, 30, 1}, {0.5, 35, 5}, {1, 60, 10}}}
	empty := Series{Label: "500k/s"}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, PlotConfig{Title: "pipeline & journal", Subtitle: "busy machine"}, []Series{a, b, empty}); err != nil {
		t.Fatal(err)
	}
	d := parseSVG(t, buf.Bytes())
	if d.Width != plotWidthDefault {
		t.Errorf("width %d", d.Width)
	}
	if len(d.Polylines) != 2 {
		t.Fatalf("%d polylines, want one per non-empty series", len(d.Polylines))
	}
	if d.Polylines[0].Stroke == d.Polylines[1].Stroke {
		t.Error("two series share a colour")
	}
	texts := strings.Join(d.Texts, "|")
	for _, want := range []string{"pipeline & journal", "busy machine", "0%", "90%", "99%", "99.9%", "10µs", "10ms", "10k/s <journal>", "500k/s (no samples)", "percentile", "latency"} {
		if !strings.Contains(texts, want) {
			t.Errorf("plot text lacks %q: %s", want, texts)
		}
	}
	if strings.Contains(texts, "99.99%") {
		t.Error("x axis goes past the last finite percentile (99.9%)")
	}
	// Series a: y spans 10 µs .. 10 ms (3 decades), x spans 3 decades.
	// The point (99%, 100 µs) sits two decades right and one decade up.
	left, right := float64(marginLeft), float64(plotWidthDefault-marginRight)
	top, bottom := float64(marginTop), float64(plotHeightDefault-marginBottom)
	wantX := left + 2*(right-left)/3
	wantY := bottom - 1*(bottom-top)/3
	pts := strings.Fields(d.Polylines[0].Points)
	if len(pts) != 5 {
		t.Fatalf("series a has %d points", len(pts))
	}
	if got, want := pts[2], format2(wantX, wantY); got != want {
		t.Errorf("(99%%, 100µs) drawn at %s, want %s", got, want)
	}
	if got, want := pts[4], format2(right, bottom-math.Log10(500)*(bottom-top)/3); got != want {
		t.Errorf("(100%%, 5ms) drawn at %s, want %s at the right edge", got, want)
	}
}

func format2(x, y float64) string { return trimFloat(x, 1) + "," + trimFloat(y, 1) }

func TestWriteSVGRefuses(t *testing.T) {
	one := []Series{{Label: "x", Points: []Point{{0, 1, 1}}}}
	many := make([]Series, SeriesMax+1)
	long := []Series{{Label: "x", Points: make([]Point, PointsMax+1)}}
	cases := []struct {
		name   string
		cfg    PlotConfig
		series []Series
	}{
		{"no series", PlotConfig{}, nil},
		{"too many series", PlotConfig{}, many},
		{"too many points", PlotConfig{}, long},
		{"too small", PlotConfig{Width: 120, Height: 90}, one},
	}
	for _, c := range cases {
		if err := WriteSVG(io.Discard, c.cfg, c.series); !errors.Is(err, ErrPlot) {
			t.Errorf("%s: err %v, want ErrPlot", c.name, err)
		}
	}
}

func TestWriteSVGFromHistogram(t *testing.T) {
	// The path the tools take: histogram → distribution → plot.
	h := NewHistogram(LowestNsPipeline)
	for i := int64(1); i <= 100_000; i++ {
		Record(h, 500+i%1000*10)
	}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, PlotConfig{Title: "t"}, []Series{{Label: "r", Points: Distribution(h)}}); err != nil {
		t.Fatal(err)
	}
	d := parseSVG(t, buf.Bytes())
	if len(d.Polylines) != 1 || len(strings.Fields(d.Polylines[0].Points)) != len(Distribution(h)) {
		t.Fatal("one line with every point expected")
	}
	if !strings.Contains(strings.Join(d.Texts, "|"), "99.99%") {
		t.Error("100,000 samples should reach 99.99% on the x axis")
	}
}
