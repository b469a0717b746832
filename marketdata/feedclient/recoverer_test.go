package feedclient

import (
	"bufio"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/closingln"
	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// A retransmission request on a kept connection that the service closed
// meanwhile (it restarted, or a cluster's new leader took the address) is
// sent once more on a new connection instead of failing.
func TestRetransmitRedialsAKeptConnectionOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan int, 4) // requests answered per connection
	go func() {
		for conn := 0; conn < 2; conn++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r, w := bufio.NewReader(c), bufio.NewWriter(c)
			buf := make([]byte, packet.FrameBytesMax)
			var rd packet.Reader
			pkt, err := packet.ReadFrame(r, buf)
			if err == nil {
				err = rd.Reset(pkt)
			}
			msg, ok := rd.Next()
			if err != nil || !ok {
				c.Close()
				return
			}
			var req mdsbe.RetransmitRequest
			_ = req.WrapDecode(msg, 0)
			answer := make([]byte, packet.HeaderSize+packet.LengthPrefixSize+mdsbe.RetransmitEndEncodedLength)
			var h mdsbe.PacketHeader
			_ = h.Wrap(answer, 0)
			h.SetMessageCount(1)
			answer[packet.HeaderSize] = byte(mdsbe.RetransmitEndEncodedLength)
			var end mdsbe.RetransmitEnd
			_ = end.WrapEncode(answer, packet.HeaderSize+packet.LengthPrefixSize)
			end.SetRequestID(req.RequestID())
			_ = packet.WriteFrame(w, answer)
			_ = w.Flush()
			served <- conn
			c.Close() // the service goes away after one answer
		}
	}()
	rec := NewTCPRecoverer(ln.Addr().String(), 1, 2*time.Second)
	defer rec.Close()
	for i := range 2 {
		if reason, err := rec.Retransmit(1, 1, func([]byte) error { return nil }); err != nil || reason != 0 {
			t.Fatalf("request %d: reason %d, err %v", i+1, reason, err)
		}
	}
	if first, second := <-served, <-served; first != 0 || second != 1 {
		t.Fatalf("answered on connections %d and %d, want 0 then 1", first, second)
	}
}

// A request whose addresses are all services that close each connection
// unanswered (a cluster with no leader, or its leader's address left out)
// tries each once, at once, and fails saying that each is not serving
// (NoneServing), rather than with the EOF or reset it met at the first.
// Where one of them refuses the connection (a node down), that is said,
// and it is not NoneServing.
func TestRecoveryAddressesNotServing(t *testing.T) {
	a, aAccepted := closingln.Listen(t)
	b, bAccepted := closingln.Listen(t)
	rec := NewTCPRecoverer(a+","+b, 1, 2*time.Second)
	defer rec.Close()
	_, err := rec.Snapshot(0, func([]byte) error { return nil })
	var addrs *RecoveryAddrsError
	if !NoneServing(err) || !errors.As(err, &addrs) || len(addrs.Errs) != 2 {
		t.Fatalf("snapshot from two services not serving: %v, want NoneServing naming both", err)
	}
	for _, addr := range []string{a, b} {
		if want := "the node at " + addr + " is not serving market data"; !strings.Contains(err.Error(), want) {
			t.Fatalf("snapshot from two services not serving: %q, want %q in it", err, want)
		}
	}
	// Each closed the connection the client met, and counts it first.
	if aAccepted() == 0 || bAccepted() == 0 {
		t.Fatalf("connections taken: %d and %d, want each address tried", aAccepted(), bAccepted())
	}
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downAddr := down.Addr().String()
	down.Close()
	rec2 := NewTCPRecoverer(a+","+downAddr, 1, 2*time.Second)
	defer rec2.Close()
	_, err = rec2.Retransmit(1, 1, func([]byte) error { return nil })
	if NoneServing(err) || !strings.Contains(err.Error(), "not serving market data") || !strings.Contains(err.Error(), downAddr) {
		t.Fatalf("retransmission from a service not serving and a node down: %v, want both said, not NoneServing", err)
	}
}
