package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
		// Holding again what it had acknowledged, it is no longer said to
		// be catching up once its answer reaches the leader, and a transfer
		// to it would be taken.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			var catching bool
			l.runner.Do(func(n *Node) { catching = n.CatchingUp(wiped.id) })
			st, err := l.runner.Status()
			if !catching && err == nil && len(st.CatchingUp) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: node %d still says node %d is catching up (%v %v)", round, l.id, wiped.id, st.CatchingUp, err)
			}
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

// TestTransferToAFollowerCatchingUpIsRefused: a follower restarted on an
// empty directory keeps, in the leader's Raft progress, the index it had
// acknowledged, so it looks caught up while its log is empty. A leadership
// transfer to it is refused, saying why, until it holds that index again,
// and the leader leads on in the same term (doc.go, "Fresh directories").
// Raft used to send it MsgTimeoutNow at once: it campaigned with an empty
// log, deposed the leader and could not win, an election nobody asked
// for. The leader here builds no Raft snapshot (no NewState), so the
// follower stays catching up for as long as the test looks.
func TestTransferToAFollowerCatchingUpIsRefused(t *testing.T) {
	// A 100 ms tick (elections after 1 to 2 s): a leader on a machine
	// short of CPU is not deposed for want of heartbeats meanwhile.
	nodes := startTCPClusterTick(t, 0xF4E6, 100*time.Millisecond)
	addrs := map[uint64]string{}
	for _, n := range nodes {
		addrs[n.id] = n.ln.Addr().String()
	}
	flow := newOrderFlow(3)
	l, next := waitLeader(t, nodes)
	last, err := proposeOrders(t, l, next, flow, 5)
	if err != nil {
		t.Fatal(err)
	}
	waitApplied(t, nodes, last)
	wiped := nodes[0]
	if wiped == l {
		wiped = nodes[1]
	}
	wiped.stop()
	if err := os.RemoveAll(wiped.dir); err != nil {
		t.Fatal(err)
	}
	// Down for a while, as a node whose disk is replaced is: the leader
	// finds it unreachable and probes it once back, on its heartbeats,
	// with no proposal (its Match is the leader's last index).
	time.Sleep(time.Second)
	startTCPNode(t, wiped, 0xF4E6, addrs)

	var term, lost uint64
	var catching bool
	for deadline := time.Now().Add(10 * time.Second); !catching; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("node %d never saw node %d refuse the entries it had acknowledged", l.id, wiped.id)
		}
		if err := l.runner.Do(func(n *Node) {
			catching, term, lost = n.CatchingUp(wiped.id), n.Status().HardState.GetTerm(), n.LostLeadership()
		}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := l.runner.Status()
	if err != nil || !slices.Equal(st.CatchingUp, []uint64{wiped.id}) {
		t.Fatalf("node %d's status says catching up %v, want [%d] (%v)", l.id, st.CatchingUp, wiped.id, err)
	}
	var refused error
	if err := l.runner.Do(func(n *Node) { refused = n.TransferLeader(wiped.id) }); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("node %d is catching up from a Raft snapshot after losing its log; try again when it has", wiped.id)
	if refused == nil || refused.Error() != want {
		t.Errorf("transfer to node %d: %v, want %q", wiped.id, refused, want)
	}
	// Three election timeouts: a transfer taken would have deposed it by
	// then.
	time.Sleep(3 * time.Second)
	var nowTerm, nowLost uint64
	var serving bool
	if err := l.runner.Do(func(n *Node) {
		nowTerm, nowLost, serving = n.Status().HardState.GetTerm(), n.LostLeadership(), n.Serving()
	}); err != nil {
		t.Fatal(err)
	}
	if !serving || nowTerm != term || nowLost != lost {
		t.Fatalf("node %d led in term %d; now serving %v in term %d, leadership lost %d times", l.id, term, serving, nowTerm, nowLost-lost)
	}
}
