package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestReportsArriveInEventOrder: a session's ExecutionReports reach the
// client in the order of the events that caused them, whether outbound
// hands a report to QuickFIX/Go itself or the session's sender goroutine
// does (docs/ARCHITECTURE.md, "Why the sender paces QuickFIX/Go"). Orders
// and their cancels are sent back to back without waiting, so that reports
// pile up and both paths are taken; the matcher applies them in arrival
// order, so the acknowledgement of order i, then its cancel, then order
// i+1 is the only right order.
func TestReportsArriveInEventOrder(t *testing.T) {
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	const orders = 300 // 600 messages, under the session's default throttles
	for i := range orders {
		sendOrder(t, c, order{id: fmt.Sprintf("o%d", i), side: "1", qty: "1", px: "99.00"})
		if err := c.Send("F", fixclient.F(11, fmt.Sprintf("c%d", i)), fixclient.F(41, fmt.Sprintf("o%d", i)),
			fixclient.F(55, "ACME"), fixclient.F(54, "1"), fixclient.F(38, "1"), fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range orders {
		for _, want := range []struct{ id, execType string }{{fmt.Sprintf("o%d", i), "0"}, {fmt.Sprintf("c%d", i), "4"}} {
			m, err := c.Read(readWait)
			if err != nil {
				t.Fatalf("report %s: %v", want.id, err)
			}
			if m.Type() != "8" || m.Get(11) != want.id || m.Get(150) != want.execType {
				t.Fatalf("got %s, want the ExecutionReport 11=%s 150=%s next", m, want.id, want.execType)
			}
		}
	}
}
