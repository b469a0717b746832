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
