package core

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The reference model of call auctions and volatility interruptions (see
// "Auctions" in doc.go), written for obviousness: the uncrossing price is
// found by trying every price of the band against every order, and the
// rules are applied as filters over the candidates, one after the other.

type refAuction struct {
	phase   venue.TradingStatus // the call whose orders the book holds, 0: none
	endNs   int64               // a volatility auction's end, 0: none
	shownAt int64               // time of the last indicative, 0: none since the call began
	shown   refUncross          // what it said; a call starts from the zero one (nothing trades)
	pending bool                // a change waits for the throttle
}

type refUncross struct {
	px, matched, imbalance int64
	side                   venue.ImbalanceSide
	rule                   venue.AuctionRule
}

func refIsCall(s venue.TradingStatus) bool {
	return s == venue.TradingStatusOpeningCall || s == venue.TradingStatusClosingCall || s == venue.TradingStatusVolatilityAuction
}

// phaseReason is the refusal of a new order for its phase: TimeInForce at
// the opening or the close outside its call (or on a stop), IOC and FOK in
// a call, a market order in a call when every order slot is taken.
func (m *refModel) phaseReason(in *refInstrument, typ venue.OrdType, tif venue.TimeInForce) venue.RejectReason {
	stop := typ == venue.OrdTypeStop || typ == venue.OrdTypeStopLimit
	// A call's time in force is taken in the call and in its extension.
	inCall := func(phase venue.TradingStatus) bool {
		return in.auction.phase == phase && (in.status == phase || in.status == venue.TradingStatusVolatilityAuction)
	}
	switch {
	case tif == venue.TimeInForceAtTheOpening && (!inCall(venue.TradingStatusOpeningCall) || stop):
		return venue.RejectReasonAtTheOpeningOutsideCall
	case tif == venue.TimeInForceAtTheClose && (!inCall(venue.TradingStatusClosingCall) || stop):
		return venue.RejectReasonAtTheCloseOutsideCall
	case !refIsCall(in.status):
		return venue.RejectReasonNone
	case tif == venue.TimeInForceIOC || tif == venue.TimeInForceFOK:
		return venue.RejectReasonImmediateInCall
	case typ == venue.OrdTypeMarket && len(m.live) >= m.cfg.OrdersMax:
		return venue.RejectReasonCapacityExceeded
	}
	return venue.RejectReasonNone
}

// canQueue: a plain market order waits for the uncross in a call, unless
// it is IOC or FOK or no order slot is left for it.
func (m *refModel) canQueue(o *refOrder) bool {
	in := m.instruments[o.instrument]
	return (o.ordType == venue.OrdTypeMarket || o.ordType == venue.OrdTypeStop) && in.auction.phase != 0 && refIsCall(in.status) &&
		o.tif != venue.TimeInForceIOC && o.tif != venue.TimeInForceFOK && len(m.live) < m.cfg.OrdersMax
}

func (m *refModel) queue(o *refOrder) {
	o.queued = true
	// An elected stop waits as a market order: its stop price no longer
	// counts, but its reports keep it.
	m.addLive(o)
}

// reference is the last trade while it lies inside the band, else the
// reference price the band was set around (configured, or an operator's).
func (m *refModel) reference(in *refInstrument) int64 {
	if in.lastTrade >= in.low && in.lastTrade <= in.high {
		return in.lastTrade
	}
	return in.ref
}

func (m *refModel) insideVolatilityBand(instrument uint32, px int64) bool {
	in := m.instruments[instrument]
	band := in.cfg.VolatilityBandTicks
	ref := m.reference(in)
	return band == 0 || (px >= ref-band && px <= ref+band)
}

// interrupts: o would trade at px, outside the band around ref (the last
// trade before o, else the band's reference, as in reference).
func (m *refModel) interrupts(o *refOrder, px, ref int64) bool {
	in := m.instruments[o.instrument]
	band := in.cfg.VolatilityBandTicks
	if ref < in.low || ref > in.high {
		ref = in.ref
	}
	if band == 0 || (px >= ref-band && px <= ref+band) {
		return false
	}
	var e venue.VolatilityInterruption
	m.begin(&e)
	e.SetInstrumentID(o.instrument)
	e.SetOrderID(o.orderID)
	e.SetPriceTicks(px)
	e.SetReferencePriceTicks(ref)
	e.SetBandLowTicks(ref - band)
	e.SetBandHighTicks(ref + band)
	e.SetAuctionEndNs(m.now + m.volAuctionNs(in))
	m.sink.Commit()
	m.setStatus(in, venue.TradingStatusVolatilityAuction, false)
	return true
}

// extends: on an instrument with CallExtension, a phase change that would
// end the opening or the closing call (not a halted one, not a volatility
// auction) with an uncross trading outside the dynamic band around the
// reference price extends the call instead: a VolatilityInterruption of no order, and the instrument is in
// VolatilityAuction for its length, its book still the call's.
func (m *refModel) extends(in *refInstrument, status venue.TradingStatus) bool {
	band := in.cfg.VolatilityBandTicks
	if band == 0 || !in.cfg.CallExtension || (status != venue.TradingStatusOpen && status != venue.TradingStatusClosed) ||
		(in.status != venue.TradingStatusOpeningCall && in.status != venue.TradingStatusClosingCall) {
		return false
	}
	r, ref := m.uncrossPrice(in), m.reference(in)
	if r.matched == 0 || (r.px >= ref-band && r.px <= ref+band) {
		return false
	}
	end := m.now + m.volAuctionNs(in)
	var e venue.VolatilityInterruption
	m.begin(&e)
	e.SetInstrumentID(in.cfg.ID)
	e.SetOrderID(0) // no order caused it
	e.SetPriceTicks(r.px)
	e.SetReferencePriceTicks(ref)
	e.SetBandLowTicks(ref - band)
	e.SetBandHighTicks(ref + band)
	e.SetAuctionEndNs(end)
	m.sink.Commit()
	in.auction.endNs = end
	in.status = venue.TradingStatusVolatilityAuction
	m.statusChanged(in.cfg.ID, in.status)
	return true
}

// clockWentBack: a command stamped more than ClockStepBackNs before the one
// before bounds each call's
// timers by its time: a volatility auction ends at most its length after
// it, an indicative is due at most one interval after it.
func (m *refModel) clockWentBack(now int64) {
	for _, id := range m.calls {
		a := &m.instruments[id].auction
		if end := now + m.volAuctionNs(m.instruments[id]); a.endNs > end && end > 0 {
			a.endNs = end
		}
		if a.shownAt > now && now > 0 {
			a.shownAt = now
		}
	}
}

func (m *refModel) volAuctionNs(in *refInstrument) int64 {
	if in.cfg.VolatilityAuctionNs == 0 {
		return VolatilityAuctionNsDefault
	}
	return in.cfg.VolatilityAuctionNs
}

// setStatus moves an instrument to a status: to Open or Closed from a call
// (or a halted call) through an uncross. The opening call (or the closing
// call) moved to the other call by a command that says so (between) ends
// with its uncross, to Open (Closed), before the other begins; without it
// the first call's time in force expires and its book stays.
func (m *refModel) setStatus(in *refInstrument, status venue.TradingStatus, between bool) {
	a := &in.auction
	if a.phase != 0 && (status == venue.TradingStatusOpen || status == venue.TradingStatusClosed) {
		m.uncross(in, status)
		return
	}
	ends := map[venue.TradingStatus]venue.TradingStatus{venue.TradingStatusOpeningCall: venue.TradingStatusOpen,
		venue.TradingStatusClosingCall: venue.TradingStatusClosed}
	if next, ok := ends[a.phase]; ok && between && a.phase != status && ends[status] != 0 {
		m.uncross(in, next)
	}
	a.endNs = 0
	if refIsCall(status) {
		if a.phase != 0 && a.phase != status {
			m.expireTIF(in, a.phase)
		}
		if a.phase == 0 {
			m.calls = append(m.calls, in.cfg.ID)
			a.shownAt, a.shown, a.pending = 0, refUncross{}, false // nothing trades: published after the command if the book differs
		}
		a.phase = status
		if status == venue.TradingStatusVolatilityAuction {
			a.endNs = m.now + m.volAuctionNs(in)
		}
	}
	in.status = status
	m.statusChanged(in.cfg.ID, status)
	if status == venue.TradingStatusOpen {
		m.runStops(in.cfg.ID)
	}
}

func (m *refModel) statusChanged(id uint32, status venue.TradingStatus) {
	var e venue.TradingStatusChanged
	m.begin(&e)
	e.SetInstrumentID(id)
	e.SetStatus(status)
	m.sink.Commit()
}

// expireTIF expires the book's orders of a call's time in force, bids then
// asks, each in priority order.
func (m *refModel) expireTIF(in *refInstrument, phase venue.TradingStatus) {
	tif := map[venue.TradingStatus]venue.TimeInForce{venue.TradingStatusOpeningCall: venue.TimeInForceAtTheOpening,
		venue.TradingStatusClosingCall: venue.TimeInForceAtTheClose}[phase]
	if tif == 0 {
		return
	}
	for _, side := range []venue.Side{venue.SideBuy, venue.SideSell} {
		for _, o := range m.book(in.cfg.ID, side) {
			if o.tif == tif {
				m.cancelLive(o, venue.CancelReasonExpiry, venue.OrdStatusExpired, o.clOrdID, "")
			}
		}
	}
}

// queued returns the market orders of one side waiting for an uncross, in time order.
func (m *refModel) queued(instrument uint32, side venue.Side) []*refOrder {
	return m.selectLive(func(o *refOrder) bool { return o.queued && o.instrument == instrument && o.side == side },
		func(a, b *refOrder) int { return cmp.Compare(a.priority, b.priority) })
}

// uncrossPrice tries every price of the band.
func (m *refModel) uncrossPrice(in *refInstrument) refUncross {
	id := in.cfg.ID
	bids, asks := m.book(id, venue.SideBuy), m.book(id, venue.SideSell)
	var marketBuy, marketSell int64
	for _, o := range m.queued(id, venue.SideBuy) {
		marketBuy += o.leaves
	}
	for _, o := range m.queued(id, venue.SideSell) {
		marketSell += o.leaves
	}
	type cand struct{ px, volume, imbalance int64 }
	var cands []cand
	for px := in.low; px <= in.high; px++ {
		limitHere := false
		buy, sell := marketBuy, marketSell
		for _, o := range bids {
			limitHere = limitHere || o.price == px
			if o.price >= px {
				buy += o.leaves
			}
		}
		for _, o := range asks {
			limitHere = limitHere || o.price == px
			if o.price <= px {
				sell += o.leaves
			}
		}
		if limitHere && min(buy, sell) > 0 {
			cands = append(cands, cand{px, min(buy, sell), buy - sell})
		}
	}
	// tradable is what each side would trade at the reference price.
	ref := m.reference(in)
	tradable := func() (buy, sell int64) {
		buy, sell = marketBuy, marketSell
		for _, o := range bids {
			if o.price >= ref {
				buy += o.leaves
			}
		}
		for _, o := range asks {
			if o.price <= ref {
				sell += o.leaves
			}
		}
		return buy, sell
	}
	best := int64(0)
	for _, c := range cands {
		best = max(best, c.volume)
	}
	if mv := min(marketBuy, marketSell); mv > 0 && best <= mv {
		// Market orders alone would trade: at the reference price, with the
		// imbalance there.
		buy, sell := tradable()
		return refResult(ref, mv, buy-sell, venue.AuctionRuleReferencePrice)
	}
	if len(cands) == 0 {
		// Nothing would trade: the imbalance is all buy interest against
		// all sell interest.
		buy, sell := marketBuy, marketSell
		for _, o := range bids {
			buy += o.leaves
		}
		for _, o := range asks {
			sell += o.leaves
		}
		return refResult(0, 0, buy-sell, venue.AuctionRuleNoCross)
	}
	cands = slices.DeleteFunc(cands, func(c cand) bool { return c.volume != best })
	if len(cands) == 1 {
		return refResult(cands[0].px, best, cands[0].imbalance, venue.AuctionRuleMaxVolume)
	}
	abs := func(v int64) int64 { return max(v, -v) }
	least := abs(slices.MinFunc(cands, func(a, b cand) int { return cmp.Compare(abs(a.imbalance), abs(b.imbalance)) }).imbalance)
	cands = slices.DeleteFunc(cands, func(c cand) bool { return abs(c.imbalance) != least })
	if len(cands) == 1 {
		return refResult(cands[0].px, best, cands[0].imbalance, venue.AuctionRuleMinImbalance)
	}
	allBuy := !slices.ContainsFunc(cands, func(c cand) bool { return c.imbalance <= 0 })
	allSell := !slices.ContainsFunc(cands, func(c cand) bool { return c.imbalance >= 0 })
	switch {
	case allBuy:
		c := cands[len(cands)-1]
		return refResult(c.px, best, c.imbalance, venue.AuctionRuleMarketPressure)
	case allSell:
		return refResult(cands[0].px, best, cands[0].imbalance, venue.AuctionRuleMarketPressure)
	}
	// The reference price: the lowest candidate when it lies at or below
	// it, the highest at or above, else the reference itself, with what
	// trades there. Between two candidates it trades the same volume with
	// no more imbalance: a model that found otherwise contradicts the rule.
	lowest, highest := cands[0], cands[len(cands)-1]
	switch {
	case ref <= lowest.px:
		return refResult(lowest.px, best, lowest.imbalance, venue.AuctionRuleReferencePrice)
	case ref >= highest.px:
		return refResult(highest.px, best, highest.imbalance, venue.AuctionRuleReferencePrice)
	}
	buy, sell := tradable()
	if min(buy, sell) != best || abs(buy-sell) > least {
		panic(fmt.Sprintf("reference %d between candidates %d and %d trades %d with imbalance %d, not %d with at most %d",
			ref, lowest.px, highest.px, min(buy, sell), buy-sell, best, least))
	}
	return refResult(ref, best, buy-sell, venue.AuctionRuleReferencePrice)
}

func refResult(px, matched, imbalance int64, rule venue.AuctionRule) refUncross {
	r := refUncross{px: px, matched: matched, rule: rule}
	switch {
	case imbalance > 0:
		r.side, r.imbalance = venue.ImbalanceSideBuy, imbalance
	case imbalance < 0:
		r.side, r.imbalance = venue.ImbalanceSideSell, -imbalance
	}
	return r
}

// uncross ends a call: market orders first, then the book in priority
// order, every trade at one price.
func (m *refModel) uncross(in *refInstrument, next venue.TradingStatus) {
	id := in.cfg.ID
	r := m.uncrossPrice(in)
	prev := in.lastTrade
	m.uncrossEvent(in, r)
	m.uncrossing = true
	for left := r.matched; left > 0; {
		b := append(m.queued(id, venue.SideBuy), m.book(id, venue.SideBuy)...)[0]
		s := append(m.queued(id, venue.SideSell), m.book(id, venue.SideSell)...)[0]
		q := min(left, b.shown(), s.shown())
		m.lastTrade++
		for _, x := range []*refOrder{b, s} {
			x.traded(q, r.px)
			if x.maxFloor != 0 {
				x.display -= q
			}
		}
		m.fill(b, false, q, r.px, s.orderID, b.shown())
		m.fill(s, false, q, r.px, b.orderID, s.shown())
		m.riskTraded(b, q, r.px)
		m.riskTraded(s, q, r.px)
		m.risk.aggQty, m.risk.aggValue = 0, 0 // both sides rest: no aggressor to book at the end
		for _, x := range []*refOrder{b, s} {
			switch {
			case x.leaves == 0:
				delete(m.live, x.orderID)
				m.finalize(x, venue.OrdStatusFilled)
			case x.maxFloor != 0 && x.display == 0:
				x.display = min(x.maxFloor, x.leaves)
				m.toBack(x)
				m.refilled(x)
			}
		}
		left -= q
	}
	m.uncrossing = false
	if r.matched > 0 {
		in.lastTrade = r.px
	}
	m.expireTIF(in, in.auction.phase)
	for _, side := range []venue.Side{venue.SideBuy, venue.SideSell} {
		for _, o := range m.queued(id, side) {
			m.cancelLive(o, venue.CancelReasonMarketRemainder, venue.OrdStatusCancelled, o.clOrdID, "")
		}
	}
	in.auction = refAuction{}
	m.calls = slices.DeleteFunc(m.calls, func(c uint32) bool { return c == id })
	in.status = next
	m.statusChanged(id, next)
	if next == venue.TradingStatusOpen {
		if prev != 0 { // the stops a closing uncross elected, before the opening price's
			m.runStopsBy(id, prev)
		}
		m.runStops(id)
	}
	m.riskEndOfCommand()
}

func (m *refModel) uncrossEvent(in *refInstrument, r refUncross) {
	var e venue.AuctionUncrossed
	m.begin(&e)
	r.set(&e, in.cfg.ID, in.auction.phase)
	e.SetReferencePriceTicks(m.reference(in))
	m.sink.Commit()
}

// set writes the uncross r of instrument id in phase status into an
// AuctionIndicative or AuctionUncrossed, which carry the same fields.
func (r refUncross) set(e interface {
	SetInstrumentID(uint32)
	SetStatus(venue.TradingStatus)
	SetImbalanceSide(venue.ImbalanceSide)
	SetRule(venue.AuctionRule)
	SetPriceTicks(int64)
	SetMatchedQty(int64)
	SetImbalanceQty(int64)
}, id uint32, status venue.TradingStatus) {
	e.SetInstrumentID(id)
	e.SetStatus(status)
	e.SetImbalanceSide(r.side)
	e.SetRule(r.rule)
	e.SetPriceTicks(r.px)
	e.SetMatchedQty(r.matched)
	e.SetImbalanceQty(r.imbalance)
}

// publish reports the indicative uncross if it changed since the last one.
func (m *refModel) publish(in *refInstrument) {
	a := &in.auction
	a.pending = false
	r := m.uncrossPrice(in)
	if r == a.shown {
		return
	}
	a.shown, a.shownAt = r, m.now
	var e venue.AuctionIndicative
	m.begin(&e)
	r.set(&e, in.cfg.ID, in.status)
	m.sink.Commit()
}

// refreshIndicatives runs after every command: an instrument in a call
// whose indicative differs from the last one published publishes it, now
// or once the throttle interval has passed.
func (m *refModel) refreshIndicatives() {
	for _, id := range m.calls {
		in := m.instruments[id]
		a := &in.auction
		if m.uncrossPrice(in) != a.shown {
			a.pending = true
		}
		if a.pending && (a.shownAt == 0 || m.now >= a.shownAt+m.cfg.IndicativeIntervalNs) {
			m.publish(in)
		}
	}
}

// auctionTimers runs before each command (after GTD expiry): volatility
// auctions that are over uncross, and held-back indicatives are published.
func (m *refModel) auctionTimers() {
	for i := 0; i < len(m.calls); {
		in := m.instruments[m.calls[i]]
		a := &in.auction
		if a.endNs != 0 && m.now >= a.endNs && in.status == venue.TradingStatusVolatilityAuction {
			next := venue.TradingStatusOpen // a volatility auction, or the opening call's extension
			if a.phase == venue.TradingStatusClosingCall {
				next = venue.TradingStatusClosed
			}
			m.uncross(in, next)
			continue
		}
		if a.pending && m.now >= a.shownAt+m.cfg.IndicativeIntervalNs {
			m.publish(in)
		}
		i++
	}
}
