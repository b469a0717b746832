package gateway

import (
	"strconv"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Answers decided by the gateway itself, for requests that never became a
// command (unknown symbol, off-tick price, throttled, ring busy, halted venue).
// They carry gateway ExecIDs ("G<start>-<n>", start being Gateway.execEpoch)
// that cannot collide with the matcher's numeric ExecIDs.

// AnswerOrderWait bounds how long a gateway answer waits for the answers to the
// session's earlier commands to go out first.
const AnswerOrderWait = time.Second

// awaitEarlierAnswers keeps a session's answers in the order of its requests:
// a gateway answer waits until outbound has dispatched the answer to the last
// command the session published. It waits at most AnswerOrderWait, and not
// at all once the venue has halted: the earlier commands' answers may never
// come (the halt's TradingSessionStatus told the session they are in doubt),
// and a wait per refusal would hold the session's loop a second for every
// message it sends.
func (g *Gateway) awaitEarlierAnswers(s *session) {
	last := s.lastCmd.Load()
	if last < 0 || g.dispatched.Load() >= last {
		return
	}
	deadline := time.Now().Add(AnswerOrderWait)
	for g.dispatched.Load() < last && time.Now().Before(deadline) && g.halted() == "" {
		time.Sleep(20 * time.Microsecond)
	}
}

func (g *Gateway) gatewayExecID() string {
	return "G" + g.execEpoch + "-" + strconv.FormatUint(g.execSeq.Add(1), 10)
}

func copyField(dst *quickfix.Message, src *quickfix.Message, tag quickfix.Tag) {
	if v, err := src.Body.GetBytes(tag); err == nil && len(v) > 0 {
		dst.Body.SetBytes(tag, append([]byte(nil), v...))
	}
}

// gatewayER starts an ExecutionReport for an order the venue holds nothing of
// (OrderID NONE, OrdStatus Rejected, nothing done), echoing the request's
// fields. A request that gave no Symbol gets Symbol [N/A], as the reports
// of an instrument the venue does not know do (erBuilder.symbol): an
// ExecutionReport's Instrument is required (FIX 4.4), though QuickFIX's
// dictionary leaves Symbol optional within it. Its TransactTime is the
// time of the answer, as every report of the venue has one.
func (g *Gateway) gatewayER(req *quickfix.Message, et execType, echo ...quickfix.Tag) *quickfix.Message {
	m := gatewayERBody(req, et, echo...)
	g.stampGatewayER(m)
	return m
}

// stampGatewayER gives a gateway's ExecutionReport its ExecID and, as the
// time of the answer, its TransactTime.
func (g *Gateway) stampGatewayER(m *quickfix.Message) {
	m.Body.SetString(tag.ExecID, g.gatewayExecID())
	m.Body.SetString(tag.TransactTime, time.Now().UTC().Format("20060102-15:04:05.000"))
}

// gatewayERBody is gatewayER's report without its ExecID and TransactTime
// (stampGatewayER).
func gatewayERBody(req *quickfix.Message, et execType, echo ...quickfix.Tag) *quickfix.Message {
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "8")
	m.Body.SetString(tag.OrderID, "NONE")
	copyField(m, req, tag.ClOrdID)
	m.Body.SetString(tag.ExecType, string(et))
	m.Body.SetString(tag.OrdStatus, string(ordStatusRejected))
	for _, t := range echo {
		copyField(m, req, t)
	}
	if !m.Body.Has(tag.Symbol) {
		m.Body.SetString(tag.Symbol, "[N/A]")
	}
	m.Body.SetString(tag.LeavesQty, "0")
	m.Body.SetString(tag.CumQty, "0")
	m.Body.SetString(tag.AvgPx, "0")
	return m
}

func (g *Gateway) rejectOrder(s *session, req *quickfix.Message, rej *rejection) {
	g.awaitEarlierAnswers(s)
	m := orderReject(req, rej)
	g.stampGatewayER(m)
	g.metrics.rejects.WithLabelValues("gateway").Inc()
	s.rejects.Add(1)
	s.out.enqueue(m)
}

// orderReject is the gateway's reject of order req for rej, but for its
// ExecID and TransactTime (stampGatewayER).
func orderReject(req *quickfix.Message, rej *rejection) *quickfix.Message {
	m := gatewayERBody(req, execTypeRejected, tag.Symbol, tag.Side, tag.OrderQty, tag.OrdType, tag.Price, tag.StopPx, tag.TimeInForce, tag.Account, tag.MaxFloor, tag.ExecInst)
	if string(fieldBytes(req, tag.TimeInForce)) == string(timeInForceGTD) {
		// FIX 4.4 requires a GTD report's ExpireTime unless it has an
		// ExpireDate: the order's, as its matcher's reject echoes it
		// (postonly.go). The session layer checked ExpireTime's format,
		// not ExpireDate's (a LocalMktDate is a string to QuickFIX/Go),
		// which is echoed only when it is a date: a validating client
		// may refuse another.
		copyField(m, req, tag.ExpireTime)
		if d := fieldBytes(req, tag.ExpireDate); d != nil {
			if _, err := time.Parse("20060102", string(d)); err == nil {
				copyField(m, req, tag.ExpireDate)
			}
		}
	}
	m.Body.SetInt(tag.OrdRejReason, int(rej.reason))
	m.Body.SetString(tag.Text, rej.text)
	return m
}

// rejectCancel answers a cancel or replace the gateway refuses with an
// OrderCancelReject. Its OrdStatus is the order's status after the reject
// (FIX 4.4): the
// open-order view's, which holds the answers to the session's earlier
// commands once awaitEarlierAnswers returns, with its OrderID; Rejected
// only for an order the view does not hold. An OrigClOrdID a replace has
// superseded finds its order as the matcher's does (core/cancel.go,
// locate), and the Text says so after the refusal's own (supersededNote).
// An order ended today is named too, with its final status (filled,
// cancelled, expired), as the matcher's too-late reject names it: the
// view remembers the day's ended orders (findEnded); 37=NONE 39=8 told the
// client its order had never been.
func (g *Gateway) rejectCancel(s *session, req *quickfix.Message, responseTo venue.CxlRejResponseTo, rej *rejection) {
	g.awaitEarlierAnswers(s)
	field := func(t quickfix.Tag) []byte { return append([]byte(nil), fieldBytes(req, t)...) }
	orderID, status := field(tag.OrderID), ordStatusRejected
	reason, text := cxlRejReasonOfOrd(rej.reason), rej.text
	id, _ := strconv.ParseUint(string(orderID), 10, 64)
	known := false
	if o, superseded, ok := g.open.findNamed(s.idx, id, fieldBytes(req, tag.OrigClOrdID)); ok {
		if superseded {
			text += supersededNote
		}
		orderID, status, known = strconv.AppendUint(nil, o.orderID, 10), ordStatusNew, true
		if o.cumQty > 0 {
			status = ordStatusPartiallyFilled
		}
	} else if ended, final, ok := g.open.findEnded(s.idx, id, fieldBytes(req, tag.OrigClOrdID)); ok {
		orderID, status, known = strconv.AppendUint(nil, ended, 10), ordStatusOf(final), true
	}
	if known && reason == cxlRejUnknownOrder {
		// The order is known (its OrderID and status are given): an
		// unknown Symbol is a field that is not the order's, 99 as the
		// matcher answers another instrument's symbol, not 1, which
		// would contradict them.
		reason = cxlRejOther
	}
	m := cancelReject(orderID, field(tag.ClOrdID), field(tag.OrigClOrdID), status,
		cxlRejResponseToOf(responseTo), reason, text)
	g.metrics.rejects.WithLabelValues("gateway_cancel").Inc()
	s.rejects.Add(1)
	s.out.enqueue(m)
}

// supersededNote ends the Text of a refusal of the gateway's whose
// OrigClOrdID a replace has superseded: the client is told, as the
// matcher's reject of one tells it (replacedOrigText), that the order
// lives under its current ClOrdID.
const supersededNote = "; and OrigClOrdID (41) names an order since replaced: give its current ClOrdID"

// cancelReject builds an OrderCancelReject (9), for a refusal the gateway
// decided and for one the matcher did. An OrderID or OrigClOrdID the
// request did not give is NONE (both are required); an absent ClOrdID stays
// absent. The message keeps the byte slices it is given.
func cancelReject(orderID, clOrdID, origClOrdID []byte, status ordStatus, responseTo cxlRejResponseTo,
	reason cxlRejReason, text string) *quickfix.Message {
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "9")
	m.Body.SetBytes(tag.OrderID, orNone(orderID))
	if len(clOrdID) > 0 {
		m.Body.SetBytes(tag.ClOrdID, clOrdID)
	}
	m.Body.SetBytes(tag.OrigClOrdID, orNone(origClOrdID))
	m.Body.SetString(tag.OrdStatus, string(status))
	m.Body.SetString(tag.CxlRejResponseTo, string(responseTo))
	m.Body.SetInt(tag.CxlRejReason, int(reason))
	m.Body.SetString(tag.Text, text)
	return m
}

// orNone is v, or NONE when v is empty.
func orNone(v []byte) []byte {
	if len(v) == 0 {
		return []byte("NONE")
	}
	return v
}

func (g *Gateway) rejectMassCancel(s *session, req *quickfix.Message, reason massCancelRejectReason, text string) {
	g.awaitEarlierAnswers(s)
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "r")
	copyField(m, req, tag.ClOrdID)
	m.Body.SetString(tag.OrderID, "NONE")
	copyField(m, req, tag.MassCancelRequestType)
	m.Body.SetString(tag.MassCancelResponse, string(massCancelResponseRejected))
	m.Body.SetInt(tag.MassCancelRejectReason, int(reason))
	m.Body.SetString(tag.TotalAffectedOrders, "0")
	m.Body.SetString(tag.Text, text)
	s.out.enqueue(m)
}

func (g *Gateway) sendUnknownStatus(s *session, req *quickfix.Message, text string) {
	g.awaitEarlierAnswers(s)
	m := g.gatewayER(req, execTypeOrderStatus, tag.Symbol, tag.Side, tag.OrdStatusReqID)
	m.Body.SetInt(tag.OrdRejReason, int(ordRejUnknownOrder))
	m.Body.SetString(tag.Text, text)
	s.out.enqueue(m)
}
