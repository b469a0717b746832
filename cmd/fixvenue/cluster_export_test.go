package main

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/eventstream"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
)

// TestClusterExportContinuesOnALeaderRestoredFromARaftSnapshot: a follower
// that caught up from a Raft snapshot holds no command before it; led to
// by a transfer, its export continues the stream the old leader wrote
// from that state (README, "Event stream"), where its catch-up read the
// journal from the first command and paused the export for good. A
// drop-copy session's request for a period is refused there, saying why
// (README, "Drop copy"): the reports before the snapshot are not on it;
// `events verify` against its journal says to verify against another node.
func TestClusterExportContinuesOnALeaderRestoredFromARaftSnapshot(t *testing.T) {
	h, _ := startExportCluster(t, "\n[[session]]\ncomp_id = \"DROP\"\nkind = \"dropcopy\"\ncopy_all = true\n", "entries_in_memory = 16\n")
	l := h.leader(30 * time.Second)
	behind := (l + 1) % 3
	h.kill(behind)
	// Past the leader's 16 entries in memory: the follower needs a snapshot.
	wait := h.round("behind", false)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		if st, err := h.nodeStatus(l); err == nil && st.Applied >= 64 {
			break
		}
	}
	h.endRound(wait)
	h.start(behind)
	h.converge(30 * time.Second)
	if logs := h.procs[behind].logs(); !strings.Contains(logs, "installing a Raft snapshot") {
		t.Fatalf("the follower caught up without a Raft snapshot:\n%s", lastLines(logs, 40))
	}
	// The stream holds every event before the transfer (a loaded machine
	// exports late): else the new leader's export rightly pauses, the
	// stream ending before the Raft snapshot its journal starts from.
	if out, err := exec.Command(binPath, "events", "verify", "--config", h.cfgs[l]).CombinedOutput(); err != nil {
		t.Fatalf("events verify against the leader before the transfer: %v\n%s", err, out)
	}
	out, err := exec.Command(binPath, "cluster", "transfer", "--config", h.cfgs[l], "--to", strconv.Itoa(behind+1), "--token", clusterToken).CombinedOutput()
	if err != nil {
		t.Fatalf("cluster transfer: %v\n%s", err, out)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if st, err := h.nodeStatus(behind); err == nil && st.Serving {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d does not lead after the transfer", behind+1)
		}
	}
	c := &clusterClient{comp: "CLIENT1"}
	cl, err := c.connect(h.fix[:], 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	restDayBuy(t, cl, "on-the-new-leader")
	cl.Close()
	d, err := (&clusterClient{comp: "DROP"}).connect(h.fix[:], 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := d.Send("AD", fixclient.F(568, "period"), fixclient.F(569, "0"), fixclient.F(580, "1"),
		fixclient.F(75, now.UTC().Format("20060102")), fixclient.F(60, fixclient.Timestamp(now.Add(-time.Minute)))); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Expect(10*time.Second, "AQ", map[int]string{568: "period", 750: "2", 749: "99",
		58: "this cluster node caught up from a Raft snapshot and holds no report before it: it replays none"}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	// The old leader's journal holds every command once it has caught up
	// after its restart: verify waits (10 s) for a running venue's export
	// to reach its end.
	h.converge(20 * time.Second)
	out, err = exec.Command(binPath, "events", "verify", "--config", h.cfgs[l]).CombinedOutput()
	if err != nil {
		t.Fatalf("events verify against node %d's journal: %v\n%s\nnew leader's log:\n%s", l+1, err, out,
			lastLines(h.procs[behind].logs(), 20))
	}
	if logs := h.procs[behind].logs(); strings.Contains(logs, "event export paused") {
		t.Fatalf("the new leader's export paused:\n%s", lastLines(logs, 20))
	}
	out, err = exec.Command(binPath, "events", "verify", "--config", h.cfgs[behind]).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "starts from a Raft snapshot (the node caught up from one) and holds no event before it: verify against another node's configuration") {
		t.Fatalf("events verify against node %d, restored from a Raft snapshot: %v\n%s", behind+1, err, out)
	}
}

// TestClusterEventsVerifyWaitsForAFollowerBehind: `events verify` against
// a follower whose journal is behind the stream the leader exports (cut off
// from the leader a moment, as the old leader is while it restarts after a
// failover) replays that journal again until it holds the stream's events,
// and says OK, where it reported a mismatch at once. Against a node that
// caught up from a Raft snapshot it says to verify against another node.
func TestClusterEventsVerifyWaitsForAFollowerBehind(t *testing.T) {
	h, _ := startExportCluster(t, "", "")
	l := h.leader(30 * time.Second)
	f := (l + 1) % 3
	c := &clusterClient{comp: "CLIENT1"}
	cl, err := c.connect(h.fix[:], 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	restDayBuy(t, cl, "before")
	h.converge(10 * time.Second)
	h.links[[2]int{l, f}].setBlocked(true)
	h.links[[2]int{f, l}].setBlocked(true)
	for i := range 3 {
		restDayBuy(t, cl, fmt.Sprintf("cut-%d", i))
	}
	verify := exec.Command(binPath, "events", "verify", "--config", h.cfgs[f])
	var stdout, stderr lockedbuf.Buffer
	verify.Stdout, verify.Stderr = &stdout, &stderr
	if err := verify.Start(); err != nil {
		t.Fatal(err)
	}
	// The stream is read, the journal found behind it; then the link is back.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "journal is") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	h.links[[2]int{l, f}].setBlocked(false)
	h.links[[2]int{f, l}].setBlocked(false)
	if err := verify.Wait(); err != nil {
		t.Fatalf("events verify against the follower: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "events behind the stream (a cluster node catching up?)") {
		t.Fatalf("events verify did not say the journal was behind: %s", stderr.String())
	}
}

// TestClusterNewLeaderExportCatchesUpFromAFollowerSnapshot: a node that
// never led comes to lead after a kill -9 of the leader; its export's
// catch-up starts from the newest journal snapshot it wrote as a follower,
// not from its first command (a second matcher replaying the whole day,
// the stream lagging meanwhile), and the stream continues: `events verify`
// against its journal says OK. A session's disconnect after the last order
// takes no snapshot, which would have removed the one the catch-up needs.
func TestClusterNewLeaderExportCatchesUpFromAFollowerSnapshot(t *testing.T) {
	h, _ := startExportCluster(t, "", "")
	l := h.leader(30 * time.Second)
	c := &clusterClient{comp: "CLIENT1"}
	cl, err := c.connect(h.fix[:], 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// A snapshot, then commands after it: the catch-up starts from the
	// newest snapshot before the stream's last event.
	for i := range 3 {
		restDayBuy(t, cl, "before-snapshot-"+strconv.Itoa(i))
	}
	h.quiesce(20 * time.Second)
	st, err := h.nodeStatus(l)
	if err != nil {
		t.Fatal(err)
	}
	restDayBuy(t, cl, "after-snapshot")
	// A Snapshot command after the order, then the session's disconnect, a
	// command without events: no snapshot follows it, where two snapshots
	// after the stream's last event removed the one before it (two are
	// kept) and the catch-up started from the first command.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if now, err := h.nodeStatus(l); err == nil && now.CommittedSeq >= st.CommittedSeq+2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Snapshot command after the order within 10 s")
		}
	}
	cl.Close()
	h.quiesce(20 * time.Second)
	// The stream holds every event before the kill (a loaded machine
	// exports late): else the catch-up rightly starts before the snapshots.
	if out, err := exec.Command(binPath, "events", "verify", "--config", h.cfgs[l]).CombinedOutput(); err != nil {
		t.Fatalf("events verify against the leader before the kill: %v\n%s", err, out)
	}
	killed := time.Now()
	h.kill(l)
	next := h.leader(30 * time.Second)
	var from string
	for deadline := time.Now().Add(10 * time.Second); from == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		from = logField(h.procs[next].logs(), "event export: catching up from the journal", "journal_from_seq", killed)
	}
	if n, err := strconv.ParseUint(from, 10, 64); err != nil || n <= 1 {
		t.Fatalf("the new leader's export caught up from journal seq %q, want after a snapshot its follower wrote:\n%s",
			from, lastLines(h.procs[next].logs(), 30))
	}
	cl, err = c.connect([]string{h.fix[next]}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	restDayBuy(t, cl, "after-kill")
	cl.Close()
	out, err := exec.Command(binPath, "events", "verify", "--config", h.cfgs[next]).CombinedOutput()
	if err != nil {
		t.Fatalf("events verify against node %d's journal: %v\n%s\nits log:\n%s", next+1, err, out, lastLines(h.procs[next].logs(), 20))
	}
	t.Logf("node %d's export caught up from journal seq %s; events verify: %s", next+1, from, strings.TrimSpace(string(out)))
}

// startExportCluster starts an embedded NATS server, stopped at the test's
// end, and three nodes exporting to it, with extra added to each node's
// configuration and raft to its [cluster] table.
func startExportCluster(t *testing.T, extra, raft string) (*clusterHarness, *eventstream.Embedded) {
	t.Helper()
	nats, err := eventstream.StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nats.Stop)
	h := writeClusterConfigsWith(t, func(int) string {
		return fmt.Sprintf("\n[export]\nenabled = true\nnats_url = %q\n", nats.URL()) + extra
	}, false, raft, nil)
	h.startAll()
	return h, nats
}
