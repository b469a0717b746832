package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/console"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Sizes of the large-state test: enough resting orders that the Raft
// snapshot (matcher, feed and tape state) is well over the 16 MiB bound of
// one transport message, which carried snapshots before they had streams
// of their own. Under the race detector (ten times slower) the test takes
// a quarter of the orders: still a snapshot of several chunks.
var (
	bigRestingOrders          = 120_000
	bigSnapshotBytesMin int64 = 24 << 20
)

const (
	bigOrdersPerEntry = 500
	oldMessageBound   = 16 << 20
)

func init() {
	if raceEnabled {
		bigRestingOrders, bigSnapshotBytesMin = 30_000, 4<<20
	}
}

// bigMatcherConfig is testMatcherConfig with room for the resting orders.
func bigMatcherConfig() core.Config {
	cfg := testMatcherConfig()
	cfg.OrdersMax, cfg.ClOrdIDsMax = bigRestingOrders+10_000, bigRestingOrders+20_000
	return cfg
}

// tapePart is the console's tape as a part of the replica state, as the
// venue keeps it (server/cluster.go).
type tapePart struct{ *console.Tape }

func (p tapePart) Event(ev []byte) error {
	p.Replay(ev)
	return nil
}

// venueState is a replica state as the venue's: the matcher, the events
// hash, the feed's state derived from events and the console's tape.
func venueState() (*MatcherState, error) { return venueStateOf(bigMatcherConfig()) }

// venueStateOf is venueState over a matcher configured by cfg; a build
// reloads it with new parts, as the venue's (server/cluster.go).
func venueStateOf(cfg core.Config) (*MatcherState, error) {
	parts, err := venueParts(cfg)
	if err != nil {
		return nil, err
	}
	st, err := NewMatcherState(cfg, parts)
	if err != nil {
		return nil, err
	}
	st.NewParts = func() (map[string]StatePart, error) { return venueParts(cfg) }
	return st, nil
}

// venueParts are venueState's parts beside the matcher, new.
func venueParts(cfg core.Config) (map[string]StatePart, error) {
	tick, err := decimal.ParseTick("0.01")
	if err != nil {
		return nil, err
	}
	def, err := marketdata.NewInstrumentDef(1, "AAA", tick, 1, venue.TradingStatusOpen)
	if err != nil {
		return nil, err
	}
	feed, err := marketdata.NewFeedState(marketdata.TrackerConfig{OrdersMax: cfg.OrdersMax, InstrumentsMax: 1,
		LevelsMax: 2*int(cfg.LevelsPerSideMax) + 2, Instruments: []marketdata.InstrumentDef{def}})
	if err != nil {
		return nil, err
	}
	return map[string]StatePart{"marketdata": feed, "console": tapePart{console.NewTape([]uint32{1}, nil)}}, nil
}

// resting encodes count orders that rest: bids below 99.00, asks above
// 101.00, spread over the band's levels; every 97th order is a sell that
// crosses and trades with the best bid, so the tape has trades.
func (f *orderFlow) resting(t *testing.T, seq uint64, count int) []byte {
	var frames []byte
	for i := range count {
		f.clockNs += 1_000
		f.nextID++
		id := int64(f.nextID)
		side, price := venue.SideBuy, 9_000+id%900
		switch {
		case id%97 == 0:
			side, price = venue.SideSell, 9_000
		case id%2 == 1:
			side, price = venue.SideSell, 10_100+id%900
		}
		frames = journal.AppendFrame(frames, seq+uint64(i), f.limit(t, seq+uint64(i), uint16(1+id%4), side, price, 1+id%50))
	}
	return frames
}

// TestFollowerCatchesUpFromLargeSnapshotStream: a follower is down while
// the leader takes 120,000 resting orders over real TCP on 127.0.0.1, with
// real journal files, and compacts its in-memory log far past the
// follower's last entry. The follower rejoins and catches up from a Raft
// snapshot of over 24 MiB (the old one-message bound was 16 MiB), streamed
// in CRC-checked chunks into a synced file, then from the log; more orders
// trade after that. The rejoined follower then has the same events hash,
// the same feed state (books, statistics, next sequence number) and the
// same console tape as the follower that applied every command, `journal
// verify` (cluster.Verify) prints the same line for all three, and it
// still agrees after a restart from its raft.snapshot.
func TestFollowerCatchesUpFromLargeSnapshotStream(t *testing.T) {
	if testing.Short() {
		t.Skip("writes about 50 MB of journal")
	}
	root := t.TempDir()
	nodes := make([]*tcpNode, 3)
	addrs := map[uint64]string{}
	for i := range nodes {
		n := &tcpNode{id: uint64(i + 1), dir: filepath.Join(root, string(rune('a'+i))), ln: listenLoopback(t),
			newState: venueState, entriesMax: 16, tick: 50 * time.Millisecond}
		nodes[i] = n
		addrs[n.id] = n.ln.Addr().String()
	}
	for _, n := range nodes {
		startTCPNode(t, n, 0x5A4B, addrs)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.stop()
		}
	})
	l, _ := waitLeader(t, nodes)
	var behind, other *tcpNode
	for _, n := range nodes {
		switch {
		case n == l:
		case behind == nil:
			behind = n
		default:
			other = n
		}
	}
	behind.stop()
	behindLast, _ := behind.node.log.LastIndex()

	flow := newOrderFlow(9)
	live := []*tcpNode{l, other}
	l, last := proposeAcross(t, live, bigRestingOrders/bigOrdersPerEntry, func(seq uint64) []byte {
		return flow.resting(t, seq, bigOrdersPerEntry)
	})
	var first uint64
	l.runner.Do(func(n *Node) { first, _ = n.log.FirstIndex() })
	if first <= behindLast+1 {
		t.Fatalf("the leader holds entries from %d, the follower stopped at %d: nothing was compacted past it", first, behindLast)
	}

	startTCPNode(t, behind, 0x5A4B, addrs)
	waitAppliedWithin(t, nodes, last, 120*time.Second)
	if behind.node.log.base == nil {
		t.Fatal("the follower caught up without a snapshot")
	}
	snap, err := os.Stat(filepath.Join(behind.dir, snapshotFile))
	if err != nil {
		t.Fatal(err)
	}
	if snap.Size() < bigSnapshotBytesMin {
		t.Fatalf("the snapshot took %d bytes; the test wants over %d to prove the stream beats the old %d-byte bound", snap.Size(), bigSnapshotBytesMin, oldMessageBound)
	}
	if left, _ := filepath.Glob(filepath.Join(behind.dir, snapshotRecvPrefix+"*")); len(left) != 0 {
		t.Fatalf("received snapshot files left behind: %v", left)
	}

	// Trading goes on: the rejoined follower applies the log after the snapshot.
	trade := func(seq uint64) []byte { return flow.batch(t, seq, 3) }
	l, last = proposeAcross(t, nodes, 200, trade)
	waitAppliedWithin(t, nodes, last, 30*time.Second)
	sameVenueState(t, behind, other)
	sameVenueState(t, behind, l)
	sameVerify(t, nodes, bigMatcherConfig())

	// Restarted, it restores everything from raft.snapshot and replays the journal after it.
	behind.stop()
	startTCPNode(t, behind, 0x5A4B, addrs)
	_, last = proposeAcross(t, nodes, 20, trade)
	waitAppliedWithin(t, nodes, last, 30*time.Second)
	sameVenueState(t, behind, other)
	t.Logf("snapshot of %d bytes installed at index %d; %d commands; leader held entries from %d",
		snap.Size(), behind.node.log.baseIndex(), last+1, first)
}

// proposeAcross proposes batches (encode makes one from its first seq) on
// whichever of nodes serves, and returns that leader and the last seq
// committed. A leadership change (a slow, shared machine) costs the batch
// in flight and a wait for the next leader; the tries are bounded to twice
// the batches.
func proposeAcross(t *testing.T, nodes []*tcpNode, batches int, encode func(seq uint64) []byte) (*tcpNode, int64) {
	t.Helper()
	l, next := waitLeader(t, nodes)
	done := 0
	for try := 0; done < batches; try++ {
		if try == 2*batches {
			t.Fatalf("only %d of %d batches committed in %d tries", done, batches, try)
		}
		frames := encode(next)
		count := 0
		for rest := frames; len(rest) > 0; count++ {
			_, _, n, err := journal.NextFrame(rest)
			if err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := l.runner.Propose(frames, int64(next)+int64(count)-1); err != nil {
			t.Logf("proposal at seq %d: %v; waiting for a leader", next, err)
			l, next = waitLeader(t, nodes)
			continue
		}
		next += uint64(count)
		done++
	}
	return l, int64(next) - 1
}

// waitAppliedWithin waits until every node has applied up to seq.
func waitAppliedWithin(t *testing.T, nodes []*tcpNode, seq int64, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for _, n := range nodes {
		for n.node.Committed().Load() < seq {
			if time.Now().After(deadline) {
				t.Fatalf("node %d applied up to %d after %v, want %d", n.id, n.node.Committed().Load(), wait, seq)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// sameVenueState compares two replicas' events hashes and the saved
// states of their feed and tape.
func sameVenueState(t *testing.T, a, b *tcpNode) {
	t.Helper()
	save := func(n *tcpNode) (uint64, []byte, []byte) {
		n.mu.Lock()
		defer n.mu.Unlock()
		var feed, tape bytes.Buffer
		if err := n.st.Parts["marketdata"].WriteState(&feed); err != nil {
			t.Fatal(err)
		}
		if err := n.st.Parts["console"].WriteState(&tape); err != nil {
			t.Fatal(err)
		}
		return n.st.Hash.Sum64(), feed.Bytes(), tape.Bytes()
	}
	ha, fa, ta := save(a)
	hb, fb, tb := save(b)
	switch {
	case ha != hb:
		t.Fatalf("node %d events hash %016x, node %d %016x", a.id, ha, b.id, hb)
	case !bytes.Equal(fa, fb):
		t.Fatalf("node %d feed state (%d bytes) differs from node %d's (%d bytes)", a.id, len(fa), b.id, len(fb))
	case !bytes.Equal(ta, tb):
		t.Fatalf("node %d console tape (%d bytes) differs from node %d's (%d bytes)", a.id, len(ta), b.id, len(tb))
	case len(fa) < bigRestingOrders*20:
		t.Fatalf("the feed state holds %d bytes: the books are not in it", len(fa))
	}
}

// sameVerify runs `journal verify`'s check, with matcher configuration
// cfg, on every replica's directory: all must agree.
func sameVerify(t *testing.T, nodes []*tcpNode, cfg core.Config) {
	t.Helper()
	var want string
	for _, n := range nodes {
		res, err := Verify(n.dir, cfg, nil)
		if err != nil {
			t.Fatalf("node %d: journal verify: %v", n.id, err)
		}
		if want == "" {
			want = res.String()
		} else if res.String() != want {
			t.Fatalf("node %d: journal verify %q, node %d %q", n.id, res.String(), nodes[0].id, want)
		}
	}
}
