package server

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/gateway/fixstore"
)

// standbyFIX is the QuickFIX/Go acceptor a cluster follower builds and
// starts when it opens, so that a promotion does not wait for it
// (docs/ARCHITECTURE.md, "Cluster", "Becoming leader"): QuickFIX/Go v0.9.11 runs a
// session's loop only from the first whole second after Acceptor.Start,
// which would hold every logon to a new leader for up to a second. No connection reaches
// it while the node follows (the follower gate answers the FIX address);
// the new leader's server hands it the gateway's application and the FIX
// edge's listener (serve).
type standbyFIX struct {
	acceptor *quickfix.Acceptor
	stores   *fixstore.Factory
	// validators are the sessions' checks taken over from QuickFIX/Go
	// (gateway.TakeOverValidation), by configured session.
	validators []*gateway.Validator
	app        lateApp
	ln         *lateListener
	served     atomic.Bool
	// live is when the sessions' loops run: the first whole second after
	// Acceptor.Start, with a margin for the goroutines to be scheduled.
	live time.Time
}

// sessionLoopMargin is how long after the whole second waitLive waits.
const sessionLoopMargin = 20 * time.Millisecond

// startStandbyFIX builds and starts the acceptor for the FIX address addr
// (the bound port: QuickFIX/Go routes a connection by the port it arrived on).
func startStandbyFIX(cfg *config.Config, addr string, log *slog.Logger) (*standbyFIX, error) {
	stores, err := fixstore.NewFactory(fixstore.Options{Dir: filepath.Join(cfg.Venue.DataDir, "fixstore"), Logger: log,
		FileBytesMax: cfg.Journal.FIXStoreBytesMax})
	if err != nil {
		return nil, err
	}
	settings, validators, err := quickfixSettings(cfg, addr)
	if err != nil {
		stores.Close()
		return nil, err
	}
	f := &standbyFIX{stores: stores, ln: newLateListener(), validators: validators}
	if f.acceptor, err = quickfix.NewAcceptor(&f.app, stores, settings, slogLogFactory{log: log, arrivals: &f.app}); err != nil {
		stores.Close()
		return nil, fmt.Errorf("quickfix acceptor: %w", err)
	}
	f.acceptor.SetNewListenerCallback(func(string, *tls.Config) (net.Listener, error) { return f.ln, nil })
	if err := f.acceptor.Start(); err != nil {
		f.acceptor.Stop()
		stores.Close()
		return nil, fmt.Errorf("quickfix acceptor: %w", err)
	}
	f.live = time.Now().Truncate(time.Second).Add(time.Second + sessionLoopMargin)
	return f, nil
}

// waitLive returns once the sessions take logons: a node reports itself
// started only then, so that it can lead at once.
func (f *standbyFIX) waitLive() { time.Sleep(time.Until(f.live)) }

// serve makes the acceptor the leader's: messages go to app, and it accepts
// the connections of ln. Called once, by Server.Start.
func (f *standbyFIX) serve(app quickfix.Application, ln net.Listener) {
	f.served.Store(true)
	f.app.set(app)
	f.ln.bind(ln)
}

// close stops the acceptor of a node that never served (a server that
// served stops it and its stores in Server.Close).
func (f *standbyFIX) close() error {
	if f.served.Load() {
		return nil
	}
	f.acceptor.Stop()
	return f.stores.Close()
}

// lateApp is the acceptor's application: the gateway's once serve has set
// it. Before that no connection reaches a session, so QuickFIX/Go calls
// only OnCreate.
type lateApp struct{ app atomic.Pointer[appRef] }

type appRef struct{ quickfix.Application }

func (a *lateApp) set(app quickfix.Application) { a.app.Store(&appRef{app}) }

func (a *lateApp) get() quickfix.Application {
	if r := a.app.Load(); r != nil {
		return r.Application
	}
	return nil
}

func (a *lateApp) OnCreate(id quickfix.SessionID) {
	if app := a.get(); app != nil {
		app.OnCreate(id)
	}
}

func (a *lateApp) OnLogon(id quickfix.SessionID) {
	if app := a.get(); app != nil {
		app.OnLogon(id)
	}
}

func (a *lateApp) OnLogout(id quickfix.SessionID) {
	if app := a.get(); app != nil {
		app.OnLogout(id)
	}
}

func (a *lateApp) ToAdmin(m *quickfix.Message, id quickfix.SessionID) {
	if app := a.get(); app != nil {
		app.ToAdmin(m, id)
	}
}

func (a *lateApp) ToApp(m *quickfix.Message, id quickfix.SessionID) error {
	if app := a.get(); app != nil {
		return app.ToApp(m, id)
	}
	return nil
}

func (a *lateApp) FromAdmin(m *quickfix.Message, id quickfix.SessionID) quickfix.MessageRejectError {
	if app := a.get(); app != nil {
		return app.FromAdmin(m, id)
	}
	return nil
}

func (a *lateApp) FromApp(m *quickfix.Message, id quickfix.SessionID) quickfix.MessageRejectError {
	if app := a.get(); app != nil {
		return app.FromApp(m, id)
	}
	return quickfix.UnsupportedMessageType()
}

// Arrival implements gateway.ArrivalCounter for the gateway once set (nil
// before: no connection reaches a session then).
func (a *lateApp) Arrival(id quickfix.SessionID) func() {
	if c, ok := a.get().(gateway.ArrivalCounter); ok {
		return c.Arrival(id)
	}
	return nil
}

// lateListener is the acceptor's listener: Accept waits until bind hands
// it the real one (the FIX edge), then accepts from it.
type lateListener struct {
	mu     sync.Mutex
	ln     net.Listener
	bound  chan struct{}
	closed chan struct{}
	done   bool
}

func newLateListener() *lateListener {
	return &lateListener{bound: make(chan struct{}), closed: make(chan struct{})}
}

func (l *lateListener) bind(ln net.Listener) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		ln.Close()
		return
	}
	l.ln = ln
	close(l.bound)
}

func (l *lateListener) Accept() (net.Conn, error) {
	select {
	case <-l.bound:
		return l.ln.Accept()
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *lateListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return nil
	}
	l.done = true
	close(l.closed)
	if l.ln != nil {
		return l.ln.Close()
	}
	return nil
}

func (l *lateListener) Addr() net.Addr {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln != nil {
		return l.ln.Addr()
	}
	return &net.TCPAddr{}
}
