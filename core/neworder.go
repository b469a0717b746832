package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// applyNewOrder applies a NewOrder: duplicate check, validation,
// acceptance, matching, then resting or cancelling the remainder.
func (m *Matcher) applyNewOrder(cmd []byte) error {
	w, ok := venue.DecodeNewOrder(cmd)
	if !ok {
		var refused venue.NewOrder
		return refused.WrapDecode(cmd, 0) // the reason
	}
	c := &m.decoded.newOrder // decode writes every field
	c.decode(w)
	m.begin(c.seq, c.timestampNs)
	session := c.sessionIdx
	if int(session) >= len(m.sessions) {
		m.emitRejected(c, venue.RejectReasonCapacityExceeded)
		return nil
	}
	h := c.clOrdID.hashLen(c.clOrdIDLen, session)
	ri, at := m.index.probe(session, &c.clOrdID, h)
	if ri != noRec {
		if c.flags.Has(venue.OrderFlagsPossResend) {
			m.emitStatusOfRecord(ri)
			return nil
		}
		m.emitRejected(c, venue.RejectReasonDuplicateClOrdID)
		return nil
	}
	ii, ok := m.instrByID.lookup(c.instrumentID)
	if !ok {
		m.emitRejected(c, venue.RejectReasonUnknownInstrument)
		return nil
	}
	in := &m.instruments[ii]
	if c.ordType >= venue.OrdTypeStop || c.stopPxTicks|c.maxFloorQty != 0 { // Stop, StopLimit: the last types
		m.newSpecialOrder(c, ii, h, at) // apart, so that plain orders pay one test for them
		return nil
	}
	if reason := m.validateNewOrder(c, in); reason != venue.RejectReasonNone {
		m.emitRejected(c, reason)
		return nil
	}
	if m.risk.checks {
		m.enterCheckedOrder(c, ii, in, h, at) // risk.go; without risk the order path pays this one test
		return nil
	}
	oi := m.acceptNewOrder(c, ii, h, at)
	m.executeNewOrder(in, oi)
	if m.stopsWaiting != 0 {
		m.runStops(in)
	}
	return nil
}

// newSpecialOrder validates and enters a stop order (parked: stop.go), an
// iceberg (iceberg.go), or an order that carries a stop price without being
// a stop (refused).
func (m *Matcher) newSpecialOrder(c *newOrderCmd, ii uint16, h, at uint64) {
	in := &m.instruments[ii]
	if reason := m.validateSpecialOrder(c, in); reason != venue.RejectReasonNone {
		m.emitRejected(c, reason)
		return
	}
	if c.maxFloorQty != 0 { // for OrderAccepted (validated: the client cannot set the flag)
		c.displayQty = min(c.maxFloorQty, c.qty)
		c.flags |= venue.OrderFlagsIceberg
	}
	if m.risk.checks {
		m.enterCheckedOrder(c, ii, in, h, at) // risk.go
		return
	}
	m.enterSpecialOrder(in, m.acceptNewOrder(c, ii, h, at), c)
}

// enterSpecialOrder parks an accepted stop, or executes an accepted iceberg.
func (m *Matcher) enterSpecialOrder(in *instrument, oi orderIdx, c *newOrderCmd) {
	if c.maxFloorQty != 0 {
		m.setIceberg(oi, c.maxFloorQty)
	}
	if c.stopPxTicks != 0 {
		// Validated: only stop orders carry a stop price, inside the band.
		m.pool.orders[oi].stopLevel = in.stopLevelOf(c.stopPxTicks)
		m.parkStop(in, oi)
		return
	}
	m.executeNewOrder(in, oi)
	if m.stopsWaiting != 0 {
		m.runStops(in)
	}
}

// canRest reports whether an order of this type and time in force rests
// when it is not filled at once.
func canRest(ordType venue.OrdType, tif venue.TimeInForce) bool {
	return limitLike(ordType) && tif != venue.TimeInForceIOC && tif != venue.TimeInForceFOK
}

// validateNewOrder returns why an order must be refused, or RejectReasonNone.
// The checks run in a fixed order, so one order gets one documented reason.
func (m *Matcher) validateNewOrder(c *newOrderCmd, in *instrument) venue.RejectReason {
	side, ordType, tif, flags := c.side, c.ordType, c.tif, c.flags
	// validateHead, written out for an order of continuous trading (it is
	// too large to be inlined); anything else takes validateHead itself.
	if !side.Valid() || !ordType.Valid() || !continuousTIF(tif) ||
		flags&^(venue.OrderFlagsPostOnly|venue.OrderFlagsPossResend) != 0 || !c.stpMode.Valid() ||
		in.status != venue.TradingStatusOpen {
		if reason := m.validateHead(c, in); reason != venue.RejectReasonNone {
			return reason
		}
	}
	postOnly := flags.Has(venue.OrderFlagsPostOnly)
	if ordType == venue.OrdTypeMarket && (c.priceTicks != 0 || postOnly) {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if postOnly && (tif == venue.TimeInForceIOC || tif == venue.TimeInForceFOK) {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if reason := m.validateExpiry(tif, c.expireTimeNs); reason != venue.RejectReasonNone {
		return reason
	}
	if ordType == venue.OrdTypeLimit {
		if reason := validatePrice(in, c.priceTicks); reason != venue.RejectReasonNone {
			return reason
		}
	}
	if reason := validateQty(in, c.qty); reason != venue.RejectReasonNone {
		return reason
	}
	if (canRest(ordType, tif) && m.pool.inUse >= m.ordersMax) || m.index.full() {
		return venue.RejectReasonCapacityExceeded
	}
	if postOnly && in.wouldTake(sideIndex(side), c.priceTicks) {
		return venue.RejectReasonPostOnlyWouldTake
	}
	return venue.RejectReasonNone
}

// validateSpecialOrder validates a stop (validateStopOrder), an order
// with a stop price that is no stop, or an iceberg: the display size is
// checked last, after every check of validateNewOrder.
func (m *Matcher) validateSpecialOrder(c *newOrderCmd, in *instrument) venue.RejectReason {
	if c.ordType >= venue.OrdTypeStop || c.stopPxTicks != 0 {
		return m.validateStopOrder(c, in)
	}
	if reason := m.validateNewOrder(c, in); reason != venue.RejectReasonNone {
		return reason
	}
	return validateMaxFloor(in, c.ordType, c.tif, c.qty, c.maxFloorQty)
}

// validateHead makes the first checks of every NewOrder: values the schema
// defines (flag Iceberg is the matcher's to set, from maxFloorQty), then the
// instrument's status and phase (entryReject).
func (m *Matcher) validateHead(c *newOrderCmd, in *instrument) venue.RejectReason {
	if !c.side.Valid() || !c.ordType.Valid() || !c.tif.Valid() ||
		c.flags&^(venue.OrderFlagsPostOnly|venue.OrderFlagsPossResend) != 0 || !c.stpMode.Valid() {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	return m.entryReject(in, c.ordType, c.tif)
}

// statusReject maps a trading status to the reject of an order entry.
func statusReject(s venue.TradingStatus) venue.RejectReason {
	switch s {
	case venue.TradingStatusHalted:
		return venue.RejectReasonInstrumentHalted
	case venue.TradingStatusClosed:
		return venue.RejectReasonInstrumentClosed
	}
	return venue.RejectReasonNone
}

// validateExpiry: only GTD orders carry an expire time, and it must not
// have passed (an order is alive while timestamp ≤ expireTimeNs).
func (m *Matcher) validateExpiry(tif venue.TimeInForce, expireTimeNs int64) venue.RejectReason {
	if tif != venue.TimeInForceGTD {
		if expireTimeNs != 0 {
			return venue.RejectReasonUnsupportedOrderCharacteristic
		}
		return venue.RejectReasonNone
	}
	if expireTimeNs < m.nowNs {
		return venue.RejectReasonExpireTimeInPast
	}
	return venue.RejectReasonNone
}

// validatePrice checks a limit price: a positive number of ticks inside the band.
func validatePrice(in *instrument, priceTicks int64) venue.RejectReason {
	if priceTicks <= 0 {
		return venue.RejectReasonInvalidPriceIncrement
	}
	if !in.inBand(priceTicks) {
		return venue.RejectReasonPriceOutOfBand
	}
	return venue.RejectReasonNone
}

// validateQty checks a total order quantity against the lot and the range.
func validateQty(in *instrument, qty int64) venue.RejectReason {
	if qty <= 0 {
		return venue.RejectReasonQtyOutOfRange
	}
	// Most instruments trade single units: skip the division then.
	if in.lotSize != 1 && qty%in.lotSize != 0 {
		return venue.RejectReasonQtyNotLotMultiple
	}
	if qty < in.minQty || qty > in.maxQty {
		return venue.RejectReasonQtyOutOfRange
	}
	return venue.RejectReasonNone
}

// acceptNewOrder takes a pool slot and a ClOrdID record (h is the key's
// hash, at its table slot from probe) for a valid order, assigns its
// OrderID and reports OrderAccepted.
func (m *Matcher) acceptNewOrder(c *newOrderCmd, ii uint16, h, at uint64) orderIdx {
	oi := m.pool.alloc()
	if oi == noOrder {
		panic("core: order pool exhausted despite the capacity check")
	}
	m.lastOrderID++
	o := &m.pool.orders[oi]
	// Every field (see order).
	o.next, o.prev = noOrder, noOrder
	o.leavesQty, o.priceTicks, o.qty = c.qty, c.priceTicks, c.qty
	o.cumQty, o.cumNotionalTicks = 0, 0
	o.orderID = m.lastOrderID
	o.account = c.account
	o.sessionIdx, o.instrument = c.sessionIdx, ii
	o.side, o.ordType, o.tif = c.side, c.ordType, c.tif
	o.reportWord = reportWordOf(c.sessionIdx, c.side, c.ordType, m.instruments[ii].id)
	o.flags = c.flags &^ venue.OrderFlagsPossResend
	o.stpMode = c.stpMode
	o.resting, o.listed, o.waiting = false, false, false
	o.heapPos = -1
	o.expireTimeNs = c.expireTimeNs
	o.stopLevel = 0 // a stop's is set when it is parked
	o.lists = unlisted()
	o.rec = m.index.add(&c.clOrdID, h, at, o, oi)
	m.index.setOrder(o.orderID, o.rec)

	m.qty.orderedQty += o.qty
	m.emitAccepted(o, c)
	return oi
}

// executeNewOrder matches an accepted order, then rests what is left or
// cancels it according to its type and time in force. Outside continuous
// trading (a call phase, or an elected stop after a closing uncross) the
// order joins the book without trading: a market order waits for the
// uncross in a call (a stop elected as a market order does not: it is
// cancelled, as outside a call). A replace that loses priority in a call
// ends here too, for the same steps.
func (m *Matcher) executeNewOrder(in *instrument, oi orderIdx) {
	o := &m.pool.orders[oi]
	if in.status == venue.TradingStatusOpen {
		if o.tif == venue.TimeInForceFOK && !m.fokFillable(in, o) {
			m.cancelOrderQty(oi, venue.CancelReasonFokNotFilled, venue.OrdStatusCancelled, &m.index.recs[o.rec].key, nil)
			return
		}
		if in.canTrade(o) {
			m.match(in, oi)
			if m.risk.on {
				m.riskAfterMatch(o, 0, 0)
			}
		}
	}
	switch {
	case o.leavesQty == 0:
		m.finish(oi, terminalStatus(o))
	case canRest(o.ordType, o.tif):
		// Rest it in the book (written out: the common end of an order).
		in.sides[sideIndex(o.side)].pushBack(m.pool.orders, in.levelIndex(o.priceTicks), oi)
		if isIceberg(o) || o.listed {
			m.restSpecial(oi)
			return
		}
		m.listOrder(oi)
		if m.risk.on {
			m.riskOpen(o, 1, o.leavesQty)
		}
		if o.tif == venue.TimeInForceGTD {
			m.gtd.push(oi)
		}
	case m.canQueueMarket(in, o): // in a call, or it traded up to a volatility interruption
		if m.risk.on && !IsStop(o.ordType) && m.riskRefuseQueued(oi) {
			return
		}
		m.queueMarket(in, oi)
	case marketLike(o.ordType):
		m.cancelOrderQty(oi, venue.CancelReasonMarketRemainder, venue.OrdStatusCancelled, &m.index.recs[o.rec].key, nil)
	default:
		m.cancelOrderQty(oi, venue.CancelReasonIocRemainder, venue.OrdStatusCancelled, &m.index.recs[o.rec].key, nil)
	}
}

// restSpecial finishes resting an iceberg (its first slice, cut after what
// it traded) or an elected stop-limit (listed since it was accepted).
func (m *Matcher) restSpecial(oi orderIdx) {
	o := &m.pool.orders[oi]
	if m.risk.on {
		m.riskOpen(o, 1, o.leavesQty)
	}
	if isIceberg(o) {
		m.setIceberg(oi, m.pool.ext[oi].maxFloorQty)
	}
	if !o.listed {
		m.listOrder(oi)
		if o.tif == venue.TimeInForceGTD {
			m.gtd.push(oi)
		}
	}
}

// terminalStatus is the final status of an order with no leaves left.
func terminalStatus(o *order) venue.OrdStatus {
	if o.cumQty == o.qty {
		return venue.OrdStatusFilled
	}
	return venue.OrdStatusCancelled
}
