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
	// As QuickFIX/Go hands them over: parsed from the wire (parseOrder reads
	// the raw bytes too).
	order := parsed(t, nil, wire("35=D|"+hdr+"11=c1|55=ACME|54=1|40=2|38=10|44=100.25|"))
	cancel := parsed(t, nil, wire("35=F|"+hdr+"11=c2|41=c1|55=ACME|54=1|"))

	o, rej := g.parseOrder(order, true)
	if rej != nil || o.inst != g.byID(7) || o.side != venue.SideBuy || o.priceTicks != 10025 || o.qty != 10 || o.account != nil || o.tif != venue.TimeInForceDay {
		t.Fatalf("parseOrder = %+v, %v", o, rej)
	}
	if possResend(order) {
		t.Fatal("possResend without PossResend (97)")
	}
	c, rej := g.parseCancel(cancel, false)
	if rej != nil || string(c.origClOrdID) != "c1" || c.orderID != 0 {
		t.Fatalf("parseCancel = %+v, %v", c, rej)
	}
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = g.parseOrder(order, true)
		_ = possResend(order)
		_, _ = g.parseCancel(cancel, false)
	})
	if allocs != 0 {
		t.Fatalf("parsing an order and a cancel: %v allocations, want 0", allocs)
	}
	order.Header.SetString(tag.PossResend, "Y")
	if !possResend(order) {
		t.Fatal("possResend with 97=Y reads false")
	}
}

// BenchmarkParseOrder reads a plain limit NewOrderSingle (the unsupported
// fields' checks included: docs/benchmarks.md, "The FIX path against its floor").
func BenchmarkParseOrder(b *testing.B) {
	g := &Gateway{}
	g.instruments.Store(newInstrumentTable([]Instrument{{ID: 7, Symbol: "ACME", Tick: decimal.Tick{Mantissa: 1, Scale: 2}}}))
	order := parsed(b, nil, wire("35=D|"+hdr+"11=c1|1=ACC1|55=ACME|54=1|60=20261202-13:00:00.000|38=10|40=2|44=100.25|59=0|"))
	v := NewValidator(fix44(b), quickfix.ValidatorSettings{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: true, RejectInvalidMessage: true})
	_, look, err := v.CheckFor(order, &unsupportedTagSet)
	if err != nil || look {
		b.Fatalf("CheckFor: look %v, %v", look, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, rej := g.parseOrder(order, look); rej != nil {
			b.Fatal(rej.text)
		}
	}
}

// TestInstrumentTagsAreTheDictionarys: instrumentTags and
// instrumentDescriptions are, between them, the fields of the dictionary's
// Instrument component but Symbol, once each, and instrumentTags names
// NoUnderlyings and NoLegs too.
func TestInstrumentTagsAreTheDictionarys(t *testing.T) {
	want := map[quickfix.Tag]bool{tag.NoUnderlyings: true, tag.NoLegs: true}
	for _, f := range fix44(t).ComponentTypes["Instrument"].Fields() {
		if quickfix.Tag(f.Tag()) != tag.Symbol {
			want[quickfix.Tag(f.Tag())] = true
		}
	}
	got := map[quickfix.Tag]bool{}
	for _, tg := range append(instrumentTags[:], instrumentDescriptions[:]...) {
		if got[tg] || !want[tg] {
			t.Errorf("tag %d is listed twice or is not one of the Instrument component's", tg)
		}
		got[tg] = true
	}
	for tg := range want {
		if !got[tg] {
			t.Errorf("tag %d is in neither list", tg)
		}
	}
}
