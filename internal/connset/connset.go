package connset

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Set is the connections a server is serving.
type Set struct {
	max    int
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]time.Time // since when each has waited for a request; zero: serving one
	closed bool

	// Counted before the connection is closed, so a peer that sees its
	// connection refused also sees the count.
	accepted, refused, evicted atomic.Uint64
}

// New returns a set that serves at most max connections at once.
func New(max int) *Set {
	return &Set{max: max, conns: make(map[net.Conn]time.Time, max)}
}

// Serve runs serve(c) on a goroutine of its own and closes c when it
// returns. When Max connections are being served it closes the one that has
// waited longest for a request (see Waiting) to make room; with none
// waiting, or when the set is closed, it refuses c (closes it and returns
// false).
func (s *Set) Serve(c net.Conn, serve func(net.Conn)) bool {
	s.mu.Lock()
	if !s.closed && len(s.conns) >= s.max {
		s.evictLocked()
	}
	if s.closed || len(s.conns) >= s.max {
		s.mu.Unlock()
		s.refused.Add(1)
		c.Close()
		return false
	}
	s.conns[c] = time.Time{}
	s.accepted.Add(1)
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		serve(c)
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	return true
}

// Close closes every connection being served and refuses new ones.
func (s *Set) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
}

// evictLocked closes the connection that has waited longest for a request,
// if one waits.
func (s *Set) evictLocked() {
	var oldest net.Conn
	var since time.Time
	for c, t := range s.conns {
		if !t.IsZero() && (oldest == nil || t.Before(since)) {
			oldest, since = c, t
		}
	}
	if oldest != nil {
		delete(s.conns, oldest) // its goroutine ends once its read fails
		s.evicted.Add(1)
		oldest.Close()
	}
}

// Waiting marks c as waiting for its client's next request (true), which
// makes it the first to be closed for a new connection when the set is full,
// or as serving one (false). A server that never calls it keeps every
// connection until it ends.
func (s *Set) Waiting(c net.Conn, waiting bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c]; !ok {
		return
	}
	t := time.Time{}
	if waiting {
		t = time.Now()
	}
	s.conns[c] = t
}

// WaitingConns counts the connections marked waiting for a request.
func (s *Set) WaitingConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, t := range s.conns {
		if !t.IsZero() {
			n++
		}
	}
	return n
}

// Wait waits until every serving goroutine has returned.
func (s *Set) Wait() { s.wg.Wait() }

// Accepted counts the connections Serve started serving.
func (s *Set) Accepted() uint64 { return s.accepted.Load() }

// Refused counts the connections Serve refused; a refused connection is
// counted before it is closed.
func (s *Set) Refused() uint64 { return s.refused.Load() }

// Evicted counts the waiting connections Serve closed to make room.
func (s *Set) Evicted() uint64 { return s.evicted.Load() }
