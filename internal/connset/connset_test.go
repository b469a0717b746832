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

// TestWaitingConnectionMakesRoom: at the bound, the connection that has
// waited longest for a request is closed to admit a new one, so idle
// clients cannot lock others out; one serving a request is never closed
// for it, and with none waiting the new one is refused.
func TestWaitingConnectionMakesRoom(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := New(2)
	pair := func() (client, server net.Conn) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		sc, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return c, sc
	}
	ready := make(chan struct{}, 8)
	serve := func(waiting bool) func(net.Conn) {
		return func(c net.Conn) {
			s.Waiting(c, waiting)
			ready <- struct{}{}
			var b [1]byte
			_, _ = c.Read(b[:])
		}
	}
	closedByServer := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var b [1]byte
		_, err := c.Read(b[:])
		return err != nil
	}
	busyC, busyS := pair()
	idleC, idleS := pair()
	s.Serve(busyS, serve(false))
	s.Serve(idleS, serve(true))
	<-ready
	<-ready
	newC, newS := pair()
	if !s.Serve(newS, serve(false)) || !closedByServer(idleC) || s.Evicted() != 1 {
		t.Fatalf("at the bound with one waiting: evicted %d", s.Evicted())
	}
	<-ready
	lastC, lastS := pair()
	if s.Serve(lastS, serve(false)) || !closedByServer(lastC) || s.Refused() != 1 {
		t.Fatal("with none waiting, a connection beyond the bound was served")
	}
	busyC.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := busyC.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("the serving connection was closed: %v", err)
	}
	_ = newC
	s.Close()
	s.Wait()
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
