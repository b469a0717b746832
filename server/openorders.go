package server

import (
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// bookOrders reads every order on the books (both sides of every
// instrument), once for the gateway's open-order view and the control
// plane's monitor, into a slice sized for them: on a cluster's new leader
// this walk is most of the promotion (docs/benchmarks.md, "failover"). It
// runs before the matcher does: the matcher's views may only be read while
// it is stopped.
func (s *Server) bookOrders() []core.OrderView {
	resting := make([]core.OrderView, 0, s.matcher.RestingOrders())
	for _, in := range s.instruments {
		resting = s.matcher.BookOrders(in.ID, venue.SideBuy, resting)
		resting = s.matcher.BookOrders(in.ID, venue.SideSell, resting)
	}
	return resting
}

// seedOpenOrders starts the gateway's open-order view (which answers
// OrderMassStatusRequest) from the books replay rebuilt (bookOrders).
func (s *Server) seedOpenOrders(resting []core.OrderView) {
	s.gw.Seed(resting)
}
