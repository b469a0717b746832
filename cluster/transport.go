package cluster

import (
	"bufio"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Transport bounds and timeouts (doc.go, "Transport").
const (
	helloMagic = "FVRAFT02"
	// helloBytes: magic 8 | cluster id u64 | from u64 | to u64 | terms u32 |
	// unix ns u64 | HMAC-SHA256 of what precedes it, keyed by the
	// cluster's secret (TransportConfig.Secret).
	helloBytes       = 76
	helloMACAt       = 44
	helloAgeMax      = 30 * time.Second // and as far ahead: the nodes' clocks may differ by this much
	wireHeaderBytes  = 8                // length u32 | crc32c u32 of the payload
	wireMessageBytes = 16 << 20
	// peerQueueMessagesMax bounds the messages waiting for one peer's
	// connection; beyond it messages are dropped (Raft resends) and the
	// peer is reported unreachable.
	peerQueueMessagesMax = 4096
	// inboundMessagesMax bounds received messages the node has not taken yet.
	inboundMessagesMax = 4096
	dialTimeout        = time.Second
	helloTimeout       = 5 * time.Second
	// helloPendingMax bounds the accepted streams that have not sent their
	// hello yet: at the bound, the one that has waited longest is closed
	// to admit a new one. A peer sends its hello as it connects, so it
	// waits a round trip; anyone who can reach the port could otherwise
	// hold a goroutine and a descriptor per connection for helloTimeout,
	// as many as it opens.
	helloPendingMax = 32
	writeTimeout    = 5 * time.Second
	redialPause     = 100 * time.Millisecond
)

// TransportConfig configures a Transport.
type TransportConfig struct {
	ClusterID uint64
	NodeID    uint64
	// Terms identifies the configured terms that applying the commands
	// depends on (a hash of them; the server's terms record): a peer whose
	// hello carries others is refused like a peer of another cluster, since
	// its replica would give other events for the same commands.
	Terms uint32
	// Secret authenticates the nodes to each other: every hello carries an
	// HMAC of its fields under it and a time, and a peer without the
	// secret, or replaying a hello older than helloAgeMax, is refused. The
	// same on every node; empty is a secret too (no authentication, the
	// server warns).
	Secret   []byte
	Listener net.Listener      // the Raft address, bound by the caller
	Peers    map[uint64]string // Raft address of every other node
	// SnapshotDir receives Raft snapshots (the replica's directory, so
	// that the node installs the received file by renaming it; default the
	// system's temporary directory). SnapshotBytesMax bounds one
	// (default DefaultSnapshotBytesMax).
	SnapshotDir      string
	SnapshotBytesMax int64
	// HelloTimeout is how long an accepted stream may take to send its
	// hello (0: helloTimeout); tests lengthen it.
	HelloTimeout time.Duration
	Logger       *slog.Logger
}

// TransportStats counts what the transport refused or dropped.
type TransportStats struct {
	ConnsRejected atomic.Int64 // bad hello: garbage, another cluster, unknown node, other terms; none in time (helloPendingMax)
	FramesBad     atomic.Int64 // bad length, CRC or message (snapshot chunks too): the connection is closed
	DroppedOut    atomic.Int64 // messages dropped because a peer's queue was full
	DroppedIn     atomic.Int64 // messages dropped because the node's inbound queue was full
}

// Transport carries Raft messages over one TCP stream per peer and
// direction: a dialled stream sends, an accepted one receives. Every
// frame is length-prefixed and CRC32C-checked; a stream that sends a bad
// hello or a bad frame is closed and logged, and the node goes on.
type Transport struct {
	cfg         TransportConfig
	inbound     chan *raftpb.Message
	unreachable chan uint64
	ended       chan uint64
	peers       map[uint64]*peerLink
	stats       TransportStats
	closed      chan struct{}
	wg          sync.WaitGroup
	mu          sync.Mutex
	conns       map[net.Conn]struct{}
	pending     map[net.Conn]time.Time // accepted streams waiting for their hello, since when (mu)
	received    receivedSnapshot       // the last snapshot received, not yet installed (mu)

	snapReports chan SnapshotReport
	snapIn      sync.Mutex // held while a snapshot is received: one at a time
	recvCount   uint64     // names the received files (snapIn held)

	logMu  sync.Mutex
	logged map[string]streamLog // closed streams and failed dials by error, for logDue (logMu)

	// hellos are the MACs of the hellos accepted within helloAgeMax, so
	// that one replayed within that time is refused too (mu); at most
	// hellosSeenMax.
	hellos map[[sha256.Size]byte]time.Time
}

// hellosSeenMax bounds the hellos remembered: a peer redials at most ten
// times a second, so six peers in helloAgeMax stay far below it.
const hellosSeenMax = 8192

// streamLog is when a kind of closed stream was last logged, and how many
// like it were not logged since.
type streamLog struct {
	at         time.Time
	suppressed int
}

// A peer configured otherwise redials ten times a second: one kind of closed
// stream (its error) is logged at most once per streamLogEvery, with how
// many were not; at most streamLogKindsMax kinds are remembered.
const (
	streamLogEvery    = 10 * time.Second
	streamLogKindsMax = 64
)

// logStreamClosed logs a stream closed for err, unless one closed for the
// same error was logged within streamLogEvery.
func (t *Transport) logStreamClosed(remote string, err error) {
	if n, ok := t.logDue("closed " + err.Error()); ok {
		t.cfg.Logger.Warn("cluster: peer stream closed", "remote", remote, "err", err, "like_it_not_logged", n)
	}
}

// logDialFailed logs that p could not be dialled, unless that was logged
// for the same error within streamLogEvery. Without it a node whose
// [[cluster.peer]] names a wrong raft_addr, or whose peer is down, said
// nothing: it received the leader's messages and followed, its answers
// went nowhere, and the leader counted it out of its quorum while the node
// looked like a follower (doc.go, "Transport").
func (t *Transport) logDialFailed(p *peerLink, err error) {
	if n, ok := t.logDue(fmt.Sprintf("dial %d %v", p.id, err)); ok {
		t.cfg.Logger.Warn("cluster: cannot reach peer", "peer", p.id, "raft_addr", p.addr, "err", err, "like_it_not_logged", n)
	}
}

// logDue says whether an event of kind key is to be logged (none was
// within streamLogEvery), and how many of that kind were not since.
func (t *Transport) logDue(key string) (suppressed int, due bool) {
	now := time.Now()
	t.logMu.Lock()
	defer t.logMu.Unlock()
	last, seen := t.logged[key]
	if seen && now.Sub(last.at) < streamLogEvery {
		last.suppressed++
		t.logged[key] = last
		return 0, false
	}
	if t.logged == nil || len(t.logged) >= streamLogKindsMax {
		t.logged = make(map[string]streamLog)
	}
	t.logged[key] = streamLog{at: now}
	return last.suppressed, true
}

type peerLink struct {
	id    uint64
	addr  string
	queue chan []byte
	// snapshotting is set while a snapshot stream to this peer runs.
	snapshotting atomic.Bool
}

// NewTransport starts accepting on cfg.Listener and dialling every peer.
func NewTransport(cfg TransportConfig) *Transport {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SnapshotDir == "" {
		cfg.SnapshotDir = os.TempDir()
	}
	if cfg.SnapshotBytesMax <= 0 {
		cfg.SnapshotBytesMax = DefaultSnapshotBytesMax
	}
	removeReceivedFiles(cfg.SnapshotDir)
	t := &Transport{cfg: cfg, inbound: make(chan *raftpb.Message, inboundMessagesMax),
		unreachable: make(chan uint64, 64), ended: make(chan uint64, 64), peers: map[uint64]*peerLink{}, closed: make(chan struct{}),
		conns: map[net.Conn]struct{}{}, pending: map[net.Conn]time.Time{}, snapReports: make(chan SnapshotReport, snapshotReportsMax)}
	for id, addr := range cfg.Peers {
		p := &peerLink{id: id, addr: addr, queue: make(chan []byte, peerQueueMessagesMax)}
		t.peers[id] = p
		t.wg.Add(1)
		go t.runPeer(p)
	}
	t.wg.Add(1)
	go t.accept()
	return t
}

// Inbound delivers the messages received from peers.
func (t *Transport) Inbound() <-chan *raftpb.Message { return t.inbound }

// Unreachable delivers ids of peers a message could not reach.
func (t *Transport) Unreachable() <-chan uint64 { return t.unreachable }

// Ended delivers ids of peers whose stream to this node ended.
func (t *Transport) Ended() <-chan uint64 { return t.ended }

// SnapshotReports delivers the outcome of every snapshot sent
// (Node.ReportSnapshot).
func (t *Transport) SnapshotReports() <-chan SnapshotReport { return t.snapReports }

// Stats are the transport's counters.
func (t *Transport) Stats() *TransportStats { return &t.stats }

// Send queues m for its peer without blocking. A snapshot goes on a stream
// of its own (snapstream.go), whose outcome SnapshotReports delivers.
func (t *Transport) Send(m *raftpb.Message) {
	p := t.peers[m.GetTo()]
	if p == nil {
		return
	}
	if m.GetType() == raftpb.MsgSnap {
		t.sendSnapshot(p, m)
		return
	}
	payload, err := proto.Marshal(m)
	if err != nil || len(payload) > wireMessageBytes {
		t.cfg.Logger.Error("cluster: message not sent", "to", m.GetTo(), "bytes", len(payload), "err", err)
		return
	}
	frame := appendWireFrame(make([]byte, 0, wireHeaderBytes+len(payload)), payload)
	select {
	case p.queue <- frame:
	default:
		t.stats.DroppedOut.Add(1)
		t.reportUnreachable(p.id)
	}
}

func (t *Transport) reportUnreachable(id uint64) {
	select {
	case t.unreachable <- id:
	default:
	}
}

func (t *Transport) hello(to uint64) []byte { return t.helloOf(helloMagic, to) }

// helloOf is the hello of a stream of kind magic (a message or a snapshot
// stream) to node to, made now.
func (t *Transport) helloOf(magic string, to uint64) []byte {
	b := make([]byte, helloBytes)
	copy(b, magic)
	binary.LittleEndian.PutUint64(b[8:], t.cfg.ClusterID)
	binary.LittleEndian.PutUint64(b[16:], t.cfg.NodeID)
	binary.LittleEndian.PutUint64(b[24:], to)
	binary.LittleEndian.PutUint32(b[32:], t.cfg.Terms)
	binary.LittleEndian.PutUint64(b[36:], uint64(time.Now().UnixNano()))
	copy(b[helloMACAt:], t.helloMAC(b[:helloMACAt]))
	return b
}

// firstHello remembers a hello's MAC and reports whether it is new: a
// hello is made once, with its time, and a copy is a replay. Those older
// than helloAgeMax, refused by their age anyway, are forgotten; past
// hellosSeenMax remembered a hello is refused.
func (t *Transport) firstHello(mac []byte) bool {
	key := [sha256.Size]byte(mac)
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hellos == nil {
		t.hellos = map[[sha256.Size]byte]time.Time{}
	}
	if _, seen := t.hellos[key]; seen {
		return false
	}
	if len(t.hellos) >= hellosSeenMax {
		for k, at := range t.hellos {
			if now.Sub(at) > 2*helloAgeMax {
				delete(t.hellos, k)
			}
		}
		if len(t.hellos) >= hellosSeenMax {
			return false
		}
	}
	t.hellos[key] = now
	return true
}

func (t *Transport) helloMAC(fields []byte) []byte {
	m := hmac.New(sha256.New, t.cfg.Secret)
	m.Write(fields)
	return m.Sum(nil)
}

// runPeer keeps one outgoing stream to p and writes its queue to it.
func (t *Transport) runPeer(p *peerLink) {
	defer t.wg.Done()
	var first []byte
	for {
		conn, err := net.DialTimeout("tcp", p.addr, dialTimeout)
		if err == nil {
			t.track(conn, true)
			err = t.writeStream(conn, p, first)
			t.track(conn, false)
			conn.Close()
		} else {
			t.logDialFailed(p, err)
		}
		first = nil
		select {
		case <-t.closed:
			return
		case <-time.After(redialPause):
		}
		switch {
		case errors.Is(err, errStreamClosed):
			// The peer closed the stream (its process died, or restarts):
			// dial again when there is something to send, so that an idle
			// link does not keep dialling a dead peer.
			select {
			case <-t.closed:
				return
			case first = <-p.queue:
			}
		case err != nil:
			t.reportUnreachable(p.id)
		}
	}
}

// errStreamClosed: the peer closed a stream this node dialled.
var errStreamClosed = errors.New("cluster: peer closed the stream")

// writeStream writes the hello, then first (when set), then the queue.
func (t *Transport) writeStream(conn net.Conn, p *peerLink, first []byte) error {
	// The peer never writes on a stream this node dialled, so a read returns
	// only when the stream ends (the peer's process died, or it dropped the
	// stream). Noticed here, the next message goes on a new stream; noticed
	// at the next write, that write would be lost in the kernel and the next
	// one fail, which loses the first messages after a peer's restart, votes
	// among them (doc.go, "Fast failover").
	gone := make(chan struct{})
	go func() {
		var b [1]byte
		_, _ = conn.Read(b[:])
		close(gone)
	}()
	w := bufio.NewWriterSize(conn, 64<<10)
	conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	// The hello goes out now, not with the first frame: a link with nothing
	// to send (two followers) would otherwise hold it in the buffer, and the
	// peer close the stream after helloTimeout as one that sent no hello,
	// logging and counting a refusal of its own peer (doc.go, "Transport").
	if _, err := w.Write(t.hello(p.id)); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for {
		frame := first
		first = nil
		if frame == nil {
			select {
			case <-t.closed:
				return nil
			case <-gone:
				return errStreamClosed
			case frame = <-p.queue:
			}
		}
		conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := w.Write(frame); err != nil {
			return err
		}
		// Write whatever else is queued before flushing: one system call per burst.
		for more := true; more; {
			select {
			case frame = <-p.queue:
				if _, err := w.Write(frame); err != nil {
					return err
				}
			default:
				more = false
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

// track adds a stream to those Close closes, or takes it out. A stream
// accepted or dialled while Close runs, after its pass over the streams,
// is closed here: left open, its reader (a good hello clears its read
// deadline) waited for the peer for ever, and Close for the reader.
func (t *Transport) track(c net.Conn, add bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if add {
		select {
		case <-t.closed:
			c.Close()
			return
		default:
		}
		t.conns[c] = struct{}{}
	} else {
		delete(t.conns, c)
	}
}

func (t *Transport) accept() {
	defer t.wg.Done()
	for {
		conn, err := t.cfg.Listener.Accept()
		if err != nil {
			select {
			case <-t.closed:
				return
			default:
			}
			t.cfg.Logger.Warn("cluster: accept", "err", err)
			time.Sleep(redialPause)
			continue
		}
		t.track(conn, true)
		t.awaitHello(conn)
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			defer t.track(conn, false)
			defer conn.Close()
			from, err := t.readStream(conn)
			if from != 0 {
				// A peer's stream ended: the node may suspect that peer (runner.go).
				select {
				case t.ended <- from:
				default:
				}
			}
			if err != nil && !errors.Is(err, io.EOF) {
				select {
				case <-t.closed:
				default:
					t.logStreamClosed(conn.RemoteAddr().String(), err)
				}
			}
		}()
	}
}

// awaitHello counts an accepted stream among those waiting for their
// hello; at helloPendingMax it closes the one that has waited longest.
func (t *Transport) awaitHello(c net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) >= helloPendingMax {
		var oldest net.Conn
		var since time.Time
		for pc, at := range t.pending {
			if oldest == nil || at.Before(since) {
				oldest, since = pc, at
			}
		}
		delete(t.pending, oldest) // its read fails: helloRead says why
		oldest.Close()
	}
	t.pending[c] = time.Now()
}

// helloRead ends a stream's wait for its hello, and reports whether it was
// closed by awaitHello instead.
func (t *Transport) helloRead(c net.Conn) (evicted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, waiting := t.pending[c]
	delete(t.pending, c)
	return !waiting
}

// errPeer marks a stream closed for what the peer sent.
var errPeer = errors.New("cluster: peer sent")

// readStream reads one peer's stream until it ends; from is the peer of a
// message stream once its hello was good (0 before, and for a snapshot
// stream, whose end says nothing about the peer's message stream).
func (t *Transport) readStream(conn net.Conn) (from uint64, err error) {
	conn.SetReadDeadline(time.Now().Add(cmp.Or(t.cfg.HelloTimeout, helloTimeout)))
	var h [helloBytes]byte
	// The hello is read before the stream's buffer is allocated: a
	// connection that sends none costs no more than its goroutine.
	_, err = io.ReadFull(conn, h[:])
	if evicted := t.helloRead(conn); err != nil {
		t.stats.ConnsRejected.Add(1)
		if evicted {
			return 0, fmt.Errorf("%w no hello before %d streams newer sent none either (closed to admit them)", errPeer, helloPendingMax)
		}
		// Without the addresses a network error names (the log names the
		// remote), so that a flood of such streams is one kind of closed
		// stream, logged once per streamLogEvery, not a line each.
		if op := (*net.OpError)(nil); errors.As(err, &op) {
			err = op.Err
		}
		return 0, fmt.Errorf("%w no hello: %v", errPeer, err)
	}
	if from, err = t.checkHello(h[:]); err != nil {
		t.stats.ConnsRejected.Add(1)
		return 0, err
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	if string(h[:8]) == snapHelloMagic {
		return 0, t.receiveSnapshot(conn, r, from)
	}
	conn.SetReadDeadline(time.Time{})
	var payload []byte
	for {
		payload, err = readWireFrame(r, payload, wireMessageBytes, "frame")
		if errors.Is(err, errPeer) {
			t.stats.FramesBad.Add(1)
			return from, fmt.Errorf("%w (node %d)", err, from)
		}
		if err != nil {
			return from, err
		}
		m := &raftpb.Message{}
		if err := proto.Unmarshal(payload, m); err != nil {
			t.stats.FramesBad.Add(1)
			return from, fmt.Errorf("%w a frame that is not a Raft message (node %d): %v", errPeer, from, err)
		}
		if m.GetFrom() != from || m.GetTo() != t.cfg.NodeID {
			t.stats.FramesBad.Add(1)
			return from, fmt.Errorf("%w a message from %d to %d on the stream of node %d", errPeer, m.GetFrom(), m.GetTo(), from)
		}
		select {
		case t.inbound <- m:
		default:
			t.stats.DroppedIn.Add(1)
		}
	}
}

func (t *Transport) checkHello(h []byte) (uint64, error) {
	if string(h[:8]) != helloMagic && string(h[:8]) != snapHelloMagic {
		return 0, fmt.Errorf("%w garbage instead of a hello", errPeer)
	}
	if !hmac.Equal(h[helloMACAt:], t.helloMAC(h[:helloMACAt])) {
		return 0, fmt.Errorf("%w a hello that does not authenticate: not a node of this cluster, or one with another "+
			"cluster.secret_file", errPeer)
	}
	cluster, from, to := binary.LittleEndian.Uint64(h[8:]), binary.LittleEndian.Uint64(h[16:]), binary.LittleEndian.Uint64(h[24:])
	age := time.Since(time.Unix(0, int64(binary.LittleEndian.Uint64(h[36:]))))
	switch {
	case age > helloAgeMax || age < -helloAgeMax:
		return 0, fmt.Errorf("%w a hello made %v ago (from node %d): a replay, or clocks further apart than %v", errPeer,
			age.Round(time.Millisecond), from, helloAgeMax)
	case !t.firstHello(h[helloMACAt:]):
		return 0, fmt.Errorf("%w a hello seen before (from node %d): a replay", errPeer, from)
	case cluster != t.cfg.ClusterID:
		return 0, fmt.Errorf("%w a hello of cluster_id %d, this node's is %d", errPeer, cluster, t.cfg.ClusterID)
	case to != t.cfg.NodeID:
		return 0, fmt.Errorf("%w a hello for node %d, this is node %d", errPeer, to, t.cfg.NodeID)
	case t.peers[from] == nil:
		return 0, fmt.Errorf("%w a hello from unknown node %d", errPeer, from)
	case binary.LittleEndian.Uint32(h[32:]) != t.cfg.Terms:
		return 0, fmt.Errorf("%w a hello from node %d with configured terms %08x, this node's are %08x: the nodes' "+
			"sessions, instruments, matcher bounds or risk limits (each node's terms.json lists its own), or the venue's "+
			"CompIDs, cancel-on-disconnect or drop-copy grants differ",
			errPeer, from, binary.LittleEndian.Uint32(h[32:]), t.cfg.Terms)
	}
	return from, nil
}

// Close stops the transport and closes every stream. t.closed is closed
// before the pass over the streams under t.mu, so that a stream track
// adds after that pass finds it closed (track).
func (t *Transport) Close() error {
	close(t.closed)
	err := t.cfg.Listener.Close()
	t.mu.Lock()
	for c := range t.conns {
		c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	return err
}
