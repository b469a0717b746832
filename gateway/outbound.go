package gateway

import (
	"encoding/binary"
	"strconv"
	"time"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// DurableWaiter tells outbound when commands are durable (pipeline.Pipeline).
type DurableWaiter interface {
	// WaitDurable blocks until command seq is durable or timeout passes.
	WaitDurable(seq int64, timeout time.Duration) bool
}

// durableWaitStep bounds one wait for durability; outbound waits again after
// it (a slow disk delays answers, it never lets one through early).
const durableWaitStep = time.Second

// buildAheadMax bounds how many events outbound turns into FIX messages
// before it waits for their durability and hands them over (the answers held
// meanwhile live in Gateway.held, allocated once at this size).
const buildAheadMax = 256

// heldAnswer is a FIX message built from an event whose command may not be
// durable yet: it is handed to its session only after the wait.
type heldAnswer struct {
	idx        uint16
	m          *quickfix.Message
	receivedNs int64
}

// RunOutbound consumes the event ring until the barrier is alerted. It turns
// up to buildAheadMax events into FIX messages while their commands are being
// made durable (building an answer is invisible to clients, and this takes it
// off the path between the fdatasync and the socket), then waits until the
// last of those commands is durable and hands the messages to their
// sessions' senders, in event order. own is this consumer's sequence, a
// gating sequence of the event ring.
func (g *Gateway) RunOutbound(events *ring.Ring, barrier *ring.Barrier, own *ring.Sequence, durable DurableWaiter) error {
	next := own.Load() + 1
	for {
		avail, err := barrier.WaitFor(next)
		if err != nil {
			return err
		}
		for next <= avail {
			end := min(avail, next+buildAheadMax-1)
			last := events.Slot(end)
			if ts := timestampOf(last); ts > 0 {
				g.metrics.eventAge.Observe(float64(g.cfg.Now()-ts) / 1e9)
			}
			for s := next; s <= end; s++ {
				g.dispatch(events.Slot(s))
			}
			// Events come in command order: waiting once for the last
			// event's command covers every message built above.
			if !g.waitDurable(causeOf(last), durable, barrier) {
				// Alerted before the commands became durable (the journal
				// failed, or shutdown ran out of time): these answers must
				// never leave, as no client may hear of a command before it
				// is durable.
				g.releaseHeld()
				return ring.ErrAlerted
			}
			g.handOver()
			g.dispatched.Store(causeOf(last))
			own.Store(end)
			// The next chunk may wait for durability before this loop's
			// next WaitFor: wake the matcher now if it waits for the space
			// just freed.
			events.Wake()
			next = end + 1
		}
	}
}

// handOver gives every held answer to its session, in event order.
func (g *Gateway) handOver() {
	now := g.cfg.Now()
	for i := range g.held {
		a := &g.held[i]
		if s := g.sessionOf(a.idx); s != nil {
			if a.receivedNs > 0 {
				g.metrics.roundTrip.Observe(float64(now-a.receivedNs) / 1e9)
				if g.cfg.OrderToER != nil {
					g.cfg.OrderToER.Record(now - a.receivedNs)
				}
			}
			s.out.enqueue(a.m)
		}
	}
	g.releaseHeld()
}

// releaseHeld empties the held answers, dropping their references.
func (g *Gateway) releaseHeld() {
	clear(g.held)
	g.held = g.held[:0]
}

// causeOf reads an event's causeSeq: every event's block starts with it
// (schemas/venue.xml), so it is read without decoding the whole event.
func causeOf(slot []byte) int64 {
	return int64(binary.LittleEndian.Uint64(slot[venue.MessageHeaderSize:]))
}

// timestampOf reads an event's timestampNs (the FIX arrival stamp of its
// command), the field after causeSeq in every event's block.
func timestampOf(slot []byte) int64 {
	return int64(binary.LittleEndian.Uint64(slot[venue.MessageHeaderSize+8:]))
}

// waitDurable blocks until command cause is durable and reports true, or
// reports false once the barrier is alerted first.
func (g *Gateway) waitDurable(cause int64, durable DurableWaiter, barrier *ring.Barrier) bool {
	start := time.Now()
	waited := false
	for !durable.WaitDurable(cause, durableWaitStep) {
		waited = true
		if barrier.Alerted() {
			return false
		}
	}
	if waited || time.Since(start) > time.Microsecond {
		g.metrics.durableWaitNs.Observe(time.Since(start).Seconds())
	}
	return true
}

func (g *Gateway) sessionOf(idx uint16) *session {
	if int(idx) < len(g.sessions) {
		return g.sessions[idx]
	}
	return nil
}

// dispatch turns one event into at most one FIX message for its session.
func (g *Gateway) dispatch(slot []byte) {
	tid, err := venue.TemplateIDOf(slot, 0)
	if err != nil {
		g.log.Error("undecodable event", "err", err)
		return
	}
	switch tid {
	case venue.OrderAcceptedTemplateID:
		var e venue.OrderAccepted
		if e.WrapDecode(slot, 0) == nil {
			g.onAccepted(&e)
		}
	case venue.OrderRejectedTemplateID:
		var e venue.OrderRejected
		if e.WrapDecode(slot, 0) == nil {
			g.onRejected(&e)
		}
	case venue.FillTemplateID:
		var e venue.Fill
		if e.WrapDecode(slot, 0) == nil {
			g.onFill(&e)
		}
	case venue.OrderCancelledTemplateID:
		var e venue.OrderCancelled
		if e.WrapDecode(slot, 0) == nil {
			g.onCancelled(&e)
		}
	case venue.OrderReplacedTemplateID:
		var e venue.OrderReplaced
		if e.WrapDecode(slot, 0) == nil {
			g.onReplaced(&e)
		}
	case venue.CancelRejectedTemplateID:
		var e venue.CancelRejected
		if e.WrapDecode(slot, 0) == nil {
			g.onCancelRejected(&e)
		}
	case venue.OrderStatusTemplateID:
		var e venue.OrderStatus
		if e.WrapDecode(slot, 0) == nil {
			g.onOrderStatus(&e)
		}
	case venue.MassCancelReportTemplateID:
		var e venue.MassCancelReport
		if e.WrapDecode(slot, 0) == nil {
			g.onMassCancelReport(&e)
		}
	}
}

func sideChar(s venue.Side) string {
	if s == venue.SideSell {
		return "2"
	}
	return "1"
}

func ordTypeChar(t venue.OrdType) string {
	if t == venue.OrdTypeMarket {
		return "1"
	}
	return "2"
}

func tifChar(t venue.TimeInForce) string { return strconv.Itoa(int(t)) }

// ordStatusChar maps the engine's OrdStatus to FIX 39.
func ordStatusChar(s venue.OrdStatus) string {
	switch s {
	case venue.OrdStatusNew:
		return "0"
	case venue.OrdStatusPartiallyFilled:
		return "1"
	case venue.OrdStatusFilled:
		return "2"
	case venue.OrdStatusCancelled:
		return "4"
	case venue.OrdStatusReplaced:
		return "5"
	case venue.OrdStatusExpired:
		return "C"
	default:
		return "8"
	}
}

// orderCommon writes the order identity fields shared by every report.
func (b *erBuilder) orderCommon(side venue.Side, ordType venue.OrdType, tif venue.TimeInForce, priceTicks, qty int64, account []byte) *erBuilder {
	b.symbol().str(tagSide, sideChar(side)).int(tagOrderQty, qty).str(tagOrdType, ordTypeChar(ordType))
	if ordType == venue.OrdTypeLimit {
		b.price(tagPrice, priceTicks)
	}
	b.str(tagTimeInForce, tifChar(tif))
	b.bytes(tagAccount, account)
	return b
}

// deliver holds m for its session until RunOutbound has waited for
// durability (handOver).
func (g *Gateway) deliver(idx uint16, m *quickfix.Message, receivedNs int64) {
	g.held = append(g.held, heldAnswer{idx: idx, m: m, receivedNs: receivedNs})
}

func (g *Gateway) onAccepted(e *venue.OrderAccepted) {
	b := g.newER(e.InstrumentID())
	b.uint(tagOrderID, e.OrderID()).bytes(tagClOrdID, e.ClOrdID()).uint(tagExecID, e.ExecID()).
		str(tagExecType, "0").str(tagOrdStatus, "0").
		orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
		int(tagLeavesQty, e.LeavesQty()).str(tagCumQty, "0").str(tagAvgPx, "0").time(tagTransactTime, e.TimestampNs())
	if e.TimeInForce() == venue.TimeInForceGTD {
		b.time(tagExpireTime, e.ExpireTimeNs())
	}
	if e.Flags().Has(venue.OrderFlagsPostOnly) {
		b.str(tagExecInst, "6")
	}
	g.metrics.execReports.Inc()
	g.deliver(e.SessionIdx(), b.message(), e.TimestampNs())
}

// RejectText returns the venue's words for a reject reason.
func RejectText(r venue.RejectReason) string {
	switch r {
	case venue.RejectReasonUnknownInstrument:
		return "unknown instrument"
	case venue.RejectReasonInstrumentHalted:
		return "instrument halted: cancels only"
	case venue.RejectReasonInstrumentClosed:
		return "instrument closed"
	case venue.RejectReasonInvalidPriceIncrement:
		return "price is not a multiple of the tick size"
	case venue.RejectReasonPriceOutOfBand:
		return "price outside the instrument's price band"
	case venue.RejectReasonQtyNotLotMultiple:
		return "quantity is not a multiple of the lot size"
	case venue.RejectReasonQtyOutOfRange:
		return "quantity outside the instrument's minimum and maximum"
	case venue.RejectReasonDuplicateClOrdID:
		return "duplicate ClOrdID"
	case venue.RejectReasonUnknownOrder:
		return "unknown order"
	case venue.RejectReasonTooLateToCancel:
		return "too late to cancel: the order is no longer open"
	case venue.RejectReasonUnsupportedOrderCharacteristic:
		return "unsupported order characteristic"
	case venue.RejectReasonCapacityExceeded:
		return "venue capacity exceeded"
	case venue.RejectReasonPostOnlyWouldTake:
		return "post-only order would take liquidity"
	case venue.RejectReasonFokNotFillable:
		return "fill-or-kill order cannot be filled in full"
	case venue.RejectReasonExpireTimeInPast:
		return "expire time is in the past"
	case venue.RejectReasonOrderIDMismatch:
		return "OrderID does not match OrigClOrdID"
	case venue.RejectReasonSystemBusy:
		return "system busy"
	case venue.RejectReasonThrottled:
		return "throttled"
	case venue.RejectReasonTradingHalted:
		return "trading halted"
	}
	return r.String()
}

// ordRejReason maps the engine's reason to FIX OrdRejReason (103).
func ordRejReason(r venue.RejectReason) int {
	switch r {
	case venue.RejectReasonUnknownInstrument:
		return 1
	case venue.RejectReasonInstrumentHalted, venue.RejectReasonInstrumentClosed, venue.RejectReasonTradingHalted:
		return 2
	case venue.RejectReasonUnknownOrder:
		return 5
	case venue.RejectReasonDuplicateClOrdID:
		return 6
	case venue.RejectReasonUnsupportedOrderCharacteristic:
		return 11
	case venue.RejectReasonQtyNotLotMultiple, venue.RejectReasonQtyOutOfRange:
		return 13
	case venue.RejectReasonPriceOutOfBand:
		return 16
	case venue.RejectReasonInvalidPriceIncrement:
		return 18
	case venue.RejectReasonCapacityExceeded:
		return 3
	}
	return 99
}

// cxlRejReason maps the engine's reason to FIX CxlRejReason (102).
func cxlRejReason(r venue.RejectReason) int {
	switch r {
	case venue.RejectReasonTooLateToCancel:
		return 0
	case venue.RejectReasonUnknownOrder:
		return 1
	case venue.RejectReasonDuplicateClOrdID:
		return 6
	}
	return 99
}

func (g *Gateway) onRejected(e *venue.OrderRejected) {
	b := g.newER(e.InstrumentID())
	b.str(tagOrderID, "NONE").bytes(tagClOrdID, e.ClOrdID()).uint(tagExecID, e.ExecID()).
		str(tagExecType, "8").str(tagOrdStatus, "8").
		orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
		str(tagLeavesQty, "0").str(tagCumQty, "0").str(tagAvgPx, "0").
		int(tagOrdRejReason, int64(ordRejReason(e.Reason()))).str(tagText, RejectText(e.Reason())).
		time(tagTransactTime, e.TimestampNs())
	g.metrics.execReports.Inc()
	g.metrics.rejects.WithLabelValues(e.Reason().String()).Inc()
	g.countReject(e.SessionIdx())
	g.deliver(e.SessionIdx(), b.message(), e.TimestampNs())
}

func (g *Gateway) onFill(e *venue.Fill) {
	b := g.newER(e.InstrumentID())
	b.uint(tagOrderID, e.OrderID()).bytes(tagClOrdID, e.ClOrdID()).uint(tagExecID, e.ExecID()).
		str(tagExecType, "F").str(tagOrdStatus, ordStatusChar(e.OrdStatus())).
		orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
		price(tagLastPx, e.LastPriceTicks()).int(tagLastQty, e.LastQty()).
		int(tagLeavesQty, e.LeavesQty()).int(tagCumQty, e.CumQty()).avgPx(e.CumNotionalTicks(), e.CumQty()).
		uint(tagSecondaryExecID, e.TradeID()).time(tagTransactTime, e.TimestampNs())
	if e.Aggressor() == venue.BooleanTypeTrue {
		g.metrics.trades.Inc()
	}
	g.metrics.execReports.Inc()
	g.deliver(e.SessionIdx(), b.message(), e.TimestampNs())
}

// CancelText returns the venue's words for why an order was cancelled.
func CancelText(r venue.CancelReason) string {
	switch r {
	case venue.CancelReasonClient:
		return "cancelled by client"
	case venue.CancelReasonIocRemainder:
		return "IOC remainder cancelled"
	case venue.CancelReasonFokNotFilled:
		return "fill-or-kill order could not be filled in full"
	case venue.CancelReasonSelfTrade:
		return "cancelled by self-trade prevention"
	case venue.CancelReasonMassCancel:
		return "cancelled by mass cancel"
	case venue.CancelReasonDisconnect:
		return "cancelled on disconnect"
	case venue.CancelReasonExpiry:
		return "expired"
	case venue.CancelReasonMarketRemainder:
		return "market order remainder cancelled: no more liquidity within the price band"
	case venue.CancelReasonReplacedToZero:
		return "replaced to a quantity at or below the filled quantity"
	}
	return r.String()
}

func (g *Gateway) onCancelled(e *venue.OrderCancelled) {
	b := g.newER(e.InstrumentID())
	execType := "4"
	switch {
	case e.OrdStatus() == venue.OrdStatusExpired:
		execType = "C"
	case e.Reason() == venue.CancelReasonReplacedToZero:
		// The replace was accepted and ended the order Filled (FIX 4.4
		// Appendix D): ExecType Replaced, OrdStatus Filled, OrderQty = CumQty.
		execType = "5"
	}
	b.uint(tagOrderID, e.OrderID()).bytes(tagClOrdID, e.ClOrdID()).bytes(tagOrigClOrdID, e.OrigClOrdID()).
		uint(tagExecID, e.ExecID()).str(tagExecType, execType).str(tagOrdStatus, ordStatusChar(e.OrdStatus())).
		orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
		str(tagLeavesQty, "0").int(tagCumQty, e.CumQty()).avgPx(e.CumNotionalTicks(), e.CumQty()).
		str(tagText, CancelText(e.Reason())).time(tagTransactTime, e.TimestampNs())
	g.metrics.execReports.Inc()
	g.deliver(e.SessionIdx(), b.message(), e.TimestampNs())
}

func (g *Gateway) onReplaced(e *venue.OrderReplaced) {
	b := g.newER(e.InstrumentID())
	b.uint(tagOrderID, e.OrderID()).bytes(tagClOrdID, e.ClOrdID()).bytes(tagOrigClOrdID, e.OrigClOrdID()).
		uint(tagExecID, e.ExecID()).str(tagExecType, "5").str(tagOrdStatus, ordStatusChar(e.OrdStatus())).
		orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
		int(tagLeavesQty, e.LeavesQty()).int(tagCumQty, e.CumQty()).avgPx(e.CumNotionalTicks(), e.CumQty()).
		time(tagTransactTime, e.TimestampNs())
	if e.PriorityLost() == venue.BooleanTypeTrue {
		b.str(tagText, "replaced: time priority lost")
	} else {
		b.str(tagText, "replaced: time priority kept")
	}
	g.metrics.execReports.Inc()
	g.deliver(e.SessionIdx(), b.message(), e.TimestampNs())
}

func (g *Gateway) onCancelRejected(e *venue.CancelRejected) {
	m := quickfix.NewMessage()
	m.Header.SetString(35, "9")
	if e.OrderID() != 0 {
		m.Body.SetString(tagOrderID, strconv.FormatUint(e.OrderID(), 10))
	} else {
		m.Body.SetString(tagOrderID, "NONE")
	}
	m.Body.SetBytes(tagClOrdID, append([]byte(nil), e.ClOrdID()...))
	orig := e.OrigClOrdID()
	if len(orig) == 0 {
		orig = []byte("NONE")
	}
	m.Body.SetBytes(tagOrigClOrdID, append([]byte(nil), orig...))
	m.Body.SetString(tagOrdStatus, ordStatusChar(e.OrdStatus()))
	m.Body.SetString(tagCxlRejResponseTo, strconv.Itoa(int(e.ResponseTo())))
	m.Body.SetString(tagCxlRejReason, strconv.Itoa(cxlRejReason(e.Reason())))
	m.Body.SetString(tagText, RejectText(e.Reason()))
	g.metrics.rejects.WithLabelValues("cancel_" + e.Reason().String()).Inc()
	g.countReject(e.SessionIdx())
	g.deliver(e.SessionIdx(), m, e.TimestampNs())
}

func (g *Gateway) onOrderStatus(e *venue.OrderStatus) {
	b := g.newER(e.InstrumentID())
	if e.OrdStatus() == venue.OrdStatusUnknown {
		b.str(tagOrderID, "NONE").bytes(tagClOrdID, e.ClOrdID()).uint(tagExecID, e.ExecID()).
			str(tagExecType, "I").str(tagOrdStatus, "8").symbol().str(tagSide, sideChar(e.Side())).
			str(tagLeavesQty, "0").str(tagCumQty, "0").str(tagAvgPx, "0").
			int(tagOrdRejReason, 5).str(tagText, RejectText(venue.RejectReasonUnknownOrder))
	} else {
		b.uint(tagOrderID, e.OrderID()).bytes(tagClOrdID, e.ClOrdID()).uint(tagExecID, e.ExecID()).
			str(tagExecType, "I").str(tagOrdStatus, ordStatusChar(e.OrdStatus())).
			orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
			int(tagLeavesQty, e.LeavesQty()).int(tagCumQty, e.CumQty()).avgPx(e.CumNotionalTicks(), e.CumQty())
	}
	b.time(tagTransactTime, e.TimestampNs())
	if s := g.sessionOf(e.SessionIdx()); s != nil {
		if reqID, ok := s.takeStatusReq(int64(e.CauseSeq())); ok {
			b.str(tagOrdStatusReqID, reqID)
		}
	}
	g.deliver(e.SessionIdx(), b.message(), e.TimestampNs())
}

func (g *Gateway) onMassCancelReport(e *venue.MassCancelReport) {
	m := quickfix.NewMessage()
	m.Header.SetString(35, "r")
	m.Body.SetBytes(tagClOrdID, append([]byte(nil), e.ClOrdID()...))
	m.Body.SetString(tagOrderID, "MC"+strconv.FormatUint(e.CauseSeq(), 10))
	typ := string([]byte{e.MassCancelRequestType()})
	m.Body.SetString(tagMassCancelRequestType, typ)
	if e.Reason() == venue.RejectReasonNone {
		m.Body.SetString(tagMassCancelResponse, typ)
	} else {
		m.Body.SetString(tagMassCancelResponse, "0")
		m.Body.SetString(tagMassCancelRejectRsn, "99")
		m.Body.SetString(tagText, RejectText(e.Reason()))
	}
	m.Body.SetString(tagTotalAffectedOrders, strconv.FormatUint(uint64(e.CancelledCount()), 10))
	if inst := g.byID[e.InstrumentID()]; inst != nil {
		m.Body.SetString(tagSymbol, inst.Symbol)
	}
	if e.Side() != 0 {
		m.Body.SetString(tagSide, sideChar(venue.Side(e.Side())))
	}
	g.deliver(e.SessionIdx(), m, e.TimestampNs())
}
