package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// statusRequest answers an OrderStatusRequest: by ClOrdID within the session
// when one is given (a non-zero OrderID must then agree), else by OrderID.
// Finished orders are answered until EndOfDay forgets their ClOrdIDs; an
// unknown order is answered with ordStatus Unknown and reason UnknownOrder.
func (m *Matcher) statusRequest(c *venue.OrderStatusRequest) {
	session := c.SessionIdx()
	var key clOrdKey
	n := key.load(c.ClOrdIDArray()[:])
	ri, reason := m.locate(session, &key, n, c.OrderID())
	if ri == noRec || reason == venue.RejectReasonOrderIDMismatch {
		m.emitStatusUnknown(c, reason)
		return
	}
	// A live, replaced or finished order: its record knows which.
	m.emitStatusOfRecord(ri)
}
