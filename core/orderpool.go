package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// orderIdx is a slot of the order pool. It is not a wire id: OrderID is.
type orderIdx int32

// noOrder ends every intrusive list.
const noOrder orderIdx = -1

// order is one live order. It holds no pointer, so the pool is never scanned
// by the garbage collector. The fields the matching loop reads come first so
// that a resting order being filled touches as few cache lines as possible.
// acceptNewOrder sets every field, one store each (a composite literal would
// be built on the stack and copied): a new field must be set there too.
type order struct {
	next, prev       orderIdx // FIFO of the price level (next also links the free list)
	leavesQty        int64
	priceTicks       int64 // 0 for market orders
	qty              int64 // total order quantity
	cumQty           int64
	cumNotionalTicks int64
	orderID          uint64
	account          [venue.AccountLength]byte
	sessionIdx       uint16
	instrument       uint16 // index into Matcher.instruments
	side             venue.Side
	ordType          venue.OrdType
	tif              venue.TimeInForce
	flags            venue.OrderFlags
	stpMode          venue.StpMode
	resting          bool // in a price level
	listed           bool // in its session's list and the list of all orders
	waiting          bool // an untriggered stop, in its instrument's trigger structure

	rec     recIdx // the record of the order's current ClOrdID
	heapPos int32  // position in the GTD heap, -1 when not in it
	// stopLevel is, for a Stop or StopLimit order, 1 + the level of its stop
	// price in the band (stop prices are inside it), else 0: it fits the
	// padding before reportWord, where an int64 would make the order 136
	// bytes instead of two cache lines (TestOrderSize). See stopPxOf.
	stopLevel int32
	// reportWord is bytes 24-31 of the order's events: sessionIdx, side,
	// ordType and the instrument's id, which never change (see wire.go).
	reportWord   uint64
	expireTimeNs int64
	// lists are the order's links in its session's live orders and in
	// every live order, both by OrderID (orderlist.go).
	lists [listKinds]listLinks
}

// reportWordOf packs the fields of order's reportWord.
func reportWordOf(sessionIdx uint16, side venue.Side, ordType venue.OrdType, instrumentID uint32) uint64 {
	return uint64(sessionIdx) | uint64(side)<<16 | uint64(ordType)<<24 | uint64(instrumentID)<<32
}

// instrumentID is the id of the order's instrument.
func (o *order) instrumentID() uint32 { return uint32(o.reportWord >> 32) }

// orderPool is a fixed array of orders with an intrusive free list. It holds
// OrdersMax+1 slots: OrdersMax for resting orders and one more so that an
// order that will not rest (IOC, FOK, market) can always be matched even when
// the books hold OrdersMax orders.
type orderPool struct {
	orders []order
	// ext holds, by the same index, what only icebergs (their orders have
	// flag Iceberg) and elected stops waiting for an uncross use, kept out
	// of order so that it stays 128 bytes.
	ext      []orderExt
	freeHead orderIdx
	inUse    int
}

// orderExt is an iceberg's display: maxFloorQty is the size of a display
// slice, displayQty what is left of the current one (iceberg.go); and the
// stop price of an elected stop once it waits for an uncross, when its
// stopLevel, which held the stop price, marks it queued (queueMarket). Each
// is read only for such an order: a slot keeps what its last order left.
type orderExt struct {
	maxFloorQty        int64
	displayQty         int64
	electedStopPxTicks int64
}

func newOrderPool(slots int) orderPool {
	p := orderPool{orders: make([]order, slots), ext: make([]orderExt, slots)}
	p.reset()
	return p
}

// reset frees every slot, linking the free list in slot order so that a
// fresh pool and a restored one hand out the same slots.
func (p *orderPool) reset() {
	for i := range p.orders {
		p.orders[i] = order{next: orderIdx(i + 1), heapPos: -1}
	}
	p.orders[len(p.orders)-1].next = noOrder
	p.freeHead = 0
	p.inUse = 0
}

// alloc takes a free slot, or returns noOrder when none is left. The slot
// keeps whatever its last order left: the caller sets every field (see
// order), or calls clearSlot.
func (p *orderPool) alloc() orderIdx {
	i := p.freeHead
	if i == noOrder {
		return noOrder
	}
	p.freeHead = p.orders[i].next
	p.inUse++
	return i
}

// clearSlot resets slot i to an order that is in no structure.
func (p *orderPool) clearSlot(i orderIdx) {
	p.orders[i] = order{next: noOrder, prev: noOrder, heapPos: -1, lists: unlisted()}
}

func (p *orderPool) release(i orderIdx) {
	o := &p.orders[i]
	o.next = p.freeHead
	o.resting, o.listed, o.waiting = false, false, false
	p.freeHead = i
	p.inUse--
}
