package server

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The risk control endpoint (README, "Risk limits"): POST /risk/kill,
// /risk/reset and /risk/limit on the metrics listener, registered only when
// risk.control_token is set and answered only with "Authorization: Bearer
// <token>". Each call is checked against the configuration, journaled as a
// RiskControl or RiskSetLimit command, and answered with the matcher's
// RiskControlResult once the command is durable, so that the audit trail
// and a replay hold every operator action. No admin API existed when this
// was written; one can call the same commands.

// riskResultWait bounds how long a control call waits for its answer.
const riskResultWait = 5 * time.Second

// riskLimitKeys are the limit names of /risk/limit, as in the configuration.
var riskLimitKeys = map[string]venue.RiskLimit{
	"max_order_qty": venue.RiskLimitMaxOrderQty, "max_order_notional": venue.RiskLimitMaxOrderNotional,
	"max_open_orders": venue.RiskLimitMaxOpenOrders, "max_open_notional": venue.RiskLimitMaxOpenNotional,
	"credit_limit": venue.RiskLimitCreditLimit, "max_position": venue.RiskLimitMaxPosition,
	"kill_after_breaches": venue.RiskLimitKillAfterBreaches, "kill_at_loss": venue.RiskLimitKillAtLoss,
}

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

func (s *Server) registerRiskControl(mux *http.ServeMux) {
	if s.cfg.Risk == nil || s.cfg.Risk.ControlToken == "" {
		return
	}
	for _, action := range []string{"kill", "reset", "limit"} {
		mux.HandleFunc("/risk/"+action, func(w http.ResponseWriter, r *http.Request) { s.handleRisk(w, r, action) })
	}
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

func (s *Server) parseRiskRequest(r *http.Request, action string) (riskRequest, error) {
	var q riskRequest
	session, account := r.FormValue("session"), r.FormValue("account")
	switch {
	case (session == "") == (account == ""):
		return q, errors.New("name exactly one of session (a CompID) and account")
	case session != "":
		idx := s.cfg.SessionIndex(session)
		if idx < 0 {
			return q, fmt.Errorf("unknown session %q", session)
		}
		q.scope, q.session = venue.RiskScopeSession, uint16(idx)
	default:
		if len(account) > venue.AccountLength {
			return q, fmt.Errorf("account %q is longer than %d characters", account, venue.AccountLength)
		}
		q.scope, q.account = venue.RiskScopeAccount, account
	}
	if action != "limit" {
		return q, nil
	}
	var ok bool
	if q.limit, ok = riskLimitKeys[r.FormValue("limit")]; !ok {
		return q, fmt.Errorf("unknown limit %q (one of max_order_qty, max_order_notional, max_open_orders, max_open_notional, credit_limit, max_position, kill_after_breaches, kill_at_loss)", r.FormValue("limit"))
	}
	v, err := strconv.ParseInt(r.FormValue("value"), 10, 64)
	if err != nil || v <= 0 {
		return q, fmt.Errorf("value %q must be a positive integer", r.FormValue("value"))
	}
	q.value = v
	if sym := r.FormValue("instrument"); sym != "" {
		in := s.cfg.InstrumentBySymbol(sym)
		if in == nil {
			return q, fmt.Errorf("unknown instrument %q", sym)
		}
		q.instrumentID = in.ID
	}
	return q, nil
}

func (s *Server) handleRisk(w http.ResponseWriter, r *http.Request, action string) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	want := "Bearer " + s.cfg.Risk.ControlToken
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
		http.Error(w, "missing or wrong token", http.StatusUnauthorized)
		return
	}
	q, err := s.parseRiskRequest(r, action)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	seq, slot, err := s.pipe.Commands.Claim()
	if err != nil {
		http.Error(w, "command ring busy: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	abs := s.pipe.SeqBase() + uint64(seq)
	now := time.Now().UnixNano()
	switch action {
	case "limit":
		var c venue.RiskSetLimit
		_ = c.WrapEncode(slot, 0)
		c.SetSeq(abs)
		c.SetTimestampNs(now)
		c.SetSessionIdx(q.session)
		c.SetScope(q.scope)
		c.SetLimit(q.limit)
		c.SetInstrumentID(q.instrumentID)
		c.SetValue(q.value)
		_ = c.SetAccountString(q.account)
	default:
		var c venue.RiskControl
		_ = c.WrapEncode(slot, 0)
		c.SetSeq(abs)
		c.SetTimestampNs(now)
		c.SetSessionIdx(q.session)
		c.SetScope(q.scope)
		c.SetAction(venue.RiskActionKill)
		if action == "reset" {
			c.SetAction(venue.RiskActionReset)
		}
		_ = c.SetAccountString(q.account)
	}
	answer := s.gw.AwaitRiskResult(int64(abs))
	s.pipe.Commands.Publish(seq)
	w.Header().Set("Content-Type", "application/json")
	select {
	case res := <-answer:
		if res.Result != venue.RiskResultApplied.String() {
			w.WriteHeader(http.StatusConflict)
		}
		json.NewEncoder(w).Encode(res)
	case <-time.After(riskResultWait):
		s.gw.ForgetRiskResult(int64(abs))
		w.WriteHeader(http.StatusGatewayTimeout)
		json.NewEncoder(w).Encode(map[string]any{"seq": abs, "error": "no answer yet; the command is journaled"})
	}
}

// runRiskReports journals a utilisation report every interval, which the
// gateway turns into the risk gauges.
func (s *Server) runRiskReports(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stopSnaps:
			return
		case <-t.C:
		}
		seq, slot, err := s.pipe.Commands.Claim()
		if err != nil {
			s.log.Warn("risk report not journaled", "err", err)
			continue
		}
		var c venue.RiskControl
		_ = c.WrapEncode(slot, 0)
		c.SetSeq(s.pipe.SeqBase() + uint64(seq))
		c.SetTimestampNs(time.Now().UnixNano())
		c.SetAction(venue.RiskActionReport)
		s.pipe.Commands.Publish(seq)
	}
}
