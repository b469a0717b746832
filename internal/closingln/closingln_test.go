package closingln

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestListenClosesAndCounts dials the listener twice: each connection reads
// EOF (the peer closed it) and the count follows.
func TestListenClosesAndCounts(t *testing.T) {
	addr, accepted := Listen(t)
	for i := 1; i <= 2; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("read from a closed connection: %v, want EOF", err)
		}
		c.Close()
		if got := accepted(); got != i {
			t.Fatalf("accepted %d, want %d", got, i)
		}
	}
}
