package httpdrain

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Tracker counts a server's open connections.
type Tracker struct {
	mu   sync.Mutex
	open map[net.Conn]struct{}
}

// Track has srv count its connections (it sets srv.ConnState, calling
// the one set before). Call it before srv serves.
func Track(srv *http.Server) *Tracker {
	t := &Tracker{open: map[net.Conn]struct{}{}}
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		t.mu.Lock()
		switch st {
		case http.StateNew:
			t.open[c] = struct{}{}
		case http.StateClosed, http.StateHijacked:
			delete(t.open, c)
		}
		t.mu.Unlock()
		if prev != nil {
			prev(c, st)
		}
	}
	return t
}

func (t *Tracker) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open)
}

// Drain stops srv once the connections it accepted are closed, waiting
// until deadline at most, then closes srv (and what is left open). Its
// listener must be closed already, and the server must not keep
// connections alive (http.Server.SetKeepAlivesEnabled(false)): a
// connection then closes once its call is answered.
func Drain(srv *http.Server, t *Tracker, deadline time.Time) {
	for t.count() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	_ = srv.Close()
}
