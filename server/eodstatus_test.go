package server

import (
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestStatusOfAnOrderTheEndOfDayForgotSaysSo: a DAY order the end of day
// expired is forgotten with its ClOrdID (core/expiry.go), and a status
// request for it is answered as an unknown order. A client that logged on
// again with a reset after a failover, as the cluster's client contract
// asks, may never have had the expiry's report: the Text says that the end
// of day forgot the orders ended by then, and when it ran, where it said
// "unknown order" alone. Before any end of day the Text is unchanged.
func TestStatusOfAnOrderTheEndOfDayForgotSaysSo(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()), Options{})
	c := logon(t, s, "CLIENT1", true)
	status := func(id string) *fixclient.Message {
		t.Helper()
		if err := c.Send("H", fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
			t.Fatal(err)
		}
		return expectER(t, c, map[int]string{150: "I", 11: id})
	}
	if m := status("never"); m.Get(39) != "8" || m.Get(58) != "unknown order" {
		t.Fatalf("before an end of day: %v", m)
	}
	sendOrder(t, c, order{id: "day1", side: "1", qty: "5", px: "99.00"})
	expectER(t, c, map[int]string{150: "0", 11: "day1"})
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"test"}`, nil); code != 200 {
		t.Fatalf("end of day: %d", code)
	}
	expectER(t, c, map[int]string{150: "C", 11: "day1"})
	m := status("day1")
	if text := m.Get(58); m.Get(39) != "8" || m.Get(37) != "NONE" ||
		!strings.HasPrefix(text, "unknown order: no order has it today; the end of day (") ||
		!strings.HasSuffix(text, ") forgot the orders ended by then, its DAY orders expired") {
		t.Fatalf("after the end of day: %v", m)
	}
}
