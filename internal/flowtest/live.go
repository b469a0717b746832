package flowtest

// Live is a set of live orders, each under its OrderID: Add, Drop and Find
// in O(1), and At for picking one at random. The zero value is empty and
// ready to use.
type Live[T any] struct {
	orders []T
	ids    []uint64       // ids[i] is the OrderID of orders[i]
	at     map[uint64]int // OrderID → index in orders
}

// Add puts o in the set under id (an id already in the set must be dropped
// first).
func (l *Live[T]) Add(id uint64, o T) {
	if l.at == nil {
		l.at = map[uint64]int{}
	}
	l.at[id] = len(l.orders)
	l.orders = append(l.orders, o)
	l.ids = append(l.ids, id)
}

// Drop removes the order under id, if any, moving the last order into its
// place.
func (l *Live[T]) Drop(id uint64) {
	i, ok := l.at[id]
	if !ok {
		return
	}
	last := len(l.orders) - 1
	l.orders[i], l.ids[i] = l.orders[last], l.ids[last]
	l.at[l.ids[i]] = i
	l.orders, l.ids = l.orders[:last], l.ids[:last]
	delete(l.at, id)
}

// Find returns the order under id, to read or change in place, or nil.
func (l *Live[T]) Find(id uint64) *T {
	if i, ok := l.at[id]; ok {
		return &l.orders[i]
	}
	return nil
}

// Len is the number of orders in the set.
func (l *Live[T]) Len() int { return len(l.orders) }

// At is the i-th order, 0 <= i < Len().
func (l *Live[T]) At(i int) T { return l.orders[i] }
