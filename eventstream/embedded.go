package eventstream

import (
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// embeddedStartWait bounds the wait for the embedded server to accept
// connections (JetStream recovers its store first).
const embeddedStartWait = 30 * time.Second

// embeddedStartPoll is how often the start checks whether the embedded
// server failed.
const embeddedStartPoll = 20 * time.Millisecond

// startLogger takes the embedded server's first fatal error; it logs
// nothing (the embedded server is quiet, as it was with NoLog).
type startLogger struct{ fatal chan string }

func (l *startLogger) Fatalf(format string, v ...any) {
	select {
	case l.fatal <- fmt.Sprintf(format, v...):
	default:
	}
}
func (*startLogger) Noticef(string, ...any) {}
func (*startLogger) Warnf(string, ...any)   {}
func (*startLogger) Errorf(string, ...any)  {}
func (*startLogger) Debugf(string, ...any)  {}
func (*startLogger) Tracef(string, ...any)  {}

// Embedded is a NATS server with JetStream run inside the venue's process,
// for a single-node setup: it listens on loopback and stores in a directory
// of the venue's data. It can be stopped and started again on the same port
// and store (tests use this to cut the exporter off mid-run).
type Embedded struct {
	mu   sync.Mutex
	opts server.Options
	srv  *server.Server
}

// StartEmbedded starts the server on addr ("127.0.0.1:4222"; port 0: any)
// with its JetStream store in storeDir.
func StartEmbedded(addr, storeDir string) (*Embedded, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("embedded nats: port %q: %w", portText, err)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	e := &Embedded{opts: server.Options{Host: host, Port: port, JetStream: true, StoreDir: storeDir,
		NoSigs: true, NoLog: true, ServerName: "fixvenue-embedded"}}
	if err := e.Start(); err != nil {
		return nil, err
	}
	return e, nil
}

// Start starts the server (again, on the port it had the first time).
func (e *Embedded) Start() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.srv != nil {
		return nil
	}
	opts := e.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		return fmt.Errorf("embedded nats: %w", err)
	}
	// A server that cannot start (its port taken, its store unusable)
	// says so only through its logger's Fatalf, and waits: without a
	// logger the venue waited embeddedStartWait for "not ready".
	lg := &startLogger{fatal: make(chan string, 1)}
	srv.SetLogger(lg, false, false)
	go srv.Start()
	for deadline := time.Now().Add(embeddedStartWait); !srv.ReadyForConnections(embeddedStartPoll); {
		select {
		case msg := <-lg.fatal:
			srv.Shutdown()
			return fmt.Errorf("embedded nats on %s:%d: %s", e.opts.Host, e.opts.Port, msg)
		default:
		}
		if time.Now().After(deadline) {
			srv.Shutdown()
			return fmt.Errorf("embedded nats: not ready on %s:%d within %s", e.opts.Host, e.opts.Port, embeddedStartWait)
		}
	}
	if a, ok := srv.Addr().(*net.TCPAddr); ok {
		e.opts.Port = a.Port
	}
	e.srv = srv
	return nil
}

// Stop shuts the server down; Start brings it back.
func (e *Embedded) Stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.srv != nil {
		e.srv.Shutdown()
		e.srv.WaitForShutdown()
		e.srv = nil
	}
}

// URL is the client URL of the server.
func (e *Embedded) URL() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return "nats://" + net.JoinHostPort(e.opts.Host, strconv.Itoa(e.opts.Port))
}
