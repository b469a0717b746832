package core

import (
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestApplyDoesNotAllocate asserts 0 allocations per command for every
// command type and outcome in steady state: each case is a short sequence
// that leaves the book as it found it, run many times.
func TestApplyDoesNotAllocate(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	w := newWorkload(t, 10)
	const ref = workloadRefTicks
	order := func(session uint16, side venue.Side, typ venue.OrdType, tif venue.TimeInForce, px, qty int64) *stampedCmd {
		return newStampedOrder(orderArgs{session: session, side: side, ordType: typ, instrument: workloadInstrument,
			tif: tif, px: px, qty: qty})
	}
	passive := order(1, venue.SideBuy, venue.OrdTypeLimit, venue.TimeInForceDay, ref-1, 5)
	cancel := newStampedCancel(orderRefArgs{session: 1, side: venue.SideBuy, instrument: workloadInstrument})
	take := order(2, venue.SideBuy, venue.OrdTypeLimit, venue.TimeInForceDay, ref+1, workloadOrderQty)
	refill := order(1, venue.SideSell, venue.OrdTypeLimit, venue.TimeInForceGTC, ref+1, workloadOrderQty)
	ioc := order(2, venue.SideBuy, venue.OrdTypeLimit, venue.TimeInForceIOC, ref, 5) // does not cross
	fokKill := order(2, venue.SideBuy, venue.OrdTypeLimit, venue.TimeInForceFOK, ref+1, 1000)
	market := order(2, venue.SideBuy, venue.OrdTypeMarket, venue.TimeInForceDay, 0, workloadOrderQty)
	day3 := order(3, venue.SideBuy, venue.OrdTypeLimit, venue.TimeInForceDay, ref-3, 1)
	reject := order(1, venue.SideBuy, venue.OrdTypeLimit, venue.TimeInForceDay, 1, 5) // out of band
	gtd := newStampedOrder(orderArgs{session: 3, side: venue.SideBuy, ordType: venue.OrdTypeLimit,
		instrument: workloadInstrument, tif: venue.TimeInForceGTD, px: ref - 2, qty: 1, expireNs: 10})
	// A sell stop below the last trade (ref+1, from "fill + refill"), a
	// sell that trades at ref-1 and elects it, and the bids it took put back.
	sellStop := newStampedOrder(orderArgs{session: 3, side: venue.SideSell, ordType: venue.OrdTypeStop,
		instrument: workloadInstrument, tif: venue.TimeInForceDay, stopPx: ref, qty: workloadOrderQty})
	hitBid := order(2, venue.SideSell, venue.OrdTypeLimit, venue.TimeInForceDay, ref-1, workloadOrderQty)
	refillBid := order(1, venue.SideBuy, venue.OrdTypeLimit, venue.TimeInForceGTC, ref-1, workloadOrderQty)
	buyStop := newStampedOrder(orderArgs{session: 1, side: venue.SideBuy, ordType: venue.OrdTypeStopLimit,
		instrument: workloadInstrument, tif: venue.TimeInForceDay, stopPx: ref + 5, px: ref + 6, qty: 5})
	// An iceberg inside the spread, taken in two slices by one buy.
	iceberg := newStampedOrder(orderArgs{session: 1, side: venue.SideSell, ordType: venue.OrdTypeLimit,
		instrument: workloadInstrument, px: ref, qty: 2 * workloadOrderQty, maxFloor: workloadOrderQty})
	takeIceberg := order(2, venue.SideBuy, venue.OrdTypeLimit, venue.TimeInForceIOC, ref, 2*workloadOrderQty)
	var buf, statusBuf, massBuf, discBuf, tsBuf, tickBuf, unknownCancelBuf [cmdSlotSize]byte
	replaceAway := &stampedCmd{}
	replaceBack := &stampedCmd{}
	resting := w.m.RestingOrders()

	cases := []struct {
		name string
		run  func()
		want []uint16 // event templates each run must produce
	}{
		{"new passive + cancel", func() {
			id := w.id(nil)
			w.apply(t, passive.stamp(id))
			w.apply(t, cancel.stamp(id))
		}, []uint16{venue.OrderAcceptedTemplateID, venue.OrderCancelledTemplateID}},
		{"fill + refill", func() {
			w.apply(t, take.stamp(w.id(nil)))
			w.apply(t, refill.stamp(w.id(nil)))
		}, []uint16{venue.FillTemplateID}},
		{"ioc cancelled", func() { w.apply(t, ioc.stamp(w.id(nil))) }, []uint16{venue.OrderCancelledTemplateID}},
		{"fok killed", func() { w.apply(t, fokKill.stamp(w.id(nil))) }, []uint16{venue.OrderCancelledTemplateID}},
		{"market + refill", func() {
			w.apply(t, market.stamp(w.id(nil)))
			w.apply(t, refill.stamp(w.id(nil)))
		}, []uint16{venue.FillTemplateID}},
		{"stop parked + cancel", func() {
			id := w.id(nil)
			w.apply(t, buyStop.stamp(id))
			w.apply(t, cancel.stamp(id))
		}, []uint16{venue.OrderAcceptedTemplateID, venue.OrderCancelledTemplateID}},
		{"stop elected + refill", func() {
			w.apply(t, sellStop.stamp(w.id(nil)))
			w.apply(t, hitBid.stamp(w.id(nil)))
			w.apply(t, refillBid.stamp(w.id(nil)))
			w.apply(t, refillBid.stamp(w.id(nil)))
			w.apply(t, take.stamp(w.id(nil)))
			w.apply(t, refill.stamp(w.id(nil)))
		}, []uint16{venue.OrderTriggeredTemplateID, venue.FillTemplateID}},
		{"iceberg refilled", func() {
			w.apply(t, iceberg.stamp(w.id(nil)))
			w.apply(t, takeIceberg.stamp(w.id(nil)))
		}, []uint16{venue.OrderRefilledTemplateID, venue.FillTemplateID}},
		{"new rejected", func() { w.apply(t, reject.stamp(w.id(nil))) }, []uint16{venue.OrderRejectedTemplateID}},
		{"replace away and back", func() {
			id := w.id(nil)
			w.apply(t, passive.stamp(id))
			away, back := w.id(nil), w.id(nil)
			w.apply(t, encodeReplaceStamped(replaceAway, id, away, ref-5))
			w.apply(t, encodeReplaceStamped(replaceBack, away, back, ref-1))
			w.apply(t, cancel.stamp(back))
		}, []uint16{venue.OrderReplacedTemplateID}},
		{"status", func() {
			w.apply(t, encodeStatus(statusBuf[:], &orderRefArgs{session: 1, orderID: 1}))
		}, []uint16{venue.OrderStatusTemplateID}},
		{"cancel rejected", func() {
			w.apply(t, encodeCancel(unknownCancelBuf[:], &orderRefArgs{session: 1, orderID: 1 << 40}))
		}, []uint16{venue.CancelRejectedTemplateID}},
		{"mass cancel", func() {
			w.apply(t, day3.stamp(w.id(nil)))
			w.apply(t, encodeMassCancel(massBuf[:], &massCancelArgs{session: 3, filterSession: 3}))
		}, []uint16{venue.MassCancelReportTemplateID, venue.OrderCancelledTemplateID}},
		{"disconnect", func() {
			w.apply(t, day3.stamp(w.id(nil)))
			w.apply(t, encodeDisconnect(discBuf[:], 0, 0, 3, true))
		}, []uint16{venue.OrderCancelledTemplateID}},
		{"trading status", func() {
			w.apply(t, encodeTradingStatus(tsBuf[:], 0, 0, workloadInstrument, venue.TradingStatusOpen))
		}, []uint16{venue.TradingStatusChangedTemplateID}},
		{"gtd expiry on tick", func() {
			w.apply(t, encodeTick(tickBuf[:], 0, 5))
			w.apply(t, gtd.stamp(w.id(nil)))
			w.apply(t, encodeTick(tickBuf[:], 0, 11))
		}, []uint16{venue.OrderCancelledTemplateID}},
		{"end of day", func() { w.apply(t, encodeEndOfDay(buf[:], 0, 0)) }, nil},
		{"snapshot command", func() { w.apply(t, encodeSnapshotCmd(buf[:], 0, 0, 1)) }, nil},
		{"undecodable", func() {
			if w.m.Apply(buf[:3], w.sink) == nil {
				t.Fatal("3 bytes applied")
			}
		}, nil},
	}
	for _, c := range cases {
		c.run() // warm up: first use of a table slot or a level
		w.sink.kinds = [256]uint64{}
		const runs = 200
		if allocs := testing.AllocsPerRun(runs, c.run); allocs != 0 {
			t.Errorf("%s: %v allocations per run", c.name, allocs)
		}
		for _, tid := range c.want {
			if got := w.sink.kinds[tid&0xFF]; got < runs {
				t.Errorf("%s: %d %s events in %d runs", c.name, got, venue.MessageName(tid), runs)
			}
		}
		if w.m.RestingOrders() != resting {
			t.Fatalf("%s changed the book: %d orders, %d before", c.name, w.m.RestingOrders(), resting)
		}
	}
	if err := w.m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// encodeReplaceStamped encodes, into c, a replace of the order stamped `orig`
// to price px under the new ClOrdID stamped `id`, without allocating.
func encodeReplaceStamped(c *stampedCmd, orig, id uint64, px int64) []byte {
	var r venue.ReplaceOrder
	mustEncode(r.WrapEncode(c.buf[:], 0))
	r.SetSessionIdx(1)
	r.SetSide(venue.SideBuy)
	r.SetOrdType(venue.OrdTypeLimit)
	r.SetInstrumentID(workloadInstrument)
	r.SetPriceTicks(px)
	r.SetQty(5)
	var ids [2][workloadIDWidth]byte
	for k, n := range []uint64{orig, id} {
		for i := workloadIDWidth - 1; i >= 0; i-- {
			ids[k][i] = "0123456789abcdef"[n&15]
			n >>= 4
		}
	}
	mustEncode(r.SetOrigClOrdID(ids[0][:]))
	mustEncode(r.SetClOrdID(ids[1][:]))
	return c.buf[:r.EncodedLength()]
}
