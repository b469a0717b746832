package config

import (
	"fmt"
	"github.com/fixvenue/fixvenue/core"
	"time"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Risk turns on pre-trade risk limits (core/risklimits.go, README "Risk
// limits"). With no [risk] table no figure is kept and no order pays for
// the checks; session kill switches work either way.
//
//	[risk]
//	report_interval = "10s"      # journals a utilisation report at most this often, after a command since the last (the default; at least 10ms)
//	[risk.sessions]              # every session's limits
//	max_order_qty = 10000
//	[[risk.session]]             # one session's, replacing [risk.sessions]
//	comp_id = "CLIENT1"
//	credit_limit = 100000000
//	[[risk.account]]             # an account's (FIX tag 1)
//	name = "FUND1"
//	max_position = 5000
//	[[risk.account.instrument]]  # per-instrument overrides
//	symbol = "ACME"
//	max_position = 1000
//
// Notionals are price ticks × quantity. A limit that is absent is none; a
// limit of 0 or less is refused.
type Risk struct {
	// ControlToken is no longer used: risk calls are on the admin API
	// ([[admin.token]]); a configuration that sets it gets a warning.
	ControlToken   string        `toml:"control_token"`
	ReportInterval Duration      `toml:"report_interval"`
	Sessions       RiskLimits    `toml:"sessions"`
	Session        []RiskSession `toml:"session"`
	Account        []RiskAccount `toml:"account"`
}

// RiskReportIntervalDefault applies when risk.report_interval is unset or "0s".
const RiskReportIntervalDefault = 10 * time.Second

// RiskReportIntervalMin is the shortest risk.report_interval: each report
// is a journaled command (and an event per subject), so "1us" journaled
// about 13 MB a second on an idle venue and kept a CPU busy.
const RiskReportIntervalMin = 10 * time.Millisecond

// ReportEvery is how often the venue journals a risk utilisation report,
// when a command was journaled since the last one: the figures change only
// by commands, so an idle venue journals none.
func (r *Risk) ReportEvery() time.Duration {
	if r.ReportInterval.Duration <= 0 {
		return RiskReportIntervalDefault
	}
	return r.ReportInterval.Duration
}

// RiskLimits are one session's or account's limits (nil: none).
type RiskLimits struct {
	MaxOrderQty       *int64           `toml:"max_order_qty"`
	MaxOrderNotional  *int64           `toml:"max_order_notional"`
	MaxOpenOrders     *int64           `toml:"max_open_orders"`
	MaxOpenNotional   *int64           `toml:"max_open_notional"`
	CreditLimit       *int64           `toml:"credit_limit"`
	MaxPosition       *int64           `toml:"max_position"`
	KillAfterBreaches *int64           `toml:"kill_after_breaches"`
	KillAtLoss        *int64           `toml:"kill_at_loss"`
	Instrument        []RiskInstrument `toml:"instrument"`
}

// RiskInstrument overrides per-instrument limits.
type RiskInstrument struct {
	Symbol           string `toml:"symbol"`
	MaxOrderQty      *int64 `toml:"max_order_qty"`
	MaxOrderNotional *int64 `toml:"max_order_notional"`
	MaxPosition      *int64 `toml:"max_position"`
}

// RiskSession names a session by its CompID.
type RiskSession struct {
	CompID string `toml:"comp_id"`
	RiskLimits
}

// RiskAccount names an account.
type RiskAccount struct {
	Name string `toml:"name"`
	RiskLimits
}

// Value reads an optional limit: 0 when absent.
func Value(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// SessionIndex is the index of the session with this CompID, or -1.
func (c *Config) SessionIndex(compID string) int {
	for i := range c.Sessions {
		if c.Sessions[i].CompID == compID {
			return i
		}
	}
	return -1
}

// InstrumentBySymbol returns the instrument with this symbol, or nil.
func (c *Config) InstrumentBySymbol(symbol string) *Instrument {
	for i := range c.Instruments {
		if c.Instruments[i].Symbol == symbol {
			return &c.Instruments[i]
		}
	}
	return nil
}

func (c *Config) validateRisk() []error {
	r := c.Risk
	if r == nil {
		return nil
	}
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if d := r.ReportInterval.Duration; d < 0 {
		add("risk.report_interval: must not be negative")
	} else if d > 0 && d < RiskReportIntervalMin {
		add("risk.report_interval: %s is below %s (each report is a journaled command; \"0s\" for the default, %s)",
			d, RiskReportIntervalMin, RiskReportIntervalDefault)
	}
	check := func(where string, l *RiskLimits) {
		for _, v := range []struct {
			key string
			p   *int64
		}{{"max_order_qty", l.MaxOrderQty}, {"max_order_notional", l.MaxOrderNotional}, {"max_open_orders", l.MaxOpenOrders},
			{"max_open_notional", l.MaxOpenNotional}, {"credit_limit", l.CreditLimit}, {"max_position", l.MaxPosition},
			{"kill_after_breaches", l.KillAfterBreaches}, {"kill_at_loss", l.KillAtLoss}} {
			if v.p != nil && (*v.p <= 0 || *v.p > core.RiskLimitMax) {
				add("%s.%s: %d is outside [1, %d] (leave it out for no limit)", where, v.key, *v.p, core.RiskLimitMax)
			}
		}
		seen := map[string]bool{}
		for i, in := range l.Instrument {
			w := fmt.Sprintf("%s.instrument[%d]", where, i)
			if c.InstrumentBySymbol(in.Symbol) == nil {
				add("%s: unknown instrument %q", w, in.Symbol)
			}
			if seen[in.Symbol] {
				add("%s: instrument %q appears twice", w, in.Symbol)
			}
			seen[in.Symbol] = true
			// The bounds of the subject's limits, named by key: one over
			// RiskLimitMax passed here and failed the start with the
			// matcher's words, which name neither the key nor the table.
			for _, v := range []struct {
				key string
				p   *int64
			}{{"max_order_qty", in.MaxOrderQty}, {"max_order_notional", in.MaxOrderNotional}, {"max_position", in.MaxPosition}} {
				if v.p != nil && (*v.p <= 0 || *v.p > core.RiskLimitMax) {
					add("%s.%s: %d is outside [1, %d] (leave it out for no limit)", w, v.key, *v.p, core.RiskLimitMax)
				}
			}
		}
	}
	// The matcher's bounds, named by key here before the data directory
	// is touched (config/doc.go, "Limits"): its risk cells, 64 bytes per
	// session or account and instrument the table may hold, are made at
	// start.
	if n := len(r.Account); n > core.RiskAccountsMax {
		add("risk.account: %d accounts, at most %d", n, core.RiskAccountsMax)
	} else if subjects, instruments := len(c.Sessions)+n, c.InstrumentsMax(); subjects*instruments > core.RiskCellsMax {
		add("risk: %d sessions and accounts × %d instruments (engine.instruments_max, else the configured ones + %d) "+
			"need %d risk cells of 64 bytes, at most %d (64 MiB): lower engine.instruments_max",
			subjects, instruments, InstrumentsAddedDefault, subjects*instruments, core.RiskCellsMax)
	}
	check("risk.sessions", &r.Sessions)
	seen := map[string]bool{}
	for i := range r.Session {
		s := &r.Session[i]
		w := fmt.Sprintf("risk.session[%d]", i)
		if idx := c.SessionIndex(s.CompID); idx < 0 {
			add("%s: unknown session comp_id %q", w, s.CompID)
		} else if c.Sessions[idx].IsDropCopy() {
			// Taken, the limits were never checked nor shown (GET /v1/risk
			// lists order sessions; its calls refuse a drop-copy one).
			add("%s.comp_id: %q is a drop-copy session: it enters no orders, so it has no risk limits", w, s.CompID)
		}
		if seen[s.CompID] {
			add("%s: session %q appears twice", w, s.CompID)
		}
		seen[s.CompID] = true
		check(w, &s.RiskLimits)
	}
	seen = map[string]bool{}
	for i := range r.Account {
		a := &r.Account[i]
		w := fmt.Sprintf("risk.account[%d]", i)
		if a.Name == "" || len(a.Name) > venue.AccountLength {
			add("%s: name %q must be 1 to %d characters", w, a.Name, venue.AccountLength)
		}
		if seen[a.Name] {
			add("%s: account %q appears twice", w, a.Name)
		}
		seen[a.Name] = true
		check(w, &a.RiskLimits)
	}
	return errs
}
