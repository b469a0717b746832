package core

import (
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// AddedInstrument is the reference data of an instrument listed by an
// AddInstrument command rather than by the configuration (see "Adding
// instruments" in doc.go). The matcher keeps it so that snapshots carry it
// and so that, after a replay, the rest of the venue learns what the journal
// listed (Matcher.AddedInstruments).
type AddedInstrument struct {
	ID            uint32
	Symbol        string
	Tick          decimal.Tick
	LotSize       int64
	MinQty        int64
	MaxQty        int64
	RefPriceTicks int64
	BandPercent   int64
	// Status is the status it was listed in (TradingStatus gives the current one).
	Status venue.TradingStatus
	// Group is its trading schedule group; empty: the default group.
	Group string
}

// instrumentListing is what the matcher keeps of the instruments beyond
// their books: which were added, with their reference data, and every
// symbol (configured and added), for the duplicate check.
type instrumentListing struct {
	configured int               // instruments[:configured] come from the configuration
	added      []AddedInstrument // the reference data of instruments[configured:]
	symbols    map[string]uint16 // every listed symbol → its instrument index
	levelsMax  int               // Config.LevelsPerSideMax: the widest band a new instrument may have
	qtyMax     int64             // MaxQtyFor the matcher's OrdersMax and ClOrdIDsMax: the largest MaxQty
}

func newInstrumentListing(cfg *Config) instrumentListing {
	return instrumentListing{configured: len(cfg.Instruments),
		added:     make([]AddedInstrument, 0, cfg.instrumentsMax()-len(cfg.Instruments)),
		symbols:   make(map[string]uint16, cfg.instrumentsMax()),
		levelsMax: cfg.levelsPerSideMax(), qtyMax: MaxQtyFor(cfg.OrdersMax, cfg.ClOrdIDsMax)}
}

// tickScaleMax bounds a tick size's decimal places (10^18 fits an int64).
const tickScaleMax = 18

// AddedInstruments returns the reference data of the instruments added by
// commands, in the order they were added. Like every state accessor, call
// it from the goroutine that applies commands, or before it starts.
func (m *Matcher) AddedInstruments() []AddedInstrument {
	return append([]AddedInstrument(nil), m.listing.added...)
}

// AddBounds returns the bounds of an added instrument that the
// configuration does not give it: the widest band, in ticks, a book side
// holds (Config.LevelsPerSideMax) and the largest MaxQty (MaxQtyFor the
// matcher's OrdersMax and ClOrdIDsMax). Both are fixed at construction, so
// any goroutine may read them.
func (m *Matcher) AddBounds() (levelsPerSideMax int, maxQty int64) {
	return m.listing.levelsMax, m.listing.qtyMax
}

// InstrumentsMax returns the bound of configured plus added instruments.
func (m *Matcher) InstrumentsMax() int { return cap(m.instruments) }

// applyAddInstrument lists a new instrument. It is the one command that
// allocates: the new book's price levels (O(band width), bounded by
// LevelsPerSideMax) and its symbol; the instrument table and its id index
// were sized for Config.InstrumentsMax, so nothing that other commands use
// moves. A refused request changes nothing and is answered by an
// InstrumentAdded event carrying the reason, so it stays in the journal.
func (m *Matcher) applyAddInstrument(cmd []byte) error {
	var c venue.AddInstrument
	if err := c.WrapDecode(cmd, 0); err != nil {
		return err
	}
	m.begin(c.Seq(), c.TimestampNs())
	a := addedFromCommand(&c)
	reason := m.addInstrument(&a)
	m.emitInstrumentAdded(&a, reason, c.Operator())
	return nil
}

func addedFromCommand(c *venue.AddInstrument) AddedInstrument {
	return AddedInstrument{ID: c.InstrumentID(), Symbol: string(c.Symbol()),
		Tick:    decimal.Tick{Mantissa: c.TickMantissa(), Scale: int(c.TickScale())},
		LotSize: c.LotSize(), MinQty: c.MinQty(), MaxQty: c.MaxQty(), RefPriceTicks: c.RefPriceTicks(),
		BandPercent: c.BandPercent(), Status: c.Status(), Group: string(c.Group())}
}

// addInstrument checks a new instrument against the table and the bounds
// a configured one must meet, then lists it. Its risk cells were allocated
// with the table (riskState.stride) and start with each subject's limits.
func (m *Matcher) addInstrument(a *AddedInstrument) venue.RejectReason {
	switch {
	case a.ID == 0 || a.Symbol == "" || a.Tick.Mantissa <= 0 || a.Tick.Scale > tickScaleMax ||
		(a.Status != 0 && !a.Status.Valid()):
		return venue.RejectReasonInvalidInstrument
	}
	if _, dup := m.instrByID.lookup(a.ID); dup {
		return venue.RejectReasonDuplicateInstrument
	}
	if _, dup := m.listing.symbols[a.Symbol]; dup {
		return venue.RejectReasonDuplicateInstrument
	}
	if len(m.instruments) == cap(m.instruments) {
		return venue.RejectReasonCapacityExceeded
	}
	ic := InstrumentConfig{ID: a.ID, Symbol: a.Symbol, TickSize: a.Tick.String(), LotSize: a.LotSize, MinQty: a.MinQty,
		MaxQty: a.MaxQty, RefPriceTicks: a.RefPriceTicks, BandPercent: a.BandPercent, Status: a.Status}
	if ic.validate(m.listing.levelsMax, m.listing.qtyMax) != nil {
		return venue.RejectReasonInvalidInstrument
	}
	if a.Status == 0 {
		a.Status = venue.TradingStatusOpen
	}
	m.listInstrument(&ic)
	if in := &m.instruments[len(m.instruments)-1]; in.auction.phase != 0 { // listed in a call
		m.joinCalls(in)
	}
	m.listing.added = append(m.listing.added, *a)
	return venue.RejectReasonNone
}

// listInstrument appends an instrument to the table, within its capacity.
func (m *Matcher) listInstrument(ic *InstrumentConfig) {
	ii := uint16(len(m.instruments))
	m.instruments = append(m.instruments, newInstrument(ic))
	m.risk.freshInstrument(ii)
	m.instrByID.insert(ic.ID, ii)
	m.listing.symbols[ic.Symbol] = ii
}

// dropAddedInstruments forgets the added instruments (resetState): the
// table goes back to the configured ones.
func (m *Matcher) dropAddedInstruments() {
	if len(m.listing.added) == 0 {
		return
	}
	for _, a := range m.listing.added {
		delete(m.listing.symbols, a.Symbol)
	}
	clear(m.instruments[m.listing.configured:])
	m.instruments = m.instruments[:m.listing.configured]
	m.listing.added = m.listing.added[:0]
	ids := make([]uint32, m.listing.configured)
	for i := range ids {
		ids[i] = m.instruments[i].id
	}
	m.instrByID.rebuild(ids)
}

// referenceData is the fixed-width reference data of an instrument that an
// AddInstrument command and its InstrumentAdded event both carry (the
// symbol and group are set apart: the command refuses one too long).
type referenceData interface {
	SetInstrumentID(uint32)
	SetStatus(venue.TradingStatus)
	SetTickScale(uint8)
	SetTickMantissa(int64)
	SetLotSize(int64)
	SetMinQty(int64)
	SetMaxQty(int64)
	SetRefPriceTicks(int64)
	SetBandPercent(int64)
}

// setReferenceData writes a's reference data into a command or event.
func (a *AddedInstrument) setReferenceData(f referenceData) {
	f.SetInstrumentID(a.ID)
	f.SetStatus(a.Status)
	f.SetTickScale(uint8(a.Tick.Scale))
	f.SetTickMantissa(a.Tick.Mantissa)
	f.SetLotSize(a.LotSize)
	f.SetMinQty(a.MinQty)
	f.SetMaxQty(a.MaxQty)
	f.SetRefPriceTicks(a.RefPriceTicks)
	f.SetBandPercent(a.BandPercent)
}

func (m *Matcher) emitInstrumentAdded(a *AddedInstrument, reason venue.RejectReason, operator []byte) {
	var e venue.InstrumentAdded
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	a.setReferenceData(e)
	e.SetReason(reason)
	if reason == venue.RejectReasonNone {
		low, high, _ := m.Band(a.ID)
		e.SetBandLowTicks(low)
		e.SetBandHighTicks(high)
	}
	_ = e.SetSymbolString(a.Symbol) // both came from char[16] fields
	_ = e.SetGroupString(a.Group)
	_ = e.SetOperator(operator)
	m.sink.Commit()
}

// EncodeAddInstrument writes an AddInstrument command for a into buf (a
// command ring slot): the one encoder the admin API, tests and tools share.
// It refuses a symbol, group, operator or reason longer than its field.
func EncodeAddInstrument(buf []byte, seq uint64, timestampNs int64, a *AddedInstrument, operator, reason string) error {
	var c venue.AddInstrument
	if err := c.WrapEncode(buf, 0); err != nil {
		return err
	}
	if a.Tick.Scale < 0 || a.Tick.Scale > tickScaleMax {
		return configError("tick size has %d decimal places, at most %d", a.Tick.Scale, tickScaleMax)
	}
	c.SetSeq(seq)
	c.SetTimestampNs(timestampNs)
	a.setReferenceData(c)
	for _, err := range []error{c.SetSymbolString(a.Symbol), c.SetGroupString(a.Group),
		c.SetOperatorString(operator), c.SetReasonString(reason)} {
		if err != nil {
			return configError("symbol, group, operator or reason too long: %v", err)
		}
	}
	return nil
}
