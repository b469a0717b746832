package gateway

import (
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// A cancel or replace that names other characteristics than its order's
// (Side, Symbol, OrdType, TimeInForce, Account, post-only) is refused by
// the matcher with UnsupportedOrderCharacteristic, and its CancelRejected
// carries the order's side and instrument, not the request's. So that the
// OrderCancelReject names the field that differs, as every other refusal
// names its field (README, "FIX"), each session keeps what its latest
// cancels and replaces asked, by command seq, in a ring of
// changeAsksMax; an answer whose request has left the ring (a session with
// more than that many cancels and replaces waiting for their answers) says
// what must match instead (cancelMismatchText, replaceMismatchText).

// changeAsksMax is the number of a session's latest cancels and replaces
// whose asked characteristics are kept for their answers.
const changeAsksMax = 64

// changeAsk is what a cancel or replace asked: the characteristics the
// matcher compares with the order's.
type changeAsk struct {
	cmdSeq       int64
	kept         bool // false: an empty slot, or one taken
	instrumentID uint32
	side         venue.Side
	ordType      venue.OrdType
	tif          venue.TimeInForce
	postOnly     bool
	priceTicks   int64 // Price (44), for a band refusal's Text (bandText)
	accountLen   uint8
	account      [venue.AccountLength]byte
}

// rememberAsk keeps what a cancel or replace asked until its answer (or
// changeAsksMax later cancels and replaces of the session).
func (s *session) rememberAsk(a changeAsk) {
	a.kept = true
	s.mu.Lock()
	s.changeAsks[a.cmdSeq%changeAsksMax] = a
	s.mu.Unlock()
}

// takeAsk returns what the cancel or replace of command cmdSeq asked, if
// it is still kept.
func (s *session) takeAsk(cmdSeq int64) (changeAsk, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &s.changeAsks[cmdSeq%changeAsksMax]
	if !a.kept || a.cmdSeq != cmdSeq {
		return changeAsk{}, false
	}
	found := *a
	*a = changeAsk{}
	return found, true
}

// mismatchText names the first characteristic a refused cancel or replace
// asked that is not its order's, or returns "" when it cannot tell (the
// request is no longer kept, or the order is not in the open-order view,
// or nothing differs: a market order waiting for an uncross, a Price or
// StopPx its type does not take).
func (g *Gateway) mismatchText(e *venue.CancelRejected, s *session) string {
	if s == nil || e.OrderID() == 0 {
		return ""
	}
	a, ok := s.takeAsk(int64(e.CauseSeq()))
	if !ok {
		return ""
	}
	what := "a replace"
	if e.ResponseTo() == venue.CxlRejResponseToCancel {
		what = "a cancel"
	}
	if a.side != e.Side() {
		return what + " must give the order's Side (54) " + string(sideOf(e.Side())) + ", not " + string(sideOf(a.side))
	}
	if a.instrumentID != e.InstrumentID() {
		order, asked := g.byID(e.InstrumentID()), g.byID(a.instrumentID)
		if order != nil && asked != nil {
			return what + " must give the order's Symbol (55) " + order.Symbol + ", not " + asked.Symbol
		}
		return ""
	}
	if e.ResponseTo() == venue.CxlRejResponseToCancel {
		return ""
	}
	o, ok := g.termsOf(e.SessionIdx(), e.OrderID())
	switch {
	case !ok:
		return ""
	case a.ordType != o.ordType:
		return "a replace must keep the order's OrdType (40) " + string(ordTypeOf(o.ordType)) + ", not " + string(ordTypeOf(a.ordType))
	case a.tif != o.tif:
		return "a replace must keep the order's TimeInForce (59; absent is DAY) " + string(timeInForceOf(o.tif)) +
			", not " + string(timeInForceOf(a.tif))
	case a.accountLen > 0 && string(a.account[:a.accountLen]) != string(o.Account()):
		return "a replace must keep the order's Account (1) " + string(o.Account()) + ", not " + string(a.account[:a.accountLen])
	case a.postOnly && !o.postOnly:
		return "a replace cannot add post-only (ExecInst 6): the order was entered without it, and keeps what it was entered with"
	}
	return ""
}

// bandText is the Text of a replace refused for a price outside the band:
// with the band's edges, and naming StopPx when the stop price is the one
// outside, as for a new order (rejectText), which needs the Price the
// replace asked. Without it (the request has left the ring) the Text names
// a price and the band's edges.
func (g *Gateway) bandText(e *venue.CancelRejected, s *session) string {
	ordType, priceTicks := venue.OrdTypeLimit, int64(0)
	if s != nil {
		if a, ok := s.takeAsk(int64(e.CauseSeq())); ok {
			ordType, priceTicks = a.ordType, a.priceTicks
		}
	}
	return g.rejectText(e.Reason(), e.InstrumentID(), ordType, priceTicks)
}
