package marketdata

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// requestFrame is one TCP frame of the recovery protocol: an unsequenced
// packet holding msgs, each an SBE message (its header first).
func requestFrame(msgs ...[]byte) []byte {
	pkt := make([]byte, packet.HeaderSize)
	binary.LittleEndian.PutUint16(pkt, ChannelDefault)
	binary.LittleEndian.PutUint16(pkt[2:], uint16(len(msgs)))
	for _, m := range msgs {
		pkt = binary.LittleEndian.AppendUint16(pkt, uint16(len(m)))
		pkt = append(pkt, m...)
	}
	return append(binary.LittleEndian.AppendUint16(nil, uint16(len(pkt))), pkt...)
}

func retransmitMsg(id, from uint64, count uint32) []byte {
	buf := make([]byte, mdsbe.RetransmitRequestEncodedLength)
	var m mdsbe.RetransmitRequest
	_ = m.WrapEncode(buf, 0)
	m.SetRequestID(id)
	m.SetFromSeq(from)
	m.SetCount(count)
	return buf
}

func snapshotMsg(id uint64, instrumentID uint32) []byte {
	buf := make([]byte, mdsbe.SnapshotRequestEncodedLength)
	var m mdsbe.SnapshotRequest
	_ = m.WrapEncode(buf, 0)
	m.SetRequestID(id)
	m.SetInstrumentID(instrumentID)
	return buf
}

// readRequests reads a request stream as the recovery service must
// (marketdata doc, "Feed"): frames of at most requestFrameBytesMax bytes,
// each an unsequenced packet of one or more RetransmitRequest and
// SnapshotRequest messages. It returns the ids of the requests to answer,
// in order, the part of the stream the service reads (up to the first
// frame that is not such a packet, whose requests are not answered, or
// the whole stream), and whether it ends at such a frame.
func readRequests(stream []byte) (ids []uint64, read []byte, malformed bool) {
	p := 0
	for len(stream)-p >= packet.LengthPrefixSize {
		size := int(binary.LittleEndian.Uint16(stream[p:]))
		if size > requestFrameBytesMax {
			return ids, stream[:p+packet.LengthPrefixSize], true // the service reads no further
		}
		if len(stream)-p-packet.LengthPrefixSize < size {
			break // cut short: the service waits for the rest, then sees the end
		}
		pkt := stream[p+packet.LengthPrefixSize : p+packet.LengthPrefixSize+size]
		p += packet.LengthPrefixSize + size
		var rd packet.Reader
		if rd.Reset(pkt) != nil || rd.Seq != 0 || rd.Count == 0 {
			return ids, stream[:p], true
		}
		var frameIDs []uint64
		for msg, ok := rd.Next(); ok; msg, ok = rd.Next() {
			if m, ok := mdsbe.DecodeRetransmitRequest(msg); ok {
				frameIDs = append(frameIDs, m.RequestID())
			} else if m, ok := mdsbe.DecodeSnapshotRequest(msg); ok {
				frameIDs = append(frameIDs, m.RequestID())
			} else {
				return ids, stream[:p], true
			}
		}
		ids = append(ids, frameIDs...)
	}
	return ids, stream, false
}

// exchange sends stream to the recovery service on a new connection,
// closes its sending side, and reads the answers until the service closes
// the connection: the ids of the requests answered (by a RetransmitEnd,
// RetransmitReject, SnapshotEnd or SnapshotReject), in order. Every frame
// must be a whole packet.
func exchange(t *testing.T, addr string, stream []byte) []uint64 {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	tcp := conn.(*net.TCPConn)
	// Closed with a reset once done: a fuzzing run makes connections by
	// the thousand, and none is left in TIME_WAIT to run out of ports.
	defer func() { _ = tcp.SetLinger(0); tcp.Close() }()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	sent := make(chan error, 1)
	go func() { // the answers are read meanwhile: a long one would fill both ways
		_, err := conn.Write(stream)
		if err == nil {
			err = tcp.CloseWrite()
		}
		sent <- err
	}()
	var answered []uint64
	r := bufio.NewReader(conn)
	buf := make([]byte, packet.FrameBytesMax)
	for {
		pkt, err := packet.ReadFrame(r, buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading the answers: %v (answered so far %v)", err, answered)
		}
		var rd packet.Reader
		if err := rd.Reset(pkt); err != nil {
			t.Fatalf("an answer is no packet: %v", err)
		}
		if rd.Seq != 0 {
			continue // a retransmitted packet
		}
		for msg, ok := rd.Next(); ok; msg, ok = rd.Next() {
			if m, ok := mdsbe.DecodeRetransmitEnd(msg); ok {
				answered = append(answered, m.RequestID())
			} else if m, ok := mdsbe.DecodeRetransmitReject(msg); ok {
				answered = append(answered, m.RequestID())
			} else if m, ok := mdsbe.DecodeSnapshotEnd(msg); ok {
				answered = append(answered, m.RequestID())
			} else if m, ok := mdsbe.DecodeSnapshotReject(msg); ok {
				answered = append(answered, m.RequestID())
			}
		}
	}
	if err := <-sent; err != nil {
		// readRequests sends no more than the service reads, so it does
		// not close on unread bytes (a reset) before they are sent.
		t.Fatalf("sending the requests: %v", err)
	}
	return answered
}

// recoveryFixture is a running feed with a 16-packet window, wrapped, for
// requests over real TCP.
func recoveryFixture(tb testing.TB) *feedFixture {
	tb.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() }) // nobody reads the datagrams
	fx := newFeedFixture(tb, conn.LocalAddr().String(), func(c *FeedConfig) {
		c.Recovery.WindowPackets = 16
		c.Recovery.RetransmitCountMax = 500
		c.HeartbeatInterval = time.Hour
	})
	fx.run(newVenueSim(tb, 3), 400)
	return fx
}

// TestRecoveryFrameWithAMalformedMessage: a request frame whose requests
// are followed by a message that is no request closes the connection
// without an answer to any of them (marketdata doc, "Feed"), and counts
// none as served; it was served up to the bad message, and what the write
// buffer let out of the answers reached the client before the connection
// closed: retransmitted packets without their RetransmitEnd.
func TestRecoveryFrameWithAMalformedMessage(t *testing.T) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close() // nobody reads the datagrams
	fx := newFeedFixture(t, conn.LocalAddr().String(), func(c *FeedConfig) { c.HeartbeatInterval = time.Hour })
	fx.run(newVenueSim(t, 3), 400)
	oldest, next := fx.feed.win.bounds()
	var msgs [][]byte
	for id := range uint64(12) { // the whole feed each: the answers pass the write buffer
		msgs = append(msgs, retransmitMsg(id+1, oldest, uint32(next-oldest)))
	}
	bad := requestFrame(append(msgs, make([]byte, mdsbe.MessageHeaderSize))...)
	if len(bad) > packet.LengthPrefixSize+requestFrameBytesMax {
		t.Fatalf("the frame is %d bytes, over the service's bound", len(bad))
	}
	before := fx.feed.Stats().Recovery

	tcp, err := net.Dial("tcp", fx.feed.RecoveryAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	_ = tcp.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := tcp.Write(bad); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(tcp)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("a malformed frame was answered with %d bytes", len(got))
	}
	after := fx.feed.Stats().Recovery
	if after.ProtocolErrors != before.ProtocolErrors+1 || after.Retransmits != before.Retransmits ||
		after.RetransmitsRejected != before.RetransmitsRejected {
		t.Fatalf("stats before %+v, after %+v", before, after)
	}

	// The same requests in a frame of their own are each answered.
	if ids, _, malformed := readRequests(requestFrame(msgs...)); malformed || len(ids) != len(msgs) {
		t.Fatalf("readRequests: %v %v", ids, malformed)
	}
	if answered := exchange(t, fx.feed.RecoveryAddr().String(), requestFrame(msgs...)); len(answered) != len(msgs) {
		t.Fatalf("answered %v", answered)
	}
}

// FuzzRecoveryRequests: whatever bytes a client sends the recovery
// service over TCP, the venue does not panic, answers each request of a
// well-formed frame once and in order (an answer or a refusal, a rate
// limit included), and closes the connection at the first frame that is
// not one, answering none of its requests and counting a protocol error
// (marketdata doc, "Feed").
func FuzzRecoveryRequests(f *testing.F) {
	fx := recoveryFixture(f)
	oldest, next := fx.feed.win.bounds()
	addr := fx.feed.RecoveryAddr().String()
	f.Add(requestFrame(retransmitMsg(1, oldest, uint32(next-oldest))))
	f.Add(requestFrame(snapshotMsg(2, 0)))
	f.Add(append(requestFrame(retransmitMsg(3, next-1, 1), snapshotMsg(4, 2)), requestFrame(retransmitMsg(5, 0, 1))...))
	f.Add(requestFrame(retransmitMsg(6, ^uint64(0), 2), retransmitMsg(7, oldest-1, 1), retransmitMsg(8, next, 1)))
	f.Add(requestFrame(snapshotMsg(9, 99), retransmitMsg(10, oldest, 501)))
	f.Add(requestFrame(retransmitMsg(11, oldest, 1), make([]byte, mdsbe.MessageHeaderSize)))
	f.Add(requestFrame())
	f.Add([]byte{0, 0})
	f.Add([]byte{0xff, 0xff, 1})
	f.Add(requestFrame(snapshotMsg(12, 1))[:20])
	f.Fuzz(func(t *testing.T, stream []byte) {
		want, read, malformed := readRequests(stream)
		before := fx.feed.Stats().Recovery.ProtocolErrors
		got := exchange(t, addr, read)
		if !slices.Equal(got, want) {
			t.Fatalf("requests %v answered as %v", want, got)
		}
		errs := fx.feed.Stats().Recovery.ProtocolErrors - before
		if (errs == 1) != malformed || errs > 1 {
			t.Fatalf("%d protocol errors counted, malformed %v", errs, malformed)
		}
	})
}
