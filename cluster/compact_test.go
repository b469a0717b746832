package cluster

import (
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/journal"
)

// A replica keeps a bounded window of entries in memory, and a restart
// reads the journal back into it and replays every committed command.
func TestMemoryWindowIsBoundedAndSurvivesRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	open := func(hash *journal.HashSink) *Node {
		n := openSingle(t, dir, hash)
		n.log.entriesMax, n.log.bytesMax = 16, 4096
		return n
	}
	hash := journal.NewHashSink()
	n := open(hash)
	flow := newOrderFlow(1)
	for range 300 {
		commitBatch(t, n, flow, 3)
		if len(n.log.metas) > 16+1 || n.log.memBytes > 4096+2048 {
			t.Fatalf("%d entries, %d bytes in memory", len(n.log.metas), n.log.memBytes)
		}
	}
	first, _ := n.log.FirstIndex()
	if first < 200 {
		t.Fatalf("first index in memory %d: nothing was compacted", first)
	}
	want, committed := hash.Sum64(), n.Committed().Load()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	again := journal.NewHashSink()
	n = open(again)
	defer n.Close()
	if n.Committed().Load() < committed || again.Sum64() == 0 {
		t.Fatalf("after restart committed %d (was %d)", n.Committed().Load(), committed)
	}
	if n.Committed().Load() == committed && again.Sum64() != want {
		t.Fatalf("replayed events hash %016x, live %016x", again.Sum64(), want)
	}
}

// commitBatch proposes the next count commands of flow to n, a one-node
// cluster, and processes them, which commits and applies them.
func commitBatch(t *testing.T, n *Node, flow *orderFlow, count int) {
	t.Helper()
	if err := n.Propose(flow.batch(t, n.ProposeNext(), count)); err != nil {
		t.Fatal(err)
	}
	if err := n.Process(); err != nil {
		t.Fatal(err)
	}
}

// openSingle opens a one-node cluster in dir over a real matcher and ticks
// it until it serves.
func openSingle(t *testing.T, dir string, hash *journal.HashSink) *Node {
	t.Helper()
	m, err := core.NewMatcher(testMatcherConfig())
	if err != nil {
		t.Fatal(err)
	}
	n, err := Open(NodeConfig{ClusterID: 5, NodeID: 1, Voters: []uint64{1}, Dir: dir,
		Apply: func(_ uint64, cmd []byte) error { return m.Apply(cmd, hash) },
		Send:  func(*raftpb.Message) {}, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		n.Tick()
		if err := n.Process(); err != nil {
			t.Fatal(err)
		}
		if n.Serving() {
			return n
		}
	}
	t.Fatal("a single node did not elect itself")
	return nil
}
