package server

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestSessionOpenOrderBound: one session cannot fill the venue's order
// pool. With the defaults each session may hold a quarter of
// engine.orders_max open (here 2 of 8): its next order that could rest is
// refused (103=3, the Text naming the bound and the count), an IOC, a
// market order in continuous trading and a possible resend of a live order
// still pass, another session's orders rest, and a cancel makes room again. A
// session whose open_orders_max is 0 has no bound of its own: it fills what
// is left of the pool, and the next order is refused as the venue's
// capacity, which its Text says.
func TestSessionOpenOrderBound(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), "[session_defaults]\ncancel_on_disconnect = false\n")
	cfg.Engine.OrdersMax = 8
	none := 0
	for i := range cfg.Sessions {
		if cfg.Sessions[i].CompID == "CLIENT3" {
			cfg.Sessions[i].OpenOrdersMax = &none
		}
	}
	if got := cfg.OpenOrdersMax(&cfg.Sessions[0]); got != 2 {
		t.Fatalf("default bound %d, want a quarter of 8", got)
	}
	s := startServer(t, cfg, Options{})
	rest := func(c *fixclient.Client, ids ...string) {
		t.Helper()
		for i, id := range ids {
			sendOrder(t, c, order{id: id, side: "1", qty: "1", px: fmt.Sprintf("%d.00", 90+i)})
			expectER(t, c, map[int]string{11: id, 150: "0"})
		}
	}
	c1 := logon(t, s, "CLIENT1", true)
	rest(c1, "a1", "a2")
	sendOrder(t, c1, order{id: "a3", side: "1", qty: "1", px: "93.00"})
	expectER(t, c1, map[int]string{11: "a3", 150: "8", 39: "8", 103: "3", 58: gateway.OpenOrdersBoundText(2, 2)})
	// An IOC never rests: at the bound it is taken (and its remainder cancelled).
	sendOrder(t, c1, order{id: "ioc", side: "1", qty: "1", px: "93.00", tif: "3"})
	expectER(t, c1, map[int]string{11: "ioc", 150: "4"})
	// Nor does a DAY market order while the instrument trades continuously:
	// with nothing to trade against, it is cancelled, not refused.
	sendOrder(t, c1, order{id: "mkt", side: "1", qty: "1", typ: "1"})
	expectER(t, c1, map[int]string{11: "mkt", 150: "4"})
	// A possible resend of a live order is answered with its status, never
	// a reject that would say it is dead; one of an order unknown is a new
	// order, refused at the bound.
	possResend := func(clOrdID string) {
		t.Helper()
		now := fixclient.Timestamp(time.Now())
		msg := fixclient.Build(fixclient.F(35, "D"), fixclient.F(49, "CLIENT1"), fixclient.F(56, s.cfg.Venue.SenderCompID),
			fixclient.F(34, strconv.Itoa(c1.NextOut)), fixclient.F(97, "Y"), fixclient.F(52, now),
			fixclient.F(11, clOrdID), fixclient.F(55, "ACME"), fixclient.F(54, "1"), fixclient.F(60, now),
			fixclient.F(38, "1"), fixclient.F(40, "2"), fixclient.F(44, "91.00"), fixclient.F(59, "0"))
		c1.NextOut++
		if err := c1.SendRaw(msg); err != nil {
			t.Fatal(err)
		}
	}
	possResend("a2")
	expectER(t, c1, map[int]string{11: "a2", 150: "I", 39: "0"})
	possResend("new")
	expectER(t, c1, map[int]string{11: "new", 150: "8", 103: "3", 58: gateway.OpenOrdersBoundText(2, 2)})

	c2 := logon(t, s, "CLIENT2", true)
	rest(c2, "b1", "b2")

	cancelBuy(t, c1, "x1", "a1")
	rest(c1, "a4")

	// No bound of its own: CLIENT3 takes what is left of the pool (8 - 4).
	c3 := logon(t, s, "CLIENT3", true)
	rest(c3, "c1", "c2", "c3", "c4")
	sendOrder(t, c3, order{id: "c5", side: "1", qty: "1", px: "95.00"})
	expectER(t, c3, map[int]string{11: "c5", 150: "8", 103: "99", 58: gateway.CapacityText})

	// The admin API shows each session's bound (none: absent).
	var sessions []ops.SessionInfo
	if code := adminCall(t, s, "GET", "/v1/sessions", "", "", &sessions); code != 200 {
		t.Fatalf("GET /v1/sessions: %d", code)
	}
	bounds := map[string]int{}
	for _, si := range sessions {
		bounds[si.CompID] = si.OpenOrdersMax
	}
	if bounds["CLIENT1"] != 2 || bounds["CLIENT3"] != 0 {
		t.Fatalf("open_orders_max in GET /v1/sessions: %v", bounds)
	}
	if got := metricstest.Value(t, scrape(t, s), "fixvenue_open_order_bound_rejects_total"); got != "2" {
		t.Fatalf("fixvenue_open_order_bound_rejects_total %s, want 2", got)
	}
}

// TestSessionOpenOrderBoundInFlight: orders sent back to back, none waiting
// for its answer, are counted while in flight, so exactly the bound rest.
func TestSessionOpenOrderBoundInFlight(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), "[session_defaults]\ncancel_on_disconnect = false\nopen_orders_max = 5\n")
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	const sent = 40
	for i := range sent {
		sendOrder(t, c, order{id: fmt.Sprintf("f%d", i), side: "1", qty: "1", px: "95.00"})
	}
	taken := 0
	for i := range sent {
		m, err := c.Expect(readWait, "8", map[int]string{11: fmt.Sprintf("f%d", i)})
		if err != nil {
			t.Fatalf("f%d: %v", i, err)
		}
		switch m.Get(150) {
		case "0":
			taken++
		case "8":
			if m.Get(103) != "3" {
				t.Fatalf("f%d refused: %v", i, m)
			}
		default:
			t.Fatalf("f%d: %v", i, m)
		}
	}
	if taken != 5 {
		t.Fatalf("%d of %d orders sent back to back rest, want the bound, 5", taken, sent)
	}
}

// TestPossResendAtOpenOrderBound: at its open-order bound a session's
// possible resend (97=Y or 43=Y) of an order it sent is answered with the
// order's status, as below the bound, whether the order is live, ended or
// still waiting for its answer: a resend adds no order, and a reject for
// its ClOrdID would say a working or done order is dead. A possible resend
// of a ClOrdID the venue does not know is a new order, refused at the
// bound. None of them is journaled as an order.
func TestPossResendAtOpenOrderBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, "[session_defaults]\ncancel_on_disconnect = false\nopen_orders_max = 3\n")
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	// next is c's next report, whichever it is: a resend is answered in
	// the order it was sent, by one report, nothing else.
	next := func(want map[int]string) *fixclient.Message {
		t.Helper()
		m, err := c.Read(readWait)
		if err != nil {
			t.Fatalf("waiting for %v: %v", want, err)
		}
		for tag, v := range want {
			if m.Type() != "8" || m.Get(tag) != v {
				t.Fatalf("got %v, want an ExecutionReport with %v", m, want)
			}
		}
		return m
	}
	resend := func(clOrdID string, mark int) {
		t.Helper()
		now := time.Now()
		sendMarked(t, s, c, "D", now, []fixclient.Field{fixclient.F(mark, "Y")}, buyBody(clOrdID, "0", now)...)
	}

	for i, id := range []string{"a1", "a2", "done"} {
		sendOrder(t, c, order{id: id, side: "1", qty: "1", px: fmt.Sprintf("%d.00", 90+i)})
		next(map[int]string{11: id, 150: "0"})
	}
	cancelBuy(t, c, "x1", "done")
	sendOrder(t, c, order{id: "a3", side: "1", qty: "1", px: "93.00"})
	next(map[int]string{11: "a3", 150: "0"})
	sendOrder(t, c, order{id: "over", side: "1", qty: "1", px: "93.00"})
	next(map[int]string{11: "over", 150: "8", 103: "3"}) // at the bound

	resend("a2", 97)
	next(map[int]string{11: "a2", 150: "I", 39: "0", 38: "1", 151: "1"})
	resend("done", 97)
	next(map[int]string{11: "done", 150: "I", 39: "4", 38: "1", 151: "0"})
	resend("done", 43)
	next(map[int]string{11: "done", 150: "I", 39: "4"})

	// An order sent and resent at once, the resend at the bound (the order
	// counted in flight or open) before or after its accept reached the
	// gateway's view: its status either way.
	cancelBuy(t, c, "x2", "a1")
	sendOrder(t, c, order{id: "a4", side: "1", qty: "1", px: "94.00"})
	resend("a4", 97)
	next(map[int]string{11: "a4", 150: "0"})
	next(map[int]string{11: "a4", 150: "I", 39: "0"})

	// Unknown: a new order, refused at the bound as before.
	resend("new", 97)
	next(map[int]string{11: "new", 150: "8", 39: "8", 103: "3", 58: gateway.OpenOrdersBoundText(3, 3)})

	// The admin API counts open orders from the durable events (the
	// monitor), which may follow the last report by a moment.
	open := -1
	waitUntil(t, "CLIENT1 holding its bound, 3 open orders, in GET /v1/sessions", func() bool {
		var sessions []ops.SessionInfo
		if code := adminCall(t, s, "GET", "/v1/sessions", "", "", &sessions); code != 200 {
			t.Fatalf("GET /v1/sessions: %d", code)
		}
		for _, si := range sessions {
			if si.CompID == "CLIENT1" {
				open = si.OpenOrders
			}
		}
		return open == 3
	})
	if got := metricstest.Value(t, scrape(t, s), "fixvenue_open_order_bound_rejects_total"); got != "2" {
		t.Fatalf("fixvenue_open_order_bound_rejects_total %s, want 2 (over, new)", got)
	}
	s.Close()

	orders := map[string]int{}
	for rec, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if cmd, ok := venue.DecodeNewOrder(rec.Payload); ok {
			orders[string(cmd.ClOrdID())]++
		}
	}
	for _, id := range []string{"a2", "done", "a4"} {
		if orders[id] != 1 {
			t.Errorf("%d orders %s journaled, want its first alone", orders[id], id)
		}
	}
	if orders["new"] != 0 || orders["over"] != 0 {
		t.Errorf("orders refused at the bound journaled: %v", orders)
	}
}
