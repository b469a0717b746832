package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
