package core

// orderList is an intrusive doubly linked list of live orders in OrderID
// order. OrderIDs only grow and an order joins the lists when it first rests,
// so appending keeps the lists sorted. The matcher keeps one list per session
// (through order.lists[listSession]) and one of all orders (through
// order.lists[listAll]), so that mass cancels, cancel-on-disconnect and
// EndOfDay visit orders in OrderID order, deterministically, and a session's
// cancels cost O(that session's orders).
type orderList struct {
	head, tail orderIdx
	count      int32
}

func newOrderList() orderList { return orderList{head: noOrder, tail: noOrder} }

// listKind names one of the lists an order is in; order.lists holds its
// links in each.
type listKind int

const (
	listSession listKind = iota // its session's list, m.sessions[o.sessionIdx]
	listAll                     // the list of all orders, m.all
	listKinds
)

// listLinks are an order's neighbours in one list (noOrder at an end).
type listLinks struct {
	next, prev orderIdx
}

// unlisted returns the links of an order in no list (a function, not a
// variable: the constant is stored without a load).
func unlisted() [listKinds]listLinks {
	return [listKinds]listLinks{{noOrder, noOrder}, {noOrder, noOrder}}
}

// push appends order oi at the tail of l, a list of kind k.
func (l *orderList) push(orders []order, k listKind, oi orderIdx) {
	tail := l.tail // a local: the stores below could alias l for the compiler
	o := &orders[oi].lists[k]
	o.prev, o.next = tail, noOrder
	if tail == noOrder {
		l.head = oi
	} else {
		orders[tail].lists[k].next = oi
	}
	l.tail = oi
	l.count++
}

// remove takes order oi out of l, a list of kind k.
func (l *orderList) remove(orders []order, k listKind, oi orderIdx) {
	o := &orders[oi].lists[k]
	next, prev := o.next, o.prev // locals: the stores below could alias o for the compiler
	if prev == noOrder {
		l.head = next
	} else {
		orders[prev].lists[k].next = next
	}
	if next == noOrder {
		l.tail = prev
	} else {
		orders[next].lists[k].prev = prev
	}
	l.count--
	o.next, o.prev = noOrder, noOrder
}

// listOrder adds a newly resting order at the tail of its session's list and
// of the list of all orders.
func (m *Matcher) listOrder(oi orderIdx) {
	orders := m.pool.orders
	m.sessions[orders[oi].sessionIdx].push(orders, listSession, oi)
	m.all.push(orders, listAll, oi)
	orders[oi].listed = true
}

// unlistOrder takes an order out of both lists.
func (m *Matcher) unlistOrder(oi orderIdx) {
	orders := m.pool.orders
	m.sessions[orders[oi].sessionIdx].remove(orders, listSession, oi)
	m.all.remove(orders, listAll, oi)
	orders[oi].listed = false
}
