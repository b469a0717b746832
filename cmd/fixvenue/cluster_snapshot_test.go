package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/admintest"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/journal"
)

// TestClusterFollowerCatchesUpFromSnapshot keeps a follower down while the
// sessions trade, so that the leader writes far past its in-memory Raft log
// (cluster.entries_in_memory = 16 entries): the follower rejoins, gets a
// Raft snapshot (matcher state, events hash, the feed's state and the
// console tape's) built from the leader's journal and streamed to it, then
// the log, and ends with the same committed seq, events hash, standby feed
// (next sequence number and state) and console tape as the other follower
// (an operator's mass cancel by account among the commands it missed: the
// tape keeps the account from the command, which the snapshot's replay
// shows it as the follower's apply does).
// Every acknowledged order is then on the leader, and `journal verify`
// prints the same line on all three nodes.
func TestClusterFollowerCatchesUpFromSnapshot(t *testing.T) {
	_, _, md := clusterMarketData(t)
	// The followers send the B line, ending a packet at each batch of
	// committed commands: a standby feed restored from a Raft snapshot or a
	// checkpoint keeps the state the other follower's has all the same.
	lineB := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	withB := func(i int) string {
		return md(i) + fmt.Sprintf("\nfeed_b_addr = %q\nfeed_b_from = \"followers\"", lineB)
	}
	h := writeClusterConfigsWith(t, nil, false, "entries_in_memory = 16\ncheckpoint_interval = \"1s\"\n", withB)
	// Small segments, so that the restarts at the end have sealed ones to
	// move to the archive.
	h.editConfigs("segment_bytes = 4194304", "segment_bytes = 65536")
	h.startAll()
	l := h.leader(30 * time.Second)
	behind, other := (l+1)%3, (l+2)%3
	h.kill(behind)
	if a := admintest.Call(t, http.MethodPost, "http://"+h.adminAddr(l)+"/v1/cancel", clusterToken,
		`{"reason": "fund closed", "account": "FUND"}`); a.Status != http.StatusOK {
		t.Fatalf("POST /v1/cancel: %d %s", a.Status, a.Body)
	}
	// Trade until the leader is well past its in-memory log (six times
	// over): a count of entries, not a time, since a loaded machine
	// batches more per entry, and so makes fewer; a round whose orders
	// made too few is followed by another, up to four.
	const entriesPast = 100
	var st nodeStatus
	deadline := time.Now().Add(120 * time.Second)
	for r := 0; ; r++ {
		wait := h.round(fmt.Sprintf("behind%d", r), false)
		for roundEnd := time.Now().Add(30 * time.Second); time.Now().Before(roundEnd) && time.Now().Before(deadline); {
			time.Sleep(500 * time.Millisecond)
			if st, err := h.nodeStatus(l); err == nil && st.Applied >= entriesPast {
				break
			}
		}
		h.endRound(wait)
		var err error
		if st, err = h.nodeStatus(l); err != nil {
			t.Fatal(err)
		}
		if st.Applied >= entriesPast || r == 3 || time.Now().After(deadline) {
			break
		}
	}
	if st.Applied < entriesPast {
		t.Fatalf("the leader applied only %d entries: not far enough past its 16 in memory to prove anything", st.Applied)
	}
	h.start(behind)
	h.quiesce(60 * time.Second)
	stB, errB := h.nodeStatus(behind)
	stO, errO := h.nodeStatus(other)
	if errB != nil || errO != nil {
		t.Fatal(errB, errO)
	}
	if stB.EventsHash == "" || stB.EventsHash != stO.EventsHash || stB.CommittedSeq != stO.CommittedSeq {
		t.Fatalf("rejoined follower: committed %d hash %s; other follower: committed %d hash %s",
			stB.CommittedSeq, stB.EventsHash, stO.CommittedSeq, stO.EventsHash)
	}
	if stB.FeedNextSeq < 2 || stB.FeedNextSeq != stO.FeedNextSeq || stB.FeedStateHash == "" || stB.FeedStateHash != stO.FeedStateHash {
		t.Fatalf("rejoined follower's standby feed: next seq %d, state %s; other follower's: next seq %d, state %s",
			stB.FeedNextSeq, stB.FeedStateHash, stO.FeedNextSeq, stO.FeedStateHash)
	}
	if stB.TapeHash == "" || stB.TapeHash != stO.TapeHash {
		t.Fatalf("rejoined follower's console tape %s, other follower's %s", stB.TapeHash, stO.TapeHash)
	}
	if logs := h.procs[behind].logs(); !strings.Contains(logs, "installing a Raft snapshot") {
		t.Fatalf("the follower caught up without a snapshot:\n%s", lastLines(logs, 40))
	}
	t.Logf("leader at index %d when the follower came back; rejoined follower and the other agree at seq %d, events hash %s",
		st.Applied, stB.CommittedSeq, stB.EventsHash)
	for _, c := range h.clients {
		cl, err := c.connect(h.fix[:], 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.verify(cl, true); err != nil {
			t.Fatalf("%s: %v", c.comp, err)
		}
		cl.Close()
	}
	h.checkClients()
	h.quiesce(30 * time.Second)
	before := make([]nodeStatus, 3)
	for i := range 3 {
		var err error
		if before[i], err = h.nodeStatus(i); err != nil {
			t.Fatal(err)
		}
	}
	// The nodes that kept checkpoints as they compacted say how many and
	// how long the last build took.
	for _, i := range []int{l, other} {
		page := metricstest.Scrape(t, h.status[i])
		built, took := metricstest.Float(t, page, "fixvenue_cluster_checkpoints_built_total"),
			metricstest.Float(t, page, "fixvenue_cluster_checkpoint_build_seconds")
		if built < 1 || took <= 0 {
			t.Fatalf("node %d: fixvenue_cluster_checkpoints_built_total %v, fixvenue_cluster_checkpoint_build_seconds %v, want a build", i+1, built, took)
		}
	}
	h.verifyJournals()
	// Its journal starts after the snapshot: a dump from seq 0 says the
	// commands before are in the snapshot, none missing (exit 0).
	code, stdout, stderr := runCLI(t, "", nil, "journal", "dump", "--config", h.cfgs[behind])
	if code != 0 || !strings.Contains(stderr, "in this replica's Raft snapshot") || strings.Contains(stderr, "in no segment") ||
		!strings.Contains(stdout, "# records=") {
		t.Fatalf("journal dump on the follower that caught up from a Raft snapshot: exit %d, want 0 naming the snapshot\n%s%s",
			code, lastLines(stdout, 3), stderr)
	}
	t.Logf("journal dump on the follower: %s", strings.TrimSpace(stderr))
	restartFromCheckpoints(t, h, before, []int{l, other})
	// Those starts moved the segments before their checkpoints to the
	// journal's archive; `journal verify`, which reads the archive too,
	// still prints the same line on every node.
	for _, i := range []int{l, other} {
		if archived, _ := filepath.Glob(filepath.Join(h.data[i], "journal", journal.ArchiveDirName, "journal-*.seg")); len(archived) == 0 {
			t.Fatalf("node %d archived no segment:\n%s", i+1, lastLines(h.procs[i].logs(), 30))
		}
	}
	h.verifyJournals()
}

// restartFromCheckpoints starts the three stopped nodes again: each of
// those in from kept checkpoints as its in-memory log was compacted, and
// restores the newest, replaying only the commands after it (its log says
// how many, fewer than it holds). The cluster then agrees as it did: the
// same committed seq, and for the followers the same events hash, feed
// and tape as before the stop (cluster/doc.go, "Checkpoints").
func restartFromCheckpoints(t *testing.T, h *clusterHarness, before []nodeStatus, from []int) {
	t.Helper()
	h.startAll()
	h.leader(30 * time.Second)
	h.quiesce(60 * time.Second)
	replayed := regexp.MustCompile(`started from a checkpoint.* index=(\d+) from_seq=(\d+) replayed_commands=(\d+)`)
	for _, i := range from {
		m := replayed.FindStringSubmatch(h.procs[i].logs())
		if m == nil {
			t.Fatalf("node %d did not start from a checkpoint:\n%s", i+1, lastLines(h.procs[i].logs(), 40))
		}
		if fromSeq, _ := strconv.ParseInt(m[2], 10, 64); fromSeq == 0 {
			t.Fatalf("node %d restored a checkpoint before any command: %s", i+1, m[0])
		}
		index, _ := strconv.ParseFloat(m[1], 64)
		if got := metricstest.Float(t, metricstest.Scrape(t, h.status[i]), "fixvenue_cluster_checkpoint_index"); got < index {
			t.Fatalf("node %d: fixvenue_cluster_checkpoint_index %v, its start restored index %v", i+1, got, index)
		}
		if st, err := h.nodeStatus(i); err != nil || float64(st.CheckpointIndex) < index {
			t.Fatalf("node %d: /cluster/status checkpoint_index %d (%v), its start restored index %v", i+1, st.CheckpointIndex, err, index)
		}
		t.Logf("node %d: %s", i+1, m[0])
	}
	var followers []nodeStatus
	for i := range 3 {
		st, err := h.nodeStatus(i)
		if err != nil {
			t.Fatal(err)
		}
		if st.CommittedSeq < before[i].CommittedSeq {
			t.Fatalf("node %d restarted at committed seq %d, before the stop %d", i+1, st.CommittedSeq, before[i].CommittedSeq)
		}
		if st.Serving {
			continue
		}
		followers = append(followers, st)
		if st.CommittedSeq == before[i].CommittedSeq && before[i].EventsHash != "" && st.EventsHash != before[i].EventsHash {
			t.Fatalf("node %d at seq %d: events hash %s after the restart, %s before", i+1, st.CommittedSeq, st.EventsHash, before[i].EventsHash)
		}
	}
	if len(followers) != 2 {
		t.Fatalf("%d followers after the restart", len(followers))
	}
	a, b := followers[0], followers[1]
	if a.EventsHash == "" || a.EventsHash != b.EventsHash || a.FeedStateHash != b.FeedStateHash || a.FeedNextSeq != b.FeedNextSeq ||
		a.TapeHash != b.TapeHash {
		t.Fatalf("followers after the restart differ: %+v and %+v", a, b)
	}
}

// TestClusterSessionAddedAfterARaftSnapshot: a follower catches up from a
// Raft snapshot, so its journal starts there; then the operator stops the
// nodes and adds a session to every node's file. That follower cannot
// restore the snapshot under the new configuration (it holds the state
// of the sessions of its day), and its start says so and what to do: with
// its data directory moved aside it catches up from the leader, whose
// journal starts at the beginning (docs/ARCHITECTURE.md, "Cluster", Not yet).
func TestClusterSessionAddedAfterARaftSnapshot(t *testing.T) {
	h := writeClusterConfigsWith(t, nil, false, "entries_in_memory = 8\n", nil)
	h.startAll()
	l := h.leader(30 * time.Second)
	behind := (l + 1) % 3
	h.kill(behind)
	cl, err := h.clients[0].connect(h.fix[:], 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// One order, one entry at least: the leader goes well past the 8 it
	// keeps in memory.
	for i := range 40 {
		restDayBuy(t, cl, fmt.Sprintf("snap-%d", i))
	}
	cl.Close()
	h.start(behind)
	h.converge(60 * time.Second)
	if logs := h.procs[behind].logs(); !strings.Contains(logs, "installing a Raft snapshot") {
		t.Fatalf("the follower caught up without a snapshot:\n%s", lastLines(logs, 40))
	}
	for i := range 3 {
		h.procs[i].stop(t)
		b, err := os.ReadFile(h.cfgs[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h.cfgs[i], []byte(string(b)+"[[session]]\ncomp_id = \"ADDED\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if i != behind {
			h.start(i)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binPath, "serve", "--config", h.cfgs[behind], "--metrics-addr", "off",
		"--admin-addr", "127.0.0.1:0").CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("the follower restored from a Raft snapshot started under a configuration that adds a session (%v):\n%s", err, out)
	}
	if !strings.Contains(string(out), "move its data directory aside") {
		t.Fatalf("the follower's refusal does not say what to do:\n%s", lastLines(string(out), 10))
	}
	if err := os.Rename(h.data[behind], h.data[behind]+".aside"); err != nil {
		t.Fatal(err)
	}
	h.start(behind)
	h.converge(60 * time.Second)
}

// TestClusterFollowersWriteJournalSnapshots: at each Snapshot command (every
// snapshot_interval after activity) a follower writes the journal snapshot
// the leader writes, byte for byte, so that a node that comes to lead has
// one to start its event export's catch-up (and `journal book`) from, not
// its first command; before, only a node that had led had any. The new
// leader after a kill -9 writes its own snapshots with the snapshotter it
// wrote them with as a follower, and the follower left writes the same.
func TestClusterFollowersWriteJournalSnapshots(t *testing.T) {
	h := newClusterHarness(t)
	l := h.leader(30 * time.Second)
	c, err := h.clients[0].connect(h.fix[:], 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	restDayBuy(t, c, "before-kill")
	c.Close()
	h.quiesce(20 * time.Second)
	first := sameJournalSnapshot(t, h, []int{l, (l + 1) % 3, (l + 2) % 3}, 0)
	for _, f := range []int{(l + 1) % 3, (l + 2) % 3} {
		followerSnapshotMetrics(t, h, f, first)
	}
	h.kill(l)
	next := h.leader(30 * time.Second)
	c, err = h.clients[1].connect([]string{h.fix[next]}, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	restDayBuy(t, c, "after-kill")
	c.Close()
	sameJournalSnapshot(t, h, []int{next, 3 - l - next}, first+1)
}

// followerSnapshotMetrics checks that node i's status /metrics counts the
// journal snapshots it wrote as a follower, seq the last or before it
// (one written since is counted too), and no failure.
func followerSnapshotMetrics(t *testing.T, h *clusterHarness, i int, seq uint64) {
	t.Helper()
	m := metricstest.Scrape(t, h.status[i])
	if got := metricstest.Float(t, m, "fixvenue_cluster_snapshots_total"); got < 1 {
		t.Errorf("node %d: fixvenue_cluster_snapshots_total %v, want at least 1", i+1, got)
	}
	if got := metricstest.Float(t, m, "fixvenue_cluster_snapshot_last_seq"); got < float64(seq) {
		t.Errorf("node %d: fixvenue_cluster_snapshot_last_seq %v, want at least %d", i+1, got, seq)
	}
	if got := metricstest.Float(t, m, "fixvenue_cluster_snapshot_failures_total"); got != 0 {
		t.Errorf("node %d: fixvenue_cluster_snapshot_failures_total %v, want 0", i+1, got)
	}
}

// sameJournalSnapshot waits up to 10 s for a journal snapshot at or after
// seq from that each of nodes has written (published: under its final
// name), and fails unless their files are identical; it returns its seq.
func sameJournalSnapshot(t *testing.T, h *clusterHarness, nodes []int, from uint64) uint64 {
	t.Helper()
	var have [][]journal.SnapshotFile
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		have = have[:0]
		for _, i := range nodes {
			snaps, err := journal.ListSnapshots(filepath.Join(h.data[i], "journal"))
			if err != nil {
				t.Fatal(err)
			}
			have = append(have, snaps)
		}
	next:
		for _, sf := range have[0] { // newest first
			if sf.Seq < from {
				break
			}
			want, err := os.ReadFile(sf.Path)
			if err != nil {
				continue // pruned meanwhile
			}
			for k, snaps := range have[1:] {
				i := slices.IndexFunc(snaps, func(o journal.SnapshotFile) bool { return o.Seq == sf.Seq })
				if i < 0 {
					continue next
				}
				got, err := os.ReadFile(snaps[i].Path)
				if err != nil {
					continue next
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("node %d's journal snapshot at seq %d (%d bytes) differs from node %d's (%d bytes)",
						nodes[k+1]+1, sf.Seq, len(got), nodes[0]+1, len(want))
				}
			}
			t.Logf("nodes %v wrote the same journal snapshot at seq %d (%d bytes)", nodes, sf.Seq, len(want))
			return sf.Seq
		}
	}
	t.Fatalf("no journal snapshot at or after seq %d on every one of nodes %v within 10 s: %v", from, nodes, have)
	return 0
}

// editConfigs replaces old with new in every node's configuration file.
func (h *clusterHarness) editConfigs(old, new string) {
	h.t.Helper()
	for _, path := range h.cfgs {
		b, err := os.ReadFile(path)
		if err != nil {
			h.t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(old)) {
			h.t.Fatalf("%s has no %q", path, old)
		}
		if err := os.WriteFile(path, bytes.ReplaceAll(b, []byte(old), []byte(new)), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
}

// TestClusterBookOnAReplicaFromARaftSnapshot: `journal book` on a follower
// that caught up from a Raft snapshot, with no journal snapshot written
// since (snapshots off), prints the same books as the other nodes, from
// the Raft snapshot and the commands after it, as `journal verify` does,
// rather than failing for the commands before it that no segment of
// that replica ever held.
func TestClusterBookOnAReplicaFromARaftSnapshot(t *testing.T) {
	h := writeClusterConfigsWith(t, nil, false, "entries_in_memory = 16\n", nil)
	h.editConfigs(`snapshot_interval = "500ms"`, `snapshot_interval = "0s"`)
	h.startAll()
	l := h.leader(30 * time.Second)
	behind := (l + 1) % 3
	h.kill(behind)
	cl, err := h.clients[0].connect([]string{h.fix[l]}, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Each order is acknowledged before the next is sent: an entry each,
	// well past the 16 the leader keeps in memory.
	for n := range 100 {
		restDayBuy(t, cl, fmt.Sprintf("past-%d", n))
	}
	cl.Close()
	h.start(behind)
	h.quiesce(60 * time.Second)
	if logs := h.procs[behind].logs(); !strings.Contains(logs, "installing a Raft snapshot") {
		t.Fatalf("the follower caught up without a snapshot:\n%s", lastLines(logs, 40))
	}
	h.verifyJournals()
}

// TestClusterBookAfterASessionIsAdded: journal snapshots taken before a
// session was added to the nodes' files hold per-session state (the risk
// figures) for the sessions of their day, so they do not load under the
// new configuration. A cluster node records, as a single venue does, that
// its snapshots before the start that added the session are passed over:
// `journal book` on each node then prints its books, rather than failing
// on such a snapshot.
func TestClusterBookAfterASessionIsAdded(t *testing.T) {
	h := writeClusterConfigs(t, func(int) string { return "\n[risk.sessions]\nmax_order_qty = 100\n" }, false)
	h.startAll()
	l := h.leader(30 * time.Second)
	cl, err := h.clients[0].connect([]string{h.fix[l]}, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for n := range 5 {
		restDayBuy(t, cl, fmt.Sprintf("before-%d", n))
	}
	cl.Close()
	// Every node writes the journal snapshot of the Snapshot command the
	// leader journals after activity (snapshot_interval 500ms).
	for i := range 3 {
		eventually(t, "a journal snapshot on every node", func() error {
			if snaps, _ := filepath.Glob(filepath.Join(h.data[i], "journal", "snapshot-*.snap")); len(snaps) == 0 {
				return fmt.Errorf("node %d has no journal snapshot yet", i+1)
			}
			return nil
		})
	}
	h.quiesce(30 * time.Second)
	for i := range 3 {
		h.procs[i].stop(t)
	}
	for _, path := range h.cfgs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(string(b)+"\n[[session]]\ncomp_id = \"ADDED\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h.startAll()
	h.leader(30 * time.Second)
	h.quiesce(30 * time.Second)
	for i := range 3 {
		h.procs[i].waitLogLine(t, "the terms recorded", func(line string) bool {
			return strings.Contains(line, `msg="cluster: configured terms recorded"`)
		})
	}
	var first string
	for i := range 3 {
		h.procs[i].stop(t)
		code, out, errs := runCLI(t, "", nil, "journal", "book", "--config", h.cfgs[i])
		if code != 0 {
			t.Fatalf("node %d: journal book after a session was added: exit %d\n%s", i+1, code, errs)
		}
		if i == 0 {
			first = out
		} else if out != first {
			t.Fatalf("journal book differs: node 1\n%s\nnode %d\n%s", first, i+1, out)
		}
	}
}
