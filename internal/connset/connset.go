package connset

import (
	"net"
	"sync"
	"sync/atomic"
)

// Set is the connections a server is serving.
type Set struct {
	max    int
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool

	// Counted before the connection is closed, so a peer that sees its
	// connection refused also sees the count.
	accepted, refused atomic.Uint64
}

// New returns a set that serves at most max connections at once.
func New(max int) *Set {
	return &Set{max: max, conns: make(map[net.Conn]struct{}, max)}
}

// Serve runs serve(c) on a goroutine of its own and closes c when it
// returns. It refuses c (closes it and returns false) when Max connections
// are being served or the set is closed.
func (s *Set) Serve(c net.Conn, serve func(net.Conn)) bool {
	s.mu.Lock()
	if s.closed || len(s.conns) >= s.max {
		s.mu.Unlock()
		s.refused.Add(1)
		c.Close()
		return false
	}
	s.conns[c] = struct{}{}
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

// Wait waits until every serving goroutine has returned.
func (s *Set) Wait() { s.wg.Wait() }

// Accepted counts the connections Serve started serving.
func (s *Set) Accepted() uint64 { return s.accepted.Load() }

// Refused counts the connections Serve refused; a refused connection is
// counted before it is closed.
func (s *Set) Refused() uint64 { return s.refused.Load() }
