package marketdata

import "errors"

// ErrOrdersFull is returned when an event would make the tracker hold more
// than its OrdersMax orders. The tracker's bounds must be at least the
// engine's, so this means a misconfiguration, never a normal condition.
var ErrOrdersFull = errors.New("marketdata: order pool full (raise OrdersMax to the engine's orders_max)")

// orderIdx is a slot in the tracker's order pool; it is not a wire id.
type orderIdx int32

const noOrder orderIdx = -1

// orderIndex maps venue OrderIDs to pool slots with open addressing and
// linear probing. Deletion shifts later entries back instead of leaving
// tombstones, so lookups stay short however many orders come and go. The
// table has at least twice as many slots as the pool, so it never fills.
type orderIndex struct {
	keys  []OrderID // 0 marks an empty slot: the venue never assigns OrderID 0
	vals  []orderIdx
	mask  uint64
	count int
}

func newOrderIndex(ordersMax int) orderIndex {
	size := 1
	for size < 2*ordersMax {
		size <<= 1
	}
	return orderIndex{keys: make([]OrderID, size), vals: make([]orderIdx, size), mask: uint64(size - 1)}
}

// home is the preferred slot of id: a Fibonacci hash spreads the venue's
// consecutive ids over the table.
func (x *orderIndex) home(id OrderID) uint64 {
	return (uint64(id) * 0x9E3779B97F4A7C15) >> 17 & x.mask
}

func (x *orderIndex) get(id OrderID) orderIdx {
	for i := x.home(id); ; i = (i + 1) & x.mask {
		switch x.keys[i] {
		case id:
			return x.vals[i]
		case 0:
			return noOrder
		}
	}
}

// put inserts id; the caller has checked that id is absent and that the pool
// (hence the table, at most half full) has room.
func (x *orderIndex) put(id OrderID, v orderIdx) {
	i := x.home(id)
	for x.keys[i] != 0 {
		i = (i + 1) & x.mask
	}
	x.keys[i], x.vals[i] = id, v
	x.count++
}

// remove deletes id if present, moving back any later entry of the same
// probe run whose home is not between the hole and its current slot.
func (x *orderIndex) remove(id OrderID) {
	i := x.home(id)
	for x.keys[i] != id {
		if x.keys[i] == 0 {
			return
		}
		i = (i + 1) & x.mask
	}
	x.count--
	hole := i
	for j := (hole + 1) & x.mask; x.keys[j] != 0; j = (j + 1) & x.mask {
		h := x.home(x.keys[j])
		// The entry at j may move to the hole unless its home lies in (hole, j].
		if (j > hole && (h <= hole || h > j)) || (j < hole && (h <= hole && h > j)) {
			x.keys[hole], x.vals[hole] = x.keys[j], x.vals[j]
			hole = j
		}
	}
	x.keys[hole], x.vals[hole] = 0, 0
}
