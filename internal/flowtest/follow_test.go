package flowtest

import (
	"testing"

	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

type qtyOrder struct{ qty int64 }

func TestFollow(t *testing.T) {
	var l Live[qtyOrder]
	var buf [256]byte
	follow := func(ev []byte) uint16 {
		t.Helper()
		tid, err := l.Follow(ev, func(e *venue.OrderAccepted) (qtyOrder, bool) {
			return qtyOrder{e.Qty()}, e.Qty() != 13 // 13: an order the caller does not keep
		}, func(o *qtyOrder, e *venue.OrderReplaced) { o.qty = e.Qty() })
		if err != nil {
			t.Fatal(err)
		}
		return tid
	}
	accepted := func(id uint64, qty int64) []byte {
		return cmdtest.Encode(t, buf[:], func(e *venue.OrderAccepted) { e.SetOrderID(id); e.SetQty(qty) })
	}
	for id, qty := range []int64{10, 11, 12, 13} {
		if tid := follow(accepted(uint64(id+1), qty)); tid != venue.OrderAcceptedTemplateID {
			t.Fatalf("template %d", tid)
		}
	}
	if l.Len() != 3 || l.Find(4) != nil {
		t.Fatalf("%d live after four accepts, one refused", l.Len())
	}
	follow(cmdtest.Encode(t, buf[:], func(e *venue.OrderReplaced) { e.SetOrderID(2); e.SetQty(21) }))
	follow(cmdtest.Encode(t, buf[:], func(e *venue.OrderReplaced) { e.SetOrderID(9); e.SetQty(99) })) // not live
	if o := l.Find(2); o == nil || o.qty != 21 || l.Len() != 3 {
		t.Fatalf("after the replace: %v, %d live", o, l.Len())
	}
	follow(cmdtest.Encode(t, buf[:], func(e *venue.Fill) { e.SetOrderID(1); e.SetLeavesQty(4) }))
	if l.Find(1) == nil {
		t.Fatal("a partial fill dropped the order")
	}
	follow(cmdtest.Encode(t, buf[:], func(e *venue.Fill) { e.SetOrderID(1); e.SetLeavesQty(0) }))
	follow(cmdtest.Encode(t, buf[:], func(e *venue.OrderCancelled) { e.SetOrderID(3) }))
	if l.Len() != 1 || l.Find(1) != nil || l.Find(3) != nil || l.Find(2) == nil {
		t.Fatalf("after the last fill and the cancel: %d live", l.Len())
	}
	if tid := follow(cmdtest.Encode(t, buf[:], func(e *venue.Tick) {})); tid != venue.TickTemplateID || l.Len() != 1 {
		t.Fatalf("a Tick: template %d, %d live", tid, l.Len())
	}
	if _, err := l.Follow([]byte{1, 2}, nil, nil); err == nil {
		t.Fatal("a cut event decoded")
	}
}
