package hdrplot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Plot bounds.
const (
	// SeriesMax bounds the lines in one plot: more lines than the palette
	// has colours cannot be told apart.
	SeriesMax = 16
	// PointsMax bounds the points of one series; a .hgrm has a few hundred.
	PointsMax = 10_000
	// plotDecadesMax is the rightmost percentile the x axis can reach
	// (99.99999%); a run would need ten million samples to fill it.
	plotDecadesMax = 7
	// plotDecadesMin keeps at least 0% to 99% on the x axis so that plots
	// of short runs stay comparable with longer ones.
	plotDecadesMin = 2
)

// Default plot size in SVG user units (pixels).
const (
	plotWidthDefault  = 880
	plotHeightDefault = 540
	marginLeft        = 80
	marginRight       = 48
	marginTop         = 56
	marginBottom      = 64
)

// palette holds SeriesMax colours, distinct on white and in print.
var palette = [SeriesMax]string{
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
	"#7f7f7f", "#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#000000",
}

// Series is one line of a plot: a label and a percentile distribution.
type Series struct {
	Label  string
	Points []Point
}

// PlotConfig describes the plot around the lines.
type PlotConfig struct {
	Title    string
	Subtitle string // e.g. the command and machine; may be empty
	Width    int    // 0: plotWidthDefault
	Height   int    // 0: plotHeightDefault
}

// ErrPlot reports series that cannot be plotted.
var ErrPlot = errors.New("hdrplot: cannot plot")

// WriteSVG draws the series as a percentile plot: latency on a logarithmic
// y axis against the percentile on a logarithmic 1/(1-p) x axis.
func WriteSVG(w io.Writer, cfg PlotConfig, series []Series) error {
	if len(series) == 0 || len(series) > SeriesMax {
		return fmt.Errorf("%w: %d series, want 1 to %d", ErrPlot, len(series), SeriesMax)
	}
	for i := range series {
		if len(series[i].Points) > PointsMax {
			return fmt.Errorf("%w: series %q has %d points, more than %d", ErrPlot, series[i].Label, len(series[i].Points), PointsMax)
		}
	}
	if cfg.Width == 0 {
		cfg.Width = plotWidthDefault
	}
	if cfg.Height == 0 {
		cfg.Height = plotHeightDefault
	}
	if cfg.Width < marginLeft+marginRight+100 || cfg.Height < marginTop+marginBottom+100 {
		return fmt.Errorf("%w: %dx%d is too small", ErrPlot, cfg.Width, cfg.Height)
	}
	ax := newAxes(cfg, series)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		cfg.Width, cfg.Height, cfg.Width, cfg.Height)
	fmt.Fprintf(bw, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", cfg.Width, cfg.Height)
	fmt.Fprintf(bw, `<text x="%d" y="22" font-size="16" font-weight="bold">%s</text>`+"\n", marginLeft, escapeXML(cfg.Title))
	if cfg.Subtitle != "" {
		fmt.Fprintf(bw, `<text x="%d" y="40" font-size="11" fill="#555555">%s</text>`+"\n", marginLeft, escapeXML(cfg.Subtitle))
	}
	ax.writeGrid(bw)
	for i := range series {
		ax.writeLine(bw, palette[i], series[i].Points)
	}
	ax.writeLegend(bw, series)
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// axes maps (quantile, µs) to SVG coordinates.
type axes struct {
	left, right, top, bottom float64
	decades                  int     // x axis spans 0 .. decades nines
	yLow, yHigh              int     // y axis spans 10^yLow .. 10^yHigh µs
	xScale, yScale           float64 // pixels per decade
}

func newAxes(cfg PlotConfig, series []Series) *axes {
	a := &axes{left: marginLeft, right: float64(cfg.Width - marginRight), top: marginTop, bottom: float64(cfg.Height - marginBottom)}
	xMax := 0.0
	yMin, yMax := math.Inf(1), math.Inf(-1)
	for i := range series {
		for _, p := range series[i].Points {
			if p.Quantile < 1 {
				xMax = math.Max(xMax, quantileX(p.Quantile))
			}
			if p.ValueUs > 0 {
				yMin = math.Min(yMin, p.ValueUs)
				yMax = math.Max(yMax, p.ValueUs)
			}
		}
	}
	a.decades = int(math.Ceil(xMax - 1e-9))
	a.decades = max(plotDecadesMin, min(plotDecadesMax, a.decades))
	if math.IsInf(yMin, 1) { // nothing positive to draw: show 1 µs to 1 ms
		yMin, yMax = 1, 1000
	}
	a.yLow = int(math.Floor(math.Log10(yMin)))
	a.yHigh = int(math.Ceil(math.Log10(yMax)))
	if a.yHigh <= a.yLow {
		a.yHigh = a.yLow + 1
	}
	a.xScale = (a.right - a.left) / float64(a.decades)
	a.yScale = (a.bottom - a.top) / float64(a.yHigh-a.yLow)
	return a
}

// quantileX is log10(1/(1-q)): 0 at 0%, 1 at 90%, 2 at 99%.
func quantileX(q float64) float64 { return -math.Log10(1 - q) }

func (a *axes) x(q float64) float64 {
	if q >= 1 {
		return a.right
	}
	return a.left + math.Min(quantileX(q), float64(a.decades))*a.xScale
}

func (a *axes) y(us float64) float64 {
	low := math.Pow(10, float64(a.yLow))
	if us < low {
		us = low
	}
	return a.bottom - (math.Log10(us)-float64(a.yLow))*a.yScale
}

// decadeLabel names 10^e microseconds: "100ns", "1µs", "10ms", "1s" ...
func decadeLabel(e int) string {
	units := []struct {
		name string
		exp  int // the unit is 10^exp µs
	}{{"s", 6}, {"ms", 3}, {"µs", 0}, {"ns", -3}}
	for _, u := range units {
		if e >= u.exp || u.name == "ns" {
			return "1" + strings.Repeat("0", max(0, e-u.exp)) + u.name
		}
	}
	return ""
}

// percentileLabel names the x position of d nines: 0%, 90%, 99%, 99.9% ...
func percentileLabel(d int) string {
	switch d {
	case 0:
		return "0%"
	case 1:
		return "90%"
	case 2:
		return "99%"
	}
	return "99." + strings.Repeat("9", d-2) + "%"
}

func (a *axes) writeGrid(w *bufio.Writer) {
	fmt.Fprintf(w, `<g stroke="#dddddd" stroke-width="1">`+"\n")
	for d := 0; d <= a.decades; d++ {
		x := a.left + float64(d)*a.xScale
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", x, a.top, x, a.bottom)
	}
	for e := a.yLow; e <= a.yHigh; e++ {
		y := a.bottom - float64(e-a.yLow)*a.yScale
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", a.left, y, a.right, y)
	}
	w.WriteString("</g>\n")
	// Faint lines at 2× and 5× each decade help read values off the plot.
	fmt.Fprintf(w, `<g stroke="#f0f0f0" stroke-width="1">`+"\n")
	for e := a.yLow; e < a.yHigh; e++ {
		for _, m := range []float64{2, 5} {
			y := a.bottom - (float64(e-a.yLow)+math.Log10(m))*a.yScale
			fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", a.left, y, a.right, y)
		}
	}
	w.WriteString("</g>\n")
	fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#333333"/>`+"\n",
		a.left, a.top, a.right-a.left, a.bottom-a.top)
	for d := 0; d <= a.decades; d++ {
		x := a.left + float64(d)*a.xScale
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, a.bottom+18, percentileLabel(d))
	}
	for e := a.yLow; e <= a.yHigh; e++ {
		y := a.bottom - float64(e-a.yLow)*a.yScale
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", a.left-6, y+4, decadeLabel(e))
	}
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle">percentile</text>`+"\n", (a.left+a.right)/2, a.bottom+40)
	fmt.Fprintf(w, `<text x="18" y="%.1f" text-anchor="middle" transform="rotate(-90 18 %.1f)">latency</text>`+"\n",
		(a.top+a.bottom)/2, (a.top+a.bottom)/2)
}

func (a *axes) writeLine(w *bufio.Writer, colour string, pts []Point) {
	if len(pts) == 0 {
		return
	}
	fmt.Fprintf(w, `<polyline fill="none" stroke="%s" stroke-width="2" points="`, colour)
	for i, p := range pts {
		if i > 0 {
			w.WriteByte(' ')
		}
		fmt.Fprintf(w, "%.1f,%.1f", a.x(p.Quantile), a.y(p.ValueUs))
	}
	w.WriteString(`"/>` + "\n")
}

// writeLegend draws the legend in the lower right corner, where percentile
// plots leave room (lines rise to the right), on a white box so that it
// stays readable over any line. Text width is estimated, not measured.
func (a *axes) writeLegend(w *bufio.Writer, series []Series) {
	const rowHeight, charWidth, swatch = 18, 7, 22
	labels := make([]string, len(series))
	longest := 0
	for i := range series {
		labels[i] = series[i].Label
		if len(series[i].Points) == 0 {
			labels[i] += " (no samples)"
		}
		longest = max(longest, len([]rune(labels[i])))
	}
	width := float64(swatch + 18 + charWidth*longest)
	height := float64(rowHeight*len(series) + 8)
	x0, y0 := a.right-width-8, a.bottom-height-8
	fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#ffffff" fill-opacity="0.85" stroke="#cccccc"/>`+"\n", x0, y0, width, height)
	x, y := x0+6, y0+rowHeight
	for i := range series {
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/>`+"\n", x, y-4, x+swatch, y-4, palette[i])
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f">%s</text>`+"\n", x+swatch+6, y, escapeXML(labels[i]))
		y += rowHeight
	}
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func escapeXML(s string) string { return xmlEscaper.Replace(s) }
