// Package latency keeps the venue's own latency distributions in
// HdrHistograms: a Recorder takes one value per measured event on the hot
// path (a mutex held for one RecordValue, no allocation) and a reader sees,
// once per second, the distribution of the last minute and since start.
//
// A Recorder writes into an active histogram. Rotate, called once per
// SliceDuration by one goroutine (Run), swaps in a cleared histogram (the
// oldest slice of the window, reset outside the lock), keeps the finished
// one among the last WindowSlices, merges it into the since-start
// histogram and publishes a Summary of both. The hot path never merges,
// resets or computes a percentile; the reader never touches the active
// histogram. So the "last minute" is the last WindowSlices finished slices
// (the current second is not in it) and "since start" ends at the last
// rotation.
//
// The venue records two latencies (DESIGN.md "Latency and measurement"):
//   - order to ExecutionReport: from a FIX message's arrival (the gateway's
//     stamp, carried in the command) to each answer of its command (its
//     reports, the fills of the orders it traded with) being handed to a
//     session, after the command is durable;
//   - order to feed: from the same stamp to the flush of the market data
//     packet that carries the command's messages.
//
// Both are measured only for a command a FIX message caused (the gateway
// notes those it publishes, gateway/roundtrip.go; the feed tells them by
// their events, marketdata.Feed's recordLatency): an operator's (a mass
// cancel, a kill switch, a halt, a phase change and its uncross), the
// schedule's, an end of day's, a Tick's or a cancel on disconnect's command
// carries no arrival (the schedule's, a transition run late, the time it
// was due), and an answer rebuilt after a crash is handed over by no
// outbound.
//
// Limits: values are nanoseconds in [1, ValueMaxNs]; a larger value is
// recorded as ValueMaxNs and counted in Summary.Clamped. Precision is
// SignificantFigures decimal digits (1%). Memory: WindowSlices+2
// histograms of about 27 KiB each per Recorder, allocated by New.
package latency
