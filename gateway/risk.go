package gateway

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Pre-trade risk answers (doc.go, "Risk"). The matcher reports a breach in
// a RiskBreach event just before the OrderRejected or CancelRejected it
// causes, with the same causeSeq; outbound keeps the last one and turns it
// into the reject's Text, naming the limit and the figures. Risk rejects
// carry OrdRejReason 3 (order exceeds limit).

// lastBreach is the RiskBreach outbound saw last (outbound goroutine only).
type lastBreach struct {
	cause   int64
	session uint16
	scope   venue.RiskScope
	limit   venue.RiskLimit
	instID  uint32
	limitV  int64
	current int64
	request int64
	account string
	// clOrdID and text are the ClOrdID and Text of the reject the breach
	// caused (onRejected, onCancelRejected), which an automatic kill it
	// trips names (autoKilled).
	clOrdID string
	text    string
}

type riskMetrics struct {
	rejects     *prometheus.CounterVec
	commands    *prometheus.CounterVec
	creditUse   *prometheus.GaugeVec
	positionUse *prometheus.GaugeVec
	killed      *prometheus.GaugeVec
}

func newRiskMetrics() *riskMetrics {
	return &riskMetrics{
		rejects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fixvenue_risk_rejects_total",
			Help: "Orders and replaces refused by a pre-trade risk limit or a kill switch (limit=KillSwitch), by limit and scope."},
			[]string{"limit", "scope"}),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fixvenue_risk_commands_total",
			Help: "Risk commands and automatic kills, by action and result."}, []string{"action", "result"}),
		creditUse: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "fixvenue_risk_credit_utilisation_ratio",
			Help: "Credit used (net bought today plus open buys) over the credit limit, at the last risk report."}, []string{"subject"}),
		positionUse: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "fixvenue_risk_position_utilisation_ratio",
			Help: "The most used position limit (worst-case position over its limit), at the last risk report."}, []string{"subject"}),
		killed: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "fixvenue_risk_kill_switch",
			Help: "1 while a session's or account's kill switch is on (as of the last risk report or kill)."}, []string{"subject"}),
	}
}

func (r *riskMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.rejects, r.commands, r.creditUse, r.positionUse, r.killed}
}

// subjectName names a session by its CompID, an account by "account:" and its name.
// The CompID is read from the configuration, not from the live sessions: a
// gateway that renders reports again from the journal (a drop-copy replay,
// the answers lost at a crash) has none, and its reports must say what the
// client's said.
func (g *Gateway) subjectName(scope venue.RiskScope, session uint16, account []byte) string {
	if scope == venue.RiskScopeAccount {
		return "account:" + string(account)
	}
	if int(session) < len(g.cfg.Sessions) {
		return "session:" + g.cfg.Sessions[session].ID.TargetCompID
	}
	return "session:" + strconv.Itoa(int(session))
}

func (g *Gateway) onRiskBreach(e *venue.RiskBreach) {
	g.breach = lastBreach{cause: int64(e.CauseSeq()), session: e.SessionIdx(), scope: e.Scope(), limit: e.Limit(),
		instID: e.InstrumentID(), limitV: e.LimitValue(), current: e.CurrentValue(), request: e.RequestValue(),
		account: string(e.Account())}
	g.metrics.risk.rejects.WithLabelValues(limitName(e.Limit()), e.Scope().String()).Inc()
}

// breachAnswered notes the ClOrdID and Text of the reject that answered
// the last RiskBreach (riskText gave the text: same command), which an
// automatic kill the breach trips names.
func (g *Gateway) breachAnswered(reason venue.RejectReason, clOrdID []byte, text string) {
	if reason != venue.RejectReasonRiskLimitExceeded || text == "" {
		return
	}
	g.breach.clOrdID, g.breach.text = string(bytes.TrimRight(clOrdID, "\x00")), text
}

// limitName names the limit a reject broke in the metrics; a breach of no
// limit is an order refused by a kill switch.
func limitName(l venue.RiskLimit) string {
	if l == venue.RiskLimitNone {
		return "KillSwitch"
	}
	return l.String()
}

func (g *Gateway) onRiskControlResult(e *venue.RiskControlResult) {
	// The view is changed before the call is answered: the admin API's
	// next kill or reset reads the kill switch from it.
	defer g.answerRiskWait(e)
	g.metrics.risk.commands.WithLabelValues(e.Action().String(), e.Result().String()).Inc()
	if e.Result() != venue.RiskResultApplied {
		return
	}
	name := g.subjectName(e.Scope(), e.SessionIdx(), e.Account())
	switch e.Action() {
	case venue.RiskActionKill:
		g.metrics.risk.killed.WithLabelValues(name).Set(1)
		g.seeRisk(name, func(r *RiskReport) { r.Killed = true })
	case venue.RiskActionAutoKill:
		g.metrics.risk.killed.WithLabelValues(name).Set(1)
		auto := g.autoKilled(e, name)
		g.seeRisk(name, func(r *RiskReport) { r.Killed, r.AutoKill = true, auto })
	case venue.RiskActionReset:
		g.metrics.risk.killed.WithLabelValues(name).Set(0)
		g.seeRisk(name, func(r *RiskReport) { r.Killed, r.AutoKill = false, nil })
	case venue.RiskActionSetLimit:
		key := RiskLimitKey{Subject: name, Limit: e.Limit(), InstrumentID: e.InstrumentID()}
		g.riskMu.Lock()
		if g.riskSeen.limits == nil {
			g.riskSeen.limits = map[RiskLimitKey]int64{}
		}
		if e.Value() == core.RiskLimitRemove {
			delete(g.riskSeen.limits, key) // none, or the subject's again
		} else {
			g.riskSeen.limits[key] = e.Value()
		}
		g.riskMu.Unlock()
	}
}

// AutoKill is why an automatic kill tripped (README "Risk limits"), as
// outbound saw it live. The AutoKill RiskControlResult names the subject,
// the rule (its limit field), the command that tripped it (causeSeq), its
// time and the orders it cancelled, but no figure: its value is 0, and
// giving it the figure would change every AutoKill event a journal
// replays, which must replay byte for byte. So the limit is the one in
// force as the gateway knows it (riskSeen.limits); the breach count is
// that limit, for the count reaches it one reject at a time (a limit at
// or below the count is refused, a reset zeroes the count); the loss is
// not known beyond having reached the limit.
type AutoKill struct {
	Rule   venue.RiskLimit // KillAfterBreaches or KillAtLoss
	Limit  int64           // 0: not known
	Figure int64           // KillAfterBreaches: the day's risk rejects; KillAtLoss: 0, not carried
	Seq    int64           // the command that tripped it
	TimeNs int64
	// Cancelled is how many open orders the kill cancelled.
	Cancelled uint32
	// TrippedBy, for KillAfterBreaches, is the reject that tripped it: its
	// session, ClOrdID and Text ("" if outbound saw none).
	TrippedBy string
}

// AutoKillRule names an automatic kill's rule as the configuration does.
func AutoKillRule(l venue.RiskLimit) string {
	switch l {
	case venue.RiskLimitKillAfterBreaches:
		return "kill_after_breaches"
	case venue.RiskLimitKillAtLoss:
		return "kill_at_loss"
	}
	return l.String()
}

// autoKilled builds what the view keeps of an automatic kill and, on the
// live gateway only (not one rendering reports again from the journal),
// logs it: nothing else tells an operator why a switch went on.
func (g *Gateway) autoKilled(e *venue.RiskControlResult, name string) *AutoKill {
	a := &AutoKill{Rule: e.Limit(), Seq: int64(e.CauseSeq()), TimeNs: e.TimestampNs(), Cancelled: e.CancelledCount()}
	g.riskMu.Lock()
	a.Limit = g.riskSeen.limits[RiskLimitKey{Subject: name, Limit: e.Limit()}]
	g.riskMu.Unlock()
	if a.Rule == venue.RiskLimitKillAfterBreaches {
		a.Figure = a.Limit
		if b := &g.breach; b.cause == a.Seq && b.text != "" {
			a.TrippedBy = fmt.Sprintf("%s ClOrdID %s: %s", g.subjectName(venue.RiskScopeSession, b.session, nil), b.clOrdID, b.text)
		}
	}
	if g.replay {
		return a
	}
	figure := "unknown: the day's loss reached at least the limit (the event carries no figure)"
	if a.Rule == venue.RiskLimitKillAfterBreaches {
		figure = strconv.FormatInt(a.Figure, 10) + " risk rejects today"
	}
	attrs := []any{"subject", name, "rule", AutoKillRule(a.Rule), "limit", a.Limit, "figure", figure, "seq", a.Seq, "cancelled", a.Cancelled}
	if a.TrippedBy != "" {
		attrs = append(attrs, "tripped_by", a.TrippedBy)
	}
	g.log.Warn("risk: automatic kill switch tripped", attrs...)
	return a
}

// RiskReport is a subject's state as outbound last saw it: the kill switch
// (from kills, resets and reports) and, when Figures is set, the figures of
// its latest RiskUtilisation, as of command Seq (-1: seeded from a
// journal with no command yet). Seq alone cannot say whether there are
// figures: command seqs start at 0, so figures seeded after the journal's
// first command, or a report that is its first command, are as of seq 0.
type RiskReport struct {
	Figures                            bool
	Seq                                int64
	Killed                             bool
	CreditUsed, CreditLimit            int64
	PositionUsed, PositionLimit        int64
	OpenOrders, OpenNotional, Breaches int64
	// AutoKill says why the kill switch is on when an automatic kill
	// turned it on since this gateway started (nil: an operator's kill, or
	// one from before the start, whose cause the state replayed does not
	// keep).
	AutoKill *AutoKill
}

// RiskLimitKey names one limit of one subject ("session:ID" or
// "account:NAME"), InstrumentID 0 for all instruments.
type RiskLimitKey struct {
	Subject      string
	Limit        venue.RiskLimit
	InstrumentID uint32
}

// riskSeen is bounded by the configuration: one report per session and
// account with limits, one value per (subject, limit, instrument).
type riskSeen struct {
	reports map[string]RiskReport
	limits  map[RiskLimitKey]int64 // the matcher's at start (SeedRisk), then as RiskSetLimit changed them
	// rounds are the seqs of the last two report commands published
	// (RiskReportPublished), the older first; -1 before them (New), so
	// that figures seeded from an empty journal show.
	rounds [2]int64
}

// RiskReportPublished records that the report command seq was published.
// A report has no RiskUtilisation for a subject with nothing open, no
// limit of its figures and its kill switch off: its figures of an earlier
// report are then no longer true (an order since cancelled stayed in them
// for good), and RiskSeen drops the figures of a subject that neither of
// the last two reports published named. Two, not one: the latest may not
// have reached outbound yet.
//
// The utilisation gauges of such a subject go too: it has no credit or
// position limit (a report names every subject with one), so no ratio.
func (g *Gateway) RiskReportPublished(seq int64) {
	g.riskMu.Lock()
	defer g.riskMu.Unlock()
	g.riskSeen.rounds[0], g.riskSeen.rounds[1] = g.riskSeen.rounds[1], seq
	for name, r := range g.riskSeen.reports {
		if r.Figures && r.Seq < g.riskSeen.rounds[0] && (r.CreditLimit != 0 || r.PositionLimit != 0) {
			g.metrics.risk.creditUse.DeleteLabelValues(name)
			g.metrics.risk.positionUse.DeleteLabelValues(name)
			r.CreditLimit, r.PositionLimit = 0, 0 // deleted once
			g.riskSeen.reports[name] = r
		}
	}
}

func (g *Gateway) seeRisk(name string, change func(*RiskReport)) {
	g.riskMu.Lock()
	defer g.riskMu.Unlock()
	if g.riskSeen.reports == nil {
		g.riskSeen.reports = map[string]RiskReport{}
	}
	r := g.riskSeen.reports[name]
	change(&r)
	g.riskSeen.reports[name] = r
}

// RiskSeen returns copies of each subject's latest report, by subject
// name, and of the limits in force.
func (g *Gateway) RiskSeen() (map[string]RiskReport, map[RiskLimitKey]int64) {
	g.riskMu.Lock()
	defer g.riskMu.Unlock()
	reports := make(map[string]RiskReport, len(g.riskSeen.reports))
	for k, v := range g.riskSeen.reports {
		if v.Figures && v.Seq < g.riskSeen.rounds[0] {
			v = RiskReport{Killed: v.Killed, AutoKill: v.AutoKill} // left out of the last two reports (RiskReportPublished)
		}
		if v.AutoKill != nil {
			a := *v.AutoKill
			v.AutoKill = &a
		}
		reports[k] = v
	}
	limits := make(map[RiskLimitKey]int64, len(g.riskSeen.limits))
	for k, v := range g.riskSeen.limits {
		limits[k] = v
	}
	return reports, limits
}

// KilledSessions returns the CompIDs of the sessions whose kill switch is
// on, as RiskSeen reports them, without copying the reports or the limits:
// the console's pages read it at every update (ops.Ops.KilledSessions),
// and a copy of every limit per update grew with the limits configured
// and set. Nil when no switch is on.
func (g *Gateway) KilledSessions() map[string]bool {
	g.riskMu.Lock()
	defer g.riskMu.Unlock()
	var killed map[string]bool
	for k, v := range g.riskSeen.reports {
		if name, ok := strings.CutPrefix(k, "session:"); ok && v.Killed {
			if killed == nil {
				killed = map[string]bool{}
			}
			killed[name] = true
		}
	}
	return killed
}

// dropCopySubject tells a drop-copy session's figures, which the matcher
// keeps as every session's ([risk.sessions] reaches every index) but which
// mean nothing: it enters no orders, has no kill switch or limits (README
// "Risk limits"), and the gauges and the view leave it out.
func (g *Gateway) dropCopySubject(scope venue.RiskScope, session uint16) bool {
	return scope != venue.RiskScopeAccount && int(session) < len(g.cfg.Sessions) && g.cfg.Sessions[session].DropCopy != nil
}

func (g *Gateway) onRiskUtilisation(e *venue.RiskUtilisation) {
	if g.dropCopySubject(e.Scope(), e.SessionIdx()) {
		return
	}
	g.seeReport(g.subjectName(e.Scope(), e.SessionIdx(), e.Account()), RiskReport{Figures: true, Seq: int64(e.CauseSeq()),
		Killed: e.Killed() == venue.BooleanTypeTrue, CreditUsed: e.CreditUsed(), CreditLimit: e.CreditLimit(),
		PositionUsed: e.PositionUsed(), PositionLimit: e.PositionLimit(), OpenOrders: e.OpenOrders(),
		OpenNotional: e.OpenNotional(), Breaches: e.Breaches()})
}

// seeReport takes a subject's figures into the gauges and the view.
func (g *Gateway) seeReport(name string, rep RiskReport) {
	m := g.metrics.risk
	// A ratio needs its limit: without one (removed since the last
	// report) the gauge goes, rather than keep the last ratio for good.
	if l := rep.CreditLimit; l > 0 {
		m.creditUse.WithLabelValues(name).Set(float64(rep.CreditUsed) / float64(l))
	} else {
		m.creditUse.DeleteLabelValues(name)
	}
	if l := rep.PositionLimit; l > 0 {
		m.positionUse.WithLabelValues(name).Set(float64(rep.PositionUsed) / float64(l))
	} else {
		m.positionUse.DeleteLabelValues(name)
	}
	killed := 0.0
	if rep.Killed {
		killed = 1
	}
	m.killed.WithLabelValues(name).Set(killed)
	g.seeRisk(name, func(r *RiskReport) {
		// A report says whether the switch is on, not why: an automatic
		// kill's cause stays while it is.
		auto := r.AutoKill
		*r = rep
		if rep.Killed {
			r.AutoKill = auto
		}
	})
}

// riskText is the Text of a risk reject caused by command cause, from the
// RiskBreach that preceded it; "" when there is none. It is printable ASCII,
// as FIX 4.4 wants a Text ("x" for times: a "×" in UTF-8 reads as two other
// characters to a client decoding ISO-8859-1, QuickFIX/J's default).
func (g *Gateway) riskText(cause int64, reason venue.RejectReason) string {
	b := &g.breach
	if reason != venue.RejectReasonRiskLimitExceeded && reason != venue.RejectReasonKillSwitchActive || b.cause != cause {
		return ""
	}
	who := g.subjectName(b.scope, b.session, []byte(b.account))
	in := ""
	if inst := g.byID(b.instID); inst != nil {
		in = " in " + inst.Symbol
	}
	switch b.limit {
	case venue.RiskLimitNone:
		return "kill switch on for " + who
	case venue.RiskLimitMaxOrderQty:
		return fmt.Sprintf("order exceeds limit: max order quantity of %s%s: %d > %d", who, in, b.request, b.limitV)
	case venue.RiskLimitMaxOrderNotional:
		return fmt.Sprintf("order exceeds limit: max order notional of %s%s: %d > %d (price ticks x quantity)", who, in, b.request, b.limitV)
	case venue.RiskLimitMaxOpenOrders:
		return fmt.Sprintf("order exceeds limit: max open orders of %s: %d open + %d > %d", who, b.current, b.request, b.limitV)
	case venue.RiskLimitMaxOpenNotional:
		return fmt.Sprintf("order exceeds limit: max open notional of %s: %d open + %d > %d (price ticks x quantity)", who, b.current, b.request, b.limitV)
	case venue.RiskLimitCreditLimit:
		return fmt.Sprintf("order exceeds limit: credit limit of %s: %d used + %d > %d (price ticks x quantity)", who, b.current, b.request, b.limitV)
	case venue.RiskLimitMaxPosition:
		return fmt.Sprintf("order exceeds limit: max position of %s%s: %d + %d > %d", who, in, b.current, b.request, b.limitV)
	}
	return "order exceeds limit: " + b.limit.String()
}

// RiskResult is the matcher's answer to a risk command, for the control
// endpoint; the admin API (ops.RiskAnswer) answers with it as JSON.
type RiskResult struct {
	Seq       int64      `json:"seq"`
	Action    string     `json:"action"`
	Result    string     `json:"result"`
	Limit     string     `json:"limit,omitempty"`
	Value     LimitValue `json:"value,omitempty"`
	Cancelled uint32     `json:"cancelled"`
}

// LimitValue is a risk limit's value in the admin API: a positive integer,
// or "none" (core.RiskLimitRemove), which removes the limit.
type LimitValue int64

// LimitNone is the string LimitValue reads and writes for a removal.
const LimitNone = core.RiskLimitNoneText

// MarshalJSON writes a removal as "none".
func (v LimitValue) MarshalJSON() ([]byte, error) {
	if v == core.RiskLimitRemove {
		return []byte(`"` + LimitNone + `"`), nil
	}
	return strconv.AppendInt(nil, int64(v), 10), nil
}

// UnmarshalJSON reads an integer, or "none".
func (v *LimitValue) UnmarshalJSON(b []byte) error {
	if string(b) == `"`+LimitNone+`"` {
		*v = core.RiskLimitRemove
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("a limit's value is an integer or %q, not %s", LimitNone, b)
	}
	if n > core.RiskLimitMax {
		// RiskLimitRemove itself is "none": a number never removes a limit.
		return fmt.Errorf("a limit's value is at most %d, not %s (%q removes a limit)", core.RiskLimitMax, b, LimitNone)
	}
	*v = LimitValue(n)
	return nil
}

// String is the value as the API writes it.
func (v LimitValue) String() string {
	if v == core.RiskLimitRemove {
		return LimitNone
	}
	return strconv.FormatInt(int64(v), 10)
}

// AwaitRiskResult returns a channel that receives the RiskControlResult of
// command seq once outbound sees it, which may be before the command is
// durable: the caller waits for that (server.RiskCommand). Call it before
// publishing the command; ForgetRiskResult drops a wait given up.
func (g *Gateway) AwaitRiskResult(seq int64) <-chan RiskResult { return g.riskWaits.Expect(seq) }

// ForgetRiskResult stops waiting for command seq.
func (g *Gateway) ForgetRiskResult(seq int64) { g.riskWaits.Forget(seq) }

func (g *Gateway) answerRiskWait(e *venue.RiskControlResult) {
	g.riskWaits.Deliver(int64(e.CauseSeq()), RiskResult{Seq: int64(e.CauseSeq()), Action: e.Action().String(),
		Result: e.Result().String(), Limit: e.Limit().String(), Value: LimitValue(e.Value()), Cancelled: e.CancelledCount()})
}

// SeedRisk sets what RiskSeen starts from: the limits, kill switches and
// figures the matcher holds (core.Matcher.RiskLimitsNow, read before the
// pipeline starts, once it applied command asOf), so that limits changed
// before a restart show too, and the figures and gauges show at once
// rather than after the first report (README "Risk limits"): on a
// cluster's new leader too, whose matcher is the replica's. Command seqs
// start at 0, so an asOf of 0 is the journal's first command applied, and
// -1 nothing journaled yet: the figures are then nothing used against the
// configured limits, which no report would show sooner, as an idle venue
// journals none (server, runRiskReports).
func (g *Gateway) SeedRisk(list []core.RiskSubjectLimits, asOf int64) {
	for _, l := range list {
		if g.dropCopySubject(l.Scope, l.Session) {
			continue
		}
		name := g.subjectName(l.Scope, l.Session, []byte(l.Account))
		if f := l.Figures; f != nil {
			g.seeReport(name, RiskReport{Figures: true, Seq: asOf, Killed: l.Killed, CreditUsed: f.CreditUsed, CreditLimit: f.CreditLimit,
				PositionUsed: f.PositionUsed, PositionLimit: f.PositionLimit, OpenOrders: f.OpenOrders,
				OpenNotional: f.OpenNotional, Breaches: f.Breaches})
		} else {
			// No figures (a venue without [risk]): the kill switch's gauge
			// as a kill sets it.
			if l.Killed {
				g.metrics.risk.killed.WithLabelValues(name).Set(1)
			}
			g.seeRisk(name, func(r *RiskReport) { r.Killed = l.Killed })
		}
		g.riskMu.Lock()
		if g.riskSeen.limits == nil {
			g.riskSeen.limits = map[RiskLimitKey]int64{}
		}
		for which, v := range l.Limits {
			g.riskSeen.limits[RiskLimitKey{Subject: name, Limit: which}] = v
		}
		for id, limits := range l.Instruments {
			for which, v := range limits {
				g.riskSeen.limits[RiskLimitKey{Subject: name, Limit: which, InstrumentID: id}] = v
			}
		}
		g.riskMu.Unlock()
	}
}
