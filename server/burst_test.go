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
func TestMassCancelOfManyOrdersKeepsTheSession(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), "")
	cfg.Engine.OrdersMax, cfg.Engine.ClOrdIDsMax = 1<<14, 1<<16
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	const orders = 12_000
	for i := 0; i < orders; i++ {
		sendOrder(t, c, order{id: fmt.Sprintf("o%d", i), side: "1", qty: "1", px: fmt.Sprintf("%d.%02d", 91+i/2000, i%100)})
		if i%1000 == 999 {
			time.Sleep(250 * time.Millisecond) // under the default 5,000 orders/s throttle
		}
	}
	if _, err := c.Expect(10*time.Second, "8", map[int]string{11: fmt.Sprintf("o%d", orders-1), 150: "0"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Send("q", fixclient.F(11, "mc"), fixclient.F(530, "7"), fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	for cancelled := 0; cancelled < orders; cancelled++ {
		if _, err := c.Expect(readWait, "8", map[int]string{150: "4"}); err != nil {
			t.Fatalf("%d of %d cancels arrived: %v", cancelled, orders, err)
		}
	}
	if _, err := c.Expect(readWait, "r", map[int]string{11: "mc", 533: fmt.Sprint(orders)}); err != nil {
		t.Fatal(err)
	}
	sendOrder(t, c, order{id: "after", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "after", 150: "0"})
}
