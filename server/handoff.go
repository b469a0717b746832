package server

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fixvenue/fixvenue/internal/httpbound"
	"github.com/fixvenue/fixvenue/internal/httpdrain"
	"github.com/fixvenue/fixvenue/ops"
)

// sharedListener is a cluster node's listening socket (admin API, status)
// for the life of its process and across its re-execution: the servers
// that answer on it in turn (a follower's, the venue's, a deposed
// leader's) take connections through views, and closing a view, which
// http.Server.Shutdown does, stops that server from accepting without
// closing the socket. Closing a listening socket resets the connections
// the kernel completed and queued for it but nobody accepted yet, and a
// call dialled between a close and the next bind is refused: with one
// socket from start to exit, and handed to the re-executed process
// (execFile), no call ever meets either (docs/ARCHITECTURE.md, "Losing
// leadership").
type sharedListener struct {
	ln    *net.TCPListener
	conns chan net.Conn // accepted, waiting for an open view
	quit  chan struct{} // closed by stop
	done  chan struct{} // closed when accept returns
	once  sync.Once
}

// newSharedListener takes over ln and starts accepting on it.
func newSharedListener(ln *net.TCPListener) *sharedListener {
	s := &sharedListener{ln: ln, conns: make(chan net.Conn), quit: make(chan struct{}), done: make(chan struct{})}
	go s.accept()
	return s
}

// listenShared binds addr, or takes inherited (a socket the process
// before the re-execution listened on) when it listens there already.
func listenShared(addr string, inherited net.Listener) (*sharedListener, error) {
	if inherited != nil {
		if tcp, ok := inherited.(*net.TCPListener); ok && sameAddr(addr, tcp.Addr()) {
			return newSharedListener(tcp), nil
		}
		inherited.Close() // the configuration names another address now
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return newSharedListener(l.(*net.TCPListener)), nil
}

// sortInherited gives each configured address (by the name of what serves
// there: InheritedStatus, InheritedAdmin; "" when off) the socket handed
// over that listens there, the one handed under the same name first, and
// closes the others: the configuration may have changed across the
// restart, and a socket kept at an address now another's would make its
// bind fail.
func sortInherited(inherited map[string]net.Listener, addrs map[string]string) map[string]net.Listener {
	out := map[string]net.Listener{}
	left := maps.Clone(inherited)
	take := func(name, addr string, l net.Listener) bool {
		tcp, ok := l.(*net.TCPListener)
		if addr == "" || out[name] != nil || !ok || !sameAddr(addr, tcp.Addr()) {
			return false
		}
		out[name] = l
		return true
	}
	for name, addr := range addrs {
		if l := left[name]; l != nil && take(name, addr, l) {
			delete(left, name)
		}
	}
	for name, addr := range addrs {
		for from, l := range left {
			if take(name, addr, l) {
				delete(left, from)
				break
			}
		}
	}
	for _, l := range left {
		l.Close()
	}
	return out
}

// sameAddr says whether a socket bound at got serves the configured addr
// (port 0: the one the system chose before the re-execution).
func sameAddr(addr string, got net.Addr) bool {
	want, err := net.ResolveTCPAddr("tcp", addr)
	g, ok := got.(*net.TCPAddr)
	if err != nil || !ok {
		return false
	}
	return (want.Port == 0 || want.Port == g.Port) && (want.IP == nil || want.IP.IsUnspecified() && g.IP.IsUnspecified() || want.IP.Equal(g.IP))
}

// accept hands every connection to an open view, one at a time: while no
// view is open, the one in hand waits, and the others wait in the
// kernel's queue.
func (s *sharedListener) accept() {
	defer close(s.done)
	backoff := 5 * time.Millisecond
	for {
		c, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.quit:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors or the like: as http.Server does, wait
			// and try again rather than give the socket up.
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		select {
		case s.conns <- c:
		case <-s.quit:
			// Stopping: the view of the server that answers last is still
			// open (ClusterNode.PrepareRestart), so it takes this one.
			select {
			case s.conns <- c:
			case <-time.After(time.Second):
				c.Close()
			}
			return
		}
	}
}

// view is a net.Listener for one server; its Close leaves the socket open.
func (s *sharedListener) view() *listenerView {
	return &listenerView{s: s, closed: make(chan struct{})}
}

// stop ends accepting, once the connection in hand went to an open view,
// leaving the rest in the kernel's queue; wait at most timeout.
func (s *sharedListener) stop(timeout time.Duration) {
	s.once.Do(func() {
		close(s.quit)
		_ = s.ln.SetDeadline(time.Unix(1, 0)) // wakes Accept
	})
	select {
	case <-s.done:
	case <-time.After(timeout):
	}
}

// execFile returns the socket's descriptor for the process that replaces
// this one by exec: the same descriptor number, no longer closed on exec.
// Call it after stop.
func (s *sharedListener) execFile() (uintptr, error) { return execFile(s.ln) }

// execFile clears ln's close-on-exec flag and returns its descriptor, for
// the process that replaces this one.
func execFile(ln *net.TCPListener) (uintptr, error) {
	raw, err := ln.SyscallConn()
	if err != nil {
		return 0, err
	}
	var fd uintptr
	var ferr error
	if err := raw.Control(func(d uintptr) {
		fd = d
		_, ferr = unix.FcntlInt(d, unix.F_SETFD, 0)
	}); err != nil {
		return 0, err
	}
	if ferr != nil {
		return 0, fmt.Errorf("clear close-on-exec: %w", ferr)
	}
	return fd, nil
}

// close closes the socket (the node stops).
func (s *sharedListener) close() {
	s.once.Do(func() { close(s.quit) })
	_ = s.ln.Close()
	<-s.done
}

func (s *sharedListener) Addr() net.Addr { return s.ln.Addr() }

type listenerView struct {
	s      *sharedListener
	closed chan struct{}
	mu     sync.Mutex
	// isClosed is Close's mark; inAccept is set while Accept runs, and
	// handed while the connection it returned last may not be in its
	// server's hands yet (http.Server.Serve registers it, then calls
	// Accept again).
	isClosed, inAccept, handed bool
}

func (v *listenerView) Accept() (net.Conn, error) {
	v.mu.Lock()
	v.handed = false
	if v.isClosed {
		v.mu.Unlock()
		return nil, net.ErrClosed
	}
	v.inAccept = true
	v.mu.Unlock()
	var c net.Conn
	select {
	case c = <-v.s.conns:
	case <-v.closed:
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if c == nil {
		v.inAccept = false
		return nil, net.ErrClosed
	}
	// Taken as the view closed, it is still this server's to answer (its
	// stop waits until the server holds it, then drains it): handed to
	// another view, it could find none open (the last one closing once
	// the socket stopped accepting) and be reset.
	v.inAccept, v.handed = false, true
	return c, nil
}

// settle closes v and waits, until deadline at most, until every
// connection it gave is in its server's hands.
func (v *listenerView) settle(deadline time.Time) {
	v.Close()
	for !v.settled() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// settled says whether every connection v gave is in its server's hands.
func (v *listenerView) settled() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return !v.inAccept && !v.handed
}

func (v *listenerView) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.isClosed {
		v.isClosed = true
		close(v.closed)
	}
	return nil
}

func (v *listenerView) Addr() net.Addr { return v.s.ln.Addr() }

// viewServer is an http.Server that accepts on a view of a shared socket,
// one connection per call (keep-alives off).
type viewServer struct {
	srv   *http.Server
	view  *listenerView
	track *httpdrain.Tracker
}

// serve starts srv on a new view of s; wrap, when set, adds TLS.
func (s *sharedListener) serve(srv *http.Server, wrap func(net.Listener) (net.Listener, error)) (*viewServer, error) {
	// Bounded as the venue's admin listener is (ops.AdminConnsBeyondStreams):
	// connections that send no call hold nothing without bound.
	httpbound.Bound(srv, ops.AdminConnsBeyondStreams)
	vs := &viewServer{srv: srv, view: s.view(), track: httpdrain.Track(srv)}
	srv.SetKeepAlivesEnabled(false)
	var l net.Listener = vs.view
	if wrap != nil {
		var err error
		if l, err = wrap(l); err != nil {
			return nil, err
		}
	}
	go srv.Serve(l)
	return vs, nil
}

// stop stops the server once the calls it took are answered, waiting
// until deadline at most; the socket stays open. The view is closed
// first, and the server drained once it holds the last connection the
// view gave: one handed over meanwhile would be missed, and cut when the
// process is replaced. http.Server.Shutdown is not used: it drops a
// request it reads after it began, closing the connection unanswered.
func (vs *viewServer) stop(deadline time.Time) {
	vs.view.settle(deadline)
	httpdrain.Drain(vs.srv, vs.track, deadline)
}

// InheritedListener turns a descriptor a process passed across exec
// (sharedListener.execFile) into a listener again. A descriptor that is not
// one is refused and left alone, never closed: a value of
// FIXVENUE_CLUSTER_SOCKETS this process did not hand itself could name one
// the runtime or the process opened (the poller's: closing it crashes the
// process). Every descriptor Go opens is closed on exec; the handed ones
// alone are not, and they listen (docs/ARCHITECTURE.md, "Losing leadership").
func InheritedListener(fd uintptr, name string) (net.Listener, error) {
	flags, err := unix.FcntlInt(fd, unix.F_GETFD, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: descriptor %d: %w", name, fd, err)
	}
	if flags&unix.FD_CLOEXEC != 0 {
		return nil, fmt.Errorf("%s: descriptor %d is one this process opened, not one handed over across exec", name, fd)
	}
	if on, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || on != 1 {
		return nil, fmt.Errorf("%s: descriptor %d is not a listening socket", name, fd)
	}
	f := os.NewFile(fd, name)
	if f == nil {
		return nil, fmt.Errorf("%s: no descriptor %d", name, fd)
	}
	defer f.Close()
	return net.FileListener(f)
}
