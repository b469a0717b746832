package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// Iceberg orders (see the package documentation, "Icebergs").
//
// An iceberg is a resting limit order with a maxFloorQty: the book shows
// only a display slice of at most that size (orderExt.displayQty), and only
// the slice trades. When a trade empties the slice and quantity is left, a
// new slice is cut from the reserve and the order goes to the back of its
// price level (refill), so the rest of the level keeps its turn. Its level
// counts the whole leaves quantity, as a fill-or-kill order could reach all
// of it through refills. Flag Iceberg on the order tells the matching path
// to read the display; other orders pay one flag test per trade.

// isIceberg reports whether an order shows only a display slice.
func isIceberg(o *order) bool { return o.flags&venue.OrderFlagsIceberg != 0 }

// validateMaxFloor checks an iceberg's display size: only limit orders that
// can rest (not stops) may be icebergs; the size must be positive, at most
// the order quantity and a multiple of the lot.
func validateMaxFloor(in *instrument, ordType venue.OrdType, tif venue.TimeInForce, qty, maxFloorQty int64) venue.RejectReason {
	if ordType != venue.OrdTypeLimit || !canRest(ordType, tif) {
		return venue.RejectReasonUnsupportedOrderCharacteristic
	}
	if maxFloorQty < 0 || maxFloorQty > qty {
		return venue.RejectReasonMaxFloorAboveQty
	}
	if maxFloorQty%in.lotSize != 0 {
		return venue.RejectReasonMaxFloorNotLotMultiple
	}
	return venue.RejectReasonNone
}

// setIceberg makes an order an iceberg of display size maxFloorQty (or no
// iceberg when it is 0) and cuts its display from its leaves.
func (m *Matcher) setIceberg(oi orderIdx, maxFloorQty int64) {
	o := &m.pool.orders[oi]
	if maxFloorQty == 0 {
		o.flags &^= venue.OrderFlagsIceberg
		m.pool.ext[oi] = orderExt{}
		return
	}
	o.flags |= venue.OrderFlagsIceberg
	m.pool.ext[oi] = orderExt{maxFloorQty: maxFloorQty, displayQty: min(maxFloorQty, o.leavesQty)}
}

// displayOf is what the book shows of an order: its display slice for an
// iceberg, else its leaves.
func (m *Matcher) displayOf(oi orderIdx) int64 {
	o := &m.pool.orders[oi]
	if isIceberg(o) {
		return m.pool.ext[oi].displayQty
	}
	return o.leavesQty
}

// maxFloorOf is an order's display size, 0 when it is not an iceberg.
func (m *Matcher) maxFloorOf(oi orderIdx) int64 {
	if isIceberg(&m.pool.orders[oi]) {
		return m.pool.ext[oi].maxFloorQty
	}
	return 0
}

// refill cuts a new display slice from resting iceberg ri's reserve after a
// trade emptied the last one, and moves it to the back of its level li of
// side bs: it loses time priority to every order of that price.
func (m *Matcher) refill(bs *bookSide, li int32, ri orderIdx) {
	r := &m.pool.orders[ri]
	e := &m.pool.ext[ri]
	e.displayQty = min(e.maxFloorQty, r.leavesQty)
	bs.unlink(m.pool.orders, li, ri)
	bs.pushBack(m.pool.orders, li, ri)
	m.emitRefilled(r, e.displayQty)
}

// tradeIceberg is trade when either order is an iceberg: the resting one
// trades only its display slice, each side reports what it shows after the
// trade, and a resting iceberg whose slice is emptied is refilled.
func (m *Matcher) tradeIceberg(opp *bookSide, li int32, px int64, oi, ri orderIdx) {
	o, r := &m.pool.orders[oi], &m.pool.orders[ri]
	qty := min(o.leavesQty, m.displayOf(ri))
	m.fillBoth(opp, li, px, o, r, qty)
	oDisplay, rDisplay := o.leavesQty, r.leavesQty
	if isIceberg(o) {
		oDisplay = min(m.pool.ext[oi].maxFloorQty, o.leavesQty) // the slice it would rest with
	}
	if isIceberg(r) {
		m.pool.ext[ri].displayQty -= qty
		rDisplay = m.pool.ext[ri].displayQty
	}
	m.emitFill(o, fillAggressor, px, qty, r.orderID, oDisplay)
	m.emitFill(r, fillResting, px, qty, o.orderID, rDisplay)
	if r.leavesQty == 0 {
		m.finish(ri, venue.OrdStatusFilled)
	} else if rDisplay == 0 {
		m.refill(opp, li, ri)
	}
}
