package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// opposite returns the side index facing side index s.
func opposite(s int) int { return 1 - s }

// crosses reports whether an aggressor on side s with this limit (or any
// price when market) can trade at level price px.
func crosses(s int, market bool, limitTicks, px int64) bool {
	if market {
		return true
	}
	if s == 0 {
		return px <= limitTicks
	}
	return px >= limitTicks
}

// wouldTake reports whether a limit order on side s at priceTicks would
// trade on arrival (the post-only check).
func (in *instrument) wouldTake(s int, priceTicks int64) bool {
	px, ok := in.bestPrice(opposite(s))
	return ok && crosses(s, false, priceTicks, px)
}

// canTrade reports whether aggressor o (not in the book) would trade now
// if nothing stopped it: the opposite side has a best level within its
// limit. It is match's first test, made before calling it.
func (in *instrument) canTrade(o *order) bool {
	s := sideIndex(o.side)
	best := in.sides[opposite(s)].best
	return best >= 0 && crosses(s, marketLike(o.ordType), o.priceTicks, in.bandLowTicks+int64(best))
}

// selfTrade reports whether two orders share a (non-empty) account.
func selfTrade(a, b *order) bool {
	return a.account[0] != 0 && a.account == b.account
}

// match trades aggressor oi (not in the book) against the opposite side, best
// price first and in time priority within a price, until it is filled, the
// book no longer crosses its limit, or self-trade prevention stops it. Trades
// print at the resting order's price. Resting orders inside the band are
// the only counterparties, so a market order never trades outside the band.
func (m *Matcher) match(in *instrument, oi orderIdx) {
	orders := m.pool.orders
	o := &orders[oi]
	s := sideIndex(o.side)
	opp := &in.sides[opposite(s)]
	market := marketLike(o.ordType)
	ref := in.lastTradeTicks // the dynamic band's centre stays put for the whole order
	for o.leavesQty > 0 && opp.best >= 0 {
		li := opp.best
		px := in.bandLowTicks + int64(li)
		if !crosses(s, market, o.priceTicks, px) {
			return
		}
		if in.auction.volBandTicks != 0 && m.interrupts(in, oi, px, ref) {
			return // a volatility auction now (auction.go)
		}
		for ri := opp.levels[li].head; ri != noOrder && o.leavesQty > 0; {
			r := &orders[ri]
			next := r.next
			if selfTrade(o, r) {
				if stop := m.preventSelfTrade(in, opp, li, px, oi, ri); stop {
					return
				}
			} else {
				in.lastTradeTicks = px // here rather than in trade, which has no instrument at hand
				m.trade(opp, li, px, oi, ri)
			}
			ri = next
		}
	}
}

// preventSelfTrade applies the aggressor's STP mode to a resting order of the
// same account. It reports whether matching must stop (the aggressor is
// cancelled). Mode None lets the trade happen.
func (m *Matcher) preventSelfTrade(in *instrument, opp *bookSide, li int32, px int64, oi, ri orderIdx) (stop bool) {
	orders := m.pool.orders
	o := &orders[oi]
	switch m.stpModeOf(o) {
	case venue.StpModeNone:
		in.lastTradeTicks = px
		m.trade(opp, li, px, oi, ri)
		return false
	case venue.StpModeCancelAggressor:
		m.dropLeaves(oi, venue.CancelReasonSelfTrade, venue.OrdStatusCancelled, &m.index.recs[o.rec].key, nil)
		return true
	case venue.StpModeCancelBoth:
		m.cancelOrderQty(ri, venue.CancelReasonSelfTrade, venue.OrdStatusCancelled, &m.index.recs[orders[ri].rec].key, nil)
		m.dropLeaves(oi, venue.CancelReasonSelfTrade, venue.OrdStatusCancelled, &m.index.recs[o.rec].key, nil)
		return true
	default: // CancelResting
		m.cancelOrderQty(ri, venue.CancelReasonSelfTrade, venue.OrdStatusCancelled, &m.index.recs[orders[ri].rec].key, nil)
		return false
	}
}

// trade executes aggressor oi against resting ri at level li of side opp,
// for the smaller of the aggressor's leaves and what the resting order shows
// (an iceberg's display slice, else its leaves), and reports both fills
// (aggressor first). An iceberg whose slice it empties is refilled.
func (m *Matcher) trade(opp *bookSide, li int32, px int64, oi, ri orderIdx) {
	orders := m.pool.orders
	o, r := &orders[oi], &orders[ri]
	if (o.flags|r.flags)&venue.OrderFlagsIceberg != 0 {
		m.tradeIceberg(opp, li, px, oi, ri) // iceberg.go
		return
	}
	qty := min(o.leavesQty, r.leavesQty)
	// fillBoth, written out: every plain trade runs it, and the call cost
	// 10 instructions a trade (docs/benchmarks.md, "Risk checks").
	m.lastTradeID++
	o.leavesQty -= qty
	o.cumQty += qty
	o.cumNotionalTicks += px * qty
	opp.reduce(li, r, qty)
	r.cumQty += qty
	r.cumNotionalTicks += px * qty
	m.qty.filledQty += 2 * qty
	m.emitFill(o, fillAggressor, px, qty, r.orderID, o.leavesQty)
	m.emitFill(r, fillResting, px, qty, o.orderID, r.leavesQty)
	if m.risk.on { // after the reports, which need no figure, so that fewer values live across the call
		m.riskTradeResting(r, px, qty)
	}
	if r.leavesQty == 0 {
		m.finish(ri, venue.OrdStatusFilled)
	}
}

// fillBoth books a trade of qty at px between aggressor o and resting r
// (at level li of side opp) and takes its TradeID; the caller reports it.
func (m *Matcher) fillBoth(opp *bookSide, li int32, px int64, o, r *order, qty int64) {
	m.lastTradeID++
	o.leavesQty -= qty
	o.cumQty += qty
	o.cumNotionalTicks += px * qty
	opp.reduce(li, r, qty)
	r.cumQty += qty
	r.cumNotionalTicks += px * qty
	m.qty.filledQty += 2 * qty
	if m.risk.on {
		m.riskTradeResting(r, px, qty)
	}
}

// fokFillable reports whether a FOK order can be filled completely now,
// counting the liquidity that match would reach: resting orders of the same
// account are skipped under CancelResting, stop the count under
// CancelAggressor and CancelBoth, and count under None.
func (m *Matcher) fokFillable(in *instrument, o *order) bool {
	s := sideIndex(o.side)
	opp := &in.sides[opposite(s)]
	market := marketLike(o.ordType)
	mode := venue.StpModeNone
	if o.account[0] != 0 {
		mode = m.stpModeOf(o)
	}
	need := o.qty
	for li := opp.best; li >= 0; li = opp.nextBest(li) {
		if px := in.bandLowTicks + int64(li); !crosses(s, market, o.priceTicks, px) || !in.insideVolatilityBand(px) {
			return false
		}
		if mode == venue.StpModeNone {
			need -= opp.levels[li].qty
			if need <= 0 {
				return true
			}
			continue
		}
		// Icebergs show a slice on the first pass through the level and
		// their reserves come after (refills go to the back), so the
		// reserves count only if no same-account order stops the pass.
		var hidden int64
		for ri := opp.levels[li].head; ri != noOrder; ri = m.pool.orders[ri].next {
			r := &m.pool.orders[ri]
			if selfTrade(o, r) {
				if mode == venue.StpModeCancelResting {
					continue
				}
				return false
			}
			show := m.displayOf(ri)
			need -= show
			hidden += r.leavesQty - show
			if need <= 0 {
				return true
			}
		}
		if need -= hidden; need <= 0 {
			return true
		}
	}
	return false
}
