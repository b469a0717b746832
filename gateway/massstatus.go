package gateway

import (
	"slices"
	"strconv"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// OrderMassStatusRequest (AF): one ExecutionReport (150=I) per open order of
// the session, from the gateway's open-order view (openorders.go), each with
// MassStatusReqID (584) and TotNumReports (911), LastRptRequested (912=Y) on
// the last; none open gives one report that says so (OrderID NONE, 911=0).
// A Side (54) restricts the reports to that side's orders; a Side the venue
// has no orders of, or a trading session qualifier (sessionQualifier), is
// refused with a BusinessMessageReject. See "OrderMassStatusRequest" in docs/ARCHITECTURE.md.

// FIX MassStatusReqType (585) values the venue serves.
const (
	massStatusBySecurity = "1"
	massStatusAll        = "7"
)

// massStatusStallMax bounds how long a mass status waits for room in the
// session's outbound queue before it gives up on a client that stopped
// reading (the rest of the reports are not sent; the client asks again).
const massStatusStallMax = 30 * time.Second

// onMassStatus answers an AF, or returns the BusinessMessageReject for one
// the venue cannot serve. Fields the dictionary requires (584, 585) or
// whose values it lists never reach here wrong: QuickFIX/Go answers those
// with a session Reject.
func (g *Gateway) onMassStatus(s *session, req *quickfix.Message) quickfix.MessageRejectError {
	reqID, _ := req.Body.GetString(tag.MassStatusReqID)
	typ, _ := req.Body.GetString(tag.MassStatusReqType)
	var instrumentID uint32
	var sym string
	switch typ {
	case massStatusAll:
	case massStatusBySecurity:
		var err error
		sym, err = req.Body.GetString(tag.Symbol)
		if err != nil || sym == "" {
			// A security named otherwise (a SecurityID) is none of the
			// venue's, as for an order: unknown, the Text naming the field.
			if text := unknownInstrument(req, nil); text != "" {
				return businessReject(businessRejUnknownSecurity, reqID, text)
			}
			return businessReject(businessRejConditionalMissing, reqID, "MassStatusReqType 1 needs a Symbol (55)")
		}
		in := g.bySymbol(sym)
		if in == nil {
			return businessReject(businessRejUnknownSecurity, reqID, "unknown symbol "+sym)
		}
		// Named otherwise too, the security may not be the Symbol's: its
		// orders are not reported for it, as an order naming it so is
		// refused (instrumentTags).
		if text := unknownInstrument(req, []byte(sym)); text != "" {
			return businessReject(businessRejUnknownSecurity, reqID, text)
		}
		instrumentID = in.ID
	default:
		return businessReject(businessRejOther, reqID, "MassStatusReqType "+typ+" is not supported (1 and 7 are)")
	}
	// A qualifier the reports cannot be restricted by is refused, never
	// answered with every order as if it were absent (README, "FIX").
	var side venue.Side // 0: either side
	if b := fieldBytes(req, tag.Side); len(b) > 0 {
		var ok bool
		if side, ok = parseSide(b); !ok {
			return businessReject(businessRejOther, reqID, "unsupported side "+string(b)+": a mass status's Side (54) is 1 (buy) or 2 (sell), or absent for both")
		}
	}
	if text := sessionQualifier(req, []byte(sym), "mass status", "MassStatusReqType"); text != "" {
		return businessReject(businessRejOther, reqID, text)
	}
	if !s.massStatusBusy.CompareAndSwap(false, true) {
		return businessReject(businessRejOther, reqID, "a mass status is still being sent on this session")
	}
	account := fieldBytes(req, tag.Account)
	g.awaitEarlierAnswers(s)
	orders := g.open.snapshot(s.idx, instrumentID, account)
	if side != 0 {
		orders = slices.DeleteFunc(orders, func(o openOrder) bool { return o.side != side })
	}
	if len(orders) == 0 {
		g.noOpenOrders(s, req, reqID)
		s.massStatusBusy.Store(false)
		return nil
	}
	// The reports are streamed from a goroutine of their own: QuickFIX/Go
	// writes a session's messages from the goroutine that runs FromApp, so
	// waiting here for queue room would wait for ourselves.
	go g.streamMassStatus(s, orders, reqID)
	return nil
}

// streamMassStatus writes the reports of a mass status, paced by the
// session's connection (enqueueWait).
func (g *Gateway) streamMassStatus(s *session, orders []openOrder, reqID string) {
	defer s.massStatusBusy.Store(false)
	var b erBuilder
	for i := range orders {
		m := g.massStatusReport(&b, &orders[i], reqID, len(orders), i == len(orders)-1)
		if !s.out.enqueueWait(m, massStatusStallMax) {
			g.log.Warn("mass status stopped: the session is gone or does not read", "session", s.cfg.ID.String(),
				"sent", i, "of", len(orders))
			return
		}
	}
}

// massStatusReport writes the report of one open order.
func (g *Gateway) massStatusReport(b *erBuilder, o *openOrder, reqID string, total int, last bool) *quickfix.Message {
	b.reset(g.byID(o.instrumentID))
	st := ordStatusNew
	if o.cumQty > 0 {
		st = ordStatusPartiallyFilled
	}
	b.uint(tag.OrderID, o.orderID).bytes(tag.ClOrdID, o.ClOrdID()).str(tag.ExecID, g.gatewayExecID()).
		exec(execTypeOrderStatus, st).
		orderCommon(o.side, o.ordType, o.tif, o.priceTicks, o.qty, o.Account()).
		int(tag.LeavesQty, o.leavesQty).int(tag.CumQty, o.cumQty).avgPx(o.cumNotionalTicks, o.cumQty).
		time(tag.TransactTime, g.cfg.Now()).stopPx(o.stopPxTicks).maxFloor(o.maxFloorQty).
		str(tag.MassStatusReqID, reqID).int(tag.TotNumReports, int64(total))
	if o.tif == venue.TimeInForceGTD {
		b.time(tag.ExpireTime, o.expireTimeNs)
	}
	if o.postOnly {
		b.str(tag.ExecInst, string(execInstParticipateDontInitiate))
	}
	if last {
		b.str(tag.LastRptRequested, string(fixYes))
	}
	return b.message()
}

// noOpenOrders answers a mass status that matched no open order.
func (g *Gateway) noOpenOrders(s *session, req *quickfix.Message, reqID string) {
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "8")
	m.Body.SetString(tag.OrderID, "NONE")
	m.Body.SetString(tag.ExecID, g.gatewayExecID())
	m.Body.SetString(tag.ExecType, string(execTypeOrderStatus))
	m.Body.SetString(tag.OrdStatus, string(ordStatusRejected))
	sym, _ := req.Body.GetString(tag.Symbol)
	if sym == "" {
		sym = "[N/A]"
	}
	m.Body.SetString(tag.Symbol, sym)
	sd, ok := parseSide(fieldBytes(req, tag.Side))
	if ok {
		m.Body.SetString(tag.Side, string(sideOf(sd)))
	} else {
		m.Body.SetString(tag.Side, string(sideUndisclosed))
	}
	copyField(m, req, tag.Account)
	m.Body.SetString(tag.LeavesQty, "0")
	m.Body.SetString(tag.CumQty, "0")
	m.Body.SetString(tag.AvgPx, "0")
	m.Body.SetString(tag.MassStatusReqID, reqID)
	m.Body.SetString(tag.TotNumReports, "0")
	m.Body.SetString(tag.LastRptRequested, string(fixYes))
	m.Body.SetString(tag.Text, "no open orders")
	m.Body.SetString(tag.TransactTime, time.Unix(0, g.cfg.Now()).UTC().Format("20060102-15:04:05.000"))
	s.out.enqueue(m)
}

// businessReject is a BusinessMessageReject (35=j) for the request, with its
// ID as BusinessRejectRefID (379).
func businessReject(reason businessRejectReason, refID, text string) quickfix.MessageRejectError {
	n, _ := strconv.Atoi(string(reason))
	return quickfix.NewBusinessMessageRejectErrorWithRefID(text, n, refID, nil)
}

// Backlogger is what a Pacer may also tell: whether a session's connection
// has more than half its outbound bounds waiting for the client (the FIX
// edge closes a connection that reaches them).
type Backlogger interface {
	Backlogged(id quickfix.SessionID) bool
}

// Closer is what a Pacer may also tell: whether the session's connection
// has been closed (its socket is, though QuickFIX/Go may not have seen it
// yet: it runs a resend before it reads the disconnect).
type Closer interface {
	Closed(id quickfix.SessionID) bool
}

// massStatusWindowMax bounds the reports of a mass status waiting in the
// session's outbound queue at once (a quarter of the queue when that is
// less).
const massStatusWindowMax = 64

// enqueueWait hands a report of a long answer to the session while at most
// a small window of the session's outbound queue is in use (the rest stays
// for the answers outbound hands over meanwhile, whose overflow would
// disconnect the session) and, when the pacer tells (Backlogger), while the
// connection's outbound buffer is at most half full: the window plus that
// half stay below the edge's bounds, so the stream is back-pressure on the
// requesting session, not a disconnect. It reports false when the session
// logged out or stayed that full for stallMax.
func (s *sender) enqueueWait(m *quickfix.Message, stallMax time.Duration) bool {
	const pollWait = 100 * time.Microsecond
	window := max(1, min(massStatusWindowMax, s.queue.max/4))
	deadline := time.Now().Add(stallMax)
	backlog, _ := s.pacer.(Backlogger)
	for s.queue.len() >= window || (backlog != nil && backlog.Backlogged(s.id)) {
		if !s.loggedOn.Load() || time.Now().After(deadline) {
			return false
		}
		select {
		case <-s.done:
			return false
		case <-time.After(pollWait):
		}
	}
	s.enqueue(m)
	return true
}
