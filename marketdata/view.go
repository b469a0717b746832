package marketdata

import (
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// Level is one price level as the feed shows it.
type Level struct {
	PriceTicks int64
	Qty        int64
	OrderCount int
}

// BookOrder is one resting order as the feed shows it.
type BookOrder struct {
	OrderID OrderID // the venue's
	// PublicID is the id the feed shows it under: OrderID, or a refilled
	// slice's own (RefillIDBase).
	PublicID   OrderID
	PriceTicks int64
	Qty        int64 // leaves
}

// InstrumentState is an instrument's non-book state.
type InstrumentState struct {
	Def                 InstrumentDef
	Status              mdsbe.TradingStatus
	RptSeq              uint64 // rptSeq of the instrument's last published message
	LastTradePriceTicks int64
	LastTradeQty        int64 // 0 before the first trade
	Volume              int64
	BidLevels           int
	AskLevels           int
	Indicative          Indicative // the call's indicative uncross, if any
}

// The views below read the tracker's books. Like Apply they belong to the
// tracker's goroutine; other goroutines use a DepthCache (or the Feed's
// snapshot) instead. None of them allocates when dst has room.

func (t *Tracker) side(id InstrumentID, side mdsbe.Side) (*bookSide, error) {
	i, ok := t.instIndex[id]
	if !ok {
		return nil, ErrUnknownInstrument
	}
	switch side {
	case mdsbe.SideBuy:
		return &t.insts[i].sides[bidSide], nil
	case mdsbe.SideSell:
		return &t.insts[i].sides[askSide], nil
	}
	return nil, ErrInconsistent
}

// AppendLevels appends up to depth levels of one side, best first, to dst
// (depth <= 0 means all).
func (t *Tracker) AppendLevels(dst []Level, id InstrumentID, side mdsbe.Side, depth int) ([]Level, error) {
	s, err := t.side(id, side)
	if err != nil {
		return dst, err
	}
	for i := len(s.levels) - 1; i >= 0 && (depth <= 0 || len(s.levels)-i <= depth); i-- {
		lv := &s.levels[i]
		dst = append(dst, Level{PriceTicks: lv.priceTicks, Qty: lv.qty, OrderCount: int(lv.orderCount)})
	}
	return dst, nil
}

// TopOfBook fills bids and asks (reset to length 0) with up to depth levels
// per side: the answer a FIX MarketDataRequest needs.
func (t *Tracker) TopOfBook(id InstrumentID, depth int, bids, asks []Level) ([]Level, []Level, error) {
	bids, err := t.AppendLevels(bids[:0], id, mdsbe.SideBuy, depth)
	if err != nil {
		return bids, asks[:0], err
	}
	asks, err = t.AppendLevels(asks[:0], id, mdsbe.SideSell, depth)
	return bids, asks, err
}

// AppendOrders appends the resting orders of one side in priority order
// (best level first, then time) to dst.
func (t *Tracker) AppendOrders(dst []BookOrder, id InstrumentID, side mdsbe.Side) ([]BookOrder, error) {
	s, err := t.side(id, side)
	if err != nil {
		return dst, err
	}
	for i := len(s.levels) - 1; i >= 0; i-- {
		for oi := s.levels[i].head; oi != noOrder; oi = t.orders[oi].next {
			o := &t.orders[oi]
			dst = append(dst, BookOrder{OrderID: o.id, PublicID: o.pub, PriceTicks: o.priceTicks, Qty: o.leavesQty})
		}
	}
	return dst, nil
}

// State returns an instrument's status, trade summary and rptSeq.
func (t *Tracker) State(id InstrumentID) (InstrumentState, error) {
	i, ok := t.instIndex[id]
	if !ok {
		return InstrumentState{}, ErrUnknownInstrument
	}
	in := &t.insts[i]
	return InstrumentState{Def: in.def, Status: in.status, RptSeq: in.rptSeq,
		LastTradePriceTicks: in.lastTradePriceTicks, LastTradeQty: in.lastTradeQty, Volume: in.volume,
		BidLevels: len(in.sides[bidSide].levels), AskLevels: len(in.sides[askSide].levels), Indicative: in.indicative}, nil
}

// Instruments returns the instrument definitions: the configured ones in
// configuration order, then those added by InstrumentAdded events.
func (t *Tracker) Instruments() []InstrumentDef {
	out := make([]InstrumentDef, len(t.insts))
	for i := range t.insts {
		out[i] = t.insts[i].def
	}
	return out
}

// TrackerStats counts the tracker's work.
type TrackerStats struct {
	EventsApplied  uint64 // events that passed through Apply without error
	EventsIgnored  uint64 // events of templates that carry nothing for the feed
	MessagesQueued uint64 // sequenced instrument messages written
	OrdersHeld     int    // orders resting or in flight
}

// Stats returns the counters.
func (t *Tracker) Stats() TrackerStats {
	return TrackerStats{EventsApplied: t.eventsApplied, EventsIgnored: t.eventsIgnored,
		MessagesQueued: t.messagesQueued, OrdersHeld: t.index.count}
}
