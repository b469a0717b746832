package edge

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// BenchmarkEdgeCost measures what the edge adds to a FIX round trip
// (NewOrderSingle → ExecutionReport over loopback TCP): two QuickFIX/Go
// acceptors in the same process, one behind the edge and one on a plain
// listener, with one client each; every iteration does one round trip on
// each, alternating which goes first, so both see the same load and the
// same machine. Reported: p50 and p99 of each, in microseconds, and the
// difference of the p50s.
func BenchmarkEdgeCost(b *testing.B) {
	edged := startVenueWith(b, Config{}, noDictionary, "CLIENT1")
	ec := edged.logon("CLIENT1")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	directID := nextVenueID()
	acceptor := startAcceptorWith(b, &testApp{}, ln, nil, map[string]string{"SenderCompID": directID, "DataDictionary": "none"}, "CLIENT1")
	b.Cleanup(acceptor.Stop)
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	dc := newFixClient(b, conn, "CLIENT1")
	dc.venueID = directID
	dc.sendMsg("A", logonBody("")...)
	dc.expect("A")

	// Warm both paths up.
	for i := range 200 {
		ec.trade("warm-" + strconv.Itoa(i))
		dc.trade("warm-" + strconv.Itoa(i))
	}
	withEdge := hdrhistogram.New(1, int64(time.Second/time.Microsecond)*1000, 3)
	direct := hdrhistogram.New(1, int64(time.Second/time.Microsecond)*1000, 3)
	roundTrip := func(c *fixClient, h *hdrhistogram.Histogram, id string) {
		start := time.Now()
		c.trade(id)
		_ = h.RecordValue(int64(time.Since(start) / time.Nanosecond))
	}
	i := 0
	for b.Loop() {
		id := strconv.Itoa(i)
		if i%2 == 0 {
			roundTrip(ec, withEdge, id)
			roundTrip(dc, direct, id)
		} else {
			roundTrip(dc, direct, id)
			roundTrip(ec, withEdge, id)
		}
		i++
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	b.ReportMetric(us(withEdge.ValueAtQuantile(50)), "edge-p50-µs")
	b.ReportMetric(us(direct.ValueAtQuantile(50)), "direct-p50-µs")
	b.ReportMetric(us(withEdge.ValueAtQuantile(99)), "edge-p99-µs")
	b.ReportMetric(us(direct.ValueAtQuantile(99)), "direct-p99-µs")
	b.ReportMetric(us(withEdge.ValueAtQuantile(50)-direct.ValueAtQuantile(50)), "added-p50-µs")
}
