package ops

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Pre-trade risk on the admin API (README "Risk limits"): GET /v1/risk
// shows each subject's limits and utilisation; POST /v1/risk/kill,
// /v1/risk/reset and /v1/risk/limit turn a session's or an account's kill
// switch on or off and change one limit. The venue's Risk (server/risk.go)
// checks each call against the configuration, journals it as a
// RiskControl or RiskSetLimit command with the operator and the reason,
// and answers with the matcher's RiskControlResult once the command is
// durable.

// RiskLimitKeys are the limit names of the admin API, as in the
// configuration.
var RiskLimitKeys = map[string]venue.RiskLimit{
	"max_order_qty": venue.RiskLimitMaxOrderQty, "max_order_notional": venue.RiskLimitMaxOrderNotional,
	"max_open_orders": venue.RiskLimitMaxOpenOrders, "max_open_notional": venue.RiskLimitMaxOpenNotional,
	"credit_limit": venue.RiskLimitCreditLimit, "max_position": venue.RiskLimitMaxPosition,
	"kill_after_breaches": venue.RiskLimitKillAfterBreaches, "kill_at_loss": venue.RiskLimitKillAtLoss,
}

// RiskLimitList names the limits in the order an answer lists them.
const RiskLimitList = "max_order_qty, max_order_notional, max_open_orders, max_open_notional, credit_limit, max_position, kill_after_breaches, kill_at_loss"

// RiskValueWanted says what a limit's value may be, for a refusal.
var RiskValueWanted = fmt.Sprintf("a positive integer of at most %d, or %q to remove the limit", core.RiskLimitMax, gateway.LimitNone)

// RiskLimitNames are RiskLimitKeys the other way round.
var RiskLimitNames = func() map[venue.RiskLimit]string {
	out := make(map[venue.RiskLimit]string, len(RiskLimitKeys))
	for k, v := range RiskLimitKeys {
		out[v] = k
	}
	return out
}()

// RiskRequest is the body of POST /v1/risk/{action}: a reason, exactly one
// of session (a CompID) and account, and for a limit its name, value and
// optionally an instrument.
type RiskRequest struct {
	Reason  string `json:"reason"`
	Session string `json:"session,omitempty"`
	Account string `json:"account,omitempty"`
	Limit   string `json:"limit,omitempty"`
	// Value is the new limit: a positive integer, or "none" to remove the
	// limit (a per-instrument one: the subject's governs the instrument
	// again); nil: not given, which a value of 0 is not.
	Value      *gateway.LimitValue `json:"value,omitempty"`
	Instrument string              `json:"instrument,omitempty"`
	// Action is kill, reset or limit: the path's, not the body's.
	Action string `json:"-"`
	// Operator is the token's operator, journaled with the reason.
	Operator string `json:"-"`
}

// RiskAnswer is the matcher's answer to a risk call (the gateway's
// RiskResult, whose fields it carries as its own in JSON) and the operator
// who made the call.
type RiskAnswer struct {
	gateway.RiskResult
	Operator string `json:"operator"`
}

// RiskError is a refused risk call: the HTTP status, a code and the reason.
type RiskError struct {
	Status int
	Code   string
	Reason string
	Seq    int64 // the journaled command, when the matcher refused it
	// Current and Value, for a limit the figures already pass: the
	// subject's figure and the limit asked (0: not such a refusal).
	Current, Value int64
}

func (e *RiskError) Error() string { return e.Reason }

// RiskSubject is one row of GET /v1/risk: a session's or an account's
// limits (absent: none) and its figures from the latest utilisation report.
type RiskSubject struct {
	Scope   string           `json:"scope"` // session or account
	Name    string           `json:"name"`
	Killed  bool             `json:"killed"`
	Limits  map[string]int64 `json:"limits"`
	Figures *RiskFigures     `json:"figures,omitempty"` // nil: none to report (nothing open, no limit of its figures, kill switch off)
	// AutoKill says why the kill switch is on when an automatic kill
	// turned it on (nil: an operator's kill, or one from before the
	// venue started, whose cause the replayed state does not keep).
	AutoKill *RiskAutoKill `json:"auto_kill,omitempty"`
}

// RiskAutoKill is an automatic kill's cause (README "Risk limits"): the
// rule by its name in the configuration, the limit in force, the
// command that tripped it and when. The matcher's event carries no
// figure: for kill_after_breaches it is the limit (the day's risk rejects
// reach it one at a time), given as Breaches with the reject that
// tripped it; for kill_at_loss the loss is only known to have reached
// the limit.
type RiskAutoKill struct {
	Rule      string `json:"rule"`
	Limit     int64  `json:"limit"` // 0: not known
	Breaches  int64  `json:"breaches,omitempty"`
	TrippedBy string `json:"tripped_by,omitempty"`
	Seq       int64  `json:"seq"`
	Time      string `json:"time"` // RFC 3339, UTC
	Cancelled uint32 `json:"cancelled"`
}

// RiskFigures are a subject's figures in a RiskUtilisation report.
type RiskFigures struct {
	ReportSeq     int64 `json:"report_seq"`
	CreditUsed    int64 `json:"credit_used"`
	CreditLimit   int64 `json:"credit_limit"`
	PositionUsed  int64 `json:"position_used"`
	PositionLimit int64 `json:"position_limit"`
	OpenOrders    int64 `json:"open_orders"`
	OpenNotional  int64 `json:"open_notional"`
	Breaches      int64 `json:"breaches"`
}

// Risk is what the admin API needs of the venue's pre-trade risk.
type Risk interface {
	// RiskCommand checks, journals and applies one call; a *RiskError
	// says why nothing changed.
	RiskCommand(q RiskRequest) (RiskAnswer, error)
	// RiskSubjects lists every subject with limits, in subject order.
	RiskSubjects() []RiskSubject
	// KilledSessions returns the CompIDs of the sessions whose kill switch
	// is on (nil: none), as RiskSubjects says, without building the
	// subjects and their limits: the console reads it at every update.
	KilledSessions() map[string]bool
}

// SetRisk wires the venue's risk in (before Start); nil leaves the risk
// calls answering 404.
func (o *Ops) SetRisk(r Risk) { o.risk = r }

// KilledSessions returns the CompIDs of the sessions whose kill switch is
// on, as the latest risk report says (nil without risk): Risk.KilledSessions,
// which copies no limit.
func (o *Ops) KilledSessions() map[string]bool {
	if o.risk == nil {
		return nil
	}
	return o.risk.KilledSessions()
}

func (o *Ops) handleRiskView(w http.ResponseWriter, r *http.Request) {
	if o.risk == nil {
		refuse(w, http.StatusNotFound, "no_risk", "pre-trade risk is off (no [risk] table)")
		return
	}
	writeJSON(w, http.StatusOK, o.risk.RiskSubjects())
}

func (o *Ops) handleRiskAction(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	if action != "kill" && action != "reset" && action != "limit" {
		refuse(w, http.StatusNotFound, "unknown_action", "unknown risk action %q: kill, reset or limit", action)
		return
	}
	if o.risk == nil {
		refuse(w, http.StatusNotFound, "no_risk", "pre-trade risk is off (no [risk] table)")
		return
	}
	q, ok := o.readRisk(w, r)
	if !ok {
		return
	}
	q.Action, q.Operator = action, operatorOf(r)
	switch {
	case action != "limit" && (q.Limit != "" || q.Value != nil || q.Instrument != ""):
		refuse(w, http.StatusBadRequest, "bad_body", "a %s takes a reason and a session or an account", action)
		return
	// Named as missing: a value left out read as 0 and was refused as
	// "value 0", a limit left out as the unknown limit "".
	case action == "limit" && q.Limit == "":
		refuse(w, http.StatusBadRequest, "no_limit", "name the limit: one of %s", RiskLimitList)
		return
	case action == "limit" && q.Value == nil:
		refuse(w, http.StatusBadRequest, "no_value", "give a value: %s", RiskValueWanted)
		return
	}
	ans, err := o.risk.RiskCommand(q)
	var re *RiskError
	switch {
	case errors.As(err, &re):
		writeJSON(w, re.Status, apiError{Error: re.Reason, Code: re.Code, Seq: uint64(re.Seq), Current: re.Current, Value: re.Value})
	case err != nil:
		writeJSON(w, http.StatusGatewayTimeout, apiError{Error: err.Error(), Code: "timeout"})
	default:
		value := ""
		if q.Value != nil {
			value = q.Value.String()
		}
		o.log.Info("risk action", "action", action, "operator", q.Operator, "reason", q.Reason, "session", q.Session,
			"account", q.Account, "limit", q.Limit, "value", value, "instrument", q.Instrument, "seq", ans.Seq)
		writeJSON(w, http.StatusOK, ans)
	}
}

// readRisk decodes a risk call's body as readAction does an action's.
func (o *Ops) readRisk(w http.ResponseWriter, r *http.Request) (RiskRequest, bool) {
	var q RiskRequest
	if !o.decodeBody(w, r, &q) {
		return q, false
	}
	switch {
	case strings.TrimSpace(q.Reason) == "" || strings.IndexFunc(q.Reason, nonPrintable) >= 0:
		refuse(w, http.StatusBadRequest, "no_reason", "give a reason in printable ASCII: it is journaled with the action and the operator")
	case len(q.Reason) > venue.OperatorReasonLength:
		refuse(w, http.StatusBadRequest, "bad_reason", "reason must be at most %d printable ASCII characters", venue.OperatorReasonLength)
	case (q.Session == "") == (q.Account == ""):
		refuse(w, http.StatusBadRequest, "bad_subject", "name exactly one of session (a CompID) and account")
	default:
		return q, true
	}
	return q, false
}
