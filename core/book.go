package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// level is one price of one book side: a FIFO of orders (intrusive, through
// order.next/prev) with its total leaves quantity.
type level struct {
	head, tail orderIdx
	orders     int32
	qty        int64
}

// bookSide is one side of one instrument's book: a level per tick of the
// price band (index = priceTicks − band low), a bitmap of the non-empty
// levels and the index of the best one. Joining or leaving a level is O(1);
// finding the next best level after the best one empties is a bitmap scan
// whose cost depends on the band width (see levelBitmap), never on the number
// of orders or levels in the book.
type bookSide struct {
	levels []level
	bitmap levelBitmap
	best   int32 // index of the best non-empty level, -1 when empty
	bid    bool  // bids: best is the highest index; asks: the lowest
	orders int32
	// edits counts the orders that left the side, so that a call can tell
	// that its book changed even when an order of the same quantity took
	// the place of one that left (auction.go, bookSig).
	edits   uint32
	qtyRest int64
}

// instrument is the matcher's state for one instrument.
type instrument struct {
	id            uint32
	status        venue.TradingStatus
	lotSize       int64
	minQty        int64
	maxQty        int64
	bandLowTicks  int64
	bandHighTicks int64
	sides         [2]bookSide // [sideIndex(Buy)], [sideIndex(Sell)]
	// stops holds the untriggered stop orders by side, a level per stop
	// price with the same indexes as sides: the buy stops' best level is
	// the lowest stop price (the first a rising price reaches), the sell
	// stops' the highest (see stop.go).
	stops [2]bookSide
	// lastTradeTicks is the price of the instrument's last trade, 0 before
	// the first one: it triggers stops.
	lastTradeTicks int64
	// auction is the state of call phases and volatility auctions (auction.go).
	auction auctionState
	// haltedFrom, while the instrument is halted, is the status the halt
	// interrupted (Closed for one closed before it was halted): where an
	// operator's resume returns it, as it would be without the halt (package
	// ops). It is 0 when not halted and when not known: halted as
	// configured, restored from a snapshot that did not keep it, or passed
	// over by a phase change since (phasePassedHalts), after which the
	// group's phase says where the instrument would be. It changes no event.
	haltedFrom venue.TradingStatus
}

// setStatus sets the instrument's status, keeping haltedFrom: a halt
// remembers the status it interrupts (a halt of a halted instrument keeps
// the first), any other status forgets it.
func (in *instrument) setStatus(status venue.TradingStatus) {
	switch {
	case status != venue.TradingStatusHalted:
		in.haltedFrom = 0
	case in.status != venue.TradingStatusHalted:
		in.haltedFrom = in.status
	}
	in.status = status
}

func newInstrument(c *InstrumentConfig) instrument {
	low, high := bandTicks(c.RefPriceTicks, c.BandPercent)
	levels := int32(high - low + 1)
	in := instrument{
		id:            c.ID,
		status:        c.Status,
		lotSize:       c.LotSize,
		minQty:        c.MinQty,
		maxQty:        c.MaxQty,
		bandLowTicks:  low,
		bandHighTicks: high,
	}
	if in.status == 0 {
		in.status = venue.TradingStatusOpen
	}
	in.auction = newAuctionState(c)
	for s := range in.sides {
		in.sides[s] = newBookSide(levels, s == 0)
		// Buy stops are elected lowest price first, as asks are matched.
		in.stops[s] = newBookSide(levels, s != 0)
	}
	return in
}

// newBookSide allocates an empty side of levels price levels.
func newBookSide(levels int32, bid bool) bookSide {
	bs := bookSide{
		levels: make([]level, levels),
		bitmap: newLevelBitmap(levels),
		best:   -1,
		bid:    bid,
	}
	for i := range bs.levels {
		bs.levels[i] = level{head: noOrder, tail: noOrder}
	}
	return bs
}

// sideIndex maps a valid Side to 0 (buy) or 1 (sell).
func sideIndex(s venue.Side) int {
	return int(s) - int(venue.SideBuy)
}

// levelIndex returns the level of a price inside the band.
func (in *instrument) levelIndex(priceTicks int64) int32 {
	return int32(priceTicks - in.bandLowTicks)
}

func (in *instrument) inBand(priceTicks int64) bool {
	return priceTicks >= in.bandLowTicks && priceTicks <= in.bandHighTicks
}

// bestPrice returns the best price of a side, or ok=false when it is empty.
func (in *instrument) bestPrice(side int) (priceTicks int64, ok bool) {
	b := in.sides[side].best
	if b < 0 {
		return 0, false
	}
	return in.bandLowTicks + int64(b), true
}

// better reports whether level a is strictly better than level b.
func (s *bookSide) better(a, b int32) bool {
	if s.bid {
		return a > b
	}
	return a < b
}

// pushBack appends an order at the tail of its level (the order's priceTicks
// and level index li agree); it becomes last in time priority.
func (s *bookSide) pushBack(orders []order, li int32, oi orderIdx) {
	lv := &s.levels[li]
	o := &orders[oi]
	o.next = noOrder
	o.prev = lv.tail
	if lv.tail == noOrder {
		lv.head = oi
		s.bitmap.set(li)
		if s.best < 0 || s.better(li, s.best) {
			s.best = li
		}
	} else {
		orders[lv.tail].next = oi
	}
	lv.tail = oi
	lv.orders++
	lv.qty += o.leavesQty
	s.orders++
	s.qtyRest += o.leavesQty
	o.resting = true
}

// unlink removes an order from its level, and the level from the bitmap when
// it empties, moving best to the next non-empty level if needed.
func (s *bookSide) unlink(orders []order, li int32, oi orderIdx) {
	lv := &s.levels[li]
	o := &orders[oi]
	if o.prev == noOrder {
		lv.head = o.next
	} else {
		orders[o.prev].next = o.next
	}
	if o.next == noOrder {
		lv.tail = o.prev
	} else {
		orders[o.next].prev = o.prev
	}
	lv.orders--
	lv.qty -= o.leavesQty
	s.orders--
	s.edits++
	s.qtyRest -= o.leavesQty
	o.resting = false
	o.next, o.prev = noOrder, noOrder
	if lv.head == noOrder {
		s.bitmap.clear(li)
		if li == s.best {
			s.best = s.nextBest(li)
		}
	}
}

// nextBest returns the best non-empty level worse than li, or -1.
func (s *bookSide) nextBest(li int32) int32 {
	if s.bid {
		return s.bitmap.prevAtOrBelow(li - 1)
	}
	return s.bitmap.nextAtOrAbove(li + 1)
}

// reduce lowers a resting order's leaves in place (a fill or a quantity
// decrease that keeps priority); the order stays in its level.
func (s *bookSide) reduce(li int32, o *order, qty int64) {
	o.leavesQty -= qty
	s.levels[li].qty -= qty
	s.qtyRest -= qty
}
