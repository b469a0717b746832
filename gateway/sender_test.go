package gateway

import (
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
)

// onePacer is a Pacer with one connection, bound to every session.
type onePacer struct{ written, closed chan struct{} }

func (p *onePacer) WriteDone(quickfix.SessionID) (written, closed <-chan struct{}) {
	return p.written, p.closed
}

func (p *onePacer) Disconnect(quickfix.SessionID) {}

// TestSenderWaitEndsWithItsConnection: the sender waits for the report of
// its last write before the session's next send, holding sendMu. A write
// QuickFIX/Go made to a connection closing under it is never reported:
// the wait lasted fix.write_timeout, and a ResendRequest from the client,
// back on a new connection, waited as long for sendMu. The connection's
// close ends the wait.
func TestSenderWaitEndsWithItsConnection(t *testing.T) {
	id := quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "CLIENT1"}
	p := &onePacer{written: make(chan struct{}, 1), closed: make(chan struct{})}
	s := newSender(id, 4, time.Hour, nil)
	s.pacer = p
	s.loggedOn.Store(true)
	s.awaited, s.awaitedClosed = p.WriteDone(id) // a send made; its write never reported
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	acquired := make(chan struct{})
	go func() {
		s.acquire(timer)
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
