package connset

import (
	"net"
	"testing"
	"time"
)

// TestBoundAndClose serves real loopback connections: the set serves up to
// its bound and refuses the next (closed at once), frees a place when a
// connection ends, and Close ends the served connections and refuses any
// after it.
func TestBoundAndClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := New(2)
	started := make(chan struct{}, 8)
	// hold keeps a connection until its client closes it (or Close does).
	hold := func(c net.Conn) {
		started <- struct{}{}
		var b [1]byte
		_, _ = c.Read(b[:])
	}
	accept := func() net.Conn {
		t.Helper()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	closedByServer := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var b [1]byte
		_, err := c.Read(b[:])
		return err != nil
	}
	c1, c2, c3 := dial(), dial(), dial()
	if !s.Serve(accept(), hold) || !s.Serve(accept(), hold) {
		t.Fatal("refused a connection within the bound")
	}
	<-started
	<-started
	if s.Serve(accept(), hold) {
		t.Fatal("served a connection beyond the bound")
	}
	if !closedByServer(c3) {
		t.Fatal("the refused connection is still open")
	}
	if s.Accepted() != 2 || s.Refused() != 1 { // counted before the close its peer saw
		t.Fatalf("accepted %d refused %d, want 2 and 1", s.Accepted(), s.Refused())
	}
	c1.Close() // its serving function returns: a place is free again
	deadline := time.Now().Add(10 * time.Second)
	for {
		c4 := dial()
		if s.Serve(accept(), hold) {
			<-started
			s.Close()
			if !closedByServer(c2) || !closedByServer(c4) {
				t.Fatal("Close left a served connection open")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no place freed after a connection ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Wait()
	dial()
	if s.Serve(accept(), hold) {
		t.Fatal("served a connection after Close")
	}
}
