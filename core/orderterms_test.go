package core

import (
	"fmt"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// termsCheckSink asks the matcher for an order's terms (OrderTerms) at each
// Fill, OrderCancelled and OrderReplaced it commits, as the rebuild of
// reports lost at a crash does during the replay (gateway.LostReports), and
// compares them with the terms the order's OrderAccepted and OrderReplaced
// events gave, which the gateway's open-order view keeps for the live
// reports.
type termsCheckSink struct {
	m       *Matcher
	slot    [EventSlotMin]byte
	entered map[uint64]OrderTerms // by OrderID, from the events
	checked map[string]int
	err     error
}

func (s *termsCheckSink) Claim() []byte { return s.slot[:] }

func (s *termsCheckSink) Commit() {
	ev := s.slot[:]
	tid, err := venue.TemplateIDOf(ev, 0)
	if err != nil {
		return
	}
	var orderID uint64
	switch tid {
	case venue.OrderAcceptedTemplateID:
		var e venue.OrderAccepted
		if e.WrapDecode(ev, 0) == nil {
			s.entered[e.OrderID()] = OrderTerms{StopPxTicks: e.StopPxTicks(), ExpireTimeNs: e.ExpireTimeNs(),
				MaxFloorQty: e.MaxFloorQty(), Flags: e.Flags() & (venue.OrderFlagsPostOnly | venue.OrderFlagsIceberg)}
		}
		return
	case venue.OrderReplacedTemplateID:
		var e venue.OrderReplaced
		if e.WrapDecode(ev, 0) != nil {
			return
		}
		orderID = e.OrderID()
		t := s.entered[orderID]
		t.StopPxTicks, t.ExpireTimeNs, t.MaxFloorQty = e.StopPxTicks(), e.ExpireTimeNs(), e.MaxFloorQty()
		// A replace keeps post-only; a display size makes an iceberg.
		if t.Flags &^= venue.OrderFlagsIceberg; t.MaxFloorQty != 0 {
			t.Flags |= venue.OrderFlagsIceberg
		}
		s.entered[orderID] = t
	case venue.FillTemplateID:
		var e venue.Fill
		if e.WrapDecode(ev, 0) != nil {
			return
		}
		orderID = e.OrderID()
	case venue.OrderCancelledTemplateID:
		var e venue.OrderCancelled
		if e.WrapDecode(ev, 0) != nil {
			return
		}
		orderID = e.OrderID()
	default:
		return
	}
	want, entered := s.entered[orderID]
	got, ok := s.m.OrderTerms(orderID)
	switch {
	case s.err != nil:
	case !entered:
		// An order of an earlier part of the run is always entered here.
		s.err = fmt.Errorf("%s of order %d, which no OrderAccepted entered", venue.MessageName(tid), orderID)
	case !ok || got != want:
		s.err = fmt.Errorf("%s of order %d: OrderTerms %+v (known %v), its events gave %+v", venue.MessageName(tid), orderID, got, ok, want)
	}
	if want != (OrderTerms{}) {
		s.checked[venue.MessageName(tid)]++
	}
}

// TestOrderTermsAtEachReportAreTheOrdersTerms: at every Fill, OrderCancelled
// and OrderReplaced of random commands (stops elected and queued for
// uncrosses, icebergs refilled, GTD orders expired, post-only orders,
// replaces, mass cancels, disconnects, ends of day), OrderTerms read from
// the sink gives the stop price, expire time, display size and post-only
// the order's OrderAccepted and OrderReplaced events gave: what the live
// reports of those events say of the order.
func TestOrderTermsAtEachReportAreTheOrdersTerms(t *testing.T) {
	commands := 50_000
	if testing.Short() {
		commands = 10_000
	}
	for ci, cfg := range propertyConfigs() {
		t.Run(fmt.Sprintf("config%d", ci), func(t *testing.T) {
			m, err := NewMatcher(cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := &termsCheckSink{m: m, entered: map[uint64]OrderTerms{}, checked: map[string]int{}}
			gen := newCommandGen(cfg, 11+uint64(ci), newRefModel(cfg))
			for i := 0; i < commands; i++ {
				cmd := gen.next()
				gen.model.apply(cmd, NewBufferSink(4))
				_ = m.Apply(cmd, s)
				if s.err != nil {
					t.Fatalf("command %d (%s): %v", i, gen.last, s.err)
				}
			}
			for _, name := range []string{"Fill", "OrderCancelled", "OrderReplaced"} {
				if s.checked[name] == 0 {
					t.Errorf("no %s of an order with terms checked: %v", name, s.checked)
				}
			}
			t.Logf("events of orders with terms checked: %v", s.checked)
		})
	}
}
