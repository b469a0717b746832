package server

import (
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// seedOpenOrders starts the gateway's open-order view (which answers
// OrderMassStatusRequest) from the books replay rebuilt. It runs before the
// matcher does: the matcher's views may only be read while it is stopped.
func (s *Server) seedOpenOrders() {
	var resting []core.OrderView
	for _, in := range s.instruments {
		resting = s.matcher.BookOrders(in.ID, venue.SideBuy, resting)
		resting = s.matcher.BookOrders(in.ID, venue.SideSell, resting)
	}
	s.gw.Seed(resting)
}
