package core

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

type operatorArgs struct {
	seq        uint64
	ts         int64 // 0: 1 ns, before the fixture's GTD order expires
	action     venue.OperatorActionType
	status     venue.TradingStatus
	session    uint16
	instrument uint32
	account    string
	flags      venue.OperatorFlags
	// old writes the record an earlier build wrote: the block before flags
	// was appended (operatorCommandBlockBefore), flags none.
	old bool
}

func encodeOperator(buf []byte, a operatorArgs) []byte {
	var c venue.OperatorCommand
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, a.seq, cmp.Or(a.ts, 1))
	c.SetAction(a.action)
	c.SetStatus(a.status)
	c.SetFilterSessionIdx(a.session)
	c.SetInstrumentID(a.instrument)
	mustEncode(c.SetAccountString(a.account))
	mustEncode(c.SetOperatorString("alice"))
	mustEncode(c.SetReasonString("test"))
	if a.old {
		return asOldOperator(buf[:c.EncodedLength()])
	}
	c.SetFlags(a.flags)
	return buf[:c.EncodedLength()]
}

// asOldOperator makes an encoded OperatorCommand the record an earlier
// build wrote: the block before flags was appended.
func asOldOperator(cmd []byte) []byte {
	binary.LittleEndian.PutUint16(cmd, operatorCommandBlockBefore)
	return cmd[:venue.MessageHeaderSize+operatorCommandBlockBefore]
}

// encodeOperatorCancel encodes an operator's OperatorCancelOrder: by
// orderID, or by clOrdID in session.
func encodeOperatorCancel(buf []byte, seq uint64, ts int64, session uint16, orderID uint64, clOrdID string) []byte {
	var c venue.OperatorCancelOrder
	mustEncode(c.WrapEncode(buf, 0))
	c.SetSeq(seq)
	c.SetTimestampNs(cmp.Or(ts, 1))
	c.SetFilterSessionIdx(session)
	c.SetOrderID(orderID)
	mustEncode(c.SetClOrdIDString(clOrdID))
	mustEncode(c.SetOperatorString("alice"))
	mustEncode(c.SetReasonString("test"))
	return buf[:c.EncodedLength()]
}

// withBand sets the reference price and percent of an encoded
// OperatorCommand (a SetPriceBand's) and returns it.
func withBand(cmd []byte, ref, pct int64) []byte {
	var c venue.OperatorCommand
	mustEncode(c.WrapDecode(cmd, 0))
	c.SetRefPriceTicks(ref)
	c.SetBandPercent(pct)
	return cmd
}

// operatorResult applies an operator command and returns its result event,
// checking that it is the last event and names the operator.
func operatorResult(t *testing.T, m *Matcher, a operatorArgs) (venue.OperatorResult, int) {
	t.Helper()
	var buf [cmdSlotSize]byte
	sink := NewBufferSink(8)
	if err := m.Apply(encodeOperator(buf[:], a), sink); err != nil {
		t.Fatalf("%+v: Apply: %v", a, err)
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	var r venue.OperatorResult
	if sink.Len() == 0 {
		t.Fatalf("%+v: no event", a)
	}
	if err := r.WrapDecode(sink.Event(sink.Len()-1), 0); err != nil {
		t.Fatalf("%+v: last event is not an OperatorResult: %v", a, err)
	}
	if r.CauseSeq() != a.seq || r.Action() != a.action || !bytes.Equal(r.Operator(), []byte("alice")) {
		t.Fatalf("%+v: result cause %d action %s operator %q", a, r.CauseSeq(), r.Action(), r.Operator())
	}
	return r, sink.Len() - 1
}

func TestOperatorCommands(t *testing.T) {
	m := invariantsFixture(t) // instrument 1; sessions 1 and 2 have live orders
	refused := []struct {
		name string
		args operatorArgs
		want venue.RejectReason
	}{
		{"resume an open instrument", operatorArgs{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusOpen, instrument: 1}, venue.RejectReasonInvalidTransition},
		{"open all when all are open", operatorArgs{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusOpen}, venue.RejectReasonInvalidTransition},
		{"unknown instrument", operatorArgs{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusHalted, instrument: 9}, venue.RejectReasonUnknownInstrument},
		{"invalid status", operatorArgs{action: venue.OperatorActionTypeSetTradingStatus, status: 9, instrument: 1}, venue.RejectReasonInvalidTransition},
		{"cancel an unknown instrument", operatorArgs{action: venue.OperatorActionTypeMassCancel, session: 1, instrument: 9}, venue.RejectReasonUnknownInstrument},
		{"cancel an unknown session", operatorArgs{action: venue.OperatorActionTypeMassCancel, session: 4}, venue.RejectReasonUnknownSession},
		{"disable an unknown session", operatorArgs{action: venue.OperatorActionTypeSessionDisable, session: 4}, venue.RejectReasonUnknownSession},
		{"unknown action", operatorArgs{action: 99}, venue.RejectReasonUnsupportedOrderCharacteristic},
	}
	seq := uint64(100)
	// The snapshot holds the matcher's clock: move it to the commands' time first.
	var buf [cmdSlotSize]byte
	if err := m.Apply(encodeTick(buf[:], seq-1, 1), NewBufferSink(1)); err != nil {
		t.Fatal(err)
	}
	for _, c := range refused {
		before := snapshotOf(t, m)
		c.args.seq = seq
		seq++
		r, others := operatorResult(t, m, c.args)
		if r.Reason() != c.want || others != 0 {
			t.Errorf("%s: reason %s with %d other events, want %s and none", c.name, r.Reason(), others, c.want)
		}
		if after := snapshotOf(t, m); !bytes.Equal(before, after) {
			t.Errorf("%s: the state changed", c.name)
		}
	}
	// Halt, halt again (refused), cancel session 1's orders, close everything, EOD.
	r, n := operatorResult(t, m, operatorArgs{seq: seq, action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusHalted, instrument: 1})
	if r.Reason() != venue.RejectReasonNone || r.Count() != 1 || n != 1 {
		t.Fatalf("halt: %s count %d events %d", r.Reason(), r.Count(), n)
	}
	if st, _ := m.TradingStatus(1); st != venue.TradingStatusHalted {
		t.Fatalf("status %s after halt", st)
	}
	if r, _ := operatorResult(t, m, operatorArgs{seq: seq + 1, action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusHalted, instrument: 1}); r.Reason() != venue.RejectReasonInvalidTransition {
		t.Fatalf("halt twice: %s", r.Reason())
	}
	live := m.RestingOrders()
	r, n = operatorResult(t, m, operatorArgs{seq: seq + 2, action: venue.OperatorActionTypeMassCancel, session: 1})
	if r.Reason() != venue.RejectReasonNone || int(r.Count()) != n || n == 0 || m.RestingOrders() != live-n {
		t.Fatalf("cancel session 1: %s count %d events %d live %d → %d", r.Reason(), r.Count(), n, live, m.RestingOrders())
	}
	r, _ = operatorResult(t, m, operatorArgs{seq: seq + 3, action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusClosed})
	if r.Reason() != venue.RejectReasonNone || r.Count() != 1 {
		t.Fatalf("close all: %s count %d", r.Reason(), r.Count())
	}
	live = m.RestingOrders()
	r, n = operatorResult(t, m, operatorArgs{seq: seq + 4, action: venue.OperatorActionTypeEndOfDay})
	if r.Reason() != venue.RejectReasonNone || int(r.Count()) != n || m.RestingOrders() != live-n {
		t.Fatalf("end of day: %s count %d events %d", r.Reason(), r.Count(), n)
	}
	if r, _ := operatorResult(t, m, operatorArgs{seq: seq + 5, action: venue.OperatorActionTypeSessionDisable, session: 2}); r.Reason() != venue.RejectReasonNone {
		t.Fatalf("disable session 2: %s", r.Reason())
	}
	// A phase change (the schedule's) leaves a halted instrument halted.
	if r, _ := operatorResult(t, m, operatorArgs{seq: seq + 6, action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusHalted, instrument: 1}); r.Reason() != venue.RejectReasonNone {
		t.Fatalf("halt again: %s", r.Reason())
	}
	if r, _ := operatorResult(t, m, operatorArgs{seq: seq + 7, action: venue.OperatorActionTypeSetPhaseStatus, status: venue.TradingStatusOpeningCall, instrument: 1}); r.Reason() != venue.RejectReasonInstrumentHalted {
		t.Fatalf("phase change of a halted instrument: %s", r.Reason())
	}
	r, _ = operatorResult(t, m, operatorArgs{seq: seq + 8, action: venue.OperatorActionTypeSetPhaseStatus, status: venue.TradingStatusOpeningCall})
	if st, _ := m.TradingStatus(1); r.Reason() != venue.RejectReasonInvalidTransition || st != venue.TradingStatusHalted { // the only instrument
		t.Fatalf("phase change of every instrument: %s, the halted one %s", r.Reason(), st)
	}
}

func TestOperatorSetBand(t *testing.T) {
	m := invariantsFixture(t) // instrument 1: reference 1000 ticks, band 10%: [900, 1100]
	levels := func() string {
		return fmt.Sprint(m.BookLevels(1, venue.SideBuy, nil), m.BookLevels(1, venue.SideSell, nil))
	}
	book := levels()
	band := func(seq uint64, ref, pct int64) venue.OperatorResult { return setBand(t, m, seq, ref, pct) }
	for _, c := range []struct {
		ref, pct int64
		want     venue.RejectReason
	}{
		{1000, 20, venue.RejectReasonInvalidPriceBand}, // 401 ticks: wider than the 201 levels allocated
		{0, 5, venue.RejectReasonInvalidPriceBand},
		{1000, 100, venue.RejectReasonInvalidPriceBand},
		{1100, 5, venue.RejectReasonOrdersOutsideBand}, // [1045, 1155]: the bids would be below it
	} {
		if r := band(200, c.ref, c.pct); r.Reason() != c.want {
			t.Errorf("band %d ±%d%%: %s, want %s", c.ref, c.pct, r.Reason(), c.want)
		}
		if lo, hi, _ := m.Band(1); lo != 900 || hi != 1100 || levels() != book {
			t.Fatalf("refused band %d ±%d%% changed the band to [%d, %d] or the book", c.ref, c.pct, lo, hi)
		}
	}
	for i, c := range []struct{ ref, pct, lo, hi int64 }{{1000, 5, 950, 1050}, {1020, 5, 969, 1071}, {980, 8, 902, 1058}} {
		r := band(uint64(300+i), c.ref, c.pct)
		if lo, hi, _ := m.Band(1); r.Reason() != venue.RejectReasonNone || r.RefPriceTicks() != c.ref || lo != c.lo || hi != c.hi {
			t.Fatalf("band %d ±%d%%: %s, band [%d, %d]", c.ref, c.pct, r.Reason(), lo, hi)
		}
		if got := levels(); got != book {
			t.Fatalf("band %d ±%d%% moved the book:\n%s\nwas\n%s", c.ref, c.pct, got, book)
		}
	}
	// Orders follow the new band, and the band survives a snapshot.
	var buf [cmdSlotSize]byte
	sink := NewBufferSink(4)
	for i, px := range []int64{901, 1057} {
		if err := m.Apply(encodeNewOrder(buf[:], &orderArgs{seq: uint64(400 + i), ts: 1, session: 3, side: venue.SideSell, ordType: venue.OrdTypeLimit,
			instrument: 1, px: px, qty: 1, clOrdID: fmt.Sprintf("band%d", i)}), sink); err != nil {
			t.Fatal(err)
		}
	}
	var rej venue.OrderRejected
	if rej.WrapDecode(sink.Event(0), 0) != nil || rej.Reason() != venue.RejectReasonPriceOutOfBand {
		t.Fatalf("an order below the new band was not rejected")
	}
	snap := snapshotOf(t, m)
	restored := mustMatcher(t, Config{OrdersMax: 16, ClOrdIDsMax: 64, SessionsMax: 4, Instruments: []InstrumentConfig{
		{ID: 1, Symbol: "A", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 100, RefPriceTicks: 1000, BandPercent: 10}}})
	if err := restored.ReadSnapshot(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if lo, hi, _ := restored.Band(1); lo != 902 || hi != 1058 {
		t.Fatalf("restored band [%d, %d]", lo, hi)
	}
	if fmt.Sprint(restored.BookLevels(1, venue.SideSell, nil)) != fmt.Sprint(m.BookLevels(1, venue.SideSell, nil)) {
		t.Fatal("restored book differs")
	}
}

// setBand applies an operator's SetPriceBand for instrument 1 and returns
// its result, checking the invariants after it.
func setBand(t *testing.T, m *Matcher, seq uint64, ref, pct int64) venue.OperatorResult {
	t.Helper()
	var buf [cmdSlotSize]byte
	cmd := withBand(encodeOperator(buf[:], operatorArgs{seq: seq, action: venue.OperatorActionTypeSetPriceBand, instrument: 1}), ref, pct)
	sink := NewBufferSink(2)
	if err := m.Apply(cmd, sink); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	var r venue.OperatorResult
	mustEncode(r.WrapDecode(sink.Event(sink.Len()-1), 0))
	return r
}

// TestOperatorSetBandKeepsStopPrices: a band change keeps every stop
// order's stop price (a stop is kept as a level of the band), and is
// refused when a stop price would fall outside the new band.
func TestOperatorSetBandKeepsStopPrices(t *testing.T) {
	cfg := Config{OrdersMax: 16, ClOrdIDsMax: 64, SessionsMax: 4, Instruments: []InstrumentConfig{
		{ID: 1, Symbol: "A", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 100, RefPriceTicks: 1000, BandPercent: 10}}}
	var buf [cmdSlotSize]byte
	apply := func(m *Matcher, a orderArgs) *BufferSink {
		t.Helper()
		sink := NewBufferSink(8)
		a.ts, a.instrument, a.qty = 1, 1, 1
		if err := m.Apply(encodeNewOrder(buf[:], &a), sink); err != nil {
			t.Fatal(err)
		}
		return sink
	}
	// A sell stop at 950 would be outside [969, 1071].
	m := mustMatcher(t, cfg)
	apply(m, orderArgs{seq: 1, session: 1, side: venue.SideSell, ordType: venue.OrdTypeStop, stopPx: 950, clOrdID: "s"})
	if r := setBand(t, m, 2, 1020, 5); r.Reason() != venue.RejectReasonOrdersOutsideBand {
		t.Fatalf("band [969, 1071] with a sell stop at 950: %s, want OrdersOutsideBand", r.Reason())
	}
	// A sell stop limit (stop 1000) at 960 would rest outside it once elected.
	m = mustMatcher(t, cfg)
	apply(m, orderArgs{seq: 1, session: 1, side: venue.SideSell, ordType: venue.OrdTypeStopLimit, stopPx: 1000, px: 960, clOrdID: "sl"})
	if r := setBand(t, m, 2, 1020, 5); r.Reason() != venue.RejectReasonOrdersOutsideBand {
		t.Fatalf("band [969, 1071] with a stop limit at 960: %s, want OrdersOutsideBand", r.Reason())
	}
	// A buy stop at 1050 stays at 1050 when the band moves up by 69 ticks.
	m = mustMatcher(t, cfg)
	apply(m, orderArgs{seq: 1, session: 1, side: venue.SideBuy, ordType: venue.OrdTypeStop, stopPx: 1050, clOrdID: "b"})
	if r := setBand(t, m, 2, 1020, 5); r.Reason() != venue.RejectReasonNone {
		t.Fatalf("band [969, 1071]: %s", r.Reason())
	}
	apply(m, orderArgs{seq: 3, session: 2, side: venue.SideSell, ordType: venue.OrdTypeLimit, px: 1050, clOrdID: "ask"})
	apply(m, orderArgs{seq: 4, session: 2, side: venue.SideSell, ordType: venue.OrdTypeLimit, px: 1060, clOrdID: "ask2"})
	sink := apply(m, orderArgs{seq: 5, session: 3, side: venue.SideBuy, ordType: venue.OrdTypeLimit, px: 1050, clOrdID: "take"})
	var triggered venue.OrderTriggered
	found := false
	for i := 0; i < sink.Len() && !found; i++ {
		found = triggered.WrapDecode(sink.Event(i), 0) == nil
	}
	if !found || triggered.StopPxTicks() != 1050 || triggered.TriggerPriceTicks() != 1050 {
		t.Fatalf("a trade at 1050 did not elect the buy stop at 1050 (%d events)", sink.Len())
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotAfterBandMovedPastLastTrade: an operator may move the band so
// that the last trade price is outside it; a snapshot of that state must
// read back (a restart from it would fail otherwise) and keep the price.
func TestSnapshotAfterBandMovedPastLastTrade(t *testing.T) {
	cfg := Config{OrdersMax: 16, ClOrdIDsMax: 64, SessionsMax: 4, Instruments: []InstrumentConfig{
		{ID: 1, Symbol: "A", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 100, RefPriceTicks: 1000, BandPercent: 10}}}
	m := mustMatcher(t, cfg)
	var buf [cmdSlotSize]byte
	for i, a := range []orderArgs{
		{seq: 1, session: 1, side: venue.SideSell, ordType: venue.OrdTypeLimit, px: 905, clOrdID: "ask"},
		{seq: 2, session: 2, side: venue.SideBuy, ordType: venue.OrdTypeLimit, px: 905, clOrdID: "bid"},
	} {
		a.ts, a.instrument, a.qty = 1, 1, 1
		if err := m.Apply(encodeNewOrder(buf[:], &a), NewBufferSink(8)); err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
	}
	if last, ok := m.LastTradePrice(1); !ok || last != 905 {
		t.Fatalf("last trade %d, %v; want 905", last, ok)
	}
	// Band [969, 1071] around 1020: the last trade, 905, is below it.
	if r := setBand(t, m, 3, 1020, 5); r.Reason() != venue.RejectReasonNone {
		t.Fatalf("band [969, 1071]: %s", r.Reason())
	}
	snap := snapshotOf(t, m)
	restored := mustMatcher(t, cfg)
	if err := restored.ReadSnapshot(bytes.NewReader(snap)); err != nil {
		t.Fatalf("snapshot with the last trade outside the band: %v", err)
	}
	if last, ok := restored.LastTradePrice(1); !ok || last != 905 {
		t.Fatalf("restored last trade %d, %v; want 905", last, ok)
	}
	if !bytes.Equal(snapshotOf(t, restored), snap) {
		t.Fatal("the restored state differs")
	}
}

// TestOperatorSetBandKeepsOrderNotionalInRange: a band moved up is refused
// when max_qty at its top would be above OrderNotionalMax, the bound the
// configuration has (an order's notional wrapped int64 and passed the
// risk limits); one just within it is taken.
func TestOperatorSetBandKeepsOrderNotionalInRange(t *testing.T) {
	maxQty := MaxQtyAt(150)
	m := mustMatcher(t, Config{OrdersMax: 16, ClOrdIDsMax: 64, SessionsMax: 4, Instruments: []InstrumentConfig{
		{ID: 1, Symbol: "A", TickSize: "1", LotSize: 1, MinQty: 1, MaxQty: maxQty, RefPriceTicks: 100, BandPercent: 50}}})
	if r := setBand(t, m, 1, 5000, 1); r.Reason() != venue.RejectReasonInvalidPriceBand {
		t.Fatalf("band [4950, 5050] with max_qty %d: %s", maxQty, r.Reason())
	}
	if lo, hi, _ := m.Band(1); lo != 50 || hi != 150 {
		t.Fatalf("refused band moved it to [%d, %d]", lo, hi)
	}
	if r := setBand(t, m, 2, 120, 25); r.Reason() != venue.RejectReasonNone {
		t.Fatalf("band [90, 150]: %s", r.Reason())
	}
	if r := setBand(t, m, 3, 121, 25); r.Reason() != venue.RejectReasonInvalidPriceBand {
		t.Fatalf("band [91, 151] with max_qty %d: %s", maxQty, r.Reason())
	}
}

// TestOldOperatorCommandReadsWithoutFlags: a record an earlier build wrote,
// whose block ends before flags, which the generated decoder refuses, is
// read by DecodeOperatorCommand and AppendText as the matcher applies it:
// every field as written, flags none.
func TestOldOperatorCommandReadsWithoutFlags(t *testing.T) {
	var buf [cmdSlotSize]byte
	cmd := encodeOperator(buf[:], operatorArgs{seq: 7, action: venue.OperatorActionTypeSetPhaseStatus,
		status: venue.TradingStatusClosingCall, instrument: 1, old: true})
	if _, ok := venue.DecodeOperatorCommand(cmd); ok {
		t.Fatal("the generated decoder took a block shorter than its own")
	}
	c, ok := DecodeOperatorCommand(cmd)
	if !ok || c.Seq() != 7 || c.Status() != venue.TradingStatusClosingCall || c.InstrumentID() != 1 ||
		string(c.Operator()) != "alice" || c.Flags() != 0 {
		t.Fatalf("decoded %v (ok %v)", c, ok)
	}
	text, err := AppendText(nil, cmd, 0)
	if err != nil || !bytes.Contains(text, []byte("SetPhaseStatus")) {
		t.Fatalf("text %q: %v", text, err)
	}
}
