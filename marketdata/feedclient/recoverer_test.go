package feedclient

import (
	"bufio"
	"net"
	"testing"
	"time"

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
