package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Snapshot streams (doc.go, "Snapshot transfer"): a Raft snapshot's data
// does not travel in the message stream, whose frames are bounded by
// wireMessageBytes, but on a connection of its own, in CRC-checked chunks.
const (
	// snapHelloMagic opens a snapshot stream (the hello is otherwise the
	// message stream's).
	snapHelloMagic = "FVRSNP02"
	// snapshotChunkBytes bounds one chunk of snapshot data.
	snapshotChunkBytes = 1 << 20
	// DefaultSnapshotBytesMax bounds a Raft snapshot's data when the
	// configuration does not (cluster.snapshot_bytes_max).
	DefaultSnapshotBytesMax = 1 << 30
	// snapshotIdleWait bounds the wait for any progress of a snapshot stream
	// (a chunk written or read); snapshotAckWait the wait for the receiver's
	// answer once everything was sent (it writes and fsyncs the file first).
	snapshotIdleWait = 10 * time.Second
	snapshotAckWait  = 60 * time.Second
	// snapshotAck is the receiver's answer: the snapshot is on its disk and
	// handed to Raft. Anything else, or the stream closing, is a failure.
	snapshotAck = 0x06
	// snapshotRecvPrefix names the files the transport receives snapshots
	// into, in TransportConfig.SnapshotDir.
	snapshotRecvPrefix = "raft.snapshot.recv-"
	// snapshotReportsMax bounds the snapshot outcomes the node has not taken
	// yet; at most one snapshot per peer is in flight, so it never fills.
	snapshotReportsMax = 16
)

// ErrSnapshotTooLarge is wrapped by errors about a snapshot over the bound
// (cluster.snapshot_bytes_max).
var ErrSnapshotTooLarge = errors.New("cluster: Raft snapshot larger than cluster.snapshot_bytes_max")

// SnapshotReport is the outcome of one snapshot sent to a peer, for
// Node.ReportSnapshot.
type SnapshotReport struct {
	To uint64
	OK bool
}

// snapshotHead is the first frame of a snapshot stream: data bytes u64 |
// the MsgSnap in protobuf with its snapshot's data left out.
func snapshotHead(m *raftpb.Message) ([]byte, error) {
	s := m.GetSnapshot()
	m.Snapshot = &raftpb.Snapshot{Metadata: s.GetMetadata()}
	payload, err := proto.Marshal(m)
	m.Snapshot = s
	if err != nil {
		return nil, err
	}
	return append(binary.LittleEndian.AppendUint64(nil, uint64(len(s.GetData()))), payload...), nil
}

// appendWireFrame appends length u32 | crc32c u32 | payload, the frame of
// both streams.
func appendWireFrame(b, payload []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
	return append(b, payload...)
}

// readWireFrame reads one frame of at most max bytes into buf (grown as
// needed) and checks its CRC.
func readWireFrame(r io.Reader, buf []byte, max uint32, what string) ([]byte, error) {
	var hdr [wireHeaderBytes]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return buf, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n == 0 || n > max {
		return buf, fmt.Errorf("%w a %s of %d bytes (at most %d)", errPeer, what, n, max)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return buf, fmt.Errorf("%w a %s cut short: %v", errPeer, what, err)
	}
	if crc32.Checksum(buf, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
		return buf, fmt.Errorf("%w a %s with a bad CRC", errPeer, what)
	}
	return buf, nil
}

// readSnapshotBody reads what follows a snapshot stream's hello from node
// from to node to: the head, then chunks until the data is complete, each
// checked chunk also written to spool. Data over bytesMax, a frame with a
// bad length or CRC, a message that is not a MsgSnap between these nodes,
// or a stream that ends early is an error, and nothing is returned.
func readSnapshotBody(r io.Reader, from, to uint64, bytesMax int64, spool io.Writer) (*raftpb.Message, []byte, error) {
	head, err := readWireFrame(r, nil, wireMessageBytes, "snapshot head")
	if err != nil {
		return nil, nil, err
	}
	if len(head) < 8 {
		return nil, nil, fmt.Errorf("%w a snapshot head of %d bytes", errPeer, len(head))
	}
	size := binary.LittleEndian.Uint64(head)
	if size < 8 || size > uint64(bytesMax) {
		return nil, nil, fmt.Errorf("%w a snapshot of %d bytes: %w (%d)", errPeer, size, ErrSnapshotTooLarge, bytesMax)
	}
	m := &raftpb.Message{}
	if err := proto.Unmarshal(head[8:], m); err != nil {
		return nil, nil, fmt.Errorf("%w a snapshot head that is not a Raft message: %v", errPeer, err)
	}
	if m.GetType() != raftpb.MsgSnap || m.GetFrom() != from || m.GetTo() != to ||
		m.GetSnapshot().GetMetadata().GetIndex() == 0 || len(m.GetSnapshot().GetData()) != 0 {
		return nil, nil, fmt.Errorf("%w a snapshot head that is not a MsgSnap from %d to %d with an index and no data", errPeer, from, to)
	}
	data := make([]byte, 0, min(size, snapshotChunkBytes))
	var chunk []byte
	for uint64(len(data)) < size {
		left := size - uint64(len(data))
		if chunk, err = readWireFrame(r, chunk, uint32(min(left, snapshotChunkBytes)), "snapshot chunk"); err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w %d of %d snapshot bytes, then the stream ended", errPeer, len(data), size)
			}
			return nil, nil, err
		}
		if _, err := spool.Write(chunk); err != nil {
			return nil, nil, fmt.Errorf("cluster: writing a received snapshot: %w", err)
		}
		data = append(data, chunk...)
	}
	return m, data, nil
}

// writeSnapshotStream writes the head and the data in chunks to a
// connection whose hello is written, each under its own write deadline.
func writeSnapshotStream(conn net.Conn, head, data []byte) error {
	frame := make([]byte, 0, wireHeaderBytes+max(len(head), min(len(data), snapshotChunkBytes)))
	frame = appendWireFrame(frame, head)
	conn.SetWriteDeadline(time.Now().Add(snapshotIdleWait))
	if _, err := conn.Write(frame); err != nil {
		return err
	}
	for rest := data; len(rest) > 0; {
		n := min(len(rest), snapshotChunkBytes)
		frame = appendWireFrame(frame[:0], rest[:n])
		conn.SetWriteDeadline(time.Now().Add(snapshotIdleWait))
		if _, err := conn.Write(frame); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// sendSnapshot sends a MsgSnap to p on a stream of its own, at most one at
// a time per peer, and reports the outcome (SnapshotReports).
func (t *Transport) sendSnapshot(p *peerLink, m *raftpb.Message) {
	data := m.GetSnapshot().GetData()
	if int64(len(data)) > t.cfg.SnapshotBytesMax {
		t.cfg.Logger.Error("cluster: Raft snapshot not sent: the follower cannot catch up until the bound is raised",
			"to", p.id, "bytes", len(data), "err", fmt.Errorf("%w (%d)", ErrSnapshotTooLarge, t.cfg.SnapshotBytesMax))
		t.reportSnapshotNow(p.id)
		return
	}
	head, err := snapshotHead(m)
	if err != nil || !p.snapshotting.CompareAndSwap(false, true) {
		if err == nil {
			err = errors.New("a snapshot to this node is in flight")
		}
		t.cfg.Logger.Warn("cluster: Raft snapshot not sent", "to", p.id, "err", err)
		t.reportSnapshotNow(p.id)
		return
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		start := time.Now()
		err := t.streamSnapshot(p, head, data)
		// Free before the report: Raft may send the next snapshot at once.
		p.snapshotting.Store(false)
		if err != nil {
			t.cfg.Logger.Warn("cluster: Raft snapshot stream failed", "to", p.id, "bytes", len(data), "err", err)
		} else {
			t.cfg.Logger.Info("cluster: Raft snapshot delivered", "to", p.id, "bytes", len(data), "took", time.Since(start).String())
		}
		t.reportSnapshot(p.id, err == nil)
	}()
}

func (t *Transport) streamSnapshot(p *peerLink, head, data []byte) error {
	conn, err := net.DialTimeout("tcp", p.addr, dialTimeout)
	if err != nil {
		return err
	}
	t.track(conn, true)
	defer t.track(conn, false)
	defer conn.Close()
	h := t.helloOf(snapHelloMagic, p.id)
	conn.SetWriteDeadline(time.Now().Add(snapshotIdleWait))
	if _, err := conn.Write(h); err != nil {
		return err
	}
	if err := writeSnapshotStream(conn, head, data); err != nil {
		return err
	}
	conn.SetReadDeadline(time.Now().Add(snapshotAckWait))
	var ack [1]byte
	if _, err := io.ReadFull(conn, ack[:]); err != nil {
		return fmt.Errorf("no answer from the receiver: %w", err)
	}
	if ack[0] != snapshotAck {
		return fmt.Errorf("the receiver answered %#x", ack[0])
	}
	return nil
}

// reportSnapshotNow reports a failure from Send, on the node's goroutine,
// which also drains the reports: it must not wait for room, so when the
// queue is full the report waits on a goroutine of its own.
func (t *Transport) reportSnapshotNow(to uint64) {
	select {
	case t.snapReports <- SnapshotReport{To: to}:
	default:
		go t.reportSnapshot(to, false)
	}
}

func (t *Transport) reportSnapshot(to uint64, ok bool) {
	select {
	case t.snapReports <- SnapshotReport{To: to, OK: ok}:
	case <-t.closed:
	}
}

// deadlineReader extends the connection's read deadline before every read:
// a snapshot stream may take long, but never stall.
type deadlineReader struct {
	conn net.Conn
	r    io.Reader
}

func (d deadlineReader) Read(p []byte) (int, error) {
	d.conn.SetReadDeadline(time.Now().Add(snapshotIdleWait))
	return d.r.Read(p)
}

// receiveSnapshot reads a snapshot stream whose hello came from node from:
// the data goes to a file in SnapshotDir (synced), and only then is the
// MsgSnap handed to the node and the sender told. One stream at a time; on
// any error the file is removed, nothing is delivered and the stream closes.
func (t *Transport) receiveSnapshot(conn net.Conn, r io.Reader, from uint64) error {
	if !t.snapIn.TryLock() {
		return fmt.Errorf("%w a second snapshot stream while one is being received (node %d)", errPeer, from)
	}
	defer t.snapIn.Unlock()
	t.recvCount++
	path := filepath.Join(t.cfg.SnapshotDir, fmt.Sprintf("%s%d", snapshotRecvPrefix, t.recvCount))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("cluster: receiving a snapshot: %w", err)
	}
	m, err := t.receiveSnapshotInto(f, deadlineReader{conn, r}, from)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("cluster: receiving a snapshot: %w", cerr)
	}
	if err == nil {
		select {
		case t.inbound <- m:
		default:
			t.stats.DroppedIn.Add(1)
			err = errors.New("cluster: received a snapshot but the node's inbound queue is full")
		}
	}
	if err != nil {
		os.Remove(path)
		if errors.Is(err, errPeer) {
			t.stats.FramesBad.Add(1)
		}
		return err
	}
	t.keepReceived(m.GetSnapshot().GetMetadata(), path)
	conn.SetWriteDeadline(time.Now().Add(snapshotIdleWait))
	_, err = conn.Write([]byte{snapshotAck})
	return err
}

// receiveSnapshotInto reads the snapshot into f as a snapshot file (doc.go,
// "Raft snapshots": header, then the data), synced.
func (t *Transport) receiveSnapshotInto(f *os.File, r io.Reader, from uint64) (*raftpb.Message, error) {
	if _, err := f.Seek(snapshotHeaderBytes, io.SeekStart); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	m, data, err := readSnapshotBody(r, from, t.cfg.NodeID, t.cfg.SnapshotBytesMax, f)
	if err != nil {
		return nil, err
	}
	m.Snapshot.Data = data
	if _, err := f.WriteAt(snapshotFileHeader(m.GetSnapshot()), 0); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("cluster: sync a received snapshot: %w", err)
	}
	return m, nil
}

// keepReceived records the received file of a snapshot for
// ReceivedSnapshot; an older one not taken is removed.
func (t *Transport) keepReceived(md *raftpb.SnapshotMetadata, path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.received.path != "" {
		os.Remove(t.received.path)
	}
	t.received = receivedSnapshot{index: md.GetIndex(), term: md.GetTerm(), path: path}
}

type receivedSnapshot struct {
	index, term uint64
	path        string
}

// ReceivedSnapshot hands over the file a snapshot of (index, term) was
// received into (NodeConfig.ReceivedSnapshot): the caller owns it then.
// "" when there is none.
func (t *Transport) ReceivedSnapshot(index, term uint64) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.received; r.path != "" && r.index == index && r.term == term {
		t.received = receivedSnapshot{}
		return r.path
	}
	return ""
}

// removeReceivedFiles removes snapshot files a crash left half received or
// never installed.
func removeReceivedFiles(dir string) {
	old, _ := filepath.Glob(filepath.Join(dir, snapshotRecvPrefix+"*"))
	for _, p := range old {
		os.Remove(p)
	}
}
