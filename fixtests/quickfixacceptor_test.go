package fixtests_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/quickfixgo/enum"
	"github.com/quickfixgo/field"
	"github.com/quickfixgo/fix44/newordersingle"
	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/quickfix/log/screen"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/fixtests"
)

// This file runs a plain QuickFIX/Go acceptor in the test process so that
// the runner can be proved against a real FIX engine before the venue exists.

// quickfixModule is the module whose spec/ folder provides the FIX 4.4 data
// dictionary the acceptor validates with.
const quickfixModule = "github.com/quickfixgo/quickfix"

var dictionaryPath struct {
	once sync.Once
	path string
	err  error
}

// fix44Dictionary returns the path of FIX44.xml inside the QuickFIX/Go module
// this repository pins, found through the go command (tests always have it),
// so the repository needs no copy of its own.
func fix44Dictionary(t testing.TB) string {
	t.Helper()
	d := &dictionaryPath
	d.once.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", quickfixModule).Output()
		if err != nil {
			d.err = fmt.Errorf("go list -m %s: %v", quickfixModule, err)
			return
		}
		d.path = filepath.Join(strings.TrimSpace(string(out)), "spec", "FIX44.xml")
		_, d.err = os.Stat(d.path)
	})
	if d.err != nil {
		t.Fatalf("FIX 4.4 data dictionary: %v", d.err)
	}
	return d.path
}

// acceptorConfig is the QuickFIX/Go configuration the scripts assume (the one
// QuickFIX/Go's own CI uses for them), plus per-test lines. Validation,
// latency checks and millisecond timestamps are QuickFIX/Go's defaults and
// are therefore not spelled out.
const acceptorConfig = `[DEFAULT]
SocketAcceptPort=%d
SenderCompID=ISLD
TargetCompID=TW
%s
[SESSION]
BeginString=FIX.4.4
DataDictionary=%s
%s
`

// orderApp is the acceptor's application: it answers every NewOrderSingle
// with an ExecutionReport (ExecType and OrdStatus New) and rejects other
// application messages as unsupported, like a minimal venue would.
type orderApp struct {
	router *quickfix.MessageRouter
	execID atomic.Int64
}

func newOrderApp() *orderApp {
	a := &orderApp{router: quickfix.NewMessageRouter()}
	a.router.AddRoute(newordersingle.Route(a.onNewOrderSingle))
	return a
}

func (a *orderApp) OnCreate(quickfix.SessionID)                       {}
func (a *orderApp) OnLogon(quickfix.SessionID)                        {}
func (a *orderApp) OnLogout(quickfix.SessionID)                       {}
func (a *orderApp) ToAdmin(*quickfix.Message, quickfix.SessionID)     {}
func (a *orderApp) ToApp(*quickfix.Message, quickfix.SessionID) error { return nil }
func (a *orderApp) FromAdmin(*quickfix.Message, quickfix.SessionID) quickfix.MessageRejectError {
	return nil
}

func (a *orderApp) FromApp(msg *quickfix.Message, id quickfix.SessionID) quickfix.MessageRejectError {
	return a.router.Route(msg, id)
}

func (a *orderApp) onNewOrderSingle(msg newordersingle.NewOrderSingle, id quickfix.SessionID) quickfix.MessageRejectError {
	clOrdID, err := msg.GetClOrdID()
	if err != nil {
		return err
	}
	side, err := msg.GetSide()
	if err != nil {
		return err
	}
	symbol, err := msg.GetSymbol()
	if err != nil {
		return err
	}
	n := a.execID.Add(1)
	er := quickfix.NewMessage()
	er.Header.Set(field.NewMsgType(enum.MsgType_EXECUTION_REPORT))
	er.Body.Set(field.NewOrderID("O" + strconv.FormatInt(n, 10)))
	er.Body.Set(field.NewClOrdID(clOrdID))
	er.Body.Set(field.NewExecID("E" + strconv.FormatInt(n, 10)))
	er.Body.Set(field.NewExecType(enum.ExecType_NEW))
	er.Body.Set(field.NewOrdStatus(enum.OrdStatus_NEW))
	er.Body.Set(field.NewSymbol(symbol))
	er.Body.Set(field.NewSide(side))
	er.Body.SetString(tag.LeavesQty, "0")
	er.Body.SetString(tag.CumQty, "0")
	er.Body.SetString(tag.AvgPx, "0")
	if err := quickfix.SendToTarget(er, id); err != nil {
		return quickfix.NewBusinessMessageRejectError(err.Error(), 0, nil)
	}
	return nil
}

// quickfixSetter is the iSET_SESSION hook for an in-process QuickFIX/Go
// acceptor: it sets the session's counters through QuickFIX/Go's registry.
type quickfixSetter struct{}

func (quickfixSetter) SetNextSeqNums(_ context.Context, s fixtests.SessionSeqNums) error {
	id := quickfix.SessionID{BeginString: s.BeginString, SenderCompID: s.SenderCompID, TargetCompID: s.TargetCompID}
	if s.NextSenderSeqNum > 0 {
		if err := quickfix.SetNextSenderMsgSeqNum(id, s.NextSenderSeqNum); err != nil {
			return err
		}
	}
	if s.NextTargetSeqNum > 0 {
		if err := quickfix.SetNextTargetMsgSeqNum(id, s.NextTargetSeqNum); err != nil {
			return err
		}
	}
	return nil
}

// acceptorLogEnv set to 1 prints the acceptor's session log, to see what
// QuickFIX/Go thought of a failing script.
const acceptorLogEnv = "FIXTESTS_ACCEPTOR_LOG"

func acceptorLogFactory() quickfix.LogFactory {
	if os.Getenv(acceptorLogEnv) != "" {
		return screen.NewLogFactory()
	}
	return quickfix.NewNullLogFactory()
}

// startAcceptor starts a QuickFIX/Go acceptor on 127.0.0.1 at a port the OS
// chooses and returns its address. defaultLines and sessionLines are extra
// settings for the [DEFAULT] and [SESSION] sections. QuickFIX/Go keeps
// sessions in a process-wide registry, so tests that call this must not run
// in parallel.
func startAcceptor(t testing.TB, defaultLines, sessionLines string) string {
	t.Helper()
	// QuickFIX/Go only accepts a session on the port configured for it, so
	// the listener is opened first and its port written into the settings.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	cfg := fmt.Sprintf(acceptorConfig, port, defaultLines, fix44Dictionary(t), sessionLines)
	settings, err := quickfix.ParseSettings(strings.NewReader(cfg))
	if err != nil {
		ln.Close()
		t.Fatalf("acceptor settings: %v", err)
	}
	acceptor, err := quickfix.NewAcceptor(newOrderApp(), quickfix.NewMemoryStoreFactory(), settings, acceptorLogFactory())
	if err != nil {
		ln.Close()
		t.Fatalf("new acceptor: %v", err)
	}
	acceptor.SetNewListenerCallback(func(string, *tls.Config) (net.Listener, error) { return ln, nil })
	if err := acceptor.Start(); err != nil {
		ln.Close()
		t.Fatalf("start acceptor: %v", err)
	}
	t.Cleanup(acceptor.Stop)
	return ln.Addr().String()
}
