package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// statusRequest answers an OrderStatusRequest: by ClOrdID within the session
// when one is given (a non-zero OrderID must then agree), else by OrderID.
// Finished orders are answered until EndOfDay forgets their ClOrdIDs; an
// unknown order is answered with ordStatus Unknown and reason UnknownOrder,
// and with StatusMatchesOrder in its checks an order of the other side or
// instrument with reason UnsupportedOrderCharacteristic.
func (m *Matcher) statusRequest(c *venue.OrderStatusRequest) {
	session := c.SessionIdx()
	var key clOrdKey
	n := key.load(c.ClOrdIDArray()[:])
	ri, reason := m.locate(session, &key, n, c.OrderID())
	if ri == noRec || reason == venue.RejectReasonOrderIDMismatch {
		m.emitStatusUnknown(c, reason)
		return
	}
	if side, instrumentID := m.sideOfRecord(ri); c.Checks()&StatusMatchesOrder != 0 && (side != c.Side() || instrumentID != c.InstrumentID()) {
		m.emitStatusUnknown(c, venue.RejectReasonUnsupportedOrderCharacteristic)
		return
	}
	// A live, replaced or finished order: its record knows which.
	m.emitStatusOfRecord(ri)
}

// sideOfRecord is the side and instrument of the order behind record ri, live or ended,
// read from the record emitStatusOfRecord answers with: a ClOrdID a replace
// or a recorded cancel superseded answers the order's current record.
func (m *Matcher) sideOfRecord(ri recIdx) (venue.Side, uint32) {
	if m.index.recs[ri].ordStatus == venue.OrdStatusReplaced {
		if cur := m.index.findOrder(m.index.recs[ri].orderID); cur != noRec {
			ri = cur
		}
	}
	r := &m.index.recs[ri]
	if r.slot != noOrder {
		o := &m.pool.orders[r.slot]
		return o.side, o.instrumentID()
	}
	return r.side, r.instrumentID
}
