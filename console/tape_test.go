package console

import (
	"bytes"
	"encoding/binary"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

func operatorResult(t testing.TB, seq uint64, action venue.OperatorActionType, reason venue.RejectReason, instrument uint32, refTicks, tsNs int64) []byte {
	t.Helper()
	return cmdtest.Encode(t, make([]byte, 256), func(e *venue.OperatorResult) {
		e.SetCauseSeq(seq)
		e.SetAction(action)
		e.SetReason(reason)
		e.SetInstrumentID(instrument)
		e.SetRefPriceTicks(refTicks)
		e.SetTimestampNs(tsNs)
		if err := e.SetOperator([]byte("carol")); err != nil {
			t.Fatal(err)
		}
	})
}

// TestTapeDay: an EndOfDay done starts the day again (trades, chart,
// volume, first/high/low, last trade), a refused one does not; the day's
// last trade becomes the previous close and the reference price, until a
// SetPriceBand done sets another; a day without trades keeps both.
func TestTapeDay(t *testing.T) {
	tp := NewTape([]uint32{1}, nil)
	tp.apply(fill(t, 1, true, venue.SideBuy, 1000, 3, 10))
	tp.apply(operatorResult(t, 5, venue.OperatorActionTypeSetPriceBand, venue.RejectReasonNone, 1, 1010, 11))
	tp.apply(operatorResult(t, 6, venue.OperatorActionTypeEndOfDay, venue.RejectReasonUnknownInstrument, 0, 0, 12))
	if c, _ := tp.instrument(1); c.TradesOfDay != 1 || c.Volume != 3 || c.RefTicks != 1010 || c.DayNs != 0 {
		t.Fatalf("before the end of day: %+v", c)
	}
	tp.apply(operatorResult(t, 7, venue.OperatorActionTypeEndOfDay, venue.RejectReasonNone, 0, 0, 20))
	c, _ := tp.instrument(1)
	if c.TradesOfDay != 0 || c.Volume != 0 || len(c.Trades) != 0 || len(c.Chart) != 0 || c.FirstTicks != 0 || c.LastQty != 0 ||
		c.RefTicks != 1000 || !c.RefIsClose || c.CloseTicks != 1000 || c.DayNs != 20 {
		t.Fatalf("after the end of day: %+v", c)
	}
	if d := tp.DayFigures(1); d.LastQty != 0 || d.Volume != 0 || d.Trades != 0 || d.PrevCloseTicks != 1000 {
		t.Fatalf("day figures after the end of day: %+v", d)
	}
	tp.apply(operatorResult(t, 8, venue.OperatorActionTypeSetPriceBand, venue.RejectReasonNone, 1, 1020, 21))
	tp.apply(operatorResult(t, 9, venue.OperatorActionTypeEndOfDay, venue.RejectReasonNone, 0, 0, 22)) // a day without trades
	if c, _ = tp.instrument(1); c.RefTicks != 1020 || c.RefIsClose || c.CloseTicks != 1000 || c.DayNs != 22 {
		t.Fatalf("after a day without trades: %+v", c)
	}
	tp.apply(fill(t, 1, true, venue.SideSell, 990, 2, 30))
	tp.apply(fill(t, 1, true, venue.SideBuy, 995, 4, 31))
	c, _ = tp.instrument(1)
	if c.TradesOfDay != 2 || c.Volume != 6 || c.FirstTicks != 990 || c.LowTicks != 990 || c.HighTicks != 995 || c.Trades[0].PriceTicks != 995 {
		t.Fatalf("the new day: %+v", c)
	}
	if d := tp.DayFigures(1); d.LastPriceTicks != 995 || d.LastQty != 4 || d.Volume != 6 || d.Trades != 2 || d.PrevCloseTicks != 1000 {
		t.Fatalf("day figures of the new day: %+v", d)
	}
	if ops := tp.operatorRecords(); len(ops) != 5 || ops[0].Seq != 9 || ops[0].Operator != "carol" {
		t.Fatalf("operator records: %+v", ops)
	}
}

// TestTapeState: the state written at a snapshot and restored gives the
// same pages as the tape it came from, and the events after it continue
// both alike; a damaged state is refused with a reason.
func TestTapeState(t *testing.T) {
	a := NewTape([]uint32{1, 2}, nil)
	a.apply(fill(t, 1, true, venue.SideBuy, 1500, 1, 1))
	a.apply(operatorResult(t, 2, venue.OperatorActionTypeEndOfDay, venue.RejectReasonNone, 0, 0, 2)) // closes at 1500
	for i := int64(0); i < TradesKept+7; i++ {
		a.apply(fill(t, 1, true, venue.SideBuy, 1000+i%13, 1+i%3, 100+i))
	}
	a.apply(fill(t, 2, true, venue.SideSell, 50, 9, 5))
	for i := uint64(0); i < OperatorResultsKept+3; i++ {
		a.apply(operatorResult(t, i, venue.OperatorActionTypeSetPriceBand, venue.RejectReasonNone, 2, int64(60+i), int64(i)))
	}
	// Kill switches and limits changed are kept with their details.
	a.apply(cmdtest.Encode(t, make([]byte, 256), func(e *venue.RiskControlResult) {
		e.SetCauseSeq(200)
		e.SetScope(venue.RiskScopeAccount)
		e.SetAction(venue.RiskActionSetLimit)
		e.SetLimit(venue.RiskLimitMaxPosition)
		e.SetInstrumentID(2)
		e.SetValue(40)
		copy(e.AccountArray()[:], "FUND")
	}))
	a.apply(cmdtest.Encode(t, make([]byte, 256), func(e *venue.RiskControlResult) {
		e.SetCauseSeq(201)
		e.SetScope(venue.RiskScopeSession)
		e.SetSessionIdx(3)
		e.SetAction(venue.RiskActionKill)
		e.SetCancelledCount(4)
	}))
	// An operator's cancel of one order is kept with the order it found.
	a.apply(cmdtest.Encode(t, make([]byte, 256), func(e *venue.OperatorResult) {
		e.SetCauseSeq(202)
		e.SetAction(venue.OperatorActionTypeCancelOrder)
		e.SetFilterSessionIdx(1)
		e.SetInstrumentID(2)
		e.SetOrderID(77)
		e.SetCount(1)
	}))
	if got := a.operatorRecords()[0]; got.Action != venue.OperatorActionTypeCancelOrder || got.OrderID != 77 || got.Session != 1 {
		t.Fatalf("order cancel record %+v", got)
	}
	if got := a.operatorRecords()[1:3]; got[0].Risk.Action != venue.RiskActionKill || got[1].Risk.Account != "FUND" || got[1].Risk.Value != 40 {
		t.Fatalf("risk records %+v", got)
	}
	var state bytes.Buffer
	if err := a.writeState(&state); err != nil {
		t.Fatal(err)
	}
	b := NewTape([]uint32{1, 2, 3}, nil) // 3: configured since, starts empty
	if err := b.Restore(bytes.NewReader(state.Bytes())); err != nil {
		t.Fatal(err)
	}
	next := fill(t, 1, true, venue.SideSell, 1200, 5, 999)
	a.apply(next)
	b.Replay(next)
	for _, id := range []uint32{1, 2} {
		ca, _ := a.instrument(id)
		cb, _ := b.instrument(id)
		if !reflect.DeepEqual(ca, cb) {
			t.Fatalf("instrument %d:\nbefore %+v\nafter  %+v", id, ca, cb)
		}
	}
	if !reflect.DeepEqual(a.operatorRecords(), b.operatorRecords()) {
		t.Fatal("operator records differ after the restore")
	}
	if c, _ := b.instrument(3); c.TradesOfDay != 0 {
		t.Fatalf("instrument 3: %+v", c)
	}
	if c, _ := b.instrument(1); c.CloseTicks != 1500 || !c.RefIsClose {
		t.Fatalf("instrument 1's close after the restore: %+v", c)
	}
	// A state of version 1 (no close) is still read: a venue upgraded
	// starts from the snapshot it left.
	v1 := []byte("FVCT\x01\x00\x00\x00")
	v1 = binary.LittleEndian.AppendUint64(v1, 77) // dayNs
	v1 = binary.LittleEndian.AppendUint32(v1, 1)
	v1 = binary.LittleEndian.AppendUint32(v1, 1) // instrument 1
	for _, v := range []int64{0, 0, 0, 0, 0, 0, 1234} {
		v1 = binary.LittleEndian.AppendUint64(v1, uint64(v))
	}
	v1 = append(v1, make([]byte, 4+4+8+4)...) // no trades, no points, no operator commands
	old := NewTape([]uint32{1}, nil)
	if err := old.Restore(bytes.NewReader(v1)); err != nil {
		t.Fatalf("version 1: %v", err)
	}
	if c, _ := old.instrument(1); c.RefTicks != 1234 || c.RefIsClose || c.CloseTicks != 0 || c.DayNs != 77 {
		t.Fatalf("version 1: %+v", c)
	}
	if err := b.Restore(bytes.NewReader(state.Bytes())); err == nil {
		t.Fatal("a restore into a tape with events was accepted")
	}
	raw := state.Bytes()
	tooMany := bytes.Clone(raw)
	// The first instrument's kept trades: after the header (4+4+8+4), its id (4), eight i64 and a byte.
	tooMany[24+65] = TradesKept + 1
	for name, bad := range map[string][]byte{
		"truncated":      raw[:len(raw)-3],
		"trailing bytes": append(bytes.Clone(raw), 0),
		"magic":          append([]byte{'x'}, raw[1:]...),
		"too many":       tooMany,
	} {
		err := NewTape([]uint32{1, 2}, nil).Restore(bytes.NewReader(bad))
		if err == nil || !strings.HasPrefix(err.Error(), "console state:") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestTapeCapturesAtSnapshotPoint: the state is handed over before the
// first event of a command after the snapshot's, holding every event up to
// it and none after.
func TestTapeCapturesAtSnapshotPoint(t *testing.T) {
	type capture struct {
		seq   uint64
		state []byte
	}
	var got []capture
	tp := NewTape([]uint32{1}, func(seq uint64, write func(io.Writer) error) error {
		var b bytes.Buffer
		err := write(&b)
		got = append(got, capture{seq, b.Bytes()})
		return err
	})
	withSeq := func(ev []byte, seq uint64) []byte {
		var e venue.Fill
		if err := e.WrapDecode(ev, 0); err != nil {
			t.Fatal(err)
		}
		e.SetCauseSeq(seq)
		return ev
	}
	tp.applyCommitted(withSeq(fill(t, 1, true, venue.SideBuy, 1000, 1, 1), 4))
	tp.SnapshotAt(5)
	tp.applyCommitted(withSeq(fill(t, 1, true, venue.SideBuy, 1001, 1, 2), 5)) // the snapshot's command: before the capture
	if len(got) != 0 {
		t.Fatalf("captured before a later command: %v", got)
	}
	tp.applyCommitted(withSeq(fill(t, 1, true, venue.SideBuy, 1002, 1, 3), 6))
	tp.applyCommitted(withSeq(fill(t, 1, true, venue.SideBuy, 1003, 1, 4), 7))
	if len(got) != 1 || got[0].seq != 5 {
		t.Fatalf("captures: %v", got)
	}
	restored := NewTape([]uint32{1}, nil)
	if err := restored.Restore(bytes.NewReader(got[0].state)); err != nil {
		t.Fatal(err)
	}
	if c, _ := restored.instrument(1); c.TradesOfDay != 2 || c.Trades[0].PriceTicks != 1001 {
		t.Fatalf("the state after command 5: %+v", c)
	}
}

// FuzzTapeRestore: any bytes are refused with an error or restored; a
// restored state is written out again and restores to the same bytes.
func FuzzTapeRestore(f *testing.F) {
	a := NewTape([]uint32{1, 2}, nil)
	a.apply(fill(f, 1, true, venue.SideBuy, 1000, 3, 10))
	a.apply(operatorResult(f, 4, venue.OperatorActionTypeEndOfDay, venue.RejectReasonNone, 0, 0, 11))
	a.apply(fill(f, 2, true, venue.SideSell, 990, 2, 12))
	var seed bytes.Buffer
	if err := a.writeState(&seed); err != nil {
		f.Fatal(err)
	}
	f.Add(seed.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		tp := NewTape([]uint32{1, 2}, nil)
		if tp.Restore(bytes.NewReader(b)) != nil {
			return
		}
		var once, twice bytes.Buffer
		if err := tp.writeState(&once); err != nil {
			t.Fatal(err)
		}
		again := NewTape([]uint32{1, 2}, nil)
		if err := again.Restore(bytes.NewReader(once.Bytes())); err != nil {
			t.Fatalf("a state the tape wrote is refused: %v", err)
		}
		if err := again.writeState(&twice); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Fatal("a restored state writes different bytes")
		}
	})
}

// TestTapeTakesWhatOnlyTheCommandSays: a MassCancel's account filter and a
// risk command's operator, which their result events do not carry, come
// from the command shown to Command before them (the journal's first
// command, seq 0, too), one result each; a restored state keeps them.
func TestTapeTakesWhatOnlyTheCommandSays(t *testing.T) {
	tp := NewTape([]uint32{1}, nil)
	tp.Command(cmdtest.Encode(t, make([]byte, 256), func(c *venue.OperatorCommand) {
		c.SetSeq(0)
		c.SetAction(venue.OperatorActionTypeMassCancel)
		c.SetFilterSessionIdx(0xFFFF)
		_ = c.SetAccountString("FUND")
		_ = c.SetOperatorString("alice")
	}))
	tp.Command(cmdtest.Encode(t, make([]byte, 256), func(c *venue.RiskControl) {
		c.SetSeq(1)
		c.SetAction(venue.RiskActionKill)
		_ = c.SetOperatorString("bob")
	}))
	tp.Command(cmdtest.Encode(t, make([]byte, 256), func(c *venue.RiskSetLimit) {
		c.SetSeq(2)
		_ = c.SetOperatorString("carol")
	}))
	massCancel := operatorResult(t, 0, venue.OperatorActionTypeMassCancel, venue.RejectReasonNone, 0, 0, 5)
	risk := func(seq uint64, action venue.RiskAction) []byte {
		return cmdtest.Encode(t, make([]byte, 256), func(e *venue.RiskControlResult) {
			e.SetCauseSeq(seq)
			e.SetAction(action)
		})
	}
	tp.apply(risk(2, venue.RiskActionSetLimit)) // results come in any order of the commands shown
	tp.apply(massCancel)
	tp.apply(risk(1, venue.RiskActionKill))
	tp.apply(risk(1, venue.RiskActionKill)) // a note is taken once
	got := tp.operatorRecords()
	// Newest first: the second kill, the kill, the cancel (its result names
	// its operator), the limit.
	if len(got) != 4 || got[0].Operator != "" || got[1].Operator != "bob" || got[2].Account != "FUND" ||
		got[2].Operator != "carol" || got[3].Operator != "carol" || got[3].Account != "" {
		t.Fatalf("records %+v", got)
	}
	wantRecordsRestored(t, tp, got)
}

// TestTapeNamesTheStatusSet: a SetTradingStatus's result names no status,
// so a halt, its resume and a close were one row each that read alike in
// the journal list; the command's status is kept (Command), across a
// restored state too, and a state of version 6, which did not keep it,
// restores the record as unknown rather than as one status.
func TestTapeNamesTheStatusSet(t *testing.T) {
	tp := NewTape([]uint32{1}, nil)
	for seq, st := range []venue.TradingStatus{venue.TradingStatusHalted, venue.TradingStatusOpen, venue.TradingStatusClosed} {
		tp.Command(cmdtest.Encode(t, make([]byte, 256), func(c *venue.OperatorCommand) {
			c.SetSeq(uint64(seq))
			c.SetAction(venue.OperatorActionTypeSetTradingStatus)
			c.SetStatus(st)
			c.SetInstrumentID(1)
			c.SetFilterSessionIdx(0xFFFF)
			_ = c.SetOperatorString("alice")
		}))
		tp.apply(operatorResult(t, uint64(seq), venue.OperatorActionTypeSetTradingStatus, venue.RejectReasonNone, 1, 0, int64(seq+1)))
	}
	got := tp.operatorRecords()
	if len(got) != 3 || got[0].Status != venue.TradingStatusClosed || got[1].Status != venue.TradingStatusOpen ||
		got[2].Status != venue.TradingStatusHalted || got[0].Unnoted || got[1].Unnoted || got[2].Unnoted {
		t.Fatalf("records %+v", got)
	}
	wantRecordsRestored(t, tp, got)

	old := restoredOperatorRecord(t, 6, venue.OperatorActionTypeSetTradingStatus, 1)
	if r := old.operatorRecords()[0]; !r.Unnoted || target(r, nil, map[uint32]config.Instrument{1: {Symbol: "ACME"}}) != "ACME, "+statusUnknown {
		t.Fatalf("a version 6 record: %+v", r)
	}
}

// TestTapeNamesTheBandSet: a SetPriceBand's row named only its
// instrument, so the journal list did not say what reference price and
// band an operator set. A done one's result names them, a refused one's
// none, so its command's (Command) say what was asked; a restored state
// keeps them, and a state of version 7, which did not, restores the
// record as unknown rather than as a band of 0% around 0.
func TestTapeNamesTheBandSet(t *testing.T) {
	acme := map[uint32]config.Instrument{1: {ID: 1, Symbol: "ACME", Tick: decimal.Tick{Mantissa: 1, Scale: 2}}}
	tp := NewTape([]uint32{1}, nil)
	for seq, reason := range []venue.RejectReason{venue.RejectReasonNone, venue.RejectReasonInvalidPriceBand} {
		tp.Command(cmdtest.Encode(t, make([]byte, 256), func(c *venue.OperatorCommand) {
			c.SetSeq(uint64(seq))
			c.SetAction(venue.OperatorActionTypeSetPriceBand)
			c.SetInstrumentID(1)
			c.SetFilterSessionIdx(0xFFFF)
			c.SetRefPriceTicks(10150 + int64(seq))
			c.SetBandPercent(10 + int64(seq))
			_ = c.SetOperatorString("alice")
		}))
		var ref int64
		if reason == venue.RejectReasonNone {
			ref = 10150 // the matcher names the band in force on a done one only
		}
		result := operatorResult(t, uint64(seq), venue.OperatorActionTypeSetPriceBand, reason, 1, ref, int64(seq+1))
		if reason == venue.RejectReasonNone {
			var e venue.OperatorResult
			_ = e.WrapDecode(result, 0)
			e.SetBandPercent(10)
		}
		tp.apply(result)
	}
	got := tp.operatorRecords()
	var rows []string
	for _, r := range got {
		rows = append(rows, target(r, nil, acme))
	}
	if want := []string{"ACME → reference price 101.51, band 11%", "ACME → reference price 101.50, band 10%"}; !reflect.DeepEqual(rows, want) {
		t.Fatalf("rows %q, want %q (records %+v)", rows, want, got)
	}
	wantRecordsRestored(t, tp, got)

	old := restoredOperatorRecord(t, 7, venue.OperatorActionTypeSetPriceBand, 0)
	if r := old.operatorRecords()[0]; !r.Unnoted || target(r, nil, acme) != "ACME, "+bandUnknown {
		t.Fatalf("a version 7 record: %+v", r)
	}
}

// TestTapeSaysWhatANoteItLostWas: the tape keeps a note of as many
// commands awaiting their results as the admin API can have calls in
// flight (notesKept); one more pushes out the oldest, whose record then
// says that its operator (a kill) or account (a mass cancel) is unknown
// rather than showing none, and a restored state keeps that.
func TestTapeSaysWhatANoteItLostWas(t *testing.T) {
	tp := NewTape([]uint32{1}, nil)
	tp.Command(cmdtest.Encode(t, make([]byte, 256), func(c *venue.RiskControl) {
		c.SetSeq(0)
		c.SetAction(venue.RiskActionKill)
		_ = c.SetOperatorString("bob")
	}))
	tp.Command(cmdtest.Encode(t, make([]byte, 256), func(c *venue.OperatorCommand) {
		c.SetSeq(1)
		c.SetAction(venue.OperatorActionTypeMassCancel)
		c.SetFilterSessionIdx(0xFFFF)
		_ = c.SetAccountString("FUND")
	}))
	for seq := uint64(2); seq < notesKept+1; seq++ {
		tp.Command(cmdtest.Encode(t, make([]byte, 256), func(c *venue.RiskSetLimit) {
			c.SetSeq(seq)
			_ = c.SetOperatorString("carol")
		}))
	}
	// notesKept+1 commands await their results: the kill's note is pushed
	// out, the cancel's and every limit's are kept.
	tp.apply(cmdtest.Encode(t, make([]byte, 256), func(e *venue.RiskControlResult) {
		e.SetCauseSeq(0)
		e.SetAction(venue.RiskActionKill)
	}))
	if kill := tp.operatorRecords()[0]; !kill.Unnoted || kill.Operator != "" {
		t.Fatalf("the kill whose note was pushed out: %+v", kill)
	}
	tp.apply(operatorResult(t, 1, venue.OperatorActionTypeMassCancel, venue.RejectReasonNone, 0, 0, 5))
	if cancel := tp.operatorRecords()[0]; cancel.Unnoted || cancel.Account != "FUND" {
		t.Fatalf("the cancel whose note was kept: %+v", cancel)
	}
	// A result of which no note is left (taken by the first): unknown too.
	tp.apply(operatorResult(t, 1, venue.OperatorActionTypeMassCancel, venue.RejectReasonNone, 0, 0, 6))
	if cancel := tp.operatorRecords()[0]; !cancel.Unnoted || cancel.Account != "" {
		t.Fatalf("a cancel with no note: %+v", cancel)
	}
	for seq := uint64(2); seq < notesKept+1; seq++ {
		tp.apply(cmdtest.Encode(t, make([]byte, 256), func(e *venue.RiskControlResult) {
			e.SetCauseSeq(seq)
			e.SetAction(venue.RiskActionSetLimit)
		}))
		if r := tp.operatorRecords()[0]; r.Unnoted || r.Operator != "carol" {
			t.Fatalf("limit %d, its note kept: %+v", seq, r)
		}
	}
	wantRecordsRestored(t, tp, tp.operatorRecords())
}

// TestTapeRestoresWhatAnOlderStateLacks: a state of version 3 kept no risk
// command's operator and no mass cancel's account, and one of version 4
// names no operator of a risk command it had no note of: restored, those
// records say so (Unnoted), rather than no operator and any account.
func TestTapeRestoresWhatAnOlderStateLacks(t *testing.T) {
	for _, version := range []uint32{3, 4} {
		var b []byte
		b = binary.LittleEndian.AppendUint32(b, stateMagic)
		b = binary.LittleEndian.AppendUint32(b, version)
		b = binary.LittleEndian.AppendUint64(b, 0) // dayNs
		b = binary.LittleEndian.AppendUint32(b, 0) // instruments
		b = binary.LittleEndian.AppendUint64(b, 2) // opsN
		b = binary.LittleEndian.AppendUint32(b, 2) // kept
		record := func(seq uint64, action venue.OperatorActionType, operator string) {
			b = binary.LittleEndian.AppendUint64(b, seq)
			b = binary.LittleEndian.AppendUint64(b, 1e9)
			b = append(b, byte(action), 0)
			b = binary.LittleEndian.AppendUint16(b, 0xFFFF)
			b = binary.LittleEndian.AppendUint32(b, 0)
			b = binary.LittleEndian.AppendUint32(b, 1)
			b = append(b, byte(len(operator)))
			b = append(b, operator...)
		}
		record(7, ActionRisk, "")
		b = append(b, byte(venue.RiskActionKill), byte(venue.RiskScopeSession), 0, byte(venue.RiskResultApplied))
		b = binary.LittleEndian.AppendUint64(b, 0)
		b = append(b, 0) // the risk record's account
		record(8, venue.OperatorActionTypeMassCancel, "alice")
		if version == 4 {
			b = append(b, 4)
			b = append(b, "FUND"...)
		}
		tp := NewTape([]uint32{1}, nil)
		if err := tp.Restore(bytes.NewReader(b)); err != nil {
			t.Fatalf("version %d: %v", version, err)
		}
		got := tp.operatorRecords()
		if kill := got[1]; !kill.Unnoted || kill.Operator != "" {
			t.Errorf("version %d: the kill %+v", version, kill)
		}
		wantCancel := OperatorRecord{Seq: 8, TimeNs: 1e9, Action: venue.OperatorActionTypeMassCancel, Session: 0xFFFF, Count: 1,
			Operator: "alice", Unnoted: true}
		if version == 4 {
			wantCancel.Account, wantCancel.Unnoted = "FUND", false
		}
		if got[0] != wantCancel {
			t.Errorf("version %d: the cancel %+v, want %+v", version, got[0], wantCancel)
		}
	}
}

// wantRecordsRestored checks that tp's state, written and restored into a
// new tape, gives the operator records want.
func wantRecordsRestored(t *testing.T, tp *Tape, want []OperatorRecord) {
	t.Helper()
	var state bytes.Buffer
	if err := tp.writeState(&state); err != nil {
		t.Fatal(err)
	}
	again := NewTape([]uint32{1}, nil)
	if err := again.Restore(&state); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.operatorRecords(), want) {
		t.Fatalf("restored %+v\nwant %+v", again.operatorRecords(), want)
	}
}

// TestTapeListsAnAutomaticKill: an automatic kill (a limit tripped) is
// listed with the operator commands, as the venue's own, naming the
// subject and the rule; a state saved with it restores it alike. Before,
// the list had no row of it, and nothing on the pages said why a kill
// switch was on.
func TestTapeListsAnAutomaticKill(t *testing.T) {
	tp := NewTape([]uint32{1}, nil)
	for _, k := range []struct {
		seq   uint64
		scope venue.RiskScope
		rule  venue.RiskLimit
	}{{40, venue.RiskScopeSession, venue.RiskLimitKillAfterBreaches}, {41, venue.RiskScopeAccount, venue.RiskLimitKillAtLoss}} {
		tp.apply(cmdtest.Encode(t, make([]byte, 256), func(e *venue.RiskControlResult) {
			e.SetCauseSeq(k.seq)
			e.SetTimestampNs(int64(k.seq))
			e.SetScope(k.scope)
			e.SetAction(venue.RiskActionAutoKill)
			e.SetResult(venue.RiskResultApplied)
			e.SetLimit(k.rule)
			e.SetCancelledCount(2)
			if k.scope == venue.RiskScopeSession {
				e.SetSessionIdx(3)
			} else {
				copy(e.AccountArray()[:], "FUND")
			}
		}))
	}
	bySession := map[uint16]string{3: "CLIENT4"}
	recs := tp.operatorRecords()
	if len(recs) != 2 {
		t.Fatalf("records %+v, want the two automatic kills", recs)
	}
	for i, want := range [][4]string{
		{"AutoKill", "account FUND: kill_at_loss reached", "done", "automatic"},
		{"AutoKill", "session CLIENT4: kill_after_breaches reached", "done", "automatic"},
	} {
		r := recs[i]
		action, target, result := riskColumns(r, bySession, nil)
		if got := [4]string{action, target, result, operatorOf(r)}; got != want || r.Count != 2 || r.Seq != 41-uint64(i) {
			t.Errorf("row %d: %q (count %d, seq %d), want %q", i, got, r.Count, r.Seq, want)
		}
	}
	wantRecordsRestored(t, tp, recs)
	again := NewTape([]uint32{1}, nil)
	var state bytes.Buffer
	if err := tp.writeState(&state); err != nil {
		t.Fatal(err)
	}
	if err := again.Restore(&state); err != nil {
		t.Fatal(err)
	}
	if got := operatorOf(again.operatorRecords()[0]); got != "automatic" {
		t.Fatalf("restored automatic kill's operator %q", got)
	}
}

// restoredOperatorRecord is a tape restored from a console state of an
// older version holding one operator record: action on instrument 1 by
// alice, done, count changed (seq 9, at 1 s).
func restoredOperatorRecord(t *testing.T, version uint32, action venue.OperatorActionType, count uint32) *Tape {
	t.Helper()
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, stateMagic)
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint64(b, 0) // dayNs
	b = binary.LittleEndian.AppendUint32(b, 0) // instruments
	b = binary.LittleEndian.AppendUint64(b, 1) // opsN
	b = binary.LittleEndian.AppendUint32(b, 1) // kept
	b = binary.LittleEndian.AppendUint64(b, 9)
	b = binary.LittleEndian.AppendUint64(b, 1e9)
	b = append(b, byte(action), 0)
	b = binary.LittleEndian.AppendUint16(b, 0xFFFF)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint32(b, count)
	b = append(b, 5)
	b = append(b, "alice"...)
	old := NewTape([]uint32{1}, nil)
	if err := old.Restore(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	return old
}
