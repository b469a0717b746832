package gateway

// Accounts a session may name (README, "Accounts"). An Account (1) is how
// risk limits, kill switches and drop-copy grants reach past a session
// (core/risk.go, dropcopy.go), so an account a session lists is that
// session's: another session naming it would trade on its limits, could
// trip its kill switch (which cancels every order of the account, the other
// session's too) and would have its reports copied to the account's drop
// copy. An order or replace naming an account its session may not is
// refused here, before a command, with OrdRejReason 15 (unknown account);
// the Text is the same for an account another session lists and, from a
// session with a list, for one no session lists, so that a session with a
// list learns nothing of the other sessions' accounts.

// wireAccounts builds each session's accounts and the accounts listed by any.
func (g *Gateway) wireAccounts() {
	for _, s := range g.sessions {
		if len(s.cfg.Accounts) == 0 {
			continue
		}
		s.accounts = make(map[string]bool, len(s.cfg.Accounts))
		if g.listedAccounts == nil {
			g.listedAccounts = map[string]bool{}
		}
		for _, a := range s.cfg.Accounts {
			s.accounts[a] = true
			g.listedAccounts[a] = true
		}
	}
}

// accountRefused is the refusal of an order of s naming account, nil when s
// may name it. An order naming no account is its session's, as ever.
func (g *Gateway) accountRefused(s *session, account []byte) *rejection {
	if len(account) == 0 || g.listedAccounts == nil {
		return nil
	}
	if s.accounts != nil {
		if s.accounts[string(account)] {
			return nil
		}
	} else if !g.listedAccounts[string(account)] {
		return nil
	}
	return &rejection{ordRejUnknownAccount, "Account (1) " + string(account) + " is not one this session may name"}
}
