package marketdata

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Defaults of FeedConfig.
const (
	FeedAddrDefault          = "127.0.0.1:9500"
	RecoveryAddrDefault      = "127.0.0.1:9501"
	HeartbeatIntervalDefault = time.Second
	ChannelDefault           = 1
)

// FeedConfig configures a Feed. Zero values take the defaults.
type FeedConfig struct {
	Tracker TrackerConfig

	Channel  uint16 // feed channel id written in every packet
	FeedAddr string // UDP destination: unicast (loopback) or a multicast group
	// FeedBAddr, when set, is the B line: every datagram (packets and
	// heartbeats) is sent to this second destination too, right after the
	// A line's, so that a receiver reading both (feedclient.Config.FeedBAddr)
	// recovers a datagram one line lost from the other ("A and B lines" in
	// the package documentation). Same rules as FeedAddr.
	FeedBAddr string
	// BLineFromStandby gives the B line to a cluster follower's standby
	// feed: a live feed sends its packets and heartbeats on the A line
	// alone, and a standby feed, once SendStandbyB is called, sends each
	// packet of the commands it replays on the B line ("A and B lines").
	BLineFromStandby bool
	// Standby starts the feed in replay mode (a cluster follower's standby
	// feed): nothing goes out, not even at Close, until EndReplay.
	Standby bool
	// AllowNonLoopback permits a unicast destination off this host.
	AllowNonLoopback bool
	// MulticastInterface is the local IP to send multicast from; "" lets
	// the routing table choose.
	MulticastInterface string
	// MulticastTTL is the IP TTL of multicast datagrams; 0 means 1 (this subnet).
	MulticastTTL    int
	SendBufferBytes int // SO_SNDBUF of the feed socket; 0 keeps the system's

	HeartbeatInterval time.Duration // a Heartbeat is sent after this long without a packet

	Recovery RecoveryConfig

	// Listener, if set, hears of every instrument that changed, at the end of
	// each batch, on the feed's goroutine (see UpdateListener).
	Listener UpdateListener

	// CaptureState, if set, is handed the feed's state (see state.go) at
	// each point set by SnapshotAt, on the feed's goroutine: it copies what
	// write writes (journal.Snapshotter.Capture does) and returns.
	CaptureState func(seq uint64, write func(io.Writer) error) error

	// Clock gives the wall-clock time of heartbeats and rate limits;
	// nil means time.Now. Sequenced messages never use it.
	Clock func() time.Time

	// OrderToFeed, when set, records for each command a FIX message caused
	// whose events change a book or a status the nanoseconds from the
	// command's timestamp (the FIX arrival stamp) to the flush of the
	// packet carrying its messages (recordLatency).
	OrderToFeed LatencyRecorder
}

// LatencyRecorder takes one latency in nanoseconds without allocating
// (latency.Recorder).
type LatencyRecorder interface {
	Record(ns int64)
}

func (c *FeedConfig) fill() error {
	c.Channel = cmp.Or(c.Channel, ChannelDefault)
	c.FeedAddr = cmp.Or(c.FeedAddr, FeedAddrDefault)
	c.HeartbeatInterval = cmp.Or(c.HeartbeatInterval, HeartbeatIntervalDefault)
	if c.HeartbeatInterval < time.Millisecond {
		return fmt.Errorf("marketdata: heartbeat interval %v below 1ms", c.HeartbeatInterval)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	c.MulticastTTL = cmp.Or(c.MulticastTTL, 1)
	return c.Recovery.fill()
}

// Feed turns venue events into the market data feed: a Tracker writes
// messages into a sequenced packet.Builder whose packets go to the
// retransmission window and out as UDP datagrams; a recovery service answers
// retransmission and snapshot requests over TCP.
//
// Concurrency: the feed goroutine (Run, or a caller of ApplyBatch) holds mu
// while it applies a batch of events and flushes the packet, so a snapshot,
// which takes mu too, always sees a book that matches exactly the messages
// sent so far. mu is taken once per batch, not per event.
type Feed struct {
	cfg      FeedConfig
	mu       sync.Mutex
	tracker  *Tracker
	builder  *packet.Builder
	win      *window
	pub      *publisher
	recovery *recoveryServer
	closed   bool
	lastNs   int64 // event time of the last event applied, for EndOfSession

	// snapPoint is the command seq after which the state is to be captured
	// (0: none); see SnapshotAt.
	snapPoint atomic.Uint64
}

// NewFeed allocates the tracker and the window and opens the UDP socket and
// the recovery listener, so their addresses are known before Serve.
func NewFeed(cfg FeedConfig) (*Feed, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	f := &Feed{cfg: cfg, win: newWindow(cfg.Recovery.WindowPackets, 1)}
	pub, err := newPublisher(&f.cfg, f.win)
	if err != nil {
		return nil, err
	}
	f.pub = pub
	pub.quiet, pub.bFromStandby = cfg.Standby, cfg.BLineFromStandby && pub.dstB != nil
	if err := f.setMulticastOptions(); err != nil {
		pub.conn.Close()
		return nil, err
	}
	f.builder, err = packet.NewBuilder(packet.BuilderConfig{Channel: cfg.Channel, Sequenced: true, Sink: pub})
	if err != nil {
		pub.conn.Close()
		return nil, err
	}
	f.tracker, err = NewTracker(cfg.Tracker, f.builder)
	if err != nil {
		pub.conn.Close()
		return nil, err
	}
	f.recovery, err = newRecoveryServer(f)
	if err != nil {
		pub.conn.Close()
		return nil, err
	}
	return f, nil
}

func (f *Feed) setMulticastOptions() error {
	if !f.pub.dst.IP.IsMulticast() && (f.pub.dstB == nil || !f.pub.dstB.IP.IsMulticast()) {
		return nil
	}
	raw, err := f.pub.conn.SyscallConn()
	if err != nil {
		return err
	}
	var ifAddr [4]byte
	if f.cfg.MulticastInterface != "" {
		ip := net.ParseIP(f.cfg.MulticastInterface).To4()
		if ip == nil {
			return fmt.Errorf("marketdata: multicast interface %q is not an IPv4 address", f.cfg.MulticastInterface)
		}
		copy(ifAddr[:], ip)
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_MULTICAST_TTL, f.cfg.MulticastTTL)
		if serr == nil && f.cfg.MulticastInterface != "" {
			serr = syscall.SetsockoptInet4Addr(int(fd), syscall.IPPROTO_IP, syscall.IP_MULTICAST_IF, ifAddr)
		}
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("marketdata: multicast socket options: %w", err)
	}
	return nil
}

// FeedAddr is the UDP destination of the feed.
func (f *Feed) FeedAddr() *net.UDPAddr { return f.pub.dst }

// FeedBAddr is the UDP destination of the B line, nil when there is none.
func (f *Feed) FeedBAddr() *net.UDPAddr { return f.pub.dstB }

// RecoveryAddr is the address the recovery service listens on.
func (f *Feed) RecoveryAddr() net.Addr { return f.recovery.ln.Addr() }

// ErrFeedClosed is returned by ApplyBatch after Close.
var ErrFeedClosed = errors.New("marketdata: feed closed")

// ApplyBatch applies events in order, ends the batch (see Tracker.EndCommand)
// and sends what is pending. A batch should end on a command boundary; the
// pipeline's batches do, because the matcher publishes a command's events
// together. On error the feed stops publishing: its book is no longer known
// to be right, and a wrong book is worse than a silent one.
func (f *Feed) ApplyBatch(events [][]byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrFeedClosed
	}
	for _, ev := range events {
		if err := f.tracker.Apply(ev); err != nil {
			return f.fail(err)
		}
	}
	return f.endBatchLocked(false)
}

// endBatchLocked publishes what the batch settled and sends it; with
// commandEnded the batch's last command is complete (Tracker.EndCommand),
// else it may go on in the next batch (Tracker.EndBatch).
func (f *Feed) endBatchLocked(commandEnded bool) error {
	end := f.tracker.EndBatch
	if commandEnded {
		end = f.tracker.EndCommand
	}
	if err := end(); err != nil {
		return f.fail(err)
	}
	f.lastNs = f.tracker.timeNs
	if err := f.builder.Flush(); err != nil {
		return f.fail(err)
	}
	t, l := f.tracker, f.cfg.Listener
	for _, i := range t.dirty {
		in := &t.insts[i]
		in.dirty = false
		if l != nil {
			l.OnUpdate(BookView{t: t, id: in.def.ID, nextSeq: f.builder.NextSeq()})
		}
	}
	t.dirty = t.dirty[:0]
	return nil
}

func (f *Feed) fail(err error) error {
	f.closed = true
	return fmt.Errorf("marketdata: feed stopped: %w", err)
}

// Replay applies one event of a journaled command while the venue rebuilds
// its state at start-up, before Run. The tracker, the sequence numbers and
// the retransmission window advance exactly as they did when the command
// was first applied (the same events give the same messages), but nothing
// is sent: every message repeats one published before the restart, and the
// receivers that were running already have it or recover it from the
// window. EndReplay ends the replay; Replay after Run has started is a
// programming error.
//
// So the feed's sequence continues across a restart: the first message
// after it has the number that follows the last message derived from the
// journal, and a receiver sees no reset (see "Restarts" in doc.go).
func (f *Feed) Replay(ev []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrFeedClosed
	}
	f.pub.quiet = true
	if err := f.tracker.Apply(ev); err != nil {
		return f.fail(err)
	}
	return nil
}

// EndReplay publishes what the last replayed command left pending (into the
// window only) and switches the feed back to sending.
func (f *Feed) EndReplay() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrFeedClosed
	}
	f.pub.quiet, f.pub.standbyB = true, false
	err := f.endBatchLocked(true) // a replay gives whole commands
	f.pub.quiet = false
	return err
}

// SendStandbyB makes a standby feed with BLineFromStandby send, from now
// on, each packet of the commands it replays on the B line (a cluster
// follower, once its start-up replay is done: those packets were sent
// before). EndStandbyCommand completes a command's packet. EndReplay (the
// follower comes to lead) stops it: the leader sends the A line.
func (f *Feed) SendStandbyB() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pub.standbyB = f.pub.bFromStandby && f.pub.quiet
}

// EndStandbyCommand ends the replayed command in progress and completes
// its packet, as a live feed does at the end of a batch that ends a
// command (the messages are those the command gives wherever its batch
// ends; only the packets' bounds differ): the packet goes out on the B
// line when the feed sends it (SendStandbyB), else into the window alone.
// It returns the packets sent on the B line, and those kept off it as
// older than StandbyBLineAgeMax.
func (f *Feed) EndStandbyCommand() (sentB, staleB uint64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, 0, ErrFeedClosed
	}
	sent, stale := f.pub.packetsSentB.Load(), f.pub.packetsStaleB.Load()
	if err := f.endBatchLocked(true); err != nil {
		return 0, 0, err
	}
	return f.pub.packetsSentB.Load() - sent, f.pub.packetsStaleB.Load() - stale, nil
}

// Run consumes events from src until WaitFor fails (the pipeline alerts the
// barrier or closes the ring at shutdown) or an event breaks the book. Each
// WaitFor batch is applied under one lock and released to src afterwards.
func (f *Feed) Run(src EventSource) error {
	next := src.Next()
	for {
		avail, err := src.WaitFor(next)
		if err != nil {
			return err
		}
		if err := f.applyRange(src, next, avail); err != nil {
			return err
		}
		src.Release(avail)
		next = avail + 1
	}
}

func (f *Feed) applyRange(src EventSource, from, to int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrFeedClosed
	}
	for s := from; s <= to; s++ {
		ev := src.Slot(s)
		if p := f.snapPoint.Load(); p != 0 && venue.CauseSeqOf(ev) > p {
			f.captureState(p)
		}
		if err := f.tracker.Apply(ev); err != nil {
			return f.fail(err)
		}
	}
	ender, ok := src.(CommandEnder)
	if err := f.endBatchLocked(ok && ender.EndsCommand(to)); err != nil {
		return err
	}
	if f.cfg.OrderToFeed != nil {
		f.recordLatency(src, from, to)
	}
	return nil
}

// recordLatency records the order-to-feed latency of each command in
// [from, to] that a FIX message caused and that changed a book or a
// status, once per command (its events are contiguous), measured after
// the flush that sent them. Only such a command's timestamp is a FIX
// message's arrival: an operator's (halt, resume, cancel, kill), the
// schedule's and a Tick's carry the time they were stamped or due (a
// transition run at start-up for the downtime: hours before), and would
// fill the histogram with figures no order took. A FIX message's command
// is told by its answer: an order accepted, replaced or refused, a cancel
// done (by the client, or a replace to zero) or refused, a mass cancel's
// report; the expiries and auction timers its command runs first are in
// it, as its timestamp is theirs.
func (f *Feed) recordLatency(src EventSource, from, to int64) {
	now := time.Now().UnixNano()
	var cause uint64
	var stampNs int64
	changed, fromFIX := false, false
	for s := from; s <= to; s++ {
		ev := src.Slot(s)
		if c := venue.CauseSeqOf(ev); s == from || c != cause {
			if changed && fromFIX {
				f.cfg.OrderToFeed.Record(now - stampNs)
			}
			cause, stampNs, changed, fromFIX = c, venue.TimestampNsOf(ev), false, false
		}
		switch tid, _ := venue.TemplateIDOf(ev, 0); tid {
		case venue.OrderAcceptedTemplateID, venue.OrderReplacedTemplateID:
			changed, fromFIX = true, true
		case venue.FillTemplateID, venue.TradingStatusChangedTemplateID:
			changed = true
		case venue.OrderCancelledTemplateID:
			changed = true
			if e, ok := venue.DecodeOrderCancelled(ev); ok {
				if r := e.Reason(); r == venue.CancelReasonClient || r == venue.CancelReasonReplacedToZero {
					fromFIX = true
				}
			}
		case venue.OrderRejectedTemplateID, venue.CancelRejectedTemplateID, venue.MassCancelReportTemplateID:
			fromFIX = true
		}
	}
	if changed && fromFIX {
		f.cfg.OrderToFeed.Record(now - stampNs)
	}
}

// SnapshotAt asks for the feed's state after command seq: the venue calls it
// on the matcher goroutine when it captures the matcher's snapshot of seq,
// before the matcher applies the next command. The feed captures its state
// just before it applies the first event of a later command, when it has
// applied every event of the commands up to seq and none after (events come
// in causeSeq order), and hands it to CaptureState. A newer point replaces
// one not reached yet.
func (f *Feed) SnapshotAt(seq uint64) { f.snapPoint.Store(seq) }

// CaptureAtStop captures the state a SnapshotAt asked for and no event of
// a later command has triggered yet. Call it only once every event of every
// command is applied and none will follow (the venue's pipeline drained at
// a stop): the state is then the state after the snapshot's command, which
// no later command changed.
func (f *Feed) CaptureAtStop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.snapPoint.Load(); p != 0 && !f.closed {
		f.captureState(p)
	}
}

// captureState ends the command in progress (publishing what it left
// pending, as the next event would) and hands the state to CaptureState.
// A failure costs only this snapshot's state: the venue then starts from an
// older one, or from the whole journal.
func (f *Feed) captureState(seq uint64) {
	f.snapPoint.CompareAndSwap(seq, 0)
	if f.cfg.CaptureState == nil {
		return
	}
	if err := f.tracker.EndCommand(); err != nil {
		return // Apply meets the same error at once and stops the feed
	}
	_ = f.cfg.CaptureState(seq, func(w io.Writer) error { return f.tracker.writeState(w, f.builder.NextSeq()) })
}

// Restore loads a state captured by CaptureState into a feed that has
// applied nothing yet, before Replay and Run: the books, the statistics and
// the next sequence number become those after the state's command.
func (f *Feed) Restore(r io.Reader) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.builder.NextSeq() != 1 || f.builder.Pending() != 0 {
		return errors.New("marketdata: Restore into a feed that has published")
	}
	nextSeq, err := f.tracker.readState(r)
	if err != nil {
		return err
	}
	if err := f.builder.Restart(nextSeq); err != nil {
		return err
	}
	f.win.restart(nextSeq)
	t := f.tracker
	for i := range t.insts {
		if !t.insts[i].dirty {
			t.insts[i].dirty = true
			t.dirty = append(t.dirty, int32(i))
		}
	}
	return f.endBatchLocked(false)
}

// refuseRecoveryPoll is how often RefuseRecovery's loop looks whether it
// is to stop.
const refuseRecoveryPoll = 50 * time.Millisecond

// RefuseRecovery makes the recovery service close every connection as soon
// as it is made, until the returned stop is called: a standby feed that
// publishes nothing (a cluster's follower) then tells a client at once to
// look elsewhere, where its connections used to wait, unserved, for the
// client's timeout. stop returns once nothing is being refused, so that
// Serve may follow on the same listener.
func (f *Feed) RefuseRecovery() (stop func()) {
	tl, ok := f.recovery.ln.(*net.TCPListener)
	if !ok {
		return func() {}
	}
	var quit atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !quit.Load() {
			_ = tl.SetDeadline(time.Now().Add(refuseRecoveryPoll))
			conn, err := tl.Accept()
			switch {
			case err == nil:
				f.recovery.standbyRefused.Add(1)
				conn.Close()
			case errors.Is(err, net.ErrClosed):
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			quit.Store(true)
			<-done
			_ = tl.SetDeadline(time.Time{})
		})
	}
}

// Serve sends heartbeats and runs the recovery service until ctx ends.
func (f *Feed) Serve(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(f.cfg.HeartbeatInterval / 4)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				f.pub.heartbeatIfIdle(f.cfg.HeartbeatInterval)
			}
		}
	}()
	err := f.recovery.serve(ctx)
	wg.Wait()
	return err
}

// Close sends EndOfSession and closes the sockets. Call it after Run and
// Serve have returned. A feed in replay mode (a cluster follower's standby
// feed, or a start that failed before EndReplay) sends nothing: it is not
// the publisher its receivers hear, and an EndOfSession or a heartbeat
// behind the live feed's would tell them the feed ended or numbers anew.
//
// EndOfSession is unsequenced, in one packet with a Heartbeat that carries
// the next sequence number: it takes no number from the sequenced stream,
// because a venue restarted on the same journal continues that stream from
// the journal alone, and a number taken by a message the journal cannot
// reproduce would be reused for another message after the restart.
func (f *Feed) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if !f.closed {
		f.closed = true
		if !f.pub.quiet {
			err = f.emitEndOfSession()
		}
	}
	f.recovery.ln.Close()
	if cerr := f.pub.conn.Close(); err == nil {
		err = cerr
	}
	return err
}

func (f *Feed) emitEndOfSession() error {
	if err := f.tracker.EndCommand(); err != nil {
		return err
	}
	if err := f.builder.Flush(); err != nil {
		return err
	}
	b, err := packet.NewBuilder(packet.BuilderConfig{Channel: f.cfg.Channel, Sink: unsequencedSink{f.pub}})
	if err != nil {
		return err
	}
	nextSeq := f.builder.NextSeq()
	buf, off, err := b.Reserve(mdsbe.HeartbeatEncodedLength, f.tracker.timeNs)
	if err != nil {
		return err
	}
	var hb mdsbe.Heartbeat
	if err := hb.WrapEncode(buf, off); err != nil {
		return err
	}
	hb.SetNextSeq(nextSeq)
	if buf, off, err = b.Reserve(mdsbe.EndOfSessionEncodedLength, f.tracker.timeNs); err != nil {
		return err
	}
	var m mdsbe.EndOfSession
	if err := m.WrapEncode(buf, off); err != nil {
		return err
	}
	m.SetTransactTimeNs(f.tracker.timeNs)
	return b.Flush()
}

// unsequencedSink sends a control packet without keeping it in the window.
type unsequencedSink struct{ p *publisher }

func (s unsequencedSink) WritePacket(pkt []byte, _ uint64, _ int) error {
	s.p.send(pkt)
	return nil
}

// FeedStats counts the feed's work.
type FeedStats struct {
	Tracker        TrackerStats
	NextSeq        uint64 // sequence number of the next message
	PacketsSent    uint64 // on the A line
	BytesSent      uint64
	SendErrors     uint64 // datagrams the socket refused, on either line; clients recover them
	HeartbeatsSent uint64
	// LineBPacketsSent counts the packets sent on the B line (FeedBAddr);
	// LineBStale a standby's packets kept off it (StandbyBLineAgeMax).
	LineBPacketsSent, LineBStale uint64
	Recovery                     RecoveryStats
}

// Stats returns the counters.
func (f *Feed) Stats() FeedStats {
	f.mu.Lock()
	s := FeedStats{Tracker: f.tracker.Stats(), NextSeq: f.builder.NextSeq()}
	f.mu.Unlock()
	s.PacketsSent = f.pub.packetsSent.Load()
	s.BytesSent = f.pub.bytesSent.Load()
	s.SendErrors = f.pub.sendErrors.Load()
	s.HeartbeatsSent = f.pub.heartbeatsSent.Load()
	s.LineBPacketsSent = f.pub.packetsSentB.Load()
	s.LineBStale = f.pub.packetsStaleB.Load()
	s.Recovery = f.recovery.stats()
	return s
}

// View runs fn with the tracker while holding the feed's lock, so fn sees
// the book as of the last message sent. fn must not keep the tracker.
func (f *Feed) View(fn func(t *Tracker, nextSeq uint64)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f.tracker, f.builder.NextSeq())
}
