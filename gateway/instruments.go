package gateway

import (
	"sync/atomic"

	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// instrumentTable is what the gateway knows of the listed instruments. It
// is never changed in place: FIX session goroutines read the current table
// through one atomic load, and outbound, the only writer, installs a copy
// with one more instrument when an InstrumentAdded event arrives (see
// "Adding an instrument" in docs/ARCHITECTURE.md), or with an instrument's
// new band when an operator moved it. Statuses are atomics shared by every
// copy.
type instrumentTable struct {
	list     []*Instrument // in listing order: the configuration's, then the added ones
	bySymbol map[string]*Instrument
	byID     map[uint32]*Instrument
	status   map[uint32]*atomic.Uint32
}

func newInstrumentTable(instruments []Instrument) *instrumentTable {
	t := &instrumentTable{bySymbol: map[string]*Instrument{}, byID: map[uint32]*Instrument{}, status: map[uint32]*atomic.Uint32{}}
	for i := range instruments {
		t.enter(&instruments[i])
	}
	return t
}

// enter lists an instrument in a table that no reader has seen yet.
func (t *instrumentTable) enter(in *Instrument) {
	if in.Status == 0 {
		in.Status = venue.TradingStatusOpen
	}
	st := new(atomic.Uint32)
	st.Store(uint32(in.Status))
	t.list = append(t.list, in)
	t.bySymbol[in.Symbol] = in
	t.byID[in.ID] = in
	t.status[in.ID] = st
}

// with returns a copy of the table with one more instrument.
func (t *instrumentTable) with(in *Instrument) *instrumentTable {
	c := &instrumentTable{list: make([]*Instrument, len(t.list), len(t.list)+1),
		bySymbol: make(map[string]*Instrument, len(t.bySymbol)+1), byID: make(map[uint32]*Instrument, len(t.byID)+1),
		status: make(map[uint32]*atomic.Uint32, len(t.status)+1)}
	copy(c.list, t.list)
	for k, v := range t.bySymbol {
		c.bySymbol[k] = v
	}
	for k, v := range t.byID {
		c.byID[k] = v
	}
	for k, v := range t.status {
		c.status[k] = v
	}
	c.enter(in)
	return c
}

// bySymbol returns the instrument listed under a symbol, or nil.
func (g *Gateway) bySymbol(symbol string) *Instrument { return g.instruments.Load().bySymbol[symbol] }

// bySymbolBytes is bySymbol for a symbol read from a message: the map
// lookup converts it without allocating.
func (g *Gateway) bySymbolBytes(symbol []byte) *Instrument {
	return g.instruments.Load().bySymbol[string(symbol)]
}

// byID returns the instrument with a wire id, or nil.
func (g *Gateway) byID(id uint32) *Instrument { return g.instruments.Load().byID[id] }

// onInstrumentAdded (outbound) lists an instrument the matcher added. It
// takes effect at once, before the command is durable: an order for it is
// a later command, so it is answered only after the addition is durable
// too, and a status change or a SecurityList in the same chunk finds it.
// Every session logged on at the hand-over is told of the new trading
// session with an unsolicited TradingSessionStatus (325=Y) of its status,
// as it is told of every status change: a client that keeps the statuses
// from those knows the instrument and whether it trades, and asks its terms
// with a SecurityListRequest (docs/ARCHITECTURE.md, "Adding an instrument").
func (g *Gateway) onInstrumentAdded(e *venue.InstrumentAdded) {
	if e.Reason() != venue.RejectReasonNone || g.byID(e.InstrumentID()) != nil {
		return
	}
	in := &Instrument{ID: e.InstrumentID(), Symbol: string(e.Symbol()),
		Tick:    decimal.Tick{Mantissa: e.TickMantissa(), Scale: int(e.TickScale())},
		LotSize: e.LotSize(), MinQty: e.MinQty(), MaxQty: e.MaxQty(),
		BandLowTicks: e.BandLowTicks(), BandHighTicks: e.BandHighTicks(), Status: e.Status()}
	g.instruments.Store(g.instruments.Load().with(in))
	text := instrumentAddedText
	if st := g.statusText(in.ID, in.Status); st != "" {
		text += "; " + st
	}
	for _, s := range g.sessions {
		m := tradingSessionStatus("", in.Symbol, tradSesStatusOf(in.Status), text)
		m.Body.SetString(tag.UnsolicitedIndicator, string(fixYes))
		g.held = append(g.held, heldAnswer{idx: s.idx, m: m, broadcast: true})
	}
}

// instrumentAddedText starts the Text of the TradingSessionStatus that
// announces an added instrument.
const instrumentAddedText = "instrument added: its terms are in the SecurityList"

// onBandMoved (outbound) notes the price band an operator's SetPriceBand
// put in force, so that SecurityList answers and the Text of a reject for a
// price outside the band give the band the matcher checks (they kept the
// band of the start: a price inside it was refused as "outside 90.00 to
// 110.00"). The instrument is replaced by a copy in a new table, as readers
// never see a table change (docs/ARCHITECTURE.md, "SecurityList").
func (g *Gateway) onBandMoved(e *venue.OperatorResult) {
	if e.Action() != venue.OperatorActionTypeSetPriceBand || e.Reason() != venue.RejectReasonNone {
		return
	}
	t := g.instruments.Load()
	old := t.byID[e.InstrumentID()]
	if old == nil {
		return
	}
	in := *old
	in.BandLowTicks, in.BandHighTicks = core.BandTicks(e.RefPriceTicks(), e.BandPercent())
	g.instruments.Store(t.replacing(&in))
}

// replacing returns a copy of the table in which in takes the place of the
// instrument with its id.
func (t *instrumentTable) replacing(in *Instrument) *instrumentTable {
	c := &instrumentTable{list: make([]*Instrument, len(t.list)), bySymbol: make(map[string]*Instrument, len(t.bySymbol)),
		byID: make(map[uint32]*Instrument, len(t.byID)), status: t.status}
	for i, x := range t.list {
		if x.ID == in.ID {
			x = in
		}
		c.list[i] = x
		c.bySymbol[x.Symbol] = x
		c.byID[x.ID] = x
	}
	return c
}

// Knows reports whether the gateway lists an instrument.
func (g *Gateway) Knows(id uint32) bool { return g.byID(id) != nil }

// ListsSymbol reports whether the gateway lists an instrument under symbol
// (FIX market data asks it of a symbol its depth cache does not hold yet:
// fixmd.Lister).
func (g *Gateway) ListsSymbol(symbol string) bool { return g.bySymbol(symbol) != nil }

// InstrumentCount returns how many instruments the gateway lists now.
func (g *Gateway) InstrumentCount() int { return len(g.instruments.Load().list) }
