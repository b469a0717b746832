package httpbound

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Counts are what Bound closed.
type Counts struct {
	mu    sync.Mutex
	conns map[net.Conn]time.Time // since when each has waited for a request; zero: serving one
	max   int

	evicted, refused atomic.Uint64
}

// Bound has srv hold at most max connections (it sets srv.ConnState,
// calling the one set before). Call it before srv serves.
func Bound(srv *http.Server, max int) *Counts {
	b := &Counts{conns: map[net.Conn]time.Time{}, max: max}
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		b.state(c, st)
		if prev != nil {
			prev(c, st)
		}
	}
	return b
}

func (b *Counts) state(c net.Conn, st http.ConnState) {
	var closing net.Conn
	b.mu.Lock()
	switch st {
	case http.StateNew:
		if len(b.conns) >= b.max {
			if closing = b.oldestWaitingLocked(); closing != nil {
				delete(b.conns, closing)
				b.evicted.Add(1)
			} else {
				closing = c
				b.refused.Add(1)
			}
		}
		if closing != c {
			b.conns[c] = time.Now()
		}
	case http.StateIdle:
		if _, ok := b.conns[c]; ok {
			b.conns[c] = time.Now()
		}
	case http.StateActive:
		if _, ok := b.conns[c]; ok {
			b.conns[c] = time.Time{}
		}
	case http.StateHijacked, http.StateClosed:
		delete(b.conns, c)
	}
	b.mu.Unlock()
	if closing != nil {
		// Outside the lock: a TLS connection's Close may write its
		// close_notify. The server's read fails, and it says StateClosed.
		closing.Close()
	}
}

// oldestWaitingLocked is the connection that has waited longest for a
// request (nil: none waits).
func (b *Counts) oldestWaitingLocked() net.Conn {
	var oldest net.Conn
	var since time.Time
	for c, at := range b.conns {
		if !at.IsZero() && (oldest == nil || at.Before(since)) {
			oldest, since = c, at
		}
	}
	return oldest
}

// Evicted counts the waiting connections closed to admit a new one.
func (b *Counts) Evicted() uint64 { return b.evicted.Load() }

// Refused counts the new connections closed because every one open was
// serving a request.
func (b *Counts) Refused() uint64 { return b.refused.Load() }

// Open is how many connections are open.
func (b *Counts) Open() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.conns)
}
