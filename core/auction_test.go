package core

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// at sets the timestampNs of an encoded command (every command's block
// starts with seq, then timestampNs) and returns it.
func at(cmd []byte, ts int64) []byte {
	binary.LittleEndian.PutUint64(cmd[venue.MessageHeaderSize+8:], uint64(ts))
	return cmd
}

// TestAuctionDoesNotAllocate asserts 0 allocations for the commands of
// call auctions in steady state: entering a call, an order waiting in it
// (a market order), the indicative it publishes, the uncross when the
// instrument opens; and a volatility interruption and the timed uncross
// that ends it. Each run leaves the book as it found it.
func TestAuctionDoesNotAllocate(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	w := newWorkload(t, 10)
	const ref = workloadRefTicks
	var tsBuf [cmdSlotSize]byte
	market := newStampedOrder(orderArgs{session: 2, side: venue.SideBuy, ordType: venue.OrdTypeMarket,
		instrument: workloadInstrument, qty: workloadOrderQty})
	refill := newStampedOrder(orderArgs{session: 1, side: venue.SideSell, ordType: venue.OrdTypeLimit,
		instrument: workloadInstrument, tif: venue.TimeInForceGTC, px: ref + 1, qty: workloadOrderQty})
	resting := w.m.RestingOrders()
	call := func() {
		w.apply(t, encodeTradingStatus(tsBuf[:], 0, 0, workloadInstrument, venue.TradingStatusOpeningCall))
		w.apply(t, market.stamp(w.id(nil)))
		w.apply(t, encodeTradingStatus(tsBuf[:], 0, 0, workloadInstrument, venue.TradingStatusOpen))
		w.apply(t, refill.stamp(w.id(nil)))
	}
	call()
	w.sink.kinds = [256]uint64{}
	const runs = 200
	if allocs := testing.AllocsPerRun(runs, call); allocs != 0 {
		t.Errorf("call and uncross: %v allocations per run", allocs)
	}
	for _, tid := range []uint16{venue.AuctionIndicativeTemplateID, venue.AuctionUncrossedTemplateID, venue.FillTemplateID} {
		if got := w.sink.kinds[tid&0xFF]; got < runs {
			t.Errorf("call and uncross: %d %s events in %d runs", got, venue.MessageName(tid), runs)
		}
	}
	if w.m.RestingOrders() != resting {
		t.Fatalf("the call changed the book: %d orders, %d before", w.m.RestingOrders(), resting)
	}

	// A volatility interruption up and one down per run: the last trade
	// goes from low to high and back, each a tick outside the band.
	const band, length = 50, 1000
	m, err := NewMatcher(Config{OrdersMax: 64, ClOrdIDsMax: 1 << 16, SessionsMax: 4,
		Instruments: []InstrumentConfig{{ID: 1, Symbol: "V", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 100,
			RefPriceTicks: ref, BandPercent: 10, VolatilityBandTicks: band, VolatilityAuctionNs: length}}})
	if err != nil {
		t.Fatal(err)
	}
	sink := &ringSink{}
	low, high := int64(ref), int64(ref+band+1)
	mk := func(session uint16, side venue.Side, px int64) *stampedCmd {
		return newStampedOrder(orderArgs{session: session, side: side, ordType: venue.OrdTypeLimit, instrument: 1, px: px, qty: 1})
	}
	askHigh, buyHigh, bidLow, sellLow := mk(1, venue.SideSell, high), mk(2, venue.SideBuy, high), mk(1, venue.SideBuy, low), mk(2, venue.SideSell, low)
	var n uint64
	now := int64(1)
	apply := func(cmd []byte) {
		n++
		now++
		if err := m.Apply(at(cmd, now), sink); err != nil {
			t.Fatal(err)
		}
	}
	var tick [cmdSlotSize]byte
	swing := func() {
		apply(askHigh.stamp(n))
		apply(buyHigh.stamp(n)) // outside the band around low: interrupted
		now += length
		apply(encodeTick(tick[:], 0, 0)) // ends the auction: the two trade at high
		apply(bidLow.stamp(n))
		apply(sellLow.stamp(n)) // outside the band around high
		now += length
		apply(encodeTick(tick[:], 0, 0))
	}
	apply(bidLow.stamp(n))
	apply(sellLow.stamp(n)) // the first trade, at low (inside the band around the reference)
	swing()
	sink.kinds = [256]uint64{}
	if allocs := testing.AllocsPerRun(runs, swing); allocs != 0 {
		t.Errorf("volatility interruption: %v allocations per run", allocs)
	}
	if got := sink.kinds[venue.VolatilityInterruptionTemplateID&0xFF]; got < 2*runs {
		t.Errorf("%d interruptions in %d runs", got, runs)
	}
	if got := sink.kinds[venue.AuctionUncrossedTemplateID&0xFF]; got < 2*runs {
		t.Errorf("%d uncrosses in %d runs", got, runs)
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	if m.RestingOrders() != 0 {
		t.Fatalf("%d orders left", m.RestingOrders())
	}
}

// BenchmarkUncross measures the uncross of an opening call holding n
// orders: n/2 buys over 100 prices from the reference up and n/2 sells over
// 100 prices from the reference down, each of 1, so that every order
// trades, at the reference price. An iteration is the
// SetTradingStatus Open that uncrosses (n/2 trades, n fills); entering the
// orders and the EndOfDay that forgets them are not timed.
func BenchmarkUncross(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("orders=%d", n), func(b *testing.B) {
			const ref = workloadRefTicks
			m, err := NewMatcher(Config{OrdersMax: n + 16, ClOrdIDsMax: n + 16, SessionsMax: 4,
				Instruments: []InstrumentConfig{{ID: 1, Symbol: "U", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 100,
					RefPriceTicks: ref, BandPercent: 10}}})
			if err != nil {
				b.Fatal(err)
			}
			sink := &ringSink{}
			var buys, sells []*stampedCmd
			for k := int64(0); k < 100; k++ {
				buys = append(buys, newStampedOrder(orderArgs{session: 1, side: venue.SideBuy, ordType: venue.OrdTypeLimit,
					instrument: 1, px: ref + k, qty: 1}))
				sells = append(sells, newStampedOrder(orderArgs{session: 2, side: venue.SideSell, ordType: venue.OrdTypeLimit,
					instrument: 1, px: ref - k, qty: 1}))
			}
			var buf [cmdSlotSize]byte
			var id uint64
			apply := func(cmd []byte) {
				if err := m.Apply(cmd, sink); err != nil {
					b.Fatal(err)
				}
			}
			trades := m.Counters().LastTradeID
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				apply(encodeEndOfDay(buf[:], 0, 0))
				apply(encodeTradingStatus(buf[:], 0, 0, 1, venue.TradingStatusOpeningCall))
				for i := 0; i < n/2; i++ {
					id++
					apply(buys[i%100].stamp(id))
					id++
					apply(sells[i%100].stamp(id))
				}
				b.StartTimer()
				apply(encodeTradingStatus(buf[:], 0, 0, 1, venue.TradingStatusOpen))
			}
			b.StopTimer()
			if got := m.Counters().LastTradeID - trades; got != uint64(b.N*n/2) || m.RestingOrders() != 0 {
				b.Fatalf("%d trades in %d uncrosses of %d orders, %d orders left", got, b.N, n, m.RestingOrders())
			}
		})
	}
}
