package gateway

import (
	"strconv"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// A session's bound on its open orders (SessionConfig.OpenOrdersMax).
//
// The matcher's order pool (core.Config.OrdersMax) is every session's: at
// its bound each order that could rest is refused, whoever sends it, so one
// session resting orders without end (a runaway algorithm) would leave every
// other firm unable to enter any. Each session's own bound keeps the rest of
// the pool for the others.
//
// The gateway decides it before any command, as a throttle is: nothing of
// it is journaled, so a replay and every replica apply what they applied
// before, and the bound can change between starts. It counts the session's
// orders in the open-order view (openOrders.open, taken as each answer is
// handed over) and those inbound published whose accept or reject the view
// has not taken yet (session.ordersInFlight): an order in flight is counted
// until its answer is, so a session sending faster than its answers come
// back cannot pass its bound. handOver applies the view's changes before it
// lowers the in-flight count, and inbound reads the in-flight count first,
// so an order between the two is counted twice for an instant, never none.
//
// An order counts when it may rest or wait (a limit order, a stop, an
// iceberg, a market order, which waits in a call): IOC and FOK orders
// never hold a slot past their command and pass at the bound.

// countsAgainstBound reports whether an order of this time in force may
// hold a slot of the pool past its command.
func countsAgainstBound(tif venue.TimeInForce) bool {
	return tif != venue.TimeInForceIOC && tif != venue.TimeInForceFOK
}

// openBoundRefused refuses an order of session s (its ClOrdID clOrdID;
// resend: a possible resend) that its OpenOrdersMax does not allow (nil:
// allowed, or not counted). A possible resend of one of the session's live
// orders passes (liveClOrdID).
func (g *Gateway) openBoundRefused(s *session, clOrdID []byte, tif venue.TimeInForce, resend bool) *rejection {
	bound := s.cfg.OpenOrdersMax
	if bound <= 0 || !countsAgainstBound(tif) {
		return nil
	}
	inFlight := s.ordersInFlight.Load() // first: see the comment at the top of this file
	n := inFlight + g.open.open[s.idx].Load()
	if n < int64(bound) {
		return nil
	}
	if resend && g.liveClOrdID(s, clOrdID) {
		return nil
	}
	g.metrics.openBound.Inc()
	return &rejection{ordRejExceedsLimit, OpenOrdersBoundText(n, bound)}
}

// OpenOrdersBoundText is the Text of an order refused at its session's
// OpenOrdersMax: open orders (resting or waiting, with those sent and not
// yet answered) and the bound.
func OpenOrdersBoundText(open int64, bound int) string {
	return "session open-order bound reached: " + strconv.FormatInt(open, 10) +
		" open orders of at most " + strconv.Itoa(bound) +
		" (open_orders_max, this session's own bound, not the venue's capacity); cancel some to enter more"
}

// noteBoundOrder counts order seq of session s in flight, before it is
// published.
func (g *Gateway) noteBoundOrder(s *session, seq uint64, tif venue.TimeInForce) {
	if s.cfg.OpenOrdersMax <= 0 || !countsAgainstBound(tif) {
		return
	}
	s.ordersInFlight.Add(1)
	g.boundOrders.note(seq)
}

// boundAnswered is called by dispatch for the event that answers an order
// (its accept, its reject, or its status for a possible resend): an order
// counted in flight is no longer once the handOver of that event has
// applied the open-order view's changes.
func (g *Gateway) boundAnswered(causeSeq uint64, session uint16) {
	if g.boundOrders.take(causeSeq) {
		g.boundDone = append(g.boundDone, session)
	}
}

// releaseBound lowers the in-flight counts of the orders answered in the
// chunk handed over, after the view took them.
func (g *Gateway) releaseBound() {
	for _, idx := range g.boundDone {
		if s := g.sessionOf(idx); s != nil {
			s.ordersInFlight.Add(-1)
		}
	}
	g.boundDone = g.boundDone[:0]
}

// take reports whether seq was noted, and forgets it: the first answer
// of an order alone takes it.
func (f *fixCommands) take(seq uint64) bool {
	return f != nil && f.slots[seq&f.mask].CompareAndSwap(seq+1, 0)
}
