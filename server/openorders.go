package server

import (
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
)

// bookOrders reads every live order (core.Matcher.OpenOrders of every
// instrument: books, market orders waiting for an uncross, untriggered
// stops), once for the gateway's open-order view and the control plane's
// monitor. A cluster's new leader does not: its follower kept both from the
// events (cluster.go, standbyViews). It runs before the matcher does: the
// matcher's views may only be read while it is stopped.
func (s *Server) bookOrders() []core.OrderView { return openOrdersOf(s.matcher, s.instruments) }

// openOrdersOf is every live order of the instruments, in a slice sized for them.
func openOrdersOf(m *core.Matcher, instruments []config.Instrument) []core.OrderView {
	resting := make([]core.OrderView, 0, m.RestingOrders()+m.WaitingStops())
	for _, in := range instruments {
		resting = m.OpenOrders(in.ID, resting)
	}
	return resting
}

// seedOpenOrders starts the gateway's open-order view (which answers
// OrderMassStatusRequest) from the books replay rebuilt (bookOrders), the
// ClOrdIDs replaces took from those orders, which still name them, and
// those of the orders ended today, which name them until the end of day.
func (s *Server) seedOpenOrders(resting []core.OrderView) {
	s.gw.Seed(resting)
	s.gw.SeedSuperseded(s.matcher.SupersededClOrdIDs(nil))
	s.gw.SeedEnded(s.matcher.EndedClOrdIDs(nil))
}
