package server

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/fixvenue/fixvenue/cluster"
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/pipeline"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Pre-trade risk on the admin API (package ops, "Risk"): each call is
// checked against the configuration, journaled as a RiskControl or
// RiskSetLimit command, and answered with the matcher's RiskControlResult
// once the command is durable, so that the audit trail and a replay hold
// every operator action. The Server implements ops.Risk.

// matcherRisk translates the [risk] table for the matcher (nil: off).
func matcherRisk(cfg *config.Config) *core.RiskConfig {
	r := cfg.Risk
	if r == nil {
		return nil
	}
	limits := func(l *config.RiskLimits) core.RiskLimits {
		out := core.RiskLimits{MaxOrderQty: config.Value(l.MaxOrderQty), MaxOrderNotional: config.Value(l.MaxOrderNotional),
			MaxOpenOrders: config.Value(l.MaxOpenOrders), MaxOpenNotional: config.Value(l.MaxOpenNotional),
			CreditLimit: config.Value(l.CreditLimit), MaxPosition: config.Value(l.MaxPosition),
			KillAfterBreaches: config.Value(l.KillAfterBreaches), KillAtLoss: config.Value(l.KillAtLoss)}
		for _, in := range l.Instrument {
			if out.Instruments == nil {
				out.Instruments = map[uint32]core.InstrumentRiskLimits{}
			}
			out.Instruments[cfg.InstrumentBySymbol(in.Symbol).ID] = core.InstrumentRiskLimits{MaxOrderQty: config.Value(in.MaxOrderQty),
				MaxOrderNotional: config.Value(in.MaxOrderNotional), MaxPosition: config.Value(in.MaxPosition)}
		}
		return out
	}
	mr := &core.RiskConfig{Sessions: limits(&r.Sessions), SessionOverrides: map[uint16]core.RiskLimits{},
		Accounts: map[string]core.RiskLimits{}}
	for i := range r.Session {
		mr.SessionOverrides[uint16(cfg.SessionIndex(r.Session[i].CompID))] = limits(&r.Session[i].RiskLimits)
	}
	for i := range r.Account {
		mr.Accounts[r.Account[i].Name] = limits(&r.Account[i].RiskLimits)
	}
	return mr
}

// riskRequest is what a control call asks for, checked against the configuration.
type riskRequest struct {
	scope        venue.RiskScope
	session      uint16
	account      string
	limit        venue.RiskLimit
	instrumentID uint32
	value        int64
}

func badRisk(status int, code, format string, a ...any) error {
	return &ops.RiskError{Status: status, Code: code, Reason: fmt.Sprintf(format, a...)}
}

func (s *Server) parseRiskRequest(in ops.RiskRequest) (riskRequest, error) {
	var q riskRequest
	switch {
	case (in.Session == "") == (in.Account == ""):
		return q, badRisk(http.StatusBadRequest, "bad_subject", "name exactly one of session (a CompID) and account")
	case in.Session != "":
		idx := s.cfg.SessionIndex(in.Session)
		if idx < 0 {
			return q, badRisk(http.StatusNotFound, "unknown_session", "unknown session %q", in.Session)
		}
		if s.cfg.Sessions[idx].IsDropCopy() {
			return q, badRisk(http.StatusBadRequest, "drop_copy_session", "session %s is a drop-copy session: it enters no orders, so it has no risk limits", in.Session)
		}
		q.scope, q.session = venue.RiskScopeSession, uint16(idx)
	default:
		if len(in.Account) > venue.AccountLength {
			return q, badRisk(http.StatusBadRequest, "bad_account", "account %q is longer than %d characters", in.Account, venue.AccountLength)
		}
		if !s.riskAccountKnown(in.Account) {
			return q, badRisk(http.StatusNotFound, "unknown_account", "unknown account %q: accounts with limits are the [[risk.account]] tables", in.Account)
		}
		q.scope, q.account = venue.RiskScopeAccount, in.Account
	}
	if in.Action != "limit" {
		return q, nil
	}
	if s.cfg.Risk == nil {
		// The matcher would refuse it (NotEnabled): said plainly, and
		// nothing journaled.
		return q, badRisk(http.StatusConflict, "risk_off", "risk limits are off: the configuration has no [risk] table, so there is no "+
			"limit to change (README, \"Risk limits\"); kill and reset work without it")
	}
	var ok bool
	if q.limit, ok = ops.RiskLimitKeys[in.Limit]; !ok {
		return q, badRisk(http.StatusBadRequest, "unknown_limit", "unknown limit %q (one of %s)", in.Limit, ops.RiskLimitList)
	}
	// The admin API refuses a call without a value (no_value) before this.
	if in.Value == nil {
		return q, badRisk(http.StatusBadRequest, "no_value", "give a value: %s", ops.RiskValueWanted)
	}
	if v := *in.Value; (v <= 0 || v > core.RiskLimitMax) && v != core.RiskLimitRemove {
		return q, badRisk(http.StatusBadRequest, "bad_value", "value %d must be %s", v, ops.RiskValueWanted)
	}
	q.value = int64(*in.Value)
	if in.Instrument != "" {
		if !core.RiskLimitPerInstrument(q.limit) {
			return q, badRisk(http.StatusBadRequest, "not_per_instrument", "%s is set for a whole session or account, not per instrument (per instrument: max_order_qty, max_order_notional, max_position)", in.Limit)
		}
		// Configured or added at runtime: an added instrument has risk cells too.
		inst, ok := s.ops.Instrument(in.Instrument)
		if !ok {
			return q, badRisk(http.StatusNotFound, "unknown_instrument", "unknown instrument %q", in.Instrument)
		}
		q.instrumentID = inst.ID
	}
	return q, nil
}

func (s *Server) riskAccountKnown(name string) bool {
	if s.cfg.Risk == nil {
		return false
	}
	for i := range s.cfg.Risk.Account {
		if s.cfg.Risk.Account[i].Name == name {
			return true
		}
	}
	return false
}

// RiskCommand journals one checked risk call and waits for its answer.
func (s *Server) RiskCommand(in ops.RiskRequest) (ops.RiskAnswer, error) {
	q, err := s.parseRiskRequest(in)
	if err != nil {
		return ops.RiskAnswer{}, err
	}
	// A kill of a subject whose switch is on, a reset of one whose switch
	// is off, or a limit set to the value it has would change nothing: it
	// is refused naming the state, as a session action that makes no sense
	// is, and nothing is journaled (README "Risk limits"). The gateway's
	// view changes before a call is answered, and one call at a time per
	// subject reads it.
	name := s.riskSubjectName(q)
	mu := s.riskLock(name)
	mu.Lock()
	defer mu.Unlock()
	reports, limits := s.gw.RiskSeen()
	if in.Action != "limit" {
		if killed := reports[name].Killed; killed == (in.Action == "kill") {
			state := map[bool]string{true: "already on", false: "off"}[killed]
			return ops.RiskAnswer{}, badRisk(http.StatusConflict, "invalid_transition", "the kill switch of %s is %s (nothing changed)", name, state)
		}
	} else if v, ok := limits[gateway.RiskLimitKey{Subject: name, Limit: q.limit, InstrumentID: q.instrumentID}]; ok && v == q.value {
		where := ""
		if in.Instrument != "" {
			where = " in " + in.Instrument
		}
		return ops.RiskAnswer{}, badRisk(http.StatusConflict, "invalid_transition", "%s%s of %s is already %d (nothing changed)", in.Limit, where, name, v)
	} else if !ok && q.value == core.RiskLimitRemove {
		state := "none"
		if in.Instrument != "" {
			state = "not set in " + in.Instrument + " (the whole " + map[venue.RiskScope]string{venue.RiskScopeSession: "session", venue.RiskScopeAccount: "account"}[q.scope] + "'s governs it)"
		}
		return ops.RiskAnswer{}, badRisk(http.StatusConflict, "invalid_transition", "%s of %s is %s (nothing changed)", in.Limit, name, state)
	}
	seq, slot, err := s.pipe.Claim()
	if errors.Is(err, pipeline.ErrHalted) && errors.Is(err, cluster.ErrLostLeadership) {
		// A cluster leader deposed: answered as every admin call is, and
		// as the follower it restarts as answers (docs/ARCHITECTURE.md,
		// "Losing leadership").
		var leader func() (string, string)
		if r := s.opts.Replica; r != nil {
			leader = r.Leader
		}
		why, _ := ops.DeposedText(leader)
		return ops.RiskAnswer{}, badRisk(http.StatusServiceUnavailable, "not_leader", "%s", why)
	}
	if errors.Is(err, pipeline.ErrHalted) {
		return ops.RiskAnswer{}, badRisk(http.StatusServiceUnavailable, "halted", "%v", err)
	}
	if err != nil {
		return ops.RiskAnswer{}, badRisk(http.StatusServiceUnavailable, "busy", "command ring busy: %v", err)
	}
	abs := s.pipe.SeqBase() + uint64(seq)
	if in.Action == "limit" {
		var c venue.RiskSetLimit
		_ = c.WrapEncode(slot, 0)
		setRiskSubject(c, abs, s.opts.Now().UnixNano(), q, in)
		c.SetLimit(q.limit)
		c.SetInstrumentID(q.instrumentID)
		c.SetValue(q.value)
	} else {
		var c venue.RiskControl
		_ = c.WrapEncode(slot, 0)
		setRiskSubject(c, abs, s.opts.Now().UnixNano(), q, in)
		c.SetAction(venue.RiskActionKill)
		if in.Action == "reset" {
			c.SetAction(venue.RiskActionReset)
		}
	}
	if s.tape != nil {
		s.tape.Command(slot) // the operator, as the RiskControlResult names none
	}
	answer := s.gw.AwaitRiskResult(int64(abs))
	s.pipe.Commands.Publish(seq)
	// admin.call_timeout, as every admin call (it waited 5 s whatever the
	// setting, so on a slow disk a kill failed under a longer one).
	wait := s.cfg.Admin.CallTimeout.Duration
	deadline := time.Now().Add(wait)
	// The answer comes from outbound, which holds what it read until it is
	// durable: once the journal stage ended (a cluster leader deposed) it
	// never comes, and the call is answered unconfirmed at once, as every
	// admin call is, before the deposed node restarts under it
	// (docs/ARCHITECTURE.md, "Losing leadership").
	ended := make(chan struct{})
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for !s.pipe.JournalEnded() {
			select {
			case <-tick.C:
			case <-stopWatch:
				return
			}
		}
		close(ended)
	}()
	var res gateway.RiskResult
	select {
	case res = <-answer:
	case <-ended:
		select {
		case res = <-answer: // it came as the journal ended
		default:
			s.gw.ForgetRiskResult(int64(abs))
			return ops.RiskAnswer{}, &ops.RiskError{Status: http.StatusServiceUnavailable, Code: "unconfirmed", Seq: int64(abs),
				Reason: fmt.Sprintf("%v (%v)", ops.ErrUnconfirmed, s.pipe.Err())}
		}
	case <-time.After(time.Until(deadline)):
		s.gw.ForgetRiskResult(int64(abs))
		return ops.RiskAnswer{}, fmt.Errorf("no answer within admin.call_timeout (%v) to command %d; it is journaled", wait, abs)
	}
	// Outbound sees the result as the matcher applies the command: the
	// answer waits until the command is durable too (README "Operating
	// the venue"), or a kill answered Applied could be lost by a crash.
	if !s.pipe.WaitDurableOrEnd(int64(abs), time.Until(deadline)) {
		if perr := s.pipe.Err(); perr != nil {
			// The venue halted with the command applied but not durable
			// (a cluster leader deposed: another node may still commit
			// it), as every admin call says at once: waiting for what
			// cannot come outlasted the deposed node, which restarts and
			// cut the call (docs/ARCHITECTURE.md, "Losing leadership").
			return ops.RiskAnswer{}, &ops.RiskError{Status: http.StatusServiceUnavailable, Code: "unconfirmed", Seq: res.Seq,
				Reason: fmt.Sprintf("%v (%v)", ops.ErrUnconfirmed, perr)}
		}
		return ops.RiskAnswer{}, fmt.Errorf("command %d (%s) was applied but is not durable within admin.call_timeout (%v); it is journaled", abs, res.Result, wait)
	}
	ans := ops.RiskAnswer{RiskResult: res, Operator: in.Operator}
	// The answer names the limit as the call did, by the configuration's
	// key that GET /v1/risk lists it under, not by the matcher's enum; a
	// kill or a reset changes none.
	ans.Limit = ""
	if in.Action == "limit" {
		ans.Limit = in.Limit
	}
	if res.Result == venue.RiskResultWouldBreach.String() {
		// The matcher answers with the figure in the way: said, beside
		// the value asked, so the operator sees by how much.
		if q.value == core.RiskLimitRemove {
			// Only a per-instrument limit removed can be in the way: the
			// subject's, which would govern the instrument again.
			whole := limits[gateway.RiskLimitKey{Subject: name, Limit: q.limit}]
			return ans, &ops.RiskError{Status: http.StatusConflict, Code: "refused", Seq: res.Seq, Current: int64(res.Value), Value: whole,
				Reason: fmt.Sprintf("refused by the matcher: WouldBreach: %s %s is %d, so removing its %s in %s would leave the %s of %d that governs "+
					"the others, breached at once (nothing changed)", name, riskFigureWords(q.limit, in.Instrument), res.Value, in.Limit, in.Instrument, in.Limit, whole)}
		}
		return ans, &ops.RiskError{Status: http.StatusConflict, Code: "refused", Seq: res.Seq, Current: int64(res.Value), Value: q.value,
			Reason: fmt.Sprintf("refused by the matcher: WouldBreach: %s %s is %d, so a %s of %d would be breached at once (nothing changed)",
				s.riskSubjectName(q), riskFigureWords(q.limit, in.Instrument), res.Value, in.Limit, q.value)}
	}
	if res.Result != venue.RiskResultApplied.String() {
		return ans, &ops.RiskError{Status: http.StatusConflict, Code: "refused",
			Reason: "refused by the matcher: " + res.Result + riskResultWords(res.Result) + " (nothing changed)", Seq: res.Seq}
	}
	return ans, nil
}

// riskSubjectName names a checked request's subject as the risk view does.
func (s *Server) riskSubjectName(q riskRequest) string {
	if q.scope == venue.RiskScopeAccount {
		return "account:" + q.account
	}
	return "session:" + s.cfg.Sessions[q.session].CompID
}

// riskLock is the lock of a checked subject's risk calls.
func (s *Server) riskLock(name string) *sync.Mutex {
	s.riskMuLock.Lock()
	defer s.riskMuLock.Unlock()
	if s.riskMu == nil {
		s.riskMu = map[string]*sync.Mutex{}
	}
	mu := s.riskMu[name]
	if mu == nil {
		mu = &sync.Mutex{}
		s.riskMu[name] = mu
	}
	return mu
}

// riskFigureWords names the figure a limit is held against (README "Risk
// limits"), for a refusal that gives it.
func riskFigureWords(limit venue.RiskLimit, instrument string) string {
	in := ""
	if instrument != "" {
		in = " in " + instrument
	}
	switch limit {
	case venue.RiskLimitMaxOpenOrders:
		return "open orders"
	case venue.RiskLimitMaxOpenNotional:
		return "open notional (price ticks × quantity)"
	case venue.RiskLimitCreditLimit:
		return "credit used (net bought today + open buys, price ticks × quantity)"
	case venue.RiskLimitKillAfterBreaches:
		return "breaches today"
	case venue.RiskLimitKillAtLoss:
		return "loss today"
	case venue.RiskLimitMaxPosition:
		if in == "" {
			in = " (the largest of the instruments without their own limit)"
		}
		return "worst-case position" + in
	}
	return "figure"
}

// riskResultWords says what a refusal the request's checks leave to the
// matcher means, after its name.
func riskResultWords(result string) string {
	switch result {
	case venue.RiskResultNotEnabled.String():
		return ": risk limits are off"
	}
	return ""
}

// riskSubject is what a RiskSetLimit and a RiskControl share: the command's
// sequence and time, whom it addresses, and who asked why.
type riskSubject interface {
	SetSeq(uint64)
	SetTimestampNs(int64)
	SetSessionIdx(uint16)
	SetScope(venue.RiskScope)
	SetAccountString(string) error
	SetOperatorString(string) error
	SetReasonString(string) error
}

func setRiskSubject(c riskSubject, seq uint64, nowNs int64, q riskRequest, in ops.RiskRequest) {
	c.SetSeq(seq)
	c.SetTimestampNs(nowNs)
	c.SetSessionIdx(q.session)
	c.SetScope(q.scope)
	_ = c.SetAccountString(q.account)
	_ = c.SetOperatorString(in.Operator) // ops checked both lengths
	_ = c.SetReasonString(in.Reason)
}

// RiskSubjects lists each configured order session, then each account with
// limits: its limits (the matcher's at start, then as changed), kill
// switch and latest report. The limits are read in one pass, each handed
// to its subject: a pass over every limit for each subject took 0.79 s a
// call at 4,096 sessions with four limits each (now 6 ms,
// BenchmarkRiskSubjects, 2 CPUs).
func (s *Server) RiskSubjects() []ops.RiskSubject {
	reports, limits := s.gw.RiskSeen()
	return riskSubjects(s.cfg, s.ops.Instruments(), reports, limits)
}

// KilledSessions is what the console's Sessions and Operations pages read
// of the risk at every update (ops.Ops.KilledSessions): the sessions whose
// kill switch is on, from the gateway's reports, with no copy of the
// limits (TestKilledSessionsCopiesNoLimit).
func (s *Server) KilledSessions() map[string]bool { return s.gw.KilledSessions() }

// riskSubjects is RiskSubjects of the gateway's reports and limits.
func riskSubjects(cfg *config.Config, listed []config.Instrument, reports map[string]gateway.RiskReport,
	limits map[gateway.RiskLimitKey]int64) []ops.RiskSubject {
	symbols := make(map[uint32]string, len(listed))
	for _, in := range listed {
		symbols[in.ID] = in.Symbol
	}
	var out []ops.RiskSubject
	index := map[string]int{} // subject key ("session:CLIENT1") -> its place in out
	add := func(scope, name string) {
		key := scope + ":" + name
		subj := ops.RiskSubject{Scope: scope, Name: name, Limits: map[string]int64{}}
		if r, ok := reports[key]; ok {
			subj.Killed = r.Killed
			if r.Figures {
				subj.Figures = &ops.RiskFigures{ReportSeq: r.Seq, CreditUsed: r.CreditUsed, CreditLimit: r.CreditLimit,
					PositionUsed: r.PositionUsed, PositionLimit: r.PositionLimit, OpenOrders: r.OpenOrders,
					OpenNotional: r.OpenNotional, Breaches: r.Breaches}
			}
			if a := r.AutoKill; a != nil && r.Killed {
				subj.AutoKill = &ops.RiskAutoKill{Rule: gateway.AutoKillRule(a.Rule), Limit: a.Limit, Breaches: a.Figure,
					TrippedBy: a.TrippedBy, Seq: a.Seq, Time: time.Unix(0, a.TimeNs).UTC().Format(time.RFC3339Nano),
					Cancelled: a.Cancelled}
			}
		}
		index[key] = len(out)
		out = append(out, subj)
	}
	for i := range cfg.Sessions {
		// A drop-copy session enters no orders: it has no risk limits, and
		// the risk calls refuse it (parseRiskRequest).
		if !cfg.Sessions[i].IsDropCopy() {
			add("session", cfg.Sessions[i].CompID)
		}
	}
	if cfg.Risk != nil {
		for i := range cfg.Risk.Account {
			add("account", cfg.Risk.Account[i].Name)
		}
	}
	for k, v := range limits {
		i, ok := index[k.Subject]
		if !ok {
			continue
		}
		limit := ops.RiskLimitNames[k.Limit]
		if k.InstrumentID != 0 {
			limit += ":" + symbols[k.InstrumentID]
		}
		out[i].Limits[limit] = v
	}
	return out
}

// runRiskReports journals a utilisation report every interval, which the
// gateway turns into the risk gauges, when a command other than the
// periodic ones was claimed since the last report: the figures change only
// by journaled commands, so a report with none since would repeat the last
// one, and an idle venue (a night, a weekend) would journal one every
// interval, with a snapshot after each (runSnapshots) and its events to
// the export and the drop copies. At a start, and on a cluster's new
// leader, the gateway's figures are the state's (gateway.SeedRisk): the
// first report waits for a command too. Whether a report is journaled is
// decided before it is claimed, so a replay, which applies what the
// journal holds, is not concerned; only a leader runs a Server, so only
// it decides.
func (s *Server) runRiskReports(interval time.Duration) {
	var reported int64   // s.periodic.others at the last report
	pending := int64(-1) // the last report's ring seq, until RiskSeen knows outbound took it
	s.every(interval, "risk report", func() {
		others := s.periodic.others(s.pipe)
		if others == reported {
			// No next report is coming to drop the figures of a subject the
			// last one left out (gateway.Gateway.RiskReportPublished keeps
			// the last two reports, the latest of which may not have
			// reached outbound): once outbound has taken all the last
			// one's events, it is the last two.
			if pending >= 0 && s.outboundPassed(pending) {
				s.gw.RiskReportPublished(int64(s.pipe.SeqBase()) + pending)
				pending = -1
			}
			return
		}
		var abs uint64
		if seq, ok := s.publish("risk report", func(slot []byte, seq uint64) {
			var c venue.RiskControl
			_ = c.WrapEncode(slot, 0)
			c.SetSeq(seq)
			c.SetTimestampNs(s.opts.Now().UnixNano())
			c.SetAction(venue.RiskActionReport)
			abs = seq
		}); ok {
			reported, pending = others, seq
			s.gw.RiskReportPublished(int64(abs))
		}
	})
}

// outboundPassed reports whether the gateway's outbound has handled every
// event of the command of ring sequence seq: the matcher publishes a
// command's events before it counts the command applied.
func (s *Server) outboundPassed(seq int64) bool {
	if s.pipe.MatcherSequence() < seq {
		return false
	}
	return s.outbound.Load() >= s.pipe.Events.Cursor()
}
