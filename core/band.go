package core

import (
	"math"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// RefPriceTicksMax is the highest reference price, in ticks: it keeps
// refPriceTicks × (100 + bandPercent) within int64.
const RefPriceTicksMax = math.MaxInt64 / (2 * percentScale)

// OrderNotionalMax is the largest notional (price ticks × quantity) an
// order may have: max_qty at the top of the band must stay within it
// (MaxQtyAt). It is the largest risk limit, so that an order is never
// above "no limit" (riskNone), and limit − figure − notional, how the
// checks test every limit at once, cannot wrap: an order of a larger
// notional was refused by limits that were not set, and one whose
// notional wrapped int64 (max_qty at a band moved up) passed every limit.
const OrderNotionalMax = RiskLimitMax

// MaxQtyAt is the largest max_qty whose orders stay within
// OrderNotionalMax at a band whose top is highTicks (positive).
func MaxQtyAt(highTicks int64) int64 {
	return OrderNotionalMax / highTicks
}

// MaxQtyFor is the largest MaxQty of a matcher of ordersMax and
// clOrdIDsMax (positive): every sum of quantities of one instrument is then
// within int64. A price level's or a side's total, an auction's volumes
// at a price, a fill-or-kill's available quantity and the open quantities
// of the risk figures add the leaves of at most OrdersMax+1 orders; the
// day's traded volume (the feed's and the console's) is at most what the
// day's orders and replaces brought (at most ClOrdIDsMax of them: the
// cancels that record their ClOrdIDs take some of the bound) and the orders
// carried from earlier days (OrdersMax) bought. A larger MaxQty let a few
// orders at one price wrap a level's total negative: the book published a
// negative depth and a fill-or-kill found no quantity where there was.
func MaxQtyFor(ordersMax, clOrdIDsMax int) int64 {
	return math.MaxInt64 / (int64(ordersMax) + int64(clOrdIDsMax) + 1)
}

// BandTicks returns the price band, in ticks, that bandPercent around
// refPriceTicks gives: the edges are rounded inward to whole ticks.
func BandTicks(refPriceTicks, bandPercent int64) (lowTicks, highTicks int64) {
	return bandTicks(refPriceTicks, bandPercent)
}

// BandCentreTicks returns the reference price a band of these edges was
// set around: BandTicks rounds both edges inward by the same whole number
// of ticks (the reference is whole), so the band's centre is that price
// exactly.
func BandCentreTicks(lowTicks, highTicks int64) int64 {
	return lowTicks + (highTicks-lowTicks)/2
}

// operatorSetBand moves an instrument's price band to bandPercent around
// refPriceTicks (see "Operator commands" in doc.go). The levels were
// allocated for the configured band, so the new band may not span more
// ticks than that (InvalidPriceBand; a wider one needs new reference data
// and a restart), nor reach a top where MaxQty passes OrderNotionalMax
// (InvalidPriceBand, as NewMatcher refuses it), and every resting order, the stop price of every live
// stop order (waiting or elected) and the limit price of every waiting stop
// limit must lie inside it
// (OrdersOutsideBand): nothing is cancelled or moved by a band change.
// The book and the waiting stops keep their levels and priorities: each
// side's levels shift by the distance between the old and the new band
// low, and so does each stop order's stopLevel, which is a level of the
// band, so that its stop price stays what it was: O(band width + live
// orders).
func (m *Matcher) operatorSetBand(instrumentID uint32, refPriceTicks, bandPercent int64) (venue.RejectReason, uint32) {
	ii, ok := m.instrByID.lookup(instrumentID)
	if !ok {
		return venue.RejectReasonUnknownInstrument, 0
	}
	if refPriceTicks <= 0 || refPriceTicks > RefPriceTicksMax || bandPercent <= 0 || bandPercent >= percentScale {
		return venue.RejectReasonInvalidPriceBand, 0
	}
	low, high := bandTicks(refPriceTicks, bandPercent)
	in := &m.instruments[ii]
	if low > high || high-low+1 > int64(len(in.sides[0].levels)) {
		return venue.RejectReasonInvalidPriceBand, 0
	}
	// A band moved up must keep max_qty at its top within the largest
	// notional, as the configured one does (InstrumentConfig.validate).
	if in.maxQty > MaxQtyAt(high) {
		return venue.RejectReasonInvalidPriceBand, 0
	}
	for s := range in.sides {
		side := &in.sides[s]
		if side.orders == 0 {
			continue
		}
		lowest, highest := side.bitmap.nextAtOrAbove(0), side.bitmap.prevAtOrBelow(side.bitmap.size-1)
		if in.bandLowTicks+int64(lowest) < low || in.bandLowTicks+int64(highest) > high {
			return venue.RejectReasonOrdersOutsideBand, 0
		}
	}
	outside := func(px int64) bool { return px < low || px > high }
	for oi := m.all.head; oi != noOrder; oi = m.pool.orders[oi].lists[listAll].next {
		o := &m.pool.orders[oi]
		if o.instrument == ii && ((o.stopLevel != 0 && outside(in.stopPxOf(o))) ||
			(o.waiting && limitLike(o.ordType) && outside(o.priceTicks))) { // a stop limit would rest there once elected
			return venue.RejectReasonOrdersOutsideBand, 0
		}
	}
	// Waiting market and stop orders count at the band's far edge
	// (riskPrice): they are taken off the open figures at the old band and
	// added back at the new one.
	m.riskRevalueWaiting(ii, -1)
	defer m.riskRevalueWaiting(ii, 1)
	if shift := int32(in.bandLowTicks - low); shift != 0 {
		for s := range in.sides {
			in.sides[s].shift(shift)
			in.stops[s].shift(shift)
		}
		for oi := m.all.head; oi != noOrder; oi = m.pool.orders[oi].lists[listAll].next {
			if o := &m.pool.orders[oi]; o.instrument == ii && o.stopLevel != 0 {
				o.stopLevel += shift
			}
		}
	}
	in.bandLowTicks, in.bandHighTicks = low, high
	if in.auction.phase != 0 {
		// The reference price moved with the band (referencePrice): the
		// book is the same, so its signature would not call for a new
		// indicative, and the feed would show the old price until the
		// next order.
		in.auction.sig = bookSig{replaces: -1}
	}
	return venue.RejectReasonNone, 1
}

// shift moves every non-empty level from index i to i+d, with its FIFO,
// and the bitmap and best with them. The caller has checked that the
// occupied levels land inside the side's levels.
func (s *bookSide) shift(d int32) {
	if s.orders == 0 {
		return
	}
	lo, hi := s.bitmap.nextAtOrAbove(0), s.bitmap.prevAtOrBelow(s.bitmap.size-1)
	for i := lo; i >= 0 && i <= hi; i = s.bitmap.nextAtOrAbove(i + 1) {
		s.bitmap.clear(i)
	}
	copy(s.levels[lo+d:hi+d+1], s.levels[lo:hi+1])
	for i := lo; i <= hi; i++ {
		if i < lo+d || i > hi+d {
			s.levels[i] = level{head: noOrder, tail: noOrder}
		}
	}
	for i := lo + d; i <= hi+d; i++ {
		if s.levels[i].orders > 0 {
			s.bitmap.set(i)
		}
	}
	s.best += d
}

// riskRevalueWaiting takes (sign −1) or puts back (+1) the open figures of
// instrument ii's waiting orders that count at the band's edge.
func (m *Matcher) riskRevalueWaiting(ii uint16, sign int64) {
	if !m.risk.on {
		return
	}
	for oi := m.all.head; oi != noOrder; oi = m.pool.orders[oi].lists[listAll].next {
		if o := &m.pool.orders[oi]; o.instrument == ii && o.waiting && marketLike(o.ordType) {
			m.riskOpenWaiting(o, sign, sign*o.leavesQty)
		}
	}
}
