package gateway

import (
	"time"

	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"
)

// A possible resend from an earlier trading day (doc.go, "Possible
// resends"). The end of day forgets the day's ClOrdIDs but those of the
// orders still live, so the matcher cannot tell an order or replace sent
// again across it from a new one: booked, the client that resends an order
// that got no answer just across the end of day would have a second order.
// The gateway refuses such a message before any command, so that nothing
// of it is journaled and a replay, and every replica, applies what it
// applied before; it is the one that reads the message's sending times.

// SetDayStart makes ns, the command time of an end of day (the last one
// done, as the start's replay or the last end of day's record has it, or
// one the control plane is writing into the ring), the start of the
// current trading day, unless the gateway knows a later one. The control
// plane moves it on as it writes an end of day's command, before it is
// published (ops.Config.EndOfDayStamped), so that a possible resend taken
// after that, sequenced after the end of day, is judged by the new day;
// outbound moves it on too at every end of day applied.
func (g *Gateway) SetDayStart(ns int64) {
	for {
		old := g.dayStartNs.Load()
		if ns <= old || g.dayStartNs.CompareAndSwap(old, ns) {
			return
		}
	}
}

// onEndOfDay notes an end of day applied as the start of the next trading
// day (outbound's goroutine).
func (g *Gateway) onEndOfDay(e *venue.OperatorResult) {
	if e.Action() == venue.OperatorActionTypeEndOfDay && e.Reason() == venue.RejectReasonNone {
		g.SetDayStart(e.TimestampNs())
	}
}

// resentFromEarlierDay refuses a possible resend (possResend, which the
// caller has checked) clOrdID of
// session s whose original was sent before the current trading day began:
// its OrigSendingTime (122), or its SendingTime (52) without one, before the
// last end of day's command time. One whose ClOrdID is the current one of
// a live order of the session, in the open-order view, that an end of day
// leaves resting (GTC, GTD) passes: it keeps its ClOrdID, and the matcher
// answers it with the order's status, as on the day it was sent. A DAY
// order, or one at the opening or the close, shown live is one the end of
// day expires and whose expiry the view has not taken yet (it is
// durable later): the matcher has forgotten its ClOrdID, and would book
// the resend as a second order. what is "an order" or "a replace", for the
// Text.
func (g *Gateway) resentFromEarlierDay(s *session, m *quickfix.Message, clOrdID []byte, what string) *rejection {
	dayStart := g.dayStartNs.Load()
	if dayStart == 0 {
		return nil
	}
	sent, ok := originalSendingTime(m)
	if !ok || sent.UnixNano() >= dayStart {
		return nil
	}
	if o, live := g.open.find(s.idx, 0, clOrdID); live && o.tif != venue.TimeInForceDay &&
		o.tif != venue.TimeInForceAtTheOpening && o.tif != venue.TimeInForceAtTheClose {
		return nil
	}
	return &rejection{ordRejOther, "possible resend of " + what + " sent before the end of day (" +
		time.Unix(0, dayStart).UTC().Format(sendingTimeLayout) + "): ClOrdID " + string(clOrdID) +
		" is unknown today; send it again as a new message if it is still wanted"}
}

// forgottenAtEndOfDayText is the Text of a status request's unknown-order
// answer once an end of day has run: it forgot the orders that had ended
// by then (core/expiry.go), a DAY order it expired among them, whose
// report a client that logged on again with a reset, after a failover,
// may not have had (README, "Cluster: three replicas").
func forgottenAtEndOfDayText(dayStartNs int64) string {
	return "unknown order: no order has it today; the end of day (" +
		time.Unix(0, dayStartNs).UTC().Format(sendingTimeLayout) + ") forgot the orders ended by then, its DAY orders expired"
}

// sendingTimeLayout is how a Text gives the end of day's time: as FIX
// writes a UTCTimestamp, milliseconds included.
const sendingTimeLayout = "20060102-15:04:05.000"

// originalSendingTime is when the client first sent m: its OrigSendingTime
// (122), or its SendingTime (52) when it has none (a PossResend is a new
// message with the content of one sent before, and need not carry 122).
func originalSendingTime(m *quickfix.Message) (time.Time, bool) {
	if m.Header.Has(tag.OrigSendingTime) {
		if t, err := m.Header.GetTime(tag.OrigSendingTime); err == nil {
			return t, true
		}
	}
	t, err := m.Header.GetTime(tag.SendingTime)
	return t, err == nil
}
