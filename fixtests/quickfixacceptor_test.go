package fixtests_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quickfixgo/enum"
	"github.com/quickfixgo/field"
	"github.com/quickfixgo/fix44/newordersingle"
	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/quickfix/log/screen"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/fixtests"
	"github.com/fixvenue/fixvenue/gateway/spec"
)

// This file runs a plain QuickFIX/Go acceptor in the test process so that
// the runner can be proved against a real FIX engine before the venue exists.

// fix44Dictionary writes the FIX 4.4 data dictionary the venue ships
// (gateway/spec, byte for byte QuickFIX/Go v0.9.11's spec/FIX44.xml) into a
// temporary folder, because QuickFIX/Go reads dictionaries from a path only.
// Proving the runner with the venue's own dictionary keeps the two in step.
func fix44Dictionary(t testing.TB) string {
	t.Helper()
	path, err := spec.WriteFIX44(t.TempDir())
	if err != nil {
		t.Fatalf("FIX 4.4 data dictionary: %v", err)
	}
	return path
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

// lockedStore wraps QuickFIX/Go's memory store with a mutex so that the
// iSET_SESSION hook can change sequence numbers while the session goroutine
// runs. QuickFIX/Go's own SetNextSenderMsgSeqNum and SetNextTargetMsgSeqNum
// write the store without synchronisation, which the race detector rightly
// reports; this store makes the same change safely.
type lockedStore struct {
	mu    sync.Mutex
	inner quickfix.MessageStore
}

func (s *lockedStore) NextSenderMsgSeqNum() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.NextSenderMsgSeqNum()
}

func (s *lockedStore) NextTargetMsgSeqNum() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.NextTargetMsgSeqNum()
}

func (s *lockedStore) IncrNextSenderMsgSeqNum() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.IncrNextSenderMsgSeqNum()
}

func (s *lockedStore) IncrNextTargetMsgSeqNum() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.IncrNextTargetMsgSeqNum()
}

func (s *lockedStore) SetNextSenderMsgSeqNum(next int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.SetNextSenderMsgSeqNum(next)
}

func (s *lockedStore) SetNextTargetMsgSeqNum(next int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.SetNextTargetMsgSeqNum(next)
}

func (s *lockedStore) CreationTime() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.CreationTime()
}

func (s *lockedStore) SetCreationTime(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inner.SetCreationTime(t)
}

func (s *lockedStore) SaveMessage(seqNum int, msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.SaveMessage(seqNum, msg)
}

func (s *lockedStore) SaveMessageAndIncrNextSenderMsgSeqNum(seqNum int, msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.SaveMessageAndIncrNextSenderMsgSeqNum(seqNum, msg)
}

func (s *lockedStore) GetMessages(begin, end int) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.GetMessages(begin, end)
}

// IterateMessages copies the messages out under the lock and calls cb
// without it, because QuickFIX/Go sends (and so uses the store) from cb.
func (s *lockedStore) IterateMessages(begin, end int, cb func([]byte) error) error {
	msgs, err := s.GetMessages(begin, end)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := cb(m); err != nil {
			return err
		}
	}
	return nil
}

func (s *lockedStore) Refresh() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.Refresh()
}

func (s *lockedStore) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.Reset()
}

func (s *lockedStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.Close()
}

// lockedStores creates lockedStores over memory stores and keeps them by
// session so that the hook can reach them. It is also the acceptor's
// iSET_SESSION hook.
type lockedStores struct {
	mu     sync.Mutex
	stores map[quickfix.SessionID]*lockedStore
}

func (f *lockedStores) Create(id quickfix.SessionID) (quickfix.MessageStore, error) {
	inner, err := quickfix.NewMemoryStoreFactory().Create(id)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &lockedStore{inner: inner}
	f.stores[id] = s
	return s, nil
}

// SetNextSeqNums implements fixtests.SessionSetter.
func (f *lockedStores) SetNextSeqNums(_ context.Context, q fixtests.SessionSeqNums) error {
	id := quickfix.SessionID{BeginString: q.BeginString, SenderCompID: q.SenderCompID, TargetCompID: q.TargetCompID}
	f.mu.Lock()
	s := f.stores[id]
	f.mu.Unlock()
	if s == nil {
		return fmt.Errorf("no session %v", id)
	}
	if q.NextSenderSeqNum > 0 {
		if err := s.SetNextSenderMsgSeqNum(q.NextSenderSeqNum); err != nil {
			return err
		}
	}
	if q.NextTargetSeqNum > 0 {
		if err := s.SetNextTargetMsgSeqNum(q.NextTargetSeqNum); err != nil {
			return err
		}
	}
	return nil
}

// testAcceptor is a running QuickFIX/Go acceptor.
type testAcceptor struct {
	addr   string
	setter fixtests.SessionSetter
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
func startAcceptor(t testing.TB, defaultLines, sessionLines string) testAcceptor {
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
	stores := &lockedStores{stores: make(map[quickfix.SessionID]*lockedStore)}
	acceptor, err := quickfix.NewAcceptor(newOrderApp(), stores, settings, acceptorLogFactory())
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
	return testAcceptor{addr: ln.Addr().String(), setter: stores}
}
