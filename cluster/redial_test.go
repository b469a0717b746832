package cluster

import (
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/lockedbuf"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// TestTransportRedialsARestartedPeer restarts a peer's process (its
// transport, on the same address) and checks that the first message sent
// to it afterwards arrives: the stream dialled to the old process is
// noticed dead when it ends, not by losing a write, and the message goes
// on a new stream (doc.go, "Fast failover"). Real TCP on 127.0.0.1.
func TestTransportRedialsARestartedPeer(t *testing.T) {
	lnA, lnB := listenLoopback(t), listenLoopback(t)
	addrA, addrB := lnA.Addr().String(), lnB.Addr().String()
	trA := NewTransport(TransportConfig{ClusterID: 7, NodeID: 1, Listener: lnA, Peers: map[uint64]string{2: addrB}})
	defer trA.Close()
	trB := NewTransport(TransportConfig{ClusterID: 7, NodeID: 2, Listener: lnB, Peers: map[uint64]string{1: addrA}})

	msg := func(term uint64) *raftpb.Message {
		return &raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(1), To: proto.Uint64(2), Term: proto.Uint64(term)}
	}
	receive := func(tr *Transport, want uint64) {
		t.Helper()
		select {
		case m := <-tr.Inbound():
			if m.GetTerm() != want {
				t.Fatalf("received term %d first, want %d", m.GetTerm(), want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the message with term %d never arrived", want)
		}
	}
	trA.Send(msg(1))
	receive(trB, 1)

	// The peer's process ends and a new one listens on the same address.
	trB.Close()
	ln, err := net.Listen("tcp", addrB)
	if err != nil {
		t.Fatal(err)
	}
	trB = NewTransport(TransportConfig{ClusterID: 7, NodeID: 2, Listener: ln, Peers: map[uint64]string{1: addrA}})
	defer trB.Close()
	// Wait until node 1 has noticed that its stream ended (before the
	// change it noticed only when a write failed, after losing one).
	deadline := time.Now().Add(5 * time.Second)
	for dialled(trA, addrB) {
		if time.Now().After(deadline) {
			t.Fatal("node 1 kept its stream to the ended peer")
		}
		time.Sleep(10 * time.Millisecond)
	}
	trA.Send(msg(2))
	receive(trB, 2)
}

// dialled reports whether tr holds a stream it dialled to addr.
func dialled(tr *Transport, addr string) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for c := range tr.conns {
		if c.RemoteAddr().String() == addr {
			return true
		}
	}
	return false
}

// TestTransportIdleStreamSendsItsHello dials two peers that have nothing to
// say to each other (two followers do not message each other) and checks
// that neither refuses the other's stream: the hello goes out when the
// stream is dialled, not with its first message, so a receiver waiting
// helloTimeout for it does not close an idle peer's stream as one that
// "sent no hello" (doc.go, "Transport"). Real TCP on 127.0.0.1.
func TestTransportIdleStreamSendsItsHello(t *testing.T) {
	lnA, lnB := listenLoopback(t), listenLoopback(t)
	addrA, addrB := lnA.Addr().String(), lnB.Addr().String()
	trA := NewTransport(TransportConfig{ClusterID: 7, NodeID: 1, Listener: lnA, Peers: map[uint64]string{2: addrB}})
	defer trA.Close()
	trB := NewTransport(TransportConfig{ClusterID: 7, NodeID: 2, Listener: lnB, Peers: map[uint64]string{1: addrA}})
	defer trB.Close()
	time.Sleep(helloTimeout + time.Second)
	for _, tr := range []*Transport{trA, trB} {
		if n := tr.Stats().ConnsRejected.Load(); n != 0 {
			t.Errorf("node %d refused %d streams of an idle peer", tr.cfg.NodeID, n)
		}
	}
	// The idle streams still carry a message.
	trA.Send(&raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(1), To: proto.Uint64(2), Term: proto.Uint64(1)})
	select {
	case <-trB.Inbound():
	case <-time.After(5 * time.Second):
		t.Fatal("the message on the idle stream never arrived")
	}
}

// TestTransportBoundsStreamsThatSendNoHello: connections to the Raft port
// that send nothing (anyone who can reach the port may open them by the
// thousand) are held at most helloPendingMax at once: one more closes the
// one that has waited longest, counted as refused, and a peer, whose hello
// comes as it connects, still gets its messages through while they are
// held (doc.go, "Transport"). Real TCP on 127.0.0.1; the hello timeout is
// an hour, so only the bound closes a silent connection.
func TestTransportBoundsStreamsThatSendNoHello(t *testing.T) {
	lnA, lnB := listenLoopback(t), listenLoopback(t)
	addrA, addrB := lnA.Addr().String(), lnB.Addr().String()
	var logs lockedbuf.Buffer
	trB := NewTransport(TransportConfig{ClusterID: 7, NodeID: 2, Listener: lnB, Peers: map[uint64]string{1: addrA},
		HelloTimeout: time.Hour, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer trB.Close()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addrB)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10 s", what)
			}
		}
	}
	pending := func() int {
		trB.mu.Lock()
		defer trB.mu.Unlock()
		return len(trB.pending)
	}
	for range helloPendingMax + 8 {
		dial()
	}
	waitFor("the silent connections accepted", func() bool { return trB.Stats().ConnsRejected.Load() == 8 })
	if n := pending(); n != helloPendingMax {
		t.Fatalf("%d connections wait for their hello, want %d", n, helloPendingMax)
	}

	// A peer's stream gets through: it closes one more silent connection.
	trA := NewTransport(TransportConfig{ClusterID: 7, NodeID: 1, Listener: lnA, Peers: map[uint64]string{2: addrB}})
	defer trA.Close()
	trA.Send(&raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(1), To: proto.Uint64(2), Term: proto.Uint64(1)})
	select {
	case <-trB.Inbound():
	case <-time.After(10 * time.Second):
		t.Fatal("the peer's message never arrived past the silent connections")
	}
	waitFor("the silent connection closed for the peer's", func() bool { return trB.Stats().ConnsRejected.Load() == 9 })
	// One line for them all: a flood is not a line per connection.
	waitFor("a silent connection logged", func() bool { return strings.Contains(logs.String(), "no hello") })
	if n := strings.Count(logs.String(), "no hello"); n != 1 {
		t.Fatalf("%d log lines for the silent connections, want 1:\n%s", n, logs.String())
	}
}

// TestTransportLogsSilentStreamsOnce: streams that send no hello within
// the hello timeout, or end before it, are one kind of closed stream in
// the log, whatever their addresses: the network error named them, so
// each was a kind of its own and a flood of them a line each (doc.go,
// "Transport"). Real TCP on 127.0.0.1.
func TestTransportLogsSilentStreamsOnce(t *testing.T) {
	ln := listenLoopback(t)
	var logs lockedbuf.Buffer
	tr := NewTransport(TransportConfig{ClusterID: 7, NodeID: 2, Listener: ln, HelloTimeout: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	closeTr := sync.OnceFunc(func() { tr.Close() })
	defer closeTr()
	for i := range 6 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			c.Close() // ends before its hello
		} else {
			t.Cleanup(func() { c.Close() }) // sends nothing until the timeout
		}
	}
	for deadline := time.Now().Add(10 * time.Second); tr.Stats().ConnsRejected.Load() < 6; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 6 silent streams refused in 10 s", tr.Stats().ConnsRejected.Load())
		}
	}
	closeTr() // its streams' goroutines, which log, have returned
	if timeouts, ends := strings.Count(logs.String(), "no hello: i/o timeout"), strings.Count(logs.String(), "no hello: EOF"); timeouts != 1 || ends != 1 {
		t.Fatalf("%d lines for the silent streams, %d for those that ended, want 1 each:\n%s", timeouts, ends, logs.String())
	}
}

// TestStreamTrackedAfterCloseIsClosed: a stream the accept loop (or a dial)
// hands over once Close has passed over the streams is closed at once. One
// accepted as Close ran stayed open: its peer's good hello had cleared the
// read deadline, so its reader waited on the peer, and Close on the reader,
// for ever.
func TestStreamTrackedAfterCloseIsClosed(t *testing.T) {
	tr := NewTransport(TransportConfig{ClusterID: 7, NodeID: 2, Listener: listenLoopback(t), Peers: map[uint64]string{}})
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	ln := listenLoopback(t)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	tr.track(server, true)
	server.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := server.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read of a stream tracked after Close: %v, want it closed", err)
	}
	tr.mu.Lock()
	n := len(tr.conns)
	tr.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d streams tracked after Close, want none", n)
	}
}
