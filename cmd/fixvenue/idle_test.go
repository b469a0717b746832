package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/admintest"
)

// idleTOML is a venue that takes a snapshot every 60 ms after a command,
// whose sessions keep their orders across a disconnect (no
// cancel-on-disconnect command after the start's grace).
const idleTOML = "[marketdata]\nenabled = false\n[journal]\nsnapshot_interval = \"60ms\"\n" +
	"[session_defaults]\ncancel_on_disconnect = false\n[[session]]\ncomp_id = \"CLIENT1\"\n"

// idleWait is how long a test leaves the venue idle: several report and
// snapshot intervals.
const idleWait = 500 * time.Millisecond

// journalCommands is the journal of the venue configured at cfgPath, as
// `fixvenue journal dump` prints it: each record's command name, in order.
func journalCommands(t *testing.T, cfgPath string) []string {
	t.Helper()
	out, err := exec.Command(binPath, "journal", "dump", "--config", cfgPath).Output()
	if err != nil {
		t.Fatalf("journal dump: %v\n%s", err, out)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\S+ seq=\d+ (\S+)`).FindAllStringSubmatch(string(out), -1) {
		names = append(names, m[1])
	}
	return names
}

// snapshotFiles lists the journal snapshots of the venue whose data is in dir/data.
func snapshotFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "data", "journal"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".snap") {
			names = append(names, e.Name())
		}
	}
	return names
}

// stillIdle leaves the venue alone for idleWait and fails when its journal
// or its snapshots changed meanwhile.
func stillIdle(t *testing.T, v *venueProc, cfgPath, dir, when string) {
	t.Helper()
	cmds, snaps := journalCommands(t, cfgPath), snapshotFiles(t, dir)
	time.Sleep(idleWait)
	if now := journalCommands(t, cfgPath); !slices.Equal(now, cmds) {
		t.Fatalf("%s: an idle venue journaled %v after %v\n%s", when, now[len(cmds):], cmds, v.logs())
	}
	if now := snapshotFiles(t, dir); !slices.Equal(now, snaps) {
		t.Fatalf("%s: an idle venue wrote snapshots %v, had %v\n%s", when, now, snaps, v.logs())
	}
}

// TestIdleVenueJournalsNoRiskReport: with [risk] on, a venue nobody uses
// journals no utilisation report and so takes no snapshot, however many
// report and snapshot intervals pass (a venue left running over a night or
// a weekend writes nothing). An order makes the next report and the next
// snapshot happen, and once they are journaled the venue is quiet again.
func TestIdleVenueJournalsNoRiskReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath := writeVenueConfig(t, dir, idleTOML+"[risk]\nreport_interval = \"20ms\"\n[risk.sessions]\ncredit_limit = 100000000\n")
	v := startVenue(t, cfgPath)
	stillIdle(t, v, cfgPath, dir, "after the start")
	if cmds := journalCommands(t, cfgPath); len(cmds) != 0 {
		t.Fatalf("a venue started and left alone journaled %v", cmds)
	}

	c := logOn(t, v.fixAddr, "CLIENT1")
	sendLimit(t, c, "o1", "1", "99.00", 5, "1")
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o1", 150: "0"}); err != nil {
		t.Fatal(err)
	}
	// The order changed the figures: a report, then a snapshot after it.
	var cmds []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		cmds = journalCommands(t, cfgPath)
		order := slices.Index(cmds, "NewOrder")
		report := slices.Index(cmds, "RiskControl")
		if order >= 0 && report > order && slices.Index(cmds[report:], "Snapshot") > 0 && len(snapshotFiles(t, dir)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report and snapshot after the order within 10 s: journal %v, snapshots %v\n%s", cmds, snapshotFiles(t, dir), v.logs())
		}
	}
	stillIdle(t, v, cfgPath, dir, "after the order's report and snapshot")
	cmds = journalCommands(t, cfgPath)
	if n := strings.Count(strings.Join(cmds, " "), "RiskControl"); n != 1 {
		t.Errorf("one order gave %d reports, want 1: %v", n, cmds)
	}
}

// TestEndOfDaySnapshotIsNotTakenAgain: the end of day journals a snapshot
// of the state it leaves; the periodic snapshot neither takes one of the
// same state while the end of day runs (which had the end of day's
// skipped, as one is while another is written, and journaled again) nor
// after it, finding no command since, nor any later while the venue is
// idle.
func TestEndOfDaySnapshotIsNotTakenAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath := writeVenueConfig(t, dir, idleTOML+"[admin]\n%s", adminTokenTOML("rita", "", riskToken))
	v := startVenue(t, cfgPath)
	if a := admintest.Call(t, http.MethodPost, "http://"+v.ready.AdminAddr+"/v1/eod", riskToken, `{"reason":"idle test"}`); a.Status != http.StatusOK {
		t.Fatalf("end of day: %d %s", a.Status, a.Body)
	}
	// The end of day answers once its snapshot is written.
	if cmds := journalCommands(t, cfgPath); !slices.Equal(cmds, []string{"OperatorCommand", "Snapshot"}) {
		t.Fatalf("journal after the end of day: %v, want it and its snapshot\n%s", cmds, v.logs())
	}
	stillIdle(t, v, cfgPath, dir, "after the end of day")
}

// TestRestartJournalsNoCancelOnDisconnectThatCancelsNothing: after a
// start, a cancel-on-disconnect session that stays away past
// fix.cancel_grace gets a SessionDisconnected only when it has DAY orders
// to cancel: one with a GTC order alone (kept across a disconnect), or
// none, gets no command, where each got one at every start, and a risk
// report and a snapshot after them.
func TestRestartJournalsNoCancelOnDisconnectThatCancelsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath := writeVenueConfig(t, dir, "cancel_grace = \"50ms\"\n[marketdata]\nenabled = false\n[journal]\nsnapshot_interval = \"60ms\"\n"+
		"[session_defaults]\ncancel_on_disconnect = true\n[[session]]\ncomp_id = \"CLIENT%%d\"\nrange = [1, 2]\n")
	v := startVenue(t, cfgPath)
	c := logOn(t, v.fixAddr, "CLIENT1")
	sendLimit(t, c, "gtc1", "1", "99.00", 5, "1")
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "gtc1", 150: "0"}); err != nil {
		t.Fatal(err)
	}
	// A snapshot of the order, which the restart starts from.
	for deadline := time.Now().Add(10 * time.Second); len(snapshotFiles(t, dir)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot within 10 s of the order\n%s", v.logs())
		}
	}
	v.kill() // journals no disconnect
	v = startVenue(t, cfgPath)
	stillIdle(t, v, cfgPath, dir, "after the restart")
	if cmds := journalCommands(t, cfgPath); cmds[0] != "NewOrder" || slices.Contains(cmds, "SessionDisconnected") {
		t.Fatalf("journal %v, want the order and no SessionDisconnected", cmds)
	}
}
