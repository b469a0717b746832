package cluster

import (
	"errors"
	"path/filepath"
	"strconv"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/fixvenue/fixvenue/journal"
)

// fwdNet is three nodes over a lossless network the test drives step by
// step; an isolated node's messages, both ways, are dropped.
type fwdNet struct {
	t        *testing.T
	nodes    map[uint64]*Node
	queue    []*raftpb.Message
	isolated map[uint64]bool
}

func newFwdNet(t *testing.T) *fwdNet {
	f := &fwdNet{t: t, nodes: map[uint64]*Node{}, isolated: map[uint64]bool{}}
	root := t.TempDir()
	for id := uint64(1); id <= 3; id++ {
		n, err := Open(NodeConfig{ClusterID: 0xF1, NodeID: id, Voters: []uint64{1, 2, 3},
			Dir:     filepath.Join(root, "node"+strconv.Itoa(int(id))),
			Journal: journal.Config{SegmentBytes: 16 << 10, PayloadBytesMax: 512, BufferBytes: 64 << 10},
			Apply:   func(uint64, []byte) error { return nil },
			Send: func(m *raftpb.Message) {
				if !f.isolated[id] && !f.isolated[m.GetTo()] {
					f.queue = append(f.queue, proto.Clone(m).(*raftpb.Message))
				}
			},
			Logger: debugLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		n.voteHoldTicks = 0 // new directories, but no node ever knew them
		f.nodes[id] = n
	}
	return f
}

// pump processes the given nodes and delivers what they send among them
// until done holds.
func (f *fwdNet) pump(done func() bool, ids ...uint64) {
	f.t.Helper()
	for range 200 {
		for _, id := range ids {
			if err := f.nodes[id].Process(); err != nil {
				f.t.Fatal(err)
			}
		}
		if done() {
			return
		}
		queue := f.queue
		f.queue = nil
		for _, m := range queue {
			_ = f.nodes[m.GetTo()].Step(m)
		}
		for _, id := range ids {
			f.nodes[id].Tick()
		}
	}
	f.t.Fatal("the cluster did not get there")
}

func commands(first uint64, count int) []byte {
	var frames []byte
	for seq := first; seq < first+uint64(count); seq++ {
		frames = journal.AppendFrame(frames, seq, []byte("command "+strconv.Itoa(int(seq))))
	}
	return frames
}

// A leader deposed by a message it stepped, before its next Process,
// still reports IsLeader. A proposal made then is refused: were Raft to
// forward it to the new leader, its commands would carry seqs numbered
// against the deposed leader's log (here with an uncommitted tail the new
// leader never had), and the new leader would fail-stop appending them.
func TestDeposedLeaderProposalIsNotForwarded(t *testing.T) {
	f := newFwdNet(t)
	n1, n2, n3 := f.nodes[1], f.nodes[2], f.nodes[3]
	if err := n1.Campaign(); err != nil {
		t.Fatal(err)
	}
	f.pump(n1.Serving, 1, 2, 3)
	if err := n1.Propose(commands(0, 2)); err != nil {
		t.Fatal(err)
	}
	f.pump(func() bool { return n2.Committed().Load() == 1 && n3.Committed().Load() == 1 }, 1, 2, 3)

	// Node 1, cut off, takes two more commands that nobody else gets, and
	// is not ticked (it would step down on its own).
	f.isolated[1] = true
	if err := n1.Propose(commands(2, 2)); err != nil {
		t.Fatal(err)
	}
	if err := n1.Process(); err != nil {
		t.Fatal(err)
	}
	f.pump(func() bool { return n2.Serving() || n3.Serving() }, 2, 3)
	newLeader := uint64(2)
	if n3.Serving() {
		newLeader = 3
	}
	nl := f.nodes[newLeader]
	f.queue = nil

	// The new leader's heartbeat reaches node 1, which becomes a follower;
	// until its next Process it still believes it leads.
	f.isolated[1] = false
	nl.Tick()
	if err := nl.Process(); err != nil {
		t.Fatal(err)
	}
	for _, m := range f.queue {
		if m.GetTo() == 1 {
			if err := n1.Step(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !n1.IsLeader() || n1.Lead() != newLeader {
		t.Fatalf("node 1: IsLeader %v, lead %d; the test needs a leader deposed since its last Process", n1.IsLeader(), n1.Lead())
	}
	proposed := n1.Propose(commands(n1.ProposeNext(), 1))

	// Nothing reaches the new leader (a forwarded proposal of seq 4 would
	// fail-stop it: its journal continues at 2); node 1 drops its
	// uncommitted tail for the new leader's log, which goes on taking
	// proposals.
	f.pump(func() bool {
		for _, n := range f.nodes {
			if n.AppliedIndex() != nl.AppliedIndex() || n.log.NextSeq() != 2 {
				return false
			}
		}
		return true
	}, 1, 2, 3)
	if !errors.Is(proposed, ErrNotLeader) {
		t.Fatalf("proposal at a deposed leader: %v, want ErrNotLeader", proposed)
	}
	if err := nl.Propose(commands(nl.ProposeNext(), 3)); err != nil {
		t.Fatal(err)
	}
	f.pump(func() bool {
		for _, n := range f.nodes {
			if n.Committed().Load() != 4 || n.log.NextSeq() != 5 {
				return false
			}
		}
		return true
	}, 1, 2, 3)

	// A proposal forwarded by a peer (a build that forwards) is refused.
	prop := &raftpb.Message{Type: new(raftpb.MsgProp), From: new(uint64(1)), To: new(newLeader),
		Entries: []*raftpb.Entry{{Data: commands(9, 1)}}}
	if err := nl.Step(prop); err == nil {
		t.Fatal("a forwarded proposal was stepped")
	}
	if err := nl.Process(); err != nil {
		t.Fatal(err)
	}
}
