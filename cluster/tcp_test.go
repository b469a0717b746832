package cluster

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/journal"
)

// tcpNode is one replica with its real TCP transport and runner.
type tcpNode struct {
	id     uint64
	dir    string
	ln     net.Listener
	tr     *Transport
	node   *Node
	runner *Runner
	mu     sync.Mutex
	m      *core.Matcher
	hash   *journal.HashSink
	done   chan error
	tick   time.Duration // the runner's tick (10 ms when zero)
	// failSync makes every journal sync of this node fail with EIO.
	failSync atomic.Bool
	// newState, when set, makes the node apply into a MatcherState (st,
	// whose matcher and hash m and hash are then) and build and install
	// Raft snapshots of it; entriesMax is its EntriesInMemoryMax.
	newState   func() (*MatcherState, error)
	st         *MatcherState
	entriesMax int
}

func listenLoopback(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// startTCPCluster starts three replicas on 127.0.0.1 with a 10 ms tick.
func startTCPCluster(t testing.TB, clusterID uint64) []*tcpNode {
	return startTCPClusterTick(t, clusterID, 10*time.Millisecond)
}

// startTCPClusterTick starts three replicas on 127.0.0.1 with the given tick.
func startTCPClusterTick(t testing.TB, clusterID uint64, tick time.Duration) []*tcpNode {
	root := t.TempDir()
	nodes := make([]*tcpNode, 3)
	addrs := map[uint64]string{}
	for i := range nodes {
		n := &tcpNode{id: uint64(i + 1), dir: filepath.Join(root, "n"+strconv.Itoa(i+1)), ln: listenLoopback(t)}
		nodes[i] = n
		addrs[n.id] = n.ln.Addr().String()
	}
	for _, n := range nodes {
		n.tick = tick
		startTCPNode(t, n, clusterID, addrs)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.stop()
		}
	})
	return nodes
}

func startTCPNode(t testing.TB, n *tcpNode, clusterID uint64, addrs map[uint64]string) {
	t.Helper()
	peers := map[uint64]string{}
	for id, a := range addrs {
		if id != n.id {
			peers[id] = a
		}
	}
	if n.ln == nil {
		ln, err := net.Listen("tcp", addrs[n.id])
		if err != nil {
			t.Fatal(err)
		}
		n.ln = ln
	}
	m, err := core.NewMatcher(testMatcherConfig())
	if err != nil {
		t.Fatal(err)
	}
	n.m, n.hash = m, journal.NewHashSink()
	apply := func(_ uint64, cmd []byte) error {
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.m.Apply(cmd, n.hash)
	}
	var newState func() (State, error)
	var restore func([]byte, uint64) error
	if n.newState != nil {
		if n.st, err = n.newState(); err != nil {
			t.Fatal(err)
		}
		n.m, n.hash = n.st.Matcher, n.st.Hash
		apply = func(seq uint64, cmd []byte) error {
			n.mu.Lock()
			defer n.mu.Unlock()
			return n.st.Apply(seq, cmd)
		}
		newState = func() (State, error) { return n.newState() }
		restore = func(data []byte, _ uint64) error {
			st, err := n.newState()
			if err == nil {
				err = st.Load(data)
			}
			if err == nil {
				n.mu.Lock()
				n.st, n.m, n.hash = st, st.Matcher, st.Hash
				n.mu.Unlock()
			}
			return err
		}
	}
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n.tr = NewTransport(TransportConfig{ClusterID: clusterID, NodeID: n.id, Listener: n.ln, Peers: peers,
		SnapshotDir: n.dir, Logger: quietLogger(), Secret: []byte(tcpSecret)})
	sync := func(f *os.File, kind journal.SyncKind) error {
		if n.failSync.Load() {
			return syscall.EIO
		}
		return journal.DefaultSync(f, kind)
	}
	n.node, err = Open(NodeConfig{ClusterID: clusterID, NodeID: n.id, Voters: []uint64{1, 2, 3}, Dir: n.dir,
		Journal: journal.Config{Sync: sync}, Apply: apply, NewState: newState, Restore: restore,
		EntriesInMemoryMax: n.entriesMax, ReceivedSnapshot: n.tr.ReceivedSnapshot,
		Send: n.tr.Send, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if n.tick == 0 {
		n.tick = 10 * time.Millisecond
	}
	n.runner = NewRunner(RunnerConfig{Node: n.node, Transport: n.tr, TickInterval: n.tick, Logger: quietLogger()})
	n.done = make(chan error, 1)
	// The goroutine keeps its own runner and channel: a node started again
	// (a wiped directory) replaces both while the old one may still finish.
	r, done := n.runner, n.done
	go func() { done <- r.Run() }()
}

func (n *tcpNode) stop() {
	if n.runner == nil {
		return
	}
	n.runner.Stop()
	n.tr.Close()
	n.node.Close()
	n.runner, n.ln = nil, nil
}

// leader waits for a serving leader and returns it with its next seq.
func waitLeader(t testing.TB, nodes []*tcpNode) (*tcpNode, uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range nodes {
			if n.runner == nil {
				continue
			}
			var serving bool
			var next uint64
			if n.runner.Do(func(nd *Node) { serving, next = nd.Serving(), nd.ProposeNext() }) == nil && serving {
				return n, next
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no leader within 10 s")
	return nil, 0
}

// proposeOrders proposes count batches on the leader; it returns the last
// seq acknowledged (committed), or the error that stopped it.
func proposeOrders(t *testing.T, l *tcpNode, next uint64, flow *orderFlow, batches int) (int64, error) {
	last := int64(next) - 1
	for range batches {
		frames := flow.batch(t, uint64(last+1), 3)
		if err := l.runner.Propose(frames, last+3); err != nil {
			return last, err
		}
		last += 3
	}
	return last, nil
}

// proposeThroughElections proposes count batches on the leader, as
// proposeOrders does, for a test whose subject is not an election: a
// leader deposed by one meanwhile (a machine short of CPU, the race
// detector beside other test binaries, can hold its heartbeats past the
// 100-200 ms election timeout) is followed by the next, from its next
// seq, at most five times. It returns the last seq acknowledged.
func proposeThroughElections(t *testing.T, nodes []*tcpNode, flow *orderFlow, batches int) int64 {
	t.Helper()
	for attempt := 0; ; attempt++ {
		l, next := waitLeader(t, nodes)
		last, err := proposeOrders(t, l, next, flow, batches)
		if err == nil {
			return last
		}
		if !errors.Is(err, ErrLostLeadership) || attempt == 4 {
			t.Fatal(err)
		}
		t.Logf("node %d deposed by an election after seq %d was acknowledged: %v", l.id, last, err)
	}
}

func TestTCPClusterReplicatesAndSurvivesHostilePeers(t *testing.T) {
	nodes := startTCPCluster(t, 0xFEED)
	flow := newOrderFlow(3)
	proposeThroughElections(t, nodes, flow, 50)
	l, _ := waitLeader(t, nodes)
	// Hostile peers against a follower: garbage, another cluster's hello, a
	// peer whose configured terms differ, one without the cluster's secret
	// (anyone who knows the cluster id and the terms), a hello replayed a
	// minute later or at once, and a valid hello followed by a frame with a
	// bad CRC.
	// Each stream is closed.
	var f *tcpNode
	for _, n := range nodes {
		if n != l {
			f = n
		}
	}
	hello := func(cluster, from, to uint64, terms uint32, secret string) []byte {
		return (&Transport{cfg: TransportConfig{ClusterID: cluster, NodeID: from, Terms: terms, Secret: []byte(secret)}}).hello(to)
	}
	stale := hello(0xFEED, l.id, f.id, 0, tcpSecret)
	binary.LittleEndian.PutUint64(stale[36:], uint64(time.Now().Add(-time.Minute).UnixNano()))
	copy(stale[helloMACAt:], (&Transport{cfg: TransportConfig{Secret: []byte(tcpSecret)}}).helloMAC(stale[:helloMACAt]))
	badFrame := append(hello(0xFEED, l.id, f.id, 0, tcpSecret), 5, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5)
	// A valid hello, used once: sent again, within its time, it is a replay.
	used := hello(0xFEED, l.id, f.id, 0, tcpSecret)
	if c, err := net.Dial("tcp", f.ln.Addr().String()); err != nil {
		t.Fatal(err)
	} else {
		if _, err := c.Write(used); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		f.tr.mu.Lock()
		_, seen := f.tr.hellos[[32]byte(used[helloMACAt:])]
		f.tr.mu.Unlock()
		if seen {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hello used once was not taken")
		}
	}
	for name, data := range map[string][]byte{
		"garbage":          []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + string(make([]byte, 64))),
		"other cluster":    hello(0xBAD, l.id, f.id, 0, tcpSecret),
		"other terms":      hello(0xFEED, l.id, f.id, 0x1234, tcpSecret),
		"another secret":   hello(0xFEED, l.id, f.id, 0, "not the cluster's"),
		"replayed":         stale,
		"replayed at once": used,
		"bad crc":          badFrame,
	} {
		c, err := net.Dial("tcp", f.ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(data); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatalf("%s: stream not closed: %v", name, err)
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("%s: stream still open after 5 s", name)
		}
		c.Close()
	}
	if got := f.tr.Stats().ConnsRejected.Load(); got < 6 {
		t.Errorf("connections rejected: %d, want 6", got)
	}
	if got := f.tr.Stats().FramesBad.Load(); got < 1 {
		t.Errorf("bad frames: %d, want 1", got)
	}
	waitApplied(t, nodes, proposeThroughElections(t, nodes, flow, 50))
}

// waitApplied waits until every running node has applied up to seq, then
// compares their events hashes.
func waitApplied(t *testing.T, nodes []*tcpNode, seq int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, n := range nodes {
		for n.node.Committed().Load() < seq {
			if time.Now().After(deadline) {
				t.Fatalf("node %d applied up to %d, want %d", n.id, n.node.Committed().Load(), seq)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	for _, n := range nodes {
		n.mu.Lock()
		h := n.hash.Sum64()
		n.mu.Unlock()
		nodes[0].mu.Lock()
		h0 := nodes[0].hash.Sum64()
		nodes[0].mu.Unlock()
		if h != h0 {
			t.Errorf("node %d events hash %016x, node 1 %016x", n.id, h, h0)
		}
	}
}

// Stopping the leader (its files as a crash leaves them: every write the
// node answered for is synced) elects another; every acknowledged command
// is on the new leader; the old leader rejoins and converges.
func TestTCPClusterFailoverKeepsAcknowledgedCommands(t *testing.T) {
	nodes := startTCPCluster(t, 0xFEED)
	addrs := map[uint64]string{}
	for _, n := range nodes {
		addrs[n.id] = n.ln.Addr().String()
	}
	flow := newOrderFlow(5)
	acked := int64(-1)
	cycles := 5
	if testing.Short() {
		cycles = 2
	}
	for range cycles {
		l, next := waitLeader(t, nodes)
		if int64(next) <= acked {
			t.Fatalf("new leader proposes from seq %d, but seq %d was acknowledged", next, acked)
		}
		last, err := proposeOrders(t, l, next, flow, 30)
		if errors.Is(err, ErrLostLeadership) {
			// A machine short of CPU (the race detector beside other test
			// binaries) can hold a leader's heartbeats past an election
			// timeout (100-200 ms here): a leader deposed by an election is
			// a failover too, and what it acknowledged must be kept as well.
			t.Logf("node %d deposed by an election after seq %d was acknowledged: %v", l.id, last, err)
		} else if err != nil {
			t.Fatal(err)
		}
		acked = last
		l.stop()
		nl, _ := waitLeader(t, nodes)
		if got := nl.node.Committed().Load(); got < acked {
			// Committed on the new leader may trail until it applies its term's entry.
			waitApplied(t, []*tcpNode{nl}, acked)
		}
		startTCPNode(t, l, 0xFEED, addrs)
	}
	var last int64
	for attempt := 0; ; attempt++ {
		l, next := waitLeader(t, nodes)
		if int64(next) <= acked {
			t.Fatalf("new leader proposes from seq %d, but seq %d was acknowledged", next, acked)
		}
		var err error
		if last, err = proposeOrders(t, l, next, flow, 10); err == nil {
			break
		} else if !errors.Is(err, ErrLostLeadership) || attempt == 4 {
			t.Fatal(err)
		}
		acked = last // deposed by an election (above): its acknowledged commands are kept
	}
	waitApplied(t, nodes, last)
	var line string
	for _, n := range nodes {
		n.stop()
		v, err := journal.Verify(n.dir, testMatcherConfig(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if line == "" {
			line = v.String()
		} else if v.String() != line {
			t.Errorf("node %d journal verify %q, first node %q", n.id, v.String(), line)
		}
	}
}

// A follower whose fdatasync fails stops (fail-stop, as a single node
// does); the leader and the other follower are a quorum and carry on.
func TestTCPClusterFollowerDiskFailureFailStops(t *testing.T) {
	nodes := startTCPCluster(t, 0xD15C)
	flow := newOrderFlow(9)
	// A leader deposed by an election on a machine short of CPU is
	// followed by the next (proposeThroughElections): the subject here is
	// the follower's disk.
	proposeThroughElections(t, nodes, flow, 10)
	l, _ := waitLeader(t, nodes)
	var f *tcpNode
	for _, n := range nodes {
		if n != l {
			f = n
			break
		}
	}
	f.failSync.Store(true)
	last := proposeThroughElections(t, nodes, flow, 30)
	select {
	case err := <-f.done:
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("follower stopped with %v, want EIO", err)
		}
		f.done <- err // for stop()
	case <-time.After(10 * time.Second):
		t.Fatal("the follower whose disk failed is still running")
	}
	var others []*tcpNode
	for _, n := range nodes {
		if n != f {
			others = append(others, n)
		}
	}
	waitApplied(t, others, last)
}

// tcpSecret is the TCP tests' cluster secret (TransportConfig.Secret).
const tcpSecret = "the nodes' shared secret"
