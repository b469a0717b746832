package core

import (
	"math"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// This file is a read-only view of the matcher's state for tests and tools
// (market data compares its books with these). It must be called from the
// goroutine that applies commands, or while it is stopped: the matcher has
// no locks. The views copy; they never expose internal memory.

// Level is one price level of a book side.
type Level struct {
	PriceTicks int64
	Qty        int64
	Orders     int
}

// OrderView is a copy of one live order's state.
type OrderView struct {
	OrderID          uint64
	SessionIdx       uint16
	InstrumentID     uint32
	Side             venue.Side
	OrdType          venue.OrdType
	TimeInForce      venue.TimeInForce
	Flags            venue.OrderFlags
	StpMode          venue.StpMode
	PriceTicks       int64
	Qty              int64
	LeavesQty        int64
	CumQty           int64
	CumNotionalTicks int64
	ExpireTimeNs     int64
	StopPxTicks      int64 // Stop and StopLimit orders: the trigger price
	Waiting          bool  // off the book: an untriggered stop, or a market order queued for an uncross
	MaxFloorQty      int64 // an iceberg's display size, else 0
	DisplayQty       int64 // what the book shows: an iceberg's slice, else LeavesQty
	ClOrdID          string
	Account          string
}

// Counters are the identity counters: the last OrderID, ExecID and TradeID
// handed out (0 before the first).
type Counters struct {
	LastOrderID uint64
	LastExecID  uint64
	LastTradeID uint64
}

// Counters returns the identity counters.
func (m *Matcher) Counters() Counters {
	return Counters{LastOrderID: m.lastOrderID, LastExecID: m.lastExecID, LastTradeID: m.lastTradeID}
}

// LastExecID is the ExecID of the last report the matcher issued (0: none):
// ExecIDs rise by one per report for the venue's whole life, snapshots
// included, so a client holding a higher one heard of commands this
// matcher has not applied.
func (m *Matcher) LastExecID() uint64 { return m.lastExecID }

// RestingOrders returns the number of orders resting in all books (not
// counting the untriggered stops, which are not in a book).
func (m *Matcher) RestingOrders() int { return m.pool.inUse - m.stopsWaiting }

// Usage is how much of each bound of Config the matcher holds.
type Usage struct {
	Orders, OrdersMax     int // order slots: resting orders and untriggered stops
	Stops, StopsMax       int // untriggered stops
	ClOrdIDs, ClOrdIDsMax int // ClOrdIDs remembered since the last EndOfDay
}

// Usage returns how much of its bounds the matcher holds, for an operator
// to see a bound coming before orders are refused at it.
func (m *Matcher) Usage() Usage {
	return Usage{Orders: m.pool.inUse, OrdersMax: m.ordersMax, Stops: m.stopsWaiting, StopsMax: m.stopsMax,
		ClOrdIDs: m.index.recsUsed, ClOrdIDsMax: len(m.index.recs)}
}

// WaitingStops returns the number of untriggered stop orders.
func (m *Matcher) WaitingStops() int { return m.stopsWaiting }

// TradingStatus returns an instrument's status, or ok=false when it is unknown.
func (m *Matcher) TradingStatus(instrumentID uint32) (venue.TradingStatus, bool) {
	ii, ok := m.instrByID.lookup(instrumentID)
	if !ok {
		return 0, false
	}
	return m.instruments[ii].status, true
}

// VolatilityAuction returns, for an instrument in a volatility auction, the
// command time its uncross is due at and the call it extends (OpeningCall
// or ClosingCall; VolatilityAuction for an interruption of continuous
// trading); ok=false when the instrument is in none.
func (m *Matcher) VolatilityAuction(instrumentID uint32) (endNs int64, extends venue.TradingStatus, ok bool) {
	ii, known := m.instrByID.lookup(instrumentID)
	if !known || m.instruments[ii].status != venue.TradingStatusVolatilityAuction {
		return 0, 0, false
	}
	a := &m.instruments[ii].auction
	return a.endNs, a.phase, true
}

// HaltedFrom returns, for a halted instrument, the status its halt
// interrupted, where resuming it returns it as it would be without the
// halt; ok=false when the instrument is not halted or that is not known
// (halted as configured, restored from a snapshot of version 7 or older, or
// a phase change passed over the halt since: its group's phase says where
// it would be).
func (m *Matcher) HaltedFrom(instrumentID uint32) (venue.TradingStatus, bool) {
	ii, known := m.instrByID.lookup(instrumentID)
	if !known || m.instruments[ii].haltedFrom == 0 {
		return 0, false
	}
	return m.instruments[ii].haltedFrom, true
}

// CommandTimeNs is the timestamp of the last command applied (0 before
// the first): a command stamped earlier bounds the auction timers by its
// time ("Auctions" above), which the control plane's timer asks for once
// the clock reads more than a second before it (package ops).
func (m *Matcher) CommandTimeNs() int64 { return m.nowNs }

// NextDueNs is the command time from which the next command runs one of
// the matcher's timers: it ends a volatility auction, publishes an
// indicative uncross the throttle held back, or expires a GTD order
// (math.MaxInt64: none waits). A command stamped earlier runs none. The
// control plane journals a Tick then, so that an idle venue does it at its
// time ("Auctions", "Time in force" above; package ops).
func (m *Matcher) NextDueNs() int64 {
	due := m.timerDueNs
	if oi, expireNs := m.gtd.top(); oi != noOrder && expireNs < math.MaxInt64 {
		due = min(due, expireNs+1) // expired once a command's time passes it
	}
	return due
}

// Band returns an instrument's price band in ticks (both edges allowed).
func (m *Matcher) Band(instrumentID uint32) (lowTicks, highTicks int64, ok bool) {
	ii, ok := m.instrByID.lookup(instrumentID)
	if !ok {
		return 0, 0, false
	}
	in := &m.instruments[ii]
	return in.bandLowTicks, in.bandHighTicks, true
}

// bookSideOf returns a side of an instrument, or nil.
func (m *Matcher) bookSideOf(instrumentID uint32, side venue.Side) (*instrument, *bookSide) {
	ii, ok := m.instrByID.lookup(instrumentID)
	if !ok || !side.Valid() {
		return nil, nil
	}
	in := &m.instruments[ii]
	return in, &in.sides[sideIndex(side)]
}

// BookLevels appends the non-empty levels of one side, best first, to dst.
func (m *Matcher) BookLevels(instrumentID uint32, side venue.Side, dst []Level) []Level {
	in, bs := m.bookSideOf(instrumentID, side)
	if bs == nil {
		return dst
	}
	for li := bs.best; li >= 0; li = bs.nextBest(li) {
		lv := &bs.levels[li]
		dst = append(dst, Level{PriceTicks: in.bandLowTicks + int64(li), Qty: lv.qty, Orders: int(lv.orders)})
	}
	return dst
}

// BookOrders appends the orders of one side in priority order (best price
// first, then time) to dst.
func (m *Matcher) BookOrders(instrumentID uint32, side venue.Side, dst []OrderView) []OrderView {
	_, bs := m.bookSideOf(instrumentID, side)
	if bs == nil {
		return dst
	}
	for li := bs.best; li >= 0; li = bs.nextBest(li) {
		for oi := bs.levels[li].head; oi != noOrder; oi = m.pool.orders[oi].next {
			dst = append(dst, m.orderView(oi))
		}
	}
	return dst
}

// OpenOrders appends every live order of an instrument to dst: both sides'
// book orders (BookOrders), then the market orders waiting for an uncross
// (AuctionMarketOrders), then the untriggered stops (StopOrders). These are
// the orders the events have opened and not yet ended, so a view kept from
// the events (the gateway's open orders, the control plane's monitor) holds
// exactly these.
func (m *Matcher) OpenOrders(instrumentID uint32, dst []OrderView) []OrderView {
	for _, side := range [2]venue.Side{venue.SideBuy, venue.SideSell} {
		dst = m.BookOrders(instrumentID, side, dst)
	}
	for _, side := range [2]venue.Side{venue.SideBuy, venue.SideSell} {
		dst = m.AuctionMarketOrders(instrumentID, side, dst)
	}
	for _, side := range [2]venue.Side{venue.SideBuy, venue.SideSell} {
		dst = m.StopOrders(instrumentID, side, dst)
	}
	return dst
}

// StopOrders appends the untriggered stops of one side in election order
// (the stop price a moving price reaches first, then time) to dst.
func (m *Matcher) StopOrders(instrumentID uint32, side venue.Side, dst []OrderView) []OrderView {
	in, bs := m.bookSideOf(instrumentID, side)
	if bs == nil {
		return dst
	}
	ss := &in.stops[sideIndex(side)]
	for li := ss.best; li >= 0; li = ss.nextBest(li) {
		for oi := ss.levels[li].head; oi != noOrder; oi = m.pool.orders[oi].next {
			dst = append(dst, m.orderView(oi))
		}
	}
	return dst
}

// LastTradePrice returns an instrument's last trade price, ok=false before
// its first trade (or for an unknown instrument).
func (m *Matcher) LastTradePrice(instrumentID uint32) (priceTicks int64, ok bool) {
	ii, found := m.instrByID.lookup(instrumentID)
	if !found || m.instruments[ii].lastTradeTicks == 0 {
		return 0, false
	}
	return m.instruments[ii].lastTradeTicks, true
}

// Order returns the live order with this OrderID.
func (m *Matcher) Order(orderID uint64) (OrderView, bool) {
	ri := m.index.findOrder(orderID)
	if ri == noRec || m.index.recs[ri].slot == noOrder {
		return OrderView{}, false
	}
	return m.orderView(m.index.recs[ri].slot), true
}

// SupersededClOrdID is a ClOrdID a replace took from a live order: a
// cancel or replace naming it addresses the order (locate finds it, and
// its reject gives the order's OrderID and status).
type SupersededClOrdID struct {
	SessionIdx uint16
	OrderID    uint64
	ClOrdID    string
}

// SupersededClOrdIDs appends to dst the ClOrdIDs replaces have taken from
// the orders still live since the last EndOfDay (which forgets them), in
// the order they were given: what a view of the open orders kept from the
// events holds beside their current ClOrdIDs (gateway, rejectCancel). It
// reads every record of the day, once, at start-up.
func (m *Matcher) SupersededClOrdIDs(dst []SupersededClOrdID) []SupersededClOrdID {
	for ri := range m.index.recsUsed {
		r := &m.index.recs[ri]
		if r.ordStatus != venue.OrdStatusReplaced || r.slot != noOrder {
			continue
		}
		// A done cancel's recorded ClOrdID is Replaced too, but its order has ended.
		if cur := m.index.findOrder(r.orderID); cur == noRec || m.index.recs[cur].slot == noOrder {
			continue
		}
		dst = append(dst, SupersededClOrdID{SessionIdx: r.sessionIdx, OrderID: r.orderID, ClOrdID: string(r.id())})
	}
	return dst
}

// EndedClOrdID is a ClOrdID that names an order ended today (filled,
// cancelled, expired): the order's last ClOrdID, one a replace took from
// it or a done cancel's. A cancel or replace naming it is too late
// (locate, supersededOfEnded), and its reject gives the order's OrderID
// and final status, OrdStatus.
type EndedClOrdID struct {
	SessionIdx uint16
	OrderID    uint64
	ClOrdID    string
	OrdStatus  venue.OrdStatus
}

// EndedClOrdIDs appends to dst the ClOrdIDs of the orders ended since the
// last EndOfDay (which forgets them), in the order they were given: what
// a view of the open orders kept from the events holds of the orders it
// no longer has (gateway, rejectCancel). It reads every record of the
// day, once, at start-up.
func (m *Matcher) EndedClOrdIDs(dst []EndedClOrdID) []EndedClOrdID {
	for ri := range m.index.recsUsed {
		r := &m.index.recs[ri]
		if r.slot != noOrder {
			continue
		}
		status := r.ordStatus
		if status == venue.OrdStatusReplaced {
			// A ClOrdID a replace or a done cancel left: the order's
			// current record says whether, and how, it ended.
			cur := m.index.findOrder(r.orderID)
			if cur == noRec || m.index.recs[cur].slot != noOrder {
				continue
			}
			status = m.index.recs[cur].ordStatus
		}
		dst = append(dst, EndedClOrdID{SessionIdx: r.sessionIdx, OrderID: r.orderID, ClOrdID: string(r.id()), OrdStatus: status})
	}
	return dst
}

// OrderTerms is what an order is beyond what its Fill and OrderCancelled
// events carry, as its OrderAccepted and OrderReplaced events last gave it:
// the terms every report of the order repeats (gateway/doc.go).
type OrderTerms struct {
	StopPxTicks  int64            // Stop and StopLimit: the stop price, else 0
	ExpireTimeNs int64            // GTD: the expire time, else 0
	MaxFloorQty  int64            // an iceberg's display size, else 0
	Flags        venue.OrderFlags // PostOnly and Iceberg as the order has them
}

// OrderTerms returns the terms of the order with this OrderID, live or
// ended since the last EndOfDay (the record of an ended order keeps them:
// recordTerms); ok is false for an OrderID the matcher does not know. It
// may also be called from an EventSink's Commit while the command runs: a
// Fill, an OrderCancelled or an OrderReplaced is emitted while its order is
// still live, and the terms read then are the ones its report gives (a rebuild of reports
// after a crash reads them so: gateway.LostReports).
func (m *Matcher) OrderTerms(orderID uint64) (t OrderTerms, ok bool) {
	ri := m.index.findOrder(orderID)
	if ri == noRec {
		return t, false
	}
	if oi := m.index.recs[ri].slot; oi != noOrder {
		o := &m.pool.orders[oi]
		return OrderTerms{StopPxTicks: m.stopPxOf(oi), ExpireTimeNs: o.expireTimeNs, MaxFloorQty: m.maxFloorOf(oi),
			Flags: o.flags & (venue.OrderFlagsPostOnly | venue.OrderFlagsIceberg)}, true
	}
	k := &m.index.terms[ri] // zero when the order had none (recordTerms)
	return OrderTerms{StopPxTicks: k.stopPxTicks, ExpireTimeNs: k.expireTimeNs, MaxFloorQty: k.maxFloorQty, Flags: k.flags}, true
}

func (m *Matcher) orderView(oi orderIdx) OrderView {
	o := &m.pool.orders[oi]
	return OrderView{
		OrderID:          o.orderID,
		SessionIdx:       o.sessionIdx,
		InstrumentID:     m.instrumentOf(o).id,
		Side:             o.side,
		OrdType:          o.ordType,
		TimeInForce:      o.tif,
		Flags:            o.flags,
		StpMode:          o.stpMode,
		PriceTicks:       o.priceTicks,
		Qty:              o.qty,
		LeavesQty:        o.leavesQty,
		CumQty:           o.cumQty,
		CumNotionalTicks: o.cumNotionalTicks,
		ExpireTimeNs:     o.expireTimeNs,
		StopPxTicks:      m.stopPxOf(oi),
		Waiting:          o.waiting,
		MaxFloorQty:      m.maxFloorOf(oi),
		DisplayQty:       m.displayOf(oi),
		ClOrdID:          string(m.index.recs[o.rec].id()),
		Account:          string(trimNUL(o.account[:])),
	}
}
