package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/core"
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

// TestSnapshotInWindows: a mass status copies a session's orders a window
// at a time, the view's lock released between windows, where outbound
// applies other answers' changes. An order that ends before its window is
// left out, one that trades before its window shows the trade, one entered
// after the walk of OrderIDs is not given; the rest come once each, by
// OrderID, across the windows.
func TestSnapshotInWindows(t *testing.T) {
	const orders = 3*snapshotWindow + 10
	v := newOpenOrders(2, 2*orders)
	changes := make([]openChange, 0, orders+1)
	for i := orders; i >= 1; i-- { // entered in reverse: the map's order is no help
		changes = append(changes, openChange{kind: openEntered, order: withClOrdID(uint64(i), fmt.Sprintf("c%d", i))})
	}
	changes = append(changes, openChange{session: 1, kind: openEntered, order: withClOrdID(orders+1, "other")})
	v.apply(changes)
	lastOfFirst, inThird := uint64(snapshotWindow), uint64(2*snapshotWindow+5)
	windows := 0
	v.betweenWindows = func() {
		windows++
		if windows != 1 {
			return
		}
		filled := withClOrdID(inThird, fmt.Sprintf("c%d", inThird))
		filled.leavesQty, filled.cumQty = 4, 6
		v.apply([]openChange{
			{kind: openEnded, order: openOrder{orderID: lastOfFirst}}, // already copied
			{kind: openEnded, order: openOrder{orderID: snapshotWindow + 1}},
			{kind: openFilled, order: filled},
			{kind: openEntered, order: withClOrdID(2*orders, "late")},
		})
	}
	got := v.snapshot(0, 0, nil)
	if windows != 4 {
		t.Fatalf("%d windows for %d orders, want 4", windows, orders)
	}
	if len(got) != orders-1 {
		t.Fatalf("%d orders given, want %d (all but the one ended before its window)", len(got), orders-1)
	}
	want := uint64(1)
	for i, o := range got {
		if want == snapshotWindow+1 {
			want++
		}
		if o.orderID != want {
			t.Fatalf("order %d of the snapshot is %d, want %d", i, o.orderID, want)
		}
		want++
		switch o.orderID {
		case lastOfFirst:
			if o.leavesQty != 10 {
				t.Fatalf("an order copied before it ended: %+v", o)
			}
		case inThird:
			if o.leavesQty != 4 || o.cumQty != 6 {
				t.Fatalf("an order filled before its window: %+v, want leaves 4, cum 6", o)
			}
		}
	}
	// The filters apply in every window.
	v.betweenWindows = nil
	if got := v.snapshot(0, 0, []byte("none")); len(got) != 0 {
		t.Fatalf("an account no order has: %d orders", len(got))
	}
	if got := v.snapshot(1, 0, nil); len(got) != 1 || string(got[0].ClOrdID()) != "other" {
		t.Fatalf("the other session: %+v", got)
	}
}

// TestSnapshotBesideChanges: snapshots taken while another goroutine applies
// changes (the race detector watches) give each order once, by OrderID,
// every order that stayed open throughout, and none that was never open.
func TestSnapshotBesideChanges(t *testing.T) {
	const stay = 2 * snapshotWindow
	v := newOpenOrders(1, 1<<16)
	var changes []openChange
	for i := 1; i <= stay; i++ {
		changes = append(changes, openChange{kind: openEntered, order: withClOrdID(uint64(2*i), fmt.Sprintf("s%d", i))})
	}
	v.apply(changes)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Odd OrderIDs come and go; the even ones stay.
		for i := 1; i <= 20_000; i++ {
			id := uint64(2*i + 1)
			v.apply([]openChange{{kind: openEntered, order: withClOrdID(id, fmt.Sprintf("o%d", i))}})
			if i > 3 {
				v.apply([]openChange{{kind: openEnded, order: openOrder{orderID: id - 6}}})
			}
		}
	}()
	for n := 0; ; n++ {
		got := v.snapshot(0, 0, nil)
		even := 0
		for i, o := range got {
			if i > 0 && o.orderID <= got[i-1].orderID {
				t.Fatalf("snapshot %d: OrderID %d after %d", n, o.orderID, got[i-1].orderID)
			}
			switch {
			case o.orderID%2 == 0 && o.orderID <= 2*stay:
				even++
			case o.orderID%2 == 0 || o.orderID > 2*20_000+1:
				t.Fatalf("snapshot %d gives order %d, never entered", n, o.orderID)
			}
		}
		if even != stay {
			t.Fatalf("snapshot %d gives %d of the %d orders open throughout", n, even, stay)
		}
		select {
		case <-done:
			return
		default:
		}
	}
}

// TestOpenViewEvents: a view kept outside a gateway takes events (an
// accepted order enters, a partial fill updates, a cancel ends), refuses
// inserts past its bound and counts them, and a gateway built on it with
// another number of sessions is refused.
func TestOpenViewEvents(t *testing.T) {
	w := NewOpenView(1, 2, 0)
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
	other := NewOpenView(1, 2, 0)
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

// withClOrdID is an open order of session 0 with that OrderID and ClOrdID.
func withClOrdID(orderID uint64, clOrdID string) openOrder {
	o := openOrder{orderID: orderID, qty: 10, leavesQty: 10}
	o.setClOrdID([]byte(clOrdID))
	return o
}

// checkClOrdIndex fails t unless each session's ClOrdID index counts, for
// every ClOrdID, the open orders that have it, finds one of them, and lists
// them all when more than one has it.
func checkClOrdIndex(t *testing.T, v *openOrders) {
	t.Helper()
	for s, m := range v.bySession {
		x := v.byClOrdID[s]
		count := map[string]int{}
		for _, o := range m {
			count[string(o.ClOrdID())]++
		}
		if len(x.holders) != len(count) {
			t.Fatalf("session %d: %d ClOrdIDs indexed, %d among its orders", s, len(x.holders), len(count))
		}
		for k, h := range x.holders {
			id := string(k.b[:k.n])
			o := m[h.orderID]
			if int(h.n) != count[id] || string(o.ClOrdID()) != id {
				t.Fatalf("session %d ClOrdID %q: indexed %+v, %d orders have it", s, id, h, count[id])
			}
			if list := x.shared[k]; h.n > 1 && len(list) != int(h.n) || h.n == 1 && list != nil {
				t.Fatalf("session %d ClOrdID %q: %d orders, listed %v", s, id, h.n, list)
			}
		}
	}
}

// TestOpenOrdersFindByClOrdID: the view finds an open order by its ClOrdID
// through the changes that enter, replace, fill and end it; a replace's new
// ClOrdID finds it and the old one no longer does. A ClOrdID two open
// orders have (the matcher refuses it, the view does not rely on that)
// finds the one given it last, and the other once that one ends; the
// index stays complete whichever ends first.
func TestOpenOrdersFindByClOrdID(t *testing.T) {
	v := newOpenOrders(2, 8)
	type want map[string]uint64 // ClOrdID: the OrderID it finds, 0 for none
	steps := []struct {
		name    string
		changes []openChange
		session uint16
		want    want
	}{
		{"entered", []openChange{{kind: openEntered, order: withClOrdID(1, "a")}, {kind: openEntered, order: withClOrdID(2, "b")}},
			0, want{"a": 1, "b": 2, "c": 0, "": 0, strings.Repeat("a", 37): 0}},
		{"another session's", []openChange{{session: 1, kind: openEntered, order: withClOrdID(9, "a")}},
			1, want{"a": 9, "b": 0}},
		{"replaced to a new ClOrdID", []openChange{{kind: openReplaced, order: withClOrdID(1, "c")}},
			0, want{"c": 1, "a": 0, "b": 2}},
		{"replaced to a shorter ClOrdID", []openChange{{kind: openReplaced, order: withClOrdID(1, "cc")}, {kind: openReplaced, order: withClOrdID(1, "d")}},
			0, want{"d": 1, "cc": 0, "c": 0}},
		{"filled", []openChange{{kind: openFilled, order: withClOrdID(2, "b")}}, 0, want{"b": 2}},
		{"ended", []openChange{{kind: openEnded, order: openOrder{orderID: 2}}}, 0, want{"b": 0, "d": 1}},
		{"a ClOrdID taken by a second order", []openChange{{kind: openEntered, order: withClOrdID(3, "g")}, {kind: openEntered, order: withClOrdID(4, "g")}},
			0, want{"g": 4}},
		{"the one given it last ends", []openChange{{kind: openEnded, order: openOrder{orderID: 4}}}, 0, want{"g": 3}},
		{"taken again, then replaced to it", []openChange{{kind: openEntered, order: withClOrdID(5, "g")}, {kind: openReplaced, order: withClOrdID(1, "g")}},
			0, want{"g": 1, "d": 0}},
		{"the first one ends", []openChange{{kind: openEnded, order: openOrder{orderID: 3}}}, 0, want{"g": 1}},
		{"replaced away from it", []openChange{{kind: openReplaced, order: withClOrdID(1, "e")}}, 0, want{"g": 5, "e": 1}},
		{"the last one ends", []openChange{{kind: openEnded, order: openOrder{orderID: 5}}}, 0, want{"g": 0, "e": 1}},
		{"past the bound", []openChange{
			{kind: openEntered, order: withClOrdID(10, "p10")}, {kind: openEntered, order: withClOrdID(11, "p11")},
			{kind: openEntered, order: withClOrdID(12, "p12")}, {kind: openEntered, order: withClOrdID(13, "p13")},
			{kind: openEntered, order: withClOrdID(14, "p14")}, {kind: openEntered, order: withClOrdID(15, "p15")},
			{kind: openEntered, order: withClOrdID(16, "p16")},
		}, 0, want{"p15": 15, "p16": 0}},
	}
	for _, st := range steps {
		v.apply(st.changes)
		for id, orderID := range st.want {
			o, ok := v.find(st.session, 0, []byte(id))
			if ok != (orderID != 0) || o.orderID != orderID {
				t.Errorf("%s: ClOrdID %q finds %d (%v), want %d", st.name, id, o.orderID, ok, orderID)
			}
		}
		checkClOrdIndex(t, v)
	}
}

// TestOpenOrdersFindSuperseded: a ClOrdID a replace took from an open
// order still names it for a cancel or replace (findNamed), as it does in
// the matcher, and no longer as the order's current one (find, which a
// possible resend's check reads); the order's end and an end of day forget
// it, as the matcher does, and so do a restart's seeded ones.
func TestOpenOrdersFindSuperseded(t *testing.T) {
	v := newOpenOrders(1, 8)
	named := func(step string, orderID uint64, id string, want uint64, wantSuperseded bool) {
		t.Helper()
		o, superseded, ok := v.findNamed(0, orderID, []byte(id))
		if ok != (want != 0) || o.orderID != want || superseded != wantSuperseded {
			t.Errorf("%s: OrderID %d OrigClOrdID %q finds %d (%v, superseded %v), want %d (superseded %v)",
				step, orderID, id, o.orderID, ok, superseded, want, wantSuperseded)
		}
	}
	v.apply([]openChange{{kind: openEntered, order: withClOrdID(1, "a")}, {kind: openReplaced, order: withClOrdID(1, "b")},
		{kind: openReplaced, order: withClOrdID(1, "c")}, {kind: openEntered, order: withClOrdID(2, "x")}})
	named("replaced twice", 0, "a", 1, true)
	named("replaced twice", 0, "b", 1, true)
	named("replaced twice", 0, "c", 1, false)
	named("replaced twice", 0, "x", 2, false)
	named("replaced twice", 0, "never", 0, false)
	named("by OrderID", 2, "a", 2, false) // a is order 1's
	named("by OrderID", 1, "a", 1, true)
	if _, ok := v.find(0, 0, []byte("a")); ok {
		t.Error("find gives the order of a superseded ClOrdID as its current one")
	}
	v.apply([]openChange{{kind: openEnded, order: openOrder{orderID: 1}}})
	named("ended", 0, "a", 0, false)
	named("ended", 0, "b", 0, false)
	if x := &v.byClOrdID[0]; len(x.superseded) != 0 || len(x.lastSuperseded) != 0 {
		t.Errorf("ended: %d superseded ClOrdIDs and %d chains kept", len(x.superseded), len(x.lastSuperseded))
	}
	v.apply([]openChange{{kind: openEntered, order: withClOrdID(3, "d")}, {kind: openReplaced, order: withClOrdID(3, "e")}})
	named("replaced", 0, "d", 3, true)
	v.apply([]openChange{{kind: openDayEnded}})
	named("end of day", 0, "d", 0, false)
	named("end of day", 0, "e", 3, false)
	checkClOrdIndex(t, v)

	v = newOpenOrders(1, 8)
	v.seed([]core.OrderView{{OrderID: 4, ClOrdID: "g2", Qty: 1, LeavesQty: 1}})
	v.seedSuperseded([]core.SupersededClOrdID{{OrderID: 4, ClOrdID: "g1"}, {OrderID: 9, ClOrdID: "z"}, {SessionIdx: 3, OrderID: 4, ClOrdID: "s"}})
	named("seeded", 0, "g1", 4, true)
	named("seeded", 0, "z", 0, false) // not an open order of the view
	v.apply([]openChange{{kind: openEnded, order: openOrder{orderID: 4}}})
	named("seeded, ended", 0, "g1", 0, false)
}

// TestOpenOrdersFindEnded: an order ended today is found, with its final
// status, by each ClOrdID it had (its last, those replaces took, a done
// cancel's), by its OrderID and after a seed from the matcher's records,
// until the end of day; past endedMax ClOrdIDs an ended order is not
// remembered.
func TestOpenOrdersFindEnded(t *testing.T) {
	v := newOpenOrders(2, 8)
	ended := func(step string, session uint16, orderID uint64, id string, want uint64, wantStatus venue.OrdStatus) {
		t.Helper()
		got, status, ok := v.findEnded(session, orderID, []byte(id))
		if ok != (want != 0) || got != want || ok && status != wantStatus {
			t.Errorf("%s: OrderID %d OrigClOrdID %q finds %d %v (%v), want %d %v", step, orderID, id, got, status, ok, want, wantStatus)
		}
	}
	cancelled := openChange{kind: openEnded, order: withClOrdID(1, "cx"), status: venue.OrdStatusCancelled}
	cancelled.origLen = uint8(copy(cancelled.orig[:], "c"))
	v.apply([]openChange{{kind: openEntered, order: withClOrdID(1, "a")}, {kind: openReplaced, order: withClOrdID(1, "b")},
		{kind: openReplaced, order: withClOrdID(1, "c")}, {kind: openEntered, order: withClOrdID(2, "x")}})
	ended("open", 0, 0, "c", 0, 0)
	v.apply([]openChange{cancelled})
	for _, id := range []string{"a", "b", "c", "cx"} {
		ended("cancelled", 0, 0, id, 1, venue.OrdStatusCancelled)
	}
	ended("by OrderID", 0, 1, "", 1, venue.OrdStatusCancelled)
	ended("another session", 1, 0, "a", 0, 0)
	if _, _, ok := v.findNamed(0, 0, []byte("a")); ok {
		t.Error("an ended order is found open")
	}
	// Filled on entry: the view never held it; the event names it.
	v.apply([]openChange{{kind: openEnded, order: withClOrdID(3, "f"), status: venue.OrdStatusFilled}})
	ended("filled", 0, 0, "f", 3, venue.OrdStatusFilled)
	ended("never", 0, 0, "never", 0, 0)
	if v.ended != 5 || v.endedFull {
		t.Errorf("%d ended ClOrdIDs counted (full %v), want 5", v.ended, v.endedFull)
	}
	v.apply([]openChange{{kind: openDayEnded}})
	ended("end of day", 0, 0, "a", 0, 0)
	ended("end of day", 0, 1, "", 0, 0)
	if v.ended != 0 {
		t.Errorf("end of day: %d ended ClOrdIDs counted", v.ended)
	}

	// The bound: a ClOrdID past it is left out, and its order with it.
	v = newOpenOrders(1, 8)
	v.endedMax = 2
	v.apply([]openChange{{kind: openEnded, order: withClOrdID(1, "p"), status: venue.OrdStatusExpired},
		{kind: openEnded, order: withClOrdID(2, "q"), status: venue.OrdStatusFilled},
		{kind: openEnded, order: withClOrdID(3, "r"), status: venue.OrdStatusFilled}})
	ended("bound", 0, 0, "q", 2, venue.OrdStatusFilled)
	ended("past the bound", 0, 0, "r", 0, 0)
	ended("past the bound", 0, 3, "", 0, 0)
	if !v.endedFull {
		t.Error("past the bound: not noted full")
	}

	v = newOpenOrders(1, 8)
	v.seedEnded([]core.EndedClOrdID{{OrderID: 4, ClOrdID: "g1", OrdStatus: venue.OrdStatusCancelled},
		{OrderID: 4, ClOrdID: "g2", OrdStatus: venue.OrdStatusCancelled}, {SessionIdx: 3, OrderID: 5, ClOrdID: "s"}})
	ended("seeded", 0, 0, "g1", 4, venue.OrdStatusCancelled)
	ended("seeded", 0, 0, "g2", 4, venue.OrdStatusCancelled)
	ended("seeded", 0, 4, "", 4, venue.OrdStatusCancelled)
}

// TestOpenOrdersSeedIndexesClOrdIDs: the orders seeded from the books are
// found by ClOrdID, one two of them have finding the one seeded last.
func TestOpenOrdersSeedIndexesClOrdIDs(t *testing.T) {
	v := newOpenOrders(2, 8)
	v.seed([]core.OrderView{
		{OrderID: 7, ClOrdID: "s7", Qty: 1, LeavesQty: 1},
		{OrderID: 3, ClOrdID: "dup", Qty: 1, LeavesQty: 1},
		{OrderID: 8, SessionIdx: 1, ClOrdID: "s7", Qty: 1, LeavesQty: 1},
		{OrderID: 5, ClOrdID: "dup", Qty: 1, LeavesQty: 1},
	})
	checkClOrdIndex(t, v)
	for _, c := range []struct {
		session uint16
		id      string
		want    uint64
	}{{0, "s7", 7}, {1, "s7", 8}, {0, "dup", 5}, {1, "dup", 0}} {
		if o, ok := v.find(c.session, 0, []byte(c.id)); ok != (c.want != 0) || o.orderID != c.want {
			t.Errorf("session %d ClOrdID %q finds %d (%v), want %d", c.session, c.id, o.orderID, ok, c.want)
		}
	}
	v.apply([]openChange{{kind: openEnded, order: openOrder{orderID: 5}}})
	if o, ok := v.find(0, 0, []byte("dup")); !ok || o.orderID != 3 {
		t.Errorf("after the end of 5, dup finds %d (%v), want 3", o.orderID, ok)
	}
	checkClOrdIndex(t, v)
}

// TestOpenOrdersApplyAllocations: applying the changes of orders entered,
// filled, replaced to a new ClOrdID and ended allocates, once the view's
// maps have grown to the session's orders, only the one openOrder per
// order entered that the map by OrderID keeps out of line (it is larger
// than a Go map holds in its slots): the ClOrdID index adds nothing
// (outbound applies every chunk of answers). The rounds end the same
// orders again, so the ended orders the view remembers do not grow its
// maps here; a day's new ones grow them by doubling, a few allocations
// in all.
func TestOpenOrdersApplyAllocations(t *testing.T) {
	const resting, cycled = 1000, 64
	v := newOpenOrders(1, 2*resting)
	var changes []openChange
	for i := range resting {
		changes = append(changes, openChange{kind: openEntered, order: withClOrdID(uint64(i+1), fmt.Sprintf("rest-%d", i))})
	}
	v.apply(changes)
	// Each round enters, replaces and ends cycled orders of its own
	// OrderIDs and ClOrdIDs, as a day's traffic does.
	rounds := make([][]openChange, 8)
	next := uint64(resting + 1)
	for r := range rounds {
		for i := range cycled {
			id := next + uint64(i)
			rounds[r] = append(rounds[r],
				openChange{kind: openEntered, order: withClOrdID(id, fmt.Sprintf("new-%d", id))},
				openChange{kind: openFilled, order: withClOrdID(id, fmt.Sprintf("new-%d", id))},
				openChange{kind: openReplaced, order: withClOrdID(id, fmt.Sprintf("rep-%d", id))})
		}
		for i := range cycled {
			rounds[r] = append(rounds[r], openChange{kind: openEnded, order: openOrder{orderID: next + uint64(i)}})
		}
		next += cycled
	}
	for _, r := range rounds { // the maps grow to hold a round's orders
		v.apply(r)
	}
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		v.apply(rounds[i%len(rounds)])
		i++
	})
	if allocs > cycled {
		t.Fatalf("apply of %d changes, %d orders entered, allocates %.1f times", len(rounds[0]), cycled, allocs)
	}
	checkClOrdIndex(t, v)
}

// BenchmarkOpenOrdersFindByClOrdID: a cancel the gateway refuses finds its
// order by OrigClOrdID in a session of 100,000 open orders, under the lock
// outbound takes for every chunk of answers.
func BenchmarkOpenOrdersFindByClOrdID(b *testing.B) {
	const orders = 100_000
	v := newOpenOrders(1, orders)
	changes := make([]openChange, 0, orders)
	ids := make([][]byte, orders)
	for i := range orders {
		ids[i] = []byte(fmt.Sprintf("CL-%08d", i))
		changes = append(changes, openChange{kind: openEntered, order: withClOrdID(uint64(i+1), string(ids[i]))})
	}
	v.apply(changes)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, ok := v.find(0, 0, ids[(i*7919)%orders]); !ok {
			b.Fatal("not found")
		}
	}
}

// BenchmarkOpenOrdersSnapshot: a mass status's copy of a session's open
// orders (snapshot), at the default open_orders_max a session (262,144)
// and a quarter of it. Outbound takes the view's lock for every chunk of
// answers, so what matters beside the whole copy (ns/op) is the longest
// hold of the lock, timed after the loop: the walk of the session's
// OrderIDs (walk-µs, the longest of 5) or one window's copy (window-µs,
// the longest of a pass over the session's orders).
func BenchmarkOpenOrdersSnapshot(b *testing.B) {
	for _, orders := range []int{1 << 16, 1 << 18} {
		b.Run(fmt.Sprintf("orders=%d", orders), func(b *testing.B) {
			v := newOpenOrders(1, orders)
			changes := make([]openChange, 0, orders)
			for i := range orders {
				changes = append(changes, openChange{kind: openEntered, order: withClOrdID(uint64(i+1), fmt.Sprintf("CL-%08d", i))})
			}
			v.apply(changes)
			b.ResetTimer()
			for b.Loop() {
				if got := v.snapshot(0, 0, nil); len(got) != orders {
					b.Fatalf("%d orders", len(got))
				}
			}
			b.StopTimer()
			var walk, window time.Duration
			var ids []uint64
			for range 5 {
				t := time.Now()
				ids = v.idsOf(0)
				walk = max(walk, time.Since(t))
			}
			slices.Sort(ids)
			out := make([]openOrder, 0, snapshotWindow)
			for i := 0; i < len(ids); i += snapshotWindow {
				t := time.Now()
				out = v.copyWindow(out[:0], 0, ids[i:min(len(ids), i+snapshotWindow)], 0, nil)
				window = max(window, time.Since(t))
			}
			b.ReportMetric(float64(walk.Microseconds()), "walk-µs")
			b.ReportMetric(float64(window.Microseconds()), "window-µs")
		})
	}
}
