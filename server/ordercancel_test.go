package server

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestOperatorCancelsOneOrder: POST /v1/orders/cancel cancels one order for
// its owner, by a ClOrdID the order had in its session (one a replace
// superseded names the order it became) or by its OrderID. The owner gets
// an unsolicited cancel saying the venue's operator cancelled it, as a
// validating client accepts it, and its drop copy a copy; the journal holds
// the command with the operator and the reason. Bad input journals nothing;
// an order of another session, or one that has ended, changes nothing.
// GET /v1/sessions/{comp_id}/orders lists what the operator may pull.
func TestOperatorCancelsOneOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, testConfig(t, dir, dropCopySessions+adminConfig()), Options{})
	v := strictValidator(t)
	c1 := logon(t, s, "CLIENT1", true)
	c2 := logon(t, s, "CLIENT2", true)
	dc1 := newDCReader(logon(t, s, "DC1", true)) // CLIENT1's copies

	sendOrder(t, c1, order{id: "a1", side: "1", qty: "5", px: "99.00"})
	a := expectER(t, c1, map[int]string{11: "a1", 150: "0"})
	if err := c1.Send("G", fixclient.F(11, "a2"), fixclient.F(41, "a1"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "6"), fixclient.F(40, "2"), fixclient.F(44, "99.50"),
		fixclient.F(59, "0")); err != nil {
		t.Fatal(err)
	}
	expectER(t, c1, map[int]string{11: "a2", 41: "a1", 150: "5"})
	sendOrder(t, c2, order{id: "s1", side: "2", qty: "3", px: "101.00"})
	sell := expectER(t, c2, map[int]string{11: "s1", 150: "0"})

	sendOrder(t, c1, order{id: "st1", side: "1", qty: "2", typ: "3", extra: []fixclient.Field{fixclient.F(99, "105.00")}})
	stop := expectER(t, c1, map[int]string{11: "st1", 150: "0"})

	// A session's open orders, as an operator sees them before pulling one.
	// The control plane applies the events beside outbound, not before it:
	// the stop's answer may come before the listing has it.
	var list ops.SessionOrders
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if adminCall(t, s, "GET", "/v1/sessions/CLIENT1/orders", aliceToken, "", &list) == 200 && list.Total == 2 {
			break
		}
	}
	if code := adminCall(t, s, "GET", "/v1/sessions/CLIENT1/orders", aliceToken, "", &list); code != 200 || list.Session != "CLIENT1" ||
		list.Total != 2 || len(list.Orders) != 2 ||
		list.Orders[0] != (ops.OpenOrder{OrderID: a.Get(37), ClOrdID: "a2", Instrument: "ACME", Side: "buy", Price: "99.50", LeavesQty: 6}) ||
		list.Orders[1] != (ops.OpenOrder{OrderID: stop.Get(37), ClOrdID: "st1", Instrument: "ACME", Side: "buy", LeavesQty: 2, StopWaiting: true}) {
		t.Fatalf("CLIENT1's orders: %d %+v", code, list)
	}
	if code := adminCall(t, s, "GET", "/v1/sessions/CLIENT1/orders?limit=1", aliceToken, "", &list); code != 200 || list.Total != 2 ||
		len(list.Orders) != 1 || list.Orders[0].OrderID != a.Get(37) {
		t.Fatalf("CLIENT1's first order: %d %+v", code, list)
	}
	for path, want := range map[string]int{"/v1/sessions/NOBODY/orders": 404, "/v1/sessions/CLIENT1/orders?limit=0": 400,
		"/v1/sessions/CLIENT1/orders?limit=1001": 400} {
		if code := adminCall(t, s, "GET", path, aliceToken, "", nil); code != want {
			t.Errorf("GET %s: %d, want %d", path, code, want)
		}
	}

	before := durableSeq(t, s)
	for _, bad := range []struct {
		body, code string
		status     int
	}{
		{`{"reason":"x"}`, "no_order", 400},
		{`{"order_id":"1"}`, "no_reason", 400},
		{`{"reason":"x","cl_ord_id":"a1"}`, "no_session", 400},
		{`{"reason":"x","order_id":"one"}`, "bad_order_id", 400},
		{`{"reason":"x","order_id":"0"}`, "bad_order_id", 400},
		{`{"reason":"x","order_id":"1","session":"CLIENT1","cl_ord_id":"a1"}`, "bad_body", 400},
		{`{"reason":"x","session":"CLIENT1","cl_ord_id":"a\u0001"}`, "bad_cl_ord_id", 400},
		{`{"reason":"x","session":"NOBODY","cl_ord_id":"a1"}`, "unknown_session", 404},
		{`{"reason":"x","session":"DC1","cl_ord_id":"a1"}`, "drop_copy_session", 400},
		{`{"reason":"x","order":"1"}`, "bad_json", 400},
	} {
		var e map[string]any
		if got := adminCall(t, s, "POST", "/v1/orders/cancel", aliceToken, bad.body, &e); got != bad.status || e["code"] != bad.code {
			t.Errorf("%s: %d %v, want %d %s", bad.body, got, e, bad.status, bad.code)
		}
	}
	if after := durableSeq(t, s); after != before {
		t.Fatalf("durable seq %d → %d: refused input was journaled", before, after)
	}

	// By the ClOrdID the replace superseded: the order it became is cancelled.
	var res ops.ActionResponse
	if code := adminCall(t, s, "POST", "/v1/orders/cancel", aliceToken,
		`{"reason":"client lost its connection","session":"CLIENT1","cl_ord_id":"a1"}`, &res); code != 200 ||
		res.Action != "CancelOrder" || res.Count != 1 || res.Operator != "alice" || res.Order == nil ||
		*res.Order != (ops.CancelledOrder{OrderID: a.Get(37), Session: "CLIENT1", Instrument: "ACME"}) {
		t.Fatalf("cancel by a1: %d %+v (order %+v)", code, res, res.Order)
	}
	cancelled := expectER(t, c1, map[int]string{11: "a2", 37: a.Get(37), 150: "4", 39: "4", 14: "0", 151: "0",
		58: "cancelled by the venue's operator"})
	validate(t, v, cancelled)
	if orig, ok := cancelled.Lookup(41); ok {
		t.Errorf("the operator's cancel carries OrigClOrdID (41) %q: no cancel request of the client's is answered", orig)
	}
	dc1.readCopies(t, 4) // a1's New, the replace, st1's New, the cancel
	if got := dc1.inOrder(); got[len(got)-1].Get(150) != "4" || got[len(got)-1].Get(58) != "cancelled by the venue's operator" {
		t.Errorf("DC1's last copy: %s, want the operator's cancel", got[len(got)-1])
	}

	// By OrderID: in a session that does not own it, nothing changes.
	var e map[string]any
	body := `{"reason":"wrong session","order_id":"` + sell.Get(37) + `","session":"CLIENT1"}`
	if code := adminCall(t, s, "POST", "/v1/orders/cancel", aliceToken, body, &e); code != 404 || e["code"] != "unknown_order" {
		t.Fatalf("cancel of CLIENT2's order in CLIENT1: %d %v", code, e)
	}
	body = `{"reason":"pulled by operations","order_id":"` + sell.Get(37) + `"}`
	if code := adminCall(t, s, "POST", "/v1/orders/cancel", bobToken, body, &res); code != 200 || res.Operator != "bob" ||
		res.Order == nil || res.Order.Session != "CLIENT2" {
		t.Fatalf("cancel of s1 by OrderID: %d %+v", code, res)
	}
	validate(t, v, expectER(t, c2, map[int]string{11: "s1", 150: "4", 39: "4", 58: "cancelled by the venue's operator"}))
	if code := adminCall(t, s, "POST", "/v1/orders/cancel", bobToken, body, &e); code != 409 || e["code"] != "too_late" {
		t.Fatalf("a second cancel of s1: %d %v", code, e)
	}
	if acme := instrumentsOf(t, s)["ACME"]; acme.RestingOrders != 0 {
		t.Fatalf("ACME after the cancels: %+v", acme)
	}
	for comp, want := range map[string]int{"CLIENT1": 1, "CLIENT2": 0} { // CLIENT1's stop waits still
		if code := adminCall(t, s, "GET", "/v1/sessions/"+comp+"/orders", aliceToken, "", &list); code != 200 || list.Total != want || len(list.Orders) != want {
			t.Fatalf("%s's orders after the cancels: %d %+v", comp, code, list)
		}
	}

	// The journal is the audit trail: who, why, which order.
	var cmds []string
	for rec, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := venue.DecodeOperatorCancelOrder(rec.Payload); ok {
			cmds = append(cmds, string(c.Operator())+"|"+string(c.Reason())+"|"+string(c.ClOrdID()))
		}
	}
	want := []string{"alice|client lost its connection|a1", "alice|wrong session|", "bob|pulled by operations|", "bob|pulled by operations|"}
	if len(cmds) != len(want) {
		t.Fatalf("operator cancels journaled: %q, want %q", cmds, want)
	}
	for i := range want {
		if cmds[i] != want[i] {
			t.Fatalf("operator cancels journaled: %q, want %q", cmds, want)
		}
	}
}
