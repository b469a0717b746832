package closingln

import (
	"net"
	"sync/atomic"
	"testing"
)

// Listen starts the listener and returns its address and a function that
// gives how many connections it has accepted so far. A failure to listen
// fails the test (t.Fatal).
func Listen(t testing.TB) (addr string, accepted func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().String(), func() int { return int(n.Load()) }
}
