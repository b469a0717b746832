package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/admintest"
	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestClusterNewLeaderRefusesAPossResendFromBeforeTheEndOfDay: an order
// entered before an end of day, sent again with PossResend (97=Y) and its
// OrigSendingTime to the leader that took over after a kill -9 (README,
// "Failover", step 4), is refused as a possible resend from before the end
// of day, not booked a second time: the new leader replays no journal and
// has no end of day report of its own, and takes the end of day's time
// from what its follower applied.
func TestClusterNewLeaderRefusesAPossResendFromBeforeTheEndOfDay(t *testing.T) {
	h := writeClusterConfigs(t, nil, false)
	h.startAll()
	l := h.leader(30 * time.Second)
	c := logOn(t, h.fix[l], "CLIENT1")
	sent := time.Now()
	order := []fixclient.Field{fixclient.F(11, "day1"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(sent)), fixclient.F(38, "1"), fixclient.F(40, "2"), fixclient.F(44, "95.00")}
	if err := c.Send("D", order...); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(10*time.Second, "8", map[int]string{11: "day1", 150: "0"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // the end of day's time after the order's (millisecond SendingTimes)
	if a := admintest.Call(t, http.MethodPost, "http://"+h.adminAddr(l)+"/v1/eod", clusterToken, `{"reason":"test"}`); a.Status != http.StatusOK {
		t.Fatalf("POST /v1/eod: HTTP %d %s", a.Status, a.Body)
	}
	if _, err := c.Expect(10*time.Second, "8", map[int]string{11: "day1", 150: "C"}); err != nil {
		t.Fatal(err)
	}
	h.converge(10 * time.Second)
	h.kill(l)
	n := h.leader(30 * time.Second)
	if n == l {
		t.Fatalf("node %d still leads after kill -9", l+1)
	}
	c = logOn(t, h.fix[n], "CLIENT1")
	fields := []fixclient.Field{fixclient.F(35, "D"), fixclient.F(49, "CLIENT1"), fixclient.F(56, "VENUE"),
		fixclient.F(34, strconv.Itoa(c.NextOut)), fixclient.F(97, "Y"), fixclient.F(52, fixclient.Timestamp(time.Now())),
		fixclient.F(122, fixclient.Timestamp(sent))}
	c.NextOut++
	if err := c.SendRaw(fixclient.Build(append(fields, order...)...)); err != nil {
		t.Fatal(err)
	}
	m, err := c.Expect(10*time.Second, "8", map[int]string{11: "day1"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Get(150) != "8" || m.Get(103) != "99" || !strings.Contains(m.Get(58), "possible resend") {
		t.Fatalf("the resend on the new leader: 150=%s 103=%s 58=%q, want refused (150=8, 103=99) as a possible resend from before the end of day",
			m.Get(150), m.Get(103), m.Get(58))
	}
}
