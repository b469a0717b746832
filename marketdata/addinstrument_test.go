package marketdata

import (
	"bytes"
	"errors"
	"testing"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestTrackerLearnsAddedInstrument feeds a tracker the events of a real
// matcher that lists an instrument and trades it: the tracker's book equals
// the matcher's, the feed announces the instrument (InstrumentDefinition,
// then InstrumentStatus with rptSeq 1), a snapshot carries it, and a saved
// state restored into a tracker configured without it continues the feed
// with the same bytes. A second addition past InstrumentsMax is an error.
func TestTrackerLearnsAddedInstrument(t *testing.T) {
	m, err := core.NewMatcher(core.Config{OrdersMax: 64, ClOrdIDsMax: 256, SessionsMax: 3, InstrumentsMax: 2,
		Instruments: simInstruments[:1]})
	if err != nil {
		t.Fatal(err)
	}
	newTracker := func() (*Tracker, *packet.Builder, *seqMessages) {
		out := &seqMessages{bySeq: map[uint64][]byte{}}
		b, err := packet.NewBuilder(packet.BuilderConfig{Channel: 1, Sequenced: true, Sink: out})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := NewTracker(TrackerConfig{Instruments: simTrackerDefs()[:1], InstrumentsMax: 2, OrdersMax: 64, LevelsMax: 256}, b)
		if err != nil {
			t.Fatal(err)
		}
		return tr, b, out
	}
	tr, b, out := newTracker()
	var events [][]byte
	seq := uint64(0)
	apply := func(cmd []byte) {
		t.Helper()
		sink := core.NewBufferSink(8)
		if err := m.Apply(cmd, sink); err != nil {
			t.Fatal(err)
		}
		for i := range sink.Len() {
			ev := append([]byte(nil), sink.Event(i)...)
			events = append(events, ev)
			if err := tr.Apply(ev); err != nil {
				t.Fatalf("event %d: %v", len(events), err)
			}
		}
	}
	var cmd [256]byte
	add := core.AddedInstrument{ID: 9, Symbol: "NEWCO", Tick: decimal.Tick{Mantissa: 5, Scale: 2}, LotSize: 10, MinQty: 10,
		MaxQty: 1000, RefPriceTicks: 400, BandPercent: 10, Status: venue.TradingStatusOpen}
	seq++
	if err := core.EncodeAddInstrument(cmd[:], seq, 10, &add, "op", "test"); err != nil {
		t.Fatal(err)
	}
	apply(cmd[:])
	order := func(session uint16, side venue.Side, px, qty int64, id string) {
		seq++
		apply(cmdtest.NewOrder(t, cmd[:], cmdtest.Order{Seq: seq, TimestampNs: int64(seq) * 10, Session: session, Instrument: 9,
			Side: side, OrdType: venue.OrdTypeLimit, TIF: venue.TimeInForceGTC, PriceTicks: px, Qty: qty, ClOrdID: id}))
	}
	order(1, venue.SideBuy, 400, 30, "b1")
	order(1, venue.SideBuy, 399, 20, "b2")
	order(2, venue.SideSell, 400, 10, "s1")
	if err := tr.EndCommand(); err != nil {
		t.Fatal(err)
	}
	var ml []core.Level
	var tl []Level
	for _, side := range []venue.Side{venue.SideBuy, venue.SideSell} {
		wire := mdsbe.SideBuy
		if side == venue.SideSell {
			wire = mdsbe.SideSell
		}
		ml = m.BookLevels(9, side, ml[:0])
		tl, err = tr.AppendLevels(tl[:0], 9, wire, 0)
		if err != nil || len(ml) != len(tl) {
			t.Fatalf("%v: matcher %v, tracker %v (%v)", side, ml, tl, err)
		}
		for i := range ml {
			if ml[i].PriceTicks != tl[i].PriceTicks || ml[i].Qty != tl[i].Qty {
				t.Fatalf("%v level %d: matcher %+v, tracker %+v", side, i, ml[i], tl[i])
			}
		}
	}
	_ = b.Flush()
	var def mdsbe.InstrumentDefinition
	var status mdsbe.InstrumentStatus
	if def.WrapDecode(out.bySeq[1], 0) != nil || def.InstrumentID() != 9 || string(def.Symbol()) != "NEWCO" ||
		def.TickMantissa() != 5 || def.TickExponent() != -2 || def.LotSize() != 10 {
		t.Fatalf("first message is not NEWCO's definition: %x", out.bySeq[1])
	}
	if status.WrapDecode(out.bySeq[2], 0) != nil || status.InstrumentID() != 9 || status.RptSeq() != 1 ||
		status.Status() != mdsbe.TradingStatusOpen {
		t.Fatalf("second message is not NEWCO's status with rptSeq 1: %x", out.bySeq[2])
	}
	if defs := tr.Instruments(); len(defs) != 2 || defs[1].Symbol != "NEWCO" || defs[1].LevelsMax != 81 {
		t.Fatalf("definitions %+v", defs)
	}
	snap, err := encodeSnapshot(tr, 1, b.NextSeq()-1, 1, 9, 1<<20)
	if err != nil || !bytes.Contains(snap, []byte("NEWCO")) {
		t.Fatalf("snapshot of NEWCO: %v", err)
	}

	// The saved state restores NEWCO into a tracker configured without it.
	var state bytes.Buffer
	if err := tr.writeState(&state, b.NextSeq()); err != nil {
		t.Fatal(err)
	}
	restored, rb, _ := newTracker()
	next, err := restored.readState(bytes.NewReader(state.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Restart(next); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := restored.writeState(&again, rb.NextSeq()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(state.Bytes(), again.Bytes()) {
		t.Fatal("a restored state writes different bytes")
	}
	old := append([]byte("FVMDST02"), state.Bytes()[8:]...)
	if _, err := (func() (uint64, error) { r, _, _ := newTracker(); return r.readState(bytes.NewReader(old)) })(); err == nil ||
		!errors.Is(err, ErrBadState) || !bytes.Contains([]byte(err.Error()), []byte("version 02")) {
		t.Fatalf("an older state: %v", err)
	}

	// A third instrument exceeds InstrumentsMax 2: the engine refuses it,
	// so only a corrupt stream can bring one; the tracker says so.
	var e venue.InstrumentAdded
	ev := make([]byte, 256)
	_ = e.WrapEncode(ev, 0)
	e.SetCauseSeq(seq + 1)
	e.SetInstrumentID(10)
	e.SetStatus(venue.TradingStatusOpen)
	e.SetTickMantissa(1)
	e.SetLotSize(1)
	e.SetBandLowTicks(1)
	e.SetBandHighTicks(10)
	_ = e.SetSymbolString("MORE")
	if err := tr.Apply(ev); !errors.Is(err, ErrInstrumentsFull) {
		t.Fatalf("an instrument past InstrumentsMax: %v", err)
	}
}
