package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
)

// diskVenueTOML is a small venue without market data whose orders outlive
// their session's connection.
const diskVenueTOML = `[engine]
orders_max = 1024
clordids_max = 4096
command_ring_slots = 1024
event_ring_slots = 4096
[marketdata]
enabled = false
[session_defaults]
cancel_on_disconnect = false
open_orders_max = 0 # one session rests up to 500 orders, past a quarter of orders_max
`

// venueStatus reads GET /v1/status of the venue's admin API (loopback:
// no token needed to read).
func venueStatus(t *testing.T, v *venueProc) ops.StatusInfo {
	t.Helper()
	resp, err := http.Get("http://" + v.ready.AdminAddr + "/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st ops.StatusInfo
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestJournalRemovedUnderTheVenueHalts: the journal directory removed under
// a running venue (an rm -r of its data directory) leaves the venue writing
// and syncing segments that no longer have a name: every write and sync
// succeeds, and an order acknowledged then would be gone at the next start.
// The venue halts at the first batch after the removal instead: that order
// is never acknowledged, the client is told the venue halted and later
// orders are refused, and the status names the cause.
func TestJournalRemovedUnderTheVenueHalts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v := startVenue(t, writeVenueConfig(t, dir, diskVenueTOML))
	c := logOn(t, v.fixAddr, "CLIENT1")
	restDayBuy(t, c, "before")
	if err := os.RemoveAll(filepath.Join(dir, "data", "journal")); err != nil {
		t.Fatal(err)
	}
	if err := c.Send("D", dayBuy("after")...); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(10*time.Second, "h", map[int]string{336: "ALL", 340: "1"}); err != nil {
		t.Fatalf("no halt after the journal was removed: %v\n%s", err, lastLines(v.logs(), 20))
	}
	if err := c.Send("D", dayBuy("later")...); err != nil {
		t.Fatal(err)
	}
	m, err := c.Expect(10*time.Second, "8", map[int]string{11: "later"})
	if err != nil || m.Get(150) != "8" || m.Get(58) != "venue halted: journal failure" {
		t.Fatalf("an order after the halt: %v %v", m, err)
	}
	for _, got := range c.Received {
		if got.Get(11) == "after" && got.Get(150) == "0" {
			t.Fatalf("the order written to the removed journal was acknowledged: %s", got)
		}
	}
	if st := venueStatus(t, v); st.Ready || !strings.Contains(st.Halted, "removed") {
		t.Fatalf("/v1/status after the journal was removed: %+v", st)
	}
}

// TestSnapshotStateFailuresAreCounted: a start loads a journal snapshot
// only with the states kept beside it (here the console's). With their
// directory refusing writes, every journal snapshot was written and counted
// while none could serve a start, which would replay the whole journal:
// the state's failures count in fixvenue_snapshot_failures_total, the
// metric to alert on, and the log names the state.
func TestSnapshotStateFailuresAreCounted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v := startVenue(t, writeVenueConfig(t, dir, diskVenueTOML+"[journal]\nsnapshot_interval = \"100ms\"\n"), "--metrics-addr", "127.0.0.1:0")
	// A file where the directory was: every state file fails to open.
	state := filepath.Join(dir, "data", "consolestate")
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := logOn(t, v.fixAddr, "CLIENT1")
	// Snapshots are taken while commands come, and the tape saves its
	// state at the first event after each.
	for n := 0; ; n++ {
		restDayBuy(t, c, fmt.Sprintf("o%d", n))
		m := metricstest.Scrape(t, v.ready.MetricsAddr)
		taken, failed := metricstest.Float(t, m, "fixvenue_snapshots_total"), metricstest.Float(t, m, "fixvenue_snapshot_failures_total")
		if failed > 0 {
			break
		}
		if taken >= 5 {
			t.Fatalf("%v journal snapshots taken, none with its console state, and %v failures counted:\n%s", taken, failed, lastLines(v.logs(), 20))
		}
		if n == 500 {
			t.Fatalf("no snapshot after %d orders:\n%s", n, lastLines(v.logs(), 20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	v.waitLogLine(t, "a log line naming the console state that was not written", func(line string) bool {
		return strings.Contains(line, `msg="journal: snapshot not written"`) && strings.Contains(line, "state=console")
	})
}

// TestFIXStoreRemovedUnderTheVenueHalts: the FIX store directory removed
// under a running venue leaves every session writing and syncing a store
// file that no longer has a name, without an error, and the next start
// found no store: the sessions started again at sequence number 1, and
// when a snapshot held the sessions' reports, without a word. The venue
// halts at the sync after a store is written instead, the client told and
// the status naming the cause; the next start, from a snapshot holding
// every report of the session, names the session whose store is missing,
// and every order acknowledged is there.
func TestFIXStoreRemovedUnderTheVenueHalts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, diskVenueTOML+"[journal]\nsnapshot_interval = \"100ms\"\n")
	v := startVenue(t, cfg)
	c := logOn(t, v.fixAddr, "CLIENT1")
	restDayBuy(t, c, "first")
	restDayBuy(t, c, "second")
	// A snapshot after CLIENT1's reports with the feed's and the console's
	// states beside it, which they save at the first event of a later
	// command (another session's): a start from it replays none of
	// CLIENT1's reports. Once it is there no command with events follows,
	// so at most one more snapshot is taken and the journal keeps it.
	other := logOn(t, v.fixAddr, "CLIENT2")
	durable := uint64(venueStatus(t, v).DurableSeq)
	if !statusRequestsUntil(t, other, "ACME", func() bool { return loadableSnapshotAfter(filepath.Join(dir, "data"), durable) }) {
		t.Fatalf("no snapshot with its states after seq %d:\n%s", durable, lastLines(v.logs(), 20))
	}

	if err := os.RemoveAll(filepath.Join(dir, "data", "fixstore")); err != nil {
		t.Fatal(err)
	}
	// A store written (CLIENT1's, by the heartbeat that answers a test
	// request; CLIENT2's, by the status report before), then synced.
	if err := c.Send("1", fixclient.F(112, "probe")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(10*time.Second, "h", map[int]string{336: "ALL", 340: "1"}); err != nil {
		t.Fatalf("no halt after the FIX store directory was removed: %v\n%s", err, lastLines(v.logs(), 20))
	}
	if err := c.Send("D", dayBuy("later")...); err != nil {
		t.Fatal(err)
	}
	m, err := c.Expect(10*time.Second, "8", map[int]string{11: "later"})
	if err != nil || m.Get(150) != "8" || m.Get(58) != "venue halted: FIX session store failure" {
		t.Fatalf("an order after the halt: %v %v", m, err)
	}
	if st := venueStatus(t, v); st.Ready || !strings.Contains(st.Halted, "removed") || !strings.Contains(st.Halted, ".fixstore") {
		t.Fatalf("/v1/status after the FIX store directory was removed: %+v", st)
	}
	c.Close()
	other.Close()
	v.stop(t)

	v = startVenue(t, cfg)
	if !v.loadedSnapshot() {
		t.Fatalf("the restart loaded no snapshot:\n%s", v.logs())
	}
	warned := false
	for _, line := range strings.Split(v.logs(), "\n") {
		if strings.Contains(line, "FIX store is missing") && (strings.Contains(line, "sessions=CLIENT1,") || strings.Contains(line, `sessions="CLIENT1,`)) {
			warned = true
		}
	}
	if !warned {
		t.Fatalf("the start does not name CLIENT1, whose FIX store is missing:\n%s", v.logs())
	}
	// Every order acknowledged is there (the client resets its sequence
	// numbers, as the warning says).
	r := logOn(t, v.fixAddr, "CLIENT1")
	live := openOrders(t, r)
	if !live["first"] || !live["second"] {
		t.Fatalf("after the restart the open orders are %v, want first and second", live)
	}
}

// loadableSnapshotAfter reports whether the journal of the data directory
// holds a snapshot after seq that the market data feed and the console (those
// the venue runs) have saved their states beside, one a start may load. Each saves its state at
// the first event of a command after the snapshot and keeps one slot for
// it: on a loaded machine a snapshot taken before that event was consumed
// took the slot, and the earlier one never got its state.
func loadableSnapshotAfter(data string, seq uint64) bool {
	snaps, err := journal.ListSnapshots(filepath.Join(data, "journal"))
	if err != nil {
		return false
	}
	for _, sf := range snaps {
		if sf.Seq <= seq {
			continue
		}
		beside := true
		for _, state := range []string{"consolestate", "mdstate"} {
			if _, err := os.Stat(filepath.Join(data, state)); err != nil {
				continue // not kept by this venue (no feed, say)
			}
			if _, err := os.Stat(filepath.Join(data, state, filepath.Base(sf.Path))); err != nil {
				beside = false
			}
		}
		if beside {
			return true
		}
	}
	return false
}
