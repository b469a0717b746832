package core

import (
	"encoding/binary"
	"math/bits"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The operator's risk commands: RiskSetLimit changes one limit, RiskControl
// turns a kill switch on or off or reports utilisation. Each is answered by
// a RiskControlResult (and a Report by RiskUtilisation events); a refused
// change leaves everything as it was. They are journaled like every
// command, so a replay changes the same limit at the same point. The
// operator and the reason travel in the command, for the journal's audit
// trail; the matcher does not read them.

// The risk commands' blocks before operator and reason were appended to
// them. A journal written then still replays: widened gives such a
// record the current block, the new fields empty.
const (
	riskSetLimitBlockBefore = 48
	riskControlBlockBefore  = 36
)

// widened returns cmd, or, when its acting block is at least before but
// shorter than block (a record from before fields were appended), cmd with
// the block widened by zeros: in dst when it has room (the matcher's
// m.widen, so that a replay does not allocate), else in a new slice.
func widened(dst, cmd []byte, before, block int) []byte {
	if len(cmd) < venue.MessageHeaderSize {
		return cmd
	}
	acting := int(binary.LittleEndian.Uint16(cmd))
	if acting < before || acting >= block || venue.MessageHeaderSize+acting > len(cmd) {
		return cmd
	}
	n := venue.MessageHeaderSize + block
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	clear(dst[copy(dst, cmd[:venue.MessageHeaderSize+acting]):])
	binary.LittleEndian.PutUint16(dst, uint16(block))
	return dst
}

func (m *Matcher) applyRiskSetLimit(cmd []byte) error {
	var c venue.RiskSetLimit
	if err := c.WrapDecode(widened(m.widen[:0], cmd, riskSetLimitBlockBefore, venue.RiskSetLimitBlockLength), 0); err != nil {
		return err
	}
	m.begin(c.Seq(), c.TimestampNs())
	var account [venue.AccountLength]byte
	loadAccount(&account, c.AccountArray())
	subj, result := m.riskAddressed(c.Scope(), c.SessionIdx(), &account)
	limit, instrumentID, value := c.Limit(), c.InstrumentID(), c.Value()
	var figure int64
	if result == venue.RiskResultApplied {
		result, figure = m.riskSetLimit(subj, limit, instrumentID, value)
	}
	if result != venue.RiskResultApplied {
		value = figure
	}
	m.emitRiskControlResultFor(c.SessionIdx(), c.Scope(), &account, venue.RiskActionSetLimit, result, limit, instrumentID, value, 0)
	return nil
}

// riskAddressed resolves the session or account a risk command names.
func (m *Matcher) riskAddressed(scope venue.RiskScope, session uint16, account *[venue.AccountLength]byte) (uint16, venue.RiskResult) {
	switch scope {
	case venue.RiskScopeSession:
		if int(session) >= m.risk.sessionsMax {
			return 0, venue.RiskResultUnknownSession
		}
		return session, venue.RiskResultApplied
	case venue.RiskScopeAccount:
		if s, ok := m.risk.accounts.lookup(account); ok {
			return s, venue.RiskResultApplied
		}
		return 0, venue.RiskResultUnknownAccount
	}
	return 0, venue.RiskResultInvalidAction
}

// RiskLimitPerInstrument reports whether limit may be set for one
// instrument as well as for a whole subject.
func RiskLimitPerInstrument(limit venue.RiskLimit) bool {
	return limit == venue.RiskLimitMaxOrderQty || limit == venue.RiskLimitMaxOrderNotional || limit == venue.RiskLimitMaxPosition
}

// riskSetLimit validates and applies a limit change. A change that would
// leave the subject in breach at once is refused with the figure in the way.
func (m *Matcher) riskSetLimit(subj uint16, limit venue.RiskLimit, instrumentID uint32, value int64) (venue.RiskResult, int64) {
	r := &m.risk
	if !r.on {
		return venue.RiskResultNotEnabled, 0
	}
	if value <= 0 || value > RiskLimitRemove || limit == venue.RiskLimitNone || !limit.Valid() {
		return venue.RiskResultInvalidValue, 0
	}
	s := &r.subjects[subj]
	if instrumentID != 0 {
		ii, ok := m.instrByID.lookup(instrumentID)
		if !ok {
			return venue.RiskResultUnknownInstrument, 0
		}
		if !RiskLimitPerInstrument(limit) {
			return venue.RiskResultNotPerInstrument, 0
		}
		cl := r.cell(subj, ii)
		if value == RiskLimitRemove {
			// The subject's limit governs the instrument again: refused
			// as a new value would be when the figures already pass it.
			value = s.instrumentLimit(limit)
			if w := cl.worstPosition(); limit == venue.RiskLimitMaxPosition && w > value {
				return venue.RiskResultWouldBreach, w
			}
			cl.setLimit(limit, value)
			cl.overrides &^= riskBit(limit)
			return venue.RiskResultApplied, 0
		}
		if w := cl.worstPosition(); limit == venue.RiskLimitMaxPosition && w > value {
			return venue.RiskResultWouldBreach, w
		}
		cl.setLimit(limit, value)
		cl.overrides |= riskBit(limit)
		return venue.RiskResultApplied, 0
	}
	cells := r.cells[int(subj)*r.stride : (int(subj)+1)*r.stride] // listed or not: unlisted cells follow the subject's limits
	var figure int64
	var field *int64
	switch limit {
	case venue.RiskLimitMaxOrderQty:
		field = &s.maxOrderQty
	case venue.RiskLimitMaxOrderNotional:
		field = &s.maxOrderNotional
	case venue.RiskLimitMaxOpenOrders:
		field, figure = &s.maxOpenOrders, s.openOrders
	case venue.RiskLimitMaxOpenNotional:
		field, figure = &s.maxOpenNotional, s.openNotional
	case venue.RiskLimitCreditLimit:
		field, figure = &s.creditLimit, s.dayNetBought+s.openBuyNotional
	case venue.RiskLimitKillAfterBreaches:
		field, figure = &s.killAfterBreaches, s.breaches
		if figure >= value {
			return venue.RiskResultWouldBreach, figure
		}
	case venue.RiskLimitKillAtLoss:
		field, figure = &s.killAtLoss, s.costBase-s.heldValue
		if figure >= value {
			return venue.RiskResultWouldBreach, figure
		}
	case venue.RiskLimitMaxPosition:
		field = &s.maxPosition
		// The subject-wide limit governs the instruments without their own.
		for i := range cells {
			if cells[i].overrides&riskBit(limit) == 0 {
				figure = max(figure, cells[i].worstPosition())
			}
		}
	}
	if figure > value {
		return venue.RiskResultWouldBreach, figure
	}
	*field = value
	if RiskLimitPerInstrument(limit) {
		for i := range cells {
			if cells[i].overrides&riskBit(limit) == 0 {
				cells[i].setLimit(limit, value)
			}
		}
	}
	return venue.RiskResultApplied, 0
}

// instrumentLimit is the subject-wide value of a limit that may be set per
// instrument.
func (s *riskSubject) instrumentLimit(limit venue.RiskLimit) int64 {
	switch limit {
	case venue.RiskLimitMaxOrderQty:
		return s.maxOrderQty
	case venue.RiskLimitMaxOrderNotional:
		return s.maxOrderNotional
	}
	return s.maxPosition
}

// setLimit sets one of the limits a cell holds.
func (c *riskCell) setLimit(limit venue.RiskLimit, value int64) {
	switch limit {
	case venue.RiskLimitMaxOrderQty:
		c.maxOrderQty = value
	case venue.RiskLimitMaxOrderNotional:
		c.maxOrderNotional = value
	case venue.RiskLimitMaxPosition:
		c.maxPosition = value
	}
}

func (m *Matcher) applyRiskControl(cmd []byte) error {
	var c venue.RiskControl
	if err := c.WrapDecode(widened(m.widen[:0], cmd, riskControlBlockBefore, venue.RiskControlBlockLength), 0); err != nil {
		return err
	}
	m.begin(c.Seq(), c.TimestampNs())
	var account [venue.AccountLength]byte
	loadAccount(&account, c.AccountArray())
	action := c.Action()
	if action == venue.RiskActionReport {
		m.riskReport(c.SessionIdx())
		return nil
	}
	subj, result := m.riskAddressed(c.Scope(), c.SessionIdx(), &account)
	var cancelled uint32
	if result == venue.RiskResultApplied {
		switch action {
		case venue.RiskActionKill:
			cancelled = m.riskKill(subj)
		case venue.RiskActionReset:
			m.riskReset(subj)
		default:
			result = venue.RiskResultInvalidAction
		}
	}
	m.emitRiskControlResultFor(c.SessionIdx(), c.Scope(), &account, action, result, venue.RiskLimitNone, 0, 0, cancelled)
	return nil
}

// riskReset turns a kill switch off and forgets the day's breaches, which
// would otherwise trip KillAfterBreaches again at the next one.
func (m *Matcher) riskReset(subj uint16) {
	s := &m.risk.subjects[subj]
	if s.killed {
		s.killed = false
		m.risk.countKilled(-1)
	}
	s.breaches = 0
}

// riskReport answers a Report with one RiskUtilisation per subject that has
// a limit, open orders or its kill switch on.
func (m *Matcher) riskReport(session uint16) {
	for i := range m.risk.subjects {
		f, ok := m.riskFigures(uint16(i))
		if !ok {
			continue
		}
		e := venue.RiskUtilisation{}
		_ = e.WrapEncode(m.claim(), 0)
		e.SetCauseSeq(m.causeSeq)
		e.SetTimestampNs(m.nowNs)
		m.riskSubjectFields(uint16(i), session, &e)
		if f.Killed {
			e.SetKilled(venue.BooleanTypeTrue)
		}
		e.SetCreditUsed(f.CreditUsed)
		e.SetCreditLimit(f.CreditLimit)
		e.SetPositionUsed(f.PositionUsed)
		e.SetPositionLimit(f.PositionLimit)
		e.SetOpenOrders(f.OpenOrders)
		e.SetOpenNotional(f.OpenNotional)
		e.SetBreaches(f.Breaches)
		m.sink.Commit()
	}
}

// RiskFigures are a subject's figures as a RiskUtilisation reports them.
type RiskFigures struct {
	Killed                             bool
	CreditUsed, CreditLimit            int64
	PositionUsed, PositionLimit        int64
	OpenOrders, OpenNotional, Breaches int64
}

// riskFigures are subject's figures, ok false when a report leaves it out
// (no limit of its figures, nothing open, its kill switch off).
func (m *Matcher) riskFigures(subj uint16) (f RiskFigures, ok bool) {
	r := &m.risk
	s := &r.subjects[subj]
	used, limit := m.riskPositionUse(subj)
	hasLimits := r.on && (s.creditLimit != riskNone || limit != 0 || s.maxOpenOrders != riskNone || s.maxOpenNotional != riskNone)
	if !s.killed && s.openOrders == 0 && !hasLimits {
		return f, false
	}
	return RiskFigures{Killed: s.killed, CreditUsed: s.dayNetBought + s.openBuyNotional, CreditLimit: shown(s.creditLimit),
		PositionUsed: used, PositionLimit: limit, OpenOrders: s.openOrders, OpenNotional: s.openNotional, Breaches: s.breaches}, true
}

// riskSubjectFields names a subject in a RiskUtilisation.
func (m *Matcher) riskSubjectFields(subj, session uint16, e *venue.RiskUtilisation) {
	e.SetScope(m.risk.scopeOf(subj))
	if int(subj) < m.risk.sessionsMax {
		e.SetSessionIdx(subj)
		return
	}
	e.SetSessionIdx(session)
	putAccount(e.AccountArray(), &m.risk.names[int(subj)-m.risk.sessionsMax])
}

// riskPositionUse is a subject's most used position limit: the worst-case
// position and the limit of the instrument where their ratio is highest
// (where there is no limit, the largest position and 0).
func (m *Matcher) riskPositionUse(subj uint16) (used, limit int64) {
	r := &m.risk
	if !r.on {
		return 0, 0
	}
	for ii := range len(m.instruments) {
		cl := r.cell(subj, uint16(ii))
		w, l := cl.worstPosition(), shown(cl.maxPosition)
		switch {
		case l == 0 && limit == 0:
			used = max(used, w)
		case l != 0 && (limit == 0 || ratioAbove(w, l, used, limit)):
			used, limit = w, l
		}
	}
	return used, limit
}

// ratioAbove reports whether a/b > c/d for a, c ≥ 0 and b, d > 0, cross
// multiplied in 128 bits: a position and a limit each fit 63 bits, and
// their int64 products wrapped (a position of 1e14 against a limit of
// 4e18), so the report named a limit that was not the most used.
func ratioAbove(a, b, c, d int64) bool {
	h1, l1 := bits.Mul64(uint64(a), uint64(d))
	h2, l2 := bits.Mul64(uint64(c), uint64(b))
	return h1 > h2 || (h1 == h2 && l1 > l2)
}

// emitRiskBreach reports that a request of session would breach subject's
// limit (RiskLimitNone: its kill switch is on).
func (m *Matcher) emitRiskBreach(session, subj uint16, which venue.RiskLimit, instrumentID uint32, limit, current, request int64,
	account *[venue.AccountLength]byte) {
	var e venue.RiskBreach
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetSessionIdx(session)
	e.SetScope(m.risk.scopeOf(subj))
	e.SetLimit(which)
	e.SetInstrumentID(instrumentID)
	e.SetLimitValue(limit)
	e.SetCurrentValue(current)
	e.SetRequestValue(request)
	putAccount(e.AccountArray(), account)
	m.sink.Commit()
}

// emitRiskControlResult answers for a subject (automatic kills).
func (m *Matcher) emitRiskControlResult(subj uint16, action venue.RiskAction, result venue.RiskResult, which venue.RiskLimit,
	instrumentID uint32, value int64, cancelled uint32) {
	var account [venue.AccountLength]byte
	session := subj
	if int(subj) >= m.risk.sessionsMax {
		account, session = m.risk.names[int(subj)-m.risk.sessionsMax], 0
	}
	m.emitRiskControlResultFor(session, m.risk.scopeOf(subj), &account, action, result, which, instrumentID, value, cancelled)
}

func (m *Matcher) emitRiskControlResultFor(session uint16, scope venue.RiskScope, account *[venue.AccountLength]byte,
	action venue.RiskAction, result venue.RiskResult, which venue.RiskLimit, instrumentID uint32, value int64, cancelled uint32) {
	var e venue.RiskControlResult
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetSessionIdx(session)
	e.SetScope(scope)
	e.SetAction(action)
	e.SetResult(result)
	e.SetLimit(which)
	e.SetInstrumentID(instrumentID)
	e.SetValue(value)
	e.SetCancelledCount(cancelled)
	putAccount(e.AccountArray(), account)
	m.sink.Commit()
}

// RiskSubjectLimits is one subject's limits as the matcher holds them, for
// views (a limit that is not set is absent).
type RiskSubjectLimits struct {
	Scope   venue.RiskScope
	Session uint16 // the session's index, for a session
	Account string // the account, for an account
	Killed  bool
	Limits  map[venue.RiskLimit]int64
	// Instruments holds the per-instrument overrides, by instrument id.
	Instruments map[uint32]map[venue.RiskLimit]int64
	// Figures are what a utilisation report would say of the subject now
	// (nil: a report would leave it out).
	Figures *RiskFigures
}

// RiskLimitsNow lists every subject that has a limit or its kill switch on
// (or that a utilisation report would name), in subject order, with the
// figures a report would give. It reads matcher state, so call it only while the
// matcher does not run (before the pipeline starts, as ops seeds its
// Monitor); a running venue learns of changes from RiskControlResult events.
func (m *Matcher) RiskLimitsNow() []RiskSubjectLimits {
	r := &m.risk
	var out []RiskSubjectLimits
	for i := range r.subjects {
		s := &r.subjects[i]
		l := RiskSubjectLimits{Scope: r.scopeOf(uint16(i)), Session: uint16(i), Killed: s.killed, Limits: map[venue.RiskLimit]int64{}}
		if i >= r.sessionsMax {
			l.Session = 0
			name := r.names[i-r.sessionsMax]
			l.Account = string(name[:accountLen(&name)])
		}
		for which, v := range map[venue.RiskLimit]int64{venue.RiskLimitMaxOrderQty: s.maxOrderQty,
			venue.RiskLimitMaxOrderNotional: s.maxOrderNotional, venue.RiskLimitMaxOpenOrders: s.maxOpenOrders,
			venue.RiskLimitMaxOpenNotional: s.maxOpenNotional, venue.RiskLimitCreditLimit: s.creditLimit,
			venue.RiskLimitMaxPosition: s.maxPosition, venue.RiskLimitKillAfterBreaches: s.killAfterBreaches,
			venue.RiskLimitKillAtLoss: s.killAtLoss} {
			if r.on && v != riskNone {
				l.Limits[which] = v
			}
		}
		for ii := 0; r.on && ii < len(m.instruments); ii++ {
			c := r.cell(uint16(i), uint16(ii))
			for which, v := range map[venue.RiskLimit]int64{venue.RiskLimitMaxOrderQty: c.maxOrderQty,
				venue.RiskLimitMaxOrderNotional: c.maxOrderNotional, venue.RiskLimitMaxPosition: c.maxPosition} {
				if c.overrides&riskBit(which) == 0 {
					continue
				}
				if l.Instruments == nil {
					l.Instruments = map[uint32]map[venue.RiskLimit]int64{}
				}
				id := m.instruments[ii].id
				if l.Instruments[id] == nil {
					l.Instruments[id] = map[venue.RiskLimit]int64{}
				}
				l.Instruments[id][which] = v
			}
		}
		// Without [risk] no figure is kept (a kill switch works all the
		// same) and no report runs: a killed session's would be "0 used"
		// of everything, shown only after a restart.
		if f, ok := m.riskFigures(uint16(i)); ok && r.on {
			l.Figures = &f
		}
		if len(l.Limits) != 0 || l.Instruments != nil || l.Killed || l.Figures != nil {
			out = append(out, l)
		}
	}
	return out
}

// accountLen is the length of a NUL-padded account.
func accountLen(a *[venue.AccountLength]byte) int {
	for i, b := range a {
		if b == 0 {
			return i
		}
	}
	return len(a)
}
