package gateway

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/gateway/fixstore"
)

// Pacer connects the gateway to the connections under QuickFIX/Go (the FIX
// edge implements it).
type Pacer interface {
	// WriteDone returns a channel that receives after each completed write on
	// the connection currently bound to the session, and one closed once that
	// connection is closed; both nil if the session has none.
	WriteDone(id quickfix.SessionID) (written, closed <-chan struct{})
	// Disconnect closes the connection bound to the session, if it is still
	// the one whose WriteDone channel is written (sender.conn). A
	// Disconnect made later than the event that called for it (a Logout
	// given time to reach its client) must not close the connection the
	// client has logged on again with meanwhile.
	Disconnect(id quickfix.SessionID, written <-chan struct{})
}

// InboundStopper is what a Pacer may also do: stop taking what a
// session's client sends on its current connection (the FIX edge drops
// it), once the session is being logged out for what the client sent.
type InboundStopper interface {
	StopTaking(id quickfix.SessionID)
}

// sender owns the path from the gateway to one session. QuickFIX/Go's send path
// busy-spins when it is handed a message while the connection's writer is still
// busy (see docs/ARCHITECTURE.md); the sender therefore hands QuickFIX/Go the next
// message only after the connection reports the previous write, so at most one
// application message is ever queued inside QuickFIX/Go per session.
//
// Outbound hands a report to QuickFIX/Go itself when the session has nothing
// queued and its previous write is reported (sendDirect): most reports then
// cost the sender goroutine no wake-up at all (docs/benchmarks.md, "The FIX
// path against its floor"). Whoever sends holds sendMu; the wait for a
// write's report is made before the session's next send, not after it.
type sender struct {
	id    quickfix.SessionID
	queue *outQueue
	// free holds sent reports for reuse (reuse.go), at most reportsReusedMax.
	free     chan *quickfix.Message
	writeMax time.Duration
	g        *Gateway
	pacer    Pacer
	loggedOn atomic.Bool
	overflow atomic.Bool
	// resending is set, under sendMu, when QuickFIX/Go is about to resend
	// (a ResendRequest it will serve) and cleared when its resend has
	// handed over its last message: meanwhile QuickFIX/Go holds the
	// session's send lock, and a send waits for the whole resend.
	resending atomic.Bool
	// storeFailed is set by the first send QuickFIX/Go refused (sendFailed).
	storeFailed atomic.Bool
	// unknownLogged is set by the first other refusal sendFailed logged.
	unknownLogged atomic.Bool
	done          chan struct{}
	// copy, when set, sees every message just before it is queued (drop
	// copy, dropcopy.go); it runs on the enqueuing goroutine.
	copy     func(*quickfix.Message)
	stopOnce sync.Once
	finished chan struct{}
	// sendMu is held by whoever hands the session a message (outbound in
	// sendDirect, or the sender goroutine), not while the sender goroutine
	// waits for the previous write (acquire). pending counts messages
	// queued and not yet sent: a direct send is only made when it is 0, so
	// messages keep their order.
	sendMu  sync.Mutex
	pending atomic.Int32
	// awaited is the connection channel that will report the last send's
	// write (nil: no write awaited), and awaitedClosed that connection's
	// closing, which ends the wait too; guarded by sendMu.
	awaited, awaitedClosed <-chan struct{}
}

func newSender(id quickfix.SessionID, queueMax int, writeMax time.Duration, g *Gateway) *sender {
	return &sender{id: id, queue: newOutQueue(queueMax), free: make(chan *quickfix.Message, reportsReusedMax),
		writeMax: writeMax, g: g, done: make(chan struct{}), finished: make(chan struct{})}
}

// outMsg is a queued message; reuse marks a report from takeReport, given
// back to the free list once sent.
type outMsg struct {
	m     *quickfix.Message
	reuse bool
}

// enqueue hands a message to the session. When the queue is full the client is
// not reading: the session is disconnected (cancel-on-disconnect follows), and
// the message still goes in once the sender, no longer pacing a dead connection,
// has made room — answers are never dropped; they wait in the session's store
// for the client's next logon (a store that cannot take one halts the venue:
// sendFailed).
func (s *sender) enqueue(m *quickfix.Message) { s.enqueueOut(outMsg{m: m}) }

// enqueueOut is enqueue for a message that may be a reused report.
func (s *sender) enqueueOut(o outMsg) {
	s.pending.Add(1)
	if s.copy != nil {
		// Before the original is queued: once queued, its sender may be
		// writing the header that the copy reads.
		s.copy(o.m)
	}
	s.queueCounted(o)
}

// enqueueUncopied is enqueue without the drop copies (Redeliver makes the
// ones the drop-copy sessions lack).
func (s *sender) enqueueUncopied(m *quickfix.Message) {
	s.pending.Add(1)
	s.queueCounted(outMsg{m: m})
}

// queueCounted queues o, already counted in pending.
func (s *sender) queueCounted(o outMsg) {
	if s.queue.push(o) {
		return
	}
	if s.overflow.CompareAndSwap(false, true) {
		s.g.metrics.outboundDropped.Inc()
		s.g.log.Warn("outbound queue full: disconnecting session", "session", s.id.String(), "queue_max", s.queue.max)
		s.loggedOn.Store(false)
		if s.pacer != nil {
			go s.pacer.Disconnect(s.id, s.conn())
		}
	}
	if !s.queue.pushWait(o, s.done) {
		s.pending.Add(-1)
	}
}

// sendDirect sends o on the calling goroutine when nothing is queued for the
// session, no one else is sending to it and its last write is reported;
// otherwise it queues o for the sender goroutine. Outbound calls it for the
// answers it hands over.
func (s *sender) sendDirect(o outMsg) {
	if s.pending.Load() != 0 || !s.tryAcquire() {
		s.enqueueOut(o)
		return
	}
	if s.resending.Load() {
		// QuickFIX/Go holds the session's send lock for its resend: the
		// sender goroutine waits for it, not outbound with every
		// session's answers.
		s.sendMu.Unlock()
		s.enqueueOut(o)
		return
	}
	if s.copy != nil {
		s.copy(o.m)
	}
	s.sendHeld(o.m)
	s.sendMu.Unlock()
	if o.reuse {
		s.giveBack(o.m)
	}
}

// beginResend marks the session as resending before QuickFIX/Go takes its
// send lock for a resend (application.FromAdmin): under sendMu, so a
// direct send that found it unmarked has handed its message over before.
func (s *sender) beginResend() {
	s.sendMu.Lock()
	s.resending.Store(true)
	s.sendMu.Unlock()
}

// tryAcquire locks sendMu without waiting, when the last write is reported
// (or can no longer be).
func (s *sender) tryAcquire() bool {
	if !s.sendMu.TryLock() {
		return false
	}
	if s.awaitedGone() {
		return true
	}
	select {
	case <-s.awaited:
		return true
	default:
		s.sendMu.Unlock()
		return false
	}
}

// acquire waits up to writeMax for the last write's report, or until the
// connection that was to write it is closed, then locks sendMu for the
// sender goroutine.
//
// The wait is made without sendMu: no one else sends meanwhile (the
// sender's message is counted in pending, so outbound queues its own), and
// QuickFIX/Go's session goroutine may need sendMu to mark a resend
// (beginResend) before it writes what the sender waits for. A send made
// between OnLogon and the end of QuickFIX/Go's logon is queued inside
// QuickFIX/Go and written by that goroutine: when it took the client's
// ResendRequest first, the two waited for each other for writeMax. And a
// send QuickFIX/Go wrote to a connection closing under it is never
// reported; its connection's close ends the wait.
func (s *sender) acquire(timer *time.Timer) {
	s.sendMu.Lock()
	if s.awaitedGone() {
		return
	}
	awaited, closed := s.awaited, s.awaitedClosed
	s.sendMu.Unlock()
	timer.Reset(s.writeMax)
	select {
	case <-awaited:
	case <-closed:
	case <-timer.C:
	case <-s.done:
	}
	timer.Stop()
	s.sendMu.Lock()
}

// conn names the session's connection now, for a Disconnect of it
// (nil: it has none, and a Disconnect of nil closes nothing).
func (s *sender) conn() <-chan struct{} {
	written, _ := s.pacer.WriteDone(s.id)
	return written
}

// awaitedGone reports that no write report is to be waited for: none is
// awaited, or the session logged out or its connection changed since the
// send. The caller holds sendMu.
func (s *sender) awaitedGone() bool {
	if s.awaited == nil || s.pacer == nil || !s.loggedOn.Load() {
		return true
	}
	return s.conn() != s.awaited
}

func (s *sender) run() {
	defer close(s.finished)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-s.done:
			// Hand over what is left so that it reaches the store.
			for o, ok := s.queue.pop(); ok; o, ok = s.queue.pop() {
				_ = quickfix.SendToTarget(o.m, s.id)
			}
			return
		default:
		}
		o, ok := s.queue.pop()
		if !ok {
			select {
			case <-s.queue.ready:
			case <-s.done:
			}
			continue
		}
		s.acquire(timer)
		s.sendHeld(o.m)
		s.sendMu.Unlock()
		s.pending.Add(-1)
		if o.reuse {
			// QuickFIX/Go keeps only the bytes it built (reuse.go).
			s.giveBack(o.m)
		}
	}
}

// sendHeld hands m to QuickFIX/Go and notes the write to await before the
// session's next send; the caller holds sendMu.
func (s *sender) sendHeld(m *quickfix.Message) {
	var written, closed <-chan struct{}
	if s.pacer != nil && s.loggedOn.Load() {
		written, closed = s.pacer.WriteDone(s.id)
		for drained := false; written != nil && !drained; {
			select {
			case <-written:
			default:
				drained = true
			}
		}
	}
	err := quickfix.SendToTarget(m, s.id)
	s.awaited, s.awaitedClosed = written, closed
	if err != nil {
		s.awaited, s.awaitedClosed = nil, nil
		s.sendFailed(err)
	}
}

// sendFailed handles a message QuickFIX/Go refused. When its store could not
// be written (a full disk, an I/O error: fixstore.ErrFailed), the message is
// neither stored nor sent and its sequence number was not taken, so the
// client would never learn of it, not even by a ResendRequest. The store
// has halted the venue (fixstore.Factory.OnFail); the session is
// disconnected, since it can be told nothing in-band: its client reconciles
// with an OrderMassStatusRequest once the venue is restarted
// (docs/ARCHITECTURE.md, "A venue that failed"). Otherwise (a session
// QuickFIX/Go no longer knows, at shutdown) the refusal is logged.
func (s *sender) sendFailed(err error) {
	if !errors.Is(err, fixstore.ErrFailed) {
		// Once per session: a stop that ran out of time (gateway/stop.go)
		// leaves a queue of them.
		if !s.unknownLogged.Swap(true) {
			s.g.log.Warn("send failed; later failures of this session are not logged", "session", s.id.String(), "err", err)
		}
		return
	}
	if s.storeFailed.Swap(true) {
		s.g.log.Debug("send failed", "session", s.id.String(), "err", err)
		return
	}
	s.g.log.Error("send failed: message neither stored nor sent; disconnecting the session", "session", s.id.String(), "err", err)
	if s.pacer != nil {
		s.pacer.Disconnect(s.id, s.conn())
	}
}

func (s *sender) stop() {
	s.stopOnce.Do(func() { close(s.done) })
	<-s.finished
}
