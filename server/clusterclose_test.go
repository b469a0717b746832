package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/cluster"
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/internal/testports"
)

// TestClusterNodeClosedWhilePromotedClosesItsVenue: a node closed while it
// starts to lead closes the venue that promotion starts. Close used to
// close the follower's parts and return while serve was still building
// the venue; serve then set it as the node's server, which nothing closed:
// its FIX listener kept accepting after Close returned. The promotion is
// held after the venue started and before the node took it as its
// server, at the log line between the two, until Close has begun.
func TestClusterNodeClosedWhilePromotedClosesItsVenue(t *testing.T) {
	t.Parallel()
	pause := newPromotionPause(promotedMsg)
	nodes := startInProcessCluster(t, pause, nil)

	var leader int
	select {
	case leader = <-pause.reached:
	case <-time.After(30 * time.Second):
		t.Fatal("no node started to lead within 30 s")
	}
	c := nodes[leader]
	fixAddr := c.FIXAddr()
	// The venue started: its FIX edge, not the follower's gate (serve
	// closed it), accepts at the node's FIX address.
	conn, err := net.DialTimeout("tcp", fixAddr, 5*time.Second)
	if err != nil {
		t.Fatalf("the promoted node's venue does not accept FIX connections at %s: %v", fixAddr, err)
	}
	conn.Close()

	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	nodes[leader] = nil // closed here, not by the cleanup
	select {
	case <-c.stop:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not begin within 10 s")
	}
	pause.free()
	select {
	case err := <-closed:
		if err != nil {
			t.Logf("Close: %v", err) // its parts' errors; the leak is the subject here
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Close did not return within 60 s of the promotion's release")
	}
	select {
	case <-c.served:
	case <-time.After(10 * time.Second):
		t.Fatal("the promotion still ran 10 s after Close returned")
	}
	if conn, err := net.DialTimeout("tcp", fixAddr, 5*time.Second); err == nil {
		conn.Close()
		// Closed here so that it does not serve beside the other tests.
		if srv := c.Server(); srv != nil {
			done := make(chan struct{})
			go func() { srv.Close(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
			}
		}
		t.Fatalf("Close returned, and the venue the node started to lead with still accepts FIX connections at %s", fixAddr)
	}
}

// TestClusterNodeWhosePromotionFailsBesideAnotherFailureCloses: a node
// whose start as leader fails while an earlier failure is still unread on
// Failed (its owner closing it, say) logs the second, and the promotion
// returns. Its report was a send on Failed's channel, which holds one:
// serve stayed blocked for good, and Close, which waits for a promotion
// in progress, would wait with it. The venue's start fails here as its
// metrics address is taken; the promotion is held before it begins (the
// runner's log of the leadership) while each node's earlier failure is
// reported.
func TestClusterNodeWhosePromotionFailsBesideAnotherFailureCloses(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	pause := newPromotionPause("cluster: leading")
	nodes := startInProcessCluster(t, pause, func(_ int, cfg *config.Config) { cfg.Metrics.Addr = taken.Addr().String() })
	var leader int
	select {
	case leader = <-pause.reached:
	case <-time.After(30 * time.Second):
		t.Fatal("no node started to lead within 30 s")
	}
	earlier := errors.New("an earlier failure, not read yet")
	for i, n := range nodes {
		select {
		case n.failed <- earlier:
		default:
			t.Fatalf("node %d failed before its promotion: %v", i+1, <-n.failed)
		}
	}
	pause.free()
	c := nodes[leader]
	select {
	case <-c.served:
	case <-time.After(30 * time.Second):
		t.Fatal("the promotion whose start failed did not return within 30 s: its failure's report is blocked")
	}
	if err := <-c.Failed(); err != earlier {
		t.Fatalf("Failed delivered %v, want the earlier failure", err)
	}
	if srv := c.Server(); srv != nil {
		t.Fatalf("a venue is set though its start failed: %v", srv.FIXAddr())
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	nodes[leader] = nil
	select {
	case <-closed:
	case <-time.After(60 * time.Second):
		t.Fatal("Close did not return within 60 s")
	}
}

// promotedMsg is what serve logs once the venue started, before the node
// takes it as its server.
const promotedMsg = "cluster: venue built on the hot standby"

// promotionPause holds each node's logging of msg until free, and says
// which node reached it first.
type promotionPause struct {
	msg     string
	reached chan int
	release chan struct{}
	once    sync.Once
}

func newPromotionPause(msg string) *promotionPause {
	return &promotionPause{msg: msg, reached: make(chan int, 1), release: make(chan struct{})}
}

func (p *promotionPause) free() { p.once.Do(func() { close(p.release) }) }

// pauseHandler is node's log handler: it waits at the pause's message.
type pauseHandler struct {
	slog.Handler
	node  int
	pause *promotionPause
}

func (h pauseHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.pause.msg {
		select {
		case h.pause.reached <- h.node:
		default:
		}
		<-h.pause.release
	}
	return h.Handler.Handle(ctx, r)
}

func (h pauseHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return pauseHandler{h.Handler.WithAttrs(attrs), h.node, h.pause}
}

func (h pauseHandler) WithGroup(name string) slog.Handler {
	return pauseHandler{h.Handler.WithGroup(name), h.node, h.pause}
}

// startInProcessCluster starts three cluster nodes in this process on
// loopback ports it reserved, each logging through a pauseHandler, and
// closes in t.Cleanup those whose slot is still set; configure, when set,
// changes node i's configuration first. QuickFIX/Go registers every
// session in one registry per process and refuses a second of the same
// ID, so each node's sessions carry a SenderSubID of their own (a
// qualifier would do, but QuickFIX/Go's Acceptor.Stop leaves a qualified
// session in the registry): it is no part of the terms the nodes compare,
// and it changes nothing of the sessions but their IDs (no FIX client logs
// on to these nodes).
func startInProcessCluster(t *testing.T, pause *promotionPause, configure func(i int, cfg *config.Config)) []*ClusterNode {
	t.Helper()
	// Reserved outside the ephemeral range: the nodes of the tests beside
	// this one dial their peers from ports the system chooses.
	ports, release := testports.Reserve(t, "tcp", 9)
	release()
	addrs := make([]string, len(ports))
	for i, p := range ports {
		addrs[i] = "127.0.0.1:" + strconv.Itoa(p)
	}
	var peers strings.Builder
	for j := range 3 {
		fmt.Fprintf(&peers, "[[cluster.peer]]\nid = %d\nraft_addr = %q\nfix_addr = %q\nstatus_addr = %q\n\n",
			j+1, addrs[3*j], addrs[3*j+1], addrs[3*j+2])
	}
	nodes := make([]*ClusterNode, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		cfg := testConfig(t, t.TempDir(), fmt.Sprintf("[cluster]\ncluster_id = 4242\nnode_id = %d\nheartbeat = \"50ms\"\nelection = \"500ms\"\n%s",
			i+1, peers.String()))
		cfg.SessionDefaults.QuickFIX["SenderSubID"] = fmt.Sprintf("N%d", i+1)
		if configure != nil {
			configure(i, cfg)
		}
		opts := Options{Logger: slog.New(pauseHandler{testLogger(t).Handler(), i, pause})}
		// Together: each waits about a second for its FIX sessions to run.
		wg.Go(func() { nodes[i], errs[i] = StartCluster(cfg, opts) })
	}
	wg.Wait()
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, n := range nodes {
			if n != nil {
				wg.Go(func() { n.Close() })
			}
		}
		wg.Wait()
	})
	// Registered after the nodes' Close, so run before it: a Close must
	// not wait for a promotion held here.
	t.Cleanup(pause.free)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
	}
	return nodes
}

// TestClusterNodeElectedAgainServesNothing: a leader deposed by a transfer
// and elected again in the same process (Raft may elect it before it
// re-executes, or once it handed the leadership over at its stop) starts
// no second venue: that promotion closed the channel of the first
// (ClusterNode.served) and the process panicked. It says so in its log,
// and its first venue stays as it was.
func TestClusterNodeElectedAgainServesNothing(t *testing.T) {
	t.Parallel()
	pause := newPromotionPause("cluster: elected again before this process restarts or stops: taking no orders")
	nodes := startInProcessCluster(t, pause, nil)
	leading := func() int {
		for i, n := range nodes {
			if n.Server() != nil && n.runner.Lead() == uint64(i+1) {
				return i
			}
		}
		return -1
	}
	transferTo := func(from, to int) {
		t.Helper()
		var refused string
		if err := nodes[from].runner.Do(func(n *cluster.Node) { refused = transferRefusal(n, uint64(from+1), uint64(to+1)) }); err != nil || refused != "" {
			t.Fatalf("transfer from node %d to node %d: %v %s", from+1, to+1, err, refused)
		}
	}
	first := -1
	for deadline := time.Now().Add(30 * time.Second); first < 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no node leads 30 s after the start")
		}
		first = leading()
	}
	srv := nodes[first].Server()
	next := (first + 1) % 3
	transferTo(first, next)
	for deadline := time.Now().Add(30 * time.Second); nodes[next].Server() == nil || nodes[next].runner.Lead() != uint64(next+1); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("node %d does not lead 30 s after the transfer", next+1)
		}
	}
	select {
	case <-nodes[first].Deposed():
	case <-time.After(10 * time.Second):
		t.Fatalf("node %d was not deposed by the transfer", first+1)
	}
	// Deposed, its venue (kept until its process restarts) takes nothing:
	// its status says it does not serve, where it said it did, beside the
	// new leader, until the restart.
	resp, err := http.Get("http://" + nodes[first].StatusAddr() + "/cluster/status")
	if err != nil {
		t.Fatal(err)
	}
	var st ClusterStatus
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || st.Serving {
		t.Fatalf("node %d, deposed, says serving=%v (%v)", first+1, st.Serving, err)
	}
	// Back to the deposed node, whose process has not restarted.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var refused string
		if err := nodes[next].runner.Do(func(n *cluster.Node) { refused = transferRefusal(n, uint64(next+1), uint64(first+1)) }); err == nil && refused == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d would not hand the leadership back to node %d in 30 s", next+1, first+1)
		}
	}
	select {
	case i := <-pause.reached:
		pause.free()
		if i != first {
			t.Fatalf("node %d said it was elected again, want node %d", i+1, first+1)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("node %d did not say it serves nothing once elected again (leader known: %d)", first+1, nodes[first].runner.Lead())
	}
	if got := nodes[first].Server(); got != srv {
		t.Fatalf("node %d replaced its venue when elected again", first+1)
	}
}
