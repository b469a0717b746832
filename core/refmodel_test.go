package core

import (
	"cmp"
	"slices"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// refModel is the reference model of the venue's rules: plain maps and
// slices sorted on demand, written for obviousness, not speed. The property
// test feeds it and the Matcher the same commands and requires byte-identical
// events. It shares nothing with the Matcher but the codecs and the config.

type refOrder struct {
	orderID    uint64
	session    uint16
	clOrdID    string // current
	account    string
	instrument uint32
	side       venue.Side
	ordType    venue.OrdType
	tif        venue.TimeInForce
	flags      venue.OrderFlags
	stp        venue.StpMode
	price      int64
	qty        int64
	leaves     int64
	cum        int64
	notional   int64
	expire     int64
	stopPx     int64
	maxFloor   int64  // an iceberg's display size, else 0
	display    int64  // an iceberg's current display slice
	waiting    bool   // an untriggered stop: in live, but not in the book
	queued     bool   // a market order waiting for an uncross: in live, not in the book
	priority   uint64 // time priority: lower is earlier
}

// refRecord is what the venue remembers about one ClOrdID.
type refRecord struct {
	orderID uint64
	live    bool // the current ClOrdID of a live order (then the order is the truth)
	// The state kept when the ClOrdID was replaced or the order ended.
	status                            venue.OrdStatus
	side                              venue.Side
	ordType                           venue.OrdType
	tif                               venue.TimeInForce
	instrument                        uint32
	price, qty, leaves, cum, notional int64
	stopPx, expire                    int64            // a stop's stop price, a GTD order's expire time
	maxFloor                          int64            // an iceberg's display size
	flags                             venue.OrderFlags // PostOnly and Iceberg
	account                           string
	session                           uint16
	clOrdID                           string
}

type refInstrument struct {
	cfg       InstrumentConfig
	status    venue.TradingStatus
	low, high int64
	ref       int64      // the reference price the band is set around
	lastTrade int64      // 0 before the first trade
	auction   refAuction // refmodel_auction_test.go
}

type refKey struct {
	session uint16
	clOrdID string
}

type refModel struct {
	cfg         Config
	instruments map[uint32]*refInstrument
	live        map[uint64]*refOrder // resting orders by OrderID
	records     map[refKey]*refRecord
	current     map[uint64]refKey // OrderID → its current ClOrdID
	lastOrder   uint64
	lastExec    uint64
	lastTrade   uint64
	priority    uint64
	now         int64
	seq         uint64
	sink        *BufferSink
	risk        *refRisk // refmodel_risk_test.go
	calls       []uint32 // instruments in a call, in the order they entered it
	uncrossing  bool     // fills are an uncross's
}

func newRefModel(cfg Config) *refModel {
	m := &refModel{cfg: cfg, instruments: map[uint32]*refInstrument{}, live: map[uint64]*refOrder{},
		records: map[refKey]*refRecord{}, current: map[uint64]refKey{}, risk: newRefRisk(cfg)}
	for _, in := range cfg.Instruments {
		ri := &refInstrument{cfg: in, status: in.Status, ref: in.RefPriceTicks}
		if ri.status == 0 {
			ri.status = venue.TradingStatusOpen
		}
		// Band edges rounded inward: ceil(ref×(100−p)/100) and floor(ref×(100+p)/100).
		ri.low = (in.RefPriceTicks*(100-in.BandPercent) + 99) / 100
		ri.high = in.RefPriceTicks * (100 + in.BandPercent) / 100
		m.instruments[in.ID] = ri
		if IsCall(ri.status) {
			ri.auction.phase = ri.status
			m.calls = append(m.calls, in.ID)
		}
	}
	return m
}

// apply decodes a command and applies it; it reports false for bytes that are
// not a command (the model then writes nothing).
func (m *refModel) apply(cmd []byte, sink *BufferSink) bool {
	m.sink = sink
	tid, err := venue.TemplateIDOf(cmd, 0)
	if err != nil {
		return false
	}
	var ok bool
	switch tid {
	case venue.NewOrderTemplateID:
		ok = run(m, cmd, m.newOrder)
	case venue.CancelOrderTemplateID:
		ok = run(m, cmd, m.cancel)
	case venue.ReplaceOrderTemplateID:
		ok = run(m, cmd, m.replace)
	case venue.MassCancelTemplateID:
		ok = run(m, cmd, m.massCancel)
	case venue.OrderStatusRequestTemplateID:
		ok = run(m, cmd, m.status)
	case venue.SessionDisconnectedTemplateID:
		ok = run(m, cmd, m.disconnected)
	case venue.SetTradingStatusTemplateID:
		var c venue.SetTradingStatus
		if c.WrapDecode(cmd, 0) != nil {
			return false
		}
		in, found := m.instruments[c.InstrumentID()]
		if !found || !c.Status().Valid() {
			return false
		}
		m.start(c.Seq(), c.TimestampNs())
		m.setStatus(in, c.Status(), false)
		ok = true
	case venue.EndOfDayTemplateID:
		ok = run(m, cmd, func(*venue.EndOfDay) { m.endOfDay() })
	case venue.SnapshotTemplateID:
		ok = run[venue.Snapshot](m, cmd, nil)
	case venue.TickTemplateID:
		ok = run[venue.Tick](m, cmd, nil)
	case venue.RiskSetLimitTemplateID:
		ok = run(m, asOfToday(cmd, 48, venue.RiskSetLimitBlockLength), m.riskSetLimit)
	case venue.RiskControlTemplateID:
		ok = run(m, asOfToday(cmd, 36, venue.RiskControlBlockLength), m.riskControl)
	case venue.OperatorCommandTemplateID:
		// An earlier build's record lacks the flags byte: read it as none.
		if len(cmd) == venue.MessageHeaderSize+136 && cmd[0] == 136 && cmd[1] == 0 {
			cmd = append([]byte{byte(venue.OperatorCommandBlockLength), 0}, append(cmd[2:], 0)...)
		}
		ok = run(m, cmd, m.operator)
	case venue.OperatorCancelOrderTemplateID:
		ok = run(m, cmd, m.operatorCancel)
	case venue.AddInstrumentTemplateID:
		ok = run(m, cmd, m.addInstrument)
	}
	if !ok {
		return false
	}
	m.riskEndOfCommand()
	m.refreshIndicatives()
	return true
}

// command is what every command flyweight offers the model's dispatch.
type command interface {
	WrapDecode([]byte, int) error
	Seq() uint64
	TimestampNs() int64
}

// run decodes cmd as a T, starts the command context and hands it to do (nil:
// the command only advances time); it reports false for bytes that do not decode.
func run[T any, P interface {
	*T
	command
}](m *refModel, cmd []byte, do func(P)) bool {
	c := P(new(T))
	if c.WrapDecode(cmd, 0) != nil {
		return false
	}
	m.start(c.Seq(), c.TimestampNs())
	if do != nil {
		do(c)
	}
	return true
}

// disconnected cancels the session's Day orders when it asked for cancel on disconnect.
func (m *refModel) disconnected(c *venue.SessionDisconnected) {
	if c.CancelOnDisconnect() != venue.BooleanTypeTrue {
		return
	}
	for _, o := range m.liveByOrderID() {
		if o.session == c.SessionIdx() && o.tif == venue.TimeInForceDay {
			m.cancelLive(o, venue.CancelReasonDisconnect, venue.OrdStatusCancelled, o.clOrdID, "")
		}
	}
}

// event is what every event starts with: the command that caused it and its time.
type event interface {
	WrapEncode([]byte, int) error
	SetCauseSeq(uint64)
	SetTimestampNs(int64)
}

// begin encodes event e into the next sink slot, stamped with the command context.
func (m *refModel) begin(e event) {
	if err := e.WrapEncode(m.sink.Claim(), 0); err != nil {
		panic(err)
	}
	e.SetCauseSeq(m.seq)
	e.SetTimestampNs(m.now)
}

// orderEvent is what the events about one order (accepted, triggered, fill,
// cancelled, replaced) carry of it; the ClOrdID is left to the caller, as a
// cancel or replace reports the request's.
type orderEvent interface {
	orderHead
	SetAccountString(string) error
}

// orderHead is an order event's fields but the ClOrdIDs and the account.
type orderHead interface {
	SetSessionIdx(uint16)
	SetSide(venue.Side)
	SetOrdType(venue.OrdType)
	SetInstrumentID(uint32)
	SetTimeInForce(venue.TimeInForce)
	SetOrderID(uint64)
	SetExecID(uint64)
	SetPriceTicks(int64)
	SetQty(int64)
}

// orderFields sets o's fields of an order event and gives it the next ExecID.
func (m *refModel) orderFields(e orderEvent, o *refOrder) {
	e.SetSessionIdx(o.session)
	e.SetSide(o.side)
	e.SetOrdType(o.ordType)
	e.SetInstrumentID(o.instrument)
	e.SetTimeInForce(o.tif)
	e.SetOrderID(o.orderID)
	e.SetExecID(m.exec())
	e.SetPriceTicks(o.price)
	e.SetQty(o.qty)
	_ = e.SetAccountString(o.account)
}

// setProgress sets how much of an order is left, filled, and filled for
// how much: the fills, replaces and status reports carry all three.
func setProgress(e interface {
	SetLeavesQty(int64)
	SetCumQty(int64)
	SetCumNotionalTicks(int64)
}, leaves, cum, notional int64) {
	e.SetLeavesQty(leaves)
	e.SetCumQty(cum)
	e.SetCumNotionalTicks(notional)
}

// setStanding sets o's instructions that stand until it ends, as its
// acceptance and its replaces report them: expiry, stop price, iceberg floor.
func setStanding(e interface {
	SetExpireTimeNs(int64)
	SetStopPxTicks(int64)
	SetMaxFloorQty(int64)
}, o *refOrder) {
	e.SetExpireTimeNs(o.expire)
	e.SetStopPxTicks(o.stopPx)
	e.SetMaxFloorQty(o.maxFloor)
}

// start sets the command context and expires the GTD orders whose time has
// passed, earliest first, ties by OrderID.
func (m *refModel) start(seq uint64, now int64) {
	if now < m.now-ClockStepBackNs {
		m.clockWentBack(now)
	}
	m.seq, m.now = seq, now
	expired := m.selectLive(func(o *refOrder) bool { return o.tif == venue.TimeInForceGTD && o.expire < now },
		func(a, b *refOrder) int {
			return cmp.Or(cmp.Compare(a.expire, b.expire), cmp.Compare(a.orderID, b.orderID))
		})
	for _, o := range expired {
		m.cancelLive(o, venue.CancelReasonExpiry, venue.OrdStatusExpired, o.clOrdID, "")
	}
	m.auctionTimers()
}

// selectLive returns the live orders keep accepts, sorted by order.
func (m *refModel) selectLive(keep func(o *refOrder) bool, order func(a, b *refOrder) int) []*refOrder {
	var out []*refOrder
	for _, o := range m.live {
		if keep(o) {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, order)
	return out
}

// byPriceThenTime orders by the price px gives (the highest first when
// highFirst), then by time priority.
func byPriceThenTime(px func(o *refOrder) int64, highFirst bool) func(a, b *refOrder) int {
	return func(a, b *refOrder) int {
		c := cmp.Compare(px(a), px(b))
		if highFirst {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.priority, b.priority))
	}
}

func (m *refModel) liveByOrderID() []*refOrder {
	return m.selectLive(func(*refOrder) bool { return true }, func(a, b *refOrder) int { return cmp.Compare(a.orderID, b.orderID) })
}

// book returns one side of an instrument in priority order: the best price
// (the highest bid, the lowest offer) first.
func (m *refModel) book(instrument uint32, side venue.Side) []*refOrder {
	return m.selectLive(func(o *refOrder) bool {
		return o.instrument == instrument && o.side == side && !o.waiting && !o.queued
	}, byPriceThenTime(func(o *refOrder) int64 { return o.price }, side == venue.SideBuy))
}

func oppositeSide(s venue.Side) venue.Side {
	if s == venue.SideBuy {
		return venue.SideSell
	}
	return venue.SideBuy
}

// crossesAt reports whether order o may trade at price px.
func crossesAt(o *refOrder, px int64) bool {
	switch {
	case o.ordType == venue.OrdTypeMarket || o.ordType == venue.OrdTypeStop:
		return true
	case o.side == venue.SideBuy:
		return px <= o.price
	default:
		return px >= o.price
	}
}

func (m *refModel) stpMode(o *refOrder) venue.StpMode {
	if o.stp != venue.StpModeDefault {
		return o.stp
	}
	if mode, ok := m.cfg.AccountStpModes[o.account]; ok {
		return mode
	}
	return venue.StpModeCancelResting
}

func (m *refModel) exec() uint64 { m.lastExec++; return m.lastExec }

// toBack gives o the latest time priority: behind every order resting now.
func (m *refModel) toBack(o *refOrder) {
	m.priority++
	o.priority = m.priority
}

// addLive makes o live, behind every order resting now.
func (m *refModel) addLive(o *refOrder) {
	m.toBack(o)
	m.live[o.orderID] = o
}

func ordStatusOfLive(o *refOrder) venue.OrdStatus {
	if o.cum == 0 {
		return venue.OrdStatusNew
	}
	return venue.OrdStatusPartiallyFilled
}

func (m *refModel) newOrder(c *venue.NewOrder) {
	key := refKey{c.SessionIdx(), string(c.ClOrdID())}
	if int(c.SessionIdx()) >= m.cfg.SessionsMax {
		m.reject(c, venue.RejectReasonCapacityExceeded)
		return
	}
	if rec, ok := m.records[key]; ok {
		if c.Flags()&venue.OrderFlagsPossResend != 0 {
			m.statusOf(rec)
		} else {
			m.reject(c, venue.RejectReasonDuplicateClOrdID)
		}
		return
	}
	in, ok := m.instruments[c.InstrumentID()]
	if !ok {
		m.reject(c, venue.RejectReasonUnknownInstrument)
		return
	}
	if reason := m.checkNew(c, in); reason != venue.RejectReasonNone {
		m.reject(c, reason)
		return
	}
	if m.riskRefusesNew(c, in) {
		return
	}
	m.lastOrder++
	o := &refOrder{orderID: m.lastOrder, session: c.SessionIdx(), clOrdID: key.clOrdID, account: string(c.Account()),
		instrument: c.InstrumentID(), side: c.Side(), ordType: c.OrdType(), tif: c.TimeInForce(),
		flags: c.Flags() &^ venue.OrderFlagsPossResend, stp: c.StpMode(), price: c.PriceTicks(), qty: c.Qty(),
		maxFloor: c.MaxFloorQty(),
		leaves:   c.Qty(), expire: c.ExpireTimeNs(), stopPx: c.StopPxTicks()}
	m.records[key] = &refRecord{orderID: o.orderID, live: true, session: o.session, clOrdID: o.clOrdID}
	m.current[o.orderID] = key
	o.setIceberg(o.maxFloor)
	m.accepted(o)
	if o.stopPx != 0 {
		o.waiting = true
		m.addLive(o)
		return
	}
	m.execute(o)
	m.runStops(o.instrument)
}

// execute matches an accepted (or elected) order, then rests or ends it.
// Outside continuous trading it joins the book without matching.
func (m *refModel) execute(o *refOrder) {
	if m.instruments[o.instrument].status == venue.TradingStatusOpen {
		if o.tif == venue.TimeInForceFOK && !m.fokFillable(o) {
			m.finishCancel(o, venue.CancelReasonFokNotFilled, venue.OrdStatusCancelled, o.clOrdID, "")
			return
		}
		m.match(o)
	}
	limit := o.ordType == venue.OrdTypeLimit || o.ordType == venue.OrdTypeStopLimit
	switch {
	case o.leaves == 0:
		m.finalize(o, finalStatus(o))
	case limit && o.tif != venue.TimeInForceIOC && o.tif != venue.TimeInForceFOK:
		o.setIceberg(o.maxFloor)
		m.addLive(o)
	case m.canQueue(o):
		if o.ordType == venue.OrdTypeMarket && m.riskRefusesQueued(o) {
			return
		}
		m.queue(o)
	case !limit:
		m.finishCancel(o, venue.CancelReasonMarketRemainder, venue.OrdStatusCancelled, o.clOrdID, "")
	default:
		m.finishCancel(o, venue.CancelReasonIocRemainder, venue.OrdStatusCancelled, o.clOrdID, "")
	}
}

// runStops elects stops one at a time, each executed before the next is
// looked for: the buy stop with the lowest stop price at or below the last
// trade, else the sell stop with the highest at or above it; earliest first
// within a stop price.
func (m *refModel) runStops(instrument uint32) { m.runStopsBy(instrument, 0) }

// runStopsBy runs the stops a trade at by elects (0: the last trade, as it
// moves).
func (m *refModel) runStopsBy(instrument uint32, by int64) {
	in := m.instruments[instrument]
	for in.status == venue.TradingStatusOpen {
		last := by
		if last == 0 {
			last = in.lastTrade
		}
		if last == 0 {
			return
		}
		var next *refOrder
		for _, o := range m.live {
			if !o.waiting || o.instrument != instrument {
				continue
			}
			buy := o.side == venue.SideBuy
			if (buy && o.stopPx > last) || (!buy && o.stopPx < last) {
				continue
			}
			switch {
			case next == nil:
				next = o
			case buy != (next.side == venue.SideBuy):
				if buy {
					next = o
				}
			case o.stopPx != next.stopPx:
				if (buy && o.stopPx < next.stopPx) || (!buy && o.stopPx > next.stopPx) {
					next = o
				}
			case o.priority < next.priority:
				next = o
			}
		}
		if next == nil {
			return
		}
		delete(m.live, next.orderID)
		next.waiting = false
		m.triggered(next, last)
		m.execute(next)
	}
}

func (m *refModel) triggered(o *refOrder, by int64) {
	var e venue.OrderTriggered
	m.begin(&e)
	m.orderFields(&e, o)
	e.SetFlags(o.flags)
	e.SetStopPxTicks(o.stopPx)
	e.SetTriggerPriceTicks(by)
	e.SetLeavesQty(o.leaves)
	e.SetExpireTimeNs(o.expire)
	_ = e.SetClOrdIDString(o.clOrdID)
	m.sink.Commit()
}

// stopReason checks a stop price as a new stop order's or a waiting stop's
// replace: in the band, a stop-limit's limit not passed by it, and not at
// or through the last trade.
func (m *refModel) stopReason(in *refInstrument, side venue.Side, typ venue.OrdType, px, stopPx int64) venue.RejectReason {
	if r := priceReason(in, stopPx); r != venue.RejectReasonNone {
		return r
	}
	buy := side == venue.SideBuy
	if typ == venue.OrdTypeStopLimit && ((buy && px < stopPx) || (!buy && px > stopPx)) {
		return venue.RejectReasonStopLimitPriceWrongSide
	}
	if in.lastTrade != 0 && ((buy && stopPx <= in.lastTrade) || (!buy && stopPx >= in.lastTrade)) {
		return venue.RejectReasonStopPxAtOrThroughMarket
	}
	return venue.RejectReasonNone
}

// setIceberg makes o an iceberg of display size mf (or none when 0) with a
// fresh display slice.
func (o *refOrder) setIceberg(mf int64) {
	o.maxFloor = mf
	o.flags &^= venue.OrderFlagsIceberg
	o.display = 0
	if mf != 0 {
		o.flags |= venue.OrderFlagsIceberg
		o.display = min(mf, o.leaves)
	}
}

// shown is what the book shows of o: an iceberg's slice, else its leaves.
// traded books a trade of qty at px on o.
func (o *refOrder) traded(qty, px int64) {
	o.leaves -= qty
	o.cum += qty
	o.notional += qty * px
}

func (o *refOrder) shown() int64 {
	if o.maxFloor != 0 {
		return o.display
	}
	return o.leaves
}

// maxFloorReason checks an iceberg's display size as NewOrder and replace do.
func maxFloorReason(in *refInstrument, typ venue.OrdType, tif venue.TimeInForce, qty, mf int64) venue.RejectReason {
	if typ != venue.OrdTypeLimit || tif == venue.TimeInForceIOC || tif == venue.TimeInForceFOK {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if mf < 0 || mf > qty {
		return venue.RejectReasonMaxFloorAboveQty
	}
	if mf%in.cfg.LotSize != 0 {
		return venue.RejectReasonMaxFloorNotLotMultiple
	}
	return venue.RejectReasonNone
}

func (m *refModel) waitingStops() int {
	n := 0
	for _, o := range m.live {
		if o.waiting {
			n++
		}
	}
	return n
}

func finalStatus(o *refOrder) venue.OrdStatus {
	if o.cum == o.qty {
		return venue.OrdStatusFilled
	}
	return venue.OrdStatusCancelled
}

func (m *refModel) checkNew(c *venue.NewOrder, in *refInstrument) venue.RejectReason {
	side, typ, tif, flags, stp := c.Side(), c.OrdType(), c.TimeInForce(), c.Flags(), c.StpMode()
	validTIF := tif == venue.TimeInForceDay || tif == venue.TimeInForceGTC || tif == venue.TimeInForceIOC ||
		tif == venue.TimeInForceFOK || tif == venue.TimeInForceGTD || tif == venue.TimeInForceAtTheOpening ||
		tif == venue.TimeInForceAtTheClose
	if (side != venue.SideBuy && side != venue.SideSell) || typ < venue.OrdTypeMarket || typ > venue.OrdTypeStopLimit ||
		!validTIF || flags > 3 || stp > 4 {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	switch in.status {
	case venue.TradingStatusHalted:
		return venue.RejectReasonInstrumentHalted
	case venue.TradingStatusClosed:
		return venue.RejectReasonInstrumentClosed
	}
	if r := m.phaseReason(in, typ, tif); r != venue.RejectReasonNone {
		return r
	}
	post := flags&venue.OrderFlagsPostOnly != 0
	stop := typ == venue.OrdTypeStop || typ == venue.OrdTypeStopLimit
	if stop && post {
		return venue.RejectReasonStopPostOnly
	}
	if (typ == venue.OrdTypeMarket || typ == venue.OrdTypeStop) && (c.PriceTicks() != 0 || post) {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if !stop && c.StopPxTicks() != 0 {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if post && (tif == venue.TimeInForceIOC || tif == venue.TimeInForceFOK) {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if tif != venue.TimeInForceGTD && c.ExpireTimeNs() != 0 {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if tif == venue.TimeInForceGTD && c.ExpireTimeNs() < m.now {
		return venue.RejectReasonExpireTimeInPast
	}
	if typ == venue.OrdTypeLimit || typ == venue.OrdTypeStopLimit {
		if r := priceReason(in, c.PriceTicks()); r != venue.RejectReasonNone {
			return r
		}
	}
	if stop {
		if r := m.stopReason(in, side, typ, c.PriceTicks(), c.StopPxTicks()); r != venue.RejectReasonNone {
			return r
		}
	}
	if r := qtyReason(in, c.Qty()); r != venue.RejectReasonNone {
		return r
	}
	stopsMax := m.cfg.StopsMax
	if stopsMax == 0 {
		stopsMax = m.cfg.OrdersMax
	}
	rests := (typ == venue.OrdTypeLimit || typ == venue.OrdTypeStopLimit) && tif != venue.TimeInForceIOC && tif != venue.TimeInForceFOK
	if ((rests || stop) && len(m.live) >= m.cfg.OrdersMax) || len(m.records) >= m.cfg.ClOrdIDsMax ||
		(stop && m.waitingStops() >= stopsMax) {
		return venue.RejectReasonCapacityExceeded
	}
	if post && m.wouldTake(c.InstrumentID(), side, c.PriceTicks()) {
		return venue.RejectReasonPostOnlyWouldTake
	}
	if c.MaxFloorQty() != 0 {
		return maxFloorReason(in, typ, tif, c.Qty(), c.MaxFloorQty())
	}
	return venue.RejectReasonNone
}

func priceReason(in *refInstrument, px int64) venue.RejectReason {
	if px <= 0 {
		return venue.RejectReasonInvalidPriceIncrement
	}
	if px < in.low || px > in.high {
		return venue.RejectReasonPriceOutOfBand
	}
	return venue.RejectReasonNone
}

func qtyReason(in *refInstrument, qty int64) venue.RejectReason {
	if qty <= 0 {
		return venue.RejectReasonQtyOutOfRange
	}
	if qty%in.cfg.LotSize != 0 {
		return venue.RejectReasonQtyNotLotMultiple
	}
	if qty < in.cfg.MinQty || qty > in.cfg.MaxQty {
		return venue.RejectReasonQtyOutOfRange
	}
	return venue.RejectReasonNone
}

func (m *refModel) wouldTake(instrument uint32, side venue.Side, px int64) bool {
	opp := m.book(instrument, oppositeSide(side))
	probe := &refOrder{side: side, ordType: venue.OrdTypeLimit, price: px}
	return len(opp) > 0 && crossesAt(probe, opp[0].price)
}

// better reports whether resting order a comes before b for an aggressor
// on side: better price, then time.
func better(side venue.Side, a, b *refOrder) bool {
	if a.price != b.price {
		if side == venue.SideBuy {
			return a.price < b.price
		}
		return a.price > b.price
	}
	return a.priority < b.priority
}

// fokFillable runs match on a copy of the opposite side, with the same STP
// rules and iceberg refills, and reports whether it would fill o.
func (m *refModel) fokFillable(o *refOrder) bool {
	var book []refOrder
	for _, r := range m.book(o.instrument, oppositeSide(o.side)) {
		book = append(book, *r)
	}
	need, priority := o.qty, m.priority
	for need > 0 {
		best := -1
		for i := range book {
			r := &book[i]
			if r.leaves == 0 {
				continue
			}
			if best < 0 || better(o.side, r, &book[best]) {
				best = i
			}
		}
		if best < 0 || !crossesAt(o, book[best].price) || !m.insideVolatilityBand(o.instrument, book[best].price) {
			return false
		}
		r := &book[best]
		if o.account != "" && r.account == o.account {
			switch m.stpMode(o) {
			case venue.StpModeCancelResting:
				r.leaves = 0
				continue
			case venue.StpModeCancelAggressor, venue.StpModeCancelBoth:
				return false
			}
		}
		qty := min(need, r.shown())
		need -= qty
		r.leaves -= qty
		if r.maxFloor != 0 {
			r.display -= qty
			if r.display == 0 && r.leaves > 0 {
				r.display = min(r.maxFloor, r.leaves)
				priority++
				r.priority = priority
			}
		}
	}
	return true
}

// match trades o against the best resting order until it is done.
func (m *refModel) match(o *refOrder) {
	defer m.riskMatchEnded(o)
	ref := m.instruments[o.instrument].lastTrade
	for o.leaves > 0 {
		opp := m.book(o.instrument, oppositeSide(o.side))
		if len(opp) == 0 || !crossesAt(o, opp[0].price) {
			return
		}
		if m.interrupts(o, opp[0].price, ref) {
			return
		}
		r := opp[0]
		if o.account != "" && r.account == o.account {
			switch m.stpMode(o) {
			case venue.StpModeCancelResting:
				m.cancelLive(r, venue.CancelReasonSelfTrade, venue.OrdStatusCancelled, r.clOrdID, "")
				continue
			case venue.StpModeCancelAggressor:
				m.cancelLeaves(o, venue.CancelReasonSelfTrade, venue.OrdStatusCancelled, o.clOrdID, "")
				return
			case venue.StpModeCancelBoth:
				m.cancelLive(r, venue.CancelReasonSelfTrade, venue.OrdStatusCancelled, r.clOrdID, "")
				m.cancelLeaves(o, venue.CancelReasonSelfTrade, venue.OrdStatusCancelled, o.clOrdID, "")
				return
			}
		}
		qty := min(o.leaves, r.shown())
		m.lastTrade++
		o.traded(qty, r.price)
		r.traded(qty, r.price)
		if r.maxFloor != 0 {
			r.display -= qty
		}
		m.instruments[o.instrument].lastTrade = r.price
		oShown := o.leaves
		if o.maxFloor != 0 {
			oShown = min(o.maxFloor, o.leaves)
		}
		m.fill(o, true, qty, r.price, r.orderID, oShown)
		m.fill(r, false, qty, r.price, o.orderID, r.shown())
		m.riskTraded(r, qty, r.price)
		switch {
		case r.leaves == 0:
			delete(m.live, r.orderID)
			m.finalize(r, venue.OrdStatusFilled)
		case r.shown() == 0:
			// A new slice from the reserve, at the back of the queue.
			r.display = min(r.maxFloor, r.leaves)
			m.toBack(r)
			m.refilled(r)
		}
	}
}

func (m *refModel) refilled(o *refOrder) {
	var e venue.OrderRefilled
	m.begin(&e)
	e.SetInstrumentID(o.instrument)
	e.SetSide(o.side)
	e.SetOrderID(o.orderID)
	e.SetPriceTicks(o.price)
	e.SetDisplayQty(o.display)
	m.sink.Commit()
}

// cancelLeaves reports the cancel of o's leaves; the caller ends the order.
func (m *refModel) cancelLeaves(o *refOrder, reason venue.CancelReason, status venue.OrdStatus, clOrdID, orig string) {
	cancelled := o.leaves
	o.leaves = 0
	delete(m.live, o.orderID)
	var e venue.OrderCancelled
	m.begin(&e)
	m.orderFields(&e, o)
	e.SetReason(reason)
	e.SetOrdStatus(status)
	e.SetCancelledQty(cancelled)
	e.SetCumQty(o.cum)
	e.SetCumNotionalTicks(o.notional)
	_ = e.SetClOrdIDString(clOrdID)
	_ = e.SetOrigClOrdIDString(orig)
	m.sink.Commit()
}

func (m *refModel) finishCancel(o *refOrder, reason venue.CancelReason, status venue.OrdStatus, clOrdID, orig string) {
	m.cancelLeaves(o, reason, status, clOrdID, orig)
	m.finalize(o, status)
}

func (m *refModel) cancelLive(o *refOrder, reason venue.CancelReason, status venue.OrdStatus, clOrdID, orig string) {
	m.finishCancel(o, reason, status, clOrdID, orig)
}

// finalize keeps the final state in the order's current record.
func (m *refModel) finalize(o *refOrder, status venue.OrdStatus) {
	delete(m.live, o.orderID)
	rec := m.records[m.current[o.orderID]]
	m.keep(rec, o, status)
}

func (m *refModel) keep(rec *refRecord, o *refOrder, status venue.OrdStatus) {
	rec.live = false
	rec.status = status
	rec.side, rec.ordType, rec.tif, rec.instrument = o.side, o.ordType, o.tif, o.instrument
	rec.price, rec.qty, rec.leaves, rec.cum, rec.notional = o.price, o.qty, o.leaves, o.cum, o.notional
	rec.stopPx, rec.expire = o.stopPx, o.expire
	rec.maxFloor, rec.flags = o.maxFloor, o.flags&(venue.OrderFlagsPostOnly|venue.OrderFlagsIceberg)
	rec.account = o.account
}

func (m *refModel) reject(c *venue.NewOrder, reason venue.RejectReason) {
	var e venue.OrderRejected
	m.begin(&e)
	e.SetSessionIdx(c.SessionIdx())
	e.SetSide(c.Side())
	e.SetOrdType(c.OrdType())
	e.SetInstrumentID(c.InstrumentID())
	e.SetTimeInForce(c.TimeInForce())
	e.SetReason(reason)
	e.SetExecID(m.exec())
	e.SetPriceTicks(c.PriceTicks())
	e.SetQty(c.Qty())
	_ = e.SetClOrdID(c.ClOrdID())
	_ = e.SetAccount(c.Account())
	m.sink.Commit()
}

func (m *refModel) accepted(o *refOrder) {
	var e venue.OrderAccepted
	m.begin(&e)
	m.orderFields(&e, o)
	e.SetFlags(o.flags)
	e.SetLeavesQty(o.leaves)
	setStanding(&e, o)
	e.SetDisplayQty(o.display) // 0 but for an iceberg
	_ = e.SetClOrdIDString(o.clOrdID)
	m.sink.Commit()
}

func (m *refModel) fill(o *refOrder, aggressor bool, qty, px int64, contra uint64, shown int64) {
	var e venue.Fill
	m.begin(&e)
	m.orderFields(&e, o)
	if aggressor {
		e.SetAggressor(venue.BooleanTypeTrue)
	}
	if m.uncrossing {
		e.SetAuction(venue.BooleanTypeTrue)
	}
	if o.leaves == 0 {
		e.SetOrdStatus(venue.OrdStatusFilled)
	} else {
		e.SetOrdStatus(venue.OrdStatusPartiallyFilled)
	}
	e.SetTradeID(m.lastTrade)
	e.SetLastPriceTicks(px)
	e.SetLastQty(qty)
	setProgress(&e, o.leaves, o.cum, o.notional)
	e.SetContraOrderID(contra)
	e.SetDisplayQty(shown)
	_ = e.SetClOrdIDString(o.clOrdID)
	m.sink.Commit()
}

// find resolves OrigClOrdID/OrderID as cancels, replaces and status requests
// do: the record found (or nil) and why it cannot be acted on.
func (m *refModel) find(session uint16, orig string, orderID uint64) (*refRecord, venue.RejectReason) {
	if int(session) >= m.cfg.SessionsMax {
		return nil, venue.RejectReasonUnknownOrder
	}
	var rec *refRecord
	switch {
	case orig != "":
		rec = m.records[refKey{session, orig}]
		if rec == nil {
			return nil, venue.RejectReasonUnknownOrder
		}
		if orderID != 0 && rec.orderID != orderID {
			return rec, venue.RejectReasonOrderIDMismatch
		}
	case orderID != 0:
		key, ok := m.current[orderID]
		if !ok || key.session != session {
			return nil, venue.RejectReasonUnknownOrder
		}
		rec = m.records[key]
	default:
		return nil, venue.RejectReasonUnknownOrder
	}
	switch {
	case rec.live:
		return rec, venue.RejectReasonNone
	case rec.status == venue.OrdStatusReplaced:
		return rec, venue.RejectReasonUnknownOrder
	}
	return rec, venue.RejectReasonTooLateToCancel
}

// nowStatus is the order's status today, for cancel rejects.
func (m *refModel) nowStatus(rec *refRecord) venue.OrdStatus {
	cur := m.records[m.current[rec.orderID]]
	if cur.live {
		return ordStatusOfLive(m.live[rec.orderID])
	}
	return cur.status
}

func (m *refModel) cancelReject(to venue.CxlRejResponseTo, session uint16, rec *refRecord, reason venue.RejectReason,
	instrument uint32, side venue.Side, clOrdID, orig []byte) {
	var e venue.CancelRejected
	m.begin(&e)
	e.SetSessionIdx(session)
	e.SetResponseTo(to)
	e.SetReason(reason)
	e.SetInstrumentID(instrument)
	e.SetOrdStatus(venue.OrdStatusUnknown)
	e.SetSide(side)
	if rec != nil {
		e.SetOrdStatus(m.nowStatus(rec))
		e.SetOrderID(rec.orderID)
		if rec.live {
			o := m.live[rec.orderID]
			e.SetInstrumentID(o.instrument)
			e.SetSide(o.side)
		} else if cur := m.records[m.current[rec.orderID]]; cur.live {
			e.SetInstrumentID(m.live[rec.orderID].instrument)
			e.SetSide(m.live[rec.orderID].side)
		} else {
			e.SetInstrumentID(cur.instrument)
			e.SetSide(cur.side)
		}
	}
	_ = e.SetClOrdID(clOrdID)
	_ = e.SetOrigClOrdID(orig)
	m.sink.Commit()
}

func (m *refModel) cancel(c *venue.CancelOrder) {
	remember := c.Checks()&CancelRemembersClOrdID != 0
	rec, reason := m.find(c.SessionIdx(), string(c.OrigClOrdID()), c.OrderID())
	if reason == venue.RejectReasonUnknownOrder && remember && m.supersededOfEnded(rec) {
		reason = venue.RejectReasonTooLateToCancel
	}
	if _, dup := m.records[refKey{c.SessionIdx(), string(c.ClOrdID())}]; reason == venue.RejectReasonNone && dup {
		reason = venue.RejectReasonDuplicateClOrdID
	}
	if reason != venue.RejectReasonNone {
		m.cancelReject(venue.CxlRejResponseToCancel, c.SessionIdx(), rec, reason, c.InstrumentID(), c.Side(), c.ClOrdID(), c.OrigClOrdID())
		return
	}
	o := m.live[rec.orderID]
	m.cancelLive(o, venue.CancelReasonClient, venue.OrdStatusCancelled, string(c.ClOrdID()), o.clOrdID)
	if remember && len(m.records) < m.cfg.ClOrdIDsMax {
		// The cancel's ClOrdID names the ended order, as one a replace
		// superseded does.
		key := refKey{c.SessionIdx(), string(c.ClOrdID())}
		alias := *m.records[m.current[o.orderID]]
		alias.status, alias.clOrdID = venue.OrdStatusReplaced, key.clOrdID
		m.records[key] = &alias
	}
}

// supersededOfEnded: rec is a ClOrdID a replace or a recorded cancel left,
// of an order that has ended since.
func (m *refModel) supersededOfEnded(rec *refRecord) bool {
	return rec != nil && rec.status == venue.OrdStatusReplaced && !m.records[m.current[rec.orderID]].live
}

func (m *refModel) replace(c *venue.ReplaceOrder) {
	session := c.SessionIdx()
	rec, reason := m.find(session, string(c.OrigClOrdID()), c.OrderID())
	if reason == venue.RejectReasonUnknownOrder && c.Flags()&ReplaceEndedTooLate != 0 && m.supersededOfEnded(rec) {
		reason = venue.RejectReasonTooLateToCancel
	}
	if reason == venue.RejectReasonNone {
		reason = m.checkReplace(c, m.live[rec.orderID])
	}
	if reason != venue.RejectReasonNone {
		m.cancelReject(venue.CxlRejResponseToReplace, session, rec, reason, c.InstrumentID(), c.Side(), c.ClOrdID(), c.OrigClOrdID())
		return
	}
	o := m.live[rec.orderID]
	oldClOrdID := o.clOrdID
	m.keep(rec, o, venue.OrdStatusReplaced)
	newKey := refKey{session, string(c.ClOrdID())}
	m.records[newKey] = &refRecord{orderID: o.orderID, live: true, session: session, clOrdID: newKey.clOrdID}
	m.current[o.orderID] = newKey
	o.clOrdID = newKey.clOrdID
	if c.Qty() <= o.cum {
		// Ends Filled with its quantity cut to what it filled (FIX 4.4 Appendix D).
		o.qty = o.cum
		m.finishCancel(o, venue.CancelReasonReplacedToZero, venue.OrdStatusFilled, o.clOrdID, oldClOrdID)
		return
	}
	oldPrice, oldLeaves := o.price, o.leaves
	lost := c.PriceTicks() != o.price || c.Qty() > o.qty || c.MaxFloorQty() != o.maxFloor
	if o.waiting {
		lost = c.StopPxTicks() != o.stopPx || c.Qty() > o.qty
		o.stopPx = c.StopPxTicks()
	}
	if o.tif == venue.TimeInForceGTD {
		o.expire = c.ExpireTimeNs()
	}
	o.price, o.qty, o.leaves = c.PriceTicks(), c.Qty(), c.Qty()-o.cum
	switch {
	case lost:
		o.setIceberg(c.MaxFloorQty())
	case o.maxFloor != 0:
		o.display = min(o.display, o.leaves)
	}
	m.replaced(o, lost, oldPrice, oldLeaves, oldClOrdID)
	if o.waiting {
		if lost {
			m.toBack(o)
		}
		return
	}
	defer m.runStops(o.instrument)
	if !lost {
		return
	}
	if m.instruments[o.instrument].status != venue.TradingStatusOpen { // a call: no matching
		m.toBack(o)
		return
	}
	delete(m.live, o.orderID)
	m.match(o)
	if o.leaves == 0 {
		m.finalize(o, finalStatus(o))
		return
	}
	o.setIceberg(o.maxFloor)
	m.addLive(o)
}

func (m *refModel) checkReplace(c *venue.ReplaceOrder, o *refOrder) venue.RejectReason {
	if _, dup := m.records[refKey{c.SessionIdx(), string(c.ClOrdID())}]; dup {
		return venue.RejectReasonDuplicateClOrdID
	}
	in := m.instruments[o.instrument]
	switch in.status {
	case venue.TradingStatusHalted:
		return venue.RejectReasonInstrumentHalted
	case venue.TradingStatusClosed:
		return venue.RejectReasonInstrumentClosed
	}
	if c.Side() != o.side || c.InstrumentID() != o.instrument || c.OrdType() != o.ordType || c.TimeInForce() != o.tif {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if o.ordType == venue.OrdTypeMarket || o.queued {
		if c.Flags()&ReplaceSaysMarket != 0 {
			return venue.RejectReasonMarketNotReplaceable
		}
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if (len(c.Account()) > 0 && string(c.Account()) != o.account) ||
		(c.Flags()&ReplacePostOnly != 0 && o.flags&venue.OrderFlagsPostOnly == 0) {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if o.tif != venue.TimeInForceGTD && c.ExpireTimeNs() != 0 {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if o.tif == venue.TimeInForceGTD && c.ExpireTimeNs() < m.now {
		return venue.RejectReasonExpireTimeInPast
	}
	if o.ordType == venue.OrdTypeLimit || o.ordType == venue.OrdTypeStopLimit {
		if r := priceReason(in, c.PriceTicks()); r != venue.RejectReasonNone {
			return r
		}
	} else if c.PriceTicks() != 0 {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if o.waiting {
		r := m.stopReason(in, o.side, o.ordType, c.PriceTicks(), c.StopPxTicks())
		if r == venue.RejectReasonStopPxAtOrThroughMarket && c.StopPxTicks() == o.stopPx {
			r = venue.RejectReasonNone // a stop price kept: it may be elected, waiting for the open
		}
		if r != venue.RejectReasonNone {
			return r
		}
	} else if o.ordType != venue.OrdTypeStop && o.ordType != venue.OrdTypeStopLimit && c.StopPxTicks() != 0 {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if r := qtyReason(in, c.Qty()); r != venue.RejectReasonNone {
		return r
	}
	if c.MaxFloorQty() != 0 {
		if r := maxFloorReason(in, o.ordType, o.tif, c.Qty(), c.MaxFloorQty()); r != venue.RejectReasonNone {
			return r
		}
	}
	if len(m.records) >= m.cfg.ClOrdIDsMax {
		return venue.RejectReasonCapacityExceeded
	}
	lost := c.PriceTicks() != o.price || c.Qty() > o.qty
	if o.flags&venue.OrderFlagsPostOnly != 0 && lost && c.Qty() > o.cum && m.wouldTake(o.instrument, o.side, c.PriceTicks()) {
		return venue.RejectReasonPostOnlyWouldTake
	}
	return m.riskReplaceReason(c, o)
}

func (m *refModel) replaced(o *refOrder, lost bool, oldPrice, oldLeaves int64, orig string) {
	var e venue.OrderReplaced
	m.begin(&e)
	m.orderFields(&e, o)
	if lost {
		e.SetPriorityLost(venue.BooleanTypeTrue)
	}
	e.SetOrdStatus(ordStatusOfLive(o))
	setProgress(&e, o.leaves, o.cum, o.notional)
	e.SetOldPriceTicks(oldPrice)
	e.SetOldLeavesQty(oldLeaves)
	setStanding(&e, o)
	e.SetDisplayQty(o.shown())
	_ = e.SetClOrdIDString(o.clOrdID)
	_ = e.SetOrigClOrdIDString(orig)
	m.sink.Commit()
}

func (m *refModel) massCancel(c *venue.MassCancel) {
	reason := venue.RejectReasonNone
	if _, ok := m.instruments[c.InstrumentID()]; c.InstrumentID() != 0 && !ok {
		reason = venue.RejectReasonUnknownInstrument
	} else if c.Side() != 0 && c.Side() != 1 && c.Side() != 2 {
		reason = venue.RejectReasonUnsupportedOrderCharacteristic
	}
	var n uint32
	if reason == venue.RejectReasonNone {
		n = m.cancelWhere(c.FilterSessionIdx(), c.InstrumentID(), c.Side(), string(c.Account()))
	}
	var e venue.MassCancelReport
	m.begin(&e)
	e.SetSessionIdx(c.SessionIdx())
	e.SetMassCancelRequestType(c.MassCancelRequestType())
	e.SetReason(reason)
	e.SetInstrumentID(c.InstrumentID())
	e.SetCancelledCount(n)
	e.SetSide(c.Side())
	_ = e.SetClOrdID(c.ClOrdID())
	m.sink.Commit()
}

// cancelWhere cancels, in OrderID order, the live orders of a session (or
// any, 0xFFFF), an instrument (or any, 0), a side (or both, 0) and an
// account (or any, ""), and returns how many.
func (m *refModel) cancelWhere(session uint16, instrument uint32, side uint8, account string) uint32 {
	var n uint32
	for _, o := range m.liveByOrderID() {
		if (session == 0xFFFF || o.session == session) && (instrument == 0 || o.instrument == instrument) &&
			(side == 0 || uint8(o.side) == side) && (account == "" || account == o.account) {
			m.cancelLive(o, venue.CancelReasonMassCancel, venue.OrdStatusCancelled, o.clOrdID, "")
			n++
		}
	}
	return n
}

func (m *refModel) status(c *venue.OrderStatusRequest) {
	rec, reason := m.find(c.SessionIdx(), string(c.ClOrdID()), c.OrderID())
	if rec != nil && reason != venue.RejectReasonOrderIDMismatch && c.Checks()&StatusMatchesOrder != 0 {
		if side, instrument := m.sideOf(rec); side != c.Side() || instrument != c.InstrumentID() {
			rec, reason = nil, venue.RejectReasonUnsupportedOrderCharacteristic // Side and the instrument name the order too
		}
	}
	if rec == nil || reason == venue.RejectReasonOrderIDMismatch {
		var e venue.OrderStatus
		m.begin(&e)
		e.SetSessionIdx(c.SessionIdx())
		e.SetSide(c.Side())
		e.SetInstrumentID(c.InstrumentID())
		e.SetOrdStatus(venue.OrdStatusUnknown)
		e.SetReason(reason)
		e.SetOrderID(c.OrderID())
		e.SetExecID(m.exec())
		_ = e.SetClOrdID(c.ClOrdID())
		m.sink.Commit()
		return
	}
	m.statusOf(rec)
}

// sideOf is the side and instrument of the order a status request finds
// by rec: a superseded ClOrdID's order is its current record's.
func (m *refModel) sideOf(rec *refRecord) (venue.Side, uint32) {
	if rec.status == venue.OrdStatusReplaced {
		if cur, ok := m.records[m.current[rec.orderID]]; ok {
			rec = cur
		}
	}
	if rec.live {
		o := m.live[rec.orderID]
		return o.side, o.instrument
	}
	return rec.side, rec.instrument
}

func (m *refModel) statusOf(rec *refRecord) {
	if rec.status == venue.OrdStatusReplaced {
		// A superseded ClOrdID: the order as it stands now, under its current ClOrdID.
		if cur, ok := m.records[m.current[rec.orderID]]; ok {
			rec = cur
		}
	}
	var e venue.OrderStatus
	m.begin(&e)
	e.SetSessionIdx(rec.session)
	e.SetOrderID(rec.orderID)
	e.SetExecID(m.exec())
	_ = e.SetClOrdIDString(rec.clOrdID)
	// The order as it stands: its record, or for a live one the order's own
	// state, taken as the record would keep it.
	state := *rec
	if rec.live {
		o := m.live[rec.orderID]
		m.keep(&state, o, ordStatusOfLive(o))
	}
	e.SetMaxFloorQty(state.maxFloor)
	e.SetFlags(state.flags)
	e.SetStopPxTicks(state.stopPx)
	e.SetExpireTimeNs(state.expire)
	e.SetSide(state.side)
	e.SetOrdType(state.ordType)
	e.SetInstrumentID(state.instrument)
	e.SetTimeInForce(state.tif)
	e.SetOrdStatus(state.status)
	e.SetPriceTicks(state.price)
	e.SetQty(state.qty)
	setProgress(&e, state.leaves, state.cum, state.notional)
	_ = e.SetAccountString(state.account)
	m.sink.Commit()
}

// refDayLimited: DAY orders, and orders at the opening or the close (for
// that day's auction), expire at the end of the day.
func refDayLimited(tif venue.TimeInForce) bool {
	return tif == venue.TimeInForceDay || tif == venue.TimeInForceAtTheOpening || tif == venue.TimeInForceAtTheClose
}

func (m *refModel) endOfDay() {
	for _, o := range m.liveByOrderID() {
		if refDayLimited(o.tif) {
			m.cancelLive(o, venue.CancelReasonExpiry, venue.OrdStatusExpired, o.clOrdID, "")
		}
	}
	m.riskEndOfDay()
	for key, rec := range m.records {
		if !rec.live {
			delete(m.records, key)
		}
	}
	for id := range m.current {
		if _, ok := m.live[id]; !ok {
			delete(m.current, id)
		}
	}
}
