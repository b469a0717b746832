package core

import (
	"fmt"
	"sort"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// RiskAccountsMax bounds RiskConfig.Accounts: every session and every
// listed account is a risk subject with a uint16 index (see risk.go).
const RiskAccountsMax = 4096

// RiskLimitMax is the largest limit (about 4.6e18): larger values are
// refused, as riskNone stands for "none" (risk.go).
const RiskLimitMax = riskNone - 1

// RiskLimitRemove is the RiskSetLimit value that removes a limit: a
// subject-wide limit is then none, and a per-instrument one no longer
// overrides the subject's, which governs the instrument again.
const RiskLimitRemove = riskNone

// RiskCellsMax bounds subjects × instruments: each pair is a riskCell of 64
// bytes, reserved at start-up for every instrument the table may hold
// (Config.InstrumentsMax, the configured and the added ones), so the bound
// is 64 MiB.
const RiskCellsMax = 1 << 20

// RiskLimits are the pre-trade limits of one session or account. A zero
// limit is no limit; the configuration refuses negative values (zero cannot
// be written: absent is none). Quantities are units, notionals are price
// ticks × units, as the matcher counts them.
type RiskLimits struct {
	// Per order: the order's total quantity, and its notional (limit price ×
	// quantity; a market order is valued at the far edge of the band).
	MaxOrderQty      int64
	MaxOrderNotional int64
	// Resting orders: how many, and their gross notional (buys + sells,
	// leaves × price).
	MaxOpenOrders   int64
	MaxOpenNotional int64
	// CreditLimit bounds executed buy notional net of sells today plus the
	// notional of open buy orders plus the order's.
	CreditLimit int64
	// MaxPosition bounds the absolute executed net position in each
	// instrument if every open order of the order's side filled.
	MaxPosition int64
	// KillAfterBreaches trips the kill switch at the n-th risk reject of
	// the day; KillAtLoss when the day's loss (risk.go, "Loss") reaches it.
	KillAfterBreaches int64
	KillAtLoss        int64
	// Instruments override MaxOrderQty, MaxOrderNotional and MaxPosition
	// per instrument id.
	Instruments map[uint32]InstrumentRiskLimits
}

// InstrumentRiskLimits are the limits that can differ per instrument.
type InstrumentRiskLimits struct {
	MaxOrderQty      int64
	MaxOrderNotional int64
	MaxPosition      int64
}

// RiskConfig turns pre-trade risk on. Orders carrying a listed account are
// checked against that account's limits; every other order (no account,
// or one not listed) against its session's.
type RiskConfig struct {
	// Sessions applies to every session; SessionOverrides replaces it for
	// some session indexes.
	Sessions         RiskLimits
	SessionOverrides map[uint16]RiskLimits
	// Accounts are the accounts with limits of their own (keys at most
	// AccountLength bytes).
	Accounts map[string]RiskLimits
}

func (c *Config) validateRisk() error {
	r := c.Risk
	if r == nil {
		return nil
	}
	if len(r.Accounts) > RiskAccountsMax {
		return configError("%d risk accounts, at most %d", len(r.Accounts), RiskAccountsMax)
	}
	// The cells are made for instrumentsMax instruments (newRiskState):
	// counted for the configured ones, a few instruments passed with
	// room for 65,535 and made gigabytes of cells.
	if subjects := c.SessionsMax + len(r.Accounts); subjects*c.instrumentsMax() > RiskCellsMax {
		return configError("risk needs %d sessions and accounts × %d instruments cells, at most %d",
			subjects, c.instrumentsMax(), RiskCellsMax)
	}
	known := make(map[uint32]bool, len(c.Instruments))
	for i := range c.Instruments {
		known[c.Instruments[i].ID] = true
	}
	if err := r.Sessions.validate(known); err != nil {
		return configError("risk sessions: %v", err)
	}
	for idx, l := range r.SessionOverrides {
		if int(idx) >= c.SessionsMax {
			return configError("risk limits for session %d, beyond SessionsMax %d", idx, c.SessionsMax)
		}
		if err := l.validate(known); err != nil {
			return configError("risk session %d: %v", idx, err)
		}
	}
	for account, l := range r.Accounts {
		if len(account) == 0 || len(account) > venue.AccountLength {
			return configError("risk account %q must be 1 to %d bytes", account, venue.AccountLength)
		}
		if err := l.validate(known); err != nil {
			return configError("risk account %q: %v", account, err)
		}
	}
	return nil
}

func (l *RiskLimits) validate(known map[uint32]bool) error {
	for _, v := range []struct {
		name string
		v    int64
	}{{"max order qty", l.MaxOrderQty}, {"max order notional", l.MaxOrderNotional}, {"max open orders", l.MaxOpenOrders},
		{"max open notional", l.MaxOpenNotional}, {"credit limit", l.CreditLimit}, {"max position", l.MaxPosition},
		{"kill after breaches", l.KillAfterBreaches}, {"kill at loss", l.KillAtLoss}} {
		if v.v < 0 || v.v > RiskLimitMax {
			return fmt.Errorf("%s %d is outside [0, %d]", v.name, v.v, int64(RiskLimitMax))
		}
	}
	for id, il := range l.Instruments {
		if !known[id] {
			return fmt.Errorf("limits for unknown instrument %d", id)
		}
		for _, v := range []int64{il.MaxOrderQty, il.MaxOrderNotional, il.MaxPosition} {
			if v < 0 || v > RiskLimitMax {
				return fmt.Errorf("instrument %d: limit %d is outside [0, %d]", id, v, int64(RiskLimitMax))
			}
		}
	}
	return nil
}

// riskAccountTable maps an account (NUL-padded, as orders carry it) to its
// subject index: open addressing over the two words, at most half full,
// built once at NewMatcher and never changed.
type riskAccountTable struct {
	keys     [][2]uint64
	subjects []uint16 // 0 marks an empty slot: subject 0 is session 0
	mask     uint64
}

func newRiskAccountTable(accounts []string, firstSubject int) riskAccountTable {
	size := 1
	for size < 2*len(accounts) {
		size <<= 1
	}
	t := riskAccountTable{keys: make([][2]uint64, size), subjects: make([]uint16, size), mask: uint64(size - 1)}
	for i, a := range accounts {
		var key [venue.AccountLength]byte
		copy(key[:], a)
		w := accountWords(&key)
		for j := accountHash(w) & t.mask; ; j = (j + 1) & t.mask {
			if t.subjects[j] == 0 {
				t.keys[j], t.subjects[j] = w, uint16(firstSubject+i)
				break
			}
		}
	}
	return t
}

func accountWords(a *[venue.AccountLength]byte) [2]uint64 {
	var w [2]uint64
	for i := 0; i < 8; i++ {
		w[0] |= uint64(a[i]) << (8 * i)
		w[1] |= uint64(a[8+i]) << (8 * i)
	}
	return w
}

func accountHash(w [2]uint64) uint64 {
	h := (w[0]*0x9E3779B97F4A7C15 ^ w[1]) * 0xC2B2AE3D27D4EB4F
	return h >> 32
}

// lookup returns the subject of a listed account, or false.
func (t *riskAccountTable) lookup(a *[venue.AccountLength]byte) (uint16, bool) {
	if len(t.subjects) == 0 || a[0] == 0 {
		return 0, false
	}
	w := accountWords(a)
	for j := accountHash(w) & t.mask; ; j = (j + 1) & t.mask {
		s := t.subjects[j]
		if s == 0 {
			return 0, false
		}
		if t.keys[j] == w {
			return s, true
		}
	}
}

// sortedAccounts lists the configured accounts in a fixed order, which is
// their subject order (so that a snapshot and a replay agree).
func sortedAccounts(r *RiskConfig) []string {
	names := make([]string, 0, len(r.Accounts))
	for a := range r.Accounts {
		names = append(names, a)
	}
	sort.Strings(names)
	return names
}
