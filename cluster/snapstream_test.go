package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// snapMsg is a MsgSnap from node 2 to node 1 carrying data.
func snapMsg(data []byte) *raftpb.Message {
	return &raftpb.Message{Type: raftpb.MsgSnap.Enum(), From: proto.Uint64(2), To: proto.Uint64(1), Term: proto.Uint64(4),
		Snapshot: &raftpb.Snapshot{Data: data, Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(900), Term: proto.Uint64(3),
			ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}}}}}
}

// snapBody is what a sender writes after the hello for m.
func snapBody(t testing.TB, m *raftpb.Message) []byte {
	t.Helper()
	head, err := snapshotHead(m)
	if err != nil {
		t.Fatal(err)
	}
	b := appendWireFrame(nil, head)
	for rest := m.GetSnapshot().GetData(); len(rest) > 0; {
		n := min(len(rest), snapshotChunkBytes)
		b = appendWireFrame(b, rest[:n])
		rest = rest[n:]
	}
	return b
}

func randomData(n int) []byte {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestSnapshotBodyRoundTripAndRejects(t *testing.T) {
	data := randomData(2*snapshotChunkBytes + 12345) // three chunks, the last one short
	body := snapBody(t, snapMsg(data))
	var spool bytes.Buffer
	m, got, err := readSnapshotBody(bytes.NewReader(body), 2, 1, 1<<30, &spool)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) || !bytes.Equal(spool.Bytes(), data) || m.GetSnapshot().GetMetadata().GetIndex() != 900 {
		t.Fatalf("read %d bytes (spooled %d), index %d; sent %d bytes, index 900", len(got), spool.Len(),
			m.GetSnapshot().GetMetadata().GetIndex(), len(data))
	}
	headLen := wireHeaderBytes + int(binary.LittleEndian.Uint32(body))
	flip := func(at int) []byte {
		b := bytes.Clone(body)
		b[at] ^= 0x40
		return b
	}
	for name, tc := range map[string]struct {
		stream   []byte
		from     uint64
		bytesMax int64
		want     error
	}{
		"bad chunk CRC":     {flip(headLen + wireHeaderBytes + snapshotChunkBytes + 100), 2, 1 << 30, errPeer},
		"bad head CRC":      {flip(wireHeaderBytes + 3), 2, 1 << 30, errPeer},
		"truncated":         {body[:len(body)-1], 2, 1 << 30, errPeer},
		"cut after a chunk": {body[:headLen+wireHeaderBytes+snapshotChunkBytes], 2, 1 << 30, errPeer},
		"oversize":          {body, 2, int64(len(data) - 1), ErrSnapshotTooLarge},
		"another sender":    {body, 3, 1 << 30, errPeer},
		"empty":             {nil, 2, 1 << 30, io.EOF},
	} {
		var spool bytes.Buffer
		m, got, err := readSnapshotBody(bytes.NewReader(tc.stream), tc.from, 1, tc.bytesMax, &spool)
		if !errors.Is(err, tc.want) || m != nil || got != nil {
			t.Errorf("%s: message %v, %d bytes, err %v; want %v and nothing", name, m != nil, len(got), err, tc.want)
		}
	}
	// A chunk that claims more than the data has left is refused by its length.
	short := snapMsg(randomData(100))
	head, _ := snapshotHead(short)
	stream := appendWireFrame(appendWireFrame(nil, head), randomData(101))
	if _, _, err := readSnapshotBody(bytes.NewReader(stream), 2, 1, 1<<30, io.Discard); !errors.Is(err, errPeer) {
		t.Errorf("a chunk longer than the data left: %v", err)
	}
	// A head that is not a MsgSnap is refused.
	hb := snapMsg(data[:64])
	hb.Type = raftpb.MsgApp.Enum()
	if _, _, err := readSnapshotBody(bytes.NewReader(snapBody(t, hb)), 2, 1, 1<<30, io.Discard); !errors.Is(err, errPeer) {
		t.Errorf("a MsgApp as the head: %v", err)
	}
}

// A snapshot stream with another cluster's hello, a bad chunk or an end
// before the data is complete is closed: nothing reaches the node, no file
// is left behind, and the frame is counted.
func TestSnapshotStreamRefusedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	data := randomData(snapshotChunkBytes + 77)
	body := snapBody(t, snapMsg(data))
	snapHello := func(cluster uint64) []byte {
		return (&Transport{cfg: TransportConfig{ClusterID: cluster, NodeID: 2}}).helloOf(snapHelloMagic, 1)
	}
	bad := bytes.Clone(body)
	bad[len(bad)-5] ^= 1
	for name, stream := range map[string][]byte{
		"wrong cluster id": append(snapHello(8), body...),
		"bad chunk CRC":    append(snapHello(7), bad...),
		"truncated":        append(snapHello(7), body[:len(body)-10]...),
	} {
		tr := fuzzTransport()
		tr.cfg.SnapshotDir, tr.cfg.SnapshotBytesMax = dir, 1<<30
		server := pipeStream(stream)
		_, err := tr.readStream(server)
		server.Close()
		if err == nil || len(tr.inbound) != 0 {
			t.Fatalf("%s: err %v, %d messages delivered", name, err, len(tr.inbound))
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
			t.Fatalf("%s: files left: %v", name, left)
		}
		if name != "wrong cluster id" && tr.stats.FramesBad.Load() != 1 {
			t.Fatalf("%s: %d bad frames counted", name, tr.stats.FramesBad.Load())
		}
	}
}

// Over real TCP: a snapshot of several chunks reaches the other transport,
// which hands Raft the message only after the file is synced, and the
// sender reports success; one over the receiver's bound is refused and
// reported failed, and nothing is delivered.
func TestSnapshotStreamOverTCP(t *testing.T) {
	dir := t.TempDir()
	l1, l2 := listenLoopback(t), listenLoopback(t)
	recv := NewTransport(TransportConfig{ClusterID: 7, NodeID: 1, Listener: l1, Peers: map[uint64]string{2: l2.Addr().String()},
		SnapshotDir: dir, SnapshotBytesMax: 8 << 20, Logger: quietLogger()})
	defer recv.Close()
	send := NewTransport(TransportConfig{ClusterID: 7, NodeID: 2, Listener: l2, Peers: map[uint64]string{1: l1.Addr().String()},
		SnapshotDir: t.TempDir(), Logger: quietLogger()})
	defer send.Close()
	report := func() SnapshotReport {
		select {
		case r := <-send.SnapshotReports():
			return r
		case <-time.After(30 * time.Second):
			t.Fatal("no snapshot report within 30 s")
		}
		return SnapshotReport{}
	}

	data := randomData(5*snapshotChunkBytes + 3)
	send.Send(snapMsg(data))
	if r := report(); !r.OK || r.To != 1 {
		t.Fatalf("report %+v, want success to node 1", r)
	}
	var m *raftpb.Message
	select {
	case m = <-recv.Inbound():
	case <-time.After(5 * time.Second):
		t.Fatal("the snapshot was reported delivered but the node did not get it")
	}
	if !bytes.Equal(m.GetSnapshot().GetData(), data) || m.GetFrom() != 2 {
		t.Fatalf("received %d bytes from %d, sent %d from 2", len(m.GetSnapshot().GetData()), m.GetFrom(), len(data))
	}
	path := recv.ReceivedSnapshot(900, 3)
	if path == "" || !sameSnapshotFile(path, m.GetSnapshot()) {
		t.Fatalf("received file %q does not hold the snapshot", path)
	}
	if recv.ReceivedSnapshot(900, 3) != "" {
		t.Fatal("the received file was handed over twice")
	}
	os.Remove(path)

	send.Send(snapMsg(randomData(9 << 20)))
	if r := report(); r.OK {
		t.Fatal("a snapshot over the receiver's bound was reported delivered")
	}
	select {
	case m := <-recv.Inbound():
		t.Fatalf("a snapshot over the bound was delivered (%d bytes)", len(m.GetSnapshot().GetData()))
	case <-time.After(100 * time.Millisecond):
	}
	if left, _ := filepath.Glob(filepath.Join(dir, snapshotRecvPrefix+"*")); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
	if recv.Stats().FramesBad.Load() != 1 {
		t.Fatalf("%d bad frames counted, want 1", recv.Stats().FramesBad.Load())
	}

	// Over the sender's own bound: not sent at all, reported failed.
	send.cfg.SnapshotBytesMax = 1 << 20
	send.Send(snapMsg(randomData(2 << 20)))
	if r := report(); r.OK {
		t.Fatal("a snapshot over the sender's bound was reported delivered")
	}
}

// A leader refuses to build a snapshot over the bound, naming it.
func TestSnapshotBuildOverBoundIsRefused(t *testing.T) {
	newState := func() (State, error) { return NewMatcherState(testMatcherConfig(), nil) }
	_, _, err := buildSnapshot(t.TempDir(), nil, newState, nil, []uint64{1, 2, 3}, 10, 2, -1, 64, new(atomic.Bool))
	if !errors.Is(err, ErrSnapshotTooLarge) {
		t.Fatalf("err %v, want ErrSnapshotTooLarge", err)
	}
	if _, _, err := buildSnapshot(t.TempDir(), nil, newState, nil, []uint64{1, 2, 3}, 10, 2, -1, DefaultSnapshotBytesMax, new(atomic.Bool)); err != nil {
		t.Fatal(err)
	}
}

// FuzzSnapshotBody feeds untrusted bytes to the snapshot stream decoder:
// raw (odd inputs) or behind a valid head announcing 64 bytes (even
// inputs), so the fuzzer reaches the chunks. Whatever the bytes, it ends
// with an error, or with a MsgSnap from node 2 to node 1 whose data is at
// most the bound and exactly what it spooled; it never panics.
func FuzzSnapshotBody(f *testing.F) {
	valid := snapBody(f, snapMsg(randomData(64)))
	head, _ := snapshotHead(snapMsg(randomData(64)))
	f.Add(valid)
	f.Add(valid[wireHeaderBytes+len(head):])
	f.Add(append([]byte{1}, valid...))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	const bytesMax = 1 << 16
	f.Fuzz(func(t *testing.T, input []byte) {
		stream := input
		if len(input)%2 == 0 {
			stream = append(appendWireFrame(nil, head), input...)
		}
		var spool bytes.Buffer
		m, data, err := readSnapshotBody(bytes.NewReader(stream), 2, 1, bytesMax, &spool)
		if err != nil {
			if m != nil || data != nil {
				t.Fatal("an error with a result")
			}
			return
		}
		if m.GetType() != raftpb.MsgSnap || m.GetFrom() != 2 || m.GetTo() != 1 || len(data) > bytesMax ||
			len(data) < 8 || !bytes.Equal(data, spool.Bytes()) {
			t.Fatalf("accepted %v from %d to %d with %d bytes (%d spooled)", m.GetType(), m.GetFrom(), m.GetTo(), len(data), spool.Len())
		}
	})
}
