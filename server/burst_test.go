package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestMassCancelOfManyOrdersKeepsTheSession: a mass cancel answers every
// resting order of the session at once, far faster than the connection
// takes the answers. That burst must fit in the session's outbound queue at
// the default bound: every cancel and the report arrive, and the session
// stays logged on (with the former bound of 4,096 it was disconnected as a
// client that does not read).
//
// The orders go in blocks whose every answer is read before the next block,
// a pause apart, so that at most four blocks fall in any second of the
// venue's sliding throttle window whatever the machine's load; an order
// refused because the command ring stayed full ("system busy, try again":
// back-pressure, which a loaded machine shows) is sent again, as a client
// would. Any other refusal fails the test: the count of resting orders is
// exact before the mass cancel.
func TestMassCancelOfManyOrdersKeepsTheSession(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), "")
	cfg.Engine.OrdersMax, cfg.Engine.ClOrdIDsMax = 1<<14, 1<<16
	none := 0 // one session rests the orders: no bound of its own (openbound_test.go)
	cfg.SessionDefaults.OpenOrdersMax = &none
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	const (
		orders     = 12_000
		block      = 1_000
		blockPause = 300 * time.Millisecond // > 1 s / (default 5,000 orders/s / block)
		retriesMax = orders / 10
	)
	price := func(i int) string { return fmt.Sprintf("%d.%02d", 91+i/2000, i%100) }
	retries := 0
	for first := 0; first < orders; first += block {
		for i := first; i < first+block; i++ {
			sendOrder(t, c, order{id: fmt.Sprintf("o%d", i), side: "1", qty: "1", px: price(i)})
		}
		for accepted := 0; accepted < block; {
			m, err := c.Read(readWait)
			if err != nil {
				t.Fatalf("orders %d-%d: %d accepted, then %v", first, first+block-1, accepted, err)
			}
			switch {
			case m.Type() == "8" && m.Get(150) == "0":
				accepted++
			case m.Type() == "8" && m.Get(150) == "8" && m.Get(58) == "system busy, try again" && retries < retriesMax:
				retries++
				var i int
				if _, err := fmt.Sscanf(m.Get(11), "o%d", &i); err != nil {
					t.Fatalf("refused order %q: %v", m.Get(11), err)
				}
				sendOrder(t, c, order{id: fmt.Sprintf("o%d.%d", i, retries), side: "1", qty: "1", px: price(i)})
			default:
				t.Fatalf("orders %d-%d: unexpected %s ExecType %q ClOrdID %q: %q",
					first, first+block-1, m.Type(), m.Get(150), m.Get(11), m.Get(58))
			}
		}
		time.Sleep(blockPause)
	}
	if err := c.Send("q", fixclient.F(11, "mc"), fixclient.F(530, "7"), fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	// Every answer is read in turn, so that a report ahead of its cancels
	// is a failure rather than a message skipped.
	for cancelled := 0; cancelled < orders; cancelled++ {
		m, err := c.Read(readWait)
		if err != nil {
			t.Fatalf("%d of %d cancels arrived: %v", cancelled, orders, err)
		}
		if m.Type() != "8" || m.Get(150) != "4" {
			t.Fatalf("after %d of %d cancels: %s ExecType %q ClOrdID %q MassCancelResponse %q TotalAffectedOrders %q",
				cancelled, orders, m.Type(), m.Get(150), m.Get(11), m.Get(531), m.Get(533))
		}
	}
	if _, err := c.Expect(readWait, "r", map[int]string{11: "mc", 533: fmt.Sprint(orders)}); err != nil {
		t.Fatal(err)
	}
	sendOrder(t, c, order{id: "after", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "after", 150: "0"})
}
