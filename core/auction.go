package core

import (
	"math"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Call auctions (see "Auctions" in doc.go). An instrument in a call phase
// (OpeningCall, ClosingCall, VolatilityAuction) accepts orders, cancels and
// replaces, and matches nothing: limit orders rest, even crossed, and
// market orders wait in a FIFO per side (auctionState.market). The call
// ends with an uncross when the instrument moves to Open or Closed (or when
// a volatility auction's time is up): every trade prints at one price, and
// market orders trade before limit orders.
//
// The uncrossing price is chosen among the prices of the non-empty levels,
// walked once in ascending order with the quantity each side would trade
// there (buy: market buys and bids at or above; sell: market sells and
// asks at or below; the level totals and the side totals are kept by the
// book, so a price costs O(1)): the most volume, then the least imbalance,
// then market pressure (the highest price when every remaining candidate
// leaves buyers over, the lowest when every one leaves sellers over), then,
// as on Xetra and Euronext, the reference price (referencePrice: the last
// trade inside the band in force, else the band's reference price, the
// configured one or an operator's): itself when it lies between the lowest
// and the highest remaining candidate, else the nearer of those two. The
// reference between them passes the rules before it: the buy quantity
// never rises with the price and the sell quantity never falls, so it
// trades the same most volume, and its imbalance (buy − sell, which never
// rises either) lies between theirs, which at that rule are none at both
// or buyers over at the lowest and as many sellers over at the highest: it
// leaves none, or no more than they do, and that imbalance, its own, is
// the one reported. Taking either candidate instead would favour one
// side: the lower the buyers, the higher the sellers.
// When market orders alone would trade (the most volume is no more than
// the market orders of either side), the price is the reference price,
// whatever limit orders rest beside them. A walk costs O(non-empty levels)
// plus the bitmap words between them.

// auctionState is an instrument's part in call phases.
type auctionState struct {
	// market holds the market orders waiting for the uncross, one FIFO
	// (level 0) per side. Their orders are marked waiting with stopLevel 0,
	// which tells them from waiting stops (stopLevel ≥ 1).
	market [2]bookSide
	// phase is the call phase whose orders the book holds, 0 when none: it
	// stays while an operator halts the call, so that the uncross still runs
	// when the instrument opens or closes, and while the call is extended
	// (status VolatilityAuction with phase OpeningCall or ClosingCall:
	// extendCall).
	phase venue.TradingStatus
	// volBandTicks and volAuctionNs configure volatility interruptions,
	// extendCalls the extension of calls (extendCall).
	volBandTicks int64
	volAuctionNs int64
	extendCalls  bool
	// endNs is when the running volatility auction (or a call's extension)
	// uncrosses, 0 when none.
	endNs int64
	// Indicative publication: the book totals last looked at, the command
	// time and content of the last AuctionIndicative, and whether a change
	// waits for the throttle interval to pass.
	sig       bookSig
	replaces  int64 // replaces that moved an order in a call (see bookSig)
	shownAtNs int64
	shown     auctionResult
	pending   bool
}

// bookSig is what an indicative price depends on, summed up: an order
// joining a side moves its count and quantity, one leaving it counts an
// edit, a fill or a smaller quantity moves a total; replaces counts the
// replaces in a call (-1 marks a book not looked at yet).
type bookSig struct {
	bidQty, askQty, marketBuyQty, marketSellQty int64
	edits                                       [4]uint32
	replaces                                    int64
}

// auctionResult is an uncrossing price and what trades there.
type auctionResult struct {
	priceTicks    int64
	matchedQty    int64
	imbalanceQty  int64
	imbalanceSide venue.ImbalanceSide
	rule          venue.AuctionRule
}

func newAuctionState(c *InstrumentConfig) auctionState {
	a := auctionState{volBandTicks: c.VolatilityBandTicks, volAuctionNs: c.VolatilityAuctionNs,
		extendCalls: c.CallExtension && c.VolatilityBandTicks > 0}
	if a.volAuctionNs == 0 {
		a.volAuctionNs = VolatilityAuctionNsDefault
	}
	for s := range a.market {
		a.market[s] = newBookSide(1, s == 0)
	}
	if IsCall(c.Status) {
		a.phase = c.Status
	}
	return a
}

// IsCall reports whether a status is a call phase: nothing matches, and
// the book uncrosses when it ends.
func IsCall(s venue.TradingStatus) bool {
	return s == venue.TradingStatusOpeningCall || s == venue.TradingStatusClosingCall || s == venue.TradingStatusVolatilityAuction
}

// phaseTIF is the time in force that takes part only in a call phase's
// uncross (0 when the phase has none).
func phaseTIF(phase venue.TradingStatus) venue.TimeInForce {
	switch phase {
	case venue.TradingStatusOpeningCall:
		return venue.TimeInForceAtTheOpening
	case venue.TradingStatusClosingCall:
		return venue.TimeInForceAtTheClose
	}
	return venue.TimeInForceDay // no order is expired for it: see expireAuctionOrders
}

// continuousTIF reports whether tif is a time in force of continuous
// trading (DAY, GTC, IOC, FOK, GTD): one test of a bit mask.
func continuousTIF(tif venue.TimeInForce) bool {
	const mask = 1<<venue.TimeInForceDay | 1<<venue.TimeInForceGTC | 1<<venue.TimeInForceIOC |
		1<<venue.TimeInForceFOK | 1<<venue.TimeInForceGTD
	return tif < 8 && mask>>tif&1 != 0
}

// entryReject is statusReject for a new order: outside a call phase a
// TimeInForce of the opening or the close is refused, inside one IOC and
// FOK are, and a market order needs an order slot as it waits. The common
// case (Open, a continuous time in force) costs two tests.
func (m *Matcher) entryReject(in *instrument, ordType venue.OrdType, tif venue.TimeInForce) venue.RejectReason {
	if in.status == venue.TradingStatusOpen && tif != venue.TimeInForceAtTheOpening && tif != venue.TimeInForceAtTheClose {
		return venue.RejectReasonNone
	}
	return m.entryRejectSlow(in, ordType, tif)
}

func (m *Matcher) entryRejectSlow(in *instrument, ordType venue.OrdType, tif venue.TimeInForce) venue.RejectReason {
	if reason := statusReject(in.status); reason != venue.RejectReasonNone {
		return reason
	}
	switch {
	case tif == venue.TimeInForceAtTheOpening && (!in.inCallOf(venue.TradingStatusOpeningCall) || IsStop(ordType)):
		return venue.RejectReasonAtTheOpeningOutsideCall
	case tif == venue.TimeInForceAtTheClose && (!in.inCallOf(venue.TradingStatusClosingCall) || IsStop(ordType)):
		return venue.RejectReasonAtTheCloseOutsideCall
	case !IsCall(in.status):
		return venue.RejectReasonNone
	case tif == venue.TimeInForceIOC || tif == venue.TimeInForceFOK:
		return venue.RejectReasonImmediateInCall
	case ordType == venue.OrdTypeMarket && m.pool.inUse >= m.ordersMax:
		return venue.RejectReasonCapacityExceeded
	}
	return venue.RejectReasonNone
}

// inCallOf reports whether the instrument is in call phase, or in that
// call's extension (extendCall).
func (in *instrument) inCallOf(phase venue.TradingStatus) bool {
	return in.auction.phase == phase && (in.status == phase || in.status == venue.TradingStatusVolatilityAuction)
}

// canQueueMarket reports whether market order o (the remainder of one that
// traded before a volatility interruption, or a new one in a call) waits
// for the uncross: a market order or an elected stop, not IOC or FOK, in a call, with
// an order slot left beside the spare one non-resting orders use.
func (m *Matcher) canQueueMarket(in *instrument, o *order) bool {
	return marketLike(o.ordType) && in.auction.phase != 0 && IsCall(in.status) &&
		o.tif != venue.TimeInForceIOC && o.tif != venue.TimeInForceFOK && m.pool.inUse <= m.ordersMax
}

// queueMarket puts market order oi at the back of its side's market FIFO.
func (m *Matcher) queueMarket(in *instrument, oi orderIdx) {
	o := &m.pool.orders[oi]
	in.auction.market[sideIndex(o.side)].pushBack(m.pool.orders, 0, oi)
	o.resting, o.waiting = false, true // pushBack marks an order resting in the book
	// An elected stop waits as the market order it now is: stopLevel 0 tells
	// a queued order from a parked stop, and its stop price no longer counts
	// but for its reports, which keep it (stopPxOf; FIX 4.4 requires it of
	// every report of a stop order).
	if o.stopLevel != 0 {
		m.pool.ext[oi].electedStopPxTicks = in.stopPxOf(o)
		o.stopLevel = 0
	}
	if !o.listed {
		m.listOrder(oi)
		if o.tif == venue.TimeInForceGTD {
			m.gtd.push(oi)
		}
	}
	if m.risk.on {
		m.riskOpenWaiting(o, 1, o.leavesQty)
	}
}

// unqueueMarket takes a waiting market order out of its FIFO.
func (m *Matcher) unqueueMarket(oi orderIdx) {
	o := &m.pool.orders[oi]
	m.instrumentOf(o).auction.market[sideIndex(o.side)].unlink(m.pool.orders, 0, oi)
	o.waiting = false
	if m.risk.on && o.leavesQty > 0 { // a filled one stopped counting at its last fill
		m.riskOpenWaiting(o, -1, -o.leavesQty)
	}
}

// changeStatus moves an instrument to status (SetTradingStatus, operator
// and schedule commands, volatility interruptions) and reports it. Moving
// to Open or Closed while the book holds a call's orders uncrosses first;
// entering a call remembers its phase; leaving a volatility auction by
// another way stops its timer.
//
// Moving the opening call (in it, halted in it or in its extension) to the
// closing call, or the closing call to the opening call, ends it as a
// venue ends a call: with between (an OperatorCommand's
// UncrossBetweenCalls) it uncrosses to where it would end (Open, Closed:
// afterCall), its stops run as after any uncross, and the instrument then
// enters the new call. Without it (a command from before the flag, or a
// SetTradingStatus command) the first call's time in force expires, its
// book stays for the new call, and no uncross runs: so those records
// replay. A volatility auction that a call meets has no time in force of
// its own and no call it was entered for: its book becomes the call's
// either way (see "Auctions" in doc.go).
func (m *Matcher) changeStatus(in *instrument, status venue.TradingStatus, between bool) {
	a := &in.auction
	if a.phase != 0 && (status == venue.TradingStatusOpen || status == venue.TradingStatusClosed) {
		m.uncross(in, status)
		return
	}
	if between && phaseTIF(a.phase) != venue.TimeInForceDay && phaseTIF(status) != venue.TimeInForceDay && a.phase != status {
		// The stops it runs may interrupt into a volatility auction: the
		// new call meets it as any other.
		m.uncross(in, a.afterCall())
	}
	a.endNs = 0
	if IsCall(status) {
		if a.phase != 0 && a.phase != status {
			m.expireAuctionOrders(in, phaseTIF(a.phase), false)
		}
		if a.phase == 0 {
			m.joinCalls(in)
		}
		a.phase = status
		if status == venue.TradingStatusVolatilityAuction {
			a.endNs = m.nowNs + a.volAuctionNs
			m.timerDueNs = min(m.timerDueNs, a.endNs)
		}
	}
	in.setStatus(status)
	m.emitTradingStatusChanged(in.id, status)
	if status == venue.TradingStatusOpen && m.stopsWaiting != 0 { // stops a closing uncross elected
		m.runStops(in)
	}
}

// extendCall extends an opening or closing call that a phase change ends
// when its uncross would trade further than the dynamic band
// (VolatilityBandTicks) from the reference price, as a continuous order
// would be interrupted (interrupts): VolatilityInterruption without an
// order, then the instrument enters VolatilityAuction for VolatilityAuctionNs
// and its book stays the call's (phase kept: the call's time in force is
// still taken and expires at its uncross, whose trades are the call's).
// When the time is up it uncrosses to where the phase change was going,
// Open after the opening call, Closed after the closing call, at whatever
// price the book then gives, inside the price band: a call is extended
// once. An operator who opens or closes the instrument ends it earlier.
// A volatility auction, a halted call and a call of an instrument without
// CallExtension (or without a dynamic band) are not extended.
func (m *Matcher) extendCall(in *instrument) bool {
	a := &in.auction
	band := a.volBandTicks
	if !a.extendCalls || a.phase == 0 || a.phase == venue.TradingStatusVolatilityAuction || in.status != a.phase {
		return false
	}
	r := m.auctionPrice(in)
	ref := in.referencePrice()
	if r.matchedQty == 0 || (r.priceTicks >= ref-band && r.priceTicks <= ref+band) {
		return false
	}
	a.endNs = m.nowNs + a.volAuctionNs
	m.timerDueNs = min(m.timerDueNs, a.endNs)
	m.emitVolatilityInterruption(in, 0, r.priceTicks, ref, a.endNs)
	in.setStatus(venue.TradingStatusVolatilityAuction)
	m.emitTradingStatusChanged(in.id, in.status)
	return true
}

// afterCall is the status an uncross at the end of a volatility auction
// moves to: Closed when it extends the closing call, else Open.
func (a *auctionState) afterCall() venue.TradingStatus {
	if a.phase == venue.TradingStatusClosingCall {
		return venue.TradingStatusClosed
	}
	return venue.TradingStatusOpen
}

// auctionEndsIn reports whether the instrument is in a volatility auction,
// or a call's extension, whose end moves it to status.
func (in *instrument) auctionEndsIn(status venue.TradingStatus) bool {
	return in.status == venue.TradingStatusVolatilityAuction && in.auction.afterCall() == status
}

// joinCalls adds an instrument to the list of those whose indicative price
// is watched (m.calls, bounded by the number of instruments).
func (m *Matcher) joinCalls(in *instrument) {
	m.calls = append(m.calls, in.id)
	in.auction.sig = bookSig{replaces: -1} // look at the book at the next command
	in.auction.replaces = 0
	// What a call starts from is "nothing would trade, no imbalance" (the
	// zero result): an indicative is published only when the book differs
	// from it (see "Auctions" in doc.go).
	in.auction.shown, in.auction.shownAtNs = auctionResult{}, 0
	in.auction.pending = false
}

// leaveCalls removes an instrument from m.calls, keeping the order of the rest.
func (m *Matcher) leaveCalls(in *instrument) {
	for i, id := range m.calls {
		if id == in.id {
			copy(m.calls[i:], m.calls[i+1:])
			m.calls = m.calls[:len(m.calls)-1]
			return
		}
	}
}

// uncross ends the call of instrument in at one price (auctionPrice),
// reports it, trades, cancels the market orders left over and expires the
// orders of the phase's time in force, then moves the instrument to next.
// When next is Open, the stops the uncross price elects run after, as
// after any trade; after a closing uncross they wait until the instrument
// opens again (changeStatus), so that nothing rests crossed in a closed
// book and nothing enters a call it was not part of.
func (m *Matcher) uncross(in *instrument, next venue.TradingStatus) {
	a := &in.auction
	r := m.auctionPrice(in)
	prevTicks := in.lastTradeTicks
	m.emitUncrossed(in, a.phase, &r)
	if r.matchedQty > 0 {
		m.executeUncross(in, r.priceTicks, r.matchedQty)
		in.lastTradeTicks = r.priceTicks
	}
	m.expireAuctionOrders(in, phaseTIF(a.phase), true)
	a.phase, a.endNs = 0, 0
	m.leaveCalls(in)
	in.setStatus(next)
	m.emitTradingStatusChanged(in.id, next)
	if next == venue.TradingStatusOpen && m.stopsWaiting != 0 {
		m.runStopsAfterUncross(in, prevTicks)
	}
	if m.risk.pending > 0 { // an uncross fill tripped an automatic kill (risk.go)
		m.riskRunPendingKills()
	}
}

// executeUncross trades qty at px: the head of the buy queue (market buys,
// then bids from the best) against the head of the sell queue, each trade
// the smaller of what the two show (an iceberg trades its slice, and a
// slice it empties is refilled at the back of its level, as in continuous
// trading), buy side reported first, both passive and flagged auction. The
// price was chosen so that qty is there on both sides: level totals count
// icebergs' reserves, which come round again after their refills.
func (m *Matcher) executeUncross(in *instrument, px, qty int64) {
	for qty > 0 {
		bs, bli := in.auctionHead(0)
		ss, sli := in.auctionHead(1)
		if bli < 0 || sli < 0 {
			panic("core: uncross ran out of orders before its volume")
		}
		bi, si := bs.levels[bli].head, ss.levels[sli].head
		b, s := &m.pool.orders[bi], &m.pool.orders[si]
		q := min(qty, m.displayOf(bi), m.displayOf(si))
		m.lastTradeID++
		m.auctionFill(bs, bli, bi, px, q)
		m.auctionFill(ss, sli, si, px, q)
		m.qty.filledQty += 2 * q
		m.emitFill(b, fillAuction, px, q, s.orderID, m.shownAfterAuction(bi, q))
		m.emitFill(s, fillAuction, px, q, b.orderID, m.shownAfterAuction(si, q))
		m.afterAuctionFill(bs, bli, bi)
		m.afterAuctionFill(ss, sli, si)
		qty -= q
	}
}

// afterAuctionFill ends a filled order, or refills an iceberg whose slice
// the fill emptied.
func (m *Matcher) afterAuctionFill(bs *bookSide, li int32, oi orderIdx) {
	o := &m.pool.orders[oi]
	switch {
	case o.leavesQty == 0:
		m.finish(oi, venue.OrdStatusFilled)
	case isIceberg(o) && m.pool.ext[oi].displayQty == 0:
		m.refill(bs, li, oi)
	}
}

// auctionHead returns where the next order of side s trades in an uncross:
// the market FIFO while it holds orders, else the best level (-1: none).
func (in *instrument) auctionHead(s int) (*bookSide, int32) {
	if mk := &in.auction.market[s]; mk.best >= 0 {
		return mk, 0
	}
	return &in.sides[s], in.sides[s].best
}

// auctionFill books qty at px for order oi at level li of bs.
func (m *Matcher) auctionFill(bs *bookSide, li int32, oi orderIdx, px, qty int64) {
	o := &m.pool.orders[oi]
	bs.reduce(li, o, qty)
	o.cumQty += qty
	o.cumNotionalTicks += px * qty
	if m.risk.on {
		m.riskTradeResting(o, px, qty)
	}
}

// shownAfterAuction is what an order shows after an uncross fill of qty
// (at most its display): an iceberg's slice shrinks by it.
func (m *Matcher) shownAfterAuction(oi orderIdx, qty int64) int64 {
	o := &m.pool.orders[oi]
	if !isIceberg(o) {
		return o.leavesQty
	}
	m.pool.ext[oi].displayQty -= qty
	return m.pool.ext[oi].displayQty
}

// expireAuctionOrders cancels, after an uncross (all), the market orders
// left over (MarketRemainder), and the orders of time in force tif
// (Expiry, ordStatus Expired): bids best first, then asks, then the market
// buys and sells in time order. It costs O(orders of the instrument).
func (m *Matcher) expireAuctionOrders(in *instrument, tif venue.TimeInForce, all bool) {
	if tif != venue.TimeInForceDay {
		for s := range in.sides {
			bs := &in.sides[s]
			for li := bs.best; li >= 0; li = bs.nextBest(li) {
				for oi := bs.levels[li].head; oi != noOrder; {
					next := m.pool.orders[oi].next
					if m.pool.orders[oi].tif == tif {
						m.cancelQuiet(oi, venue.CancelReasonExpiry, venue.OrdStatusExpired)
					}
					oi = next
				}
			}
		}
	}
	if !all {
		return
	}
	for s := range in.auction.market {
		mk := &in.auction.market[s]
		for mk.best >= 0 {
			m.cancelQuiet(mk.levels[0].head, venue.CancelReasonMarketRemainder, venue.OrdStatusCancelled)
		}
	}
}

// referencePrice is the last rule's reference, and the price market orders
// alone trade at: the last trade price while it lies inside the band in
// force, else the band's reference price (bandRefTicks). An operator who
// moves the band away from the last trade (operatorSetBand) moves the
// reference with it: the last trade, outside the new band, would have
// printed an uncross there.
func (in *instrument) referencePrice() int64 {
	if last := in.lastTradeTicks; last >= in.bandLowTicks && last <= in.bandHighTicks { // 0, no trade yet, is below every band
		return last
	}
	return in.bandRefTicks()
}

// bandRefTicks is the reference price the band in force was set around: the
// configured one, or the one an operator gave with a new band
// (BandCentreTicks), so that a snapshot, which keeps the band, keeps it too.
func (in *instrument) bandRefTicks() int64 {
	return BandCentreTicks(in.bandLowTicks, in.bandHighTicks)
}

// auctionPrice chooses the uncrossing price of an instrument's book (see
// the top of this file) in one ascending walk over the non-empty levels of
// both sides.
func (m *Matcher) auctionPrice(in *instrument) auctionResult {
	bids, asks := &in.sides[0], &in.sides[1]
	marketBuy, marketSell := in.auction.market[0].qtyRest, in.auction.market[1].qtyRest
	t := candidates{ref: in.referencePrice()}
	var bidsBelow, asksAtOrBelow int64
	bi, ai := bids.bitmap.nextAtOrAbove(0), asks.best
	for bi >= 0 || ai >= 0 {
		li := bi
		if li < 0 || (ai >= 0 && ai < li) {
			li = ai
		}
		var bidsAt int64
		if li == bi {
			bidsAt = bids.levels[li].qty
			bi = bids.bitmap.nextAtOrAbove(li + 1)
		}
		if li == ai {
			asksAtOrBelow += asks.levels[li].qty
			ai = asks.bitmap.nextAtOrAbove(li + 1)
		}
		t.consider(in.bandLowTicks+int64(li), marketBuy+bids.qtyRest-bidsBelow, marketSell+asksAtOrBelow)
		bidsBelow += bidsAt
	}
	if v := min(marketBuy, marketSell); v > 0 && t.volume <= v {
		// Market orders alone would trade (they trade first, and the most
		// volume is no more than one side's market orders): they trade at
		// the reference price. A limit price does not set it: it would be
		// the price of an order that does not trade, and one order at the
		// band's edge, behind the market orders, would move every market
		// order's price there. No price trades more than the market
		// orders then, so the reference trades as much.
		buy, sell := in.tradableAt(t.ref)
		return withImbalance(auctionResult{priceTicks: t.ref, matchedQty: v, rule: venue.AuctionRuleReferencePrice}, buy-sell)
	}
	r := t.result(marketBuy+bids.qtyRest, marketSell+asks.qtyRest)
	if r.rule == venue.AuctionRuleReferencePrice && t.ref > t.low && t.ref < t.high {
		// The reference between the candidates: its imbalance is its own
		// (see the top of this file), which a candidate's need not be.
		buy, sell := in.tradableAt(t.ref)
		r = withImbalance(auctionResult{priceTicks: t.ref, matchedQty: t.volume, rule: r.rule}, buy-sell)
	}
	return r
}

// tradableAt is what each side would trade at price px in an uncross:
// market orders, and limit orders at px or better. It costs O(non-empty
// levels at or above px).
func (in *instrument) tradableAt(px int64) (buy, sell int64) {
	bids, asks := &in.sides[0], &in.sides[1]
	buy, sell = in.auction.market[0].qtyRest, in.auction.market[1].qtyRest+asks.qtyRest
	from := int32(max(px-in.bandLowTicks, 0))
	for li := bids.bitmap.nextAtOrAbove(from); li >= 0; li = bids.bitmap.nextAtOrAbove(li + 1) {
		buy += bids.levels[li].qty
	}
	for li := asks.bitmap.nextAtOrAbove(from); li >= 0; li = asks.bitmap.nextAtOrAbove(li + 1) {
		if in.bandLowTicks+int64(li) > px {
			sell -= asks.levels[li].qty
		}
	}
	return buy, sell
}

// candidates keeps, during auctionPrice's walk, the best volume, the least
// imbalance at it, and what the last two rules need of the prices that tie
// on both: the lowest and highest, and their imbalance sides.
type candidates struct {
	ref                     int64
	volume, absImbalance    int64
	atVolume, atImbalance   int
	low, high               int64 // prices
	lowImb, highImb         int64 // buy − sell at them
	buyOver, sellOver, even bool
}

func (t *candidates) consider(px, buy, sell int64) {
	v := min(buy, sell)
	if v <= 0 {
		return
	}
	imb := buy - sell
	abs := max(imb, -imb)
	switch {
	case v > t.volume:
		t.volume, t.atVolume = v, 1
		t.restart(px, imb, abs)
	case v == t.volume:
		t.atVolume++
		switch {
		case abs < t.absImbalance:
			t.restart(px, imb, abs)
		case abs == t.absImbalance:
			t.atImbalance++
			t.high, t.highImb = px, imb
			t.note(imb)
		}
	}
}

func (t *candidates) restart(px, imb, abs int64) {
	t.absImbalance, t.atImbalance = abs, 1
	t.low, t.high = px, px
	t.lowImb, t.highImb = imb, imb
	t.buyOver, t.sellOver, t.even = false, false, false
	t.note(imb)
}

func (t *candidates) note(imb int64) {
	switch {
	case imb > 0:
		t.buyOver = true
	case imb < 0:
		t.sellOver = true
	default:
		t.even = true
	}
}

// result applies the rules in order to what the walk kept. When nothing
// would trade (NoCross, no price), the imbalance is the side with more
// interest in all (buy and sell: market orders plus every resting limit
// order, reserves included) and the difference. When the reference price
// decides and lies between the lowest and the highest candidate, the
// price is the reference and auctionPrice sets its imbalance.
func (t *candidates) result(buy, sell int64) auctionResult {
	if t.volume == 0 {
		return withImbalance(auctionResult{rule: venue.AuctionRuleNoCross}, buy-sell)
	}
	px, imb, rule := t.ref, int64(0), venue.AuctionRuleReferencePrice
	switch {
	case t.atVolume == 1:
		px, imb, rule = t.low, t.lowImb, venue.AuctionRuleMaxVolume
	case t.atImbalance == 1:
		px, imb, rule = t.low, t.lowImb, venue.AuctionRuleMinImbalance
	case t.buyOver && !t.sellOver && !t.even:
		px, imb, rule = t.high, t.highImb, venue.AuctionRuleMarketPressure
	case t.sellOver && !t.buyOver && !t.even:
		px, imb, rule = t.low, t.lowImb, venue.AuctionRuleMarketPressure
	case t.ref <= t.low:
		px, imb = t.low, t.lowImb
	case t.ref >= t.high:
		px, imb = t.high, t.highImb
	}
	return withImbalance(auctionResult{priceTicks: px, matchedQty: t.volume, rule: rule}, imb)
}

// withImbalance sets r's imbalance from buy − sell quantity imb.
func withImbalance(r auctionResult, imb int64) auctionResult {
	switch {
	case imb > 0:
		r.imbalanceSide, r.imbalanceQty = venue.ImbalanceSideBuy, imb
	case imb < 0:
		r.imbalanceSide, r.imbalanceQty = venue.ImbalanceSideSell, -imb
	}
	return r
}

// signature sums up the book for refreshIndicatives.
func (in *instrument) signature() bookSig {
	return bookSig{
		bidQty: in.sides[0].qtyRest, askQty: in.sides[1].qtyRest,
		marketBuyQty: in.auction.market[0].qtyRest, marketSellQty: in.auction.market[1].qtyRest,
		edits:    [4]uint32{in.sides[0].edits, in.sides[1].edits, in.auction.market[0].edits, in.auction.market[1].edits},
		replaces: in.auction.replaces,
	}
}

// refreshIndicatives runs after every command while an instrument is in a
// call: for each one whose book changed, it publishes the indicative
// uncross now, or when the throttle interval has passed (runAuctionTimers).
// It costs O(instruments in a call) per command plus a walk per change.
func (m *Matcher) refreshIndicatives() {
	for _, id := range m.calls {
		ii, _ := m.instrByID.lookup(id)
		in := &m.instruments[ii]
		a := &in.auction
		if sig := in.signature(); sig != a.sig {
			a.sig = sig
			// Pending means "the published indicative is out of date".
			a.pending = a.pending || m.auctionPrice(in) != a.shown
		}
		if !a.pending {
			continue
		}
		if due := a.shownAtNs + m.indicativeIntervalNs; a.shownAtNs != 0 && m.nowNs < due {
			m.timerDueNs = min(m.timerDueNs, due)
			continue
		}
		m.publishIndicative(in)
	}
}

// publishIndicative emits AuctionIndicative when the indicative uncross
// differs from the last one published.
func (m *Matcher) publishIndicative(in *instrument) {
	a := &in.auction
	a.pending = false
	r := m.auctionPrice(in)
	if r == a.shown {
		return
	}
	a.shown, a.shownAtNs = r, m.nowNs
	m.emitIndicative(in, &r)
}

// ClockStepBackNs is how much earlier than the one before a command's time
// must be for the matcher to take the clock as stepped back
// (clockWentBack): the stamps of several threads a few microseconds out of
// order are not, so that a journal written before the rule replays to the
// events it gave, and a cluster's nodes apply it alike.
const ClockStepBackNs = 1_000_000_000

// clockWentBack bounds the auction timers by the command's time when it is
// more than ClockStepBackNs earlier than the one before's (a wall clock
// stepped back): a volatility auction ends at most its length after it,
// and a throttled indicative is due at most one interval after it.
// Measured from the later time, a clock stepped back an hour would have
// held the auction, and the indicative uncross of every call, for that hour
// more. The rule reads only the journaled times, so a replay agrees.
func (m *Matcher) clockWentBack() {
	for _, id := range m.calls {
		ii, _ := m.instrByID.lookup(id)
		a := &m.instruments[ii].auction
		if end := m.nowNs + a.volAuctionNs; a.endNs > end && end > 0 {
			a.endNs = end
			m.timerDueNs = min(m.timerDueNs, end)
		}
		if a.shownAtNs > m.nowNs && m.nowNs > 0 {
			a.shownAtNs = m.nowNs
			if a.pending {
				m.timerDueNs = min(m.timerDueNs, m.nowNs+m.indicativeIntervalNs)
			}
		}
	}
}

// runAuctionTimers runs, before a command whose timestamp has reached
// m.timerDueNs, the volatility auctions that are over (an uncross back to
// Open) and the indicative publications the throttle held back, in the
// order of m.calls; then it finds the next due time.
func (m *Matcher) runAuctionTimers() {
	m.timerDueNs = math.MaxInt64
	for i := 0; i < len(m.calls); {
		ii, _ := m.instrByID.lookup(m.calls[i])
		in := &m.instruments[ii]
		a := &in.auction
		if a.endNs != 0 && m.nowNs >= a.endNs && in.status == venue.TradingStatusVolatilityAuction {
			m.uncross(in, a.afterCall()) // leaves m.calls: i is the next one now
			continue
		}
		if a.endNs != 0 {
			m.timerDueNs = min(m.timerDueNs, a.endNs)
		}
		if a.pending {
			if due := a.shownAtNs + m.indicativeIntervalNs; m.nowNs >= due {
				m.publishIndicative(in)
			} else {
				m.timerDueNs = min(m.timerDueNs, due)
			}
		}
		i++
	}
}

// interrupts reports whether a trade at px breaks instrument in's dynamic
// band around ref (the last trade price before the aggressor; before the
// first trade, or when the band has moved away from it, the band's
// reference price, as in referencePrice): then it reports the interruption and starts the
// volatility auction, and the aggressor trades no further.
func (m *Matcher) interrupts(in *instrument, oi orderIdx, px, ref int64) bool {
	if ref < in.bandLowTicks || ref > in.bandHighTicks { // no trade yet, or one the band has moved away from
		ref = in.bandRefTicks()
	}
	band := in.auction.volBandTicks
	if px >= ref-band && px <= ref+band {
		return false
	}
	m.emitVolatilityInterruption(in, m.pool.orders[oi].orderID, px, ref, m.nowNs+in.auction.volAuctionNs)
	m.changeStatus(in, venue.TradingStatusVolatilityAuction, false)
	return true
}

// insideVolatilityBand reports whether a trade at px stays inside the
// dynamic band (always, when the instrument has none): a FOK counts only
// that liquidity, so that it is killed rather than interrupted half-filled.
func (in *instrument) insideVolatilityBand(px int64) bool {
	band := in.auction.volBandTicks
	if band == 0 {
		return true
	}
	ref := in.referencePrice()
	return px >= ref-band && px <= ref+band
}

// auctionResultFields are the fields of an auction's result that
// AuctionIndicative and AuctionUncrossed both carry.
type auctionResultFields interface {
	SetImbalanceSide(venue.ImbalanceSide)
	SetRule(venue.AuctionRule)
	SetPriceTicks(int64)
	SetMatchedQty(int64)
	SetImbalanceQty(int64)
}

// put writes r into an auction event (the flyweight is one pointer: passing
// it as an interface does not allocate).
func (r *auctionResult) put(e auctionResultFields) {
	e.SetImbalanceSide(r.imbalanceSide)
	e.SetRule(r.rule)
	e.SetPriceTicks(r.priceTicks)
	e.SetMatchedQty(r.matchedQty)
	e.SetImbalanceQty(r.imbalanceQty)
}

func (m *Matcher) emitIndicative(in *instrument, r *auctionResult) {
	var e venue.AuctionIndicative
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetInstrumentID(in.id)
	e.SetStatus(in.status)
	r.put(e)
	m.sink.Commit()
}

func (m *Matcher) emitUncrossed(in *instrument, phase venue.TradingStatus, r *auctionResult) {
	var e venue.AuctionUncrossed
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetInstrumentID(in.id)
	e.SetStatus(phase)
	r.put(e)
	e.SetReferencePriceTicks(in.referencePrice())
	m.sink.Commit()
}

func (m *Matcher) emitVolatilityInterruption(in *instrument, orderID uint64, px, ref, endNs int64) {
	var e venue.VolatilityInterruption
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetInstrumentID(in.id)
	e.SetOrderID(orderID)
	e.SetPriceTicks(px)
	e.SetReferencePriceTicks(ref)
	e.SetBandLowTicks(ref - in.auction.volBandTicks)
	e.SetBandHighTicks(ref + in.auction.volBandTicks)
	e.SetAuctionEndNs(endNs)
	m.sink.Commit()
}

// AuctionMarketOrders appends the market orders of one side waiting for an
// uncross, in time order, to dst (a read-only view, as BookOrders).
func (m *Matcher) AuctionMarketOrders(instrumentID uint32, side venue.Side, dst []OrderView) []OrderView {
	in, bs := m.bookSideOf(instrumentID, side)
	if bs == nil {
		return dst
	}
	for oi := in.auction.market[sideIndex(side)].levels[0].head; oi != noOrder; oi = m.pool.orders[oi].next {
		dst = append(dst, m.orderView(oi))
	}
	return dst
}
