package core

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"slices"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The reference model's pre-trade risk, written from the package
// documentation ("Risk") for obviousness: open figures are recomputed from
// the live orders at each check, positions and marks are plain maps, the
// loss is the day's net bought notional minus the change in the value of
// the positions (at each subject's own last trade price) since EndOfDay.

// refLimits are one subject's limits; 0 is none.
type refLimits struct {
	orderQty, orderNotional, openOrders, openNotional, credit, position, killBreaches, killLoss int64
	instr                                                                                       map[uint32]*[3]int64 // qty, notional, position overrides
}

type refRisk struct {
	on       bool
	sessions int
	accounts []string // sorted: subject sessions+i
	limits   []refLimits
	killed   []bool
	pending  []bool
	why      []venue.RiskLimit
	bought   []int64 // executed buy notional net of sells, today
	credit   []int64 // bought, with sales taken off no lower than −RiskLimitMax: the credit figure
	eodValue []int64 // the positions' value at the last EndOfDay
	breaches []int64
	pos      []map[uint32]int64
	mark     []map[uint32]int64
	// The aggressor's trades in the current match, accounted when it ends.
	aggQty, aggValue, aggPx int64
}

func newRefRisk(cfg Config) *refRisk {
	r := &refRisk{sessions: cfg.SessionsMax}
	n := cfg.SessionsMax
	if cfg.Risk != nil {
		r.on = true
		for a := range cfg.Risk.Accounts {
			r.accounts = append(r.accounts, a)
		}
		slices.Sort(r.accounts)
		n += len(r.accounts)
	}
	r.limits = make([]refLimits, n)
	r.killed, r.pending, r.why = make([]bool, n), make([]bool, n), make([]venue.RiskLimit, n)
	r.bought, r.credit, r.eodValue, r.breaches = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	r.pos, r.mark = make([]map[uint32]int64, n), make([]map[uint32]int64, n)
	for i := range n {
		r.pos[i], r.mark[i] = map[uint32]int64{}, map[uint32]int64{}
		if !r.on {
			continue
		}
		l := cfg.Risk.Sessions
		if i < cfg.SessionsMax {
			if o, ok := cfg.Risk.SessionOverrides[uint16(i)]; ok {
				l = o
			}
		} else {
			l = cfg.Risk.Accounts[r.accounts[i-cfg.SessionsMax]]
		}
		r.limits[i] = refLimits{orderQty: l.MaxOrderQty, orderNotional: l.MaxOrderNotional, openOrders: l.MaxOpenOrders,
			openNotional: l.MaxOpenNotional, credit: l.CreditLimit, position: l.MaxPosition, killBreaches: l.KillAfterBreaches,
			killLoss: l.KillAtLoss, instr: map[uint32]*[3]int64{}}
		for id, il := range l.Instruments {
			r.limits[i].instr[id] = &[3]int64{il.MaxOrderQty, il.MaxOrderNotional, il.MaxPosition}
		}
	}
	return r
}

// subject of an order: its account's when listed, else its session's.
// killedOf is the subject whose kill switch refuses an order of session
// entered for subj: subj's own when it is on, else the session's.
func (r *refRisk) killedOf(subj, session int) int {
	if r.killed[subj] {
		return subj
	}
	return session
}

func (r *refRisk) subject(session uint16, account string) int {
	if i, ok := slices.BinarySearch(r.accounts, account); ok && r.on {
		return r.sessions + i
	}
	return int(session)
}

func (r *refRisk) isSession(subj int) bool { return subj < r.sessions }

// limit is the limit in force for an instrument: k is 0 (qty), 1 (notional) or 2 (position).
func (r *refRisk) limit(subj int, instrument uint32, k int) int64 {
	if o := r.limits[subj].instr[instrument]; o != nil && o[k] != 0 {
		return o[k]
	}
	l := &r.limits[subj]
	return [3]int64{l.orderQty, l.orderNotional, l.position}[k]
}

// refOpen are a subject's figures recomputed from the live orders.
type refOpen struct {
	orders, notional, buyNotional int64
	buyQty, sellQty               map[uint32]int64
}

// riskPx is the price an order counts at in the risk figures: its limit
// price, or for a market or stop (market) order, which has none, the far
// edge of its instrument's band as it is now (a buy at the high, a sell at
// the low), which bounds what it can trade at.
func (m *refModel) riskPx(instrument uint32, side venue.Side, ordType venue.OrdType, price int64) int64 {
	if ordType != venue.OrdTypeMarket && ordType != venue.OrdTypeStop {
		return price
	}
	if in := m.instruments[instrument]; side == venue.SideBuy {
		return in.high
	} else {
		return in.low
	}
}

func (m *refModel) riskOpen(subj int) refOpen {
	f := refOpen{buyQty: map[uint32]int64{}, sellQty: map[uint32]int64{}}
	for _, o := range m.live {
		if m.risk.subject(o.session, o.account) != subj {
			continue
		}
		f.orders++
		px := m.riskPx(o.instrument, o.side, o.ordType, o.price)
		f.notional += o.leaves * px
		if o.side == venue.SideBuy {
			f.buyNotional += o.leaves * px
			f.buyQty[o.instrument] += o.leaves
		} else {
			f.sellQty[o.instrument] += o.leaves
		}
	}
	return f
}

// worstPosition for side: buys if every open buy fills, or the short if every open sell does.
func (m *refModel) riskPosition(subj int, f *refOpen, instrument uint32, side venue.Side) int64 {
	p := m.risk.pos[subj][instrument]
	if side == venue.SideBuy {
		return p + f.buyQty[instrument]
	}
	return f.sellQty[instrument] - p
}

func (m *refModel) riskLoss(subj int) int64 {
	var value int64
	for id, p := range m.risk.pos[subj] {
		value += p * m.risk.mark[subj][id]
	}
	return m.risk.bought[subj] - (value - m.risk.eodValue[subj])
}

func (m *refModel) riskBreachEvent(session uint16, subj int, which venue.RiskLimit, instrument uint32, limit, current, request int64, account string) {
	var e venue.RiskBreach
	m.begin(&e)
	e.SetSessionIdx(session)
	e.SetScope(venue.RiskScopeAccount)
	if m.risk.isSession(subj) {
		e.SetScope(venue.RiskScopeSession)
	}
	e.SetLimit(which)
	e.SetInstrumentID(instrument)
	e.SetLimitValue(limit)
	e.SetCurrentValue(current)
	e.SetRequestValue(request)
	_ = e.SetAccountString(account)
	m.sink.Commit()
}

// riskBreach reports a breach, counts it and may decide an automatic kill.
func (m *refModel) riskBreach(session uint16, subj int, which venue.RiskLimit, instrument uint32, limit, current, request int64, account string) {
	m.riskBreachEvent(session, subj, which, instrument, limit, current, request, account)
	m.risk.breaches[subj]++
	if k := m.risk.limits[subj].killBreaches; k != 0 && m.risk.breaches[subj] >= k {
		m.riskKillLater(subj, venue.RiskLimitKillAfterBreaches)
	}
}

func (m *refModel) riskKillLater(subj int, why venue.RiskLimit) {
	if !m.risk.killed[subj] && !m.risk.pending[subj] {
		m.risk.pending[subj], m.risk.why[subj] = true, why
	}
}

// riskRefusesNew applies the risk checks to a new order that passed the
// others, and reports a refusal (RiskBreach, OrderRejected).
func (m *refModel) riskRefusesNew(c *venue.NewOrder, in *refInstrument) bool {
	r := m.risk
	account := string(c.Account())
	subj := r.subject(c.SessionIdx(), account)
	if r.killed[subj] || r.killed[c.SessionIdx()] {
		m.riskBreachEvent(c.SessionIdx(), r.killedOf(subj, int(c.SessionIdx())), venue.RiskLimitNone, in.cfg.ID, 0, 0, 0, account)
		m.reject(c, venue.RejectReasonKillSwitchActive)
		return true
	}
	if !r.on {
		return false
	}
	notional := m.riskPx(in.cfg.ID, c.Side(), c.OrdType(), c.PriceTicks()) * c.Qty()
	// Held: it may rest, or it is a stop, which waits (and counts as open)
	// until elected, or it is entered in a call, where a market order waits
	// for the uncross (and counts as open).
	rests := (c.OrdType() == venue.OrdTypeLimit || c.OrdType() == venue.OrdTypeStopLimit) &&
		c.TimeInForce() != venue.TimeInForceIOC && c.TimeInForce() != venue.TimeInForceFOK ||
		c.OrdType() == venue.OrdTypeStop || c.OrdType() == venue.OrdTypeStopLimit || refIsCall(in.status)
	f := m.riskOpen(subj)
	l := &r.limits[subj]
	credit := r.credit[subj] + f.buyNotional
	position := m.riskPosition(subj, &f, in.cfg.ID, c.Side())
	exceeds := func(limit, value int64) bool { return limit != 0 && value > limit }
	var which venue.RiskLimit
	var limit, current, request int64
	switch {
	case exceeds(r.limit(subj, in.cfg.ID, 0), c.Qty()):
		which, limit, request = venue.RiskLimitMaxOrderQty, r.limit(subj, in.cfg.ID, 0), c.Qty()
	case exceeds(r.limit(subj, in.cfg.ID, 1), notional):
		which, limit, request = venue.RiskLimitMaxOrderNotional, r.limit(subj, in.cfg.ID, 1), notional
	case rests && exceeds(l.openOrders, f.orders+1):
		which, limit, current, request = venue.RiskLimitMaxOpenOrders, l.openOrders, f.orders, 1
	case rests && exceeds(l.openNotional, f.notional+notional):
		which, limit, current, request = venue.RiskLimitMaxOpenNotional, l.openNotional, f.notional, notional
	case c.Side() == venue.SideBuy && exceeds(l.credit, credit+notional):
		which, limit, current, request = venue.RiskLimitCreditLimit, l.credit, credit, notional
	case exceeds(r.limit(subj, in.cfg.ID, 2), position+c.Qty()):
		which, limit, current, request = venue.RiskLimitMaxPosition, r.limit(subj, in.cfg.ID, 2), position, c.Qty()
	default:
		return false
	}
	m.riskBreach(c.SessionIdx(), subj, which, in.cfg.ID, limit, current, request, account)
	m.reject(c, venue.RejectReasonRiskLimitExceeded)
	return true
}

// riskReplaceReason checks a replace of live order o on its delta.
// riskRefusesQueued: a market order about to wait for an uncross counts as
// open, so its subject's open-order limits must hold with it (at entry in a
// call they were checked and hold again; a market order entered in
// continuous trading whose trades started a volatility interruption was not
// checked); when they do not it is cancelled after a RiskBreach.
func (m *refModel) riskRefusesQueued(o *refOrder) bool {
	r := m.risk
	if !r.on {
		return false
	}
	subj := r.subject(o.session, o.account)
	f := m.riskOpen(subj)
	l := &r.limits[subj]
	notional := o.leaves * m.riskPx(o.instrument, o.side, o.ordType, o.price)
	exceeds := func(limit, value int64) bool { return limit != 0 && value > limit }
	var which venue.RiskLimit
	var limit, current, request int64
	switch {
	case exceeds(l.openOrders, f.orders+1):
		which, limit, current, request = venue.RiskLimitMaxOpenOrders, l.openOrders, f.orders, 1
	case exceeds(l.openNotional, f.notional+notional):
		which, limit, current, request = venue.RiskLimitMaxOpenNotional, l.openNotional, f.notional, notional
	default:
		return false
	}
	m.riskBreach(o.session, subj, which, o.instrument, limit, current, request, o.account)
	m.finishCancel(o, venue.CancelReasonRiskLimit, venue.OrdStatusCancelled, o.clOrdID, "")
	return true
}

func (m *refModel) riskReplaceReason(c *venue.ReplaceOrder, o *refOrder) venue.RejectReason {
	r := m.risk
	subj := r.subject(o.session, o.account)
	if r.killed[subj] || r.killed[o.session] {
		m.riskBreachEvent(c.SessionIdx(), r.killedOf(subj, int(o.session)), venue.RiskLimitNone, o.instrument, 0, 0, 0, o.account)
		return venue.RejectReasonKillSwitchActive
	}
	if !r.on || c.Qty() <= o.cum {
		return venue.RejectReasonNone
	}
	f := m.riskOpen(subj)
	l := &r.limits[subj]
	newLeaves := c.Qty() - o.cum
	dLeaves := newLeaves - o.leaves
	oldPx, newPx := m.riskPx(o.instrument, o.side, o.ordType, o.price), m.riskPx(o.instrument, o.side, c.OrdType(), c.PriceTicks())
	dOpen := newPx*newLeaves - oldPx*o.leaves
	oldNotional, newNotional := oldPx*o.qty, newPx*c.Qty()
	credit := r.credit[subj] + f.buyNotional
	position := m.riskPosition(subj, &f, o.instrument, o.side)
	exceeds := func(limit, value int64) bool { return limit != 0 && value > limit }
	var which venue.RiskLimit
	var limit, current, request int64
	switch {
	case c.Qty() > o.qty && exceeds(r.limit(subj, o.instrument, 0), c.Qty()):
		which, limit, request = venue.RiskLimitMaxOrderQty, r.limit(subj, o.instrument, 0), c.Qty()
	case newNotional > oldNotional && exceeds(r.limit(subj, o.instrument, 1), newNotional):
		which, limit, request = venue.RiskLimitMaxOrderNotional, r.limit(subj, o.instrument, 1), newNotional
	case dOpen > 0 && exceeds(l.openNotional, f.notional+dOpen):
		which, limit, current, request = venue.RiskLimitMaxOpenNotional, l.openNotional, f.notional, dOpen
	case dOpen > 0 && o.side == venue.SideBuy && exceeds(l.credit, credit+dOpen):
		which, limit, current, request = venue.RiskLimitCreditLimit, l.credit, credit, dOpen
	case dLeaves > 0 && exceeds(r.limit(subj, o.instrument, 2), position+dLeaves):
		which, limit, current, request = venue.RiskLimitMaxPosition, r.limit(subj, o.instrument, 2), position, dLeaves
	default:
		return venue.RejectReasonNone
	}
	m.riskBreach(c.SessionIdx(), subj, which, o.instrument, limit, current, request, o.account)
	return venue.RejectReasonRiskLimitExceeded
}

// riskExecute books qty of order o executed for value, the last part at px.
func (m *refModel) riskExecute(o *refOrder, qty, value, px int64) {
	subj := m.risk.subject(o.session, o.account)
	if o.side == venue.SideSell {
		qty, value = -qty, -value
	}
	m.risk.pos[subj][o.instrument] += qty
	m.risk.mark[subj][o.instrument] = px
	m.risk.bought[subj] += value
	if value < 0 {
		m.risk.credit[subj] = max(m.risk.credit[subj]+value, -RiskLimitMax)
	} else {
		m.risk.credit[subj] += value
	}
	if k := m.risk.limits[subj].killLoss; k != 0 && m.riskLoss(subj) >= k {
		m.riskKillLater(subj, venue.RiskLimitKillAtLoss)
	}
}

// riskTraded books one trade: the resting order's side now, the
// aggressor's when its match ends.
func (m *refModel) riskTraded(r *refOrder, qty, px int64) {
	if !m.risk.on {
		return
	}
	m.riskExecute(r, qty, qty*px, px)
	m.risk.aggQty += qty
	m.risk.aggValue += qty * px
	m.risk.aggPx = px
}

func (m *refModel) riskMatchEnded(o *refOrder) {
	if m.risk.on && m.risk.aggQty > 0 {
		m.riskExecute(o, m.risk.aggQty, m.risk.aggValue, m.risk.aggPx)
	}
	m.risk.aggQty, m.risk.aggValue = 0, 0
}

// riskKill turns a kill switch on and cancels the subject's live orders.
func (m *refModel) riskKill(subj int) uint32 {
	m.risk.killed[subj] = true
	var n uint32
	for _, o := range m.liveByOrderID() {
		if (m.risk.isSession(subj) && int(o.session) == subj) || (!m.risk.isSession(subj) && m.risk.subject(o.session, o.account) == subj) {
			m.cancelLive(o, venue.CancelReasonKillSwitch, venue.OrdStatusCancelled, o.clOrdID, "")
			n++
		}
	}
	return n
}

func (m *refModel) riskResult(session uint16, scope venue.RiskScope, account string, action venue.RiskAction, result venue.RiskResult,
	which venue.RiskLimit, instrument uint32, value int64, cancelled uint32) {
	var e venue.RiskControlResult
	m.begin(&e)
	e.SetSessionIdx(session)
	e.SetScope(scope)
	e.SetAction(action)
	e.SetResult(result)
	e.SetLimit(which)
	e.SetInstrumentID(instrument)
	e.SetValue(value)
	e.SetCancelledCount(cancelled)
	_ = e.SetAccountString(account)
	m.sink.Commit()
}

// riskEndOfCommand carries out the automatic kills decided during the command.
func (m *refModel) riskEndOfCommand() {
	for subj := range m.risk.pending {
		if !m.risk.pending[subj] {
			continue
		}
		m.risk.pending[subj] = false
		n := m.riskKill(subj)
		session, scope, account := uint16(subj), venue.RiskScopeSession, ""
		if !m.risk.isSession(subj) {
			session, scope, account = 0, venue.RiskScopeAccount, m.risk.accounts[subj-m.risk.sessions]
		}
		m.riskResult(session, scope, account, venue.RiskActionAutoKill, venue.RiskResultApplied, m.risk.why[subj], 0, 0, n)
	}
}

// riskAddressed resolves the session or account a command names.
func (m *refModel) riskAddressed(scope venue.RiskScope, session uint16, account string) (int, venue.RiskResult) {
	switch scope {
	case venue.RiskScopeSession:
		if int(session) >= m.risk.sessions {
			return 0, venue.RiskResultUnknownSession
		}
		return int(session), venue.RiskResultApplied
	case venue.RiskScopeAccount:
		if i, ok := slices.BinarySearch(m.risk.accounts, account); ok {
			return m.risk.sessions + i, venue.RiskResultApplied
		}
		return 0, venue.RiskResultUnknownAccount
	}
	return 0, venue.RiskResultInvalidAction
}

func (m *refModel) riskSetLimit(c *venue.RiskSetLimit) {
	account := string(c.Account())
	subj, result := m.riskAddressed(c.Scope(), c.SessionIdx(), account)
	value := c.Value()
	var figure int64
	if result == venue.RiskResultApplied {
		result, figure = m.riskChangeLimit(subj, c.Limit(), c.InstrumentID(), value)
	}
	if result != venue.RiskResultApplied {
		value = figure
	}
	m.riskResult(c.SessionIdx(), c.Scope(), account, venue.RiskActionSetLimit, result, c.Limit(), c.InstrumentID(), value, 0)
}

func (m *refModel) riskChangeLimit(subj int, which venue.RiskLimit, instrument uint32, value int64) (venue.RiskResult, int64) {
	r := m.risk
	if !r.on {
		return venue.RiskResultNotEnabled, 0
	}
	if value <= 0 || value > RiskLimitMax+1 || which == venue.RiskLimitNone || which > venue.RiskLimitKillAtLoss {
		return venue.RiskResultInvalidValue, 0
	}
	// One past the largest limit removes the limit (0 here: none, or for
	// an instrument, the subject's limit in force).
	remove := value == RiskLimitMax+1
	k := map[venue.RiskLimit]int{venue.RiskLimitMaxOrderQty: 0, venue.RiskLimitMaxOrderNotional: 1, venue.RiskLimitMaxPosition: 2}
	f := m.riskOpen(subj)
	worst := func(id uint32) int64 {
		p := r.pos[subj][id]
		return max(p+f.buyQty[id], f.sellQty[id]-p)
	}
	l := &r.limits[subj]
	if instrument != 0 {
		if _, ok := m.instruments[instrument]; !ok {
			return venue.RiskResultUnknownInstrument, 0
		}
		ki, ok := k[which]
		if !ok {
			return venue.RiskResultNotPerInstrument, 0
		}
		if remove {
			value = [3]int64{l.orderQty, l.orderNotional, l.position}[ki]
		}
		if w := worst(instrument); which == venue.RiskLimitMaxPosition && value != 0 && w > value {
			return venue.RiskResultWouldBreach, w
		}
		if l.instr[instrument] == nil {
			l.instr[instrument] = &[3]int64{}
		}
		l.instr[instrument][ki] = value
		if remove {
			l.instr[instrument][ki] = 0
		}
		return venue.RiskResultApplied, 0
	}
	if remove {
		value = 0
	}
	var figure int64
	switch which {
	case venue.RiskLimitMaxOpenOrders:
		figure = f.orders
	case venue.RiskLimitMaxOpenNotional:
		figure = f.notional
	case venue.RiskLimitCreditLimit:
		figure = r.credit[subj] + f.buyNotional
	case venue.RiskLimitKillAfterBreaches:
		if value != 0 && r.breaches[subj] >= value {
			return venue.RiskResultWouldBreach, r.breaches[subj]
		}
	case venue.RiskLimitKillAtLoss:
		if loss := m.riskLoss(subj); value != 0 && loss >= value {
			return venue.RiskResultWouldBreach, loss
		}
	case venue.RiskLimitMaxPosition:
		for _, in := range m.cfg.Instruments {
			if o := l.instr[in.ID]; o == nil || o[2] == 0 {
				figure = max(figure, worst(in.ID))
			}
		}
	}
	if value != 0 && figure > value {
		return venue.RiskResultWouldBreach, figure
	}
	*map[venue.RiskLimit]*int64{
		venue.RiskLimitMaxOrderQty:       &l.orderQty,
		venue.RiskLimitMaxOrderNotional:  &l.orderNotional,
		venue.RiskLimitMaxOpenOrders:     &l.openOrders,
		venue.RiskLimitMaxOpenNotional:   &l.openNotional,
		venue.RiskLimitCreditLimit:       &l.credit,
		venue.RiskLimitMaxPosition:       &l.position,
		venue.RiskLimitKillAfterBreaches: &l.killBreaches,
		venue.RiskLimitKillAtLoss:        &l.killLoss,
	}[which] = value
	return venue.RiskResultApplied, 0
}

func (m *refModel) riskControl(c *venue.RiskControl) {
	account := string(c.Account())
	if c.Action() == venue.RiskActionReport {
		m.riskReport(c.SessionIdx())
		return
	}
	subj, result := m.riskAddressed(c.Scope(), c.SessionIdx(), account)
	var n uint32
	if result == venue.RiskResultApplied {
		switch c.Action() {
		case venue.RiskActionKill:
			n = m.riskKill(subj)
		case venue.RiskActionReset:
			m.risk.killed[subj] = false
			m.risk.breaches[subj] = 0
		default:
			result = venue.RiskResultInvalidAction
		}
	}
	m.riskResult(c.SessionIdx(), c.Scope(), account, c.Action(), result, venue.RiskLimitNone, 0, 0, n)
}

// riskReport writes a RiskUtilisation for each subject that has a limit,
// open orders or its kill switch on. The position reported is the
// instrument's (config order) whose worst case is the largest share of its
// limit; without any position limit, the largest worst case.
func (m *refModel) riskReport(session uint16) {
	r := m.risk
	for subj := range r.limits {
		l := &r.limits[subj]
		var f refOpen
		var used, limit int64
		if r.on {
			f = m.riskOpen(subj)
			for _, in := range m.cfg.Instruments {
				p := r.pos[subj][in.ID]
				w, pl := max(p+f.buyQty[in.ID], f.sellQty[in.ID]-p), r.limit(subj, in.ID, 2)
				switch {
				case pl == 0 && limit == 0:
					used = max(used, w)
				case pl != 0 && (limit == 0 || new(big.Int).Mul(big.NewInt(w), big.NewInt(limit)).Cmp(new(big.Int).Mul(big.NewInt(used), big.NewInt(pl))) > 0):
					used, limit = w, pl
				}
			}
		}
		hasLimits := r.on && (l.credit != 0 || limit != 0 || l.openOrders != 0 || l.openNotional != 0)
		if !r.killed[subj] && f.orders == 0 && !hasLimits {
			continue
		}
		var e venue.RiskUtilisation
		m.begin(&e)
		e.SetScope(venue.RiskScopeSession)
		e.SetSessionIdx(uint16(subj))
		if !r.isSession(subj) {
			e.SetScope(venue.RiskScopeAccount)
			e.SetSessionIdx(session)
			_ = e.SetAccountString(r.accounts[subj-r.sessions])
		}
		if r.killed[subj] {
			e.SetKilled(venue.BooleanTypeTrue)
		}
		e.SetCreditUsed(r.credit[subj] + f.buyNotional)
		e.SetCreditLimit(l.credit)
		e.SetPositionUsed(used)
		e.SetPositionLimit(limit)
		e.SetOpenOrders(f.orders)
		e.SetOpenNotional(f.notional)
		e.SetBreaches(r.breaches[subj])
		m.sink.Commit()
	}
}

// riskEndOfDay starts the day's figures again.
func (m *refModel) riskEndOfDay() {
	for subj := range m.risk.limits {
		var value int64
		for id, p := range m.risk.pos[subj] {
			value += p * m.risk.mark[subj][id]
		}
		m.risk.bought[subj], m.risk.credit[subj], m.risk.breaches[subj], m.risk.eodValue[subj] = 0, 0, 0, value
	}
}

// propertyRisk has limits tight enough for the property test's orders to
// meet each of them now and then, on sessions and on two listed accounts.
func propertyRisk() *RiskConfig {
	return &RiskConfig{
		Sessions: RiskLimits{MaxOrderQty: 45, MaxOrderNotional: 45_000, MaxOpenOrders: 40, MaxOpenNotional: 700_000,
			CreditLimit: 3_000_000, MaxPosition: 200, KillAfterBreaches: 400, KillAtLoss: 30_000},
		SessionOverrides: map[uint16]RiskLimits{2: {MaxOpenOrders: 12, MaxPosition: 60}},
		Accounts: map[string]RiskLimits{
			"A": {CreditLimit: 400_000, MaxPosition: 80, Instruments: map[uint32]InstrumentRiskLimits{1: {MaxOrderQty: 30, MaxPosition: 40}}},
			"B": {KillAfterBreaches: 25, KillAtLoss: 4_000, MaxOpenNotional: 200_000},
		},
	}
}

// riskCommand generates a risk command: mostly sensible limit changes,
// kills, resets and reports, with invalid scopes, accounts, instruments,
// limits and values among them.
func (g *commandGen) riskCommand() []byte {
	scope, account := venue.RiskScopeSession, ""
	if g.pct(50) {
		scope, account = venue.RiskScopeAccount, []string{"A", "B", "C", "NOPE"}[g.rng.IntN(4)]
	}
	if g.pct(2) {
		scope = venue.RiskScope(g.rng.IntN(4))
	}
	session := g.session()
	if g.pct(60) {
		limit := venue.RiskLimit(1 + g.rng.IntN(8))
		if g.pct(3) {
			limit = venue.RiskLimit(g.rng.IntN(12))
		}
		scale := map[venue.RiskLimit]int{venue.RiskLimitMaxOrderQty: 60, venue.RiskLimitMaxOrderNotional: 60_000,
			venue.RiskLimitMaxOpenOrders: 50, venue.RiskLimitMaxOpenNotional: 900_000, venue.RiskLimitCreditLimit: 3_000_000,
			venue.RiskLimitMaxPosition: 250, venue.RiskLimitKillAfterBreaches: 400, venue.RiskLimitKillAtLoss: 40_000}[limit]
		value := int64(1 + g.rng.IntN(max(scale, 1)))
		switch {
		case g.pct(3):
			value = -value
		case g.pct(3):
			value = 0
		case g.pct(2):
			value = RiskLimitMax + 2
		case g.pct(8):
			value = RiskLimitRemove
		}
		var instrument uint32
		if g.pct(30) {
			instrument = g.instrumentID()
		}
		g.last = fmt.Sprintf("risk-limit scope=%v s=%d acct=%q limit=%v instr=%d value=%d", scope, session, account, limit, instrument, value)
		return encodeRiskSetLimit(g.buf[:], g.seq, g.now, session, scope, account, limit, instrument, value)
	}
	action := venue.RiskActionReport
	switch {
	case g.pct(25):
		action = venue.RiskActionKill
	case g.pct(60):
		action = venue.RiskActionReset
	case g.pct(5):
		action = venue.RiskAction(g.rng.IntN(8))
	}
	g.last = fmt.Sprintf("risk-control scope=%v s=%d acct=%q action=%v", scope, session, account, action)
	return encodeRiskControl(g.buf[:], g.seq, g.now, session, scope, account, action)
}

// asOfToday reads a risk command journaled before operator and reason were
// appended to its block (then 48 bytes for RiskSetLimit, 36 for
// RiskControl) as today's command with those two fields empty; any other
// bytes are returned as they are.
func asOfToday(cmd []byte, oldBlock, block int) []byte {
	hdr := venue.MessageHeaderSize
	if len(cmd) < hdr {
		return cmd
	}
	if acting := int(binary.LittleEndian.Uint16(cmd)); acting >= oldBlock && acting < block && hdr+acting <= len(cmd) {
		widened := append(slices.Clone(cmd[:hdr+acting]), make([]byte, block-acting)...)
		binary.LittleEndian.PutUint16(widened, uint16(block))
		return widened
	}
	return cmd
}
