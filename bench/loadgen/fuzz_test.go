package loadgen

import (
	"net"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/bench/loadmix"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// FuzzInbound feeds arbitrary bytes, as a venue could send them, through the
// receive path: framing, parsing and the session's handler. It must never
// panic or read out of bounds, and a frame it accepts must be whole.
func FuzzInbound(f *testing.F) {
	f.Add(fixclient.Build(fixclient.F(35, "8"), fixclient.F(34, "2"), fixclient.F(11, "RUN001O0000000000"), fixclient.F(150, "0")))
	f.Add(fixclient.Build(fixclient.F(35, "3"), fixclient.F(34, "2"), fixclient.F(45, "1"), fixclient.F(373, "5"), fixclient.F(58, "x")))
	f.Add(fixclient.Build(fixclient.F(35, "4"), fixclient.F(34, "9"), fixclient.F(123, "Y"), fixclient.F(36, "12")))
	f.Add(fixclient.Build(fixclient.F(35, "9"), fixclient.F(34, "3"), fixclient.F(11, "RUN001C0000000000"), fixclient.F(102, "1")))
	f.Add([]byte("8=FIX.4.4\x019=5\x0135=0\x0110=000\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, s := testRunner(t, loadmix.Mixed, 1)
		s.conn = discardConn{}
		for len(b) > 0 {
			n, err := frameLength(b)
			if err != nil || n == 0 {
				return
			}
			if n > len(b) || n < fixwire.TrailerBytes {
				t.Fatalf("frame length %d of %d bytes", n, len(b))
			}
			var m inbound
			if m.parse(b[:n]) == nil {
				_ = s.handle(b[:n], 1)
			}
			b = b[n:]
		}
	})
}

// discardConn is a connection that accepts every write, so the handler's
// answers (Heartbeat, gap fill, Logout) run in the fuzz target.
type discardConn struct{ net.Conn }

func (discardConn) Write(b []byte) (int, error)      { return len(b), nil }
func (discardConn) SetWriteDeadline(time.Time) error { return nil }
func (discardConn) Close() error                     { return nil }
