package gateway

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
)

// onePacer is a Pacer with one connection, bound to every session.
type onePacer struct{ written, closed chan struct{} }

func (p *onePacer) WriteDone(quickfix.SessionID) (written, closed <-chan struct{}) {
	return p.written, p.closed
}

func (p *onePacer) Disconnect(quickfix.SessionID, <-chan struct{}) {}

// awaitingSender returns a logged-on session's sender (write bound: an
// hour) that has made a send whose write is not reported yet, and its
// connection.
func awaitingSender() (*sender, *onePacer) {
	id := quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "CLIENT1"}
	p := &onePacer{written: make(chan struct{}, 1), closed: make(chan struct{})}
	s := newSender(id, 4, time.Hour, nil)
	s.pacer = p
	s.loggedOn.Store(true)
	s.awaited, s.awaitedClosed = p.WriteDone(id)
	return s, p
}

// TestSenderWaitEndsWithItsConnection: the sender waits for the report of
// its last write before the session's next send. A write QuickFIX/Go made
// to a connection closing under it is never reported: the wait lasted
// fix.write_timeout, and the session's answers waited as long, with a
// ResendRequest from the client back on a new connection (then sendMu
// was held while waiting). The connection's close ends the wait.
func TestSenderWaitEndsWithItsConnection(t *testing.T) {
	s, p := awaitingSender()
	acquired := make(chan struct{})
	go func() {
		s.acquire(time.NewTimer(time.Hour))
		s.sendMu.Unlock()
		close(acquired)
	}()
	close(p.closed)
	select {
	case <-acquired:
	case <-time.After(10 * time.Second):
		t.Fatal("the sender still waits for a write on a connection closed 10 s ago (its bound: an hour)")
	}
}

// TestSenderWaitHoldsNoResend: while the sender waits for its last write's
// report, QuickFIX/Go's session goroutine can mark a resend
// (beginResend, from FromAdmin). A send made between OnLogon and the end
// of QuickFIX/Go's logon is queued inside QuickFIX/Go, and only that
// goroutine writes it: when it handled the client's ResendRequest first,
// it waited for sendMu, which the sender held while it waited for that
// very write, for fix.write_timeout.
func TestSenderWaitHoldsNoResend(t *testing.T) {
	s, p := awaitingSender() // its write reported only once the resend is marked
	acquired := make(chan struct{})
	go func() {
		s.acquire(time.NewTimer(time.Hour))
		close(acquired)
	}()
	waitBlockedIn(t, "gateway.(*sender).acquire")
	marked := make(chan struct{})
	go func() {
		s.beginResend()
		close(marked)
	}()
	select {
	case <-marked:
	case <-time.After(10 * time.Second):
		t.Fatal("marking a resend still waits after 10 s for the sender's wait for a write (its bound: an hour)")
	}
	select {
	case <-acquired:
		t.Fatal("the sender went on with its last write neither reported nor its connection closed")
	default:
	}
	p.written <- struct{}{}
	<-acquired
	if !s.resending.Load() {
		t.Fatal("the resend is not marked")
	}
	s.sendMu.Unlock()
}

// waitBlockedIn waits until a goroutine is blocked in a select in fn.
func waitBlockedIn(t *testing.T, fn string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "[select") && strings.Contains(g, fn) {
				return
			}
		}
	}
	t.Fatalf("no goroutine waits in %s", fn)
}
