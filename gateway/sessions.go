package gateway

import "github.com/quickfixgo/quickfix"

// LoggedOn reports whether session idx is logged on (false for an unknown index).
func (g *Gateway) LoggedOn(idx uint16) bool {
	if int(idx) >= len(g.sessions) {
		return false
	}
	return g.sessions[idx].loggedOn.Load()
}

// LoggedOnSinceStart reports whether session id has logged on to this
// gateway since it was built (false for an unknown session): on a cluster's
// leader, whether its FIX store holds the numbers of this leadership
// (docs/ARCHITECTURE.md, "Cluster", "FIX sessions on a new leader").
func (g *Gateway) LoggedOnSinceStart(id quickfix.SessionID) bool {
	s, ok := g.bySession[id]
	return ok && s.everLoggedOn.Load()
}

// SessionID returns the QuickFIX/Go id of session idx.
func (g *Gateway) SessionID(idx uint16) (quickfix.SessionID, bool) {
	if int(idx) >= len(g.sessions) {
		return quickfix.SessionID{}, false
	}
	return g.sessions[idx].cfg.ID, true
}

// SessionRates are a session's counts over the last second, as its
// throttles see them (a direction without a limit is not counted: 0).
type SessionRates struct {
	MessagesPerSecond, OrdersPerSecond, CancelsPerSecond int
	// Rejects (orders and cancels, by the gateway or the matcher) and
	// ThrottleHits (a throttle's refusals) count since start.
	Rejects, ThrottleHits int64
}

// countReject counts a reject answered to session idx.
func (g *Gateway) countReject(idx uint16) {
	if s := g.sessionOf(idx); s != nil {
		s.rejects.Add(1)
	}
}

// Rates returns session idx's counts over the last second.
func (g *Gateway) Rates(idx uint16) SessionRates {
	if int(idx) >= len(g.sessions) {
		return SessionRates{}
	}
	s := g.sessions[idx]
	now := g.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	return SessionRates{MessagesPerSecond: s.messages.countAt(now), OrdersPerSecond: s.orders.countAt(now),
		CancelsPerSecond: s.cancels.countAt(now), Rejects: s.rejects.Load(), ThrottleHits: s.throttleHits.Load()}
}
