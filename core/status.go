package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// statusRequest answers an OrderStatusRequest: by ClOrdID within the session
// when one is given (a non-zero OrderID must then agree), else by OrderID.
// Finished orders are answered until EndOfDay forgets their ClOrdIDs; an
// unknown order is answered with ordStatus Unknown and reason UnknownOrder,
// and with StatusMatchesSide in its checks an order of the other side with
// reason UnsupportedOrderCharacteristic.
func (m *Matcher) statusRequest(c *venue.OrderStatusRequest) {
	session := c.SessionIdx()
	var key clOrdKey
	n := key.load(c.ClOrdIDArray()[:])
	ri, reason := m.locate(session, &key, n, c.OrderID())
	if ri == noRec || reason == venue.RejectReasonOrderIDMismatch {
		m.emitStatusUnknown(c, reason)
		return
	}
	if c.Checks()&StatusMatchesSide != 0 && m.sideOfRecord(ri) != c.Side() {
		m.emitStatusUnknown(c, venue.RejectReasonUnsupportedOrderCharacteristic)
		return
	}
	// A live, replaced or finished order: its record knows which.
	m.emitStatusOfRecord(ri)
}

// sideOfRecord is the side of the order behind record ri, live or ended,
// read from the record emitStatusOfRecord answers with: a ClOrdID a replace
// or a recorded cancel superseded answers the order's current record.
func (m *Matcher) sideOfRecord(ri recIdx) venue.Side {
	if m.index.recs[ri].ordStatus == venue.OrdStatusReplaced {
		if cur := m.index.findOrder(m.index.recs[ri].orderID); cur != noRec {
			ri = cur
		}
	}
	r := &m.index.recs[ri]
	if r.slot != noOrder {
		return m.pool.orders[r.slot].side
	}
	return r.side
}
