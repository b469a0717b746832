package gateway

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/quickfixgo/quickfix"
)

// Pacer connects the gateway to the connections under QuickFIX/Go (the FIX
// edge implements it).
type Pacer interface {
	// WriteDone returns a channel that receives after each completed write on
	// the connection currently bound to the session, or nil if none.
	WriteDone(id quickfix.SessionID) <-chan struct{}
	// Disconnect closes the connection currently bound to the session.
	Disconnect(id quickfix.SessionID)
}

// sender owns the path from the gateway to one session. QuickFIX/Go's send path
// busy-spins when it is handed a message while the connection's writer is still
// busy (see docs/ARCHITECTURE.md); the sender therefore hands QuickFIX/Go the next
// message only after the connection reports the previous write, so at most one
// application message is ever queued inside QuickFIX/Go per session.
type sender struct {
	id    quickfix.SessionID
	queue chan outMsg
	// free holds sent reports for reuse (reuse.go), at most reportsReusedMax.
	free     chan *quickfix.Message
	writeMax time.Duration
	g        *Gateway
	pacer    Pacer
	loggedOn atomic.Bool
	overflow atomic.Bool
	done     chan struct{}
	// copy, when set, sees every message just before it is queued (drop
	// copy, dropcopy.go); it runs on the enqueuing goroutine.
	copy     func(*quickfix.Message)
	stopOnce sync.Once
	finished chan struct{}
}

func newSender(id quickfix.SessionID, queueMax int, writeMax time.Duration, g *Gateway) *sender {
	return &sender{id: id, queue: make(chan outMsg, queueMax), free: make(chan *quickfix.Message, reportsReusedMax),
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
// for the client's next logon.
func (s *sender) enqueue(m *quickfix.Message) { s.enqueueOut(outMsg{m: m}) }

// enqueueOut is enqueue for a message that may be a reused report.
func (s *sender) enqueueOut(o outMsg) {
	m := o.m
	if s.copy != nil {
		// Before the original is queued: once queued, its sender may be
		// writing the header that the copy reads.
		s.copy(m)
	}
	select {
	case s.queue <- o:
		return
	default:
	}
	if s.overflow.CompareAndSwap(false, true) {
		s.g.metrics.outboundDropped.Inc()
		s.g.log.Warn("outbound queue full: disconnecting session", "session", s.id.String(), "queue_max", cap(s.queue))
		s.loggedOn.Store(false)
		if s.pacer != nil {
			go s.pacer.Disconnect(s.id)
		}
	}
	select {
	case s.queue <- o:
	case <-s.done:
	}
}

func (s *sender) run() {
	defer close(s.finished)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case o := <-s.queue:
			s.send(o.m, timer)
			if o.reuse {
				// QuickFIX/Go keeps only the bytes it built (reuse.go).
				s.giveBack(o.m)
			}
		case <-s.done:
			// Hand over what is left so that it reaches the store.
			for {
				select {
				case o := <-s.queue:
					_ = quickfix.SendToTarget(o.m, s.id)
				default:
					return
				}
			}
		}
	}
}

func (s *sender) send(m *quickfix.Message, timer *time.Timer) {
	var written <-chan struct{}
	if s.pacer != nil && s.loggedOn.Load() {
		written = s.pacer.WriteDone(s.id)
		for drained := false; written != nil && !drained; {
			select {
			case <-written:
			default:
				drained = true
			}
		}
	}
	if err := quickfix.SendToTarget(m, s.id); err != nil {
		s.g.log.Error("send failed", "session", s.id.String(), "err", err)
		return
	}
	if written == nil {
		return
	}
	timer.Reset(s.writeMax)
	select {
	case <-written:
		if !timer.Stop() {
			<-timer.C
		}
	case <-timer.C:
	case <-s.done:
	}
}

func (s *sender) stop() {
	s.stopOnce.Do(func() { close(s.done) })
	<-s.finished
}
