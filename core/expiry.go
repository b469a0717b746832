package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// expireGTD expires, before a command is applied, every GTD order whose
// expireTimeNs is earlier than the command's timestamp, earliest first (ties
// by OrderID). It costs O(1) when nothing expires.
func (m *Matcher) expireGTD() {
	for {
		oi, expireTimeNs := m.gtd.top()
		if oi == noOrder || expireTimeNs >= m.nowNs {
			return
		}
		m.cancelQuiet(oi, venue.CancelReasonExpiry, venue.OrdStatusExpired)
	}
}

// endOfDay expires every DAY order, and every order at the opening or the
// close still waiting for its auction (an instrument that never opened or
// closed that day: they are for that day's auction) (in OrderID order),
// then forgets the
// day's ClOrdIDs except the current ones of the orders still live (GTC and
// GTD), so that ClOrdIDs may be reused the next day and ClOrdIDsMax is a
// per-day bound. It costs O(live orders + ClOrdIDsMax), since both tables
// are cleared and rebuilt: about half a second at the default 4 Mi ClOrdIDs
// the first time (the tables' pages are touched), less afterwards. It runs
// when the market is closed. It returns how many orders expired (DAY, at the
// opening, at the close).
func (m *Matcher) endOfDay() uint32 {
	// dayLimited: see above.
	dayLimited := func(tif venue.TimeInForce) bool {
		return tif == venue.TimeInForceDay || tif == venue.TimeInForceAtTheOpening || tif == venue.TimeInForceAtTheClose
	}
	var expired uint32
	for oi := m.all.head; oi != noOrder; {
		o := &m.pool.orders[oi]
		next := o.lists[listAll].next
		if dayLimited(o.tif) {
			m.cancelQuiet(oi, venue.CancelReasonExpiry, venue.OrdStatusExpired)
			expired++
		}
		oi = next
	}
	m.riskEndOfDay()
	orders := m.pool.orders
	m.index.compact(m.lastOrderID,
		func(ri recIdx) bool { return m.index.recs[ri].slot != noOrder },
		func(from, to recIdx) { orders[m.index.recs[to].slot].rec = to },
	)
	return expired
}
