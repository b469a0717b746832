package config

import (
	"fmt"
	"maps"
	"slices"
)

// Session kinds.
const (
	// KindOrder is an ordinary trading session (the default).
	KindOrder = "order"
	// KindDropCopy is a session that enters no orders and receives a copy
	// of every ExecutionReport of the sessions and accounts it is granted
	// (copy_sessions by client CompID, copy_accounts by Account, or
	// copy_all). See README.md, "Drop copy".
	KindDropCopy = "dropcopy"
)

// IsDropCopy reports whether the session is a drop-copy session.
func (s *Session) IsDropCopy() bool { return s.Kind == KindDropCopy }

// validateDropCopy checks the kinds and grants of every session: a grant
// names an order session that exists, a drop-copy session is granted
// something, and an order session is granted nothing.
func (c *Config) validateDropCopy() []error {
	var errs []error
	orderSessions := map[string]bool{}
	for i := range c.Sessions {
		if !c.Sessions[i].IsDropCopy() {
			orderSessions[c.Sessions[i].CompID] = true
		}
	}
	for i := range c.Sessions {
		s := &c.Sessions[i]
		key := fmt.Sprintf("session[%d]", i)
		switch s.Kind {
		case "", KindOrder:
			if len(s.CopySessions) > 0 || len(s.CopyAccounts) > 0 || s.CopyAll {
				errs = append(errs, fmt.Errorf("%s: copy_sessions, copy_accounts and copy_all need kind = %q", key, KindDropCopy))
			}
			continue
		case KindDropCopy:
		default:
			errs = append(errs, fmt.Errorf("%s.kind: %q is not %q or %q", key, s.Kind, KindOrder, KindDropCopy))
			continue
		}
		if len(s.CopySessions) == 0 && len(s.CopyAccounts) == 0 && !s.CopyAll {
			errs = append(errs, fmt.Errorf("%s: a drop-copy session needs copy_sessions, copy_accounts or copy_all", key))
		}
		// A grant given twice is refused as a typo: an account given twice
		// sent the session two copies of each of its reports.
		granted := map[string]bool{}
		for _, comp := range s.CopySessions {
			if !orderSessions[comp] {
				errs = append(errs, fmt.Errorf("%s.copy_sessions: %q is not the CompID of an order session", key, comp))
			} else if granted[comp] {
				errs = append(errs, fmt.Errorf("%s.copy_sessions: %q appears twice", key, comp))
			}
			granted[comp] = true
		}
		errs = append(errs, accountListErrors(key+".copy_accounts", s.CopyAccounts)...)
	}
	return errs
}

// AccountBytesMax is the longest Account the venue carries (the schema's
// Account type, schemas/venue.xml).
const AccountBytesMax = 16

// UnlistedAccounts are the accounts that carry something past a session,
// limits ([[risk.account]]) or a drop-copy grant (copy_accounts), that no
// session lists in its accounts: any session may name them, trading on
// their limits, tripping their kill switch and feeding their drop copy
// (README, "Accounts"). Sorted, each once; the venue warns of them at start.
func (c *Config) UnlistedAccounts() []string {
	listed := map[string]bool{}
	for i := range c.Sessions {
		for _, a := range c.Sessions[i].Accounts {
			listed[a] = true
		}
	}
	unlisted := map[string]bool{}
	if c.Risk != nil {
		for _, ra := range c.Risk.Account {
			if !listed[ra.Name] {
				unlisted[ra.Name] = true
			}
		}
	}
	for i := range c.Sessions {
		for _, a := range c.Sessions[i].CopyAccounts {
			if !listed[a] {
				unlisted[a] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(unlisted))
}
