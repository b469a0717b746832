package gateway

import (
	"testing"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestParseOrderDoesNotAllocate: reading a valid NewOrderSingle and
// OrderCancelRequest without their optional fields (Account, TimeInForce,
// ExecInst, OrderID, PossResend) allocates nothing, where asking QuickFIX/Go
// for an absent field builds a reject error each time.
func TestParseOrderDoesNotAllocate(t *testing.T) {
	g := &Gateway{}
	g.instruments.Store(newInstrumentTable([]Instrument{{ID: 7, Symbol: "ACME", Tick: decimal.Tick{Mantissa: 1, Scale: 2}}}))
	order := quickfix.NewMessage()
	order.Header.SetString(tag.MsgType, "D")
	order.Body.SetString(tag.ClOrdID, "c1").SetString(tag.Symbol, "ACME").SetString(tag.Side, "1").
		SetString(tag.OrdType, "2").SetString(tag.OrderQty, "10").SetString(tag.Price, "100.25")
	cancel := quickfix.NewMessage()
	cancel.Header.SetString(tag.MsgType, "F")
	cancel.Body.SetString(tag.ClOrdID, "c2").SetString(tag.OrigClOrdID, "c1").SetString(tag.Symbol, "ACME").SetString(tag.Side, "1")

	o, rej := g.parseOrder(order)
	if rej != nil || o.inst != g.byID(7) || o.side != venue.SideBuy || o.priceTicks != 10025 || o.qty != 10 || o.account != nil || o.tif != venue.TimeInForceDay {
		t.Fatalf("parseOrder = %+v, %v", o, rej)
	}
	if possResend(order) {
		t.Fatal("possResend without PossResend (97)")
	}
	c, rej := g.parseCancel(cancel)
	if rej != nil || string(c.origClOrdID) != "c1" || c.orderID != 0 {
		t.Fatalf("parseCancel = %+v, %v", c, rej)
	}
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = g.parseOrder(order)
		_ = possResend(order)
		_, _ = g.parseCancel(cancel)
	})
	if allocs != 0 {
		t.Fatalf("parsing an order and a cancel: %v allocations, want 0", allocs)
	}
	order.Header.SetString(tag.PossResend, "Y")
	if !possResend(order) {
		t.Fatal("possResend with 97=Y reads false")
	}
}
