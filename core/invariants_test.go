package core

import (
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestCheckInvariantsCatchesCorruption breaks the state in each way the
// invariants describe and expects CheckInvariants to notice: a check that
// never fails would prove nothing in the other tests.
func TestCheckInvariantsCatchesCorruption(t *testing.T) {
	corruptions := map[string]func(m *Matcher){
		"level quantity": func(m *Matcher) {
			bs := &m.instruments[0].sides[0]
			bs.levels[bs.best].qty++
		},
		"order leaves": func(m *Matcher) {
			bs := &m.instruments[0].sides[1]
			m.pool.orders[bs.levels[bs.best].head].leavesQty++
		},
		"crossed book": func(m *Matcher) {
			// Move the best bid up to the best ask's price, bypassing matching.
			in := &m.instruments[0]
			bids := &in.sides[0]
			oi := bids.levels[bids.best].head
			o := &m.pool.orders[oi]
			bids.unlink(m.pool.orders, bids.best, oi)
			o.priceTicks, _ = in.bestPrice(1)
			bids.pushBack(m.pool.orders, in.levelIndex(o.priceTicks), oi)
		},
		"bitmap": func(m *Matcher) {
			m.instruments[0].sides[0].bitmap.clear(m.instruments[0].sides[0].best)
		},
		"best level": func(m *Matcher) { m.instruments[0].sides[1].best++ },
		"pool count": func(m *Matcher) { m.pool.inUse++ },
		"ledger":     func(m *Matcher) { m.qty.filledQty++ },
		"session list": func(m *Matcher) {
			m.sessions[1].count++
		},
		"gtd heap": func(m *Matcher) { m.gtd.items = m.gtd.items[:0] },
		"expired gtd still live": func(m *Matcher) {
			m.nowNs = 1 << 60
		},
		"clordid index": func(m *Matcher) {
			clear(m.index.byClOrdID)
		},
	}
	for name, corrupt := range corruptions {
		m := invariantsFixture(t)
		if err := m.CheckInvariants(); err != nil {
			t.Fatalf("fixture already broken: %v", err)
		}
		corrupt(m)
		if err := m.CheckInvariants(); err == nil {
			t.Errorf("%s: corruption not detected", name)
		}
	}
}

// invariantsFixture is a small book with bids, asks, a partial fill and a
// GTD order.
func invariantsFixture(t *testing.T) *Matcher {
	cfg := Config{OrdersMax: 16, ClOrdIDsMax: 64, SessionsMax: 4, Instruments: []InstrumentConfig{
		{ID: 1, Symbol: "A", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 100, RefPriceTicks: 1000, BandPercent: 10}}}
	m, err := NewMatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf [cmdSlotSize]byte
	sink := NewBufferSink(8)
	orders := []newOrderArgs{
		{session: 1, side: venue.SideBuy, px: 990, qty: 10, clOrdID: "b1"},
		{session: 1, side: venue.SideBuy, px: 995, qty: 10, clOrdID: "b2", tif: venue.TimeInForceGTD, expireNs: 5000},
		{session: 2, side: venue.SideSell, px: 1005, qty: 10, clOrdID: "s1"},
		{session: 2, side: venue.SideSell, px: 995, qty: 4, clOrdID: "s2"},
	}
	for i, a := range orders {
		a.seq, a.ts, a.instrument, a.ordType = uint64(i+1), 100, 1, venue.OrdTypeLimit
		if err := m.Apply(encodeNewOrder(buf[:], &a), sink); err != nil {
			t.Fatal(err)
		}
	}
	return m
}
