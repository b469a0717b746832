package edge

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/quickfix/config"
)

// dictionaryPath is the FIX 4.4 data dictionary the venue ships
// (gateway/spec, byte for byte QuickFIX/Go v0.9.11's spec/FIX44.xml), from
// this package's folder, where its tests and their child processes run, so
// the test acceptor validates messages the way the venue's acceptor does.
const dictionaryPath = "../spec/FIX44.xml"

// testApp is a trivial venue application: every NewOrderSingle is answered
// with one ExecutionReport echoing its ClOrdID.
type testApp struct {
	logons   atomic.Int64
	logouts  atomic.Int64
	fromApp  atomic.Int64
	fromAdm  atomic.Int64
	mu       sync.Mutex
	incoming []string // raw admin and app messages seen, for password checks
	// An order with ClOrdID "hold" is held in FromApp until hold is
	// closed, unanswered (holding is set meanwhile): QuickFIX/Go's session
	// goroutine is busy.
	hold    chan struct{}
	holding atomic.Bool
}

func (a *testApp) OnCreate(quickfix.SessionID)                       {}
func (a *testApp) OnLogon(quickfix.SessionID)                        { a.logons.Add(1) }
func (a *testApp) OnLogout(quickfix.SessionID)                       { a.logouts.Add(1) }
func (a *testApp) ToAdmin(*quickfix.Message, quickfix.SessionID)     {}
func (a *testApp) ToApp(*quickfix.Message, quickfix.SessionID) error { return nil }
func (a *testApp) record(m *quickfix.Message) {
	a.mu.Lock()
	a.incoming = append(a.incoming, m.String())
	a.mu.Unlock()
}

func (a *testApp) FromAdmin(m *quickfix.Message, _ quickfix.SessionID) quickfix.MessageRejectError {
	a.fromAdm.Add(1)
	a.record(m)
	return nil
}

func (a *testApp) FromApp(m *quickfix.Message, id quickfix.SessionID) quickfix.MessageRejectError {
	a.fromApp.Add(1)
	a.record(m)
	if !m.IsMsgTypeOf("D") {
		return nil
	}
	clOrdID, _ := m.Body.GetString(11)
	if clOrdID == "hold" {
		a.holding.Store(true)
		<-a.hold
		return nil
	}
	er := quickfix.NewMessage()
	er.Header.SetString(35, "8")
	er.Body.SetString(37, "O-"+clOrdID)
	er.Body.SetString(17, "E-"+clOrdID)
	er.Body.SetString(150, "0")
	er.Body.SetString(39, "0")
	er.Body.SetString(11, clOrdID)
	er.Body.SetString(55, "ACME")
	er.Body.SetString(54, "1")
	er.Body.SetString(151, "10")
	er.Body.SetString(14, "0")
	er.Body.SetString(6, "0")
	if err := quickfix.SendToTarget(er, id); err != nil {
		panic(err)
	}
	return nil
}

// venueSettings returns QuickFIX/Go settings for a VENUE acceptor on port
// with the given client CompIDs. Extra global settings override the
// defaults; DataDictionary "none" leaves the dictionary out (parsing it
// costs about 0.3 s per session under the race detector).
func venueSettings(tb testing.TB, port int, extra map[string]string, clients ...string) *quickfix.Settings {
	tb.Helper()
	s := quickfix.NewSettings()
	g := s.GlobalSettings()
	g.Set(config.SocketAcceptPort, strconv.Itoa(port))
	g.Set(config.BeginString, "FIX.4.4")
	g.Set(config.SenderCompID, "VENUE")
	g.Set(config.HeartBtInt, "30")
	g.Set(config.ResetOnLogon, "N")
	if extra[config.DataDictionary] != "none" {
		g.Set(config.DataDictionary, dictionaryPath)
	}
	for k, v := range extra {
		if k != config.DataDictionary {
			g.Set(k, v)
		}
	}
	for _, c := range clients {
		ss := quickfix.NewSessionSettings()
		ss.Set(config.TargetCompID, c)
		if _, err := s.AddSession(ss); err != nil {
			tb.Fatalf("add session: %v", err)
		}
	}
	return s
}

// startAcceptor starts a QuickFIX/Go acceptor that takes its listener from ln.
func startAcceptor(tb testing.TB, app quickfix.Application, ln net.Listener, logs quickfix.LogFactory, clients ...string) *quickfix.Acceptor {
	return startAcceptorWith(tb, app, ln, logs, nil, clients...)
}

// startAcceptorWith is startAcceptor with extra global settings.
func startAcceptorWith(tb testing.TB, app quickfix.Application, ln net.Listener, logs quickfix.LogFactory, extra map[string]string, clients ...string) *quickfix.Acceptor {
	tb.Helper()
	port := ln.Addr().(*net.TCPAddr).Port
	if logs == nil {
		logs = quickfix.NewNullLogFactory()
	}
	settings := venueSettings(tb, port, extra, clients...)
	a, err := quickfix.NewAcceptor(app, quickfix.NewMemoryStoreFactory(), settings, logs)
	if err != nil {
		tb.Fatalf("new acceptor: %v", err)
	}
	given := false
	a.SetNewListenerCallback(func(string, *tls.Config) (net.Listener, error) {
		if given {
			return nil, fmt.Errorf("listener already given")
		}
		given = true
		return ln, nil
	})
	if err := a.Start(); err != nil {
		tb.Fatalf("start acceptor: %v", err)
	}
	return a
}

// rawChildEnv makes the test binary run a bare QuickFIX/Go acceptor (no
// edge) in a child process, so that messages that crash QuickFIX/Go can be
// shown to crash it without killing the test process.
const rawChildEnv = "EDGE_RAW_QUICKFIX_CHILD"

// rawChildSettingsEnv holds extra global settings for the child ("k=v;k=v").
const rawChildSettingsEnv = "EDGE_RAW_QUICKFIX_SETTINGS"

func TestHelperRawQuickFIX(t *testing.T) {
	if os.Getenv(rawChildEnv) != "1" {
		t.Skip("runs only as a child process")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]string{}
	for _, kv := range strings.Split(os.Getenv(rawChildSettingsEnv), ";") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			extra[k] = v
		}
	}
	startAcceptorWith(t, &testApp{}, ln, nil, extra, "CLIENT1", "CLIENT2")
	fmt.Printf("PORT %d\n", ln.Addr().(*net.TCPAddr).Port)
	time.Sleep(time.Minute)
}

// rawChild is a running child process with a bare QuickFIX/Go acceptor.
type rawChild struct {
	cmd    *exec.Cmd
	port   int
	exited chan struct{}
	stderr strings.Builder
	mu     sync.Mutex
}

func startRawChild(tb testing.TB, settings ...string) *rawChild {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRawQuickFIX$", "-test.v")
	cmd.Env = append(os.Environ(), rawChildEnv+"=1", rawChildSettingsEnv+"="+strings.Join(settings, ";"))
	c := &rawChild{cmd: cmd, exited: make(chan struct{})}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = &lockedWriter{mu: &c.mu, b: &c.stderr}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "PORT "); ok {
			c.port, _ = strconv.Atoi(p)
			break
		}
	}
	go func() {
		for sc.Scan() {
			c.mu.Lock()
			c.stderr.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
		}
	}()
	go func() { _ = cmd.Wait(); close(c.exited) }()
	if c.port == 0 {
		tb.Fatal("raw child gave no port")
	}
	return c
}

func (c *rawChild) stop() {
	_ = c.cmd.Process.Kill()
	<-c.exited
}

func (c *rawChild) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
