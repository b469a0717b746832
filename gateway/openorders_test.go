package gateway

import (
	"fmt"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestOpenOrdersApply: a fill keeps what a Fill event does not carry
// (ExpireTime, post-only), a replace keeps post-only, an end removes, and
// the bound refuses a new order instead of growing past it.
func TestOpenOrdersApply(t *testing.T) {
	v := newOpenOrders(2, 2)
	entered := openOrder{orderID: 1, instrumentID: 7, postOnly: true, expireTimeNs: 99, qty: 10, leavesQty: 10}
	entered.setClOrdID([]byte("c1"))
	entered.setAccount([]byte("A"))
	if refused := v.apply([]openChange{{session: 0, kind: openEntered, order: entered}}); refused != 0 {
		t.Fatalf("refused %d", refused)
	}
	filled := openOrder{orderID: 1, instrumentID: 7, qty: 10, leavesQty: 4, cumQty: 6, cumNotionalTicks: 600}
	filled.setClOrdID([]byte("c1"))
	filled.setAccount([]byte("A"))
	v.apply([]openChange{{session: 0, kind: openFilled, order: filled}})
	got := v.snapshot(0, 0, nil)
	if len(got) != 1 || got[0].leavesQty != 4 || got[0].cumQty != 6 || !got[0].postOnly || got[0].expireTimeNs != 99 {
		t.Fatalf("after the fill: %+v", got)
	}
	replaced := filled
	replaced.setClOrdID([]byte("c2"))
	replaced.expireTimeNs = 123
	v.apply([]openChange{{session: 0, kind: openReplaced, order: replaced}})
	got = v.snapshot(0, 7, []byte("A"))
	if len(got) != 1 || string(got[0].ClOrdID()) != "c2" || !got[0].postOnly || got[0].expireTimeNs != 123 {
		t.Fatalf("after the replace: %+v", got)
	}
	if n := len(v.snapshot(0, 8, nil)) + len(v.snapshot(0, 0, []byte("B"))) + len(v.snapshot(1, 0, nil)); n != 0 {
		t.Fatalf("filters let %d other orders through", n)
	}
	// The bound: two orders in all sessions.
	refused := v.apply([]openChange{
		{session: 1, kind: openEntered, order: openOrder{orderID: 3}},
		{session: 1, kind: openEntered, order: openOrder{orderID: 2}},
	})
	if refused != 1 || v.n != 2 {
		t.Fatalf("refused %d, holding %d; want 1 refused, 2 held", refused, v.n)
	}
	v.apply([]openChange{{session: 0, kind: openEnded, order: openOrder{orderID: 1}}, {session: 0, kind: openEnded, order: openOrder{orderID: 1}}})
	if v.n != 1 || len(v.snapshot(0, 0, nil)) != 0 {
		t.Fatalf("after the end: n=%d", v.n)
	}
	v.apply([]openChange{{session: 1, kind: openEntered, order: openOrder{orderID: 2}}})
	if got := v.snapshot(1, 0, nil); len(got) != 2 || got[0].orderID != 2 || got[1].orderID != 3 {
		t.Fatalf("snapshot not in OrderID order: %+v", got)
	}
}

// TestOpenViewEvents: a view kept outside a gateway takes events (an
// accepted order enters, a partial fill updates, a cancel ends), refuses
// inserts past its bound and counts them, and a gateway built on it with
// another number of sessions is refused.
func TestOpenViewEvents(t *testing.T) {
	w := NewOpenView(1, 2)
	accepted := func(id uint64) []byte {
		var e venue.OrderAccepted
		buf := make([]byte, 512)
		if err := e.WrapEncode(buf, 0); err != nil {
			t.Fatal(err)
		}
		e.SetOrderID(id)
		e.SetQty(10)
		e.SetLeavesQty(10)
		if err := e.SetClOrdIDString(fmt.Sprintf("c%d", id)); err != nil {
			t.Fatal(err)
		}
		return buf[:e.EncodedLength()]
	}
	w.Event(accepted(1))
	w.Event(accepted(2))
	w.Event(accepted(3))
	if w.Refused() != 1 || w.v.n != 2 {
		t.Fatalf("refused %d, holds %d: want 1 refused past the bound of 2", w.Refused(), w.v.n)
	}
	var f venue.Fill
	buf := make([]byte, 512)
	if err := f.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	f.SetOrderID(1)
	f.SetQty(10)
	f.SetLeavesQty(4)
	f.SetCumQty(6)
	if err := f.SetClOrdIDString("c1"); err != nil {
		t.Fatal(err)
	}
	w.Event(buf[:f.EncodedLength()])
	var c venue.OrderCancelled
	cbuf := make([]byte, 512)
	if err := c.WrapEncode(cbuf, 0); err != nil {
		t.Fatal(err)
	}
	c.SetOrderID(2)
	w.Event(cbuf[:c.EncodedLength()])
	got := w.v.snapshot(0, 0, nil)
	if len(got) != 1 || got[0].orderID != 1 || got[0].leavesQty != 4 || got[0].cumQty != 6 || string(got[0].ClOrdID()) != "c1" {
		t.Fatalf("after fill and cancel: %+v", got)
	}
	other := NewOpenView(1, 2)
	if d := w.Diff(other); d == "" {
		t.Fatal("Diff finds no difference between a view of one order and an empty one")
	}
	if _, err := New(Config{OpenView: w, Sessions: make([]SessionConfig, 2)}, nil); err == nil {
		t.Fatal("a gateway of 2 sessions took an open-order view of 1")
	}
}

// TestTermsOfHeldChanges: a report built in the chunk that holds its
// order's entry or replace reads the order's terms there (a replace's new
// MaxFloor), and its post-only from the entry, held or in the view, as a
// replace's change carries no flags (outbound.go, termsOf).
func TestTermsOfHeldChanges(t *testing.T) {
	g := &Gateway{open: newOpenOrders(1, 8)}
	g.open.apply([]openChange{{kind: openEntered, order: openOrder{orderID: 1, postOnly: true, maxFloorQty: 2}}})
	cases := []struct {
		name string
		held []openChange
		want openOrder
	}{
		{"in the view", nil, openOrder{orderID: 1, postOnly: true, maxFloorQty: 2}},
		{"replaced in the chunk", []openChange{
			{kind: openReplaced, order: openOrder{orderID: 1, maxFloorQty: 1}},
			{kind: openFilled, order: openOrder{orderID: 1}},
		}, openOrder{orderID: 1, postOnly: true, maxFloorQty: 1}},
		{"entered and replaced in the chunk", []openChange{
			{kind: openEntered, order: openOrder{orderID: 2, postOnly: true, maxFloorQty: 4}},
			{kind: openReplaced, order: openOrder{orderID: 2, maxFloorQty: 3}},
			{kind: openFilled, order: openOrder{orderID: 2}},
		}, openOrder{orderID: 2, postOnly: true, maxFloorQty: 3}},
		{"entered in the chunk", []openChange{
			{kind: openEntered, order: openOrder{orderID: 3, maxFloorQty: 5}},
			{kind: openFilled, order: openOrder{orderID: 3}},
		}, openOrder{orderID: 3, maxFloorQty: 5}},
	}
	for _, c := range cases {
		g.openHeld = c.held
		got, ok := g.termsOf(0, c.want.orderID)
		if !ok || got.postOnly != c.want.postOnly || got.maxFloorQty != c.want.maxFloorQty {
			t.Errorf("%s: %+v (found %v), want post-only %v, MaxFloor %d", c.name, got, ok, c.want.postOnly, c.want.maxFloorQty)
		}
	}
	g.openHeld = nil
	if _, ok := g.termsOf(0, 9); ok {
		t.Error("an order neither held nor in the view was found")
	}
}
