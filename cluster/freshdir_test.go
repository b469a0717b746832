package cluster

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestFollowerOnAnEmptyDirectoryKeepsTheLeader: a follower that had
// acknowledged every entry the leader holds restarts on an empty directory
// (a replaced disk), over real TCP and journal files. The leader sends it
// a Raft snapshot and leads on in the same term, never deposed, and its
// proposals commit: first with the other follower up, then with it down,
// where the wiped follower's acknowledgement is the only quorum there is
// (doc.go, "Fresh directories"). The leader used to hand the leadership to
// the other follower, and with that one down to step down for a new
// term's election.
func TestFollowerOnAnEmptyDirectoryKeepsTheLeader(t *testing.T) {
	root := t.TempDir()
	nodes := make([]*tcpNode, 3)
	addrs := map[uint64]string{}
	state := func() (*MatcherState, error) { return venueStateOf(testMatcherConfig()) }
	for i := range nodes {
		// A 100 ms tick (elections after 1 to 2 s): a leader on a machine
		// short of CPU is not deposed for want of heartbeats meanwhile.
		n := &tcpNode{id: uint64(i + 1), dir: filepath.Join(root, "n"+strconv.Itoa(i+1)), ln: listenLoopback(t),
			newState: state, tick: 100 * time.Millisecond}
		nodes[i] = n
		addrs[n.id] = n.ln.Addr().String()
	}
	for _, n := range nodes {
		startTCPNode(t, n, 0xF4E5, addrs)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.stop()
		}
	})
	flow := newOrderFlow(3)
	l, next := waitLeader(t, nodes)
	var followers []*tcpNode
	for _, n := range nodes {
		if n != l {
			followers = append(followers, n)
		}
	}
	last, err := proposeOrders(t, l, next, flow, 10)
	if err != nil {
		t.Fatal(err)
	}
	waitApplied(t, nodes, last)
	var term, lost uint64
	l.runner.Do(func(n *Node) { term, lost = n.Status().HardState.GetTerm(), n.LostLeadership() })

	for round, down := range []*tcpNode{nil, followers[1]} {
		wiped := followers[0]
		wiped.stop()
		if err := os.RemoveAll(wiped.dir); err != nil {
			t.Fatal(err)
		}
		if down != nil {
			down.stop()
		}
		startTCPNode(t, wiped, 0xF4E5, addrs)
		var next uint64
		var serving bool
		if err := l.runner.Do(func(n *Node) { next, serving = n.ProposeNext(), n.Serving() }); err != nil || !serving {
			t.Fatalf("round %d: node %d no longer serves (%v)", round, l.id, err)
		}
		if last, err = proposeOrders(t, l, next, flow, 10); err != nil {
			t.Fatalf("round %d: proposing on node %d after node %d restarted on an empty directory: %v", round, l.id, wiped.id, err)
		}
		live := []*tcpNode{l, wiped}
		if down == nil {
			live = nodes
		}
		waitApplied(t, live, last)
		if wiped.node.log.base == nil {
			t.Fatalf("round %d: node %d caught up without a Raft snapshot", round, wiped.id)
		}
		var nowTerm, nowLost uint64
		l.runner.Do(func(n *Node) { nowTerm, nowLost = n.Status().HardState.GetTerm(), n.LostLeadership() })
		if nowTerm != term || nowLost != lost {
			t.Fatalf("round %d: node %d led in term %d; now term %d, leadership lost %d times", round, l.id, term, nowTerm, nowLost-lost)
		}
		if down != nil {
			startTCPNode(t, down, 0xF4E5, addrs)
			waitApplied(t, nodes, last)
		}
	}
	for _, n := range nodes {
		n.stop()
	}
	sameVerify(t, nodes, testMatcherConfig())
}
