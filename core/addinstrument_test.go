package core

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

func addFixture(t *testing.T, instrumentsMax int) *Matcher {
	t.Helper()
	m, err := NewMatcher(Config{OrdersMax: 16, ClOrdIDsMax: 64, SessionsMax: 4, InstrumentsMax: instrumentsMax,
		Instruments: []InstrumentConfig{{ID: 1, Symbol: "A", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 100, RefPriceTicks: 1000, BandPercent: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newAdded() AddedInstrument {
	return AddedInstrument{ID: 7, Symbol: "NEWCO", Tick: decimal.Tick{Mantissa: 5, Scale: 2}, LotSize: 10, MinQty: 10,
		MaxQty: 1000, RefPriceTicks: 400, BandPercent: 20, Status: venue.TradingStatusOpen, Group: "late"}
}

// applyAdd applies an AddInstrument and returns its one InstrumentAdded event.
func applyAdd(t *testing.T, m *Matcher, seq uint64, a AddedInstrument) venue.InstrumentAdded {
	t.Helper()
	var buf [cmdSlotSize]byte
	if err := EncodeAddInstrument(buf[:], seq, 50, &a, "alice", "listing"); err != nil {
		t.Fatal(err)
	}
	sink := NewBufferSink(4)
	if err := m.Apply(buf[:], sink); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	if sink.Len() != 1 {
		t.Fatalf("%d events, want one InstrumentAdded", sink.Len())
	}
	var e venue.InstrumentAdded
	if err := e.WrapDecode(sink.Event(0), 0); err != nil {
		t.Fatal(err)
	}
	if e.CauseSeq() != seq || e.InstrumentID() != a.ID || !bytes.Equal(e.Operator(), []byte("alice")) {
		t.Fatalf("event %s does not answer the command", e.String())
	}
	return e
}

// TestAddInstrumentTrades lists an instrument, trades it, and checks that a
// snapshot restores it with its book into a matcher that only has the
// configured instruments, writing the same bytes again.
func TestAddInstrumentTrades(t *testing.T) {
	m := addFixture(t, 4)
	e := applyAdd(t, m, 1, newAdded())
	if e.Reason() != venue.RejectReasonNone || e.BandLowTicks() != 320 || e.BandHighTicks() != 480 ||
		string(e.Symbol()) != "NEWCO" || string(e.Group()) != "late" || e.TickMantissa() != 5 || e.TickScale() != 2 {
		t.Fatalf("event %s", e.String())
	}
	var buf [cmdSlotSize]byte
	sink := NewBufferSink(16)
	for i, a := range []orderArgs{
		{session: 1, side: venue.SideBuy, px: 400, qty: 30, clOrdID: "b1"},
		{session: 2, side: venue.SideSell, px: 400, qty: 10, clOrdID: "s1"},
		{session: 2, side: venue.SideSell, px: 400, qty: 5, clOrdID: "s2"}, // not a lot multiple
	} {
		a.seq, a.ts, a.instrument, a.ordType = uint64(i+2), 100, 7, venue.OrdTypeLimit
		if err := m.Apply(encodeNewOrder(buf[:], &a), sink); err != nil {
			t.Fatal(err)
		}
	}
	var fills, rejects int
	for i := range sink.Len() {
		switch id, _ := venue.TemplateIDOf(sink.Event(i), 0); id {
		case venue.FillTemplateID:
			fills++
		case venue.OrderRejectedTemplateID:
			var r venue.OrderRejected
			_ = r.WrapDecode(sink.Event(i), 0)
			if r.Reason() != venue.RejectReasonQtyNotLotMultiple {
				t.Fatalf("reject %s", r.String())
			}
			rejects++
		}
	}
	if fills != 2 || rejects != 1 {
		t.Fatalf("%d fills and %d rejects, want 2 and 1", fills, rejects)
	}
	snap := snapshotOf(t, m)
	r := addFixture(t, 4)
	if err := r.ReadSnapshot(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if got := r.AddedInstruments(); len(got) != 1 || got[0] != newAdded() {
		t.Fatalf("restored added instruments %+v", got)
	}
	if !bytes.Equal(snap, snapshotOf(t, r)) {
		t.Fatal("a restored matcher writes a different snapshot")
	}
	if low, high, ok := r.Band(7); !ok || low != 320 || high != 480 {
		t.Fatalf("restored band %d-%d %v", low, high, ok)
	}
	// The restored book still holds the buy's 20 left.
	if err := r.ReadSnapshot(bytes.NewReader(snap[:len(snap)-1])); err == nil {
		t.Fatal("a truncated snapshot was read")
	}
	if len(r.AddedInstruments()) != 0 {
		t.Fatal("a failed read left an added instrument behind")
	}
	// A matcher with room for fewer instruments refuses the snapshot.
	if err := addFixture(t, 1).ReadSnapshot(bytes.NewReader(snap)); err == nil {
		t.Fatal("a snapshot with more instruments than InstrumentsMax was read")
	}
}

// TestAddInstrumentRefusals: each bad request is answered with its reason
// and changes nothing (the snapshot is byte-identical).
func TestAddInstrumentRefusals(t *testing.T) {
	m := addFixture(t, 3)
	applyAdd(t, m, 1, newAdded())
	with := func(f func(a *AddedInstrument)) AddedInstrument {
		a := newAdded()
		a.ID, a.Symbol = 8, "OTHER"
		f(&a)
		return a
	}
	cases := []struct {
		name string
		a    AddedInstrument
		want venue.RejectReason
	}{
		{"id in use (configured)", with(func(a *AddedInstrument) { a.ID = 1 }), venue.RejectReasonDuplicateInstrument},
		{"id in use (added)", with(func(a *AddedInstrument) { a.ID = 7 }), venue.RejectReasonDuplicateInstrument},
		{"symbol in use", with(func(a *AddedInstrument) { a.Symbol = "A" }), venue.RejectReasonDuplicateInstrument},
		{"id 0", with(func(a *AddedInstrument) { a.ID = 0 }), venue.RejectReasonInvalidInstrument},
		{"empty symbol", with(func(a *AddedInstrument) { a.Symbol = "" }), venue.RejectReasonInvalidInstrument},
		{"zero tick", with(func(a *AddedInstrument) { a.Tick.Mantissa = 0 }), venue.RejectReasonInvalidInstrument},
		{"zero lot", with(func(a *AddedInstrument) { a.LotSize = 0 }), venue.RejectReasonInvalidInstrument},
		{"max below min", with(func(a *AddedInstrument) { a.MaxQty = 5 }), venue.RejectReasonInvalidInstrument},
		{"band 100%", with(func(a *AddedInstrument) { a.BandPercent = 100 }), venue.RejectReasonInvalidInstrument},
		{"no reference price", with(func(a *AddedInstrument) { a.RefPriceTicks = 0 }), venue.RejectReasonInvalidInstrument},
		{"band too wide", with(func(a *AddedInstrument) { a.RefPriceTicks = 1 << 40 }), venue.RejectReasonInvalidInstrument},
		{"bad status", with(func(a *AddedInstrument) { a.Status = 9 }), venue.RejectReasonInvalidInstrument},
	}
	for i, c := range cases {
		before := snapshotOf(t, m)
		if e := applyAdd(t, m, uint64(10+i), c.a); e.Reason() != c.want {
			t.Errorf("%s: reason %s, want %s", c.name, e.Reason(), c.want)
		}
		if !bytes.Equal(before, snapshotOf(t, m)) {
			t.Errorf("%s: the refused command changed the state", c.name)
		}
	}
	// The table holds 3: one more fits, then it is full.
	if e := applyAdd(t, m, 40, with(func(*AddedInstrument) {})); e.Reason() != venue.RejectReasonNone {
		t.Fatalf("third instrument: %s", e.Reason())
	}
	full := with(func(a *AddedInstrument) { a.ID, a.Symbol = 9, "NINE" })
	if e := applyAdd(t, m, 41, full); e.Reason() != venue.RejectReasonCapacityExceeded {
		t.Fatalf("past InstrumentsMax: %s", e.Reason())
	}
	if _, err := NewMatcher(Config{OrdersMax: 1, ClOrdIDsMax: 1, SessionsMax: 1, InstrumentsMax: 0, Instruments: []InstrumentConfig{
		{ID: 1, Symbol: "A", TickSize: "1", LotSize: 1, MinQty: 1, MaxQty: 1, RefPriceTicks: 10, BandPercent: 10},
		{ID: 2, Symbol: "B", TickSize: "1", LotSize: 1, MinQty: 1, MaxQty: 1, RefPriceTicks: 10, BandPercent: 10}},
		LevelsPerSideMax: 0}); err != nil {
		t.Fatalf("InstrumentsMax 0 means the configured count: %v", err)
	}
	if _, err := NewMatcher(Config{OrdersMax: 1, ClOrdIDsMax: 1, SessionsMax: 1, InstrumentsMax: 1, Instruments: []InstrumentConfig{
		{ID: 1, Symbol: "A", TickSize: "1", LotSize: 1, MinQty: 1, MaxQty: 1, RefPriceTicks: 10, BandPercent: 10},
		{ID: 2, Symbol: "B", TickSize: "1", LotSize: 1, MinQty: 1, MaxQty: 1, RefPriceTicks: 10, BandPercent: 10}}}); err == nil {
		t.Fatal("InstrumentsMax below the configured count was accepted")
	}
}

// TestAddedInstrumentOrdersDoNotAllocate: the commands on an added
// instrument stay allocation-free.
func TestAddedInstrumentOrdersDoNotAllocate(t *testing.T) {
	m := addFixture(t, 2)
	applyAdd(t, m, 1, newAdded())
	seq := uint64(1)
	if allocs := addedOrderAllocs(t, m, &seq, 1, 200); allocs != 0 {
		t.Fatalf("%.1f allocations per order on an added instrument", allocs)
	}
}

// addedOrderAllocs is the allocations per IOC buy of session on the added
// instrument (7), applied runs times with seqs after *seq.
func addedOrderAllocs(t *testing.T, m *Matcher, seq *uint64, session uint16, runs int) float64 {
	t.Helper()
	var buf [cmdSlotSize]byte
	sink := NewBufferSink(16)
	return testing.AllocsPerRun(runs, func() {
		*seq++
		a := orderArgs{seq: *seq, ts: 100, session: session, side: venue.SideBuy, ordType: venue.OrdTypeLimit, instrument: 7,
			px: 400, qty: 10, tif: venue.TimeInForceIOC, clOrdID: "x"}
		sink.Reset()
		if err := m.Apply(encodeNewOrder(buf[:], &a), sink); err != nil {
			t.Fatal(err)
		}
	})
}

// TestAddInstrumentWithRisk: with risk limits on, an added instrument gets
// each subject's limits in force (including one changed before it was
// added), takes a per-instrument limit at runtime, keeps positions, stays
// allocation-free, and its limits and figures survive a snapshot into a
// matcher whose InstrumentsMax differs.
func TestAddInstrumentWithRisk(t *testing.T) {
	riskFixture := func(instrumentsMax int) *Matcher {
		m, err := NewMatcher(Config{OrdersMax: 16, ClOrdIDsMax: 1024, SessionsMax: 4, InstrumentsMax: instrumentsMax,
			Instruments: []InstrumentConfig{{ID: 1, Symbol: "A", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 100, RefPriceTicks: 1000, BandPercent: 10}},
			Risk:        &RiskConfig{Sessions: RiskLimits{MaxOrderQty: 500}}})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := riskFixture(3)
	var buf [cmdSlotSize]byte
	sink := NewBufferSink(16)
	seq := uint64(0)
	apply := func(cmd []byte) {
		t.Helper()
		sink.Reset()
		if err := m.Apply(cmd, sink); err != nil {
			t.Fatal(err)
		}
		if err := m.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
	}
	setLimit := func(session uint16, limit venue.RiskLimit, instrument uint32, value int64) venue.RiskResult {
		t.Helper()
		seq++
		apply(encodeRiskSetLimit(buf[:], seq, 10, session, venue.RiskScopeSession, "", limit, instrument, value))
		var r venue.RiskControlResult
		_ = r.WrapDecode(sink.Event(0), 0)
		return r.Result()
	}
	// order returns the reject reason of a limit order on the added instrument (None: accepted).
	order := func(session uint16, side venue.Side, qty int64) venue.RejectReason {
		t.Helper()
		seq++
		a := orderArgs{seq: seq, ts: 100, session: session, side: side, ordType: venue.OrdTypeLimit, instrument: 7,
			px: 400, qty: qty, clOrdID: fmt.Sprintf("o%d", seq)}
		apply(encodeNewOrder(buf[:], &a))
		for i := range sink.Len() {
			if id, _ := venue.TemplateIDOf(sink.Event(i), 0); id == venue.OrderRejectedTemplateID {
				var r venue.OrderRejected
				_ = r.WrapDecode(sink.Event(i), 0)
				return r.Reason()
			}
		}
		return venue.RejectReasonNone
	}
	if r := setLimit(1, venue.RiskLimitMaxOrderQty, 0, 200); r != venue.RiskResultApplied {
		t.Fatalf("session limit before the add: %s", r)
	}
	if r := setLimit(2, venue.RiskLimitMaxPosition, 7, 100); r != venue.RiskResultUnknownInstrument {
		t.Fatalf("limit on an instrument not yet listed: %s, want UnknownInstrument", r)
	}
	seq++
	if e := applyAdd(t, m, seq, newAdded()); e.Reason() != venue.RejectReasonNone {
		t.Fatalf("add with risk on: %s", e.Reason())
	}
	if r := order(1, venue.SideBuy, 300); r != venue.RejectReasonRiskLimitExceeded {
		t.Fatalf("session 1 over its changed order-size limit: %s", r)
	}
	if r := order(3, venue.SideBuy, 600); r != venue.RejectReasonRiskLimitExceeded {
		t.Fatalf("session 3 over the configured order-size limit: %s", r)
	}
	if r := setLimit(2, venue.RiskLimitMaxPosition, 7, 100); r != venue.RiskResultApplied {
		t.Fatalf("per-instrument limit on the added instrument: %s", r)
	}
	if r := order(2, venue.SideBuy, 200); r != venue.RejectReasonRiskLimitExceeded {
		t.Fatalf("session 2 over its position limit on the added instrument: %s", r)
	}
	if r := order(2, venue.SideBuy, 100); r != venue.RejectReasonNone {
		t.Fatalf("session 2 within its limit: %s", r)
	}
	if r := order(3, venue.SideSell, 100); r != venue.RejectReasonNone {
		t.Fatalf("session 3's sell: %s", r)
	}
	if c := m.risk.cell(2, 1); c.position != 100 || c.maxPosition != 100 || c.maxOrderQty != 500 {
		t.Fatalf("session 2's cell: %+v", *c)
	}
	if r := order(2, venue.SideBuy, 10); r != venue.RejectReasonRiskLimitExceeded {
		t.Fatalf("session 2 at its position limit: %s", r)
	}
	if allocs := addedOrderAllocs(t, m, &seq, 3, 100); allocs != 0 && !invariantsEnabled { // checkRiskInvariants (invariants builds only) allocates
		t.Fatalf("%.1f allocations per order on an added instrument with risk", allocs)
	}
	snap := snapshotOf(t, m)
	for _, max := range []int{2, 5} {
		r := riskFixture(max)
		if err := r.ReadSnapshot(bytes.NewReader(snap)); err != nil {
			t.Fatalf("InstrumentsMax %d: %v", max, err)
		}
		if c := r.risk.cell(2, 1); c.position != 100 || c.maxPosition != 100 || c.overrides != riskBit(venue.RiskLimitMaxPosition) {
			t.Fatalf("InstrumentsMax %d: restored cell %+v", max, *c)
		}
		if c := r.risk.cell(1, uint16(max-1)); max > 2 && c.maxOrderQty != 200 {
			t.Fatalf("InstrumentsMax %d: unlisted cell %+v, want session 1's limits", max, *c)
		}
		if !bytes.Equal(snap, snapshotOf(t, r)) {
			t.Fatalf("InstrumentsMax %d: a restored matcher writes a different snapshot", max)
		}
	}
}
