package cluster

import (
	"encoding/binary"
	"hash/crc32"
	"net"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// fuzzTransport is node 1 of cluster 7 with peer 2, without goroutines: the
// fuzz target calls readStream itself.
func fuzzTransport() *Transport {
	return &Transport{cfg: TransportConfig{ClusterID: 7, NodeID: 1}, inbound: make(chan *raftpb.Message, inboundMessagesMax),
		peers: map[uint64]*peerLink{2: {id: 2}}, closed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
}

// frameOf frames a payload as a peer's stream does.
func frameOf(payload []byte) []byte {
	var h [wireHeaderBytes]byte
	binary.LittleEndian.PutUint32(h[:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[4:], crc32.Checksum(payload, castagnoli))
	return append(h[:], payload...)
}

// pipeStream is the receiving end of a connection on which a peer writes
// stream and closes.
func pipeStream(stream []byte) net.Conn {
	client, server := net.Pipe()
	go func() {
		client.SetWriteDeadline(time.Now().Add(5 * time.Second))
		client.Write(stream)
		client.Close()
	}()
	return server
}

// FuzzReadStream feeds a peer's stream to readStream: a valid hello from
// node 2, then the fuzz input, as raw bytes (odd inputs) or as the payload
// of one well-framed message (even inputs), so the fuzzer reaches both the
// framing and the Raft message decoder. Whatever the bytes, the reader must
// end with an error or at EOF, never panic, and only deliver messages from
// node 2 to node 1.
func FuzzReadStream(f *testing.F) {
	ok, _ := proto.Marshal(&raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(2), To: proto.Uint64(1), Term: proto.Uint64(3)})
	f.Add(ok)
	f.Add(append([]byte{1}, frameOf(ok)...))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, input []byte) {
		tr := fuzzTransport()
		helloer := &Transport{cfg: TransportConfig{ClusterID: 7, NodeID: 2}}
		stream := helloer.hello(1)
		if len(input)%2 == 0 {
			stream = append(stream, frameOf(input)...)
		} else {
			stream = append(stream, input...)
		}
		server := pipeStream(stream)
		from, _ := tr.readStream(server)
		server.Close()
		if from != 2 {
			t.Fatalf("a valid hello from node 2 read as node %d", from)
		}
		for len(tr.inbound) > 0 {
			m := <-tr.inbound
			if m.GetFrom() != 2 || m.GetTo() != 1 {
				t.Fatalf("delivered a message from %d to %d", m.GetFrom(), m.GetTo())
			}
		}
	})
}
