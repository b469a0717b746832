package marketdata

import (
	"errors"

	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// ErrInstrumentsFull: an InstrumentAdded event for more instruments than
// TrackerConfig.InstrumentsMax, the engine's own bound.
var ErrInstrumentsFull = errors.New("marketdata: instrument added past InstrumentsMax")

// applyInstrumentAdded lists an instrument the engine added (see "Adding an
// instrument" in doc.go): a new empty book, announced in the sequenced
// stream by an InstrumentDefinition (symbol, tick, lot) and an
// InstrumentStatus (its rptSeq 1), so a client learns it without a
// snapshot; later snapshots carry it like a configured one. A refused
// addition only marks a command boundary.
func (t *Tracker) applyInstrumentAdded(ev []byte) error {
	var m venue.InstrumentAdded
	if err := m.WrapDecode(ev, 0); err != nil {
		return err
	}
	if err := t.beginEvent(m.CauseSeq(), m.TimestampNs()); err != nil {
		return err
	}
	if m.Reason() != venue.RejectReasonNone {
		t.eventsIgnored++
		return nil
	}
	d := InstrumentDef{ID: InstrumentID(m.InstrumentID()), Symbol: string(m.Symbol()), TickMantissa: m.TickMantissa(),
		TickExponent: -int8(m.TickScale()), LotSize: m.LotSize(), Status: mdsbe.TradingStatus(m.Status()),
		LevelsMax: int(m.BandHighTicks() - m.BandLowTicks() + 1)}
	in, err := t.addInstrument(d)
	if err != nil {
		return err
	}
	if err := t.emitDefinition(in); err != nil {
		return err
	}
	return t.emitStatus(in)
}

// addInstrument appends an instrument's empty book, within the capacity
// NewTracker reserved.
func (t *Tracker) addInstrument(d InstrumentDef) (*instrument, error) {
	if _, dup := t.instIndex[d.ID]; dup || d.ID == 0 || len(d.Symbol) == 0 || len(d.Symbol) > mdsbe.SymbolLength ||
		d.TickMantissa <= 0 || d.LevelsMax <= 0 || d.LevelsMax > LevelsMaxLimit || !d.Status.Valid() {
		return nil, ErrInconsistent
	}
	if len(t.insts) == cap(t.insts) {
		return nil, ErrInstrumentsFull
	}
	t.insts = append(t.insts, instrument{})
	i := int32(len(t.insts) - 1)
	t.instIndex[d.ID] = i
	t.initInstrument(&t.insts[i], d)
	return &t.insts[i], nil
}

// initInstrument sets up an instrument's empty book.
func (t *Tracker) initInstrument(in *instrument, d InstrumentDef) {
	in.def = d
	in.status = d.Status
	if !in.status.Valid() {
		in.status = mdsbe.TradingStatusOpen
	}
	levelsMax := t.cfg.LevelsMax
	if d.LevelsMax > 0 {
		levelsMax = d.LevelsMax
	}
	in.sides[bidSide] = bookSide{levels: make([]level, 0, levelsMax), bid: true}
	in.sides[askSide] = bookSide{levels: make([]level, 0, levelsMax)}
}

// emitDefinition writes an instrument's reference data into the sequenced
// stream; it carries no rptSeq (the InstrumentStatus after it does).
func (t *Tracker) emitDefinition(in *instrument) error {
	buf, off, err := t.out.Reserve(mdsbe.InstrumentDefinitionEncodedLength, t.timeNs)
	if err != nil {
		return err
	}
	var m mdsbe.InstrumentDefinition
	if err := m.WrapEncode(buf, off); err != nil {
		return err
	}
	m.SetInstrumentID(uint32(in.def.ID))
	m.SetTickExponent(in.def.TickExponent)
	m.SetTickMantissa(in.def.TickMantissa)
	m.SetLotSize(in.def.LotSize)
	m.SetStatus(in.status)
	t.messagesQueued++
	return m.SetSymbolString(in.def.Symbol)
}
