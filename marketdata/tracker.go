package marketdata

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// InstrumentID is the venue's instrument id, as in the events and on the feed.
type InstrumentID uint32

// OrderID is the venue-assigned order id, as in the events and on the
// feed, or, on the feed only, the public id of an iceberg's refilled slice
// (RefillIDBase).
type OrderID uint64

// RefillIDBase is where the public ids of icebergs' refilled slices start:
// the feed shows the n-th refill it has ever published as an order of id
// RefillIDBase+n (package documentation, "Icebergs"). The venue's OrderIDs
// are a counter from 1 that never gets near it, and the tracker refuses an
// event that names an order at or above it, so a refill's id is one no
// order has had, and says nothing of the order it refills.
const RefillIDBase OrderID = 1 << 62

// Bounds of the tracker. Each has a default that matches the venue's own
// defaults; a Config may lower or raise them.
const (
	// OrdersMaxDefault matches the default engine.orders_max.
	OrdersMaxDefault = 1 << 20
	// LevelsMaxDefault bounds the price levels on one side of one
	// instrument: enough for the default instruments' bands. The engine's
	// bound is the width of the price band in ticks; set LevelsMax (or an
	// instrument's own) at least that wide. A level costs 32 bytes.
	LevelsMaxDefault = 1 << 12
	// LevelsMaxLimit matches the engine's largest band (core.LevelsPerSideMaxLimit).
	LevelsMaxLimit = 1 << 22
	// InstrumentsMax matches the venue configuration's bound.
	InstrumentsMax = 65535
	// pendingMax bounds the orders of one command whose resting state is
	// not known until the command's events end. One command enters or
	// replaces at most one order, so this leaves ample room.
	pendingMax = 8
)

// Errors that mean the event stream broke the venue's contract (or the
// tracker's bounds are below the engine's). The tracker's state after one
// of them is not trustworthy; the feed stops rather than publish a wrong book.
var (
	ErrUnknownInstrument = errors.New("marketdata: event for an instrument the tracker was not configured with")
	ErrUnknownOrder      = errors.New("marketdata: event for an order the tracker does not hold")
	ErrDuplicateOrder    = errors.New("marketdata: OrderAccepted for an order id already held")
	ErrInconsistent      = errors.New("marketdata: event quantities disagree with the tracked book")
	ErrPendingFull       = errors.New("marketdata: too many orders entered by one command")
	ErrRefillIDs         = errors.New("marketdata: the public ids of refilled slices are used up")
)

// InstrumentDef is the reference data the feed publishes for an instrument.
// It comes from the venue configuration, the same source the engine uses;
// the tracker never reads engine state.
type InstrumentDef struct {
	ID           InstrumentID
	Symbol       string
	TickMantissa int64 // tick size = TickMantissa × 10^TickExponent
	TickExponent int8
	LotSize      int64
	Status       mdsbe.TradingStatus // status before any TradingStatusChanged; zero means Open
	// LevelsMax bounds this instrument's levels per side; 0 means
	// TrackerConfig.LevelsMax. The band width in ticks plus one suffices.
	LevelsMax int
}

// NewInstrumentDef builds a definition from the venue configuration's
// terms: the tick as a decimal (mantissa × 10^-scale) and the start-up
// status (zero means open).
func NewInstrumentDef(id uint32, symbol string, tick decimal.Tick, lotSize int64, status venue.TradingStatus) (InstrumentDef, error) {
	d := InstrumentDef{ID: InstrumentID(id), Symbol: symbol, TickMantissa: tick.Mantissa, LotSize: lotSize}
	if tick.Scale < 0 || tick.Scale > 127 {
		return d, fmt.Errorf("marketdata: instrument %d: tick scale %d out of range", id, tick.Scale)
	}
	d.TickExponent = int8(-tick.Scale)
	if status != 0 && !status.Valid() {
		return d, fmt.Errorf("marketdata: instrument %d: undefined status %d", id, uint8(status))
	}
	// The feed's TradingStatus has the values of the venue schema's, as
	// applyStatus relies on for TradingStatusChanged events.
	d.Status = mdsbe.TradingStatus(status)
	if status == 0 {
		d.Status = mdsbe.TradingStatusOpen
	}
	return d, nil
}

// TrackerConfig sizes a Tracker.
type TrackerConfig struct {
	Instruments []InstrumentDef
	OrdersMax   int // resting orders, as the engine's orders_max; 0 means OrdersMaxDefault
	LevelsMax   int // levels per side per instrument; 0 means LevelsMaxDefault

	// InstrumentsMax bounds the configured instruments plus those added by
	// InstrumentAdded events (the engine's instruments_max); 0 means
	// len(Instruments).
	InstrumentsMax int
}

func (c *TrackerConfig) fill() error {
	c.OrdersMax = cmp.Or(c.OrdersMax, OrdersMaxDefault)
	c.LevelsMax = cmp.Or(c.LevelsMax, LevelsMaxDefault)
	if c.OrdersMax < 1 || c.OrdersMax > 1<<30 {
		return fmt.Errorf("marketdata: OrdersMax %d outside [1, 2^30]", c.OrdersMax)
	}
	if c.LevelsMax < 1 || c.LevelsMax > LevelsMaxLimit {
		return fmt.Errorf("marketdata: LevelsMax %d outside [1, %d]", c.LevelsMax, LevelsMaxLimit)
	}
	if len(c.Instruments) == 0 || len(c.Instruments) > InstrumentsMax {
		return fmt.Errorf("marketdata: %d instruments, want 1 to %d", len(c.Instruments), InstrumentsMax)
	}
	c.InstrumentsMax = cmp.Or(c.InstrumentsMax, len(c.Instruments))
	if c.InstrumentsMax < len(c.Instruments) || c.InstrumentsMax > InstrumentsMax {
		return fmt.Errorf("marketdata: InstrumentsMax %d outside [%d instruments, %d]", c.InstrumentsMax, len(c.Instruments), InstrumentsMax)
	}
	for _, d := range c.Instruments {
		if d.ID == 0 {
			return errors.New("marketdata: instrument id 0 is reserved (it means all instruments)")
		}
		if len(d.Symbol) == 0 || len(d.Symbol) > mdsbe.SymbolLength {
			return fmt.Errorf("marketdata: instrument %d: symbol %q is empty or longer than %d", d.ID, d.Symbol, mdsbe.SymbolLength)
		}
		if d.TickMantissa <= 0 {
			return fmt.Errorf("marketdata: instrument %d: tick mantissa must be positive", d.ID)
		}
		if d.LevelsMax < 0 || d.LevelsMax > LevelsMaxLimit {
			return fmt.Errorf("marketdata: instrument %d: LevelsMax %d outside [0, %d]", d.ID, d.LevelsMax, LevelsMaxLimit)
		}
	}
	return nil
}

type orderState uint8

const (
	orderFree    orderState = iota
	orderPending            // entered by the current command; not in a level, not on the feed
	orderResting            // linked in a level and published
)

// order is one pool slot.
type order struct {
	id OrderID // the venue's, which events name it by
	// pub is the id the feed shows it under: id, until an iceberg's slice
	// is refilled, which the feed publishes as a new order of a new id
	// (package documentation, "Icebergs").
	pub        OrderID
	priceTicks int64
	leavesQty  int64
	prev, next orderIdx // level list links; next also links the free list
	inst       int32
	side       sideIdx
	state      orderState
	canRest    bool // a limit order but IOC and FOK: one that rests when not filled
	market     bool // a market order: its remainder waits unseen in a volatility auction
	// iceberg: leavesQty is the order's display slice (see the package
	// documentation, "Icebergs"); the reserve behind it is never known here.
	iceberg bool
}

// instrument is the tracked state of one instrument.
type instrument struct {
	def                 InstrumentDef
	sides               [2]bookSide
	rptSeq              uint64
	status              mdsbe.TradingStatus
	lastTradePriceTicks int64
	lastTradeQty        int64
	volume              int64
	dirty               bool // changed since the last Feed flush
	// statusReason goes with the next InstrumentStatus: a volatility
	// interruption announces the status change that follows it.
	statusReason mdsbe.StatusReason
	// indicative is the call's last AuctionIndicative; cleared by the
	// uncross and by any status that is not a call (doc.go, "Auctions").
	indicative Indicative
}

// Tracker rebuilds every instrument's book from venue events and writes the
// feed messages that describe each change into a packet.Builder. It is
// single-threaded: one goroutine calls Apply and EndCommand and reads views.
type Tracker struct {
	cfg       TrackerConfig
	insts     []instrument // capacity cfg.InstrumentsMax; the configured ones first
	instIndex map[InstrumentID]int32
	orders    []order
	freeHead  orderIdx
	index     orderIndex
	pending   [pendingMax]orderIdx
	pendingN  int

	dirty []int32 // instruments changed since TakeDirty; each listed once

	causeSeq  uint64
	haveCause bool
	timeNs    int64 // timestamp of the event being applied

	// refills counts the refilled slices published since the feed's first
	// event: the last public id handed out is RefillIDBase+refills.
	refills uint64

	out *packet.Builder

	// Flyweights live in the tracker so decoding and encoding never allocate.
	accepted  venue.OrderAccepted
	fill      venue.Fill
	cancelled venue.OrderCancelled
	replaced  venue.OrderReplaced
	status    venue.TradingStatusChanged
	triggered venue.OrderTriggered
	refilled  venue.OrderRefilled
	opResult  venue.OperatorResult
	auctions  auctionDecoders // auction.go

	mAdded    mdsbe.OrderAdded
	mModified mdsbe.OrderModified
	mExecuted mdsbe.OrderExecuted
	mDeleted  mdsbe.OrderDeleted
	mLevel    mdsbe.PriceLevelUpdate
	mTrade    mdsbe.Trade
	mStatus   mdsbe.InstrumentStatus
	mAuction  mdsbe.AuctionUpdate

	eventsApplied  uint64
	eventsIgnored  uint64
	messagesQueued uint64
}

// NewTracker allocates every structure the tracker will ever use. Messages
// go to out, which numbers and packs them.
func NewTracker(cfg TrackerConfig, out *packet.Builder) (*Tracker, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, errors.New("marketdata: NewTracker needs a packet builder")
	}
	t := &Tracker{
		cfg:       cfg,
		insts:     make([]instrument, len(cfg.Instruments), cfg.InstrumentsMax),
		dirty:     make([]int32, 0, cfg.InstrumentsMax),
		instIndex: make(map[InstrumentID]int32, cfg.InstrumentsMax),
		// Room for the engine's resting orders plus one command's in flight.
		orders: make([]order, cfg.OrdersMax+pendingMax),
		index:  newOrderIndex(cfg.OrdersMax + pendingMax),
		out:    out,
	}
	for i, d := range cfg.Instruments {
		if _, dup := t.instIndex[d.ID]; dup {
			return nil, fmt.Errorf("marketdata: instrument %d listed twice", d.ID)
		}
		t.instIndex[d.ID] = int32(i)
		t.initInstrument(&t.insts[i], d)
	}
	for i := range t.orders {
		t.orders[i].next = orderIdx(i + 1)
	}
	t.orders[len(t.orders)-1].next = noOrder
	return t, nil
}

// Apply applies one venue event (an SBE message of schema venue). Events
// that do not change a book (rejects, status answers, mass cancel reports)
// only mark command boundaries. An event of another command first ends the
// previous command (see EndCommand).
func (t *Tracker) Apply(ev []byte) error {
	tid, err := venue.TemplateIDOf(ev, 0)
	if err != nil {
		return err
	}
	switch tid {
	case venue.OrderAcceptedTemplateID:
		err = t.applyAccepted(ev)
	case venue.FillTemplateID:
		err = t.applyFill(ev)
	case venue.OrderCancelledTemplateID:
		err = t.applyCancelled(ev)
	case venue.OrderReplacedTemplateID:
		err = t.applyReplaced(ev)
	case venue.TradingStatusChangedTemplateID:
		err = t.applyStatus(ev)
	case venue.OrderTriggeredTemplateID:
		err = t.applyTriggered(ev)
	case venue.OrderRefilledTemplateID:
		err = t.applyRefilled(ev)
	case venue.InstrumentAddedTemplateID:
		err = t.applyInstrumentAdded(ev)
	case venue.AuctionIndicativeTemplateID, venue.AuctionUncrossedTemplateID, venue.VolatilityInterruptionTemplateID:
		err = t.applyAuction(tid, ev)
	case venue.OperatorResultTemplateID:
		err = t.applyOperatorResult(ev)
	default:
		err = t.applyOther(tid, ev)
	}
	if err == nil {
		t.eventsApplied++
	}
	return err
}

// applyOther reads only the causeSeq of events that leave books unchanged.
// Every venue event starts its block with causeSeq and timestampNs.
func (t *Tracker) applyOther(tid uint16, ev []byte) error {
	var causeSeq uint64
	var timeNs int64
	switch tid {
	case venue.OrderRejectedTemplateID:
		var m venue.OrderRejected
		if err := m.WrapDecode(ev, 0); err != nil {
			return err
		}
		causeSeq, timeNs = m.CauseSeq(), m.TimestampNs()
	case venue.CancelRejectedTemplateID:
		var m venue.CancelRejected
		if err := m.WrapDecode(ev, 0); err != nil {
			return err
		}
		causeSeq, timeNs = m.CauseSeq(), m.TimestampNs()
	case venue.OrderStatusTemplateID:
		var m venue.OrderStatus
		if err := m.WrapDecode(ev, 0); err != nil {
			return err
		}
		causeSeq, timeNs = m.CauseSeq(), m.TimestampNs()
	case venue.MassCancelReportTemplateID:
		var m venue.MassCancelReport
		if err := m.WrapDecode(ev, 0); err != nil {
			return err
		}
		causeSeq, timeNs = m.CauseSeq(), m.TimestampNs()
	default:
		t.eventsIgnored++
		return nil
	}
	return t.beginEvent(causeSeq, timeNs)
}

// beginEvent ends the previous command when causeSeq changes. The matcher
// emits all the events of one command together, so a new causeSeq proves
// the previous command's events are complete.
func (t *Tracker) beginEvent(causeSeq uint64, timeNs int64) error {
	if t.haveCause && causeSeq != t.causeSeq {
		if err := t.EndCommand(); err != nil {
			return err
		}
	}
	t.causeSeq, t.haveCause, t.timeNs = causeSeq, true, timeNs
	return nil
}

func (t *Tracker) instrument(id uint32) (int32, *instrument, error) {
	i, ok := t.instIndex[InstrumentID(id)]
	if !ok {
		return 0, nil, ErrUnknownInstrument
	}
	return i, &t.insts[i], nil
}

func sideOf(s venue.Side) (sideIdx, error) {
	switch s {
	case venue.SideBuy:
		return bidSide, nil
	case venue.SideSell:
		return askSide, nil
	}
	return 0, ErrInconsistent
}

func (t *Tracker) applyAccepted(ev []byte) error {
	m := &t.accepted
	if err := m.WrapDecode(ev, 0); err != nil {
		return err
	}
	if err := t.beginEvent(m.CauseSeq(), m.TimestampNs()); err != nil {
		return err
	}
	if core.IsStop(m.OrdType()) {
		// A stop waits off the book and stays unpublished until its
		// OrderTriggered (see the package documentation, "Stops").
		t.eventsIgnored++
		return nil
	}
	if waitsForUncross(t, m.InstrumentID(), m.OrdType()) {
		t.eventsIgnored++ // a market order in a call: never in the book (auction.go)
		return nil
	}
	if m.Flags().Has(venue.OrderFlagsIceberg) {
		return t.enterOrder(m.InstrumentID(), m.Side(), m.OrderID(), m.OrdType(), m.TimeInForce(), m.PriceTicks(), m.DisplayQty(), true)
	}
	return t.enterOrder(m.InstrumentID(), m.Side(), m.OrderID(), m.OrdType(), m.TimeInForce(), m.PriceTicks(), m.LeavesQty(), false)
}

// applyTriggered enters an elected stop as an order of the current command.
// The engine elects a stop only once the order before it has finished, so
// the orders entered so far are published first: that keeps the orders of
// one command in flight within pendingMax, however long the cascade.
func (t *Tracker) applyTriggered(ev []byte) error {
	m := &t.triggered
	if err := m.WrapDecode(ev, 0); err != nil {
		return err
	}
	if err := t.beginEvent(m.CauseSeq(), m.TimestampNs()); err != nil {
		return err
	}
	if err := t.publishPending(true); err != nil {
		return err
	}
	return t.enterOrder(m.InstrumentID(), m.Side(), m.OrderID(), m.OrdType(), m.TimeInForce(), m.PriceTicks(), m.LeavesQty(), false)
}

// applyRefilled publishes an iceberg's new display slice. The Fill that
// emptied the last slice took the order off the book, as an order executed
// in full; the new slice is added at the back of its level, where the
// engine put it. Nothing says how much is left behind it.
func (t *Tracker) applyRefilled(ev []byte) error {
	m := &t.refilled
	if err := m.WrapDecode(ev, 0); err != nil {
		return err
	}
	if err := t.beginEvent(m.CauseSeq(), m.TimestampNs()); err != nil {
		return err
	}
	if m.DisplayQty() <= 0 {
		return ErrInconsistent
	}
	// Entered as a resting limit order, then rested at once.
	err := t.enterOrder(m.InstrumentID(), m.Side(), m.OrderID(), venue.OrdTypeLimit, venue.TimeInForceGTC,
		m.PriceTicks(), m.DisplayQty(), true)
	if err != nil {
		return err
	}
	oi := t.index.get(OrderID(m.OrderID()))
	t.dropPending(oi)
	// A new public id: the same one would tell every reader that the
	// order is an iceberg, link its slices and count them.
	if t.refills == uint64(^RefillIDBase) {
		t.freeOrder(oi)
		return ErrRefillIDs
	}
	t.refills++
	t.orders[oi].pub = RefillIDBase + OrderID(t.refills)
	return t.rest(&t.insts[t.orders[oi].inst], oi, true)
}

// enterOrder starts tracking an order that may trade before it rests: it is
// pending until the command (or, for an elected stop, its turn) ends.
func (t *Tracker) enterOrder(instrumentID uint32, vside venue.Side, orderID uint64, ordType venue.OrdType,
	tif venue.TimeInForce, priceTicks, leavesQty int64, iceberg bool) error {
	ii, _, err := t.instrument(instrumentID)
	if err != nil {
		return err
	}
	side, err := sideOf(vside)
	if err != nil {
		return err
	}
	id := OrderID(orderID)
	if id == 0 || id >= RefillIDBase || leavesQty < 0 {
		return ErrInconsistent
	}
	if t.index.get(id) != noOrder {
		return ErrDuplicateOrder
	}
	if t.pendingN == pendingMax {
		return ErrPendingFull
	}
	oi, err := t.allocOrder(id)
	if err != nil {
		return err
	}
	o := &t.orders[oi]
	o.priceTicks, o.leavesQty, o.inst, o.side, o.iceberg = priceTicks, leavesQty, ii, side, iceberg
	o.canRest = (ordType == venue.OrdTypeLimit || ordType == venue.OrdTypeStopLimit) &&
		tif != venue.TimeInForceIOC && tif != venue.TimeInForceFOK
	o.market = ordType == venue.OrdTypeMarket || ordType == venue.OrdTypeStop // an elected stop is a market order
	t.addPending(oi)
	return nil
}

func (t *Tracker) applyFill(ev []byte) error {
	m := &t.fill
	if err := m.WrapDecode(ev, 0); err != nil {
		return err
	}
	if err := t.beginEvent(m.CauseSeq(), m.TimestampNs()); err != nil {
		return err
	}
	ii, in, err := t.instrument(m.InstrumentID())
	if err != nil {
		return err
	}
	if m.LastQty() <= 0 || m.DisplayQty() < 0 {
		return ErrInconsistent
	}
	auction := m.Auction() == venue.BooleanTypeTrue
	// An uncross's trade has no aggressor: it is published from its buy
	// side's Fill, which comes first.
	if m.Aggressor() == venue.BooleanTypeTrue || (auction && m.Side() == venue.SideBuy) {
		if err := t.emitTrade(in, m); err != nil {
			return err
		}
	}
	oi := t.index.get(OrderID(m.OrderID()))
	if oi == noOrder && auction && (m.OrdType() == venue.OrdTypeMarket || m.OrdType() == venue.OrdTypeStop) {
		return nil // a market order (or an elected stop) that waited for the uncross, unseen
	}
	if oi == noOrder {
		return ErrUnknownOrder
	}
	o := &t.orders[oi]
	if o.inst != ii || (o.leavesQty-m.LastQty() != m.DisplayQty() && !(o.iceberg && o.state == orderPending)) {
		// Only an incoming iceberg's display may not fall by the trade: it
		// is the slice it will show, cut from what is left.
		return ErrInconsistent
	}
	if o.state == orderPending {
		o.leavesQty = m.DisplayQty()
		return nil
	}
	return t.executeResting(in, oi, m.TradeID(), m.LastPriceTicks(), m.LastQty())
}

// executeResting reduces a resting order by a trade and publishes it.
func (t *Tracker) executeResting(in *instrument, oi orderIdx, tradeID uint64, priceTicks, qty int64) error {
	o := &t.orders[oi]
	o.leavesQty -= qty
	if err := t.emitExecuted(in, o, tradeID, priceTicks, qty); err != nil {
		return err
	}
	s := &in.sides[o.side]
	li, found := s.search(o.priceTicks)
	if !found {
		return ErrInconsistent
	}
	s.levels[li].qty -= qty
	if o.leavesQty == 0 {
		t.unlink(s, li, oi)
		t.freeOrder(oi)
	}
	return t.emitLevelAfterReduce(in, s, li)
}

func (t *Tracker) applyCancelled(ev []byte) error {
	m := &t.cancelled
	if err := m.WrapDecode(ev, 0); err != nil {
		return err
	}
	if err := t.beginEvent(m.CauseSeq(), m.TimestampNs()); err != nil {
		return err
	}
	ii, in, err := t.instrument(m.InstrumentID())
	if err != nil {
		return err
	}
	oi := t.index.get(OrderID(m.OrderID()))
	if oi == noOrder && (core.IsStop(m.OrdType()) || m.OrdType() == venue.OrdTypeMarket) {
		t.eventsIgnored++ // a waiting stop, or a market order waiting for an uncross: never published
		return nil
	}
	if oi == noOrder {
		return ErrUnknownOrder
	}
	o := &t.orders[oi]
	if o.inst != ii || o.leavesQty > m.CancelledQty() || (!o.iceberg && o.leavesQty != m.CancelledQty()) {
		return ErrInconsistent
	}
	if o.state == orderPending {
		t.dropPending(oi)
		t.freeOrder(oi)
		return nil
	}
	return t.deleteResting(in, oi)
}

// deleteResting removes a resting order that leaves without trading.
func (t *Tracker) deleteResting(in *instrument, oi orderIdx) error {
	o := &t.orders[oi]
	if err := t.emitDeleted(in, o); err != nil {
		return err
	}
	s := &in.sides[o.side]
	li, found := s.search(o.priceTicks)
	if !found {
		return ErrInconsistent
	}
	s.levels[li].qty -= o.leavesQty
	t.unlink(s, li, oi)
	t.freeOrder(oi)
	return t.emitLevelAfterReduce(in, s, li)
}

func (t *Tracker) applyReplaced(ev []byte) error {
	m := &t.replaced
	if err := m.WrapDecode(ev, 0); err != nil {
		return err
	}
	if err := t.beginEvent(m.CauseSeq(), m.TimestampNs()); err != nil {
		return err
	}
	ii, in, err := t.instrument(m.InstrumentID())
	if err != nil {
		return err
	}
	oi := t.index.get(OrderID(m.OrderID()))
	if oi == noOrder && core.IsStop(m.OrdType()) {
		t.eventsIgnored++ // a waiting stop: never published
		return nil
	}
	if oi == noOrder {
		return ErrUnknownOrder
	}
	o := &t.orders[oi]
	side, err := sideOf(m.Side())
	if err != nil {
		return err
	}
	if o.inst != ii || o.side != side || (!o.iceberg && o.leavesQty != m.OldLeavesQty()) || m.DisplayQty() < 0 {
		return ErrInconsistent
	}
	// An iceberg shows its display slice, and may become one or stop being one.
	newPriceTicks, newLeavesQty := m.PriceTicks(), m.DisplayQty()
	o.iceberg = m.MaxFloorQty() != 0
	if o.state == orderPending {
		// Replaced within the command that entered it: it is still unpublished.
		o.priceTicks, o.leavesQty = newPriceTicks, newLeavesQty
		return nil
	}
	if o.priceTicks != m.OldPriceTicks() {
		return ErrInconsistent
	}
	switch {
	case newLeavesQty == 0:
		return t.deleteResting(in, oi)
	case m.PriorityLost() != venue.BooleanTypeTrue:
		if newPriceTicks != o.priceTicks {
			return ErrInconsistent
		}
		return t.modifyInPlace(in, oi, newLeavesQty)
	case in.sides[1-side].crossedBy(newPriceTicks):
		// It will trade: hide it as if it were new. The order's Fill events
		// follow, and EndCommand publishes whatever rests, under the id the
		// feed knows it by.
		pub := o.pub
		if err := t.deleteResting(in, oi); err != nil {
			return err
		}
		if t.pendingN == pendingMax {
			return ErrPendingFull
		}
		ni, err := t.allocOrder(OrderID(m.OrderID()))
		if err != nil {
			return err
		}
		n := &t.orders[ni]
		n.pub = pub
		n.priceTicks, n.leavesQty, n.inst, n.side, n.canRest = newPriceTicks, newLeavesQty, ii, side, true
		n.iceberg = m.MaxFloorQty() != 0
		t.addPending(ni)
		return nil
	default:
		return t.moveToBack(in, oi, newPriceTicks, newLeavesQty)
	}
}

// modifyInPlace changes a resting order's quantity keeping its priority.
func (t *Tracker) modifyInPlace(in *instrument, oi orderIdx, newLeavesQty int64) error {
	o := &t.orders[oi]
	s := &in.sides[o.side]
	li, found := s.search(o.priceTicks)
	if !found {
		return ErrInconsistent
	}
	s.levels[li].qty += newLeavesQty - o.leavesQty
	o.leavesQty = newLeavesQty
	if err := t.emitModified(in, o, false); err != nil {
		return err
	}
	return t.emitLevel(in, s, li, mdsbe.UpdateActionChange)
}

// moveToBack moves a resting order to the back of the level of
// newPriceTicks (the same or another price) without trading.
func (t *Tracker) moveToBack(in *instrument, oi orderIdx, newPriceTicks, newLeavesQty int64) error {
	o := &t.orders[oi]
	s := &in.sides[o.side]
	li, found := s.search(o.priceTicks)
	if !found {
		return ErrInconsistent
	}
	if newPriceTicks == o.priceTicks {
		t.unlink(s, li, oi)
		s.levels[li].qty += newLeavesQty - o.leavesQty
		o.leavesQty = newLeavesQty
		t.linkTail(s, li, oi)
		if err := t.emitModified(in, o, true); err != nil {
			return err
		}
		return t.emitLevel(in, s, li, mdsbe.UpdateActionChange)
	}
	s.levels[li].qty -= o.leavesQty
	t.unlink(s, li, oi)
	o.priceTicks, o.leavesQty = newPriceTicks, newLeavesQty
	if err := t.emitModified(in, o, true); err != nil {
		return err
	}
	if err := t.emitLevelAfterReduce(in, s, li); err != nil {
		return err
	}
	return t.rest(in, oi, false)
}

func (t *Tracker) applyStatus(ev []byte) error {
	m := &t.status
	if err := m.WrapDecode(ev, 0); err != nil {
		return err
	}
	if err := t.beginEvent(m.CauseSeq(), m.TimestampNs()); err != nil {
		return err
	}
	st := mdsbe.TradingStatus(m.Status())
	if !st.Valid() {
		return ErrInconsistent
	}
	if m.InstrumentID() == 0 {
		for i := range t.insts {
			if err := t.setStatus(&t.insts[i], st); err != nil {
				return err
			}
		}
		return nil
	}
	_, in, err := t.instrument(m.InstrumentID())
	if err != nil {
		return err
	}
	return t.setStatus(in, st)
}

// applyOperatorResult starts a new trading day at an end of day done:
// every instrument's volume is the day's (package documentation, "The
// trading day"), so it restarts at 0, and an InstrumentStatus with reason
// EndOfDay, its status unchanged, tells a running client so, as a snapshot
// taken after it would. Other operator results change nothing the feed
// shows: their status changes and cancels are events of their own.
func (t *Tracker) applyOperatorResult(ev []byte) error {
	m := &t.opResult
	if err := m.WrapDecode(ev, 0); err != nil {
		return err
	}
	if m.Action() != venue.OperatorActionTypeEndOfDay || m.Reason() != venue.RejectReasonNone {
		t.eventsIgnored++
		return nil
	}
	if err := t.beginEvent(m.CauseSeq(), m.TimestampNs()); err != nil {
		return err
	}
	for i := range t.insts {
		in := &t.insts[i]
		in.volume = 0
		in.statusReason = mdsbe.StatusReasonEndOfDay
		if err := t.emitStatus(in); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tracker) setStatus(in *instrument, st mdsbe.TradingStatus) error {
	in.status = st
	// A halted call keeps its orders and its indicative: the engine goes on
	// publishing the indicative's changes and uncrosses when the call opens
	// or closes (core doc, "Auctions"); clearing it here lost it until the
	// book changed again. Open and Closed come after the uncross, which
	// cleared it already.
	if !isCall(st) && st != mdsbe.TradingStatusHalted {
		in.indicative = Indicative{}
	}
	return t.emitStatus(in)
}

// EndCommand publishes the outcome of the orders the current command
// entered or re-priced across the book: an order with quantity left rests
// at the back of its level, exactly where the engine put it (no other order
// can join that side during the command). Apply calls it when causeSeq
// changes; call it directly only when the command's events are known to be
// complete. An order that cannot rest (market, IOC, FOK) with quantity left
// means the engine did not cancel the remainder: ErrInconsistent.
func (t *Tracker) EndCommand() error {
	if err := t.publishPending(true); err != nil {
		return err
	}
	t.haveCause = false
	return nil
}

// EndBatch publishes what is certain at the end of a batch of events that
// may stop inside a command: orders that can rest are published now (if
// more of the command's Fill events follow, they reduce the order as any
// resting order), while market, IOC and FOK orders, which never rest, and
// icebergs, whose display is known only when they stop trading, stay
// hidden until the command ends.
func (t *Tracker) EndBatch() error { return t.publishPending(false) }

func (t *Tracker) publishPending(commandEnded bool) error {
	for i := 0; i < t.pendingN; {
		oi := t.pending[i]
		o := &t.orders[oi]
		if o.leavesQty == 0 { // filled: nothing more can happen to it
			t.dropPending(oi)
			t.freeOrder(oi)
			continue
		}
		// An incoming iceberg stays pending to the end of its command: its
		// display is cut from what is left when it stops trading.
		if (!o.canRest || o.iceberg) && !commandEnded {
			i++
			continue
		}
		t.dropPending(oi)
		if !o.canRest && o.market && isCall(t.insts[o.inst].status) {
			t.freeOrder(oi) // interrupted: it waits for the uncross, unseen (auction.go)
			continue
		}
		if !o.canRest {
			t.freeOrder(oi)
			return ErrInconsistent
		}
		if err := t.rest(&t.insts[o.inst], oi, true); err != nil {
			return err
		}
	}
	return nil
}

// rest links an order at the back of its price level and publishes the
// level (and, when added is true, an OrderAdded first).
func (t *Tracker) rest(in *instrument, oi orderIdx, added bool) error {
	o := &t.orders[oi]
	s := &in.sides[o.side]
	li, found := s.search(o.priceTicks)
	action := mdsbe.UpdateActionChange
	if !found {
		if err := s.insert(li, o.priceTicks); err != nil {
			t.freeOrder(oi)
			return err
		}
		action = mdsbe.UpdateActionNew
	}
	s.levels[li].qty += o.leavesQty
	t.linkTail(s, li, oi)
	o.state = orderResting
	if added {
		if err := t.emitAdded(in, o); err != nil {
			return err
		}
	}
	return t.emitLevel(in, s, li, action)
}

// emitLevelAfterReduce publishes a level that lost quantity, removing it
// from the side when it has no orders left.
func (t *Tracker) emitLevelAfterReduce(in *instrument, s *bookSide, li int) error {
	if s.levels[li].orderCount > 0 {
		return t.emitLevel(in, s, li, mdsbe.UpdateActionChange)
	}
	if s.levels[li].qty != 0 {
		return ErrInconsistent
	}
	err := t.emitLevel(in, s, li, mdsbe.UpdateActionDelete)
	s.remove(li)
	return err
}

func (t *Tracker) linkTail(s *bookSide, li int, oi orderIdx) {
	lv := &s.levels[li]
	o := &t.orders[oi]
	o.prev, o.next = lv.tail, noOrder
	if lv.tail == noOrder {
		lv.head = oi
	} else {
		t.orders[lv.tail].next = oi
	}
	lv.tail = oi
	lv.orderCount++
}

func (t *Tracker) unlink(s *bookSide, li int, oi orderIdx) {
	lv := &s.levels[li]
	o := &t.orders[oi]
	if o.prev == noOrder {
		lv.head = o.next
	} else {
		t.orders[o.prev].next = o.next
	}
	if o.next == noOrder {
		lv.tail = o.prev
	} else {
		t.orders[o.next].prev = o.prev
	}
	o.prev, o.next = noOrder, noOrder
	lv.orderCount--
}

func (t *Tracker) allocOrder(id OrderID) (orderIdx, error) {
	oi := t.freeHead
	if oi == noOrder {
		return noOrder, ErrOrdersFull
	}
	o := &t.orders[oi]
	t.freeHead = o.next
	*o = order{id: id, pub: id, prev: noOrder, next: noOrder, state: orderPending}
	t.index.put(id, oi)
	return oi, nil
}

func (t *Tracker) freeOrder(oi orderIdx) {
	o := &t.orders[oi]
	t.index.remove(o.id)
	*o = order{next: t.freeHead, prev: noOrder}
	t.freeHead = oi
}

func (t *Tracker) addPending(oi orderIdx) {
	t.pending[t.pendingN] = oi
	t.pendingN++
}

func (t *Tracker) dropPending(oi orderIdx) {
	for i := 0; i < t.pendingN; i++ {
		if t.pending[i] == oi {
			copy(t.pending[i:], t.pending[i+1:t.pendingN])
			t.pendingN--
			return
		}
	}
}

// wireSide converts a book side to the feed's Side.
func wireSide(s sideIdx) mdsbe.Side {
	if s == bidSide {
		return mdsbe.SideBuy
	}
	return mdsbe.SideSell
}
