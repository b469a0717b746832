package cluster

import (
	"net"
	"testing"
	"time"

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
