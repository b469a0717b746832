package marketdata

import (
	"errors"
	"net"
	"testing"
	"time"
)

// replayCommands replays n commands of sim into a feed in replay mode.
func replayCommands(t *testing.T, f *Feed, sim *venueSim, n int) {
	t.Helper()
	for range n {
		for _, ev := range sim.next().All() {
			if err := f.Replay(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// standbyConfig is a standby feed's configuration.
func standbyConfig(feedAddr, feedBAddr string) FeedConfig {
	return FeedConfig{
		Tracker:  TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024},
		FeedAddr: feedAddr, FeedBAddr: feedBAddr, Standby: true,
		HeartbeatInterval: 20 * time.Millisecond,
		Recovery:          RecoveryConfig{Addr: "127.0.0.1:0", WindowPackets: 4096},
	}
}

// TestStandbyFeedClosesSilently: a standby feed (a cluster follower's, which
// publishes nothing) sends no EndOfSession at Close, on either line, whether
// it replayed commands or none: its receivers hear the live feed, and its
// EndOfSession would tell them the feed ended, its heartbeat (behind the
// live feed's sequence) that the feed numbers anew. A live feed's Close
// sends one on each of its lines, read here from the same sockets.
func TestStandbyFeedClosesSilently(t *testing.T) {
	sinkA, sinkB := udpSink(t), udpSink(t)
	defer sinkA.Close()
	defer sinkB.Close()
	read := func(conn *net.UDPConn, wait time.Duration) (int, error) {
		_ = conn.SetReadDeadline(time.Now().Add(wait))
		buf := make([]byte, 2048)
		return conn.Read(buf)
	}
	for _, commands := range []int{0, 30} {
		cfg := standbyConfig(sinkA.LocalAddr().String(), sinkB.LocalAddr().String())
		f, err := NewFeed(cfg)
		if err != nil {
			t.Fatal(err)
		}
		replayCommands(t, f, newVenueSim(t, 5), commands)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		for name, conn := range map[string]*net.UDPConn{"A": sinkA, "B": sinkB} {
			var ne net.Error
			if n, err := read(conn, 100*time.Millisecond); !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("a standby feed that replayed %d commands sent a datagram of %d bytes on line %s at Close (%v)", commands, n, name, err)
			}
		}
	}
	cfg := standbyConfig(sinkA.LocalAddr().String(), sinkB.LocalAddr().String())
	cfg.Standby = false
	f, err := NewFeed(cfg)
	if err != nil {
		t.Fatal(err)
	}
	replayCommands(t, f, newVenueSim(t, 5), 30)
	if err := f.EndReplay(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for name, conn := range map[string]*net.UDPConn{"A": sinkA, "B": sinkB} {
		if _, err := read(conn, 5*time.Second); err != nil {
			t.Fatalf("a live feed's Close sent nothing on line %s: %v", name, err)
		}
	}
}
