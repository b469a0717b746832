package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/admintest"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// TestClusterMarketDataAcrossFailover runs three nodes with market data on:
// only the leader publishes, to the one feed address. A feed client runs
// across a kill -9 of the leader while the sessions trade, and of the next
// leader after an end of day; its recovery
// service is reached through a proxy that connects to whichever node
// serves (as a client would try the next address). The new leader's feed
// continues the sequence its standby feed derived from the committed log,
// so the client keeps its book without a snapshot, and at the end its books
// are exactly the matcher's (a replay of a node's journal).
// clusterMarketData picks a feed address shared by the nodes and a recovery
// address for each, and returns them with the nodes' [marketdata] tables.
func clusterMarketData(t *testing.T) (feedAddr string, recovery [3]string, table func(i int) string) {
	feedAddr = fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	for i := range recovery {
		recovery[i] = fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
	}
	return feedAddr, recovery, func(i int) string {
		return fmt.Sprintf("enabled = true\nfeed_addr = %q\nrecovery_addr = %q\nheartbeat_interval = \"100ms\"", feedAddr, recovery[i])
	}
}

func TestClusterMarketDataAcrossFailover(t *testing.T) {
	feedAddr, recovery, md := clusterMarketData(t)
	h := writeClusterConfigsWith(t, nil, false, "", md)
	h.startAll()
	l := h.leader(30 * time.Second)
	proxy := newLeaderProxy(t, h, recovery)
	client := startFeedClient(t, feedclient.Config{FeedAddr: feedAddr, RecoveryAddr: proxy.Addr().String()})

	wait := h.round("before", false)
	time.Sleep(1500 * time.Millisecond)
	// The client joined by a snapshot; from here on it must need none.
	before := waitInSync(t, client)
	nl := h.failoverWhileTrading(l, wait)

	// An end of day on the new leader sets every volume on the feed to 0,
	// with an InstrumentStatus of reason EndOfDay per instrument, which the
	// followers' standby feeds derive alike: after a kill -9 of this leader
	// too, the client goes on without a snapshot.
	if a := admintest.Call(t, http.MethodPost, "http://"+h.adminAddr(nl)+"/v1/eod", clusterToken, `{"reason":"test"}`); a.Status != http.StatusOK {
		t.Fatalf("POST /v1/eod: HTTP %d %s", a.Status, a.Body)
	}
	eventually(t, "the end of day on the feed", func() error {
		var notYet error
		if err := client.Inspect(context.Background(), func(c *feedclient.Client) {
			c.Books(func(b *feedclient.Book) {
				if b.Volume != 0 || b.StatusReason != mdsbe.StatusReasonEndOfDay {
					notYet = fmt.Errorf("%s: volume %d, status reason %v", b.Symbol, b.Volume, b.StatusReason)
				}
			})
		}); err != nil {
			t.Fatal(err)
		}
		return notYet
	})
	eodLeader := nl
	h.kill(eodLeader)
	if nl = h.leader(30 * time.Second); nl == eodLeader {
		t.Fatalf("node %d still leads after kill -9", nl+1)
	}
	time.Sleep(time.Second) // the new leader's heartbeats announce its next sequence

	// The feed's heartbeats carry the next sequence: wait until the client
	// has everything, then stop the nodes and replay a journal.
	stats := waitInSync(t, client)
	for i := range 3 {
		h.kill(i)
	}
	stats = clientHasEngineBooks(t, client, h.cfgs[nl])
	if stats.Snapshots != before.Snapshots || stats.Unrecovered != 0 || stats.Inconsistencies != 0 || stats.Messages <= before.Messages {
		t.Fatalf("across the failover the feed client needed %d snapshots, left %d gaps unrecovered, saw %d inconsistencies, applied %d messages: the sequence did not continue (%+v)",
			stats.Snapshots-before.Snapshots, stats.Unrecovered, stats.Inconsistencies, stats.Messages-before.Messages, stats)
	}
	if !strings.Contains(h.procs[nl].logs(), "market data feed") {
		t.Fatal("the new leader did not start its feed")
	}
	t.Logf("leader %d killed, node %d leads; feed client: %d messages, %d gaps filled by %d retransmissions, %d duplicates",
		l+1, nl+1, stats.Messages, stats.Gaps, stats.Retransmissions, stats.Duplicates)
}

// failoverWhileTrading kills leader l (kill -9) while the sessions trade in
// the round wait ends, restarts it, trades a round more on the new leader
// and waits for the nodes to agree; it returns the new leader.
func (h *clusterHarness) failoverWhileTrading(l int, wait func()) int {
	h.t.Helper()
	h.kill(l)
	wait()
	nl := h.leader(30 * time.Second)
	if nl == l {
		h.t.Fatalf("node %d still leads after kill -9", l+1)
	}
	h.start(l)
	wait = h.round("after", false)
	time.Sleep(1500 * time.Millisecond)
	h.endRound(wait)
	h.quiesce(30 * time.Second)
	return nl
}

// clientHasEngineBooks checks that the feed client's books are exactly the
// matcher's (a replay of the journal of the node cfg configures, stopped),
// and returns the client's counters.
func clientHasEngineBooks(t *testing.T, client *feedclient.Client, cfg string) feedclient.Stats {
	t.Helper()
	want := engineBooks(t, cfg)
	var got map[string]bookLevels
	var stats feedclient.Stats
	if err := client.Inspect(context.Background(), func(c *feedclient.Client) {
		got = map[string]bookLevels{}
		for sym := range want {
			if b := c.BookBySymbol(sym); b != nil {
				got[sym] = clientBook(b)
			}
		}
		stats = c.Stats()
	}); err != nil {
		t.Fatal(err)
	}
	levels := 0
	for sym, w := range want {
		levels += len(w.Bids) + len(w.Asks)
		if fmt.Sprint(got[sym]) != fmt.Sprint(w) {
			t.Errorf("%s: the feed client shows %v, the matcher holds %v", sym, got[sym], w)
		}
	}
	if levels == 0 {
		t.Fatal("the matcher holds no resting order: the test checks nothing")
	}
	return stats
}

// TestClusterBLineFromFollowers: with marketdata.feed_b_from = "followers"
// the leader sends the A line alone and the followers the B line, each
// from its standby feed as it applies the committed commands: the leader's
// fixvenue_md_line_b_packets_sent_total stays 0 while its A line sends,
// and each follower's fixvenue_cluster_line_b_packets_sent_total grows. A
// feed client reads both lines across a kill -9 of the leader while the
// sessions trade (the node restarted, a follower, sends the B line in its
// turn) and a follower's stop by SIGTERM: it needs no snapshot after its
// join, its books end the matcher's, and no EndOfSession reaches it (a
// follower's standby feed closes saying nothing: it is not the feed).
func TestClusterBLineFromFollowers(t *testing.T) {
	feedAddr := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	lineB := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	var recovery [3]string
	for i := range recovery {
		recovery[i] = fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
	}
	h := writeClusterConfigsWith(t, nil, false, "", func(i int) string {
		return fmt.Sprintf("enabled = true\nfeed_addr = %q\nfeed_b_addr = %q\nfeed_b_from = \"followers\"\nrecovery_addr = %q\nheartbeat_interval = \"100ms\"",
			feedAddr, lineB, recovery[i])
	})
	var metrics [3]string
	for i := range 3 {
		metrics[i] = fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
		h.procs[i] = startVenue(t, h.cfgs[i], "--metrics-addr", metrics[i])
	}
	l := h.leader(30 * time.Second)
	proxy := newLeaderProxy(t, h, recovery)
	var ends atomic.Int64
	client := startFeedClient(t, feedclient.Config{FeedAddr: feedAddr, FeedBAddr: lineB, RecoveryAddr: proxy.Addr().String(),
		Callbacks: feedclient.Callbacks{OnEndOfSession: func(uint64) { ends.Add(1) }}})

	wait := h.round("before", false)
	time.Sleep(1500 * time.Millisecond)
	before := waitInSync(t, client)
	for _, f := range []int{(l + 1) % 3, (l + 2) % 3} {
		eventually(t, fmt.Sprintf("node %d (a follower) sending the B line", f+1), func() error {
			m := metricstest.Scrape(t, h.status[f])
			if n := metricstest.Float(t, m, "fixvenue_cluster_line_b_packets_sent_total"); n == 0 {
				return fmt.Errorf("fixvenue_cluster_line_b_packets_sent_total %v", n)
			}
			return nil
		})
	}
	for i, want := range map[int]string{l: `line_b="` + lineB + ` (from the followers)"`,
		(l + 1) % 3: "this node sends the feed's B line while it follows", (l + 2) % 3: "this node sends the feed's B line while it follows"} {
		if !strings.Contains(h.procs[i].logs(), want) {
			t.Fatalf("node %d's log does not say %q:\n%s", i+1, want, lastLines(h.procs[i].logs(), 30))
		}
	}
	m := metricstest.Scrape(t, metrics[l])
	if a, b := metricstest.Float(t, m, "fixvenue_md_packets_sent_total"), metricstest.Float(t, m, "fixvenue_md_line_b_packets_sent_total"); a == 0 || b != 0 {
		t.Fatalf("the leader (node %d) sent %v packets on the A line and %v on the B line: want the A line alone", l+1, a, b)
	}
	if before.Lines[1].Datagrams == 0 {
		t.Fatalf("the feed client read nothing on the B line: %+v", before)
	}
	nl := h.failoverWhileTrading(l, wait)
	eventually(t, fmt.Sprintf("node %d, restarted as a follower, sending the B line", l+1), func() error {
		if n := metricstest.Float(t, metricstest.Scrape(t, h.status[l]), "fixvenue_cluster_line_b_packets_sent_total"); n == 0 {
			return fmt.Errorf("fixvenue_cluster_line_b_packets_sent_total %v", n)
		}
		return nil
	})
	h.procs[l].stop(t)      // a follower's stop: its standby feed says nothing
	time.Sleep(time.Second) // the leader's heartbeats come on

	stats := waitInSync(t, client)
	for i := range 3 {
		h.kill(i)
	}
	stats = clientHasEngineBooks(t, client, h.cfgs[nl])
	if stats.Snapshots != before.Snapshots || stats.Unrecovered != 0 || stats.Inconsistencies != 0 || ends.Load() != 0 {
		t.Fatalf("the feed client needed %d snapshots, left %d gaps unrecovered, saw %d inconsistencies and %d EndOfSessions (%+v)",
			stats.Snapshots-before.Snapshots, stats.Unrecovered, stats.Inconsistencies, ends.Load(), stats)
	}
	t.Logf("leader %d killed, node %d leads; feed client: %d messages, lines %+v, %d gaps filled by %d retransmissions",
		l+1, nl+1, stats.Messages, stats.Lines, stats.Gaps, stats.Retransmissions)
}

// newLeaderProxy accepts recovery connections and forwards each to the
// recovery service of the node that serves at that moment, waiting (up to
// 5 s) for one during a failover.
func newLeaderProxy(t *testing.T, h *clusterHarness, recovery [3]string) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
					for i := range 3 {
						if st, err := h.nodeStatus(i); err == nil && st.Serving {
							up, err := net.DialTimeout("tcp", recovery[i], time.Second)
							if err != nil {
								return
							}
							defer up.Close()
							go func() { io.Copy(up, c); up.Close() }()
							io.Copy(c, up)
							return
						}
					}
				}
			}()
		}
	}()
	return ln
}

// waitInSync waits (bounded) until the feed client has every message up to
// the sequence the feed announces, and returns its counters.
func waitInSync(t *testing.T, client *feedclient.Client) feedclient.Stats {
	t.Helper()
	var stats feedclient.Stats
	deadline := time.Now().Add(15 * time.Second)
	for {
		var inSync bool
		if err := client.Inspect(context.Background(), func(c *feedclient.Client) { inSync, stats = c.InSync(), c.Stats() }); err != nil {
			t.Fatal(err)
		}
		if inSync {
			return stats
		}
		if time.Now().After(deadline) {
			t.Fatalf("the feed client is not in sync after 15 s: %+v", stats)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClusterLeaderFeedMetrics: a cluster's leader publishes the feed, and
// its /metrics has the feed's counters (fixvenue_md_*) as a single venue's
// has (docs/ARCHITECTURE.md, market data): a leader's feed is its standby's,
// and they were left out. `md watch` given a follower's recovery address
// before the leader's says that the follower is not serving market data
// and joins through the leader's (its screen showed the connection reset
// it met); given the followers' alone, it exits 1 saying that none serves
// (it showed a reset or an EOF, for ever).
func TestClusterLeaderFeedMetrics(t *testing.T) {
	feedAddr, recovery, md := clusterMarketData(t)
	h := writeClusterConfigsWith(t, nil, false, "", md)
	var metrics [3]string
	for i := range 3 {
		metrics[i] = fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
		h.procs[i] = startVenue(t, h.cfgs[i], "--metrics-addr", metrics[i])
	}
	l := h.leader(30 * time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := metricstest.Scrape(t, metrics[l])
		if strings.Contains(m, "\nfixvenue_md_heartbeats_total ") && metricstest.Float(t, m, "fixvenue_md_heartbeats_total") >= 1 &&
			metricstest.Value(t, m, "fixvenue_md_stopped") == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d leads, and its /metrics has no feed heartbeats (fixvenue_md_*):\n%s", l+1, m)
		}
		time.Sleep(50 * time.Millisecond)
	}

	f1, f2 := (l+1)%3, (l+2)%3
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watch := exec.CommandContext(ctx, binPath, "md", "watch", "--feed-addr", feedAddr, "--recovery-addr", recovery[f1]+","+recovery[l])
	var out lockedbuf.Buffer
	watch.Stdout, watch.Stderr = &out, &out
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	passed := fmt.Sprintf("passed over: the node at %s is not serving market data", recovery[f1])
	for !strings.Contains(out.String(), passed) || !strings.Contains(out.String(), "last recovery: joined with a snapshot at seq") {
		if ctx.Err() != nil {
			t.Fatalf("md watch with node %d's recovery address before the leader's never drew %q and its join:\n%s", f1+1, passed, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	watch.Process.Kill()
	watch.Wait()

	var stdout, stderr strings.Builder
	watch = exec.CommandContext(ctx, binPath, "md", "watch", "--feed-addr", feedAddr, "--recovery-addr", recovery[f1]+","+recovery[f2])
	watch.Stdout, watch.Stderr = &stdout, &stderr
	err := watch.Run()
	if ctx.Err() != nil || watch.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "no recovery address serves market data") {
		t.Fatalf("md watch with the followers' recovery addresses alone: %v, want exit 1 saying none serves\nstderr: %s", err, stderr.String())
	}
	for _, f := range []int{f1, f2} {
		if want := fmt.Sprintf("the node at %s is not serving market data", recovery[f]); !strings.Contains(stderr.String(), want) {
			t.Fatalf("md watch with the followers' recovery addresses alone: %q, want %q in it", stderr.String(), want)
		}
	}
}
