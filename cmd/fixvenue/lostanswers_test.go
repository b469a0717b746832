package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestKill9LostAnswersAreStoredAgain: a session sends a burst of orders and
// the venue is killed with SIGKILL while it answers, so that answers of
// journaled orders are still in its rings and queues, never stored. At the
// next start the venue rebuilds them from the journal (docs/ARCHITECTURE.md,
// "Answers lost at a crash"): a resend from 1 gives a New report for every
// order the venue holds, with each ExecID once, and every reject of a
// post-only GTD order with its ExecInst 6 and ExpireTime. A kill that happened to
// lose nothing is tried again, a few times. A start after that, from a
// clean stop, rebuilds nothing.
func TestKill9LostAnswersAreStoredAgain(t *testing.T) {
	const lostExpire = "20991231-23:59:59.000"
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, `[marketdata]
enabled = false
[session_defaults]
cancel_on_disconnect = false
orders_per_second_reject = 0
[session_defaults.quickfix]
ResetOnLogon = "N"
[[session]]
comp_id = "CLIENT1"
[[session]]
comp_id = "DC1"
kind = "dropcopy"
copy_all = true
`)
	const burst = 3000
	next, first := 1, true
	dcNext := 1
	for attempt := 1; ; attempt++ {
		v := startVenue(t, cfg)
		c := logOnAt(t, v.fixAddr, "CLIENT1", next, first)
		// The drop copy is logged on and does not read: its copies lag.
		dc := logOnAt(t, v.fixAddr, "DC1", dcNext, first)
		first = false
		for i := range burst {
			id, px, tif, extra := fmt.Sprintf("a%d-%d", attempt, i), "99.00", "1", []fixclient.Field{}
			if i%2 == 1 {
				// A post-only GTD order outside the band: its rebuilt
				// reject echoes ExecInst 6 and ExpireTime as the live one
				// does.
				id, px, tif = fmt.Sprintf("p%d-%d", attempt, i), "200.00", "6"
				extra = []fixclient.Field{fixclient.F(18, "6"), fixclient.F(126, lostExpire)}
			}
			if err := c.Send("D", append([]fixclient.Field{fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
				fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"),
				fixclient.F(44, px), fixclient.F(59, tif)}, extra...)...); err != nil {
				t.Fatal(err)
			}
		}
		v.kill()
		next, dcNext = c.NextOut, dc.NextOut
		c.Close()
		dc.Close()

		v = startVenue(t, cfg)
		r := logOnAt(t, v.fixAddr, "CLIENT1", next, false)
		// Every order the venue holds (they rest for good), by mass status.
		live := openOrders(t, r)
		acked, execIDs := map[string]bool{}, map[string]bool{}
		for _, m := range resentReports(t, r) {
			if m.Get(150) == "8" && (m.Get(18) != "6" || m.Get(126) != lostExpire) {
				t.Fatalf("reject of a post-only GTD order resent without ExecInst 6 or ExpireTime %s: %s", lostExpire, m)
			}
			if m.Get(150) == "0" {
				if execIDs[m.Get(17)] {
					t.Fatalf("ExecID %s sent twice: %s", m.Get(17), m)
				}
				execIDs[m.Get(17)] = true
				acked[m.Get(11)] = true
			}
		}
		// Logged before the venue took its first connection.
		rebuilt := strings.Contains(v.logs(), "answers lost at the last stop rebuilt")
		missing := 0
		for id := range live {
			if !acked[id] {
				missing++
			}
		}
		// The drop copy: every order's New copied once.
		d := logOnAt(t, v.fixAddr, "DC1", dcNext, false)
		copied := map[string]bool{}
		for _, m := range resentReports(t, d) {
			if m.Get(797) == "Y" {
				key := m.Get(128) + "/" + m.Get(17)
				if copied[key] {
					t.Fatalf("drop copy of ExecID %s stored twice: %s", m.Get(17), m)
				}
				copied[key] = true
				if m.Get(150) == "0" {
					copied[m.Get(11)] = true
				}
			}
		}
		d.Close()
		for id := range live {
			if !copied[id] {
				missing++
			}
		}
		next, dcNext = r.NextOut, d.NextOut
		r.Close()
		v.stop(t)
		if missing > 0 {
			t.Fatalf("attempt %d: %d New reports or copies missing for the %d orders the venue holds (rebuilt: %v)\n%s",
				attempt, missing, len(live), rebuilt, v.logs())
		}
		if rebuilt {
			t.Logf("attempt %d: %d orders held, each reported New once, the lost reports rebuilt", attempt, len(live))
			// They are stored now, and that stop was clean: nothing is
			// rebuilt again.
			v = startVenue(t, cfg)
			if strings.Contains(v.logs(), "answers lost at the last stop rebuilt") {
				t.Fatalf("a start after a clean stop rebuilt answers:\n%s", v.logs())
			}
			return
		}
		if attempt == 5 {
			t.Fatalf("no kill in %d lost an answer: the test did not reach what it checks", attempt)
		}
	}
}

// logOnAt logs comp on at next (its next MsgSeqNum), with ResetSeqNumFlag
// when reset.
func logOnAt(t *testing.T, addr, comp string, next int, reset bool) *fixclient.Client {
	t.Helper()
	c, err := fixclient.Dial(addr, comp, "VENUE")
	if err != nil {
		t.Fatal(err)
	}
	c.NextOut = next
	if _, err := c.Logon(reset); err != nil {
		t.Fatal(err)
	}
	return c
}

// resentReports asks c's venue to resend everything from 1 and returns the
// ExecutionReports it resends (PossDupFlag Y). A TestRequest sent behind
// the ResendRequest marks the resend's end: the venue answers it only once
// it has resent the range (a pause of the resend on a busy machine ended a
// read that took 2 s of quiet for the end).
func resentReports(t *testing.T, c *fixclient.Client) []*fixclient.Message {
	t.Helper()
	if err := c.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	if err := c.Send("1", fixclient.F(112, "resent")); err != nil {
		t.Fatal(err)
	}
	var out []*fixclient.Message
	deadline := time.Now().Add(60 * time.Second)
	for {
		m, err := c.ReadAny(time.Until(deadline))
		switch {
		case errors.Is(err, io.EOF):
			return out // the venue ended the session after the resend
		case err != nil:
			t.Fatalf("resend: %v after %d reports", err, len(out))
		case m.Type() == "0" && m.Get(112) == "resent":
			return out
		case m.Type() == "8" && m.Get(43) == "Y":
			out = append(out, m)
		}
	}
}

// TestKill9AfterDropCopyResetAndReplayRebuildsNothing: a drop-copy session
// that logs on with ResetSeqNumFlag and asks (35=AD) for the copies of an
// earlier period holds, after its reset, copies of old reports only. A
// kill -9 then must not make the next start take every report since its
// snapshot for a copy that session lacks: it had them all before its reset
// (docs/ARCHITECTURE.md, "Answers lost at a crash"), and a resend gives
// the replay's copy alone.
func TestKill9AfterDropCopyResetAndReplayRebuildsNothing(t *testing.T) {
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, `[marketdata]
enabled = false
[journal]
snapshot_interval = "0s"
[session_defaults]
cancel_on_disconnect = false
[session_defaults.quickfix]
ResetOnLogon = "N"
[[session]]
comp_id = "CLIENT1"
[[session]]
comp_id = "DC1"
kind = "dropcopy"
copy_all = true
`)
	v := startVenue(t, cfg)
	c := logOnAt(t, v.fixAddr, "CLIENT1", 1, true)
	dc := logOnAt(t, v.fixAddr, "DC1", 1, true)
	const orders = 5
	var firstTime, firstExecID string
	for i := range orders {
		id := fmt.Sprintf("o%d", i)
		if err := c.Send("D", tradingOrder(id, i)...); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Expect(10*time.Second, "8", map[int]string{11: id, 150: "0"}); err != nil {
			t.Fatal(err)
		}
		m, err := dc.Expect(10*time.Second, "8", map[int]string{11: id, 150: "0", 797: "Y"})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			firstTime, firstExecID = m.Get(60), m.Get(17)
			// The other orders' TransactTimes are later, outside the period.
			time.Sleep(5 * time.Millisecond)
		}
	}
	dc.Close()
	dc = logOnAt(t, v.fixAddr, "DC1", 1, true)
	if err := dc.Send("AD", fixclient.F(568, "r1"), fixclient.F(569, "0"), fixclient.F(580, "2"),
		fixclient.F(75, firstTime[:8]), fixclient.F(60, firstTime), fixclient.F(75, firstTime[:8]), fixclient.F(60, firstTime)); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Expect(10*time.Second, "AQ", map[int]string{568: "r1", 750: "1", 748: "1"}); err != nil {
		t.Fatal(err)
	}
	v.kill()
	next := dc.NextOut
	dc.Close()
	c.Close()

	v = startVenue(t, cfg)
	defer v.stop(t)
	if strings.Contains(v.logs(), "answers lost at the last stop rebuilt") {
		t.Errorf("the start rebuilt answers nobody lacked:\n%s", v.logs())
	}
	d := logOnAt(t, v.fixAddr, "DC1", next, false)
	defer d.Close()
	var got []string
	for _, m := range resentReports(t, d) {
		got = append(got, m.Get(11)+"/"+m.Get(17))
	}
	if want := "o0/" + firstExecID; len(got) != 1 || got[0] != want {
		t.Fatalf("after the restart DC1's store holds the copies %v; want only the replay's %s", got, want)
	}
}

// TestCleanStopLosesNoAnswers: after a clean stop (SIGTERM), a start whose
// journal holds reports of a session that a drop copy is not granted,
// newer than the drop copy's last copy, has nothing to rebuild, and does
// not log that answers were lost ("Answers after a crash": the log names
// answers lost at the last stop with their count). It logged the warning
// with reports=0 drop_copies=0: the replay keeps such reports as ones a
// drop copy might lack, and the redelivery found none did.
func TestCleanStopLosesNoAnswers(t *testing.T) {
	t.Parallel()
	cfg := writeVenueConfig(t, t.TempDir(), `[marketdata]
enabled = false
[[session]]
comp_id = "CLIENT%%d"
range = [1, 2]
[[session]]
comp_id = "DC1"
kind = "dropcopy"
copy_sessions = ["CLIENT1"]
`)
	v := startVenue(t, cfg)
	for _, s := range []string{"CLIENT1", "CLIENT2"} {
		c := logOn(t, v.fixAddr, s)
		sendLimit(t, c, "o-"+s, "1", "99.00", 1, "1")
		if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o-" + s, 150: "0"}); err != nil {
			t.Fatal(err)
		}
	}
	v.stop(t)
	v = startVenue(t, cfg)
	defer v.stop(t)
	if strings.Contains(v.logs(), "answers lost at the last stop") {
		t.Fatalf("a start after a clean stop says answers were lost:\n%s", v.logs())
	}
}

// openOrders asks for the session's open orders by mass status (584=all)
// and returns their ClOrdIDs.
func openOrders(t *testing.T, r *fixclient.Client) map[string]bool {
	t.Helper()
	if err := r.Send("AF", fixclient.F(584, "all"), fixclient.F(585, "7")); err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	for {
		m, err := r.Read(10 * time.Second)
		if err != nil {
			t.Fatalf("mass status: %v after %d reports", err, len(live))
		}
		if m.Type() == "8" && m.Get(584) == "all" {
			if m.Get(37) != "NONE" { // else: no open orders
				live[m.Get(11)] = true
			}
			if m.Get(912) == "Y" {
				return live
			}
		}
	}
}
