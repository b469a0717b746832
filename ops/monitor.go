package ops

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"github.com/fixvenue/fixvenue/internal/await"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Monitor is an event-ring consumer that keeps what the operator sees of
// the market (status, best bid and offer, resting orders per instrument,
// open orders per session, waiting stops included; the day's trades are the DaySource's) and hands OperatorResult events to the calls
// waiting for them. It learns only from events, like market data: the
// matcher's state is never read from another goroutine (DESIGN.md,
// "Control plane apart from the data plane").
type Monitor struct {
	mu          sync.Mutex
	instruments map[uint32]*instrumentView
	orders      map[uint64]restingOrder
	bySession   map[uint16]int
	waiters     await.Waits[uint64, Result]
	hash        *xxhash.Digest
	events      int64
	results     map[resultKey]int64
	// resultSeq is the seq of the last OperatorCommand whose result was
	// seen, stored once the result is handed to its wait: the matcher
	// applies commands in seq order, so every one up to it is applied
	// (Ops.applied: a call that timed out is carried out once its command
	// is).
	resultSeq atomic.Uint64
	// endOfDay is the result of the last EndOfDay command seen: the
	// report of an end of day whose call timed out takes its count of
	// expired orders from it (Ops.archiveAwaited).
	endOfDay atomic.Pointer[Result]
	// added are the instruments listed by InstrumentAdded events since
	// start; onAdded, when set, hears of each (under mu).
	added   addedList
	onAdded func(config.Instrument)
}

// instrumentView is the monitor's picture of one instrument.
type instrumentView struct {
	status venue.TradingStatus
	// haltedFrom, while halted, is the status the halt interrupted, as the
	// matcher keeps it (core.Matcher.HaltedFrom): 0 when not known.
	haltedFrom venue.TradingStatus
	// auctionEndNs and auctionOf, in a volatility auction: when it
	// uncrosses, as announced, and the call it extends (VolatilityAuction
	// for an interruption of continuous trading).
	auctionEndNs  int64
	auctionOf     venue.TradingStatus
	refPriceTicks int64 // the band's reference (movedBand after a restart)
	bandPercent   int64
	bandLowTicks  int64
	bandHighTicks int64
	restingOrders int
	bids, asks    map[int64]int64 // price → resting quantity
}

type restingOrder struct {
	instrumentID uint32
	session      uint16
	side         venue.Side
	priceTicks   int64
	leavesQty    int64
	// waiting: a stop waiting for its trigger, off the book: an open order
	// of its session (a FIX client's OrderMassStatusRequest lists it, and
	// a cancel of the session's orders cancels it), at no price level.
	waiting bool
}

type resultKey struct {
	action venue.OperatorActionType
	reason venue.RejectReason
}

// Result is the outcome of an OperatorCommand, from its OperatorResult event.
type Result struct {
	Seq    uint64
	Action venue.OperatorActionType
	Reason venue.RejectReason
	Count  uint32
	// OrderID, Session and Instrument: a CancelOrder's order, as the
	// matcher found it (OrderID 0: none).
	OrderID    uint64
	Session    uint16
	Instrument uint32
	// TimestampNs is the command's time, as the matcher applied it.
	TimestampNs int64
}

// InstrumentState is a copy of the monitor's view of one instrument.
type InstrumentState struct {
	Status venue.TradingStatus
	// HaltedFrom, for a halted instrument, is the status its halt
	// interrupted, where a resume returns it (Closed for one closed before
	// it was halted); 0 when not known: a phase change passed over the halt
	// since (its group's phase says where it would be), or the instrument
	// was halted before a restart from a snapshot that did not keep it.
	HaltedFrom venue.TradingStatus
	// AuctionEndNs and AuctionOf, in a volatility auction (0 otherwise):
	// when its uncross is due, as its VolatilityInterruption announced (a
	// clock stepped back ends it earlier: core, "Auctions"), and the call
	// it extends, OpeningCall or ClosingCall, or VolatilityAuction for an
	// interruption of continuous trading.
	AuctionEndNs         int64
	AuctionOf            venue.TradingStatus
	RefPriceTicks        int64
	BandPercent          int64
	BandLowTicks         int64
	BandHighTicks        int64
	RestingOrders        int
	BidTicks, BidQty     int64 // zero when no bid
	AskTicks, AskQty     int64 // zero when no ask
	BidLevels, AskLevels int
	// BidQtyTotal and AskQtyTotal are the quantity resting on each side.
	BidQtyTotal, AskQtyTotal int64
}

// UncrossTo is where an operator's resume takes an instrument in a call
// that is not halted (the console's Uncross): Closed for the closing call's
// extension, whose uncross ends the day's trading as the close would have,
// else Open.
func (st InstrumentState) UncrossTo() venue.TradingStatus {
	if st.Status == venue.TradingStatusVolatilityAuction && st.AuctionOf == venue.TradingStatusClosingCall {
		return venue.TradingStatusClosed
	}
	return venue.TradingStatusOpen
}

// instrumentSeed is what the monitor starts from for one instrument.
type instrumentSeed struct {
	status                      venue.TradingStatus
	auctionEndNs                int64
	auctionOf                   venue.TradingStatus
	haltedFrom                  venue.TradingStatus
	refPriceTicks, bandPercent  int64
	bandLowTicks, bandHighTicks int64
}

func newMonitor(seeds map[uint32]instrumentSeed) *Monitor {
	m := &Monitor{instruments: make(map[uint32]*instrumentView, len(seeds)), orders: map[uint64]restingOrder{},
		bySession: map[uint16]int{}, hash: xxhash.New(), results: map[resultKey]int64{}}
	for id, sd := range seeds {
		m.instruments[id] = &instrumentView{status: sd.status, auctionEndNs: sd.auctionEndNs, auctionOf: sd.auctionOf, haltedFrom: sd.haltedFrom,
			refPriceTicks: sd.refPriceTicks, bandPercent: sd.bandPercent,
			bandLowTicks: sd.bandLowTicks, bandHighTicks: sd.bandHighTicks, bids: map[int64]int64{}, asks: map[int64]int64{}}
	}
	return m
}

// instrumentSeeds reads each instrument's status and band from a matcher
// that is not running.
func instrumentSeeds(m *core.Matcher, instruments []config.Instrument) map[uint32]instrumentSeed {
	seeds := make(map[uint32]instrumentSeed, len(instruments))
	for _, in := range instruments {
		st, _ := m.TradingStatus(in.ID)
		// The band in force is the matcher's (an operator may have moved it
		// before a restart); its reference price and percent are the
		// configured ones while it is still the configured band.
		sd := instrumentSeed{status: st}
		sd.auctionEndNs, sd.auctionOf, _ = m.VolatilityAuction(in.ID)
		sd.haltedFrom, _ = m.HaltedFrom(in.ID)
		sd.bandLowTicks, sd.bandHighTicks, _ = m.Band(in.ID)
		if low, high := core.BandTicks(in.RefPriceTicks, in.BandPercent); low == sd.bandLowTicks && high == sd.bandHighTicks {
			sd.refPriceTicks, sd.bandPercent = in.RefPriceTicks, in.BandPercent
		} else {
			sd.refPriceTicks, sd.bandPercent = movedBand(sd.bandLowTicks, sd.bandHighTicks)
		}
		seeds[in.ID] = sd
	}
	return seeds
}

// movedBand gives the reference price and percent of a band an operator
// set (SetPriceBand): the reference is its centre (core.BandCentreTicks).
// The percent is the one that gives these edges, 0 (unknown) when several
// do, as for a reference of few ticks.
func movedBand(lowTicks, highTicks int64) (refTicks, percent int64) {
	if lowTicks <= 0 || highTicks < lowTicks {
		return 0, 0
	}
	refTicks = core.BandCentreTicks(lowTicks, highTicks)
	for p := int64(1); p < 100; p++ {
		if low, high := core.BandTicks(refTicks, p); low == lowTicks && high == highTicks {
			if percent != 0 {
				return refTicks, 0
			}
			percent = p
		}
	}
	return refTicks, percent
}

// restViews enters orders read from the books.
func (m *Monitor) restViews(views []core.OrderView) {
	for _, v := range views {
		// An untriggered stop is off the book (an elected one waiting for an
		// uncross rests, as a market order does).
		waiting := v.Waiting && core.IsStop(v.OrdType) && v.StopPxTicks != 0
		m.rest(v.OrderID, restingOrder{instrumentID: v.InstrumentID, session: v.SessionIdx, side: v.Side,
			priceTicks: v.PriceTicks, leavesQty: v.LeavesQty, waiting: waiting})
	}
}

// restBooks enters the live orders of a stopped matcher (OpenOrders).
func (m *Monitor) restBooks(matcher *core.Matcher, instruments []config.Instrument) {
	var views []core.OrderView
	for _, in := range instruments {
		views = matcher.OpenOrders(in.ID, views[:0])
		m.restViews(views)
	}
}

// takeResting moves the resting orders of a standby monitor into m (whose
// instruments are seeded): maps change hands, nothing is copied. It takes
// nothing and reports false when the standby has orders of an instrument m
// does not list.
func (m *Monitor) takeResting(from *Monitor) bool {
	from.mu.Lock()
	defer from.mu.Unlock()
	for id, f := range from.instruments {
		if m.instruments[id] == nil && f.restingOrders > 0 {
			return false
		}
	}
	m.orders, m.bySession = from.orders, from.bySession
	for id, in := range m.instruments {
		if f := from.instruments[id]; f != nil {
			in.restingOrders, in.bids, in.asks = f.restingOrders, f.bids, f.asks
		}
	}
	from.orders, from.bySession, from.instruments = map[uint64]restingOrder{}, map[uint16]int{}, map[uint32]*instrumentView{}
	return true
}

// StandbyResting is the control plane's view of the resting orders kept
// outside a venue: a cluster's follower applies to it the events of every
// committed command, so that a new leader's control plane takes it ready
// (Config.Standby) instead of walking its books (docs/benchmarks.md,
// "failover"). It holds one entry per order resting in the matcher's
// books or stop waiting for its trigger, so the matcher's bounds
// (orders_max, stops_max) bound it.
type StandbyResting struct{ m *Monitor }

// NewStandbyResting starts the view from a stopped matcher: its live
// orders as the caller read them (core.Matcher.OpenOrders of the
// instruments), or, when nil, read here.
func NewStandbyResting(matcher *core.Matcher, instruments []config.Instrument, live []core.OrderView) *StandbyResting {
	m := newMonitor(instrumentSeeds(matcher, instruments))
	if live != nil {
		m.restViews(live)
	} else {
		m.restBooks(matcher, instruments)
	}
	return &StandbyResting{m: m}
}

// Event applies one event of a committed command.
func (r *StandbyResting) Event(ev []byte) {
	r.m.mu.Lock()
	r.m.apply(ev)
	r.m.mu.Unlock()
}

// Diff describes the first difference between the resting orders of two
// views ("" when equal): the check that a view kept from events equals one
// read from the books.
func (r *StandbyResting) Diff(o *StandbyResting) string {
	a, b := r.m, o.m
	if len(a.orders) != len(b.orders) || !maps.Equal(a.bySession, b.bySession) {
		for id, x := range a.orders {
			if _, ok := b.orders[id]; !ok {
				return fmt.Sprintf("DEBUG order %d %+v only in first; orders %d/%d", id, x, len(a.orders), len(b.orders))
			}
		}
		return fmt.Sprintf("orders %d/%d, per session %v/%v", len(a.orders), len(b.orders), a.bySession, b.bySession)
	}
	for id, x := range a.orders {
		if y, ok := b.orders[id]; !ok || x != y {
			return fmt.Sprintf("order %d: %+v / %+v (present %v)", id, x, y, ok)
		}
	}
	for id, x := range a.instruments {
		y := b.instruments[id]
		if y == nil {
			if x.restingOrders != 0 {
				return fmt.Sprintf("instrument %d: %d orders / unknown", id, x.restingOrders)
			}
			continue
		}
		if x.restingOrders != y.restingOrders || !maps.Equal(x.bids, y.bids) || !maps.Equal(x.asks, y.asks) {
			return fmt.Sprintf("instrument %d: %d orders bids %v asks %v / %d orders bids %v asks %v",
				id, x.restingOrders, x.bids, x.asks, y.restingOrders, y.bids, y.asks)
		}
	}
	return ""
}

// run consumes the event ring until the barrier is alerted or closed.
func (m *Monitor) run(events *ring.Ring, barrier *ring.Barrier, own *ring.Sequence) {
	next := own.Load() + 1
	for {
		avail, err := barrier.WaitFor(next)
		if err != nil {
			return
		}
		m.mu.Lock()
		for ; next <= avail; next++ {
			m.apply(events.Slot(next))
		}
		m.mu.Unlock()
		own.Store(avail)
		events.Wake()
	}
}

// apply updates the view with one event (m.mu held).
func (m *Monitor) apply(ev []byte) {
	n := venue.MessageHeaderSize + int(binary.LittleEndian.Uint16(ev))
	if n <= len(ev) {
		_, _ = m.hash.Write(ev[:n])
	}
	m.events++
	tid, err := venue.TemplateIDOf(ev, 0)
	if err != nil {
		return
	}
	switch tid {
	case venue.OrderAcceptedTemplateID:
		var e venue.OrderAccepted
		// A stop waits off the book until its OrderTriggered.
		if e.WrapDecode(ev, 0) == nil && e.LeavesQty() > 0 {
			m.rest(e.OrderID(), restingOrder{instrumentID: e.InstrumentID(), session: e.SessionIdx(), side: e.Side(),
				priceTicks: e.PriceTicks(), leavesQty: e.LeavesQty(), waiting: core.IsStop(e.OrdType())})
		}
	case venue.OrderTriggeredTemplateID:
		var e venue.OrderTriggered
		if e.WrapDecode(ev, 0) != nil {
			return
		}
		m.remove(e.OrderID()) // waiting no longer
		if e.LeavesQty() > 0 {
			m.rest(e.OrderID(), restingOrder{instrumentID: e.InstrumentID(), session: e.SessionIdx(), side: e.Side(),
				priceTicks: e.PriceTicks(), leavesQty: e.LeavesQty()})
		}
	case venue.FillTemplateID:
		var e venue.Fill
		if e.WrapDecode(ev, 0) == nil {
			m.fill(&e)
		}
	case venue.OrderCancelledTemplateID:
		var e venue.OrderCancelled
		if e.WrapDecode(ev, 0) == nil {
			m.remove(e.OrderID())
		}
	case venue.OrderReplacedTemplateID:
		var e venue.OrderReplaced
		if e.WrapDecode(ev, 0) == nil {
			was, known := m.orders[e.OrderID()]
			inBook := known && !was.waiting
			m.remove(e.OrderID())
			// A waiting stop keeps waiting (a triggered one keeps its type).
			if e.LeavesQty() > 0 {
				m.rest(e.OrderID(), restingOrder{instrumentID: e.InstrumentID(), session: e.SessionIdx(), side: e.Side(),
					priceTicks: e.PriceTicks(), leavesQty: e.LeavesQty(), waiting: !inBook && core.IsStop(e.OrdType())})
			}
		}
	case venue.TradingStatusChangedTemplateID:
		var e venue.TradingStatusChanged
		if e.WrapDecode(ev, 0) == nil {
			if in := m.instruments[e.InstrumentID()]; in != nil {
				// As the matcher keeps it: a halt remembers the status it
				// interrupts (a halt of a halted instrument the first's),
				// any other status forgets it.
				switch {
				case e.Status() != venue.TradingStatusHalted:
					in.haltedFrom = 0
				case in.status != venue.TradingStatusHalted:
					in.haltedFrom = in.status
				}
				in.status = e.Status()
				if in.status != venue.TradingStatusVolatilityAuction {
					in.auctionEndNs, in.auctionOf = 0, 0
				}
			}
		}
	case venue.VolatilityInterruptionTemplateID:
		// The TradingStatusChanged to VolatilityAuction follows it.
		var e venue.VolatilityInterruption
		if e.WrapDecode(ev, 0) == nil {
			if in := m.instruments[e.InstrumentID()]; in != nil {
				in.auctionEndNs, in.auctionOf = e.AuctionEndNs(), venue.TradingStatusVolatilityAuction
				if e.OrderID() == 0 { // no order: a call's uncross (core, "Auctions")
					in.auctionOf = in.status
				}
			}
		}
	case venue.InstrumentAddedTemplateID:
		var e venue.InstrumentAdded
		if e.WrapDecode(ev, 0) == nil {
			m.applyInstrumentAdded(&e)
		}
	case venue.OperatorResultTemplateID:
		var e venue.OperatorResult
		if e.WrapDecode(ev, 0) == nil {
			r := Result{Seq: e.CauseSeq(), Action: e.Action(), Reason: e.Reason(), Count: e.Count(), TimestampNs: e.TimestampNs(),
				OrderID: e.OrderID(), Session: e.FilterSessionIdx(), Instrument: e.InstrumentID()}
			m.results[resultKey{r.Action, r.Reason}]++
			if r.Action == venue.OperatorActionTypeEndOfDay {
				m.endOfDay.Store(&r) // before resultSeq, which says it is applied
			}
			if r.Action == venue.OperatorActionTypeSetPhaseStatus {
				m.phasePassedHalts(r)
			}
			if in := m.instruments[e.InstrumentID()]; in != nil && r.Action == venue.OperatorActionTypeSetPriceBand && r.Reason == venue.RejectReasonNone {
				in.refPriceTicks, in.bandPercent = e.RefPriceTicks(), e.BandPercent()
				in.bandLowTicks, in.bandHighTicks = core.BandTicks(in.refPriceTicks, in.bandPercent)
			}
			// Before resultSeq: a command counted as applied has its result
			// in its wait (an awaited command's is read then: appliedResult).
			m.waiters.Deliver(r.Seq, r)
			m.resultSeq.Store(r.Seq)
		}
	}
}

// phasePassedHalts forgets the status the halts a phase change passed over
// interrupted, as the matcher does (core.Matcher's phasePassedHalts):
// where such an instrument would be without its halt is its group's phase
// now. That is the instrument named when the change is refused with
// InstrumentHalted, and every instrument halted after a change of every
// instrument, whatever its answer (m.mu held; the change's status changes
// are applied already).
func (m *Monitor) phasePassedHalts(r Result) {
	switch {
	case r.Instrument == 0:
		for _, in := range m.instruments {
			in.haltedFrom = 0
		}
	case r.Reason == venue.RejectReasonInstrumentHalted:
		if in := m.instruments[r.Instrument]; in != nil {
			in.haltedFrom = 0
		}
	}
}

func (m *Monitor) rest(orderID uint64, o restingOrder) {
	in := m.instruments[o.instrumentID]
	if in == nil {
		return
	}
	m.orders[orderID] = o
	m.bySession[o.session]++
	if o.waiting {
		return // off the book
	}
	in.restingOrders++
	if o.priceTicks != 0 { // a market order waiting for an uncross has no price level
		in.side(o.side)[o.priceTicks] += o.leavesQty
	}
}

func (m *Monitor) remove(orderID uint64) {
	o, ok := m.orders[orderID]
	if !ok {
		return
	}
	delete(m.orders, orderID)
	if m.bySession[o.session]--; m.bySession[o.session] == 0 {
		delete(m.bySession, o.session)
	}
	if o.waiting {
		return
	}
	in := m.instruments[o.instrumentID]
	in.restingOrders--
	levels := in.side(o.side)
	if levels[o.priceTicks] -= o.leavesQty; levels[o.priceTicks] <= 0 {
		delete(levels, o.priceTicks)
	}
}

func (m *Monitor) fill(e *venue.Fill) {
	in := m.instruments[e.InstrumentID()]
	if in == nil {
		return
	}
	o, ok := m.orders[e.OrderID()]
	if !ok || o.waiting {
		return // the aggressor of its own command: never rested (a stop trades once triggered)
	}
	levels := in.side(o.side)
	if levels[o.priceTicks] -= e.LastQty(); levels[o.priceTicks] <= 0 {
		delete(levels, o.priceTicks)
	}
	o.leavesQty = e.LeavesQty()
	if o.leavesQty == 0 {
		m.orders[e.OrderID()] = o
		m.remove(e.OrderID())
		return
	}
	m.orders[e.OrderID()] = o
}

func (in *instrumentView) side(s venue.Side) map[int64]int64 {
	if s == venue.SideBuy {
		return in.bids
	}
	return in.asks
}

// Instrument returns a copy of the view of one instrument.
func (m *Monitor) Instrument(id uint32) (InstrumentState, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	in := m.instruments[id]
	if in == nil {
		return InstrumentState{}, false
	}
	st := InstrumentState{Status: in.status, AuctionEndNs: in.auctionEndNs, AuctionOf: in.auctionOf, HaltedFrom: in.haltedFrom,
		RefPriceTicks: in.refPriceTicks, BandPercent: in.bandPercent,
		BandLowTicks: in.bandLowTicks, BandHighTicks: in.bandHighTicks, RestingOrders: in.restingOrders, BidLevels: len(in.bids), AskLevels: len(in.asks)}
	for px, qty := range in.bids {
		st.BidQtyTotal += qty
		if st.BidQty == 0 || px > st.BidTicks {
			st.BidTicks, st.BidQty = px, qty
		}
	}
	for px, qty := range in.asks {
		st.AskQtyTotal += qty
		if st.AskQty == 0 || px < st.AskTicks {
			st.AskTicks, st.AskQty = px, qty
		}
	}
	return st, true
}

// SessionOrders returns the number of open orders of a session: resting,
// or stops waiting for their trigger.
func (m *Monitor) SessionOrders(idx uint16) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bySession[idx]
}

// EventsHash returns the number of events seen since start and the
// xxhash64 of their bytes: for a venue started on an empty journal it
// equals the events_hash of `fixvenue journal verify`.
func (m *Monitor) EventsHash() (int64, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.events, m.hash.Sum64()
}

// resultCounts copies the count of OperatorResults by action and reason.
func (m *Monitor) resultCounts() map[resultKey]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[resultKey]int64, len(m.results))
	for k, v := range m.results {
		out[k] = v
	}
	return out
}

// OpenOrderView is one open order of a session as the monitor keeps it.
type OpenOrderView struct {
	OrderID      uint64
	InstrumentID uint32
	Side         venue.Side
	PriceTicks   int64 // 0: a market order waiting for an uncross, or a stop order
	LeavesQty    int64
	// StopWaiting: a stop order waiting for its trigger, off the book.
	StopWaiting bool
}

// OpenOrdersOf lists session idx's open orders (resting, or stops waiting
// for their trigger) by OrderID, the first max of them, and how many it
// has. It walks every open order of the venue under the monitor's lock and
// copies the session's: an operator's call, not one for the order path's
// rate.
func (m *Monitor) OpenOrdersOf(idx uint16, max int) ([]OpenOrderView, int) {
	m.mu.Lock()
	out := make([]OpenOrderView, 0, m.bySession[idx])
	for id, o := range m.orders {
		if o.session == idx {
			out = append(out, OpenOrderView{OrderID: id, InstrumentID: o.instrumentID, Side: o.side, PriceTicks: o.priceTicks,
				LeavesQty: o.leavesQty, StopWaiting: o.waiting})
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b OpenOrderView) int { return cmp.Compare(a.OrderID, b.OrderID) })
	return out[:min(len(out), max)], len(out)
}
