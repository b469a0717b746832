package gateway

import (
	"strconv"

	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/quickfixgo/quickfix"
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
// the decision is journaled (a possible resend at the bound is asked of the
// matcher by a status request, which changes no state: below), so a replay
// and every replica apply what they applied before, and the bound can
// change between starts. It counts the session's
// orders in the open-order view (openOrders.open, taken as each answer is
// handed over) and those inbound published whose accept or reject the view
// has not taken yet (session.ordersInFlight): an order in flight is counted
// until its answer is, so a session sending faster than its answers come
// back cannot pass its bound. handOver applies the view's changes before it
// lowers the in-flight count, and inbound reads the in-flight count first,
// so an order between the two is counted twice for an instant, never none.
//
// An order counts when it may rest or wait (a limit order, a stop, an
// iceberg, a market order, which waits in a call): IOC and FOK orders,
// and market orders while their instrument trades continuously, never hold
// a slot past their command and pass at the bound (countsAgainstBound).
//
// A possible resend (97=Y or 43=Y) whose ClOrdID the matcher knows adds no
// order: below the bound the matcher answers it with the order's status,
// and at the bound it must too, whether the order is live, ended or still
// in flight (a reject for its ClOrdID would tell the client a working or
// filled order is dead). Only the matcher knows every ClOrdID of the day,
// so at the bound the gateway asks it: the resend becomes an
// OrderStatusRequest by its ClOrdID (askAtBound), a question that changes
// nothing, and the matcher's answer decides. A known order's status is its
// answer, the same report a resend below the bound gets; an unknown
// ClOrdID makes it a new order, and the order is refused at the bound as
// any other (the reject built when it was asked, its count then, kept with
// the session until the answer: boundResend). The question follows the
// session's earlier commands in the ring, so an order the session sent
// and has had no answer to is known by then. A session with
// boundResendsMax resends waiting has the next one refused at once. An
// answer lost at a crash is rebuilt from the journal (rebuild.go) as a
// status request's: an unknown ClOrdID's is the unknown-order report
// (39=8, 103=5), which refuses the order as well, its Text naming no bound.

// countsAgainstBound reports whether order o may hold a slot of the pool
// past its command: not an IOC or FOK, nor a market order while its
// instrument trades continuously (it trades or is cancelled at once). A
// market order sent just before a call begins waits in it uncounted until
// its accept reaches the open-order view, which counts it from then on: the
// bound may be passed by the market orders in flight at a phase change.
func (g *Gateway) countsAgainstBound(o *orderFields) bool {
	if o.tif == venue.TimeInForceIOC || o.tif == venue.TimeInForceFOK {
		return false
	}
	return o.ordType != venue.OrdTypeMarket || g.instrumentStatus(o.inst.ID) != venue.TradingStatusOpen
}

// boundResendsMax bounds a session's possible resends asked of the matcher
// at its bound and waiting for the answer; past it one is refused.
const boundResendsMax = 256

// boundResend is a possible resend asked of the matcher at the bound: its
// status command's seq and the reject it gets if the ClOrdID is unknown.
type boundResend struct {
	cmdSeq int64
	reject *quickfix.Message
}

// openBoundRefused refuses an order of session s that its OpenOrdersMax
// does not allow (nil: allowed, or not counted). ask reports a possible
// resend (resend) the matcher is to be asked about (askAtBound) before the
// reject is given.
func (g *Gateway) openBoundRefused(s *session, counts, resend bool) (rej *rejection, ask bool) {
	bound := s.cfg.OpenOrdersMax
	if bound <= 0 || !counts {
		return nil, false
	}
	inFlight := s.ordersInFlight.Load() // first: see the comment at the top of this file
	n := inFlight + g.open.open[s.idx].Load()
	if n < int64(bound) {
		return nil, false
	}
	rej = &rejection{ordRejExceedsLimit, OpenOrdersBoundText(n, bound)}
	if resend && !s.boundResendsFull() {
		return rej, true
	}
	g.metrics.openBound.Inc()
	return rej, false
}

// askAtBound publishes, for possible resend m (o) of session s at its
// bound, an OrderStatusRequest by its ClOrdID, and keeps rej's reject for
// the answer (onOrderStatus). A throttled resend, or one the ring has no
// room for, is refused as an order is.
func (g *Gateway) askAtBound(s *session, m *quickfix.Message, o *orderFields, rej *rejection, now int64) {
	seq, slot, refused := g.admit(s, nil, &s.orders, s.cfg.OrdersPerSecondReject, "orders", now)
	if refused != nil {
		g.rejectOrder(s, m, refused)
		return
	}
	var c venue.OrderStatusRequest
	_ = c.WrapEncode(slot, 0) // slots are larger than any command
	c.SetSeq(g.cfg.SeqBase + uint64(seq))
	c.SetTimestampNs(now)
	c.SetSessionIdx(s.idx)
	c.SetSide(o.side)
	c.SetInstrumentID(o.inst.ID)
	_ = c.SetClOrdID(o.clOrdID) // lengths checked in parseOrder
	s.rememberBoundResend(int64(g.cfg.SeqBase)+seq, orderReject(m, rej))
	g.publish(s, seq)
	g.metrics.orders.Inc()
}

// boundRefusal delivers, for status answer e, the reject of the possible
// resend asked at the bound that caused it when the matcher did not know
// its ClOrdID, and reports whether it did; a known order's status is the
// answer, and the reject is dropped (outbound's goroutine).
func (g *Gateway) boundRefusal(s *session, e *venue.OrderStatus) bool {
	if s.boundResendsN.Load() == 0 { // a status command of another kind, without a lock
		return false
	}
	m := s.takeBoundResend(int64(e.CauseSeq()))
	if m == nil || e.OrdStatus() != venue.OrdStatusUnknown {
		return false
	}
	g.stampGatewayER(m)
	g.metrics.openBound.Inc()
	g.metrics.rejects.WithLabelValues("gateway").Inc()
	s.rejects.Add(1)
	g.deliver(e.SessionIdx(), m, e.CauseSeq())
	return true
}

// boundResendsFull reports whether session s has boundResendsMax possible
// resends waiting for the matcher's answer. Only its own inbound adds to
// them, so the room it sees stays.
func (s *session) boundResendsFull() bool {
	return s.boundResendsN.Load() >= boundResendsMax
}

func (s *session) rememberBoundResend(cmdSeq int64, reject *quickfix.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.boundResends = append(s.boundResends, boundResend{cmdSeq, reject})
	s.boundResendsN.Store(int32(len(s.boundResends)))
}

// takeBoundResend returns and forgets the reject kept for status command
// cmdSeq (nil: none).
func (s *session) takeBoundResend(cmdSeq int64) *quickfix.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.boundResends {
		if r.cmdSeq == cmdSeq {
			s.boundResends = append(s.boundResends[:i], s.boundResends[i+1:]...)
			s.boundResendsN.Store(int32(len(s.boundResends)))
			return r.reject
		}
	}
	return nil
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
func (g *Gateway) noteBoundOrder(s *session, seq uint64, counts bool) {
	if s.cfg.OpenOrdersMax <= 0 || !counts {
		return
	}
	s.ordersInFlight.Add(1)
	g.boundOrders.note(seq, 0)
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
