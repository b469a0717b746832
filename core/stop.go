package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// Stop and stop-limit orders (see the package documentation, "Stops").
//
// An accepted stop waits off the book in its instrument's trigger structure,
// instrument.stops: one bookSide per side with a level per stop price, the
// same arrays, bitmap and FIFOs as the book, so that parking, cancelling and
// finding the next stop to elect are O(1) whatever the number of stops. It
// holds an order slot, is listed with its session's orders (mass cancel,
// cancel-on-disconnect, EndOfDay and GTD expiry treat it like a resting
// order) and counts in stopsWaiting, bounded by Config.StopsMax.
//
// Election happens after the order that traded has finished (filled,
// rested or cancelled), against the instrument's last trade price then: a
// buy stop is elected when the last trade is at or above its stop price, a
// sell stop at or below. The elected stops enter one at a time, each
// finishing before the next is looked for, and each may trade and so move
// the last trade price: buy stops first, the lowest stop price first, then
// sell stops, the highest first, time priority within a stop price. The
// cascade ends when no waiting stop is elected by the last trade price;
// every stop is elected at most once, so it ends within stopsWaiting steps.

// IsStop reports whether an order type waits for a trigger (Stop, StopLimit).
func IsStop(t venue.OrdType) bool {
	return t == venue.OrdTypeStop || t == venue.OrdTypeStopLimit
}

// marketLike reports whether an order of valid type t trades at any price: a
// market order, or a stop order once elected. They are the odd types
// (Market 1, Stop 3; Limit 2, StopLimit 4): one test on the matching path.
func marketLike(t venue.OrdType) bool {
	return t&1 != 0
}

// limitLike reports whether an order of valid type t has a limit price: a
// limit order, or a stop-limit order (which rests as a limit order once
// elected).
func limitLike(t venue.OrdType) bool {
	return t&1 == 0
}

// stopPxOf is an order's stop price, 0 for an order that is not a stop.
func (in *instrument) stopPxOf(o *order) int64 {
	if o.stopLevel == 0 {
		return 0
	}
	return in.bandLowTicks + int64(o.stopLevel-1)
}

// stopLevelOf is the order.stopLevel of a stop price inside the band.
func (in *instrument) stopLevelOf(stopPxTicks int64) int32 {
	return in.levelIndex(stopPxTicks) + 1
}

// validateStopOrder is validateNewOrder for an order that is a stop or
// carries a stop price (or has an undefined type), with the same checks in
// the same order (see the package documentation) and the stop's own between
// the limit price and the quantity. Apart, they cost the other orders one
// test.
func (m *Matcher) validateStopOrder(c *newOrderCmd, in *instrument) venue.RejectReason {
	if reason := m.validateHead(c, in); reason != venue.RejectReasonNone {
		return reason
	}
	ordType, tif := c.ordType, c.tif
	stop := IsStop(ordType)
	postOnly := c.flags.Has(venue.OrderFlagsPostOnly)
	switch {
	case stop && postOnly:
		return venue.RejectReasonStopPostOnly
	case marketLike(ordType) && (c.priceTicks != 0 || postOnly), !stop:
		// A market or stop order with a price, or a stop price on an
		// order that is not a stop.
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if reason := m.validateExpiry(tif, c.expireTimeNs); reason != venue.RejectReasonNone {
		return reason
	}
	if limitLike(ordType) {
		if reason := validatePrice(in, c.priceTicks); reason != venue.RejectReasonNone {
			return reason
		}
	}
	if reason := validateStopPx(in, c.side, ordType, c.priceTicks, c.stopPxTicks, false); reason != venue.RejectReasonNone {
		return reason
	}
	if reason := validateQty(in, c.qty); reason != venue.RejectReasonNone {
		return reason
	}
	if m.pool.inUse >= m.ordersMax || m.index.full() || m.stopsWaiting >= m.stopsMax {
		return venue.RejectReasonCapacityExceeded
	}
	if c.maxFloorQty != 0 {
		return validateMaxFloor(in, ordType, tif, c.qty, c.maxFloorQty) // a stop cannot be an iceberg
	}
	return venue.RejectReasonNone
}

// validateStopPx checks a stop order's stop price: whole ticks inside the
// band like a limit price; for a stop-limit a limit price that the stop
// price does not already pass (a buy's limit at or above its stop price, a
// sell's at or below); and not at or through the last trade price, which
// would elect the stop at once (a buy stop above the last trade, a sell stop
// below it). Before the instrument's first trade any stop price in the band
// is accepted. A replace that keeps a waiting stop's stop price (kept) is
// not checked against the last trade: outside continuous trading a stop the
// last trade elected waits for the open ("Stops" in doc.go), and its stop
// price, passed already, must not stop it from being amended.
func validateStopPx(in *instrument, side venue.Side, ordType venue.OrdType, priceTicks, stopPxTicks int64, kept bool) venue.RejectReason {
	if reason := validatePrice(in, stopPxTicks); reason != venue.RejectReasonNone {
		return reason
	}
	buy := side == venue.SideBuy
	if ordType == venue.OrdTypeStopLimit && ((buy && priceTicks < stopPxTicks) || (!buy && priceTicks > stopPxTicks)) {
		return venue.RejectReasonStopLimitPriceWrongSide
	}
	if last := in.lastTradeTicks; !kept && last != 0 && ((buy && stopPxTicks <= last) || (!buy && stopPxTicks >= last)) {
		return venue.RejectReasonStopPxAtOrThroughMarket
	}
	return venue.RejectReasonNone
}

// parkStop puts an accepted stop order into its instrument's trigger
// structure, behind the stops of the same stop price, and lists it.
func (m *Matcher) parkStop(in *instrument, oi orderIdx) {
	m.parkStopOnly(in, oi)
	m.listOrder(oi)
	if m.pool.orders[oi].tif == venue.TimeInForceGTD {
		m.gtd.push(oi)
	}
}

// parkStopOnly links a stop into the trigger structure (not the lists).
func (m *Matcher) parkStopOnly(in *instrument, oi orderIdx) {
	o := &m.pool.orders[oi]
	in.stops[sideIndex(o.side)].pushBack(m.pool.orders, o.stopLevel-1, oi)
	o.resting, o.waiting = false, true // pushBack marks an order resting in the book
	m.stopsWaiting++
	if m.risk.on { // a waiting stop is an open order of its subject (core doc, "Risk")
		m.riskOpenWaiting(o, 1, o.leavesQty)
	}
}

// unparkStop takes a waiting stop out of the trigger structure, or a
// market order waiting for an uncross (stopLevel 0) out of its FIFO.
func (m *Matcher) unparkStop(oi orderIdx) {
	o := &m.pool.orders[oi]
	if o.stopLevel == 0 {
		m.unqueueMarket(oi)
		return
	}
	in := m.instrumentOf(o)
	in.stops[sideIndex(o.side)].unlink(m.pool.orders, o.stopLevel-1, oi)
	o.waiting = false
	m.stopsWaiting--
	if m.risk.on {
		m.riskOpenWaiting(o, -1, -o.leavesQty)
	}
}

// electedStop returns the next stop the last trade price elects, or noOrder.
func (in *instrument) electedStop() orderIdx {
	return in.electedStopBy(in.lastTradeTicks)
}

// electedStopBy returns the next stop a trade at last elects, or noOrder
// (none when last is 0: no trade).
func (in *instrument) electedStopBy(last int64) orderIdx {
	if last == 0 {
		return noOrder
	}
	if b := in.stops[0].best; b >= 0 && in.bandLowTicks+int64(b) <= last {
		return in.stops[0].levels[b].head
	}
	if s := in.stops[1].best; s >= 0 && in.bandLowTicks+int64(s) >= last {
		return in.stops[1].levels[s].head
	}
	return noOrder
}

// runStops elects and executes stops until the last trade price elects no
// more (see the top of this file). Each step takes one stop out of the
// structure, so the loop runs at most stopsWaiting times. Stops enter only
// an open instrument: in a call, halted or closed they keep waiting, and
// the move to Open runs them ("Stops" in doc.go). An elected stop-market
// order in a call would otherwise be a market order that is not a plain
// one, and a stop-limit would join a call it was not part of.
func (m *Matcher) runStops(in *instrument) {
	for in.status == venue.TradingStatusOpen { // a stop's trade may start a volatility interruption
		oi := in.electedStop()
		if oi == noOrder {
			return
		}
		m.unparkStop(oi)
		m.emitTriggered(&m.pool.orders[oi], in.stopPxOf(&m.pool.orders[oi]), in.lastTradeTicks)
		m.executeNewOrder(in, oi)
	}
}

// runStopsAfterUncross runs the stops an uncross to Open leaves elected:
// first those that the last trade before it, prevTicks, elected and that
// waited (a closing uncross's, waiting for the open, or those a volatility
// interruption stopped the cascade of: "Auctions" in doc.go), in the usual
// order and reported as triggered by that trade, then the cascade of the
// uncross price. The uncross price does not take back an election:
// measured from it alone, a sell stop the close had elected stayed waiting
// when the market opened higher, without a word. A stop entered or given a
// new stop price during the call was checked against prevTicks
// (StopPxAtOrThroughMarket), so only stops elected before the call run
// first.
func (m *Matcher) runStopsAfterUncross(in *instrument, prevTicks int64) {
	for in.status == venue.TradingStatusOpen {
		oi := in.electedStopBy(prevTicks)
		if oi == noOrder {
			break
		}
		m.unparkStop(oi)
		m.emitTriggered(&m.pool.orders[oi], in.stopPxOf(&m.pool.orders[oi]), prevTicks)
		m.executeNewOrder(in, oi)
	}
	m.runStops(in)
}

// amendStop applies an accepted replace to a waiting stop: it stays waiting
// (a replace never elects it). A new stop price or a larger quantity sends
// it behind the stops of its (new) stop price; otherwise it keeps its place.
func (m *Matcher) amendStop(o *order, oi orderIdx, c *replaceCmd, origClOrdID *clOrdKey) {
	in := m.instrumentOf(o)
	ss := &in.stops[sideIndex(o.side)]
	oldPriceTicks, oldLeaves := o.priceTicks, o.leavesQty
	m.qty.orderedQty += c.qty - o.qty
	m.setExpiry(o, oi, c.expireTimeNs)
	newStopLevel := in.stopLevelOf(c.stopPxTicks)
	priorityLost := newStopLevel != o.stopLevel || c.qty > o.qty
	if !priorityLost {
		if m.risk.on {
			m.riskOpenWaiting(o, -1, -o.leavesQty)
		}
		ss.reduce(o.stopLevel-1, o, oldLeaves-c.qty)
		o.qty, o.priceTicks = c.qty, c.priceTicks
		if m.risk.on {
			m.riskOpenWaiting(o, 1, o.leavesQty)
		}
		m.emitReplaced(o, oi, false, oldPriceTicks, oldLeaves, origClOrdID)
		return
	}
	m.unparkStop(oi)
	o.qty, o.leavesQty, o.priceTicks, o.stopLevel = c.qty, c.qty, c.priceTicks, newStopLevel
	m.parkStopOnly(in, oi)
	m.emitReplaced(o, oi, true, oldPriceTicks, oldLeaves, origClOrdID)
}
