package core

import (
	"bytes"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// replaceOrder applies a cancel/replace. The new quantity is the new total
// order quantity. A price change or a quantity increase loses time priority
// (the order goes to the back of its new level, after matching what it
// crosses); a quantity decrease at the same price keeps it. A new quantity at
// or below the filled quantity ends the order Filled (replaceToFilled). The
// OrderID stays; the new ClOrdID becomes the order's current one.
func (m *Matcher) replaceOrder(c *replaceCmd) {
	session := c.sessionIdx
	if c.possResend && int(session) < len(m.sessions) {
		// Sent again and applied before: its ClOrdID names the order now
		// (and OrigClOrdID a replaced one), so the client is given the
		// order's status, as for a NewOrder sent again.
		if known := m.index.find(session, &c.clOrdID, c.clOrdID.hashLen(c.clOrdIDLen, session)); known != noRec {
			m.emitStatusOfRecord(known)
			return
		}
	}
	ri, reason := m.locate(session, &c.origClOrdID, c.origLen, c.orderID)
	if reason == venue.RejectReasonUnknownOrder && c.endedLate && m.supersededOfEnded(ri) {
		reason = venue.RejectReasonTooLateToCancel // replaces journaled before ReplaceEndedTooLate keep UnknownOrder
	}
	var h, at uint64
	if reason == venue.RejectReasonNone {
		// The new ClOrdID must be new in the session; at is its slot in
		// the table (see clOrdIndex.probe).
		h = c.clOrdID.hashLen(c.clOrdIDLen, session)
		var known recIdx
		if known, at = m.index.probe(session, &c.clOrdID, h); known != noRec {
			reason = venue.RejectReasonDuplicateClOrdID
		} else {
			reason = m.validateReplaceFields(c, ri)
		}
	}
	if reason != venue.RejectReasonNone {
		m.rejectCancel(venue.CxlRejResponseToReplace, session, ri, reason, c.instrumentID, c.side, &c.clOrdID, &c.origClOrdID)
		return
	}
	oi := m.index.recs[ri].slot
	o := &m.pool.orders[oi]
	oldRec := ri
	// The new record takes its identity from the order: a replace changes
	// neither side, type, time in force nor account.
	newRec := m.index.add(&c.clOrdID, h, at, o, oi)
	if hasTerms(o) {
		m.keepTerms(oi) // o.rec is still oldRec
	}
	m.index.recs[oldRec].keepState(o, venue.OrdStatusReplaced)
	nr := &m.index.recs[newRec]
	or := &m.index.recs[oldRec]
	nr.riskSubject = or.riskSubject
	m.index.setOrder(o.orderID, newRec)
	o.rec = newRec
	origClOrdID := &or.key

	newQty := c.qty
	if newQty <= o.cumQty {
		m.replaceToFilled(oi, &nr.key, origClOrdID)
		return
	}
	if o.waiting {
		m.amendStop(o, oi, c, origClOrdID)
		return
	}
	in := m.instrumentOf(o)
	m.amendOrder(o, oi, c, origClOrdID)
	if m.stopsWaiting != 0 {
		m.runStops(in)
	}
}

// replaceToFilled ends an order whose replace asks for no more than it has
// already filled. FIX 4.4 answers such a replace as Replaced with OrdStatus
// Filled, OrderQty equal to CumQty (Appendix D: "filled" takes precedence over
// "canceled"), so the order's quantity becomes its filled quantity and it ends
// Filled. The event is an OrderCancelled with reason ReplacedToZero whose
// cancelledQty is the leaves taken off the book; the quantity totals count the
// replace as a reduction of the ordered quantity, not as a cancel.
func (m *Matcher) replaceToFilled(oi orderIdx, clOrdID, origClOrdID *clOrdKey) {
	m.removeOrder(oi) // while its leaves still count on its level
	o := &m.pool.orders[oi]
	removed := o.leavesQty
	m.qty.orderedQty -= removed
	o.qty, o.leavesQty = o.cumQty, 0
	m.emitCancelled(o, venue.CancelReasonReplacedToZero, venue.OrdStatusFilled, removed, clOrdID, origClOrdID)
	m.finish(oi, venue.OrdStatusFilled)
}

// amendOrder changes a live order's price, quantity, expiry and iceberg
// display size once the replace is accepted, and matches it if it lost
// priority and now crosses. A smaller quantity at the same price and
// display size keeps priority (an iceberg's slice shrinks only when the
// leaves fall below it); anything else loses it.
func (m *Matcher) amendOrder(o *order, oi orderIdx, c *replaceCmd, origClOrdID *clOrdKey) {
	newPriceTicks, newQty := c.priceTicks, c.qty
	in := m.instrumentOf(o)
	bs := &in.sides[sideIndex(o.side)]
	oldPriceTicks, oldLeaves := o.priceTicks, o.leavesQty
	newLeaves := newQty - o.cumQty
	m.qty.orderedQty += newQty - o.qty
	if o.tif == venue.TimeInForceGTD && c.expireTimeNs != o.expireTimeNs {
		m.setExpiry(o, oi, c.expireTimeNs)
	}
	priorityLost := newPriceTicks != o.priceTicks || newQty > o.qty ||
		((c.maxFloorQty != 0 || isIceberg(o)) && c.maxFloorQty != m.maxFloorOf(oi))
	if !priorityLost {
		if m.risk.on {
			m.riskOpen(o, 0, newLeaves-oldLeaves)
		}
		bs.reduce(in.levelIndex(o.priceTicks), o, oldLeaves-newLeaves)
		o.qty = newQty
		if isIceberg(o) {
			e := &m.pool.ext[oi]
			e.displayQty = min(e.displayQty, o.leavesQty)
		}
		m.emitReplaced(o, oi, false, oldPriceTicks, oldLeaves, origClOrdID)
		return
	}
	if m.risk.on {
		m.riskOpen(o, -1, -oldLeaves)
	}
	bs.unlink(m.pool.orders, in.levelIndex(o.priceTicks), oi)
	o.priceTicks = newPriceTicks
	o.qty = newQty
	o.leavesQty = newLeaves
	if c.maxFloorQty != 0 || isIceberg(o) {
		m.setIceberg(oi, c.maxFloorQty)
	}
	m.emitReplaced(o, oi, true, oldPriceTicks, oldLeaves, origClOrdID)
	if in.status != venue.TradingStatusOpen { // a call: no matching (auction.go)
		in.auction.replaces++
		m.executeNewOrder(in, oi) // rests it, as for an order entered in the call
		return
	}
	// match's first test, made before calling it as executeNewOrder does:
	// most replaces move an order to a price that does not cross.
	if in.canTrade(o) {
		if m.risk.on { // the figures before the match live across it only then
			cumQty, cumNotional := o.cumQty, o.cumNotionalTicks
			m.match(in, oi)
			m.riskAfterMatch(o, cumQty, cumNotional)
		} else {
			m.match(in, oi)
		}
	}
	if o.leavesQty == 0 {
		m.finish(oi, terminalStatus(o))
		return
	}
	bs.pushBack(m.pool.orders, in.levelIndex(o.priceTicks), oi)
	if isIceberg(o) {
		m.setIceberg(oi, c.maxFloorQty) // its slice after what it traded
	}
	if m.risk.on {
		m.riskOpen(o, 1, o.leavesQty)
	}
}

// setExpiry gives a GTD order a new expire time (its place in the GTD heap
// follows); other orders have none.
func (m *Matcher) setExpiry(o *order, oi orderIdx, newExpireTimeNs int64) {
	if o.tif == venue.TimeInForceGTD && newExpireTimeNs != o.expireTimeNs {
		m.gtd.remove(oi)
		o.expireTimeNs = newExpireTimeNs
		m.gtd.push(oi)
	}
}

// validateReplaceFields returns why a replace of the live order behind
// record ri must be refused (its ClOrdID checked apart), or
// RejectReasonNone. The order's side, instrument, type and time in force
// cannot change; an empty account means "unchanged".
func (m *Matcher) validateReplaceFields(c *replaceCmd, ri recIdx) venue.RejectReason {
	o := &m.pool.orders[m.index.recs[ri].slot]
	in := m.instrumentOf(o)
	if in.status != venue.TradingStatusOpen { // statusReject, tested once when open
		if reason := statusReject(in.status); reason != venue.RejectReasonNone {
			return reason
		}
	}
	if c.side != o.side || c.instrumentID != in.id || c.ordType != o.ordType || c.tif != o.tif {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if o.ordType == venue.OrdTypeMarket || (o.waiting && o.stopLevel == 0) { // one waiting for an uncross (an elected stop too): it has no price to change
		if c.sayMarket {
			return venue.RejectReasonMarketNotReplaceable
		}
		return venue.RejectReasonUnsupportedOrderCharacteristic // replaces journaled before ReplaceSaysMarket
	}
	// Both accounts are NUL-padded after their first NUL.
	if c.account[0] != 0 && c.account != o.account {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if c.postOnly && !o.flags.Has(venue.OrderFlagsPostOnly) { // post-only is kept, never added (ReplacePostOnly)
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if reason := m.validateExpiry(o.tif, c.expireTimeNs); reason != venue.RejectReasonNone {
		return reason
	}
	var reason venue.RejectReason
	if o.ordType == venue.OrdTypeLimit && c.stopPxTicks == 0 {
		reason = validatePrice(in, c.priceTicks) // validateReplacePrices of a limit order
	} else {
		reason = validateReplacePrices(c, o, in)
	}
	if reason != venue.RejectReasonNone {
		return reason
	}
	if reason := validateQty(in, c.qty); reason != venue.RejectReasonNone {
		return reason
	}
	if c.maxFloorQty != 0 {
		if reason := validateMaxFloor(in, o.ordType, o.tif, c.qty, c.maxFloorQty); reason != venue.RejectReasonNone {
			return reason
		}
	}
	if m.index.full() {
		return venue.RejectReasonCapacityExceeded
	}
	priorityLost := c.priceTicks != o.priceTicks || c.qty > o.qty
	if o.flags.Has(venue.OrderFlagsPostOnly) && priorityLost && c.qty > o.cumQty &&
		in.wouldTake(sideIndex(o.side), c.priceTicks) {
		return venue.RejectReasonPostOnlyWouldTake
	}
	if m.risk.checks {
		return m.riskCheckReplace(c, o)
	}
	return venue.RejectReasonNone
}

// validateReplacePrices checks a replace's limit and stop prices. A limit
// or stop-limit order needs a valid limit price, a stop order none. A
// waiting stop's new stop price is checked as a new stop order's is (one it
// keeps, not against the last trade: it may be elected and waiting for the
// open); an
// elected stop-limit's stop price no longer matters and the replace's is
// ignored; other orders carry none.
func validateReplacePrices(c *replaceCmd, o *order, in *instrument) venue.RejectReason {
	if limitLike(o.ordType) {
		if reason := validatePrice(in, c.priceTicks); reason != venue.RejectReasonNone {
			return reason
		}
	} else if c.priceTicks != 0 {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	switch {
	case o.waiting:
		return validateStopPx(in, o.side, o.ordType, c.priceTicks, c.stopPxTicks, c.stopPxTicks == in.stopPxOf(o))
	case !IsStop(o.ordType) && c.stopPxTicks != 0:
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	return venue.RejectReasonNone
}

// trimNUL returns b up to its first NUL.
func trimNUL(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}
