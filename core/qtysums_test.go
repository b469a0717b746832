package core

import (
	"fmt"
	"math"
	"testing"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestQuantitySumsAtMaxQty fills a price level with OrdersMax orders of
// MaxQtyFor's largest MaxQty: the level's depth is their exact sum and a
// fill-or-kill finds it. One above the bound is refused by NewMatcher and
// AddInstrument: three orders of 4e18 at a one-tick band's only price, which
// the notional bound allows, wrapped the level's total negative, the book
// showed a negative depth and a fill-or-kill of one was killed.
func TestQuantitySumsAtMaxQty(t *testing.T) {
	const ordersMax, clOrdIDsMax = 4, 8
	qtyMax := MaxQtyFor(ordersMax, clOrdIDsMax)
	if want := int64(math.MaxInt64 / 13); qtyMax != want {
		t.Fatalf("MaxQtyFor(4, 8) = %d, want %d", qtyMax, want)
	}
	cfg := func(maxQty int64) Config {
		return Config{OrdersMax: ordersMax, ClOrdIDsMax: clOrdIDsMax, SessionsMax: 4, InstrumentsMax: 3, Instruments: []InstrumentConfig{
			{ID: 1, Symbol: "A", TickSize: "1", LotSize: 1, MinQty: 1, MaxQty: maxQty, RefPriceTicks: 1, BandPercent: 50}}}
	}
	for _, q := range []int64{qtyMax + 1, 4e18} {
		if _, err := NewMatcher(cfg(q)); err == nil {
			t.Errorf("MaxQty %d above %d taken", q, qtyMax)
		}
	}
	m := mustMatcher(t, cfg(qtyMax))
	for i, q := range []int64{qtyMax + 1, qtyMax} {
		a := AddedInstrument{ID: uint32(7 + i), Symbol: fmt.Sprint("NEW", i), Tick: decimal.Tick{Mantissa: 1}, LotSize: 1, MinQty: 1,
			MaxQty: q, RefPriceTicks: 1, BandPercent: 50, Status: venue.TradingStatusOpen}
		if want, r := []venue.RejectReason{venue.RejectReasonInvalidInstrument, venue.RejectReasonNone}[i], applyAdd(t, m, uint64(1+i), a).Reason(); r != want {
			t.Errorf("an added instrument of MaxQty %d: %s, want %s", q, r, want)
		}
	}
	var buf [cmdSlotSize]byte
	seq := uint64(10)
	send := func(side venue.Side, tif venue.TimeInForce, qty int64) *BufferSink {
		t.Helper()
		seq++
		sink := NewBufferSink(16)
		if err := m.Apply(encodeNewOrder(buf[:], &orderArgs{seq: seq, ts: 1, session: uint16(seq % 2), side: side, ordType: venue.OrdTypeLimit,
			tif: tif, instrument: 1, px: 1, qty: qty, clOrdID: fmt.Sprint("q", seq)}), sink); err != nil {
			t.Fatal(err)
		}
		if err := m.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		return sink
	}
	for i := 0; i < ordersMax; i++ {
		send(venue.SideSell, venue.TimeInForceDay, qtyMax)
	}
	if got := m.BookLevels(1, venue.SideSell, nil); len(got) != 1 || got[0].Qty != ordersMax*qtyMax || got[0].Orders != ordersMax {
		t.Fatalf("level of %d orders of %d: %+v", ordersMax, qtyMax, got)
	}
	sink := send(venue.SideBuy, venue.TimeInForceFOK, qtyMax)
	fills := 0
	for i := 0; i < sink.Len(); i++ {
		if id, _ := venue.TemplateIDOf(sink.Event(i), 0); id == venue.FillTemplateID {
			fills++
		}
	}
	if fills != 2 { // the aggressor's and the resting order's
		t.Fatalf("a fill-or-kill of %d against a level of %d: %d fills", qtyMax, ordersMax*qtyMax, fills)
	}
	if got := m.BookLevels(1, venue.SideSell, nil); len(got) != 1 || got[0].Qty != (ordersMax-1)*qtyMax {
		t.Fatalf("level after the fill: %+v", got)
	}
}
