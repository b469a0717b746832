// Package hdrplot turns latency histograms into the two files every
// benchmark run of the latency lab leaves behind: a percentile distribution
// in the HdrHistogram text format (.hgrm) and an SVG percentile plot.
//
// Histograms are github.com/HdrHistogram/hdrhistogram-go histograms whose
// values are nanoseconds. Files and plots speak microseconds, because that is
// the unit the venue's figures are compared in; the conversion happens once,
// here, so that no caller scales values by hand.
//
// The .hgrm format is the one HdrHistogram's own tools print and read
// (columns Value, Percentile, TotalCount, 1/(1-Percentile), then a footer of
// '#' lines), so a file written here can be fed to the public HdrHistogram
// plotter as well as read back by ReadHgrm.
//
// The plot puts latency on a logarithmic y axis and the percentile on a
// logarithmic "1/(1-p)" x axis, where each step to the right is one more nine
// (90%, 99%, 99.9% ...). That is the usual way to show a latency
// distribution: the tail, which is what a venue's clients feel, gets as much
// room as the median. The SVG is written by a small writer of our own with
// no dependency; it draws one line per series (typically one per offered
// rate) and is deterministic, so its tests compare exact output.
//
// Limits: a plot holds at most SeriesMax series and each series at most
// PointsMax points, because a plot with more lines than colours or with
// millions of points is unreadable and slow to render; WriteSVG refuses more
// with an error instead of silently dropping lines. Percentiles of exactly
// 100% have an infinite 1/(1-p) and are drawn at the right edge of the plot.
package hdrplot
