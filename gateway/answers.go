package gateway

import (
	"strconv"
	"time"

	"github.com/quickfixgo/quickfix"

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
// command the session published. It waits at most AnswerOrderWait (a halted
// venue answers nothing more, and the refusal must still go out).
func (g *Gateway) awaitEarlierAnswers(s *session) {
	last := s.lastCmd.Load()
	if last < 0 || g.dispatched.Load() >= last {
		return
	}
	deadline := time.Now().Add(AnswerOrderWait)
	for g.dispatched.Load() < last && time.Now().Before(deadline) {
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
// (OrderID NONE, OrdStatus Rejected, nothing done), echoing the request's fields.
func (g *Gateway) gatewayER(req *quickfix.Message, execType string, echo ...quickfix.Tag) *quickfix.Message {
	m := quickfix.NewMessage()
	m.Header.SetString(35, "8")
	m.Body.SetString(tagOrderID, "NONE")
	copyField(m, req, tagClOrdID)
	m.Body.SetString(tagExecID, g.gatewayExecID())
	m.Body.SetString(tagExecType, execType)
	m.Body.SetString(tagOrdStatus, "8")
	for _, t := range echo {
		copyField(m, req, t)
	}
	m.Body.SetString(tagLeavesQty, "0")
	m.Body.SetString(tagCumQty, "0")
	m.Body.SetString(tagAvgPx, "0")
	return m
}

func (g *Gateway) rejectOrder(s *session, req *quickfix.Message, rej *rejection) {
	g.awaitEarlierAnswers(s)
	m := g.gatewayER(req, "8", tagSymbol, tagSide, tagOrderQty, tagOrdType, tagPrice, tagTimeInForce, tagAccount)
	m.Body.SetString(tagOrdRejReason, strconv.Itoa(rej.ordRejReason))
	m.Body.SetString(tagText, rej.text)
	m.Body.SetString(tagTransactTime, time.Now().UTC().Format("20060102-15:04:05.000"))
	g.metrics.rejects.WithLabelValues("gateway").Inc()
	s.rejects.Add(1)
	s.out.enqueue(m)
}

func (g *Gateway) rejectCancel(s *session, req *quickfix.Message, responseTo venue.CxlRejResponseTo, rej *rejection) {
	g.awaitEarlierAnswers(s)
	m := quickfix.NewMessage()
	m.Header.SetString(35, "9")
	if v, err := req.Body.GetBytes(tagOrderID); err == nil && len(v) > 0 {
		m.Body.SetBytes(tagOrderID, append([]byte(nil), v...))
	} else {
		m.Body.SetString(tagOrderID, "NONE")
	}
	copyField(m, req, tagClOrdID)
	if v, err := req.Body.GetBytes(tagOrigClOrdID); err == nil && len(v) > 0 {
		m.Body.SetBytes(tagOrigClOrdID, append([]byte(nil), v...))
	} else {
		m.Body.SetString(tagOrigClOrdID, "NONE")
	}
	m.Body.SetString(tagOrdStatus, "8")
	m.Body.SetString(tagCxlRejResponseTo, strconv.Itoa(int(responseTo)))
	reason := rej.ordRejReason
	if reason != 0 && reason != 1 && reason != 6 {
		reason = 99
	}
	m.Body.SetString(tagCxlRejReason, strconv.Itoa(reason))
	m.Body.SetString(tagText, rej.text)
	g.metrics.rejects.WithLabelValues("gateway_cancel").Inc()
	s.rejects.Add(1)
	s.out.enqueue(m)
}

func (g *Gateway) rejectMassCancel(s *session, req *quickfix.Message, reason int, text string) {
	g.awaitEarlierAnswers(s)
	m := quickfix.NewMessage()
	m.Header.SetString(35, "r")
	copyField(m, req, tagClOrdID)
	m.Body.SetString(tagOrderID, "NONE")
	copyField(m, req, tagMassCancelRequestType)
	m.Body.SetString(tagMassCancelResponse, "0")
	m.Body.SetString(tagMassCancelRejectRsn, strconv.Itoa(reason))
	m.Body.SetString(tagTotalAffectedOrders, "0")
	m.Body.SetString(tagText, text)
	s.out.enqueue(m)
}

func (g *Gateway) sendUnknownStatus(s *session, req *quickfix.Message, text string) {
	g.awaitEarlierAnswers(s)
	m := g.gatewayER(req, "I", tagSymbol, tagSide, tagOrdStatusReqID)
	m.Body.SetString(tagOrdRejReason, "5")
	m.Body.SetString(tagText, text)
	s.out.enqueue(m)
}

// onSecurityListRequest answers with every instrument (559=4) or one symbol (559=0).
func (g *Gateway) onSecurityListRequest(s *session, req *quickfix.Message) {
	g.awaitEarlierAnswers(s)
	m := quickfix.NewMessage()
	m.Header.SetString(35, "y")
	copyField(m, req, tagSecurityReqID)
	m.Body.SetString(tagSecurityResponseID, g.gatewayExecID())
	typ, _ := req.Body.GetString(tagSecurityListReqType)
	var list []*Instrument
	switch typ {
	case "4":
		for i := range g.cfg.Instruments {
			list = append(list, &g.cfg.Instruments[i])
		}
	case "0":
		sym, _ := req.Body.GetString(tagSymbol)
		if in := g.bySymbol[sym]; in != nil {
			list = append(list, in)
		}
	default:
		m.Body.SetString(tagSecurityRequestResult, "1") // invalid or unsupported request
		m.Body.SetString(tagText, "SecurityListRequestType "+typ+" is not supported (0 and 4 are)")
		s.out.enqueue(m)
		return
	}
	if len(list) == 0 {
		m.Body.SetString(tagSecurityRequestResult, "2") // no instruments found
		s.out.enqueue(m)
		return
	}
	m.Body.SetString(tagSecurityRequestResult, "0")
	m.Body.SetInt(tagTotNoRelatedSym, len(list))
	m.Body.SetString(tagLastFragment, "Y")
	// FIX 4.4 has no MinPriceIncrement (969) in SecurityList, so strict clients
	// would reject it: the tick size travels in the entry's Text.
	group := quickfix.NewRepeatingGroup(tagNoRelatedSym, quickfix.GroupTemplate{
		quickfix.GroupElement(tagSymbol), quickfix.GroupElement(tagRoundLot),
		quickfix.GroupElement(tagMinTradeVol), quickfix.GroupElement(tagText),
	})
	for _, in := range list {
		row := group.Add()
		row.SetString(tagSymbol, in.Symbol)
		row.SetString(tagRoundLot, strconv.FormatInt(in.LotSize, 10))
		row.SetString(tagMinTradeVol, strconv.FormatInt(in.MinQty, 10))
		row.SetString(tagText, "tick size "+in.Tick.String())
	}
	m.Body.SetGroup(group)
	s.out.enqueue(m)
}
