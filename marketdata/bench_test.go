package marketdata

import (
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/packet"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// acceptedEvent encodes an OrderAccepted for a resting limit order.
func acceptedEvent(causeSeq, orderID uint64, side venue.Side, priceTicks, qty int64) []byte {
	buf := make([]byte, venue.OrderAcceptedEncodedLength)
	var m venue.OrderAccepted
	_ = m.WrapEncode(buf, 0)
	m.SetCauseSeq(causeSeq)
	m.SetTimestampNs(int64(causeSeq))
	m.SetSide(side)
	m.SetOrdType(venue.OrdTypeLimit)
	m.SetTimeInForce(venue.TimeInForceGTC)
	m.SetInstrumentID(1)
	m.SetOrderID(orderID)
	m.SetPriceTicks(priceTicks)
	m.SetQty(qty)
	m.SetLeavesQty(qty)
	m.SetDisplayQty(qty)
	return buf
}

// BenchmarkSnapshotEncode is the cost of encoding a snapshot of a book of
// 10,000 orders on 200 levels (the feed waits for it while it holds its lock).
func BenchmarkSnapshotEncode(b *testing.B) {
	const orders = 10000
	pb, _ := packet.NewBuilder(packet.BuilderConfig{Channel: 1, Sequenced: true, Sink: discardSink{}})
	tr, err := NewTracker(TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: orders, LevelsMax: 1024}, pb)
	if err != nil {
		b.Fatal(err)
	}
	for i := uint64(1); i <= orders; i++ {
		side, px := venue.SideBuy, int64(900+i%100)
		if i%2 == 0 {
			side, px = venue.SideSell, int64(1001+i%100)
		}
		if err := tr.Apply(acceptedEvent(i, i, side, px, 10)); err != nil {
			b.Fatal(err)
		}
	}
	if err := tr.EndCommand(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		frames, err := encodeSnapshot(tr, 1, pb.NextSeq()-1, 1, 1, SnapshotBytesMaxDefault)
		if err != nil || len(frames) < orders*25 {
			b.Fatal(err, len(frames))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/orders, "ns/order")
}

// commandEvents is the events of n random commands, each command's apart.
func commandEvents(b *testing.B, n int) [][][]byte {
	sim := newVenueSim(b, 51)
	batches := make([][][]byte, 0, n)
	for range n {
		var batch [][]byte
		for _, ev := range sim.next().All() {
			batch = append(batch, append([]byte(nil), ev...))
		}
		batches = append(batches, batch)
	}
	return batches
}

// benchFeedCommands runs apply on a feed from newFeed for each command's
// events in turn, a fresh feed after the last (its books would fill).
func benchFeedCommands(b *testing.B, batches [][][]byte, cfg FeedConfig, standbyB bool, apply func(*Feed, [][]byte) error) {
	newFeed := func() *Feed {
		f, err := NewFeed(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if standbyB {
			f.SendStandbyB()
		}
		return f
	}
	f := newFeed()
	b.ReportAllocs()
	b.ResetTimer()
	for i, k := 0, 0; i < b.N; i, k = i+1, k+1 {
		if k == len(batches) {
			b.StopTimer()
			_ = f.Close()
			f, k = newFeed(), 0
			b.StartTimer()
		}
		if err := apply(f, batches[k]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_ = f.Close()
}

// BenchmarkFeedApplyBatch is the feed's cost per command: the events of one
// random command applied under the lock, then the packet kept in the window
// and sent as a UDP datagram on loopback; "ab" sends it on a B line too.
func BenchmarkFeedApplyBatch(b *testing.B) {
	batches := commandEvents(b, 20000)
	for _, lines := range []string{"a", "ab"} {
		b.Run(lines, func(b *testing.B) {
			sink, sinkB := udpSinkB(b), ""
			if lines == "ab" {
				sinkB = udpSinkB(b)
			}
			cfg := FeedConfig{Tracker: TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024},
				FeedAddr: sink, FeedBAddr: sinkB, Recovery: RecoveryConfig{Addr: "127.0.0.1:0"}}
			benchFeedCommands(b, batches, cfg, false, (*Feed).ApplyBatch)
		})
	}
}

// BenchmarkStandbyFeed is a cluster follower's standby feed's cost per
// command: the events of one random command replayed, then the command
// ended (EndStandbyCommand, once per command: a follower ends one per batch
// of committed commands, so this is the most it pays). "quiet" keeps the
// packet in the window, as a follower without the B line does; "b" sends
// it on the B line too (marketdata.feed_b_from = "followers").
func BenchmarkStandbyFeed(b *testing.B) {
	batches := commandEvents(b, 20000)
	for _, mode := range []string{"quiet", "b"} {
		b.Run(mode, func(b *testing.B) {
			cfg := FeedConfig{Tracker: TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024},
				FeedAddr: udpSinkB(b), FeedBAddr: udpSinkB(b), BLineFromStandby: true, Standby: true,
				Recovery: RecoveryConfig{Addr: "127.0.0.1:0"},
				// The simulated commands' time, so that none is too old to send.
				Clock: func() time.Time { return time.Unix(0, simStartNs) }}
			benchFeedCommands(b, batches, cfg, mode == "b", func(f *Feed, events [][]byte) error {
				for _, ev := range events {
					if err := f.Replay(ev); err != nil {
						return err
					}
				}
				_, _, err := f.EndStandbyCommand()
				return err
			})
		})
	}
}
