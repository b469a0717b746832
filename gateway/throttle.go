package gateway

// throttleBuckets is the number of sub-windows a one-second sliding window is
// split into; the count over the window is exact to one bucket (100 ms).
const throttleBuckets = 10

// slidingWindow counts events over the last second in throttleBuckets buckets.
// It is used by one session goroutine at a time (under the session's lock).
type slidingWindow struct {
	limit     int
	buckets   [throttleBuckets]int
	bucketNow int64 // index of the current bucket (time / bucket width)
	total     int
}

const bucketWidthNs = int64(1e9 / throttleBuckets)

// allow records one event at time nowNs and reports whether the count over the
// last second, including it, stays within the limit. A limit of 0 means no limit.
// An event over the limit is not counted, so a client that is throttled is not
// punished further for the orders it was refused.
func (w *slidingWindow) allow(nowNs int64) bool {
	if w.limit <= 0 {
		return true
	}
	w.advance(nowNs)
	if w.total+1 > w.limit {
		return false
	}
	w.buckets[w.bucketNow%throttleBuckets]++
	w.total++
	return true
}

func (w *slidingWindow) advance(nowNs int64) {
	b := nowNs / bucketWidthNs
	if b < w.bucketNow {
		// The wall clock stepped back (an NTP step, an operator's date):
		// the window goes on from the clock's time, the counts it holds
		// leaving it as that clock's next second passes. Kept at the later
		// bucket, nothing would leave the window until the clock came back
		// to it, hours later maybe, every order of the session refused
		// meanwhile and the session logged out past its message limit.
		w.bucketNow = b
		return
	}
	if b == w.bucketNow {
		return
	}
	steps := b - w.bucketNow
	if steps > throttleBuckets {
		steps = throttleBuckets
	}
	for i := int64(1); i <= steps; i++ {
		idx := (w.bucketNow + i) % throttleBuckets
		w.total -= w.buckets[idx]
		w.buckets[idx] = 0
	}
	w.bucketNow = b
}

// countAt returns the events counted over the second before nowNs.
func (w *slidingWindow) countAt(nowNs int64) int {
	w.advance(nowNs)
	return w.total
}
