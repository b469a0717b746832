package console

import (
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

func fill(t testing.TB, instrument uint32, aggressor bool, side venue.Side, px, qty, tsNs int64) []byte {
	t.Helper()
	return cmdtest.Encode(t, make([]byte, 256), func(e *venue.Fill) {
		e.SetInstrumentID(instrument)
		e.SetSide(side)
		e.SetLastPriceTicks(px)
		e.SetLastQty(qty)
		e.SetTimestampNs(tsNs)
		e.SetAggressor(venue.BooleanTypeFalse)
		if aggressor {
			e.SetAggressor(venue.BooleanTypeTrue)
		}
	})
}

// TestTapeKeepsLastTrades: one trade per aggressor fill, newest first,
// bounded by TradesKept and ChartPointsMax; unknown instruments ignored;
// applying an event does not allocate.
func TestTapeKeepsLastTrades(t *testing.T) {
	tp := NewTape([]uint32{1, 2}, nil)
	n := int64(ChartPointsMax + 10)
	for i := int64(0); i < n; i++ {
		tp.apply(fill(t, 1, true, venue.SideBuy, 1000+i, 1, i))
		tp.apply(fill(t, 1, false, venue.SideSell, 1000+i, 1, i)) // the resting side: no trade
	}
	tp.apply(fill(t, 9, true, venue.SideBuy, 5, 5, 0)) // unknown instrument
	c, ok := tp.instrument(1)
	if !ok || c.TradesOfDay != n || len(c.Trades) != TradesKept || len(c.Chart) != ChartPointsMax {
		t.Fatalf("tape: %v %d trades, %d kept, %d chart points", ok, c.TradesOfDay, len(c.Trades), len(c.Chart))
	}
	if c.Trades[0].PriceTicks != 1000+n-1 || c.Chart[0].priceTicks != 1000+n-ChartPointsMax ||
		c.Chart[len(c.Chart)-1].priceTicks != 1000+n-1 {
		t.Fatalf("order: newest trade %d, chart from %d to %d", c.Trades[0].PriceTicks, c.Chart[0].priceTicks, c.Chart[len(c.Chart)-1].priceTicks)
	}
	if c.FirstTicks != 1000 || c.LowTicks != 1000 || c.HighTicks != 1000+n-1 {
		t.Fatalf("first/low/high %d %d %d", c.FirstTicks, c.LowTicks, c.HighTicks)
	}
	if c2, _ := tp.instrument(2); c2.TradesOfDay != 0 || len(c2.Chart) != 0 {
		t.Fatalf("instrument 2 has trades: %+v", c2)
	}
	if _, ok := tp.instrument(9); ok {
		t.Fatal("unknown instrument has a tape")
	}
	ev := fill(t, 1, true, venue.SideSell, 999, 2, 1)
	if a := testing.AllocsPerRun(100, func() { tp.apply(ev) }); a != 0 {
		t.Fatalf("apply allocates %v", a)
	}
}

func TestChangeFormatting(t *testing.T) {
	tick, err := decimal.ParseTick("0.01")
	if err != nil {
		t.Fatal(err)
	}
	in := config.Instrument{Tick: tick}
	for _, c := range []struct {
		last, ref int64
		change    string
		pct       string
		up        int
	}{
		{9900, 10000, "-1.00", "-1.00%", -1},
		{10050, 10000, "+0.50", "+0.50%", 1},
		{10000, 10000, "0.00", "0.00%", 0},
		{10001, 30000, "-199.99", "-66.66%", -1},
		{5, 0, "+0.05", "", 1},
	} {
		ch, pct, up := change(c.last, c.ref, in)
		if ch != c.change || pct != c.pct || up != c.up {
			t.Errorf("change(%d, %d) = %q %q %d, want %q %q %d", c.last, c.ref, ch, pct, up, c.change, c.pct, c.up)
		}
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{"/sessions": "/sessions", "": "/market", "//evil.example": "/market",
		"/\\evil": "/market", "https://evil.example/": "/market", "/": "/", "/\t/evil.example": "/market"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRejectRate(t *testing.T) {
	r := rateSampler{last: map[uint16]rateSample{}}
	t0 := time.Unix(100, 0)
	if got := r.rejectRate(1, 10, t0); got != 0 {
		t.Fatalf("first sample: %v", got)
	}
	if got := r.rejectRate(1, 30, t0.Add(2*time.Second)); got != 10 {
		t.Fatalf("20 rejects in 2s: %v", got)
	}
	if got := r.rejectRate(1, 99, t0.Add(2100*time.Millisecond)); got != 10 {
		t.Fatalf("too soon to measure: %v", got)
	}
	// The next viewer, 20 s later, after 80 rejects in one second long
	// gone: the old sample measures nothing now; the next update does.
	t1 := t0.Add(22100 * time.Millisecond)
	if got := r.rejectRate(1, 179, t1); got != 0 {
		t.Fatalf("a sample 20 s old: %v, want 0 until the next update", got)
	}
	if got := r.rejectRate(1, 184, t1.Add(500*time.Millisecond)); got != 10 {
		t.Fatalf("5 rejects in 0.5 s after it: %v", got)
	}
}

func TestOperatorTarget(t *testing.T) {
	bySession := map[uint16]string{0: "CLIENT1", 3: "CLIENT4"}
	byID := map[uint32]config.Instrument{1: {ID: 1, Symbol: "ACME", Tick: decimal.Tick{Mantissa: 5, Scale: 2}}}
	for _, c := range []struct {
		r    OperatorRecord
		want string
	}{
		// The status set: a halt, a resume and a close are one action.
		{OperatorRecord{Action: venue.OperatorActionTypeSetTradingStatus, Instrument: 1, Status: venue.TradingStatusHalted}, "ACME → Halted"},
		{OperatorRecord{Action: venue.OperatorActionTypeSetTradingStatus, Instrument: 1, Status: venue.TradingStatusOpen}, "ACME → Open"},
		{OperatorRecord{Action: venue.OperatorActionTypeSetTradingStatus, Status: venue.TradingStatusClosed}, "all → Closed"},
		{OperatorRecord{Action: venue.OperatorActionTypeSetTradingStatus, Instrument: 1, Unnoted: true}, "ACME, status unknown"},
		// The band set: its reference price as a price, of the instrument's tick.
		{OperatorRecord{Action: venue.OperatorActionTypeSetPriceBand, Instrument: 1, RefTicks: 2030, BandPercent: 10},
			"ACME → reference price 101.50, band 10%"},
		{OperatorRecord{Action: venue.OperatorActionTypeSetPriceBand, Instrument: 1, Unnoted: true}, "ACME, band unknown"},
		// An instrument the console does not know: no tick size to scale by.
		{OperatorRecord{Action: venue.OperatorActionTypeSetPriceBand, Instrument: 9, Reason: venue.RejectReasonUnknownInstrument,
			RefTicks: 2030, BandPercent: 10}, "instrument id 9 → reference price 2030 ticks, band 10%"},
		{OperatorRecord{Action: venue.OperatorActionTypeSessionLogout, Session: 3}, "CLIENT4"},
		{OperatorRecord{Action: venue.OperatorActionTypeMassCancel, Session: 0}, "session CLIENT1"},
		{OperatorRecord{Action: venue.OperatorActionTypeMassCancel, Session: ops.AnySession, Instrument: 1}, "ACME"},
		{OperatorRecord{Action: venue.OperatorActionTypeMassCancel, Session: ops.AnySession}, "all"},
		{OperatorRecord{Action: venue.OperatorActionTypeMassCancel, Session: ops.AnySession, Account: "FUND"}, "account FUND"},
		{OperatorRecord{Action: venue.OperatorActionTypeMassCancel, Session: 0, Instrument: 1, Account: "FUND"}, "session CLIENT1 ACME account FUND"},
		// An account filter the tape does not know (OperatorRecord.Unnoted) is said, not taken for none.
		{OperatorRecord{Action: venue.OperatorActionTypeMassCancel, Session: ops.AnySession, Unnoted: true}, "account filter unknown"},
		{OperatorRecord{Action: venue.OperatorActionTypeMassCancel, Session: 0, Instrument: 1, Unnoted: true},
			"session CLIENT1 ACME, account filter unknown"},
		{OperatorRecord{Action: ActionAddInstrument, Session: ops.AnySession, Instrument: 1}, "ACME"},
		// A refused listing's id may be another instrument's.
		{OperatorRecord{Action: ActionAddInstrument, Session: ops.AnySession, Instrument: 1, Reason: venue.RejectReasonDuplicateInstrument},
			"instrument id 1"},
	} {
		if got := target(c.r, bySession, byID); got != c.want {
			t.Errorf("%v: %q, want %q", c.r.Action, got, c.want)
		}
	}
}

// TestTapeCountsAnUncrossOnce: an uncross's trade is two fills, neither
// the aggressor; the buy side's counts once, with no aggressor side.
func TestTapeCountsAnUncrossOnce(t *testing.T) {
	tp := NewTape([]uint32{1}, nil)
	for _, side := range []venue.Side{venue.SideBuy, venue.SideSell} {
		ev := fill(t, 1, false, side, 1005, 30, 7)
		var e venue.Fill
		if err := e.WrapDecode(ev, 0); err != nil {
			t.Fatal(err)
		}
		e.SetAuction(venue.BooleanTypeTrue)
		tp.apply(ev)
	}
	tp.apply(fill(t, 1, false, venue.SideSell, 1006, 5, 8)) // a resting side's fill: not a trade
	got, _ := tp.instrument(1)
	if len(got.Trades) != 1 || got.Trades[0] != (Trade{TimeNs: 7, PriceTicks: 1005, Qty: 30}) || got.Volume != 30 {
		t.Fatalf("tape after an uncross: %+v, volume %d", got.Trades, got.Volume)
	}
}

// TestTapeTimeNamesOtherDates: the tape gives a trade's time of day when
// it is on the newest trade's date (UTC), its date too when it is not.
func TestTapeTimeNamesOtherDates(t *testing.T) {
	at := func(s string) int64 {
		tm, err := time.Parse("2006-01-02 15:04:05.000", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixNano()
	}
	newest := at("2026-12-07 00:00:01.250")
	for _, c := range []struct{ trade, want string }{
		{"2026-12-07 00:00:01.250", "00:00:01.250"},
		{"2026-12-07 00:00:00.000", "00:00:00.000"},
		{"2026-12-06 23:59:59.999", "2026-12-06 23:59:59.999"},
		{"2025-12-07 00:00:01.250", "2025-12-07 00:00:01.250"},
	} {
		if got := tapeTime(at(c.trade), newest); got != c.want {
			t.Errorf("trade at %s, newest at 2026-12-07 00:00:01.250: %q, want %q", c.trade, got, c.want)
		}
	}
}
