package core

import (
	"fmt"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// invariantUnitsPerCommand is the checking that builds with the invariants
// tag may spend per command, in units of state that CheckInvariants walks
// (pool slots, price levels, ClOrdID records): a state of that size or less
// is checked after every command, a larger one after every units/this-many
// commands. Checking every command at production size made a replay
// quadratic: the journal of a 300-cycle crash test (221,160 commands, a
// 65,536-order pool, a quarter of a million ClOrdIDs) had not been verified
// after 18 minutes; spaced out, it takes 12 s (0.1 s without the tag).
const invariantUnitsPerCommand = 1024

// invariantSchedule spaces the checks of an invariants build.
type invariantSchedule struct {
	since    int    // commands applied since the last check
	every    int    // check when since reaches it (0 before the first check: at once)
	cleanSeq uint64 // the command sequence number of the last check that passed
}

// checkAfterApply is what an invariants build runs after each command: the
// whole check, as often as invariantUnitsPerCommand allows, and a panic that
// names the commands between which the state broke.
func (m *Matcher) checkAfterApply(templateID uint16) {
	d := &m.invariantsDue
	if d.since++; d.since < d.every {
		return
	}
	if err := m.CheckInvariants(); err != nil {
		panic(fmt.Sprintf("core: invariant broken by a command after seq %d, at or before seq %d (template %d, checked every %d commands): %v",
			d.cleanSeq, m.causeSeq, templateID, max(d.every, 1), err))
	}
	d.since, d.cleanSeq = 0, m.causeSeq
	d.every = m.invariantUnits()/invariantUnitsPerCommand + 1
}

// invariantUnits is the size of the state CheckInvariants walks.
func (m *Matcher) invariantUnits() int {
	n := len(m.pool.orders) + m.index.recsUsed
	for i := range m.instruments {
		for s := range m.instruments[i].sides {
			n += len(m.instruments[i].sides[s].levels)
		}
	}
	return n
}

// CheckInvariants verifies the matcher's whole state and returns the first
// broken invariant. It is O(orders + price levels + ClOrdIDs): tests call it
// after every command, and builds with the invariants tag call it inside
// Apply (after every command while the state is small, spaced out as it
// grows: checkAfterApply). It allocates only to describe a failure.
//
// The invariants: no book is crossed; each level's quantity and order count
// equal the sum over its FIFO, and the bitmap and best index agree with the
// levels; every pool slot in use is a resting order, listed once in its
// session's list and the list of all orders (both sorted by OrderID), indexed
// by its ClOrdID and OrderID, and in the GTD heap exactly when it is GTD; no
// GTD order is past its expiry; and no quantity was created or lost: ordered
// = filled (both sides) + cancelled + resting leaves.
func (m *Matcher) CheckInvariants() error {
	var restingLeaves int64
	var resting, waiting, queued int
	for ii := range m.instruments {
		in := &m.instruments[ii]
		for s := range in.sides {
			n, qty, err := m.checkSide(&in.sides[s], func(li int32) (int, int64, error) { return m.checkLevel(in, ii, s, li) })
			if err != nil {
				return fmt.Errorf("instrument %d side %d: %w", in.id, s, err)
			}
			resting += n
			restingLeaves += qty
		}
		n, qty, err := m.checkStops(in, ii)
		if err != nil {
			return fmt.Errorf("instrument %d stops: %w", in.id, err)
		}
		waiting += n
		restingLeaves += qty
		n, qty, err = m.checkAuction(in, ii)
		if err != nil {
			return fmt.Errorf("instrument %d auction: %w", in.id, err)
		}
		queued += n
		restingLeaves += qty
		if h := in.haltedFrom; h != 0 && (in.status != venue.TradingStatusHalted || !h.Valid() || h == venue.TradingStatusHalted) {
			return fmt.Errorf("instrument %d in status %v remembers a halt from %v", in.id, in.status, h)
		}
	}
	if waiting != m.stopsWaiting || waiting > m.stopsMax {
		return fmt.Errorf("%d stops waiting, counted %d, bound %d", waiting, m.stopsWaiting, m.stopsMax)
	}
	// From here on a waiting stop, and a market order waiting for an
	// uncross, counts as a live order like a resting one.
	resting += waiting + queued
	if m.pool.inUse != resting {
		return fmt.Errorf("%d pool slots in use but %d resting orders and stops", m.pool.inUse, resting)
	}
	if err := m.checkRiskInvariants(); err != nil {
		return err
	}
	if resting > m.ordersMax {
		return fmt.Errorf("%d resting orders and stops exceed OrdersMax %d", resting, m.ordersMax)
	}
	free := 0
	for i := m.pool.freeHead; i != noOrder; i = m.pool.orders[i].next {
		if free++; free > len(m.pool.orders) {
			return fmt.Errorf("the free list loops")
		}
	}
	if free+m.pool.inUse != len(m.pool.orders) {
		return fmt.Errorf("free %d + in use %d != pool %d", free, m.pool.inUse, len(m.pool.orders))
	}
	if err := m.checkLists(resting); err != nil {
		return err
	}
	if err := m.checkGTD(); err != nil {
		return err
	}
	if err := m.checkRecords(resting); err != nil {
		return err
	}
	q := m.qty
	if q.orderedQty != q.filledQty+q.cancelledQty+restingLeaves {
		return fmt.Errorf("quantity not conserved: ordered %d != filled %d + cancelled %d + resting %d",
			q.orderedQty, q.filledQty, q.cancelledQty, restingLeaves)
	}
	return nil
}

// checkSide verifies one side of levels (a book side or a side of stops),
// each level by checkLevel, and returns its order count and leaves.
func (m *Matcher) checkSide(bs *bookSide, checkLevel func(li int32) (int, int64, error)) (int, int64, error) {
	best := int32(-1)
	var count int
	var total int64
	for li := range bs.levels {
		lv := &bs.levels[li]
		set := bs.bitmap.isSet(int32(li))
		if (lv.head == noOrder) == set || (lv.head == noOrder) != (lv.tail == noOrder) {
			return 0, 0, fmt.Errorf("level %d: head %d tail %d bitmap %v disagree", li, lv.head, lv.tail, set)
		}
		if lv.head == noOrder {
			if lv.orders != 0 || lv.qty != 0 {
				return 0, 0, fmt.Errorf("empty level %d has %d orders, qty %d", li, lv.orders, lv.qty)
			}
			continue
		}
		if best < 0 || bs.better(int32(li), best) {
			best = int32(li)
		}
		n, qty, err := checkLevel(int32(li))
		if err != nil {
			return 0, 0, err
		}
		count += n
		total += qty
	}
	for w, word := range bs.bitmap.words {
		if (word != 0) != (bs.bitmap.summary[w>>6]&(1<<uint(w&63)) != 0) {
			return 0, 0, fmt.Errorf("bitmap summary disagrees at word %d", w)
		}
	}
	if best != bs.best {
		return 0, 0, fmt.Errorf("best level %d, cached %d", best, bs.best)
	}
	if int(bs.orders) != count || bs.qtyRest != total {
		return 0, 0, fmt.Errorf("side totals %d orders %d qty, levels hold %d, %d", bs.orders, bs.qtyRest, count, total)
	}
	return count, total, nil
}

// walkLevel walks the FIFO of level lv (a book level, or a stop price's):
// it checks the links, the loop bound, and the level's tail, order count and
// quantity against its orders, and calls check on each order.
func (m *Matcher) walkLevel(lv *level, what string, li int32, check func(oi orderIdx, o *order) error) (int, int64, error) {
	prev := noOrder
	var n int
	var qty int64
	for oi := lv.head; oi != noOrder; oi = m.pool.orders[oi].next {
		o := &m.pool.orders[oi]
		n++
		switch {
		case n > len(m.pool.orders):
			return 0, 0, fmt.Errorf("%s %d loops", what, li)
		case o.prev != prev:
			return 0, 0, fmt.Errorf("order %d: prev link %d, want %d", o.orderID, o.prev, prev)
		}
		if err := check(oi, o); err != nil {
			return 0, 0, err
		}
		qty += o.leavesQty
		prev = oi
	}
	if lv.tail != prev || int(lv.orders) != n || lv.qty != qty {
		return 0, 0, fmt.Errorf("%s %d: tail %d/%d, orders %d/%d, qty %d/%d", what, li, lv.tail, prev, lv.orders, n, lv.qty, qty)
	}
	return n, qty, nil
}

// checkLevel checks the orders of one book level.
func (m *Matcher) checkLevel(in *instrument, ii, s int, li int32) (int, int64, error) {
	return m.walkLevel(&in.sides[s].levels[li], "level", li, func(oi orderIdx, o *order) error {
		switch {
		case !o.resting || !o.listed || o.waiting:
			return fmt.Errorf("order %d in a level but resting=%v listed=%v", o.orderID, o.resting, o.listed)
		case int(o.instrument) != ii || sideIndex(o.side) != s || in.levelIndex(o.priceTicks) != li:
			return fmt.Errorf("order %d is in the wrong level", o.orderID)
		case o.reportWord != reportWordOf(o.sessionIdx, o.side, o.ordType, in.id):
			return fmt.Errorf("order %d: report word %#x disagrees with its fields", o.orderID, o.reportWord)
		case !canRest(o.ordType, o.tif):
			return fmt.Errorf("order %d of type %v/%v rests", o.orderID, o.ordType, o.tif)
		case o.leavesQty <= 0 || o.cumQty+o.leavesQty != o.qty:
			return fmt.Errorf("order %d: cum %d + leaves %d != qty %d", o.orderID, o.cumQty, o.leavesQty, o.qty)
		case isIceberg(o) && (m.pool.ext[oi].maxFloorQty <= 0 || m.pool.ext[oi].displayQty <= 0 ||
			m.pool.ext[oi].displayQty > min(m.pool.ext[oi].maxFloorQty, o.leavesQty)):
			return fmt.Errorf("iceberg %d: display %+v of leaves %d", o.orderID, m.pool.ext[oi], o.leavesQty)
		case o.orderID == 0 || o.orderID > m.lastOrderID:
			return fmt.Errorf("order id %d beyond the counter %d", o.orderID, m.lastOrderID)
		}
		return nil
	})
}

// checkStops verifies an instrument's trigger structure (as checkSide does a
// book side) and that the last trade price elects none of its stops: every
// elected stop ran inside the command that elected it.
func (m *Matcher) checkStops(in *instrument, ii int) (int, int64, error) {
	var count int
	var total int64
	for s := range in.stops {
		n, qty, err := m.checkSide(&in.stops[s], func(li int32) (int, int64, error) { return m.checkStopLevel(in, ii, s, li) })
		if err != nil {
			return 0, 0, fmt.Errorf("side %d: %w", s, err)
		}
		count += n
		total += qty
	}
	if oi := in.electedStop(); oi != noOrder && in.status == venue.TradingStatusOpen { // after a closing uncross they wait (auction.go)
		return 0, 0, fmt.Errorf("stop order %d is elected by the last trade %d but waits", m.pool.orders[oi].orderID, in.lastTradeTicks)
	}
	return count, total, nil
}

// checkStopLevel checks the orders waiting at one stop price.
func (m *Matcher) checkStopLevel(in *instrument, ii, s int, li int32) (int, int64, error) {
	return m.walkLevel(&in.stops[s].levels[li], "stop level", li, func(_ orderIdx, o *order) error {
		switch {
		case !o.waiting || o.resting || !o.listed:
			return fmt.Errorf("stop order %d: flags wrong (waiting=%v resting=%v listed=%v)", o.orderID, o.waiting, o.resting, o.listed)
		case int(o.instrument) != ii || sideIndex(o.side) != s || o.stopLevel-1 != li || !IsStop(o.ordType):
			return fmt.Errorf("stop order %d is in the wrong stop level", o.orderID)
		case o.cumQty != 0 || o.leavesQty != o.qty || o.qty <= 0:
			return fmt.Errorf("stop order %d: qty %d leaves %d cum %d", o.orderID, o.qty, o.leavesQty, o.cumQty)
		}
		return nil
	})
}

// checkLists verifies the all-orders list and the session lists.
func (m *Matcher) checkLists(resting int) error {
	if int(m.all.count) != resting {
		return fmt.Errorf("all-orders list counts %d, %d resting", m.all.count, resting)
	}
	n := 0
	var lastID uint64
	prev := noOrder
	for oi := m.all.head; oi != noOrder; oi = m.pool.orders[oi].lists[listAll].next {
		o := &m.pool.orders[oi]
		if n++; n > resting || o.lists[listAll].prev != prev || o.orderID <= lastID || o.resting == o.waiting {
			return fmt.Errorf("all-orders list broken at order %d", o.orderID)
		}
		lastID, prev = o.orderID, oi
	}
	if n != resting || m.all.tail != prev {
		return fmt.Errorf("all-orders list holds %d of %d orders", n, resting)
	}
	sum := 0
	for si := range m.sessions {
		sl := &m.sessions[si]
		n, lastID, prev = 0, 0, noOrder
		for oi := sl.head; oi != noOrder; oi = m.pool.orders[oi].lists[listSession].next {
			o := &m.pool.orders[oi]
			if n++; n > resting || o.lists[listSession].prev != prev || o.orderID <= lastID || int(o.sessionIdx) != si {
				return fmt.Errorf("session %d list broken at order %d", si, o.orderID)
			}
			lastID, prev = o.orderID, oi
		}
		if n != int(sl.count) || sl.tail != prev {
			return fmt.Errorf("session %d list holds %d, counts %d", si, n, sl.count)
		}
		sum += n
	}
	if sum != resting {
		return fmt.Errorf("session lists hold %d of %d orders", sum, resting)
	}
	return nil
}

// checkGTD verifies the heap: shape, positions, membership, and that nothing
// in it has expired.
func (m *Matcher) checkGTD() error {
	h := &m.gtd
	for i := range h.items {
		it := &h.items[i]
		o := &m.pool.orders[it.slot]
		if int(o.heapPos) != i || o.tif != venue.TimeInForceGTD || o.resting == o.waiting ||
			it.expireTimeNs != o.expireTimeNs || it.orderID != o.orderID {
			return fmt.Errorf("GTD heap entry %d disagrees with order %d", i, o.orderID)
		}
		if i > 0 && h.less(i, (i-1)/2) {
			return fmt.Errorf("GTD heap order broken at %d", i)
		}
		if it.expireTimeNs < m.nowNs {
			return fmt.Errorf("order %d expired at %d but is live at %d", o.orderID, it.expireTimeNs, m.nowNs)
		}
	}
	gtd := 0
	for oi := m.all.head; oi != noOrder; oi = m.pool.orders[oi].lists[listAll].next {
		o := &m.pool.orders[oi]
		if o.tif == venue.TimeInForceGTD {
			gtd++
			if o.heapPos < 0 {
				return fmt.Errorf("GTD order %d is not in the heap", o.orderID)
			}
		} else if o.heapPos >= 0 {
			return fmt.Errorf("%v order %d is in the GTD heap", o.tif, o.orderID)
		}
	}
	if gtd != len(h.items) {
		return fmt.Errorf("%d GTD orders, heap holds %d", gtd, len(h.items))
	}
	return nil
}

// checkRecords verifies that the records and both tables agree with the live orders.
func (m *Matcher) checkRecords(resting int) error {
	x := &m.index
	live := 0
	for ri := 0; ri < x.recsUsed; ri++ {
		r := &x.recs[ri]
		if r.slot == noOrder {
			continue
		}
		live++
		o := &m.pool.orders[r.slot]
		if o.rec != recIdx(ri) || o.orderID != r.orderID || o.sessionIdx != r.sessionIdx {
			return fmt.Errorf("record %d and order %d disagree", ri, o.orderID)
		}
	}
	if live != resting {
		return fmt.Errorf("%d records point at live orders, %d resting", live, resting)
	}
	// A record's terms are its own or zero (recordTerms); past termsEnd
	// none was written.
	if x.termsEnd > x.recsUsed {
		return fmt.Errorf("terms written up to record %d of %d", x.termsEnd, x.recsUsed)
	}
	for ri := 0; ri < x.termsEnd; ri++ {
		if !termsFit(&x.recs[ri], &x.terms[ri]) {
			return fmt.Errorf("record %d of order %d has terms %+v its order does not keep", ri, x.recs[ri].orderID, x.terms[ri])
		}
	}
	for oi := m.all.head; oi != noOrder; oi = m.pool.orders[oi].lists[listAll].next {
		o := &m.pool.orders[oi]
		r := &x.recs[o.rec]
		if x.find(o.sessionIdx, &r.key, r.key.hash(o.sessionIdx)) != o.rec || x.findOrder(o.orderID) != o.rec {
			return fmt.Errorf("order %d is not indexed under its ClOrdID and OrderID", o.orderID)
		}
	}
	return nil
}

// checkAuction verifies an instrument's call state: a book is crossed only
// while it holds a call's orders (never after an uncross), market orders
// wait only then, in their FIFOs, and the instrument is in the list of
// calls exactly then. It returns the waiting market orders and their leaves.
func (m *Matcher) checkAuction(in *instrument, ii int) (int, int64, error) {
	a := &in.auction
	bid, okBid := in.bestPrice(0)
	ask, okAsk := in.bestPrice(1)
	switch {
	case a.phase == 0 && okBid && okAsk && bid >= ask:
		return 0, 0, fmt.Errorf("crossed outside a call: bid %d ≥ ask %d", bid, ask)
	case a.phase != 0 && !IsCall(a.phase):
		return 0, 0, fmt.Errorf("phase %v is not a call", a.phase)
	case (a.phase != 0) != m.inCalls(in.id):
		return 0, 0, fmt.Errorf("phase %v but listed in calls %v", a.phase, m.inCalls(in.id))
	case IsCall(in.status) && a.phase != in.status && !(in.status == venue.TradingStatusVolatilityAuction && a.phase != 0):
		return 0, 0, fmt.Errorf("status %v with phase %v", in.status, a.phase)
	case (a.endNs != 0) != (in.status == venue.TradingStatusVolatilityAuction):
		return 0, 0, fmt.Errorf("volatility auction end %d in status %v", a.endNs, in.status)
	}
	var count int
	var total int64
	for s := range a.market {
		n, qty, err := m.checkSide(&a.market[s], func(li int32) (int, int64, error) {
			return m.walkLevel(&a.market[s].levels[li], "market queue", li, func(oi orderIdx, o *order) error {
				switch {
				case IsStop(o.ordType) && m.pool.ext[oi].electedStopPxTicks <= 0:
					return fmt.Errorf("elected stop %d waits for the uncross without its stop price", o.orderID)
				case !o.waiting || o.resting || !o.listed || o.stopLevel != 0:
					return fmt.Errorf("market order %d: flags wrong (waiting=%v resting=%v listed=%v)", o.orderID, o.waiting, o.resting, o.listed)
				case int(o.instrument) != ii || sideIndex(o.side) != s || !marketLike(o.ordType):
					return fmt.Errorf("order %d is in the wrong market queue", o.orderID)
				case o.leavesQty <= 0 || o.cumQty+o.leavesQty != o.qty:
					return fmt.Errorf("market order %d: cum %d + leaves %d != qty %d", o.orderID, o.cumQty, o.leavesQty, o.qty)
				}
				return nil
			})
		})
		if err != nil {
			return 0, 0, err
		}
		count += n
		total += qty
	}
	if count != 0 && a.phase == 0 {
		return 0, 0, fmt.Errorf("%d market orders wait outside a call", count)
	}
	return count, total, nil
}
