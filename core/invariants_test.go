package core

import (
	"strconv"
	"strings"
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
	orders := []orderArgs{
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

// TestInvariantScheduleSpacesChecks drives the check that builds with the
// invariants tag run after each command (checkAfterApply; the test calls it
// itself in other builds): a small state is checked after every command, a
// large one after every units/invariantUnitsPerCommand+1 commands, a broken
// state is caught at the next scheduled check and not before, and the panic
// names the last clean command and the one that found the break.
func TestInvariantScheduleSpacesChecks(t *testing.T) {
	small, large := invariantsFixture(t), newWorkload(t, 10).m
	if small.invariantUnits() > invariantUnitsPerCommand {
		t.Fatalf("the fixture's state (%d units) is not small", small.invariantUnits())
	}
	if large.invariantUnits() <= 2*invariantUnitsPerCommand {
		t.Fatalf("the workload's state (%d units) is too small to space the checks", large.invariantUnits())
	}
	for _, tc := range []struct {
		name  string
		m     *Matcher
		every int
	}{
		{"small state", small, 1},
		{"large state", large, large.invariantUnits()/invariantUnitsPerCommand + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			var buf [cmdSlotSize]byte
			sink := NewBufferSink(8)
			seq := uint64(1_000)
			// tick applies a Tick (no new record, no level: the units stay)
			// and runs the check as an invariants build would; it returns
			// the panic's message, if any.
			tick := func() (msg string) {
				defer func() {
					if r := recover(); r != nil {
						msg = r.(string)
					}
				}()
				seq++
				if err := m.Apply(encodeTick(buf[:], seq, 1), sink); err != nil {
					t.Fatal(err)
				}
				if !invariantsEnabled {
					m.checkAfterApply(venue.TickTemplateID)
				}
				return ""
			}
			m.invariantsDue = invariantSchedule{}
			if msg := tick(); msg != "" { // the first command is checked at once
				t.Fatalf("clean state: %s", msg)
			}
			clean := seq
			m.qty.filledQty++ // quantity is no longer conserved
			for i := 1; i < tc.every; i++ {
				if msg := tick(); msg != "" {
					t.Fatalf("checked after %d commands, want every %d: %s", i, tc.every, msg)
				}
			}
			msg := tick()
			if msg == "" {
				t.Fatalf("the break was not caught at command %d after the last check", tc.every)
			}
			for _, want := range []string{"after seq " + strconv.FormatUint(clean, 10),
				"at or before seq " + strconv.FormatUint(seq, 10), "quantity not conserved"} {
				if !strings.Contains(msg, want) {
					t.Errorf("panic %q lacks %q", msg, want)
				}
			}
		})
	}
}
