package gateway

import (
	"strconv"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
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
	idx uint16
	m   *quickfix.Message
	// arrived is, for an answer of a command a FIX message caused
	// (measured), the message's monotonic arrival: its round trip is
	// recorded at the hand-over (roundtrip.go).
	arrived  int64
	measured bool
	reuse    bool // m is from the session's free list (reuse.go)
	// broadcast marks an unsolicited status: it goes only to a session
	// logged on at the hand-over (handsOver).
	broadcast bool
}

// handsOver reports whether a reaches session s at the hand-over. A status
// change is decided here, after applyStatus, not when its event was read: a
// session whose logon completes in between either is logged on now and gets
// the change, or logs on later and its TradingSessionStatusRequest reads
// the new status (docs/ARCHITECTURE.md, "TradingSessionStatusRequest").
func handsOver(a *heldAnswer, s *session) bool {
	return !a.broadcast || s.loggedOn.Load()
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
			if ts := venue.TimestampNsOf(last); ts > 0 {
				// Wall times (the event's is its command's stamp): an age
				// below zero is a clock stepped back, not a figure.
				if age := g.cfg.Now() - ts; age >= 0 {
					g.metrics.eventAge.Observe(float64(age) / 1e9)
				}
			}
			for s := next; s <= end; s++ {
				g.dispatch(events.Slot(s))
			}
			// Events come in command order: waiting once for the last
			// event's command covers every message built above.
			if !g.waitDurable(int64(venue.CauseSeqOf(last)), durable, barrier) {
				// Alerted before the commands became durable (the journal
				// failed, or shutdown ran out of time): these answers must
				// never leave, as no client may hear of a command before it
				// is durable.
				g.releaseHeld()
				return ring.ErrAlerted
			}
			g.handOver()
			g.dispatched.Store(int64(venue.CauseSeqOf(last)))
			own.Store(end)
			// The next chunk may wait for durability before this loop's
			// next WaitFor: wake the matcher now if it waits for the space
			// just freed.
			events.Wake()
			next = end + 1
		}
	}
}

// handOver gives every held answer to its session, in event order. The
// open-order view and the trading statuses take their changes first: the
// commands are durable, and a client that has an answer and then asks for a
// mass status or a trading status must be told a state that includes it.
func (g *Gateway) handOver() {
	if refused := g.open.apply(g.openHeld); refused > 0 {
		g.log.Error("open-order view full: mass status will miss orders", "refused", refused, "max", g.open.max)
	}
	g.releaseBound() // after the view took the orders it counted in flight (openbound.go)
	g.applyStatus()
	now := g.monoNs()
	for i := range g.held {
		a := &g.held[i]
		if s := g.sessionOf(a.idx); s != nil && handsOver(a, s) {
			if a.measured {
				g.metrics.roundTrip.Observe(float64(now-a.arrived) / 1e9)
				if g.cfg.OrderToER != nil {
					g.cfg.OrderToER.Record(now - a.arrived)
				}
			}
			s.out.sendDirect(outMsg{m: a.m, reuse: a.reuse})
		}
	}
	g.releaseHeld()
}

// releaseHeld empties the held answers, dropping their references.
func (g *Gateway) releaseHeld() {
	clear(g.held)
	g.held = g.held[:0]
	g.openHeld = g.openHeld[:0]
	g.statusHeld = g.statusHeld[:0]
	g.boundDone = g.boundDone[:0]
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

// dispatch turns one event into at most one FIX message for its session (a
// trading status change into one for every session, handed to those logged
// on), and notes what the event changes in the open-order view.
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
			g.openAccepted(&e)
			g.boundAnswered(e.CauseSeq(), e.SessionIdx())
		}
	case venue.OrderRejectedTemplateID:
		var e venue.OrderRejected
		if e.WrapDecode(slot, 0) == nil {
			g.onRejected(&e)
			g.boundAnswered(e.CauseSeq(), e.SessionIdx())
		}
	case venue.FillTemplateID:
		var e venue.Fill
		if e.WrapDecode(slot, 0) == nil {
			g.onFill(&e)
			g.openFilled(&e)
		}
	case venue.OrderCancelledTemplateID:
		var e venue.OrderCancelled
		if e.WrapDecode(slot, 0) == nil {
			g.onCancelled(&e)
			g.openCancelled(&e)
		}
	case venue.OrderReplacedTemplateID:
		var e venue.OrderReplaced
		if e.WrapDecode(slot, 0) == nil {
			g.onReplaced(&e)
			g.openReplaced(&e)
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
			g.boundAnswered(e.CauseSeq(), e.SessionIdx())
		}
	case venue.MassCancelReportTemplateID:
		var e venue.MassCancelReport
		if e.WrapDecode(slot, 0) == nil {
			g.onMassCancelReport(&e)
		}
	case venue.TradingStatusChangedTemplateID:
		var e venue.TradingStatusChanged
		if e.WrapDecode(slot, 0) == nil {
			g.onTradingStatusChanged(&e)
		}
	case venue.InstrumentAddedTemplateID:
		var e venue.InstrumentAdded
		if e.WrapDecode(slot, 0) == nil {
			g.onInstrumentAdded(&e)
		}
	case venue.OperatorResultTemplateID:
		var e venue.OperatorResult
		if e.WrapDecode(slot, 0) == nil {
			g.onBandMoved(&e)
			g.onEndOfDay(&e)
			g.openDayEnded(&e)
		}
	case venue.RiskBreachTemplateID:
		var e venue.RiskBreach
		if e.WrapDecode(slot, 0) == nil {
			g.onRiskBreach(&e)
		}
	case venue.RiskControlResultTemplateID:
		var e venue.RiskControlResult
		if e.WrapDecode(slot, 0) == nil {
			g.onRiskControlResult(&e)
		}
	case venue.RiskUtilisationTemplateID:
		var e venue.RiskUtilisation
		if e.WrapDecode(slot, 0) == nil {
			g.onRiskUtilisation(&e)
		}
	case venue.OrderTriggeredTemplateID:
		var e venue.OrderTriggered
		if e.WrapDecode(slot, 0) == nil {
			g.onTriggered(&e)
		}
	case venue.VolatilityInterruptionTemplateID:
		var e venue.VolatilityInterruption
		if e.WrapDecode(slot, 0) == nil {
			g.onVolatilityInterruption(&e)
		}
	case venue.AuctionUncrossedTemplateID:
		var e venue.AuctionUncrossed
		if e.WrapDecode(slot, 0) == nil {
			// Its trades follow in the same command (core, uncross).
			g.uncross.instrumentID, g.uncross.phase, g.uncross.active = e.InstrumentID(), e.Status(), true
		}
	}
}

// orderCommon writes the order identity fields shared by every report.
func (b *erBuilder) orderCommon(side venue.Side, ordType venue.OrdType, tif venue.TimeInForce, priceTicks, qty int64, account []byte) *erBuilder {
	b.symbol().str(tag.Side, string(sideOf(side))).int(tag.OrderQty, qty).str(tag.OrdType, string(ordTypeOf(ordType)))
	if ordType == venue.OrdTypeLimit || ordType == venue.OrdTypeStopLimit {
		b.price(tag.Price, priceTicks)
	}
	b.str(tag.TimeInForce, string(timeInForceOf(tif)))
	b.bytes(tag.Account, account)
	return b
}

// maxFloor writes MaxFloor (111) for an iceberg.
func (b *erBuilder) maxFloor(maxFloorQty int64) *erBuilder {
	if maxFloorQty != 0 {
		b.int(tag.MaxFloor, maxFloorQty)
	}
	return b
}

// stopPx writes StopPx (99) when the event carries one (stop orders).
func (b *erBuilder) stopPx(stopPxTicks int64) *erBuilder {
	if stopPxTicks != 0 {
		b.price(tag.StopPx, stopPxTicks)
	}
	return b
}

// deliver holds m, an answer of command cause, for its session until
// RunOutbound has waited for durability (handOver).
func (g *Gateway) deliver(idx uint16, m *quickfix.Message, cause uint64) {
	arrived, measured := g.fixCommands.arrival(cause)
	g.held = append(g.held, heldAnswer{idx: idx, m: m, arrived: arrived, measured: measured})
}

// deliverER finishes b's report in a message of session idx's free list
// (reuse.go) and holds it like deliver.
func (g *Gateway) deliverER(idx uint16, b *erBuilder, cause uint64) {
	s := g.sessionOf(idx)
	if s == nil {
		g.deliver(idx, b.message(), cause)
		return
	}
	arrived, measured := g.fixCommands.arrival(cause)
	g.held = append(g.held, heldAnswer{idx: idx, m: b.into(s.out.takeReport()), arrived: arrived, measured: measured, reuse: true})
}

func (g *Gateway) onAccepted(e *venue.OrderAccepted) {
	b := g.newER(e.InstrumentID())
	b.uint(tag.OrderID, e.OrderID()).bytes(tag.ClOrdID, e.ClOrdID()).uint(tag.ExecID, e.ExecID()).
		exec(execTypeNew, ordStatusNew).
		orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
		int(tag.LeavesQty, e.LeavesQty()).str(tag.CumQty, "0").str(tag.AvgPx, "0").time(tag.TransactTime, e.TimestampNs()).
		stopPx(e.StopPxTicks()).maxFloor(e.MaxFloorQty())
	if e.TimeInForce() == venue.TimeInForceGTD {
		b.time(tag.ExpireTime, e.ExpireTimeNs())
	}
	if e.Flags().Has(venue.OrderFlagsPostOnly) {
		b.str(tag.ExecInst, string(execInstParticipateDontInitiate))
	}
	g.metrics.execReports.Inc()
	g.deliverER(e.SessionIdx(), b, e.CauseSeq())
}

// onTriggered reports an elected stop. FIX 4.4 has no ExecType for it (the
// later "Triggered or Activated by System" L is not in the dictionary
// clients validate against), so it is a Restated report (150=D,
// ExecRestatementReason 99 Other) of the order, still New, whose Text names
// the trade price that elected it; its fills or rest follow in their own
// reports. LastPx is not set: nothing traded yet.
func (g *Gateway) onTriggered(e *venue.OrderTriggered) {
	b := g.newER(e.InstrumentID())
	b.uint(tag.OrderID, e.OrderID()).bytes(tag.ClOrdID, e.ClOrdID()).uint(tag.ExecID, e.ExecID()).
		exec(execTypeRestated, ordStatusNew).str(tag.ExecRestatementReason, string(restatedOther)).
		orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
		stopPx(e.StopPxTicks()).
		int(tag.LeavesQty, e.LeavesQty()).str(tag.CumQty, "0").str(tag.AvgPx, "0").time(tag.TransactTime, e.TimestampNs())
	if e.TimeInForce() == venue.TimeInForceGTD {
		b.time(tag.ExpireTime, e.ExpireTimeNs())
	}
	b.str(tag.Text, "stop triggered by a trade at "+b.priceText(e.TriggerPriceTicks()))
	g.metrics.execReports.Inc()
	g.deliverER(e.SessionIdx(), b, e.CauseSeq())
}

// rejectText is RejectText with the instrument's limits where they make the
// reason precise (the band's edges for a price outside it). A stop order's
// band reject is its StopPx's when the order has no limit price or one
// inside the band (the matcher checks the limit price first): "price" there
// named a Price the order did not have.
func (g *Gateway) rejectText(r venue.RejectReason, instrumentID uint32, ordType venue.OrdType, priceTicks int64) string {
	in := g.byID(instrumentID)
	if r == venue.RejectReasonPriceOutOfBand && in != nil && in.BandHighTicks > 0 {
		band := " " + string(decimal.FormatTicks(nil, in.BandLowTicks, in.Tick)) + " to " +
			string(decimal.FormatTicks(nil, in.BandHighTicks, in.Tick))
		if core.IsStop(ordType) && (ordType == venue.OrdTypeStop || (priceTicks >= in.BandLowTicks && priceTicks <= in.BandHighTicks)) {
			return stopPxOutOfBandText + band
		}
		return RejectText(r) + band
	}
	return RejectText(r)
}

// stopPxOutOfBandText is PriceOutOfBand's Text for a stop order's StopPx.
const stopPxOutOfBandText = "StopPx (99) outside the instrument's price band"

// RejectText returns the venue's words for a reject reason.
func RejectText(r venue.RejectReason) string {
	switch r {
	case venue.RejectReasonStopPxAtOrThroughMarket:
		return "StopPx is at or through the last trade price: a buy stop must be above it, a sell stop below it"
	case venue.RejectReasonAtTheOpeningOutsideCall:
		return "TimeInForce 2 (at the opening) is accepted only during the opening call or its extension, and not on a stop order"
	case venue.RejectReasonAtTheCloseOutsideCall:
		return "TimeInForce 7 (at the close) is accepted only during the closing call or its extension, and not on a stop order"
	case venue.RejectReasonImmediateInCall:
		return "IOC and FOK orders are not accepted during a call phase: nothing matches until the uncross"
	case venue.RejectReasonMarketNotReplaceable:
		return marketNotReplaceableText
	case venue.RejectReasonStopLimitPriceWrongSide:
		return "stop-limit Price is on the wrong side of StopPx: a buy needs Price >= StopPx, a sell Price <= StopPx"
	case venue.RejectReasonStopPostOnly:
		return "post-only (ExecInst 6) is not allowed on a stop or stop-limit order"
	case venue.RejectReasonMaxFloorAboveQty:
		return "MaxFloor (111) is larger than OrderQty"
	case venue.RejectReasonMaxFloorNotLotMultiple:
		return "MaxFloor (111) is not a multiple of the lot size"
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
		return CapacityText
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
	case venue.RejectReasonRiskLimitExceeded:
		return "order exceeds limit"
	case venue.RejectReasonKillSwitchActive:
		return "kill switch on"
	}
	return r.String()
}

func (g *Gateway) onRejected(e *venue.OrderRejected) {
	text := g.riskText(int64(e.CauseSeq()), e.Reason())
	g.breachAnswered(e.Reason(), e.ClOrdID(), text)
	if text == "" {
		text = g.rejectText(e.Reason(), e.InstrumentID(), e.OrdType(), e.PriceTicks())
	}
	b := g.newER(e.InstrumentID())
	b.str(tag.OrderID, "NONE").bytes(tag.ClOrdID, e.ClOrdID()).uint(tag.ExecID, e.ExecID()).
		exec(execTypeRejected, ordStatusRejected).
		orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
		str(tag.LeavesQty, "0").str(tag.CumQty, "0").str(tag.AvgPx, "0").
		int(tag.OrdRejReason, int64(ordRejReasonOf(e.Reason()))).str(tag.Text, text).
		time(tag.TransactTime, e.TimestampNs())
	// The order as it was asked, as its accept would say (postonly.go).
	echo := g.rejectEchoes.get(e.CauseSeq())
	if echo.postOnly {
		b.str(tag.ExecInst, string(execInstParticipateDontInitiate))
	}
	if echo.gtd && e.TimeInForce() == venue.TimeInForceGTD {
		b.time(tag.ExpireTime, echo.expireNs)
	}
	if echo.stop && core.IsStop(e.OrdType()) {
		b.price(tag.StopPx, echo.stopPxTicks)
	}
	if echo.iceberg {
		b.maxFloor(echo.maxFloorQty)
	}
	g.metrics.execReports.Inc()
	g.metrics.rejects.WithLabelValues(e.Reason().String()).Inc()
	g.countReject(e.SessionIdx())
	g.deliverER(e.SessionIdx(), b, e.CauseSeq())
}

func (g *Gateway) onFill(e *venue.Fill) {
	b := g.newER(e.InstrumentID())
	b.uint(tag.OrderID, e.OrderID()).bytes(tag.ClOrdID, e.ClOrdID()).uint(tag.ExecID, e.ExecID()).
		exec(execTypeTrade, ordStatusOf(e.OrdStatus())).
		orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
		price(tag.LastPx, e.LastPriceTicks()).int(tag.LastQty, e.LastQty()).
		int(tag.LeavesQty, e.LeavesQty()).int(tag.CumQty, e.CumQty()).avgPx(e.CumNotionalTicks(), e.CumQty()).
		uint(tag.SecondaryExecID, e.TradeID()).time(tag.TransactTime, e.TimestampNs())
	g.orderTerms(b, e.SessionIdx(), e.OrderID(), e.TimeInForce(), core.IsStop(e.OrdType()))
	if e.Auction() == venue.BooleanTypeTrue {
		// A trade of an uncross, which names the call phase it ends (the
		// status may be another: a call halted, then resumed).
		phase := g.instrumentStatus(e.InstrumentID())
		if g.uncross.instrumentID == e.InstrumentID() {
			phase = g.uncross.phase
		}
		b.str(tag.TradingSessionSubID, string(auctionSubID(phase)))
		g.metrics.trades.Inc()
	}
	if e.Aggressor() == venue.BooleanTypeTrue {
		g.metrics.trades.Inc()
	}
	g.metrics.execReports.Inc()
	g.deliverER(e.SessionIdx(), b, e.CauseSeq())
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
	case venue.CancelReasonOperator:
		return "cancelled by the venue's operator"
	case venue.CancelReasonKillSwitch:
		return "cancelled by the kill switch"
	case venue.CancelReasonRiskLimit:
		return "market order remainder cancelled: waiting for the volatility auction would pass an open-order risk limit"
	}
	return r.String()
}

// CapacityText is the Text of a reject for the matcher's CapacityExceeded:
// one reason covers its bounds, and the operator's status names the full
// one. They are the whole venue's, shared by every session, which the Text
// says, so that a client does not take it for its session's own bound
// (OpenOrdersBoundText) and wait for its own orders to end.
const CapacityText = "venue capacity exceeded: the whole venue's live orders (every session's), the day's ClOrdIDs or its waiting stops are at the venue's bound (the venue's /v1/status says which)"

// uncrossRemainderText is the Text of a market order left over at an
// uncross (the matcher's reason is MarketRemainder, as in continuous trading).
const uncrossRemainderText = "market order remainder cancelled: nothing left to match it at the uncross"

// cancelText is CancelText, but a market order left over at an uncross says so.
func (g *Gateway) cancelText(e *venue.OrderCancelled) string {
	if e.Reason() == venue.CancelReasonMarketRemainder && g.uncross.active && g.uncross.instrumentID == e.InstrumentID() {
		return uncrossRemainderText
	}
	return CancelText(e.Reason())
}

func (g *Gateway) onCancelled(e *venue.OrderCancelled) {
	b := g.newER(e.InstrumentID())
	et := execTypeCanceled
	switch {
	case e.OrdStatus() == venue.OrdStatusExpired:
		et = execTypeExpired
	case e.Reason() == venue.CancelReasonReplacedToZero:
		// The replace was accepted and ended the order Filled (FIX 4.4
		// Appendix D): ExecType Replaced, OrdStatus Filled, OrderQty = CumQty.
		et = execTypeReplaced
	}
	b.uint(tag.OrderID, e.OrderID()).bytes(tag.ClOrdID, e.ClOrdID()).bytes(tag.OrigClOrdID, e.OrigClOrdID()).
		uint(tag.ExecID, e.ExecID()).exec(et, ordStatusOf(e.OrdStatus())).
		orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
		str(tag.LeavesQty, "0").int(tag.CumQty, e.CumQty()).avgPx(e.CumNotionalTicks(), e.CumQty()).
		str(tag.Text, g.cancelText(e)).time(tag.TransactTime, e.TimestampNs())
	g.orderTerms(b, e.SessionIdx(), e.OrderID(), e.TimeInForce(), core.IsStop(e.OrdType()))
	g.metrics.execReports.Inc()
	g.deliverER(e.SessionIdx(), b, e.CauseSeq())
}

// orderTerms writes what an order is beyond what a Fill or an
// OrderCancelled carries, as its New, Replaced and status reports say it
// (gateway/doc.go): a GTD order's ExpireTime (126) and, with stopPx, a
// stop order's StopPx (99), which FIX 4.4 requires of every report of such
// an order, an iceberg's MaxFloor (111) and a post-only order's ExecInst 6
// (18). They are read from the open-order view, which still holds the
// order while its last report is built: the change that ends it is held
// with that report and applied at the hand-over (handOver). An order
// entered or replaced in the chunk of answers being built is read from its
// held change, as the view has it only once the chunk is handed over. An
// order the view's bound kept out reads as plain (Config.OpenOrdersMax is
// the matcher's OrdersMax, so only a misconfigured view misses one).
func (g *Gateway) orderTerms(b *erBuilder, session uint16, orderID uint64, tif venue.TimeInForce, stopPx bool) {
	o, ok := g.termsOf(session, orderID)
	if !ok {
		return
	}
	if o.expireTimeNs != 0 && tif == venue.TimeInForceGTD {
		b.time(tag.ExpireTime, o.expireTimeNs)
	}
	if stopPx {
		b.stopPx(o.stopPxTicks)
	}
	b.maxFloor(o.maxFloorQty)
	if o.postOnly {
		b.str(tag.ExecInst, string(execInstParticipateDontInitiate))
	}
}

// termsOf returns the order as last entered or replaced: from the held
// changes, latest first, else from the open-order view. A replace's change
// carries no flags (an order keeps the post-only it was entered with), so
// its postOnly is the entry's, held or in the view; a fill's change carries
// none of the terms and is passed over.
func (g *Gateway) termsOf(session uint16, orderID uint64) (openOrder, bool) {
	var o openOrder
	replaced := false
	for i := len(g.openHeld) - 1; i >= 0; i-- {
		c := &g.openHeld[i]
		if c.session != session || c.order.orderID != orderID {
			continue
		}
		switch {
		case c.kind == openEntered && replaced:
			o.postOnly = c.order.postOnly
			return o, true
		case c.kind == openEntered:
			return c.order, true
		case c.kind == openReplaced && !replaced:
			o, replaced = c.order, true
		}
	}
	v, ok := g.open.find(session, orderID, nil)
	if !replaced {
		return v, ok
	}
	o.postOnly = ok && v.postOnly
	return o, true
}

func (g *Gateway) onReplaced(e *venue.OrderReplaced) {
	b := g.newER(e.InstrumentID())
	b.uint(tag.OrderID, e.OrderID()).bytes(tag.ClOrdID, e.ClOrdID()).bytes(tag.OrigClOrdID, e.OrigClOrdID()).
		uint(tag.ExecID, e.ExecID()).exec(execTypeReplaced, ordStatusOf(e.OrdStatus())).
		orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
		int(tag.LeavesQty, e.LeavesQty()).int(tag.CumQty, e.CumQty()).avgPx(e.CumNotionalTicks(), e.CumQty()).
		time(tag.TransactTime, e.TimestampNs()).stopPx(e.StopPxTicks()).maxFloor(e.MaxFloorQty())
	if e.TimeInForce() == venue.TimeInForceGTD {
		b.time(tag.ExpireTime, e.ExpireTimeNs())
	}
	if o, _ := g.termsOf(e.SessionIdx(), e.OrderID()); o.postOnly {
		// A replace keeps post-only (gateway/doc.go): its report says so,
		// as the New did, or the client reads the order as changed.
		b.str(tag.ExecInst, string(execInstParticipateDontInitiate))
	}
	if e.PriorityLost() == venue.BooleanTypeTrue {
		b.str(tag.Text, "replaced: time priority lost")
	} else {
		b.str(tag.Text, "replaced: time priority kept")
	}
	g.metrics.execReports.Inc()
	g.deliverER(e.SessionIdx(), b, e.CauseSeq())
}

// Texts of a cancel or replace refused for naming other characteristics
// than the order's (UnsupportedOrderCharacteristic): FIX 4.4 has only
// CxlRejReason 99 for it, so the Text says what must match.
const (
	cancelMismatchText  = "a cancel must give the order's Side (54) and Symbol (55)"
	replaceMismatchText = "a replace must keep the order's Side (54), Symbol (55), OrdType (40), TimeInForce (59; absent is DAY) " +
		"and Account (1), give Price (44) only to a limit or stop-limit order, StopPx (99) only to a stop " +
		"and post-only (ExecInst 6) only to an order entered post-only; " +
		"a market order waiting for an uncross cannot be replaced"
)

// Texts of a replace of a market order waiting for an uncross
// (MarketNotReplaceable): it has no price to change, and an elected stop
// order waiting so is one, though its reports keep its OrdType 3 (doc.go).
// FIX 4.4 has only CxlRejReason 99 for it. A replace journaled before the
// reason existed was refused UnsupportedOrderCharacteristic, and a report
// rebuilt from it keeps replaceMismatchText.
const (
	marketNotReplaceableText      = "a market order cannot be replaced: it waits for the uncross with no price to change; cancel it instead"
	electedStopNotReplaceableText = "an elected stop order cannot be replaced: it is a market order now, waiting for the uncross with no price to change; cancel it instead"
)

// replacedOrigText is the Text of a cancel or replace whose OrigClOrdID a
// replace has since superseded (CxlRejReason 1, unknown order): the reject
// names the order (OrderID, OrdStatus), and "unknown order" alone
// contradicted them.
const replacedOrigText = "unknown order: OrigClOrdID (41) names an order since replaced; give its current ClOrdID"

// endedOrigText is replacedOrigText for an order that has ended since: its
// OrigClOrdID was replaced, or was a cancel's ClOrdID (core/doc.go,
// "Rules"), and no ClOrdID addresses the order any more. The gateway's own
// requests are answered TooLateToCancel then (core.ReplaceEndedTooLate);
// the reports of requests journaled before it, rebuilt, keep this Text.
const endedOrigText = "unknown order: OrigClOrdID (41) is not the order's current ClOrdID (a replace or a cancel took its place), and the order has ended"

func (g *Gateway) onCancelRejected(e *venue.CancelRejected) {
	text := RejectText(e.Reason())
	if t := g.riskText(int64(e.CauseSeq()), e.Reason()); t != "" {
		text = t
		g.breachAnswered(e.Reason(), e.ClOrdID(), t)
	}
	if e.Reason() == venue.RejectReasonUnknownOrder && e.OrderID() != 0 {
		text = replacedOrigText // the only unknown order the matcher names (core locate)
		if st := e.OrdStatus(); st != venue.OrdStatusNew && st != venue.OrdStatusPartiallyFilled {
			text = endedOrigText
		}
	}
	if e.Reason() == venue.RejectReasonUnsupportedOrderCharacteristic {
		text = replaceMismatchText
		if e.ResponseTo() == venue.CxlRejResponseToCancel {
			text = cancelMismatchText
		}
		if t := g.mismatchText(e, g.sessionOf(e.SessionIdx())); t != "" {
			text = t
		}
	}
	if e.Reason() == venue.RejectReasonPriceOutOfBand {
		text = g.bandText(e, g.sessionOf(e.SessionIdx()))
	}
	if e.Reason() == venue.RejectReasonMarketNotReplaceable {
		if o, ok := g.termsOf(e.SessionIdx(), e.OrderID()); ok && core.IsStop(o.ordType) {
			text = electedStopNotReplaceableText
		}
	}
	var orderID []byte
	if e.OrderID() != 0 {
		orderID = strconv.AppendUint(nil, e.OrderID(), 10)
	}
	m := cancelReject(orderID, append([]byte(nil), e.ClOrdID()...), append([]byte(nil), e.OrigClOrdID()...),
		ordStatusOf(e.OrdStatus()), cxlRejResponseToOf(e.ResponseTo()), cxlRejReasonOf(e.Reason()), text)
	g.metrics.rejects.WithLabelValues("cancel_" + e.Reason().String()).Inc()
	g.countReject(e.SessionIdx())
	g.deliver(e.SessionIdx(), m, e.CauseSeq())
}

func (g *Gateway) onOrderStatus(e *venue.OrderStatus) {
	if s := g.sessionOf(e.SessionIdx()); s != nil && g.boundRefusal(s, e) { // openbound.go
		return
	}
	b := g.newER(e.InstrumentID())
	if e.OrdStatus() == venue.OrdStatusUnknown {
		text := RejectText(venue.RejectReasonUnknownOrder)
		if day := g.dayStartNs.Load(); day != 0 && day <= e.TimestampNs() && e.Reason() == venue.RejectReasonUnknownOrder {
			text = forgottenAtEndOfDayText(day)
		}
		if inst := g.byID(e.InstrumentID()); inst != nil && e.Reason() == venue.RejectReasonUnsupportedOrderCharacteristic { // core.StatusMatchesOrder
			text = statusMismatchText(string(sideOf(e.Side())), inst.Symbol)
		}
		b.str(tag.OrderID, "NONE").bytes(tag.ClOrdID, e.ClOrdID()).uint(tag.ExecID, e.ExecID()).
			exec(execTypeOrderStatus, ordStatusRejected).symbol().str(tag.Side, string(sideOf(e.Side()))).
			str(tag.LeavesQty, "0").str(tag.CumQty, "0").str(tag.AvgPx, "0").
			int(tag.OrdRejReason, int64(ordRejUnknownOrder)).str(tag.Text, text)
	} else {
		b.uint(tag.OrderID, e.OrderID()).bytes(tag.ClOrdID, e.ClOrdID()).uint(tag.ExecID, e.ExecID()).
			exec(execTypeOrderStatus, ordStatusOf(e.OrdStatus())).
			orderCommon(e.Side(), e.OrdType(), e.TimeInForce(), e.PriceTicks(), e.Qty(), e.Account()).
			int(tag.LeavesQty, e.LeavesQty()).int(tag.CumQty, e.CumQty()).avgPx(e.CumNotionalTicks(), e.CumQty()).
			stopPx(e.StopPxTicks()).maxFloor(e.MaxFloorQty())
		// The matcher gives a stop's stop price, a GTD order's expire time,
		// an iceberg's display size and post-only for an order that has
		// ended too, which the open-order view no longer holds (FIX 4.4
		// requires the first two on every report of it; the others say what
		// the order was, as its other reports did).
		if e.TimeInForce() == venue.TimeInForceGTD && e.ExpireTimeNs() != 0 {
			b.time(tag.ExpireTime, e.ExpireTimeNs())
		}
		if e.Flags().Has(venue.OrderFlagsPostOnly) { // as a mass status report says it
			b.str(tag.ExecInst, string(execInstParticipateDontInitiate))
		}
	}
	b.time(tag.TransactTime, e.TimestampNs())
	if s := g.sessionOf(e.SessionIdx()); s != nil {
		if reqID, ok := s.takeStatusReq(int64(e.CauseSeq())); ok {
			b.str(tag.OrdStatusReqID, reqID)
		}
	}
	g.deliverER(e.SessionIdx(), b, e.CauseSeq())
}

func (g *Gateway) onMassCancelReport(e *venue.MassCancelReport) {
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "r")
	m.Body.SetBytes(tag.ClOrdID, append([]byte(nil), e.ClOrdID()...))
	m.Body.SetString(tag.OrderID, "MC"+strconv.FormatUint(e.CauseSeq(), 10))
	typ, done := massCancelRequestBySecurity, massCancelResponseBySecurity
	if e.MassCancelRequestType() == massCancelAll {
		typ, done = massCancelRequestAll, massCancelResponseAll
	}
	m.Body.SetString(tag.MassCancelRequestType, string(typ))
	if e.Reason() == venue.RejectReasonNone {
		m.Body.SetString(tag.MassCancelResponse, string(done))
	} else {
		m.Body.SetString(tag.MassCancelResponse, string(massCancelResponseRejected))
		m.Body.SetInt(tag.MassCancelRejectReason, int(massCancelRejOther))
		m.Body.SetString(tag.Text, RejectText(e.Reason()))
	}
	m.Body.SetString(tag.TotalAffectedOrders, strconv.FormatUint(uint64(e.CancelledCount()), 10))
	if inst := g.byID(e.InstrumentID()); inst != nil {
		m.Body.SetString(tag.Symbol, inst.Symbol)
	}
	if e.Side() != 0 {
		m.Body.SetString(tag.Side, string(sideOf(venue.Side(e.Side()))))
	}
	g.deliver(e.SessionIdx(), m, e.CauseSeq())
}
