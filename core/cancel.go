package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// removeOrder takes an order out of every structure that holds it: its price
// level, the session and all-orders lists, the GTD heap. It is idempotent.
func (m *Matcher) removeOrder(oi orderIdx) {
	o := &m.pool.orders[oi]
	if o.resting {
		if m.risk.on && o.leavesQty > 0 { // a filled order stopped counting at its last fill (riskTradeResting)
			m.riskOpen(o, -1, -o.leavesQty)
		}
		in := m.instrumentOf(o)
		in.sides[sideIndex(o.side)].unlink(m.pool.orders, in.levelIndex(o.priceTicks), oi)
	} else if o.waiting {
		m.unparkStop(oi)
	}
	if o.listed {
		m.unlistOrder(oi)
	}
	if o.heapPos >= 0 {
		m.gtd.remove(oi)
	}
}

// finish ends an order: it leaves every structure, its current ClOrdID record
// keeps its final state, and its pool slot is freed.
func (m *Matcher) finish(oi orderIdx, status venue.OrdStatus) {
	m.removeOrder(oi)
	o := &m.pool.orders[oi]
	if hasTerms(o) {
		m.keepTerms(oi)
	}
	m.index.recs[o.rec].keepState(o, status)
	m.pool.release(oi)
}

// keepState copies an order's state into its record, which will answer
// status requests once the order is gone or has a new ClOrdID, and detaches
// the record from the order. Its caller keeps a stop, GTD, iceberg or
// post-only order's terms first (keepTerms): apart, keepState stays small
// enough to inline on the plain orders' path.
func (r *clOrdRecord) keepState(o *order, status venue.OrdStatus) {
	r.priceTicks = o.priceTicks
	r.qty = o.qty
	r.leavesQty = o.leavesQty
	r.cumQty = o.cumQty
	r.cumNotionalTicks = o.cumNotionalTicks
	r.ordStatus = status
	r.slot = noOrder
}

// keepTerms keeps order oi's terms for its current record, which it is
// about to keep the state of (see recordTerms).
func (m *Matcher) keepTerms(oi orderIdx) {
	o := &m.pool.orders[oi]
	m.index.terms[o.rec] = recordTerms{stopPxTicks: m.stopPxOf(oi), expireTimeNs: o.expireTimeNs,
		maxFloorQty: m.maxFloorOf(oi), flags: o.flags & (venue.OrderFlagsPostOnly | venue.OrderFlagsIceberg)}
	if int(o.rec) >= m.index.termsEnd {
		m.index.termsEnd = int(o.rec) + 1
	}
}

// dropLeaves cancels an order's leaves and reports it, leaving the order
// allocated (the caller finishes it). It also takes the order out of the book.
func (m *Matcher) dropLeaves(oi orderIdx, reason venue.CancelReason, status venue.OrdStatus, clOrdID, origClOrdID *clOrdKey) {
	m.removeOrder(oi)
	o := &m.pool.orders[oi]
	cancelled := o.leavesQty
	o.leavesQty = 0
	m.qty.cancelledQty += cancelled
	m.emitCancelled(o, reason, status, cancelled, clOrdID, origClOrdID)
}

// cancelOrderQty cancels an order's leaves, reports it and ends the order:
// dropLeaves and the end of finish, written out to save calls on the
// cancel path.
func (m *Matcher) cancelOrderQty(oi orderIdx, reason venue.CancelReason, status venue.OrdStatus, clOrdID, origClOrdID *clOrdKey) {
	m.removeOrder(oi)
	o := &m.pool.orders[oi]
	cancelled := o.leavesQty
	o.leavesQty = 0
	m.qty.cancelledQty += cancelled
	m.emitCancelled(o, reason, status, cancelled, clOrdID, origClOrdID)
	if hasTerms(o) {
		m.keepTerms(oi)
	}
	m.index.recs[o.rec].keepState(o, status)
	m.pool.release(oi)
}

// cancelQuiet cancels a resting order for a reason that is not a client
// request (mass cancel, disconnect, expiry): the event names the order's own
// ClOrdID and no OrigClOrdID.
func (m *Matcher) cancelQuiet(oi orderIdx, reason venue.CancelReason, status venue.OrdStatus) {
	o := &m.pool.orders[oi]
	m.cancelOrderQty(oi, reason, status, &m.index.recs[o.rec].key, nil)
}

// locate finds the order a cancel, replace or status request addresses: by
// OrigClOrdID within the session when one is given (and then a non-zero
// OrderID must agree), else by OrderID (which must belong to the session).
// origLen is origClOrdID's length. It returns the addressed record, or noRec, and RejectReasonNone only when
// the record is the current ClOrdID of a live order.
func (m *Matcher) locate(session uint16, origClOrdID *clOrdKey, origLen int, orderID uint64) (recIdx, venue.RejectReason) {
	if int(session) >= len(m.sessions) {
		return noRec, venue.RejectReasonUnknownOrder
	}
	var ri recIdx
	switch {
	case origLen > 0:
		ri = m.index.find(session, origClOrdID, origClOrdID.hashLen(origLen, session))
		if ri == noRec {
			return noRec, venue.RejectReasonUnknownOrder
		}
		if orderID != 0 && m.index.recs[ri].orderID != orderID {
			return ri, venue.RejectReasonOrderIDMismatch
		}
	case orderID != 0:
		ri = m.index.findOrder(orderID)
		if ri == noRec || m.index.recs[ri].sessionIdx != session {
			return noRec, venue.RejectReasonUnknownOrder
		}
	default:
		return noRec, venue.RejectReasonUnknownOrder
	}
	r := &m.index.recs[ri]
	switch {
	case r.slot != noOrder:
		return ri, venue.RejectReasonNone
	case r.ordStatus == venue.OrdStatusReplaced:
		// The ClOrdID was replaced: only the order's current ClOrdID addresses it.
		return ri, venue.RejectReasonUnknownOrder
	default:
		return ri, venue.RejectReasonTooLateToCancel
	}
}

// currentStatus is the status of the order behind a record now: a replaced
// ClOrdID reports the order's current status.
func (m *Matcher) currentStatus(ri recIdx) venue.OrdStatus {
	r := &m.index.recs[ri]
	if r.ordStatus == venue.OrdStatusReplaced && r.slot == noOrder {
		ri = m.index.findOrder(r.orderID)
		r = &m.index.recs[ri]
	}
	if r.slot != noOrder {
		return orderStatusOf(&m.pool.orders[r.slot])
	}
	return r.ordStatus
}

// rejectCancel answers a cancel or replace that cannot be applied.
func (m *Matcher) rejectCancel(responseTo venue.CxlRejResponseTo, session uint16, ri recIdx, reason venue.RejectReason,
	instrumentID uint32, side venue.Side, clOrdID, origClOrdID *clOrdKey) {
	rej := cancelReject{
		sessionIdx:   session,
		responseTo:   responseTo,
		reason:       reason,
		instrumentID: instrumentID,
		ordStatus:    venue.OrdStatusUnknown,
		side:         side,
	}
	if ri != noRec {
		r := &m.index.recs[ri]
		rej.instrumentID = r.instrumentID
		rej.side = r.side
		rej.orderID = r.orderID
		rej.ordStatus = m.currentStatus(ri)
	}
	m.emitCancelRejected(&rej, clOrdID, origClOrdID)
}

// applyCancel applies a client's CancelOrder.
func (m *Matcher) applyCancel(cmd []byte) error {
	w, ok := venue.DecodeCancelOrder(cmd)
	if !ok {
		var refused venue.CancelOrder
		return refused.WrapDecode(cmd, 0) // the reason
	}
	c := &m.decoded.cancel // decode writes every field
	c.decode(w)
	m.begin(c.seq, c.timestampNs)
	session := c.sessionIdx
	ri, reason := m.locate(session, &c.origClOrdID, c.origLen, c.orderID)
	if reason == venue.RejectReasonNone && c.matchOrder {
		if o := &m.pool.orders[m.index.recs[ri].slot]; o.side != c.side || m.instrumentOf(o).id != c.instrumentID {
			reason = venue.RejectReasonUnsupportedOrderCharacteristic
		}
	}
	if reason == venue.RejectReasonUnknownOrder && c.remember && m.supersededOfEnded(ri) {
		// Cancels journaled before CancelRemembersClOrdID keep UnknownOrder.
		reason = venue.RejectReasonTooLateToCancel
	}
	var h, at uint64
	if reason == venue.RejectReasonNone {
		// A cancel's own ClOrdID must be new in the session, as an order's
		// or a replace's is (FIX: unique per request for the day); at is
		// its slot in the table, where it is recorded (see
		// clOrdIndex.probe).
		h = c.clOrdID.hashLen(c.clOrdIDLen, session)
		var known recIdx
		if known, at = m.index.probe(session, &c.clOrdID, h); known != noRec {
			reason = venue.RejectReasonDuplicateClOrdID
		}
	}
	if reason != venue.RejectReasonNone {
		m.rejectCancel(venue.CxlRejResponseToCancel, session, ri, reason, c.instrumentID, c.side, &c.clOrdID, &c.origClOrdID)
		return nil
	}
	oi := m.index.recs[ri].slot
	m.cancelOrderQty(oi, venue.CancelReasonClient, venue.OrdStatusCancelled, &c.clOrdID, &m.index.recs[ri].key)
	if c.remember && !m.index.full() {
		m.index.addEnded(&c.clOrdID, h, at, ri)
	}
	return nil
}

// supersededOfEnded reports whether record ri is a ClOrdID a replace or a
// recorded cancel left (locate answers UnknownOrder) of an order that has
// ended since: a cancel or replace naming it is too late, as one naming the
// order's current ClOrdID is (CancelRemembersClOrdID, ReplaceEndedTooLate).
func (m *Matcher) supersededOfEnded(ri recIdx) bool {
	if ri == noRec || m.index.recs[ri].ordStatus != venue.OrdStatusReplaced {
		return false
	}
	cur := m.index.findOrder(m.index.recs[ri].orderID)
	return cur != noRec && m.index.recs[cur].slot == noOrder // the order's current record keeps its final state
}
