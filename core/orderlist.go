package core

// orderList is an intrusive doubly linked list of live orders in OrderID
// order. OrderIDs only grow and an order joins the lists when it first rests,
// so appending keeps the lists sorted. The matcher keeps one list per session
// (through order.sessNext/sessPrev) and one of all orders (through
// order.allNext/allPrev), so that mass cancels, cancel-on-disconnect and
// EndOfDay visit orders in OrderID order, deterministically, and a session's
// cancels cost O(that session's orders).
type orderList struct {
	head, tail orderIdx
	count      int32
}

func newOrderList() orderList { return orderList{head: noOrder, tail: noOrder} }

// listOrder adds a newly resting order at the tail of its session's list and
// of the list of all orders.
func (m *Matcher) listOrder(oi orderIdx) {
	orders := m.pool.orders
	o := &orders[oi]
	s := &m.sessions[o.sessionIdx]
	o.sessPrev, o.sessNext = s.tail, noOrder
	if s.tail == noOrder {
		s.head = oi
	} else {
		orders[s.tail].sessNext = oi
	}
	s.tail = oi
	s.count++

	a := &m.all
	o.allPrev, o.allNext = a.tail, noOrder
	if a.tail == noOrder {
		a.head = oi
	} else {
		orders[a.tail].allNext = oi
	}
	a.tail = oi
	a.count++
	o.listed = true
}

// unlistOrder takes an order out of both lists.
func (m *Matcher) unlistOrder(oi orderIdx) {
	orders := m.pool.orders
	o := &orders[oi]
	s := &m.sessions[o.sessionIdx]
	if o.sessPrev == noOrder {
		s.head = o.sessNext
	} else {
		orders[o.sessPrev].sessNext = o.sessNext
	}
	if o.sessNext == noOrder {
		s.tail = o.sessPrev
	} else {
		orders[o.sessNext].sessPrev = o.sessPrev
	}
	s.count--

	a := &m.all
	if o.allPrev == noOrder {
		a.head = o.allNext
	} else {
		orders[o.allPrev].allNext = o.allNext
	}
	if o.allNext == noOrder {
		a.tail = o.allPrev
	} else {
		orders[o.allNext].allPrev = o.allPrev
	}
	a.count--
	o.listed = false
	o.sessNext, o.sessPrev, o.allNext, o.allPrev = noOrder, noOrder, noOrder, noOrder
}
