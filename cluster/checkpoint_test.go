package cluster

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/journal"
)

// stateReplica is a one-node cluster over a real replica state (a
// matcher, its events hash and any parts) that can build and restore
// snapshots, counting the commands Open applies.
type stateReplica struct {
	st      *MatcherState
	applied int
	log     bytes.Buffer
}

// plainState is a matcher and its events hash, no parts; a build reloads
// it.
func plainState() (*MatcherState, error) {
	st, err := NewMatcherState(testMatcherConfig(), nil)
	if err == nil {
		st.NewParts = func() (map[string]StatePart, error) { return nil, nil }
	}
	return st, err
}

// stateReplicaConfig configures a one-node cluster in dir over a state
// from newState, with a memory window of 16 entries (unless edit changes
// it).
func stateReplicaConfig(t testing.TB, dir string, drop bool, newState func() (*MatcherState, error),
	edit ...func(*NodeConfig)) (NodeConfig, *stateReplica) {
	t.Helper()
	r := &stateReplica{}
	var err error
	if r.st, err = newState(); err != nil {
		t.Fatal(err)
	}
	cfg := NodeConfig{ClusterID: 5, NodeID: 1, Voters: []uint64{1}, Dir: dir, EntriesInMemoryMax: 16,
		Apply: func(seq uint64, cmd []byte) error { r.applied++; return r.st.Apply(seq, cmd) },
		Send:  func(*raftpb.Message) {}, Logger: slog.New(slog.NewTextHandler(&r.log, nil)), DropCheckpoints: drop,
		NewState: func() (State, error) { return newState() },
		Restore: func(state []byte, _ uint64) error {
			if r.st.reloadable() {
				return r.st.Reload(state) // into the matcher it has, as the venue restores
			}
			st, err := newState()
			if err == nil {
				err = st.Load(state)
			}
			if err == nil {
				r.st = st
			}
			return err
		}}
	for _, e := range edit {
		e(&cfg)
	}
	return cfg, r
}

// openStateReplica opens stateReplicaConfig's node and ticks it until it
// serves.
func openStateReplica(t testing.TB, dir string, drop bool, edit ...func(*NodeConfig)) (*Node, *stateReplica) {
	t.Helper()
	return openStateReplicaOf(t, dir, drop, plainState, edit...)
}

// openStateReplicaOf is openStateReplica over a state from newState.
func openStateReplicaOf(t testing.TB, dir string, drop bool, newState func() (*MatcherState, error),
	edit ...func(*NodeConfig)) (*Node, *stateReplica) {
	t.Helper()
	cfg, r := stateReplicaConfig(t, dir, drop, newState, edit...)
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.log.checkpointEvery = 0 // a build at every compaction
	for range 50 {
		n.Tick()
		if err := n.Process(); err != nil {
			t.Fatal(err)
		}
		if n.Serving() {
			return n, r
		}
	}
	t.Fatal("a single node did not elect itself")
	return nil, nil
}

// waitBuilt waits (bounded) for n's background snapshot build to finish.
func waitBuilt(t testing.TB, n *Node) {
	t.Helper()
	// Bounded generously: a build under the race detector on a loaded
	// machine takes seconds.
	for range 12_000 {
		if n.log.pollBuild(); !n.log.building {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("a snapshot build did not finish in 60 s")
}

// tradeCheckpointed commits 200 batches of 3 commands through n (each
// compaction builds a checkpoint from the one before) and returns the
// committed seq and the events hash.
func tradeCheckpointed(t *testing.T, n *Node, r *stateReplica) (int64, uint64) {
	t.Helper()
	flow := newOrderFlow(7)
	for range 200 {
		commitBatch(t, n, flow, 3)
	}
	waitBuilt(t, n)
	return n.Committed().Load(), r.st.Hash.Sum64()
}

// tradeCheckpointedAndClose is tradeCheckpointed, then n closed.
func tradeCheckpointedAndClose(t *testing.T, n *Node, r *stateReplica) (int64, uint64) {
	t.Helper()
	committed, hash := tradeCheckpointed(t, n, r)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	return committed, hash
}

// A replica keeps its snapshots as checkpoints (at most checkpointsKept),
// and a restart restores the newest and replays only the commands after
// it: the same committed seq and events hash as the replica had, though it
// applied a fraction of the commands.
func TestRestartFromCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	n, r := openStateReplica(t, dir, false)
	committed, hash := tradeCheckpointed(t, n, r)
	files, err := listCheckpoints(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 || len(files) > checkpointsKept {
		t.Fatalf("%d checkpoints on disk, want 1 to %d", len(files), checkpointsKept)
	}
	newest, err := readSnapshotFile(files[0].path, []uint64{1})
	if err != nil {
		t.Fatal(err)
	}
	next, _, err := snapshotNext(newest)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	// A write a crash interrupted: removed at the start, never read.
	part := checkpointPath(dir, files[0].index+1) + checkpointPartSuffix
	if err := os.WriteFile(part, []byte("half a checkpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, r = openStateReplica(t, dir, false)
	if _, err := os.Stat(part); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the interrupted write is still there (%v)", err)
	}
	if got := n.Committed().Load(); got < committed {
		t.Fatalf("after restart committed %d, was %d", got, committed)
	}
	if want := int(committed - int64(next) + 1); r.applied != want {
		t.Fatalf("the start applied %d commands; from the checkpoint of index %d (next seq %d) it should apply %d",
			r.applied, files[0].index, next, want)
	}
	if r.st.Hash.Sum64() != hash {
		t.Fatalf("events hash after restart %016x, before %016x", r.st.Hash.Sum64(), hash)
	}
	if !bytes.Contains(r.log.Bytes(), []byte("started from a checkpoint")) {
		t.Fatalf("no log line for the checkpoint:\n%s", r.log.String())
	}
	// Restarted with a wider window (entries_in_memory raised), which
	// holds entries before the restored checkpoint, and trading on: the
	// first compaction points come before the checkpoint, which serves
	// for them, and the checkpoints built from here on hold the state at
	// their own index, so the next start agrees again.
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	wide := func(c *NodeConfig) { c.EntriesInMemoryMax = 64 }
	n, r = openStateReplica(t, dir, false, wide)
	flow := newOrderFlow(8)
	for i := range 40 {
		commitBatch(t, n, flow, 3)
		if i%4 == 0 {
			waitBuilt(t, n)
		}
	}
	waitBuilt(t, n)
	committed, hash = n.Committed().Load(), r.st.Hash.Sum64()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n, r = openStateReplica(t, dir, false, wide)
	defer n.Close()
	if n.Committed().Load() < committed || r.st.Hash.Sum64() != hash {
		t.Fatalf("second restart: committed %d (was %d), events hash %016x (was %016x)", n.Committed().Load(), committed, r.st.Hash.Sum64(), hash)
	}
}

// A damaged newest checkpoint is passed over with a warning and the one
// before it is restored; with none left the start replays the journal
// from the start. The state is the same either way.
func TestRestartPassesOverDamagedCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	n, r := openStateReplica(t, dir, false)
	committed, hash := tradeCheckpointedAndClose(t, n, r)
	files, err := listCheckpoints(dir)
	if err != nil || len(files) != checkpointsKept {
		t.Fatalf("%d checkpoints (%v), want %d", len(files), err, checkpointsKept)
	}
	damage := func(path string) { // its last byte cut: the CRC fails
		st, err := os.Stat(path)
		if err == nil {
			err = os.Truncate(path, st.Size()-1)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	damage(files[0].path)
	older, err := readSnapshotFile(files[1].path, []uint64{1})
	if err != nil {
		t.Fatal(err)
	}
	next, _, _ := snapshotNext(older)
	n, r = openStateReplica(t, dir, false)
	if want := int(committed - int64(next) + 1); r.applied != want || r.st.Hash.Sum64() != hash {
		t.Fatalf("from the older checkpoint: applied %d (want %d), hash %016x (want %016x)", r.applied, want, r.st.Hash.Sum64(), hash)
	}
	if !bytes.Contains(r.log.Bytes(), []byte("checkpoint passed over")) {
		t.Fatalf("no warning for the damaged checkpoint:\n%s", r.log.String())
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	// The restart's first entries compacted the window again, which
	// built a checkpoint: every one there is is damaged now.
	files, _ = listCheckpoints(dir)
	for _, f := range files {
		damage(f.path)
	}
	n, r = openStateReplica(t, dir, false)
	defer n.Close()
	if r.applied != int(committed)+1 || r.st.Hash.Sum64() != hash {
		t.Fatalf("from the start: applied %d (want %d), hash %016x (want %016x)", r.applied, committed+1, r.st.Hash.Sum64(), hash)
	}
}

// DropCheckpoints (a configuration that adds sessions or instruments)
// removes them and replays the whole journal.
func TestDropCheckpointsReplaysFromTheStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	n, r := openStateReplica(t, dir, false)
	committed, hash := tradeCheckpointedAndClose(t, n, r)
	n, r = openStateReplica(t, dir, true)
	defer n.Close()
	if r.applied != int(committed)+1 || r.st.Hash.Sum64() != hash {
		t.Fatalf("applied %d (want %d), hash %016x (want %016x)", r.applied, committed+1, r.st.Hash.Sum64(), hash)
	}
	if files, _ := listCheckpoints(dir); len(files) != 0 {
		t.Fatalf("%d checkpoints left", len(files))
	}
	if !bytes.Contains(r.log.Bytes(), []byte("checkpoints removed")) {
		t.Fatalf("no log line for the removal:\n%s", r.log.String())
	}
}

// BenchmarkRestart times a replica's Open (restore and replay, before it
// ticks) over a journal of 500,000 commands (10,000 entries, segments of
// 4 MiB), with a window of 256 entries, over the venue's replica state
// (matcher, events hash, the feed's state and the console's tape):
// "checkpoint" restores the newest checkpoint and replays the commands
// after it, reading only the live segments (its first start moved those
// before the checkpoint to the archive); "journal" (a node that keeps no
// checkpoint) replays every command, archive included. Each reports the
// commands its start applied. "checkpoint-new-state" restores into a
// replica state made for it, beside the one the node has (as a start did
// before MatcherState.Reload). The matcher has the venue's default bounds
// (config/default.toml: 1,048,576 orders, 4,194,304 ClOrdIDs).
func BenchmarkRestart(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "n1")
	newState := func() (*MatcherState, error) { return venueStateOf(defaultBoundsMatcherConfig()) }
	writeBenchJournal(b, dir, 10_000)
	for _, bc := range []struct {
		name string
		edit func(*NodeConfig)
	}{
		{"checkpoint", func(*NodeConfig) {}},
		{"checkpoint-new-state", func(c *NodeConfig) {
			c.Restore = func(state []byte, _ uint64) error {
				st, err := newState()
				if err == nil {
					err = st.Load(state)
				}
				return err
			}
		}},
		{"journal", func(c *NodeConfig) { c.NewState, c.Restore = nil, nil }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			applied := 0
			for b.Loop() {
				b.StopTimer()
				debug.FreeOSMemory() // the last start's states returned to the system: a start's process is new
				cfg, r := stateReplicaConfig(b, dir, false, newState, benchNoSync, bc.edit)
				b.StartTimer()
				n, err := Open(cfg)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				applied = r.applied
				if err := n.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(applied), "commands/start")
		})
	}
}

// benchNoSync is the benchmarks' replica: a window of 256 entries,
// segments of 4 MiB, and no sync (the disk is not what they measure).
func benchNoSync(c *NodeConfig) {
	c.EntriesInMemoryMax = 256
	c.Journal.SegmentBytes = 4 << 20
	c.Journal.Sync = func(*os.File, journal.SyncKind) error { return nil }
}

// writeBenchJournal commits batches of 50 commands through a one-node
// replica in dir over the venue's state with the default bounds, waits for
// its last build, closes it and returns the last seq committed.
func writeBenchJournal(b *testing.B, dir string, batches int) int64 {
	b.Helper()
	n, _ := openStateReplicaOf(b, dir, false, func() (*MatcherState, error) { return venueStateOf(defaultBoundsMatcherConfig()) },
		benchNoSync)
	flow := newOrderFlow(7)
	for range batches {
		if err := n.Propose(flow.batch(b, n.ProposeNext(), 50)); err != nil {
			b.Fatal(err)
		}
		if err := n.Process(); err != nil {
			b.Fatal(err)
		}
	}
	waitBuilt(b, n)
	end := n.Committed().Load()
	if err := n.Close(); err != nil {
		b.Fatal(err)
	}
	return end
}

// defaultBoundsMatcherConfig is testMatcherConfig with the venue's
// default bounds on orders and ClOrdIDs, which size the matcher's memory.
func defaultBoundsMatcherConfig() core.Config {
	cfg := testMatcherConfig()
	cfg.OrdersMax, cfg.ClOrdIDsMax = 1<<20, 4<<20
	return cfg
}

// BenchmarkCheckpointBuild measures one checkpoint build (a minute's
// commands, 20,000, onto the checkpoint before) with the venue's default
// bounds: "reload" reuses the state of the build before (as every build
// after a replica's first does), "new-state" makes one (as every build did
// before MatcherState.Reload).
func BenchmarkCheckpointBuild(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "n1")
	newState := func() (State, error) { return venueStateOf(defaultBoundsMatcherConfig()) }
	end := writeBenchJournal(b, dir, 2_000)
	base, _, err := buildSnapshot(dir, nil, newState, nil, []uint64{1}, 1, 1, end-20_000, DefaultSnapshotBytesMax, new(atomic.Bool))
	if err != nil {
		b.Fatal(err)
	}
	for _, reload := range []bool{true, false} {
		name := map[bool]string{true: "reload", false: "new-state"}[reload]
		b.Run(name, func(b *testing.B) {
			var spare State
			for b.Loop() {
				b.StopTimer()
				debug.FreeOSMemory() // the last build's state, unless kept, returned to the system, as the scavenger does between builds a minute apart
				b.StartTimer()
				_, st, err := buildSnapshot(dir, base, newState, spare, []uint64{1}, 2, 1, end, DefaultSnapshotBytesMax, new(atomic.Bool))
				if err != nil {
					b.Fatal(err)
				}
				if reload {
					spare = st
				}
			}
		})
	}
}

// A build reloads the state of the build before it (its matcher's memory
// kept, its parts new), and the snapshot it saves is the one a build into
// a new state saves, byte for byte.
func TestBuildReloadsTheStateBefore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	newState := func() (*MatcherState, error) { return venueStateOf(testMatcherConfig()) }
	n, _ := openStateReplicaOf(t, dir, false, newState)
	defer n.Close()
	flow := newOrderFlow(12)
	for range 40 {
		commitBatch(t, n, flow, 5)
	}
	waitBuilt(t, n)
	first, ok := n.log.spare.(*MatcherState)
	if !ok || n.log.built == nil {
		t.Fatalf("no build handed its state back (%T, built %v)", n.log.spare, n.log.built != nil)
	}
	builds := n.Checkpoints().Built.Load()
	for range 3 {
		base := n.log.built
		for range 40 {
			commitBatch(t, n, flow, 5)
		}
		waitBuilt(t, n)
		built := n.log.built
		if built.GetMetadata().GetIndex() <= base.GetMetadata().GetIndex() {
			t.Fatalf("no build after index %d", base.GetMetadata().GetIndex())
		}
		if n.log.spare != State(first) {
			t.Fatal("a build made a new state instead of reloading the one before")
		}
		if got := n.Checkpoints().Built.Load(); got <= builds || n.Checkpoints().LastBuildNanos.Load() <= 0 {
			t.Fatalf("%d checkpoints built (%d before), the last in %d ns", got, builds, n.Checkpoints().LastBuildNanos.Load())
		}
		builds = n.Checkpoints().Built.Load()
		next, _, err := snapshotNext(built)
		if err != nil {
			t.Fatal(err)
		}
		md := built.GetMetadata()
		fresh, _, err := buildSnapshot(dir, base, func() (State, error) { return newState() }, nil, []uint64{1},
			md.GetIndex(), md.GetTerm(), int64(next)-1, DefaultSnapshotBytesMax, new(atomic.Bool))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh.GetData(), built.GetData()) {
			t.Fatalf("the snapshot of index %d built by reloading differs from one built into a new state (%d and %d bytes)",
				md.GetIndex(), len(built.GetData()), len(fresh.GetData()))
		}
	}
}

// Compactions start at most one build per checkpointEvery; a follower
// behind the compaction point (Log.Snapshot) has one built regardless.
func TestCheckpointBuildsAreSpaced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	n, _ := openStateReplica(t, dir, false)
	defer n.Close()
	n.log.checkpointEvery = time.Hour
	flow := newOrderFlow(9)
	for range 100 { // a dozen compactions
		commitBatch(t, n, flow, 3)
		waitBuilt(t, n)
	}
	files, err := listCheckpoints(dir)
	if err != nil || len(files) != 1 {
		t.Fatalf("%d checkpoints (%v), want the one of the first compaction", len(files), err)
	}
	first, _ := n.log.FirstIndex()
	if files[0].index >= first-1 {
		t.Fatalf("the checkpoint is at index %d, the compaction point %d: no compaction came after it", files[0].index, first-1)
	}
	if _, err := n.log.Snapshot(); err == nil {
		t.Fatal("a snapshot at the compaction point was served before it was built")
	}
	waitBuilt(t, n)
	s, err := n.log.Snapshot()
	if err != nil || s.GetMetadata().GetIndex() != first-1 {
		t.Fatalf("the snapshot for a follower: %v, index %d, want %d", err, s.GetMetadata().GetIndex(), first-1)
	}
	if files, _ = listCheckpoints(dir); len(files) != 2 || files[0].index != first-1 {
		t.Fatalf("checkpoints %v after the follower's build, want the newest at %d", files, first-1)
	}
}

// A start that restores a checkpoint moves the segments before the oldest
// one kept to the journal's archive (raft.archived recording where the
// live log starts), so the next start reads only what is live, and so does
// a running replica after each checkpoint. `journal verify` reads the
// archive as well and gives the same result; a start that drops the
// checkpoints replays from the first command through the archive, and
// builds its next checkpoint from there.
func TestRestartArchivesSegmentsBeforeCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	small := func(c *NodeConfig) {
		c.Journal = journal.Config{SegmentBytes: 16 << 10, PayloadBytesMax: 512, BufferBytes: 64 << 10}
	}
	live := func() int {
		segs, _ := filepath.Glob(filepath.Join(dir, "journal-*.seg"))
		return len(segs)
	}
	archivedSegs := func() int {
		segs, _ := filepath.Glob(filepath.Join(dir, journal.ArchiveDirName, "journal-*.seg"))
		return len(segs)
	}
	verify := func() journal.VerifyResult {
		t.Helper()
		res, err := Verify(dir, testMatcherConfig(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	n, r := openStateReplica(t, dir, false, small)
	n.log.archiveRunning = false // the start archives, below
	committed, hash := tradeCheckpointedAndClose(t, n, r)
	before, segs := verify(), live()
	if segs < 4 || archivedSegs() != 0 {
		t.Fatalf("%d segments, %d archived: want 4 or more, none archived", segs, archivedSegs())
	}
	files, _ := listCheckpoints(dir)
	newest, err := readSnapshotFile(files[0].path, []uint64{1})
	if err != nil {
		t.Fatal(err)
	}
	next, _, _ := snapshotNext(newest)
	older, err := readSnapshotFile(files[1].path, []uint64{1})
	if err != nil {
		t.Fatal(err)
	}
	olderNext, _, _ := snapshotNext(older)

	n, r = openStateReplica(t, dir, false, small)
	if r.applied != int(committed-int64(next)+1) || r.st.Hash.Sum64() != hash {
		t.Fatalf("from the checkpoint: applied %d (want %d), hash %016x (want %016x)", r.applied, committed-int64(next)+1, r.st.Hash.Sum64(), hash)
	}
	if archivedSegs() == 0 || live()+archivedSegs() < segs {
		t.Fatalf("%d segments archived, %d live, of %d", archivedSegs(), live(), segs)
	}
	p, err := readArchivedPoint(dir)
	if err != nil || p == nil || p.index != files[1].index || p.next != olderNext {
		t.Fatalf("raft.archived %+v (%v), want the older checkpoint's index %d next seq %d", p, err, files[1].index, olderNext)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if after := verify(); after.Records != before.Records || after.LastSeq != before.LastSeq || after.EventsHash != before.EventsHash {
		t.Fatalf("journal verify after archiving %+v, before %+v", after, before)
	}

	// Running: each checkpoint moves the segments before the one it was
	// built from.
	n, r = openStateReplica(t, dir, false, small)
	moved := archivedSegs()
	flow := newOrderFlow(11)
	for range 100 {
		commitBatch(t, n, flow, 3)
		waitBuilt(t, n)
	}
	if archivedSegs() <= moved {
		t.Fatalf("%d segments archived while running, %d before", archivedSegs(), moved)
	}
	if q, err := readArchivedPoint(dir); err != nil || q.index <= p.index {
		t.Fatalf("raft.archived %+v (%v) while running, %+v before", q, err, p)
	}
	committed, hash = n.Committed().Load(), r.st.Hash.Sum64()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	before = verify()

	// Again: only the live segments are read, and the state is the same.
	n, r = openStateReplica(t, dir, false, small)
	if r.st.Hash.Sum64() != hash || n.Committed().Load() < committed {
		t.Fatalf("next start: hash %016x (want %016x), committed %d (want %d)", r.st.Hash.Sum64(), hash, n.Committed().Load(), committed)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if after := verify(); after.Records != before.Records || after.EventsHash != before.EventsHash {
		t.Fatalf("journal verify %+v, before the start %+v", after, before)
	}

	// Without checkpoints: the whole journal, archive included.
	n, r = openStateReplica(t, dir, true, small)
	if r.applied != int(committed)+1 || r.st.Hash.Sum64() != hash {
		t.Fatalf("from the first command: applied %d (want %d), hash %016x (want %016x)", r.applied, committed+1, r.st.Hash.Sum64(), hash)
	}
	flow = newOrderFlow(10)
	for range 40 { // compactions: a build from the first command, through the archive
		commitBatch(t, n, flow, 3)
		waitBuilt(t, n)
	}
	if n.Checkpoints().Failures.Load() != 0 || n.Checkpoints().Index.Load() == 0 {
		t.Fatalf("checkpoint index %d, failures %d\n%s", n.Checkpoints().Index.Load(), n.Checkpoints().Failures.Load(), r.log.String())
	}
	committed, hash = n.Committed().Load(), r.st.Hash.Sum64()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n, r = openStateReplica(t, dir, false, small)
	defer n.Close()
	if r.st.Hash.Sum64() != hash || n.Committed().Load() < committed || r.applied >= int(committed) {
		t.Fatalf("last start: hash %016x (want %016x), committed %d (want %d), applied %d", r.st.Hash.Sum64(), hash,
			n.Committed().Load(), committed, r.applied)
	}
}
