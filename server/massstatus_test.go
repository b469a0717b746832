package server

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestMassStatusAfterRestartStreamsPastTheQueue rests more orders than a
// session's outbound queue holds, restarts the venue, and asks for the mass
// status: every order comes back (the open-order view is seeded from the
// replayed books), in OrderID order, the last with 912=Y, and the session
// is still logged on afterwards (the stream was paced, not overflowed into
// a disconnect).
func TestMassStatusAfterRestartStreamsPastTheQueue(t *testing.T) {
	t.Parallel()
	const (
		queueMax = 64
		orders   = 5 * queueMax
	)
	dir := t.TempDir()
	cfg := testConfig(t, dir, "")
	cfg.FIX.OutboundQueueMax = queueMax
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	ids := make([]string, orders)
	for i := range orders {
		// Buys from 90.00 up, never crossing: all of them rest.
		px := fmt.Sprintf("%d.%02d", 90+i/100, i%100)
		sendOrder(t, c, order{id: "ms" + strconv.Itoa(i), side: "1", qty: "1", px: px, tif: "1"})
		ids[i] = expectER(t, c, map[int]string{11: "ms" + strconv.Itoa(i), 150: "0"}).Get(37)
	}
	next := c.NextOut
	c.Close()
	time.Sleep(100 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	cfg2 := testConfig(t, dir, "")
	cfg2.FIX.OutboundQueueMax = queueMax
	s2 := startServer(t, cfg2, Options{})
	r, _ := resume(t, s2, "CLIENT1", next)
	if err := r.Send("AF", fixclient.F(584, "all"), fixclient.F(585, "7")); err != nil {
		t.Fatal(err)
	}
	for i := range orders {
		m := expectER(t, r, map[int]string{584: "all", 150: "I"})
		if m.Get(37) != ids[i] || m.Get(11) != "ms"+strconv.Itoa(i) || m.Get(911) != strconv.Itoa(orders) || m.Get(39) != "0" {
			t.Fatalf("report %d: %s (want OrderID %s)", i, m, ids[i])
		}
		if last := m.Get(912) == "Y"; last != (i == orders-1) {
			t.Fatalf("report %d of %d has 912=%q", i, orders, m.Get(912))
		}
	}
	if err := r.Send("H", fixclient.F(11, "ms0"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, r, map[int]string{11: "ms0", 150: "I", 39: "0"})
}

// TestMassStatusIncludesAnswersAlreadySent: a client that has received the
// fill of its order (caused by another session's command, which its own
// mass status does not wait for) and asks for a mass status at once is told
// the order with that fill, round after round. The open-order view takes a
// chunk's changes before its answers go out: the buyer's IOC orders sent
// right behind the crossing one put their answers in the same chunk, after
// the fill's, so a view changed only after the whole chunk was handed over
// would still be old when the mass status is taken.
func TestMassStatusIncludesAnswersAlreadySent(t *testing.T) {
	t.Parallel()
	const (
		rounds = 100
		behind = 40 // IOC orders that do not cross, sent right after the crossing one
	)
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	seller := logon(t, s, "CLIENT1", true)
	buyer := logon(t, s, "CLIENT2", true)
	sendOrder(t, seller, order{id: "big", side: "2", qty: strconv.Itoa(rounds + 1), px: "100.00", tif: "1"})
	expectER(t, seller, map[int]string{11: "big", 150: "0"})
	for i := 1; i <= rounds; i++ {
		id := "b" + strconv.Itoa(i)
		sendOrder(t, buyer, order{id: id, side: "1", qty: "1", px: "100.00", tif: "3"})
		for j := range behind {
			sendOrder(t, buyer, order{id: id + "-" + strconv.Itoa(j), side: "1", qty: "1", px: "99.00", tif: "3"})
		}
		expectER(t, seller, map[int]string{11: "big", 150: "F", 14: strconv.Itoa(i)})
		req := "r" + strconv.Itoa(i)
		if err := seller.Send("AF", fixclient.F(584, req), fixclient.F(585, "7")); err != nil {
			t.Fatal(err)
		}
		m := expectER(t, seller, map[int]string{584: req, 150: "I"})
		if m.Get(11) != "big" || m.Get(14) != strconv.Itoa(i) || m.Get(151) != strconv.Itoa(rounds+1-i) || m.Get(912) != "Y" {
			t.Fatalf("round %d: mass status after the fill's report: %s", i, m)
		}
		expectER(t, buyer, map[int]string{11: id, 150: "F"})
		for j := range behind {
			expectER(t, buyer, map[int]string{11: id + "-" + strconv.Itoa(j), 150: "4"})
		}
	}
}

// TestMassStatusEchoesOrderFields: each mass-status report gives what the
// order's own reports give: StopPx (99) of a stop, MaxFloor (111) of an
// iceberg, after a fill too, and ExpireTime (126) of a GTD order.
func TestMassStatusEchoesOrderFields(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	other := logon(t, s, "CLIENT2", true)
	sendOrder(t, c, order{id: "stop", side: "1", qty: "5", px: "101.20", typ: "4", extra: []fixclient.Field{fixclient.F(99, "101.00")}})
	expectER(t, c, map[int]string{11: "stop", 150: "0", 99: "101.00"})
	sendOrder(t, c, order{id: "ice", side: "2", qty: "50", px: "105.00", extra: []fixclient.Field{fixclient.F(111, "10")}})
	expectER(t, c, map[int]string{11: "ice", 150: "0", 111: "10"})
	sendOrder(t, other, order{id: "take", side: "1", qty: "5", px: "105.00", tif: "3"})
	expectER(t, c, map[int]string{11: "ice", 150: "F", 14: "5"})
	sendOrder(t, c, order{id: "gtd", side: "1", qty: "1", px: "90.00", tif: "6", extra: []fixclient.Field{fixclient.F(126, "20991231-23:59:59")}})
	expectER(t, c, map[int]string{11: "gtd", 150: "0"})
	if err := c.Send("AF", fixclient.F(584, "all"), fixclient.F(585, "7")); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int]string{"stop": {99: "101.00"}, "ice": {111: "10", 14: "5"}, "gtd": {126: "20991231-23:59:59.000"}}
	for range want {
		m := expectER(t, c, map[int]string{584: "all", 150: "I"})
		for tg, v := range want[m.Get(11)] {
			if m.Get(tg) != v {
				t.Errorf("mass-status report of %s: tag %d is %q, want %q: %s", m.Get(11), tg, m.Get(tg), v, m)
			}
		}
	}
}

// TestMassStatusOfManyOrdersStartsAtOnce: a session with tens of thousands
// of open orders (it may hold up to engine.orders_max) asks for its mass
// status. The first report comes at once, and it is the session's first
// order. The reports were put in OrderID order by an insertion sort of
// orders the view's map gives in no order, on the session's goroutine:
// 40,000 orders took half a minute before the first report, a venue's
// default bound hours, while the session read nothing else. Sequential:
// it loads the venue (and not under the race detector, which slows the
// load run past a minute).
func TestMassStatusOfManyOrdersStartsAtOnce(t *testing.T) {
	skipUnderRace(t, "a load run; the race detector slows it past a minute")
	const orders = 160 * 256 // whole windows (below)
	cfg := testConfig(t, t.TempDir(), "")
	cfg.Engine.OrdersMax, cfg.Engine.ClOrdIDsMax = orders, orders
	for i := range cfg.Sessions {
		if cfg.Sessions[i].CompID == "CLIENT1" {
			cfg.Sessions[i].OrdersPerSecondReject, cfg.Sessions[i].MessagesPerSecondLogout = 1e9, 1e9
			none := 0 // it holds the whole pool
			cfg.Sessions[i].OpenOrdersMax = &none
		}
	}
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	// In windows well inside the command ring, so that none is refused busy.
	const window = 256
	var first string
	for n := 0; n < orders; n += window {
		for i := n; i < n+window; i++ {
			if err := c.Send("D", fixclient.F(11, "o"+strconv.Itoa(i)), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
				fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"),
				fixclient.F(44, "95.00"), fixclient.F(59, "1")); err != nil {
				t.Fatal(err)
			}
		}
		for i := n; i < n+window; i++ {
			m, err := c.Read(readWait)
			if err != nil {
				t.Fatalf("order %d of %d: %v", i, orders, err)
			}
			c.Received = nil // the test's own memory: tens of thousands of reports
			if m.Type() != "8" || m.Get(150) != "0" {
				t.Fatalf("order answered with %s", m)
			}
			if i == 0 {
				first = m.Get(37)
			}
		}
	}
	if err := c.Send("AF", fixclient.F(584, "all"), fixclient.F(585, "7")); err != nil {
		t.Fatal(err)
	}
	m := expectER(t, c, map[int]string{584: "all", 150: "I"})
	if m.Get(37) != first || m.Get(11) != "o0" || m.Get(911) != strconv.Itoa(orders) {
		t.Fatalf("first report: %s, want OrderID %s (ClOrdID o0) of %d", m, first, orders)
	}
}
