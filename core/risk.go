package core

import (
	"math"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Pre-trade risk (package documentation, "Risk").
//
// A risk subject is a session or an account listed in RiskConfig.Accounts:
// subjects 0 to SessionsMax−1 are the sessions, then the accounts in sorted
// order. An order belongs to its account's subject when the account is
// listed, else to its session's; the ClOrdID record keeps that subject
// (clOrdRecord.riskSubject) so that fills and cancels find it without a
// lookup. Each subject has its limits and its figures; each (subject,
// instrument) pair a riskCell with the position and the per-instrument
// limits. Cells are allocated at start for Config.InstrumentsMax
// instruments (stride cells per subject), so an instrument added while the
// venue runs already has its cells: an unlisted instrument's cells hold
// the subject's limits and no figures (riskState.freshCells), as a new
// instrument starts.
//
// Open figures count resting orders only: riskOpen adds an order when it
// joins a price level and takes it off when it leaves one, and a fill of a
// resting order takes the filled part off. Executed figures
// (position, the day's net bought notional, the loss) change at each fill.
//
// Loss: each subject values its position in an instrument at its own last
// fill price there (markTicks); the loss is what it paid net of what it
// received (costBase) minus the value of what it holds (heldValue). It is
// exact for closed positions and marks open ones at the subject's last
// trade, which needs no market-wide state and so stays O(1) per fill.
//
// An automatic kill (breach count or loss) is decided during the command
// but carried out at its end (riskRunPendingKills), so that a match in
// progress never sees its counterparties disappear. New orders and
// replaces breach limits or trade, an uncross trades, and a command that
// opens an instrument runs the stops a closing uncross elected: each looks
// for pending kills at its end (Apply, for the commands other than the
// order flow's).

// riskNone is a limit that is not set: every figure is at most it, so the
// checks need no test for "no limit". It is half the int64 range so that
// limit − figure cannot wrap for figures within ±2^62 (about 4.6e18
// ticks), which is how riskPasses tests all limits at once.
const riskNone = math.MaxInt64 / 2

// riskSubject holds one session's or account's limits (riskNone: none) and figures.
type riskSubject struct {
	maxOrderQty       int64
	maxOrderNotional  int64
	maxOpenOrders     int64
	maxOpenNotional   int64
	creditLimit       int64
	maxPosition       int64
	killAfterBreaches int64
	killAtLoss        int64

	openOrders      int64
	openNotional    int64 // gross: buys + sells, leaves × price
	openBuyNotional int64
	dayNetBought    int64 // executed buy notional − sell notional today
	costBase        int64 // what the day's loss is measured from
	heldValue       int64 // Σ position × markTicks over instruments
	breaches        int64 // risk rejects today

	killed      bool
	killPending bool
	pendingWhy  venue.RiskLimit
}

// riskCell is one subject's figures and limits in one instrument. The
// limits are the ones in force (the instrument's override, else the
// subject's), so that a check reads one field; overrides marks which are
// overrides, which a change of the subject's limit leaves alone.
type riskCell struct {
	position         int64 // executed, net: buys − sells
	openBuyQty       int64
	openSellQty      int64
	markTicks        int64
	maxOrderQty      int64
	maxOrderNotional int64
	maxPosition      int64
	overrides        uint8 // 1<<RiskLimit of each override
}

func riskBit(l venue.RiskLimit) uint8 { return 1 << l }

type riskState struct {
	on          bool // RiskConfig given: every figure is kept
	checks      bool // on, or some kill switch on: new orders and replaces go through the checks
	killed      int  // subjects with the kill switch on
	pending     int  // subjects whose automatic kill waits for the end of the command
	sessionsMax int
	stride      int // cells per subject: Config.InstrumentsMax (configured and added instruments)
	subjects    []riskSubject
	cells       []riskCell
	accounts    riskAccountTable
	names       [][venue.AccountLength]byte // account of each account subject
	lastPx      int64                       // the price of the last trade (riskAfterMatch)
}

func newRiskState(cfg *Config) riskState {
	r := riskState{sessionsMax: cfg.SessionsMax, stride: cfg.instrumentsMax()}
	n := cfg.SessionsMax
	var names []string
	if cfg.Risk != nil {
		names = sortedAccounts(cfg.Risk)
		n += len(names)
	}
	r.subjects = make([]riskSubject, n)
	if cfg.Risk == nil {
		return r
	}
	r.on, r.checks = true, true
	r.cells = make([]riskCell, n*r.stride)
	r.accounts = newRiskAccountTable(names, cfg.SessionsMax)
	r.names = make([][venue.AccountLength]byte, len(names))
	for i := 0; i < cfg.SessionsMax; i++ {
		l := &cfg.Risk.Sessions
		if o, ok := cfg.Risk.SessionOverrides[uint16(i)]; ok {
			l = &o
		}
		r.configure(i, l, cfg.Instruments)
	}
	for i, a := range names {
		copy(r.names[i][:], a)
		l := cfg.Risk.Accounts[a]
		r.configure(cfg.SessionsMax+i, &l, cfg.Instruments)
	}
	return r
}

// noneIfZero turns a configured 0 (no limit) into riskNone.
func noneIfZero(v int64) int64 {
	if v <= 0 {
		return riskNone
	}
	return v
}

// shown is a limit as events report it: 0 for none.
func shown(v int64) int64 {
	if v == riskNone {
		return 0
	}
	return v
}

func (r *riskState) configure(subject int, l *RiskLimits, instruments []InstrumentConfig) {
	s := &r.subjects[subject]
	s.maxOrderQty, s.maxOrderNotional = noneIfZero(l.MaxOrderQty), noneIfZero(l.MaxOrderNotional)
	s.maxOpenOrders, s.maxOpenNotional = noneIfZero(l.MaxOpenOrders), noneIfZero(l.MaxOpenNotional)
	s.creditLimit, s.maxPosition = noneIfZero(l.CreditLimit), noneIfZero(l.MaxPosition)
	s.killAfterBreaches, s.killAtLoss = noneIfZero(l.KillAfterBreaches), noneIfZero(l.KillAtLoss)
	r.freshCells(uint16(subject), 0)
	for ii := range instruments {
		c := &r.cells[subject*r.stride+ii]
		il, ok := l.Instruments[instruments[ii].ID]
		if !ok {
			continue
		}
		if il.MaxOrderQty > 0 {
			c.maxOrderQty, c.overrides = il.MaxOrderQty, c.overrides|riskBit(venue.RiskLimitMaxOrderQty)
		}
		if il.MaxOrderNotional > 0 {
			c.maxOrderNotional, c.overrides = il.MaxOrderNotional, c.overrides|riskBit(venue.RiskLimitMaxOrderNotional)
		}
		if il.MaxPosition > 0 {
			c.maxPosition, c.overrides = il.MaxPosition, c.overrides|riskBit(venue.RiskLimitMaxPosition)
		}
	}
}

// subjectOf is the subject of an order from session with this account.
func (r *riskState) subjectOf(session uint16, account *[venue.AccountLength]byte) uint16 {
	if len(r.accounts.subjects) == 0 || account[0] == 0 {
		return session
	}
	if s, ok := r.accounts.lookup(account); ok {
		return s
	}
	return session
}

func (r *riskState) scopeOf(subject uint16) venue.RiskScope {
	if int(subject) < r.sessionsMax {
		return venue.RiskScopeSession
	}
	return venue.RiskScopeAccount
}

func (r *riskState) cell(subject uint16, ii uint16) *riskCell {
	return &r.cells[int(subject)*r.stride+int(ii)]
}

// freshCell is the cell an instrument starts with: s's limits, no
// overrides, no figures.
func (s *riskSubject) freshCell() riskCell {
	return riskCell{maxOrderQty: s.maxOrderQty, maxOrderNotional: s.maxOrderNotional, maxPosition: s.maxPosition}
}

// freshInstrument makes every subject's cell of instrument ii fresh, as
// AddInstrument lists it.
func (r *riskState) freshInstrument(ii uint16) {
	if !r.on {
		return
	}
	for subj := range r.subjects {
		*r.cell(uint16(subj), ii) = r.subjects[subj].freshCell()
	}
}

// freshCells sets subject's cells of the instruments from index from on
// to what an instrument starts with: the subject's limits, no overrides,
// no figures.
func (r *riskState) freshCells(subject uint16, from int) {
	fresh := r.subjects[subject].freshCell()
	cells := r.cells[int(subject)*r.stride : (int(subject)+1)*r.stride]
	for i := from; i < len(cells); i++ {
		cells[i] = fresh
	}
}

// worstPosition is the absolute position a cell reaches if every open order
// of one side fills.
func (c *riskCell) worstPosition() int64 {
	return max(c.position+c.openBuyQty, c.openSellQty-c.position)
}

// countKilled adds n (±1) to the subjects whose kill switch is on.
func (r *riskState) countKilled(n int) {
	r.killed += n
	r.checks = r.on || r.killed > 0
}

// sold takes a sale's value off the day's net bought notional, which goes
// no lower than −RiskLimitMax: the credit check computes creditLimit −
// dayNetBought − open buys − notional, and a day's sales past 2^62 ticks
// made it wrap negative, so that every buy was refused on a credit limit
// that was not set. At the floor the check leaves the limit plus
// RiskLimitMax of credit, more than an order's notional can use. (Buys are
// checked against the credit limit, which keeps the figure within riskNone
// above; the loss is measured from costBase, which is not floored: it and
// heldValue wrap alike, so their difference stays exact.)
func (s *riskSubject) sold(value int64) {
	s.dayNetBought = max(s.dayNetBought-value, -RiskLimitMax)
}

// riskNotional values an order: qty at its riskPrice.
func riskNotional(in *instrument, side venue.Side, ordType venue.OrdType, priceTicks, qty int64) int64 {
	return riskPrice(in, side, ordType, priceTicks) * qty
}

// riskPrice is the price an order counts at in the checks and the open
// figures: its limit price, or for a market or stop (market) order, which
// has none, the far edge of the band as it is now (a buy at its high, a
// sell at its low), which bounds what it can trade at (a stop trades as a
// market order once elected). A band change values the waiting ones again
// (operatorSetBand), so that what an order added to the open figures is
// what it takes off.
func riskPrice(in *instrument, side venue.Side, ordType venue.OrdType, priceTicks int64) int64 {
	if marketLike(ordType) {
		priceTicks = in.bandLowTicks
		if side == venue.SideBuy {
			priceTicks = in.bandHighTicks
		}
	}
	return priceTicks
}

// riskPriceOf is order o's riskPrice.
func (m *Matcher) riskPriceOf(o *order) int64 {
	if !marketLike(o.ordType) {
		return o.priceTicks
	}
	return riskPrice(&m.instruments[o.instrument], o.side, o.ordType, 0)
}

// enterCheckedOrder is the end of applyNewOrder (and of newSpecialOrder)
// when risk checks apply (package documentation, "Risk"): the order is
// refused (RiskBreach and OrderRejected), or it enters as without risk
// with its subject written into the ClOrdID record that acceptNewOrder
// fills next (add leaves that field alone), and the automatic kills a
// breach or a fill tripped run at its end. The passing path calls nothing
// but the account lookup and compares each figure once; riskRefuseNew
// finds which limit failed. Apart from it the order path pays one test.
func (m *Matcher) enterCheckedOrder(c *newOrderCmd, ii uint16, in *instrument, h, at uint64) {
	r := &m.risk
	subj := c.sessionIdx
	if len(r.accounts.subjects) != 0 && c.account[0] != 0 {
		subj = r.subjectOf(c.sessionIdx, &c.account)
	}
	if r.killed > 0 && (r.subjects[subj].killed || r.subjects[c.sessionIdx].killed) {
		m.emitRiskBreach(c.sessionIdx, r.killedOf(subj, c.sessionIdx), venue.RiskLimitNone, in.id, 0, 0, 0, &c.account)
		m.emitRejected(c, venue.RejectReasonKillSwitchActive)
		return
	}
	if r.on {
		s := &r.subjects[subj]
		cl := &r.cells[int(subj)*r.stride+int(ii)]
		notional := riskNotional(in, c.side, c.ordType, c.priceTicks, c.qty)
		// Each term is a limit's headroom after this order; one is negative
		// when the order breaches it (riskNone keeps them from wrapping).
		headroom := (cl.maxOrderQty - c.qty) | (cl.maxOrderNotional - notional)
		if riskHeld(c.ordType, c.tif, in.status) {
			headroom |= (s.maxOpenOrders - 1 - s.openOrders) | (s.maxOpenNotional - s.openNotional - notional)
		}
		if c.side == venue.SideBuy {
			headroom |= (s.creditLimit - s.dayNetBought - s.openBuyNotional - notional) | (cl.maxPosition - cl.position - cl.openBuyQty - c.qty)
		} else {
			headroom |= cl.maxPosition - cl.openSellQty + cl.position - c.qty
		}
		if headroom < 0 {
			m.riskRefuseNew(c, subj, ii, in)
			m.emitRejected(c, venue.RejectReasonRiskLimitExceeded)
			if r.pending > 0 {
				m.riskRunPendingKills()
			}
			return
		}
	}
	m.index.recs[m.index.recsUsed].riskSubject = subj // validated: the table has room
	oi := m.acceptNewOrder(c, ii, h, at)
	if c.ordType >= venue.OrdTypeStop || c.stopPxTicks|c.maxFloorQty != 0 {
		m.enterSpecialOrder(in, oi, c)
	} else {
		m.executeNewOrder(in, oi)
		if m.stopsWaiting != 0 {
			m.runStops(in)
		}
	}
	if r.pending > 0 {
		m.riskRunPendingKills()
	}
}

// riskHeld reports whether a new order counts against the open-order
// limits: one that may rest, every stop, which waits until elected, and a
// market order entered in a call, which waits for the uncross (a call
// refuses IOC and FOK) and counts in the open figures meanwhile
// (queueMarket), so that market orders cannot pile up past the limits.
func riskHeld(ordType venue.OrdType, tif venue.TimeInForce, status venue.TradingStatus) bool {
	return canRest(ordType, tif) || IsStop(ordType) || (status != venue.TradingStatusOpen && IsCall(status))
}

// riskRefuseQueued checks market order oi against its subject's open-order
// limits as it is about to wait for an uncross, and when it breaches one
// cancels it (CancelReasonRiskLimit) after a RiskBreach and reports true.
// An order entered in a call was checked so at entry (riskHeld) and passes
// again; one entered in continuous trading was not, as it could not wait
// then, and a volatility interruption its own trades started would
// otherwise leave its remainder waiting past the limits. An elected stop
// counted as open while it waited and is not checked again (core doc,
// "Risk").
func (m *Matcher) riskRefuseQueued(oi orderIdx) bool {
	o := &m.pool.orders[oi]
	subj := m.index.recs[o.rec].riskSubject
	s := &m.risk.subjects[subj]
	notional := o.leavesQty * m.riskPriceOf(o)
	var which venue.RiskLimit
	var limit, current, request int64
	switch {
	case s.openOrders >= s.maxOpenOrders:
		which, limit, current, request = venue.RiskLimitMaxOpenOrders, s.maxOpenOrders, s.openOrders, 1
	case s.openNotional+notional > s.maxOpenNotional:
		which, limit, current, request = venue.RiskLimitMaxOpenNotional, s.maxOpenNotional, s.openNotional, notional
	default:
		return false
	}
	m.riskBreach(o.sessionIdx, subj, which, m.instruments[o.instrument].id, limit, current, request, &o.account)
	m.cancelOrderQty(oi, venue.CancelReasonRiskLimit, venue.OrdStatusCancelled, &m.index.recs[o.rec].key, nil)
	return true
}

// riskRefuseNew reports the first limit a new order breaches, in the
// order of the package documentation.
func (m *Matcher) riskRefuseNew(c *newOrderCmd, subj, ii uint16, in *instrument) {
	s := &m.risk.subjects[subj]
	cl := m.risk.cell(subj, ii)
	notional := riskNotional(in, c.side, c.ordType, c.priceTicks, c.qty)
	rests := riskHeld(c.ordType, c.tif, in.status)
	position := cl.position + cl.openBuyQty
	if c.side == venue.SideSell {
		position = cl.openSellQty - cl.position
	}
	credit := s.dayNetBought + s.openBuyNotional
	which, limit, current, request := venue.RiskLimitMaxPosition, cl.maxPosition, position, c.qty
	switch {
	case c.qty > cl.maxOrderQty:
		which, limit, current, request = venue.RiskLimitMaxOrderQty, cl.maxOrderQty, 0, c.qty
	case notional > cl.maxOrderNotional:
		which, limit, current, request = venue.RiskLimitMaxOrderNotional, cl.maxOrderNotional, 0, notional
	case rests && s.openOrders >= s.maxOpenOrders:
		which, limit, current, request = venue.RiskLimitMaxOpenOrders, s.maxOpenOrders, s.openOrders, 1
	case rests && s.openNotional+notional > s.maxOpenNotional:
		which, limit, current, request = venue.RiskLimitMaxOpenNotional, s.maxOpenNotional, s.openNotional, notional
	case c.side == venue.SideBuy && credit+notional > s.creditLimit:
		which, limit, current, request = venue.RiskLimitCreditLimit, s.creditLimit, credit, notional
	}
	m.riskBreach(c.sessionIdx, subj, which, in.id, limit, current, request, &c.account)
}

// killedOf is the subject whose kill switch refuses an order of session
// entered for subj: subj's own when it is on, else the session's (an
// account's order from a killed session). The refusal names it (README
// "Risk limits"), so that an operator resets the switch that is on.
func (r *riskState) killedOf(subj, session uint16) uint16 {
	if r.subjects[subj].killed {
		return subj
	}
	return session
}

// riskCheckReplace checks a replace of live order o on its delta: a figure
// the replace does not increase always passes, so an order over a lowered
// limit can still be reduced.
func (m *Matcher) riskCheckReplace(c *replaceCmd, o *order) venue.RejectReason {
	r := &m.risk
	subj := m.index.recs[o.rec].riskSubject
	if !r.on {
		subj = r.subjectOf(o.sessionIdx, &o.account)
	}
	s := &r.subjects[subj]
	in := m.instrumentOf(o)
	if s.killed || r.subjects[o.sessionIdx].killed {
		m.emitRiskBreach(c.sessionIdx, r.killedOf(subj, o.sessionIdx), venue.RiskLimitNone, in.id, 0, 0, 0, &o.account)
		return venue.RejectReasonKillSwitchActive
	}
	if !r.on || c.qty <= o.cumQty {
		return venue.RejectReasonNone
	}
	cl := r.cell(subj, o.instrument)
	oldPx, newPx := m.riskPriceOf(o), riskPrice(in, o.side, c.ordType, c.priceTicks)
	oldNotional, newNotional := oldPx*o.qty, newPx*c.qty
	dLeaves := c.qty - o.cumQty - o.leavesQty
	dOpen := newPx*(c.qty-o.cumQty) - oldPx*o.leavesQty
	position := cl.position + cl.openBuyQty
	if o.side == venue.SideSell {
		position = cl.openSellQty - cl.position
	}
	credit := s.dayNetBought + s.openBuyNotional
	var which venue.RiskLimit
	var limit, current, request int64
	switch {
	case c.qty > o.qty && c.qty > cl.maxOrderQty:
		which, limit, request = venue.RiskLimitMaxOrderQty, cl.maxOrderQty, c.qty
	case newNotional > oldNotional && newNotional > cl.maxOrderNotional:
		which, limit, request = venue.RiskLimitMaxOrderNotional, cl.maxOrderNotional, newNotional
	case dOpen > 0 && s.openNotional+dOpen > s.maxOpenNotional:
		which, limit, current, request = venue.RiskLimitMaxOpenNotional, s.maxOpenNotional, s.openNotional, dOpen
	case dOpen > 0 && o.side == venue.SideBuy && credit+dOpen > s.creditLimit:
		which, limit, current, request = venue.RiskLimitCreditLimit, s.creditLimit, credit, dOpen
	case dLeaves > 0 && position+dLeaves > cl.maxPosition:
		which, limit, current, request = venue.RiskLimitMaxPosition, cl.maxPosition, position, dLeaves
	default:
		return venue.RejectReasonNone
	}
	m.riskBreach(c.sessionIdx, subj, which, in.id, limit, current, request, &o.account)
	return venue.RejectReasonRiskLimitExceeded
}

// riskBreach reports a breach and counts it towards KillAfterBreaches.
func (m *Matcher) riskBreach(session, subj uint16, which venue.RiskLimit, instrumentID uint32, limit, current, request int64,
	account *[venue.AccountLength]byte) {
	m.emitRiskBreach(session, subj, which, instrumentID, limit, current, request, account)
	s := &m.risk.subjects[subj]
	s.breaches++
	if s.breaches >= s.killAfterBreaches {
		m.riskKillLater(subj, venue.RiskLimitKillAfterBreaches)
	}
}

func (m *Matcher) riskKillLater(subj uint16, why venue.RiskLimit) {
	s := &m.risk.subjects[subj]
	if s.killed || s.killPending {
		return
	}
	s.killPending, s.pendingWhy = true, why
	m.risk.pending++
}

// riskOpen adds count orders and leaves (both may be negative) of resting
// order o to its subject's open figures at its limit price: +1 and its
// leaves when it joins a price level, −1 and its leaves when it leaves one,
// 0 and the filled quantity when it trades. Callers test m.risk.on first, so
// that without risk the order path pays one test per call site.
func (m *Matcher) riskOpen(o *order, count, leaves int64) {
	m.riskOpenAt(o, count, leaves, o.priceTicks)
}

// riskOpenWaiting is riskOpen for a waiting order (a stop, a market order
// waiting for an uncross), which counts at its riskPriceOf: one without a
// limit price at the band's far edge. Apart from riskOpen so that the book's
// path keeps its one multiplication.
func (m *Matcher) riskOpenWaiting(o *order, count, leaves int64) {
	m.riskOpenAt(o, count, leaves, m.riskPriceOf(o))
}

func (m *Matcher) riskOpenAt(o *order, count, leaves, px int64) {
	subj := m.index.recs[o.rec].riskSubject
	s := &m.risk.subjects[subj]
	n := leaves * px
	s.openOrders += count
	s.openNotional += n
	cl := &m.risk.cells[int(subj)*m.risk.stride+int(o.instrument)]
	if o.side == venue.SideBuy {
		s.openBuyNotional += n
		cl.openBuyQty += leaves
	} else {
		cl.openSellQty += leaves
	}
}

// riskTrade accounts for a trade of qty at px between aggressor o and
// resting r: r's filled part is no longer open, and both execute.
// riskTradeResting accounts for a trade of qty at px by resting order r: its
// filled part is no longer open, and it executes. The aggressor's side is
// accounted once per match (riskAfterMatch), from its cumulative figures.
//
// It is riskOpen and riskExecute in one, for the fill is the hot path with
// limits on. When the fill leaves r with no leaves, r stops counting as an
// open order here, and removeOrder, which then finishes it, skips it (an
// order leaves the book with no leaves only after a full fill: cancels and
// replaces take it off the book before they change its leaves).
func (m *Matcher) riskTradeResting(r *order, px, qty int64) {
	m.risk.lastPx = px
	subj := m.index.recs[r.rec].riskSubject
	s := &m.risk.subjects[subj]
	cl := &m.risk.cells[int(subj)*m.risk.stride+int(r.instrument)]
	if r.leavesQty == 0 {
		s.openOrders--
	}
	open := qty * r.priceTicks
	if marketLike(r.ordType) { // a market order filled in an uncross
		open = qty * m.riskPriceOf(r)
	}
	s.openNotional -= open
	value := px * qty
	position := cl.position
	newPosition := position - qty
	if r.side == venue.SideBuy {
		s.openBuyNotional -= open
		cl.openBuyQty -= qty
		newPosition = position + qty
		s.dayNetBought += value
		s.costBase += value
	} else {
		cl.openSellQty -= qty
		s.sold(value)
		s.costBase -= value
	}
	s.heldValue += newPosition*px - position*cl.markTicks
	cl.position = newPosition
	cl.markTicks = px
	if s.costBase-s.heldValue >= s.killAtLoss {
		m.riskKillLater(subj, venue.RiskLimitKillAtLoss)
	}
}

// riskAfterMatch accounts for what aggressor o traded in a match that
// started with cumQty and cumNotionalTicks before: the same figures as one
// riskExecute per fill (the mark is the last trade's price), at the cost of one.
func (m *Matcher) riskAfterMatch(o *order, cumQtyBefore, cumNotionalBefore int64) {
	if qty := o.cumQty - cumQtyBefore; qty > 0 {
		m.riskExecute(o, m.risk.lastPx, qty, o.cumNotionalTicks-cumNotionalBefore)
	}
}

// riskExecute accounts for qty of order o executed for value (price ticks ×
// quantity), the last part at px.
func (m *Matcher) riskExecute(o *order, px, qty, value int64) {
	subj := m.index.recs[o.rec].riskSubject
	s := &m.risk.subjects[subj]
	cl := &m.risk.cells[int(subj)*m.risk.stride+int(o.instrument)]
	if o.side == venue.SideSell {
		qty, value = -qty, -value
	}
	position := cl.position
	s.heldValue += (position+qty)*px - position*cl.markTicks
	cl.position = position + qty
	cl.markTicks = px
	if value < 0 {
		s.sold(-value)
	} else {
		s.dayNetBought += value
	}
	s.costBase += value
	if s.costBase-s.heldValue >= s.killAtLoss {
		m.riskKillLater(subj, venue.RiskLimitKillAtLoss)
	}
}

// riskRunPendingKills carries out the automatic kills decided during the
// command, in subject order.
func (m *Matcher) riskRunPendingKills() {
	for i := range m.risk.subjects {
		s := &m.risk.subjects[i]
		if !s.killPending {
			continue
		}
		s.killPending = false
		m.risk.pending--
		n := m.riskKill(uint16(i))
		m.emitRiskControlResult(uint16(i), venue.RiskActionAutoKill, venue.RiskResultApplied, s.pendingWhy, 0, 0, n)
		if m.risk.pending == 0 {
			return
		}
	}
}

// riskKill turns subject's kill switch on and cancels its open orders: a
// session's are every order of the session, an account's every order
// whose subject it is. It returns how many it cancelled.
func (m *Matcher) riskKill(subj uint16) uint32 {
	s := &m.risk.subjects[subj]
	if !s.killed {
		s.killed = true
		m.risk.countKilled(1)
	}
	var n uint32
	if int(subj) < m.risk.sessionsMax {
		for oi := m.sessions[subj].head; oi != noOrder; {
			next := m.pool.orders[oi].lists[listSession].next
			m.cancelQuiet(oi, venue.CancelReasonKillSwitch, venue.OrdStatusCancelled)
			n++
			oi = next
		}
		return n
	}
	for oi := m.all.head; oi != noOrder; {
		o := &m.pool.orders[oi]
		next := o.lists[listAll].next
		if m.index.recs[o.rec].riskSubject == subj {
			m.cancelQuiet(oi, venue.CancelReasonKillSwitch, venue.OrdStatusCancelled)
			n++
		}
		oi = next
	}
	return n
}

// riskEndOfDay starts the day's figures again: net bought notional,
// breaches, and the loss (measured from the positions' value now).
func (m *Matcher) riskEndOfDay() {
	for i := range m.risk.subjects {
		s := &m.risk.subjects[i]
		s.dayNetBought, s.breaches = 0, 0
		s.costBase = s.heldValue
	}
}
