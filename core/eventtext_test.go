package core

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// eventFormatter renders events as one line of text for golden files and
// failure messages. Prices are shown as decimals of the instrument's tick
// when the instrument is known, else as raw ticks.
type eventFormatter struct {
	symbols map[uint32]string
	ticks   map[uint32]decimal.Tick
}

func newEventFormatter(instruments []InstrumentConfig) *eventFormatter {
	f := &eventFormatter{symbols: map[uint32]string{}, ticks: map[uint32]decimal.Tick{}}
	for _, in := range instruments {
		t, err := decimal.ParseTick(in.TickSize)
		if err != nil {
			panic(err)
		}
		f.symbols[in.ID] = in.Symbol
		f.ticks[in.ID] = t
	}
	return f
}

func (f *eventFormatter) px(instrument uint32, ticks int64) string {
	t, ok := f.ticks[instrument]
	if !ok {
		return fmt.Sprintf("%dt", ticks)
	}
	return string(decimal.FormatTicks(nil, ticks, t))
}

func (f *eventFormatter) sym(instrument uint32) string {
	if s, ok := f.symbols[instrument]; ok {
		return s
	}
	return fmt.Sprintf("instr=%d", instrument)
}

// orderText is the common head of order events.
func (f *eventFormatter) orderText(b *strings.Builder, e interface {
	InstrumentID() uint32
	Side() venue.Side
	OrdType() venue.OrdType
	TimeInForce() venue.TimeInForce
}) {
	fmt.Fprintf(b, " %s %s %s %s", f.sym(e.InstrumentID()), lower(e.Side().String()), lower(e.OrdType().String()),
		lower(e.TimeInForce().String()))
}

func lower(s string) string { return strings.ToLower(s) }

// optIceberg prints an iceberg's display size, and the displayed quantity
// when it is not the leaves.
func optIceberg(b *strings.Builder, maxFloorQty, displayQty, leavesQty int64) {
	if maxFloorQty != 0 {
		fmt.Fprintf(b, " floor=%d", maxFloorQty)
	}
	if displayQty != leavesQty {
		fmt.Fprintf(b, " show=%d", displayQty)
	}
}

// optStop prints a stop price when there is one.
func optStop(b *strings.Builder, f *eventFormatter, instrument uint32, stopPxTicks int64) {
	if stopPxTicks != 0 {
		fmt.Fprintf(b, " stop=%s", f.px(instrument, stopPxTicks))
	}
}

// optExpire prints a GTD order's expiry when there is one.
func optExpire(b *strings.Builder, expireTimeNs int64) {
	if expireTimeNs != 0 {
		fmt.Fprintf(b, " exp=%d", expireTimeNs)
	}
}

// orderIdent starts the text of a report on one order: its name, the
// session and ClOrdID, the OrderID and the ExecID.
func orderIdent(b *strings.Builder, name string, e interface {
	SessionIdx() uint16
	ClOrdID() []byte
	OrderID() uint64
	ExecID() uint64
}) {
	fmt.Fprintf(b, "%s s=%d id=%s order=%d exec=%d", name, e.SessionIdx(), e.ClOrdID(), e.OrderID(), e.ExecID())
}

// boolText is yes when v is true, else no.
func boolText(v venue.BooleanType, yes, no string) string {
	if v == venue.BooleanTypeTrue {
		return yes
	}
	return no
}

func optAccount(b *strings.Builder, account []byte) {
	if len(account) > 0 {
		fmt.Fprintf(b, " acct=%s", account)
	}
}

// eventCause returns the causeSeq and timestampNs of any event: every event
// block starts with those two fields.
func eventCause(ev []byte) (causeSeq uint64, timestampNs int64) {
	causeSeq = binary.LittleEndian.Uint64(ev[venue.MessageHeaderSize:])
	timestampNs = int64(binary.LittleEndian.Uint64(ev[venue.MessageHeaderSize+8:]))
	return causeSeq, timestampNs
}

// text renders one event.
func (f *eventFormatter) text(ev []byte) string {
	tid, err := venue.TemplateIDOf(ev, 0)
	if err != nil {
		return "bad event: " + err.Error()
	}
	var b strings.Builder
	switch tid {
	case venue.OrderAcceptedTemplateID:
		var e venue.OrderAccepted
		_ = e.WrapDecode(ev, 0)
		orderIdent(&b, "accepted", e)
		f.orderText(&b, e)
		fmt.Fprintf(&b, " px=%s qty=%d leaves=%d", f.px(e.InstrumentID(), e.PriceTicks()), e.Qty(), e.LeavesQty())
		optStop(&b, f, e.InstrumentID(), e.StopPxTicks())
		if e.MaxFloorQty() != 0 { // else displayQty is 0: all is shown
			optIceberg(&b, e.MaxFloorQty(), e.DisplayQty(), e.LeavesQty())
		}
		if e.Flags() != 0 {
			fmt.Fprintf(&b, " flags=%s", e.Flags())
		}
		optExpire(&b, e.ExpireTimeNs())
		optAccount(&b, e.Account())
	case venue.OrderTriggeredTemplateID:
		var e venue.OrderTriggered
		_ = e.WrapDecode(ev, 0)
		orderIdent(&b, "triggered", e)
		f.orderText(&b, e)
		fmt.Fprintf(&b, " px=%s stop=%s by=%s qty=%d leaves=%d", f.px(e.InstrumentID(), e.PriceTicks()),
			f.px(e.InstrumentID(), e.StopPxTicks()), f.px(e.InstrumentID(), e.TriggerPriceTicks()), e.Qty(), e.LeavesQty())
		optExpire(&b, e.ExpireTimeNs())
		optAccount(&b, e.Account())
	case venue.OrderRefilledTemplateID:
		var e venue.OrderRefilled
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(&b, "refilled order=%d %s %s px=%s show=%d", e.OrderID(), f.sym(e.InstrumentID()),
			lower(e.Side().String()), f.px(e.InstrumentID(), e.PriceTicks()), e.DisplayQty())
	case venue.OrderRejectedTemplateID:
		var e venue.OrderRejected
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(&b, "rejected s=%d id=%s exec=%d reason=%s", e.SessionIdx(), e.ClOrdID(), e.ExecID(), e.Reason())
		f.orderText(&b, e)
		fmt.Fprintf(&b, " px=%s qty=%d", f.px(e.InstrumentID(), e.PriceTicks()), e.Qty())
		optAccount(&b, e.Account())
	case venue.FillTemplateID:
		var e venue.Fill
		_ = e.WrapDecode(ev, 0)
		role := boolText(e.Auction(), "auction", boolText(e.Aggressor(), "aggressor", "passive"))
		orderIdent(&b, "fill", e)
		fmt.Fprintf(&b, " trade=%d %s", e.TradeID(), role)
		f.orderText(&b, e)
		fmt.Fprintf(&b, " last=%d@%s px=%s qty=%d leaves=%d cum=%d notional=%d status=%s contra=%d",
			e.LastQty(), f.px(e.InstrumentID(), e.LastPriceTicks()), f.px(e.InstrumentID(), e.PriceTicks()), e.Qty(),
			e.LeavesQty(), e.CumQty(), e.CumNotionalTicks(), e.OrdStatus(), e.ContraOrderID())
		optIceberg(&b, 0, e.DisplayQty(), e.LeavesQty())
		optAccount(&b, e.Account())
	case venue.OrderCancelledTemplateID:
		var e venue.OrderCancelled
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(&b, "cancelled s=%d id=%s", e.SessionIdx(), e.ClOrdID())
		if o := e.OrigClOrdID(); len(o) > 0 {
			fmt.Fprintf(&b, " orig=%s", o)
		}
		fmt.Fprintf(&b, " order=%d exec=%d reason=%s status=%s", e.OrderID(), e.ExecID(), e.Reason(), e.OrdStatus())
		f.orderText(&b, e)
		fmt.Fprintf(&b, " px=%s qty=%d cancelled=%d cum=%d notional=%d",
			f.px(e.InstrumentID(), e.PriceTicks()), e.Qty(), e.CancelledQty(), e.CumQty(), e.CumNotionalTicks())
		optAccount(&b, e.Account())
	case venue.OrderReplacedTemplateID:
		var e venue.OrderReplaced
		_ = e.WrapDecode(ev, 0)
		priority := boolText(e.PriorityLost(), "lost", "kept")
		fmt.Fprintf(&b, "replaced s=%d id=%s orig=%s order=%d exec=%d status=%s priority=%s",
			e.SessionIdx(), e.ClOrdID(), e.OrigClOrdID(), e.OrderID(), e.ExecID(), e.OrdStatus(), priority)
		f.orderText(&b, e)
		fmt.Fprintf(&b, " px=%s qty=%d leaves=%d cum=%d notional=%d old=%d@%s",
			f.px(e.InstrumentID(), e.PriceTicks()), e.Qty(), e.LeavesQty(), e.CumQty(), e.CumNotionalTicks(),
			e.OldLeavesQty(), f.px(e.InstrumentID(), e.OldPriceTicks()))
		optStop(&b, f, e.InstrumentID(), e.StopPxTicks())
		optIceberg(&b, e.MaxFloorQty(), e.DisplayQty(), e.LeavesQty())
		optExpire(&b, e.ExpireTimeNs())
		optAccount(&b, e.Account())
	case venue.CancelRejectedTemplateID:
		var e venue.CancelRejected
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(&b, "cancel-rejected s=%d id=%s orig=%s to=%s reason=%s order=%d status=%s %s %s",
			e.SessionIdx(), e.ClOrdID(), e.OrigClOrdID(), e.ResponseTo(), e.Reason(), e.OrderID(), e.OrdStatus(),
			f.sym(e.InstrumentID()), lower(e.Side().String()))
	case venue.OrderStatusTemplateID:
		var e venue.OrderStatus
		_ = e.WrapDecode(ev, 0)
		orderIdent(&b, "status", e)
		fmt.Fprintf(&b, " status=%s", e.OrdStatus())
		if e.Reason() != venue.RejectReasonNone {
			fmt.Fprintf(&b, " reason=%s", e.Reason())
		}
		f.orderText(&b, e)
		fmt.Fprintf(&b, " px=%s qty=%d leaves=%d cum=%d notional=%d",
			f.px(e.InstrumentID(), e.PriceTicks()), e.Qty(), e.LeavesQty(), e.CumQty(), e.CumNotionalTicks())
		optStop(&b, f, e.InstrumentID(), e.StopPxTicks())
		optIceberg(&b, e.MaxFloorQty(), 0, 0)
		optExpire(&b, e.ExpireTimeNs())
		if e.Flags() != 0 {
			fmt.Fprintf(&b, " flags=%s", e.Flags())
		}
		optAccount(&b, e.Account())
	case venue.MassCancelReportTemplateID:
		var e venue.MassCancelReport
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(&b, "mass-cancel-report s=%d id=%s type=%d reason=%s instr=%d side=%d cancelled=%d",
			e.SessionIdx(), e.ClOrdID(), e.MassCancelRequestType(), e.Reason(), e.InstrumentID(), e.Side(), e.CancelledCount())
	case venue.TradingStatusChangedTemplateID:
		var e venue.TradingStatusChanged
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(&b, "trading-status %s %s", f.sym(e.InstrumentID()), e.Status())
	case venue.AuctionIndicativeTemplateID:
		var e venue.AuctionIndicative
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(&b, "indicative %s %s px=%s matched=%d imbalance=%s:%d rule=%s", f.sym(e.InstrumentID()), e.Status(),
			f.px(e.InstrumentID(), e.PriceTicks()), e.MatchedQty(), e.ImbalanceSide(), e.ImbalanceQty(), e.Rule())
	case venue.AuctionUncrossedTemplateID:
		var e venue.AuctionUncrossed
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(&b, "uncrossed %s %s px=%s matched=%d imbalance=%s:%d rule=%s ref=%s", f.sym(e.InstrumentID()), e.Status(),
			f.px(e.InstrumentID(), e.PriceTicks()), e.MatchedQty(), e.ImbalanceSide(), e.ImbalanceQty(), e.Rule(),
			f.px(e.InstrumentID(), e.ReferencePriceTicks()))
	case venue.VolatilityInterruptionTemplateID:
		var e venue.VolatilityInterruption
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(&b, "volatility-interruption %s order=%d px=%s ref=%s band=[%s, %s] until=%d", f.sym(e.InstrumentID()), e.OrderID(),
			f.px(e.InstrumentID(), e.PriceTicks()), f.px(e.InstrumentID(), e.ReferencePriceTicks()),
			f.px(e.InstrumentID(), e.BandLowTicks()), f.px(e.InstrumentID(), e.BandHighTicks()), e.AuctionEndNs())
	case venue.OperatorResultTemplateID:
		var e venue.OperatorResult
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(&b, "operator-result %s %s reason=%s count=%d", e.Action(), f.sym(e.InstrumentID()), e.Reason(), e.Count())
		if e.Action() == venue.OperatorActionTypeCancelOrder {
			fmt.Fprintf(&b, " s=%d order=%d", e.FilterSessionIdx(), e.OrderID())
		}
	default:
		if !f.riskText(&b, tid, ev) {
			fmt.Fprintf(&b, "unknown event template %d", tid)
		}
	}
	return b.String()
}

// instrumentIDAt is where each event that concerns an instrument holds its
// id, from the start of its block (the generated offsets).
var instrumentIDAt = map[uint16]int{
	venue.OrderAcceptedTemplateID:          venue.OrderAcceptedInstrumentIDOffset,
	venue.FillTemplateID:                   venue.FillInstrumentIDOffset,
	venue.OrderCancelledTemplateID:         venue.OrderCancelledInstrumentIDOffset,
	venue.OrderReplacedTemplateID:          venue.OrderReplacedInstrumentIDOffset,
	venue.TradingStatusChangedTemplateID:   venue.TradingStatusChangedInstrumentIDOffset,
	venue.OrderTriggeredTemplateID:         venue.OrderTriggeredInstrumentIDOffset,
	venue.OrderRefilledTemplateID:          venue.OrderRefilledInstrumentIDOffset,
	venue.AuctionIndicativeTemplateID:      venue.AuctionIndicativeInstrumentIDOffset,
	venue.AuctionUncrossedTemplateID:       venue.AuctionUncrossedInstrumentIDOffset,
	venue.VolatilityInterruptionTemplateID: venue.VolatilityInterruptionInstrumentIDOffset,
}

// eventInstrument returns the instrument an event concerns (0 for none).
func eventInstrument(ev []byte) uint32 {
	tid, _ := venue.TemplateIDOf(ev, 0)
	off, ok := instrumentIDAt[tid]
	if at := venue.MessageHeaderSize + off; ok && len(ev) >= at+4 {
		return binary.LittleEndian.Uint32(ev[at:])
	}
	return 0
}
