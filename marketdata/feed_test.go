package marketdata

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/feedclient"
	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// feedFixture is a Feed on loopback ports chosen by the OS, serving until
// the test ends.
type feedFixture struct {
	t    testing.TB
	feed *Feed
	stop context.CancelFunc
	done chan error
}

func newFeedFixture(t testing.TB, feedAddr string, mutate func(*FeedConfig)) *feedFixture {
	t.Helper()
	cfg := FeedConfig{
		Tracker:           TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024},
		FeedAddr:          feedAddr,
		HeartbeatInterval: 20 * time.Millisecond,
		Recovery:          RecoveryConfig{Addr: "127.0.0.1:0", RequestsPerSecond: 1000, RequestBurst: 1000},
	}
	if mutate != nil {
		mutate(&cfg)
	}
	f, err := NewFeed(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	fx := &feedFixture{t: t, feed: f, stop: cancel, done: make(chan error, 1)}
	go func() { fx.done <- f.Serve(ctx) }()
	t.Cleanup(fx.close)
	return fx
}

func (fx *feedFixture) close() {
	if fx.stop == nil {
		return
	}
	fx.stop()
	fx.stop = nil
	if err := <-fx.done; err != nil {
		fx.t.Errorf("Serve: %v", err)
	}
	_ = fx.feed.Close()
}

// run applies n random commands, one batch per command.
func (fx *feedFixture) run(sim *venueSim, n int) {
	fx.t.Helper()
	var batch [][]byte
	for i := 0; i < n; i++ {
		batch = batch[:0]
		for _, ev := range sim.next().All() {
			batch = append(batch, ev)
		}
		if err := fx.feed.ApplyBatch(batch); err != nil {
			fx.t.Fatal(err)
		}
	}
}

// newFeedScenario is newScenario with its events going to a running feed
// that publishes to conn; mutate, when not nil, adjusts the feed's
// configuration.
func newFeedScenario(t *testing.T, conn *net.UDPConn, mutate func(*FeedConfig)) *scenario {
	t.Helper()
	s := newScenario(t)
	s.feed = newFeedFixture(t, conn.LocalAddr().String(), mutate).feed
	return s
}

// udpSink is a UDP socket on a free loopback port.
func udpSink(t *testing.T) *net.UDPConn {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadBuffer(8 << 20)
	return conn
}

// udpSinkB is a UDP socket that nobody reads, closed after the benchmark.
func udpSinkB(b *testing.B) string {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return conn.LocalAddr().String()
}

// startClient runs a feed client on conn until the test ends.
func startClient(t *testing.T, conn *net.UDPConn, recoveryAddr string, cb feedclient.Callbacks) *feedclient.Client {
	t.Helper()
	c, err := feedclient.New(feedclient.Config{RecoveryAddr: recoveryAddr, Callbacks: cb, GapTimeout: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runClient(t, func(ctx context.Context) error { return c.RunConn(ctx, conn) })
	return c
}

// runClient runs a feed client (run is its Run, or a RunConn) until the
// test ends, and fails the test when it stops for any other reason than
// the end.
func runClient(t *testing.T, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("client Run: %v", err)
		}
	})
}

// waitSnapshot waits (bounded) until the client has applied a snapshot.
func waitSnapshot(t *testing.T, c *feedclient.Client) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var snaps uint64
		// The client answers between packets and recoveries, one of which
		// may take its RecoveryTimeout: the wait is the whole deadline's.
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := c.Inspect(ctx, func(c *feedclient.Client) { snaps = c.Stats().Snapshots })
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if snaps > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the client applied no snapshot in 20 s")
		}
	}
}

// waitConverged waits (bounded) until the client has every message the feed
// sent, then compares the books. The feed is idle meanwhile.
func waitConverged(t *testing.T, fx *feedFixture, c *feedclient.Client) feedclient.Stats {
	t.Helper()
	var next uint64
	fx.feed.View(func(_ *Tracker, n uint64) { next = n })
	deadline := time.Now().Add(20 * time.Second)
	// The client answers Inspect between packets and recoveries, one of
	// which may take its RecoveryTimeout: each wait is the whole deadline's.
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var stats feedclient.Stats
	for {
		var got uint64
		err := c.Inspect(ctx, func(c *feedclient.Client) { got, stats = c.NextSeq(), c.Stats() })
		if err != nil {
			t.Fatalf("client at seq %d, feed at %d: %v (%+v)", got, next, err, stats)
		}
		if got == next {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("client at seq %d, feed at %d: %+v", got, next, stats)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The feed's lock is taken on the client's goroutine, not held while
	// waiting for it: a client asking for a snapshot then (a heartbeat
	// the relay held back announces a lower seq, and it resyncs) waits on
	// that lock, and Inspect waited on the client until its timeout.
	if err := c.Inspect(ctx, func(c *feedclient.Client) {
		fx.feed.View(func(tr *Tracker, _ uint64) { compareClient(t, c, tr, -1) })
	}); err != nil {
		t.Fatal(err)
	}
	return stats
}

// TestFeedEndToEnd: a client joins an active feed over real UDP and TCP,
// follows it, and ends with the tracker's books.
func TestFeedEndToEnd(t *testing.T) {
	conn := udpSink(t)
	fx := newFeedFixture(t, conn.LocalAddr().String(), nil)
	sim := newVenueSim(t, 11)
	// Events stamped with the wall clock, as a venue's are, and so after
	// a heartbeat the idle feed sent at its start: read after the joining
	// snapshot, that heartbeat announces less than the snapshot's next
	// sequence, and only its time says it is out of date.
	sim.nowNs = time.Now().UnixNano()
	fx.run(sim, 300) // the client joins late: the snapshot carries this part
	var trades int
	var mu sync.Mutex
	c := startClient(t, conn, fx.feed.RecoveryAddr().String(), feedclient.Callbacks{
		OnTrade: func(*feedclient.Book, feedclient.Trade) { mu.Lock(); trades++; mu.Unlock() },
	})
	// The rest must reach it over UDP: on a slow machine a snapshot taken
	// after the whole run would carry everything and leave the live path
	// untested.
	waitSnapshot(t, c)
	fx.run(sim, 1500)
	stats := waitConverged(t, fx, c)
	mu.Lock()
	defer mu.Unlock()
	if trades == 0 || stats.Snapshots == 0 || stats.Messages == 0 {
		t.Fatalf("trades %d, stats %+v", trades, stats)
	}
	fs := fx.feed.Stats()
	if fs.PacketsSent == 0 || fs.Recovery.Snapshots == 0 {
		t.Fatalf("feed stats %+v", fs)
	}
}

// TestHeartbeatBeforeTheJoiningSnapshot: a heartbeat the feed sent while
// idle, before the events a client's joining snapshot carries, and read by
// the client after that snapshot announces a next sequence below the
// snapshot's. Stamped before the snapshot's last event, it is out of date,
// not a feed numbering anew: the client takes one snapshot, not two.
func TestHeartbeatBeforeTheJoiningSnapshot(t *testing.T) {
	feedSide, out, clientConn := udpSink(t), udpSink(t), udpSink(t)
	t.Cleanup(func() { feedSide.Close(); out.Close() })
	fx := newFeedFixture(t, feedSide.LocalAddr().String(), nil)
	// Idle at its start, the feed sends a heartbeat first; it is held
	// here until the client has joined.
	held := make([]byte, packet.DatagramBytesMax)
	_ = feedSide.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := feedSide.Read(held)
	if err != nil {
		t.Fatal(err)
	}
	held = held[:n]
	var r packet.Reader
	if err := r.Reset(held); err != nil || r.Seq != 0 {
		t.Fatalf("the idle feed's first datagram: seq %d, %v; want a heartbeat", r.Seq, err)
	}
	sim := newVenueSim(t, 11)
	// Events stamped with the wall clock, as a venue's are: after the
	// heartbeat.
	sim.nowNs = time.Now().UnixNano()
	fx.run(sim, 300) // not forwarded: the snapshot carries them
	beats := make(chan uint64, 1)
	c := startClient(t, clientConn, fx.feed.RecoveryAddr().String(), feedclient.Callbacks{
		OnHeartbeat: func(next uint64, _ bool) {
			select {
			case beats <- next:
			default:
			}
		},
	})
	waitSnapshot(t, c)
	if _, err := out.WriteToUDP(held, clientConn.LocalAddr().(*net.UDPAddr)); err != nil {
		t.Fatal(err)
	}
	select {
	case next := <-beats:
		if next != 1 {
			t.Fatalf("the held heartbeat announces %d, want 1", next)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the client read no heartbeat in 20 s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Inspect(ctx, func(c *feedclient.Client) {
		if s := c.Stats(); s.Snapshots != 1 || s.StaleHeartbeats != 1 || !c.InSync() {
			t.Errorf("after a heartbeat sent before the joining snapshot: stats %+v, in sync %v", s, c.InSync())
		}
		fx.feed.View(func(tr *Tracker, _ uint64) { compareClient(t, c, tr, -1) })
	}); err != nil {
		t.Fatal(err)
	}
}

// recoveryClient speaks to the recovery service with raw frames.
type recoveryClient struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	buf  []byte
}

func dialRecovery(t *testing.T, addr string) *recoveryClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	return &recoveryClient{t: t, conn: conn, r: bufio.NewReader(conn), w: bufio.NewWriter(conn), buf: make([]byte, packet.FrameBytesMax)}
}

func (rc *recoveryClient) send(msgLen int, encode func(buf []byte, off int)) {
	rc.t.Helper()
	cb := &frameSink{bytesMax: 1 << 20}
	b, _ := packet.NewBuilder(packet.BuilderConfig{Channel: ChannelDefault, Sink: cb})
	buf, off, err := b.Reserve(msgLen, 0)
	if err != nil {
		rc.t.Fatal(err)
	}
	encode(buf, off)
	_ = b.Flush()
	if _, err := rc.w.Write(cb.buf); err != nil {
		rc.t.Fatal(err)
	}
	if err := rc.w.Flush(); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *recoveryClient) retransmit(id, from uint64, count uint32) {
	rc.send(mdsbe.RetransmitRequestEncodedLength, func(buf []byte, off int) {
		var m mdsbe.RetransmitRequest
		_ = m.WrapEncode(buf, off)
		m.SetRequestID(id)
		m.SetFromSeq(from)
		m.SetCount(count)
	})
}

func (rc *recoveryClient) snapshot(id uint64, instrumentID uint32) {
	rc.send(mdsbe.SnapshotRequestEncodedLength, func(buf []byte, off int) {
		var m mdsbe.SnapshotRequest
		_ = m.WrapEncode(buf, off)
		m.SetRequestID(id)
		m.SetInstrumentID(instrumentID)
	})
}

// readUntil reads packets until one holds a message of template tid and
// returns the sequenced packets before it and that message.
func (rc *recoveryClient) readUntil(tid uint16) (sequenced [][]byte, msg []byte) {
	rc.t.Helper()
	for {
		pkt, err := packet.ReadFrame(rc.r, rc.buf)
		if err != nil {
			rc.t.Fatalf("waiting for template %d: %v", tid, err)
		}
		var r packet.Reader
		if err := r.Reset(pkt); err != nil {
			rc.t.Fatal(err)
		}
		if r.Seq != 0 {
			sequenced = append(sequenced, append([]byte(nil), pkt...))
			continue
		}
		for m, ok := r.Next(); ok; m, ok = r.Next() {
			if got, _ := mdsbe.TemplateIDOf(m, 0); got == tid {
				return sequenced, append([]byte(nil), m...)
			}
		}
	}
}

func (rc *recoveryClient) expectReject(want mdsbe.RetransmitRejectReason) mdsbe.RetransmitReject {
	rc.t.Helper()
	_, msg := rc.readUntil(mdsbe.RetransmitRejectTemplateID)
	var m mdsbe.RetransmitReject
	if err := m.WrapDecode(msg, 0); err != nil || m.Reason() != want {
		rc.t.Fatalf("reject reason %v (%v), want %v", m.Reason(), err, want)
	}
	return m
}

// TestRecoveryService covers each answer of the recovery service.
func TestRecoveryService(t *testing.T) {
	conn := udpSink(t)
	defer conn.Close()
	var sent [][]byte
	var mu sync.Mutex
	go func() { // keep the datagrams as sent, to compare with retransmissions
		buf := make([]byte, 2048)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			mu.Lock()
			if binary.LittleEndian.Uint64(buf[8:]) != 0 {
				sent = append(sent, append([]byte(nil), buf[:n]...))
			}
			mu.Unlock()
		}
	}()
	now := time.Unix(1_700_000_000, 0)
	var clockMu sync.Mutex
	fx := newFeedFixture(t, conn.LocalAddr().String(), func(c *FeedConfig) {
		c.Recovery.WindowPackets = 16
		c.Recovery.RetransmitCountMax = 500
		c.Recovery.RequestsPerSecond = 1
		c.Recovery.RequestBurst = 6
		c.HeartbeatInterval = time.Hour
		c.Clock = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	})
	sim := newVenueSim(t, 5)
	fx.run(sim, 400)
	stats := fx.feed.Stats()
	if stats.PacketsSent <= 16 {
		t.Fatalf("only %d packets: the window never wrapped", stats.PacketsSent)
	}
	oldest, next := fx.feed.win.bounds()
	rc := dialRecovery(t, fx.feed.RecoveryAddr().String())

	// A range inside the window comes back as the very packets sent.
	rc.retransmit(1, oldest+1, uint32(next-oldest-1))
	got, end := rc.readUntil(mdsbe.RetransmitEndTemplateID)
	var e mdsbe.RetransmitEnd
	if err := e.WrapDecode(end, 0); err != nil || e.RequestID() != 1 {
		t.Fatalf("RetransmitEnd %v id %d", err, e.RequestID())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(sent)
		mu.Unlock()
		if n == int(stats.PacketsSent) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	tail := sent[len(sent)-len(got):]
	for i := range got {
		if !bytes.Equal(got[i], tail[i]) {
			t.Fatalf("retransmitted packet %d differs from the one sent", i)
		}
	}
	mu.Unlock()

	rc.retransmit(2, oldest-1, 1)
	if m := rc.expectReject(mdsbe.RetransmitRejectReasonTooOld); m.OldestSeq() != oldest || m.NextSeq() != next {
		t.Fatalf("TooOld reports oldest %d next %d, want %d %d", m.OldestSeq(), m.NextSeq(), oldest, next)
	}
	rc.retransmit(3, oldest, 501)
	rc.expectReject(mdsbe.RetransmitRejectReasonTooMany)
	rc.retransmit(4, next, 1)
	rc.expectReject(mdsbe.RetransmitRejectReasonInvalidRange)
	rc.snapshot(5, 99)
	_, msg := rc.readUntil(mdsbe.SnapshotRejectTemplateID)
	var sr mdsbe.SnapshotReject
	if err := sr.WrapDecode(msg, 0); err != nil || sr.Reason() != mdsbe.SnapshotRejectReasonUnknownInstrument {
		t.Fatalf("snapshot of an unknown instrument: %v %v", sr.Reason(), err)
	}
	rc.snapshot(6, 2) // the sixth request: the burst is spent
	rc.snapshot(7, 2)
	_, msg = rc.readUntil(mdsbe.SnapshotEndTemplateID)
	var se mdsbe.SnapshotEnd
	if err := se.WrapDecode(msg, 0); err != nil || se.RequestID() != 6 || se.LastSeq() != next-1 {
		t.Fatalf("SnapshotEnd id %d lastSeq %d (%v), want 6 and %d", se.RequestID(), se.LastSeq(), err, next-1)
	}
	_, msg = rc.readUntil(mdsbe.SnapshotRejectTemplateID)
	if err := sr.WrapDecode(msg, 0); err != nil || sr.Reason() != mdsbe.SnapshotRejectReasonRateLimited || sr.RequestID() != 7 {
		t.Fatalf("rate limit: %v %v", sr.Reason(), err)
	}
	rc.retransmit(8, oldest, 1)
	rc.expectReject(mdsbe.RetransmitRejectReasonRateLimited)
	clockMu.Lock()
	now = now.Add(time.Second) // one more token
	clockMu.Unlock()
	rc.retransmit(9, next-1, 1)
	if _, end := rc.readUntil(mdsbe.RetransmitEndTemplateID); end == nil {
		t.Fatal("no RetransmitEnd after the refill")
	}

	// A malformed request closes the connection.
	if _, err := rc.w.Write([]byte{3, 0, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	_ = rc.w.Flush()
	if _, err := packet.ReadFrame(rc.r, rc.buf); err == nil {
		t.Fatal("the connection survived a malformed request")
	}
	rs := fx.feed.Stats().Recovery
	if rs.Retransmits != 2 || rs.RetransmitsRejected != 4 || rs.Snapshots != 1 || rs.SnapshotsRejected != 2 || rs.ProtocolErrors != 1 {
		t.Fatalf("recovery stats %+v", rs)
	}
}

// TestRecoveryConnectionBound: at ConnsMax, a connection that waits for its
// next request is closed to admit a new one (idle clients cannot lock the
// service up), which is served.
func TestRecoveryConnectionBound(t *testing.T) {
	conn := udpSink(t)
	defer conn.Close()
	fx := newFeedFixture(t, conn.LocalAddr().String(), func(c *FeedConfig) { c.Recovery.ConnsMax = 1 })
	first := dialRecovery(t, fx.feed.RecoveryAddr().String())
	first.snapshot(1, 0)
	first.readUntil(mdsbe.SnapshotEndTemplateID) // served, and now it waits
	// Its handler marks it waiting once it loops back to read the next
	// request, which may come after the client has the reply.
	for deadline := time.Now().Add(10 * time.Second); fx.feed.recovery.conns.WaitingConns() != 1; {
		if time.Now().After(deadline) {
			t.Fatal("the served connection was never marked waiting")
		}
		time.Sleep(time.Millisecond)
	}
	second := dialRecovery(t, fx.feed.RecoveryAddr().String())
	if _, err := packet.ReadFrame(first.r, first.buf); err == nil {
		t.Fatal("the waiting connection was not closed for a new one at ConnsMax")
	}
	second.snapshot(2, 0)
	second.readUntil(mdsbe.SnapshotEndTemplateID)
	if st := fx.feed.Stats().Recovery; st.ConnsEvicted != 1 || st.ConnsRefused != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// failingAccepts is a listener whose first accepts fail as a process out
// of file descriptors sees them fail.
type failingAccepts struct {
	net.Listener
	fails atomic.Int32
}

func (l *failingAccepts) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestRecoveryGoesOnAfterAcceptFails: accepts that fail (out of file
// descriptors) are counted and tried again after a pause, and the service
// answers once they succeed. Serve returned the first such error: the
// feed's heartbeats went on and no client could recover for the rest of
// the run.
func TestRecoveryGoesOnAfterAcceptFails(t *testing.T) {
	conn := udpSink(t)
	defer conn.Close()
	f, err := NewFeed(FeedConfig{
		Tracker:           TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024},
		FeedAddr:          conn.LocalAddr().String(),
		HeartbeatInterval: 20 * time.Millisecond,
		Recovery:          RecoveryConfig{Addr: "127.0.0.1:0", RequestsPerSecond: 1000, RequestBurst: 1000},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	failing := &failingAccepts{Listener: f.recovery.ln}
	failing.fails.Store(3)
	f.recovery.ln = failing
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Serve(ctx) }()
	c := dialRecovery(t, f.RecoveryAddr().String())
	c.snapshot(1, 0)
	c.readUntil(mdsbe.SnapshotEndTemplateID)
	if n := f.Stats().Recovery.AcceptErrors; n != 3 {
		t.Fatalf("%d accept errors counted, want 3", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestHeartbeatWhenIdle: an idle feed sends heartbeats with the next sequence.
func TestHeartbeatWhenIdle(t *testing.T) {
	conn := udpSink(t)
	defer conn.Close()
	fx := newFeedFixture(t, conn.LocalAddr().String(), func(c *FeedConfig) { c.HeartbeatInterval = 5 * time.Millisecond })
	fx.run(newVenueSim(t, 3), 50)
	var next uint64
	fx.feed.View(func(_ *Tracker, n uint64) { next = n })
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 2048)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		var r packet.Reader
		if err := r.Reset(buf[:n]); err != nil {
			t.Fatal(err)
		}
		if r.Seq != 0 {
			continue
		}
		msg, _ := r.Next()
		var hb mdsbe.Heartbeat
		if err := hb.WrapDecode(msg, 0); err != nil || hb.NextSeq() > next {
			t.Fatalf("heartbeat nextSeq %d (%v), want %d", hb.NextSeq(), err, next)
		}
		if hb.NextSeq() == next { // earlier ones may predate the commands
			return
		}
	}
}

// TestStandbyRefusesRecovery: a standby feed (a cluster's follower) closes
// every recovery connection at once, so a client learns to look elsewhere
// instead of waiting out its timeout; once stopped, Serve takes the
// listener and a connection stays open for its requests.
func TestStandbyRefusesRecovery(t *testing.T) {
	sink := udpSink(t)
	defer sink.Close()
	f, err := NewFeed(FeedConfig{Tracker: TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024},
		FeedAddr: sink.LocalAddr().String(), HeartbeatInterval: 20 * time.Millisecond, Recovery: RecoveryConfig{Addr: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	readResult := func() error {
		conn, err := net.Dial("tcp", f.RecoveryAddr().String())
		if err != nil {
			return err
		}
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		return err
	}
	stop := f.RefuseRecovery()
	if err := readResult(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("a standby's recovery connection: %v, want closed at once", err)
	}
	stop()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.Serve(ctx) }()
	defer func() { cancel(); <-served }()
	if err := readResult(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a serving feed's recovery connection: %v, want open, waiting for a request", err)
	}
	if got := f.Stats().Recovery.StandbyRefused; got != 1 {
		t.Fatalf("StandbyRefused %d, want 1", got)
	}
}

// TestClientTriesTheNextRecoveryAddress: a client given a cluster's
// recovery addresses (a follower's, which closes each connection at once,
// and then the leader's) joins by the leader's snapshot and converges. Its
// first join takes the leader's snapshot, reporting the follower passed
// over as not serving: it failed, on the reset or EOF it met, and the next
// join went to the leader's address a pause later.
func TestClientTriesTheNextRecoveryAddress(t *testing.T) {
	conn := udpSink(t)
	standby, err := NewFeed(FeedConfig{Tracker: TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024},
		FeedAddr: udpSink(t).LocalAddr().String(), HeartbeatInterval: 20 * time.Millisecond, Recovery: RecoveryConfig{Addr: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close()
	stop := standby.RefuseRecovery()
	defer stop()
	fx := newFeedFixture(t, conn.LocalAddr().String(), nil)
	sim := newVenueSim(t, 12)
	fx.run(sim, 300)
	joins := make(chan feedclient.Recovery, 16)
	c := startClient(t, conn, standby.RecoveryAddr().String()+","+fx.feed.RecoveryAddr().String(), feedclient.Callbacks{
		OnRecovery: func(r feedclient.Recovery) {
			if r.Cause == feedclient.CauseJoin {
				select {
				case joins <- r:
				default:
				}
			}
		},
	})
	waitSnapshot(t, c)
	fx.run(sim, 300)
	stats := waitConverged(t, fx, c)
	if standby.Stats().Recovery.StandbyRefused == 0 {
		t.Fatal("the client did not try the first address")
	}
	first := <-joins
	var notServing *feedclient.NotServingError
	if first.Outcome != feedclient.Snapshotted || stats.Unrecovered != 0 || len(first.PassedOver) != 1 ||
		!errors.As(first.PassedOver[0], &notServing) || notServing.Addr != standby.RecoveryAddr().String() {
		t.Fatalf("the first join: %+v (%d unrecovered), want a snapshot passing over the follower's %s as not serving",
			first, stats.Unrecovered, standby.RecoveryAddr())
	}
	if msg := notServing.Error(); !strings.Contains(msg, "is not serving market data") {
		t.Fatalf("a follower passed over reads %q", msg)
	}
}

// TestClientFollowsAFeedThatNumbersAnew: a venue started on another data
// directory (an empty one, or a copy from before) numbers its feed from
// there, below what a running client has applied. Its packets read as
// duplicates; the heartbeat that announces its lower next sequence makes
// the client take a snapshot, and it follows the new feed (it kept the old
// venue's books for ever).
func TestClientFollowsAFeedThatNumbersAnew(t *testing.T) {
	conn := udpSink(t)
	old := newFeedFixture(t, conn.LocalAddr().String(), nil)
	recoveryAddr := old.feed.RecoveryAddr().String()
	sim := newVenueSim(t, 13)
	old.run(sim, 300)
	c := startClient(t, conn, recoveryAddr, feedclient.Callbacks{})
	waitSnapshot(t, c)
	old.run(sim, 300)
	waitConverged(t, old, c)
	old.close()

	// The new venue's recovery service at the address the client knows, as
	// a venue restarted with the same configuration has.
	fresh := newFeedFixture(t, conn.LocalAddr().String(), func(cfg *FeedConfig) { cfg.Recovery.Addr = recoveryAddr })
	fresh.run(newVenueSim(t, 14), 50)
	var oldNext, freshNext uint64
	old.feed.View(func(_ *Tracker, n uint64) { oldNext = n })
	fresh.feed.View(func(_ *Tracker, n uint64) { freshNext = n })
	if freshNext >= oldNext {
		t.Fatalf("the new feed is at seq %d, the old one at %d: the test needs it below", freshNext, oldNext)
	}
	// The connection the client kept is the old venue's: its snapshot
	// request is sent again on a new one, not reported unrecovered.
	if stats := waitConverged(t, fresh, c); stats.Unrecovered != 0 {
		t.Fatalf("the client reported %d unrecovered: %+v", stats.Unrecovered, stats)
	}
}
