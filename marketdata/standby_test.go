package marketdata

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/testports"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
	"github.com/fixvenue/fixvenue/marketdata/packet"
)

// replayCommands replays n commands of sim into a standby feed, ending
// each (EndStandbyCommand) as a cluster follower does once it has applied
// a batch, when end is set.
func replayCommands(t *testing.T, f *Feed, sim *venueSim, n int, end bool) {
	t.Helper()
	for range n {
		for _, ev := range sim.next().All() {
			if err := f.Replay(ev); err != nil {
				t.Fatal(err)
			}
		}
		if end {
			if _, _, err := f.EndStandbyCommand(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// standbyConfig is a standby feed's configuration beside a live feed's: the
// same lines, a recovery listener of its own.
func standbyConfig(feedAddr, feedBAddr string) FeedConfig {
	return FeedConfig{
		Tracker:  TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024},
		FeedAddr: feedAddr, FeedBAddr: feedBAddr, BLineFromStandby: true, Standby: true,
		HeartbeatInterval: 20 * time.Millisecond,
		Recovery:          RecoveryConfig{Addr: "127.0.0.1:0", WindowPackets: 4096},
	}
}

// TestStandbyFeedSendsTheBLine: with BLineFromStandby a live feed (a
// cluster's leader) sends line A alone, and a standby feed (a follower)
// replaying the same commands sends line B alone once SendStandbyB is
// called (nothing of its start-up replay), each command's packet as
// EndStandbyCommand completes it. Line A loses every third datagram; a
// client reading both lines converges to the books without recovering a
// gap over TCP, as the messages line A lost came on line B, in packets
// bounded otherwise than line A's.
func TestStandbyFeedSendsTheBLine(t *testing.T) {
	connA := udpSink(t)
	ports, release := testports.Reserve(t, "udp", 1)
	release() // the client binds it
	lineB := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: ports[0]}
	relayA := newDroppingRelay(t, connA.LocalAddr().(*net.UDPAddr), func(n int64) bool { return n%3 == 0 })
	live := newFeedFixture(t, relayA.in.LocalAddr().String(), func(c *FeedConfig) {
		c.FeedBAddr, c.BLineFromStandby = lineB.String(), true
		c.Recovery.WindowPackets = 4096
	})
	standby, err := NewFeed(standbyConfig(relayA.in.LocalAddr().String(), lineB.String()))
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close()
	// Both apply every command: the live feed in batches, the standby one
	// event at a time. Before SendStandbyB the standby sends nothing. The
	// commands are stamped now, as a live venue's are: the standby sends
	// none older than StandbyBLineAgeMax.
	simLive, simStandby := newVenueSim(t, 41), newVenueSim(t, 41)
	simLive.nowNs = time.Now().UnixNano()
	simStandby.nowNs = simLive.nowNs
	live.run(simLive, 50)
	replayCommands(t, standby, simStandby, 50, true)
	if st := standby.Stats(); st.LineBPacketsSent != 0 || st.PacketsSent != 0 {
		t.Fatalf("a standby feed sent before SendStandbyB: %+v", st)
	}

	var mu sync.Mutex
	gaps := 0
	c, err := feedclient.New(feedclient.Config{RecoveryAddr: live.feed.RecoveryAddr().String(), FeedBAddr: lineB.String(),
		GapTimeout: 5 * time.Second,
		Callbacks: feedclient.Callbacks{OnRecovery: func(r feedclient.Recovery) {
			if r.Cause != feedclient.CauseJoin {
				mu.Lock()
				gaps++
				mu.Unlock()
			}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	runClient(t, func(ctx context.Context) error { return c.RunConn(ctx, connA) })
	waitConverged(t, live, c) // joined by a snapshot of the first 50 commands
	standby.SendStandbyB()
	for range 8 {
		live.run(simLive, 100)
		replayCommands(t, standby, simStandby, 100, true)
		time.Sleep(2 * time.Millisecond) // let the client read: its socket buffers are finite
	}
	stats := waitConverged(t, live, c)
	ls, ss := live.feed.Stats(), standby.Stats()
	if ls.NextSeq != ss.NextSeq {
		t.Fatalf("the live feed is at seq %d, the standby at %d: they number the messages apart", ls.NextSeq, ss.NextSeq)
	}
	if ls.LineBPacketsSent != 0 || ls.PacketsSent == 0 {
		t.Fatalf("the live feed sent %d packets on line A and %d on line B: want line A alone", ls.PacketsSent, ls.LineBPacketsSent)
	}
	if ss.PacketsSent != 0 || ss.LineBPacketsSent == 0 || ss.LineBStale != 0 {
		t.Fatalf("the standby feed sent %d packets on line A and %d on line B (%d kept off as stale): want line B alone, all of it", ss.PacketsSent, ss.LineBPacketsSent, ss.LineBStale)
	}
	mu.Lock()
	defer mu.Unlock()
	if relayA.dropped.Load() == 0 || gaps != 0 || stats.Lines[1].Datagrams == 0 {
		t.Fatalf("line A dropped %d datagrams, %d gaps were recovered over TCP, line B brought %d datagrams: want drops, no recovery, B's datagrams (%+v)",
			relayA.dropped.Load(), gaps, stats.Lines[1].Datagrams, stats)
	}
	t.Logf("line A dropped %d; lines %+v; standby's packets %d, live's %d", relayA.dropped.Load(), stats.Lines, ss.LineBPacketsSent, ls.PacketsSent)
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
		cfg.BLineFromStandby = false // a standby of a cluster whose leader sends both lines
		f, err := NewFeed(cfg)
		if err != nil {
			t.Fatal(err)
		}
		replayCommands(t, f, newVenueSim(t, 5), commands, false)
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
	cfg.Standby, cfg.BLineFromStandby = false, false
	f, err := NewFeed(cfg)
	if err != nil {
		t.Fatal(err)
	}
	replayCommands(t, f, newVenueSim(t, 5), 30, false)
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

// windowMessages is every message a feed's window holds, by sequence
// number, and the number of its packets.
func windowMessages(t *testing.T, w *window) (map[uint64][]byte, int) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[uint64][]byte{}
	var rd packet.Reader
	for p := w.first; p < w.next; p++ {
		i := p % uint64(len(w.slots))
		s := w.slots[i]
		start := int(i) * packet.DatagramBytesMax
		if err := rd.Reset(w.arena[start : start+s.n]); err != nil {
			t.Fatal(err)
		}
		seq := rd.Seq
		for msg, ok := rd.Next(); ok; msg, ok = rd.Next() {
			out[seq] = bytes.Clone(msg)
			seq++
		}
	}
	return out, int(w.next - w.first)
}

// TestStandbyFeedGivesTheLiveFeedsMessages: a standby feed that replays
// random commands event by event and ends them in groups of one to three
// (EndStandbyCommand, as a follower at each batch of committed commands)
// numbers exactly the messages of a live feed that applied the same
// commands in batches of one to four (ApplyBatch, as the leader's pipeline
// hands them over): the same bytes under each sequence number, in packets
// bounded otherwise.
func TestStandbyFeedGivesTheLiveFeedsMessages(t *testing.T) {
	const commands = 3000
	cfg := standbyConfig(udpSink(t).LocalAddr().String(), udpSink(t).LocalAddr().String())
	cfg.Recovery.WindowPackets = 2 * commands // every packet of either kept
	standby, err := NewFeed(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close()
	standby.SendStandbyB()
	cfg.Standby, cfg.Recovery.Addr = false, "127.0.0.1:0"
	live, err := NewFeed(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	simLive, simStandby := newVenueSim(t, 77), newVenueSim(t, 77)
	for done := 0; done < commands; {
		n := min(1+rng.IntN(4), commands-done)
		var batch [][]byte
		for range n {
			for _, ev := range simLive.next().All() {
				batch = append(batch, bytes.Clone(ev))
			}
		}
		if err := live.ApplyBatch(batch); err != nil {
			t.Fatal(err)
		}
		done += n
	}
	for done := 0; done < commands; {
		n := min(1+rng.IntN(3), commands-done)
		replayCommands(t, standby, simStandby, n-1, false)
		replayCommands(t, standby, simStandby, 1, true)
		done += n
	}
	ls, ss := live.Stats(), standby.Stats()
	if ls.NextSeq != ss.NextSeq || ls.NextSeq < commands {
		t.Fatalf("the live feed numbered up to %d, the standby up to %d", ls.NextSeq, ss.NextSeq)
	}
	lm, lp := windowMessages(t, live.win)
	sm, sp := windowMessages(t, standby.win)
	if lp == sp {
		t.Fatalf("both feeds made %d packets: the test does not bound them otherwise", lp)
	}
	for seq := uint64(1); seq < ls.NextSeq; seq++ {
		if !bytes.Equal(lm[seq], sm[seq]) {
			t.Fatalf("message %d: live feed %x, standby feed %x", seq, lm[seq], sm[seq])
		}
	}
	t.Logf("%d commands, %d messages: %d packets on the live feed, %d on the standby", commands, ls.NextSeq-1, lp, sp)
}

// TestStandbyFeedKeepsStalePacketsOffTheBLine: a standby feed sending the B
// line sends no packet whose first event is older than StandbyBLineAgeMax
// by its clock (a follower catching up applies commands minutes old at full
// speed: its receivers have them from the A line, and a flood of them would
// crowd the live datagrams); it keeps them in its window, counted, and
// sends the fresh ones that follow.
func TestStandbyFeedKeepsStalePacketsOffTheBLine(t *testing.T) {
	sinkB := udpSink(t)
	defer sinkB.Close()
	var nowNs atomic.Int64
	cfg := standbyConfig(udpSink(t).LocalAddr().String(), sinkB.LocalAddr().String())
	cfg.Clock = func() time.Time { return time.Unix(0, nowNs.Load()) }
	f, err := NewFeed(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.SendStandbyB()
	sim := newVenueSim(t, 9)
	nowNs.Store(sim.nowNs + int64(StandbyBLineAgeMax) + int64(time.Minute)) // a minute behind, and more
	replayCommands(t, f, sim, 40, true)
	st := f.Stats()
	if st.LineBPacketsSent != 0 || st.LineBStale == 0 {
		t.Fatalf("commands more than %s old: %d packets sent on the B line, %d kept off", StandbyBLineAgeMax, st.LineBPacketsSent, st.LineBStale)
	}
	_ = sinkB.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := sinkB.Read(make([]byte, 2048)); err == nil {
		t.Fatalf("the B line got a datagram of %d bytes of stale commands", n)
	}
	before := st.NextSeq
	nowNs.Store(sim.nowNs) // caught up: the next commands are fresh
	replayCommands(t, f, sim, 40, true)
	st = f.Stats()
	if st.LineBPacketsSent == 0 || st.NextSeq <= before {
		t.Fatalf("fresh commands: %d packets sent on the B line, next seq %d after %d", st.LineBPacketsSent, st.NextSeq, before)
	}
	_ = sinkB.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := sinkB.Read(make([]byte, 2048)); err != nil {
		t.Fatalf("the B line got nothing of the fresh commands: %v", err)
	}
	if oldest, _ := f.win.bounds(); oldest != 1 {
		t.Fatalf("the window starts at seq %d: the stale packets must be kept for recovery", oldest)
	}
}
