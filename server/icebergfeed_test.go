package server

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// feedOrders is what a market-by-order reader of the feed saw: each
// OrderAdded's and each OrderExecuted's id, in feed order.
type feedOrders struct {
	mu       sync.Mutex
	added    []uint64
	executed []uint64
}

func (f *feedOrders) onMessage(_ uint64, tid uint16, msg []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch tid {
	case mdsbe.OrderAddedTemplateID:
		var m mdsbe.OrderAdded
		_ = m.WrapDecode(msg, 0)
		f.added = append(f.added, m.OrderID())
	case mdsbe.OrderExecutedTemplateID:
		var m mdsbe.OrderExecuted
		_ = m.WrapDecode(msg, 0)
		f.executed = append(f.executed, m.OrderID())
	}
}

// wait waits, bounded, until the reader has seen at least added orders
// added and executed executions, and returns copies.
func (f *feedOrders) wait(t *testing.T, added, executed int) ([]uint64, []uint64) {
	t.Helper()
	for deadline := time.Now().Add(readWait); ; time.Sleep(5 * time.Millisecond) {
		f.mu.Lock()
		a, e := append([]uint64(nil), f.added...), append([]uint64(nil), f.executed...)
		f.mu.Unlock()
		if len(a) >= added && len(e) >= executed {
			return a, e
		}
		if time.Now().After(deadline) {
			t.Fatalf("the feed reader saw added %v, executed %v; want %d and %d", a, e, added, executed)
		}
	}
}

// readFeed runs a feed client on udp, the socket s's feed is sent to,
// until the test ends, and waits (bounded) until it has joined with a
// snapshot: what the feed publishes from then on reaches its OnMessage.
func readFeed(t *testing.T, s *Server, udp *net.UDPConn) *feedOrders {
	t.Helper()
	f := &feedOrders{}
	c := runFeedClient(t, s, feedclient.Config{Callbacks: feedclient.Callbacks{OnMessage: f.onMessage}}, udp)
	waitFeedJoined(t, c)
	return f
}

// runFeedClient runs a feed client of cfg (its RecoveryAddr s's when unset)
// on udp until the test ends, which it must end with.
func runFeedClient(t *testing.T, s *Server, cfg feedclient.Config, udp *net.UDPConn) *feedclient.Client {
	t.Helper()
	if cfg.RecoveryAddr == "" {
		cfg.RecoveryAddr = s.RecoveryAddr()
	}
	c, err := feedclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.RunConn(ctx, udp) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("feed client: %v", err)
			}
		case <-time.After(readWait):
			t.Error("the feed client did not stop")
		}
	})
	return c
}

// waitFeedJoined waits, bounded, until feed client c has joined with a
// snapshot, which it does at the feed's first packet or heartbeat.
func waitFeedJoined(t *testing.T, c *feedclient.Client) {
	t.Helper()
	for deadline := time.Now().Add(readWait); ; time.Sleep(5 * time.Millisecond) {
		var snaps uint64
		ictx, icancel := context.WithDeadline(context.Background(), deadline)
		err := c.Inspect(ictx, func(c *feedclient.Client) { snaps = c.Stats().Snapshots })
		icancel()
		if err != nil {
			t.Fatalf("the feed client did not join: %v", err)
		}
		if snaps > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the feed client did not join")
		}
	}
}

// TestIcebergRefillsOnTheFeed: on the venue's binary feed each refilled
// slice of an iceberg is a new order under an id of its own, from
// marketdata.RefillIDBase, while the owner's ExecutionReports keep the
// OrderID; the slice's executions name it by the id the feed gave it. A
// restart, which replays the journal into the feed, serves the live slice
// under the same id in a recovery snapshot, and the next refill takes the
// next id.
func TestIcebergRefillsOnTheFeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := func() (*Server, *feedOrders) {
		udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { udp.Close() })
		cfg := testConfig(t, dir, "")
		cfg.MarketData.Enabled = true
		cfg.MarketData.FeedAddr = udp.LocalAddr().String()
		cfg.MarketData.RecoveryAddr = "127.0.0.1:0"
		s := startServer(t, cfg, Options{})
		return s, readFeed(t, s, udp)
	}
	s, feed := start()
	seller, buyer := logon(t, s, "CLIENT1", true), logon(t, s, "CLIENT2", true)
	sendOrder(t, seller, order{id: "ice", side: "2", qty: "10", px: "101.00", tif: "1", extra: []fixclient.Field{fixclient.F(111, "3")}})
	oid := expectER(t, seller, map[int]string{11: "ice", 150: "0"}).Get(37)
	buy := func(c *fixclient.Client, id string) {
		t.Helper()
		sendOrder(t, c, order{id: id, side: "1", qty: "3", px: "101.00", tif: "3"})
		expectER(t, c, map[int]string{11: id, 150: "F", 39: "2"})
	}
	buy(buyer, "b1")
	buy(buyer, "b2")
	// The owner's reports name the order by its OrderID throughout.
	for _, leaves := range []string{"7", "4"} {
		expectER(t, seller, map[int]string{11: "ice", 150: "F", 37: oid, 151: leaves})
	}
	id, err := strconv.ParseUint(oid, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2, r3 := uint64(marketdata.RefillIDBase)+1, uint64(marketdata.RefillIDBase)+2, uint64(marketdata.RefillIDBase)+3
	added, executed := feed.wait(t, 3, 2)
	if len(added) != 3 || added[0] != id || added[1] != r1 || added[2] != r2 {
		t.Fatalf("the feed added the slices as %v, want #%d, #%d, #%d", added, id, r1, r2)
	}
	if len(executed) != 2 || executed[0] != id || executed[1] != r1 {
		t.Fatalf("the feed executed %v, want #%d, #%d", executed, id, r1)
	}
	buyer.Close()
	seller.Close()
	s.Close()

	s2, feed2 := start()
	var entries []uint64
	rec := feedclient.NewTCPRecoverer(s2.RecoveryAddr(), marketdata.ChannelDefault, readWait)
	defer rec.Close()
	if reason, err := rec.Snapshot(1, func(pkt []byte) error {
		var r packet.Reader
		if err := r.Reset(pkt); err != nil {
			return err
		}
		for msg, ok := r.Next(); ok; msg, ok = r.Next() {
			if tid, _ := mdsbe.TemplateIDOf(msg, 0); tid == mdsbe.SnapshotEntriesTemplateID {
				var m mdsbe.SnapshotEntries
				_ = m.WrapDecode(msg, 0)
				for g, i := m.Entries(), 0; i < g.Count(); i++ {
					entries = append(entries, g.Entry(i).OrderID())
				}
			}
		}
		return nil
	}); err != nil || reason != 0 {
		t.Fatalf("snapshot after the restart: %v, reject %v", err, reason)
	}
	if len(entries) != 1 || entries[0] != r2 {
		t.Fatalf("after the restart the snapshot holds %v, want the live slice #%d", entries, r2)
	}
	buy(logon(t, s2, "CLIENT3", true), "b3")
	added, executed = feed2.wait(t, 1, 1)
	if len(added) != 1 || added[0] != r3 || len(executed) != 1 || executed[0] != r2 {
		t.Fatalf("after the restart the feed added %v and executed %v, want #%d and #%d", added, executed, r3, r2)
	}
}
