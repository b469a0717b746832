package core

// gtdHeap is a binary min-heap of the resting GTD orders keyed by
// (expireTimeNs, orderID), so that expiring the orders whose time has passed
// costs O(log n) per expired order and O(1) when none has: every command
// looks at the top. The OrderID tie-break makes the expiry order total, hence
// deterministic. Each order records its heap position so that cancelling,
// filling or replacing a GTD order removes it in O(log n). Capacity is
// OrdersMax: only resting orders are in it.
type gtdHeap struct {
	items  []gtdItem
	orders []order // the pool's slice, for heapPos updates
}

type gtdItem struct {
	expireTimeNs int64
	orderID      uint64
	slot         orderIdx
}

func newGTDHeap(capacity int, orders []order) gtdHeap {
	return gtdHeap{items: make([]gtdItem, 0, capacity), orders: orders}
}

func (h *gtdHeap) less(a, b int) bool {
	x, y := &h.items[a], &h.items[b]
	if x.expireTimeNs != y.expireTimeNs {
		return x.expireTimeNs < y.expireTimeNs
	}
	return x.orderID < y.orderID
}

func (h *gtdHeap) swap(a, b int) {
	h.items[a], h.items[b] = h.items[b], h.items[a]
	h.orders[h.items[a].slot].heapPos = int32(a)
	h.orders[h.items[b].slot].heapPos = int32(b)
}

func (h *gtdHeap) push(slot orderIdx) {
	o := &h.orders[slot]
	h.items = append(h.items, gtdItem{expireTimeNs: o.expireTimeNs, orderID: o.orderID, slot: slot})
	i := len(h.items) - 1
	o.heapPos = int32(i)
	h.up(i)
}

// remove takes the order out of the heap; it must be in it.
func (h *gtdHeap) remove(slot orderIdx) {
	i := int(h.orders[slot].heapPos)
	last := len(h.items) - 1
	if i != last {
		h.swap(i, last)
	}
	h.items = h.items[:last]
	h.orders[slot].heapPos = -1
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
}

// top returns the order that expires first, or noOrder.
func (h *gtdHeap) top() (orderIdx, int64) {
	if len(h.items) == 0 {
		return noOrder, 0
	}
	return h.items[0].slot, h.items[0].expireTimeNs
}

func (h *gtdHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h *gtdHeap) down(i0 int) bool {
	i := i0
	n := len(h.items)
	for {
		left := 2*i + 1
		if left >= n {
			break
		}
		child := left
		if right := left + 1; right < n && h.less(right, left) {
			child = right
		}
		if !h.less(child, i) {
			break
		}
		h.swap(i, child)
		i = child
	}
	return i > i0
}
