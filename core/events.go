package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// This file encodes the events. Every event carries the applying command's
// seq (causeSeq) and timestampNs; every execution report (accepted, rejected,
// fill, cancelled, replaced, status) takes the next ExecID.
//
// The four events of the order flow (OrderAccepted, Fill, OrderCancelled,
// OrderReplaced) write every byte of their block (the report head of
// wire.go, then their own fields through the flyweight), so they wrap their
// slot with venue.Overwrite<Event>, which does not zero it first. The rarer
// events use WrapEncode.

// claim returns a slot from the sink, refusing a slot that cannot hold any event.
func (m *Matcher) claim() []byte {
	slot := m.sink.Claim()
	if len(slot) < EventSlotMin {
		panic("core: EventSink.Claim returned a slot shorter than EventSlotMin")
	}
	return slot
}

func (m *Matcher) nextExecID() uint64 {
	m.lastExecID++
	return m.lastExecID
}

// orderStatusOf is the status of a live order.
func orderStatusOf(o *order) venue.OrdStatus {
	if o.cumQty == 0 {
		return venue.OrdStatusNew
	}
	return venue.OrdStatusPartiallyFilled
}

// emitAccepted reports OrderAccepted for o, entered by c, which has its stop
// price and display size (read after the slot is claimed: values passed in
// would be saved across the sink's call).
func (m *Matcher) emitAccepted(o *order, c *newOrderCmd) {
	slot := m.claim()
	m.putReportHead(slot, o, headBytes(uint8(o.flags), 0, 0))
	e, _ := venue.OverwriteOrderAccepted(slot) // claim's slots hold any event
	e.SetPriceTicks(o.priceTicks)
	e.SetQty(o.qty)
	e.SetLeavesQty(o.leavesQty)
	e.SetExpireTimeNs(o.expireTimeNs)
	e.SetStopPxTicks(c.stopPxTicks)
	e.SetMaxFloorQty(c.maxFloorQty)
	e.SetDisplayQty(c.displayQty) // 0 but for an iceberg (the schema)
	m.index.recs[o.rec].key.put(e.ClOrdIDArray())
	putAccount(e.AccountArray(), &o.account)
	m.sink.Commit()
}

func (m *Matcher) emitRejected(c *newOrderCmd, reason venue.RejectReason) {
	var e venue.OrderRejected
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetSessionIdx(c.sessionIdx)
	e.SetSide(c.side)
	e.SetOrdType(c.ordType)
	e.SetInstrumentID(c.instrumentID)
	e.SetTimeInForce(c.tif)
	e.SetReason(reason)
	e.SetExecID(m.nextExecID())
	e.SetPriceTicks(c.priceTicks)
	e.SetQty(c.qty)
	id := c.clOrdID.bytes()
	_ = e.SetClOrdID(id[:])
	_ = e.SetAccount(c.account[:])
	m.sink.Commit()
}

// fillKind is what a Fill's report head says of the trade besides the
// order's status (putReportHead's ext): the aggressor flag, or the auction
// flag of an uncross's trades, whose orders are all passive.
type fillKind uint32

const (
	fillResting   fillKind = 0
	fillAggressor fillKind = fillKind(venue.BooleanTypeTrue) << 8
	fillAuction   fillKind = 1 << 24
)

// emitFill reports one side of the trade m.lastTradeID for order o, which
// shows displayQty after it (its leaves, or an iceberg's display slice).
// The TradeID and the flags are read, not passed, so that fewer values are
// saved across the sink's call (a fill is the most frequent event).
func (m *Matcher) emitFill(o *order, kind fillKind, lastPriceTicks, lastQty int64, contraOrderID uint64, displayQty int64) {
	slot := m.claim()
	ext := uint32(kind) | uint32(venue.OrdStatusPartiallyFilled)<<16
	if o.leavesQty == 0 {
		ext = uint32(kind) | uint32(venue.OrdStatusFilled)<<16
	}
	m.putReportHead(slot, o, ext)
	e, _ := venue.OverwriteFill(slot) // claim's slots hold any event
	e.SetTradeID(m.lastTradeID)
	e.SetPriceTicks(o.priceTicks)
	e.SetQty(o.qty)
	e.SetLastPriceTicks(lastPriceTicks)
	e.SetLastQty(lastQty)
	e.SetLeavesQty(o.leavesQty)
	e.SetCumQty(o.cumQty)
	e.SetCumNotionalTicks(o.cumNotionalTicks)
	e.SetContraOrderID(contraOrderID)
	e.SetDisplayQty(displayQty)
	m.index.recs[o.rec].key.put(e.ClOrdIDArray())
	putAccount(e.AccountArray(), &o.account)
	m.sink.Commit()
}

// emitCancelled reports that o lost cancelledQty of leaves. clOrdID and
// origClOrdID follow the schema: for a client cancel they are the request's
// ClOrdID and the order's; otherwise the order's and nothing (nil).
func (m *Matcher) emitCancelled(o *order, reason venue.CancelReason, status venue.OrdStatus, cancelledQty int64, clOrdID, origClOrdID *clOrdKey) {
	slot := m.claim()
	m.putReportHead(slot, o, headBytes(uint8(reason), uint8(status), 0))
	e, _ := venue.OverwriteOrderCancelled(slot) // claim's slots hold any event
	e.SetPriceTicks(o.priceTicks)
	e.SetQty(o.qty)
	e.SetCancelledQty(cancelledQty)
	e.SetCumQty(o.cumQty)
	e.SetCumNotionalTicks(o.cumNotionalTicks)
	clOrdID.put(e.ClOrdIDArray()) // never nil
	origClOrdID.putOrNone(e.OrigClOrdIDArray())
	putAccount(e.AccountArray(), &o.account)
	m.sink.Commit()
}

// emitReplaced reports OrderReplaced for order o (slot oi, which only a
// stop or an iceberg needs), whose current ClOrdID is the new one.
func (m *Matcher) emitReplaced(o *order, oi orderIdx, priorityLost bool, oldPriceTicks, oldLeavesQty int64, origClOrdID *clOrdKey) {
	slot := m.claim()
	var lost uint8
	if priorityLost {
		lost = uint8(venue.BooleanTypeTrue)
	}
	m.putReportHead(slot, o, headBytes(lost, uint8(orderStatusOf(o)), 0))
	e, _ := venue.OverwriteOrderReplaced(slot) // claim's slots hold any event
	e.SetPriceTicks(o.priceTicks)
	e.SetQty(o.qty)
	e.SetLeavesQty(o.leavesQty)
	e.SetCumQty(o.cumQty)
	e.SetCumNotionalTicks(o.cumNotionalTicks)
	e.SetOldPriceTicks(oldPriceTicks)
	e.SetOldLeavesQty(oldLeavesQty)
	e.SetExpireTimeNs(o.expireTimeNs)
	stopPx, maxFloor, display := int64(0), int64(0), o.leavesQty
	if o.stopLevel != 0 || isIceberg(o) {
		stopPx, maxFloor, display = m.stopPxOf(oi), m.maxFloorOf(oi), m.displayOf(oi)
	}
	e.SetStopPxTicks(stopPx)
	e.SetMaxFloorQty(maxFloor)
	e.SetDisplayQty(display)
	m.index.recs[o.rec].key.put(e.ClOrdIDArray())
	origClOrdID.putOrNone(e.OrigClOrdIDArray())
	putAccount(e.AccountArray(), &o.account)
	m.sink.Commit()
}

// cancelReject holds the fields of a CancelRejected event.
type cancelReject struct {
	sessionIdx   uint16
	responseTo   venue.CxlRejResponseTo
	reason       venue.RejectReason
	instrumentID uint32
	ordStatus    venue.OrdStatus
	side         venue.Side
	orderID      uint64
}

func (m *Matcher) emitCancelRejected(r *cancelReject, clOrdID, origClOrdID *clOrdKey) {
	var e venue.CancelRejected
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetSessionIdx(r.sessionIdx)
	e.SetResponseTo(r.responseTo)
	e.SetReason(r.reason)
	e.SetInstrumentID(r.instrumentID)
	e.SetOrdStatus(r.ordStatus)
	e.SetSide(r.side)
	e.SetOrderID(r.orderID)
	id, orig := clOrdID.bytes(), origClOrdID.bytes()
	_ = e.SetClOrdID(id[:])
	_ = e.SetOrigClOrdID(orig[:])
	m.sink.Commit()
}

// emitStatusOfRecord answers with the state of the order behind record ri:
// the live order when the record is its current ClOrdID, else the state the
// record kept when the order ended. A ClOrdID that a replace superseded is
// answered with the order as it stands now, under its current ClOrdID:
// OrdStatus always tells the order's current status in FIX 4.4, which no
// longer uses OrdStatus Replaced.
func (m *Matcher) emitStatusOfRecord(ri recIdx) {
	if m.index.recs[ri].ordStatus == venue.OrdStatusReplaced {
		if cur := m.index.findOrder(m.index.recs[ri].orderID); cur != noRec {
			ri = cur
		}
	}
	r := &m.index.recs[ri]
	var e venue.OrderStatus
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetSessionIdx(r.sessionIdx)
	e.SetOrderID(r.orderID)
	e.SetExecID(m.nextExecID())
	id := r.key.bytes()
	_ = e.SetClOrdID(id[:r.key.len()])
	if r.slot != noOrder {
		o := &m.pool.orders[r.slot]
		e.SetSide(o.side)
		e.SetOrdType(o.ordType)
		e.SetInstrumentID(m.instrumentOf(o).id)
		e.SetTimeInForce(o.tif)
		e.SetOrdStatus(orderStatusOf(o))
		e.SetPriceTicks(o.priceTicks)
		e.SetQty(o.qty)
		e.SetLeavesQty(o.leavesQty)
		e.SetCumQty(o.cumQty)
		e.SetCumNotionalTicks(o.cumNotionalTicks)
		e.SetStopPxTicks(m.stopPxOf(r.slot))
		e.SetMaxFloorQty(m.maxFloorOf(r.slot))
		e.SetFlags(o.flags & (venue.OrderFlagsPostOnly | venue.OrderFlagsIceberg))
		e.SetExpireTimeNs(o.expireTimeNs)
		_ = e.SetAccount(o.account[:])
	} else {
		e.SetSide(r.side)
		e.SetOrdType(r.ordType)
		e.SetInstrumentID(r.instrumentID)
		e.SetTimeInForce(r.tif)
		e.SetOrdStatus(r.ordStatus)
		e.SetPriceTicks(r.priceTicks)
		e.SetQty(r.qty)
		e.SetLeavesQty(r.leavesQty)
		e.SetCumQty(r.cumQty)
		e.SetCumNotionalTicks(r.cumNotionalTicks)
		t := &m.index.terms[ri] // zero when the order had none (recordTerms)
		e.SetStopPxTicks(t.stopPxTicks)
		e.SetExpireTimeNs(t.expireTimeNs)
		e.SetMaxFloorQty(t.maxFloorQty)
		e.SetFlags(t.flags)
		_ = e.SetAccount(r.account[:])
	}
	m.sink.Commit()
}

// emitStatusUnknown answers a status request for an order the matcher does
// not know, echoing the request.
func (m *Matcher) emitStatusUnknown(c *venue.OrderStatusRequest, reason venue.RejectReason) {
	var e venue.OrderStatus
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetSessionIdx(c.SessionIdx())
	e.SetSide(c.Side())
	e.SetInstrumentID(c.InstrumentID())
	e.SetOrdStatus(venue.OrdStatusUnknown)
	e.SetReason(reason)
	e.SetOrderID(c.OrderID())
	e.SetExecID(m.nextExecID())
	_ = e.SetClOrdID(c.ClOrdID())
	m.sink.Commit()
}

func (m *Matcher) emitMassCancelReport(c *venue.MassCancel, reason venue.RejectReason, cancelled uint32) {
	var e venue.MassCancelReport
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetSessionIdx(c.SessionIdx())
	e.SetMassCancelRequestType(c.MassCancelRequestType())
	e.SetReason(reason)
	e.SetInstrumentID(c.InstrumentID())
	e.SetCancelledCount(cancelled)
	e.SetSide(c.Side())
	_ = e.SetClOrdID(c.ClOrdID())
	m.sink.Commit()
}

func (m *Matcher) emitTradingStatusChanged(instrumentID uint32, status venue.TradingStatus) {
	var e venue.TradingStatusChanged
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetInstrumentID(instrumentID)
	e.SetStatus(status)
	m.sink.Commit()
}

// emitTriggered reports that stop order o was triggered by a trade at
// triggerPriceTicks; its fills or its rest follow.
func (m *Matcher) emitTriggered(o *order, stopPxTicks, triggerPriceTicks int64) {
	var e venue.OrderTriggered
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetSessionIdx(o.sessionIdx)
	e.SetSide(o.side)
	e.SetOrdType(o.ordType)
	e.SetInstrumentID(o.instrumentID())
	e.SetTimeInForce(o.tif)
	e.SetFlags(o.flags)
	e.SetOrderID(o.orderID)
	e.SetExecID(m.nextExecID())
	e.SetPriceTicks(o.priceTicks)
	e.SetStopPxTicks(stopPxTicks)
	e.SetTriggerPriceTicks(triggerPriceTicks)
	e.SetQty(o.qty)
	e.SetLeavesQty(o.leavesQty)
	e.SetExpireTimeNs(o.expireTimeNs)
	m.index.recs[o.rec].key.put(e.ClOrdIDArray())
	putAccount(e.AccountArray(), &o.account)
	m.sink.Commit()
}

// stopPxOf is order oi's stop price, 0 for an order that is not a stop. An
// elected stop waiting for an uncross has left its stop level (stopLevel 0
// marks it queued) and keeps its stop price beside the order (orderExt).
func (m *Matcher) stopPxOf(oi orderIdx) int64 {
	o := &m.pool.orders[oi]
	if o.stopLevel == 0 {
		if IsStop(o.ordType) {
			return m.pool.ext[oi].electedStopPxTicks
		}
		return 0
	}
	return m.instrumentOf(o).stopPxOf(o)
}

// emitRefilled reports an iceberg's new display slice at the back of its level.
func (m *Matcher) emitRefilled(o *order, displayQty int64) {
	var e venue.OrderRefilled
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetInstrumentID(o.instrumentID())
	e.SetSide(o.side)
	e.SetOrderID(o.orderID)
	e.SetPriceTicks(o.priceTicks)
	e.SetDisplayQty(displayQty)
	m.sink.Commit()
}
