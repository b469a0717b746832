package gateway

import "github.com/quickfixgo/quickfix"

// LoggedOn reports whether session idx is logged on (false for an unknown index).
func (g *Gateway) LoggedOn(idx uint16) bool {
	if int(idx) >= len(g.sessions) {
		return false
	}
	return g.sessions[idx].loggedOn.Load()
}

// SessionID returns the QuickFIX/Go id of session idx.
func (g *Gateway) SessionID(idx uint16) (quickfix.SessionID, bool) {
	if int(idx) >= len(g.sessions) {
		return quickfix.SessionID{}, false
	}
	return g.sessions[idx].cfg.ID, true
}
