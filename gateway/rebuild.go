package gateway

import (
	"time"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Answers lost at a crash (docs/ARCHITECTURE.md, "Answers lost at a crash").
// An answer reaches a session's FIX store only when its sender hands it to
// QuickFIX/Go; after a kill -9 the answers still in the senders' queues and
// the rings are gone, though their commands are in the journal. At the next
// start the venue reads what each store holds (fixstore.ReadLastReport),
// keeps from the replay the events whose ExecutionReports a store lacks
// (LostReports), renders them as outbound would and hands them to the
// sessions' senders before any connection is accepted (Redeliver): they are
// stored, and a client that logs on without resetting its sequence numbers
// gets them by resend, with their original ExecIDs.

// ReportMark is what one session's store holds of the matcher's reports.
type ReportMark struct {
	// Rebuild is false for a session whose reports are not rebuilt (no
	// store file, a drop-copy session).
	Rebuild bool
	// ExecID is the highest matcher ExecID in the store since its last
	// reset; 0: none, and ResetNs says from when the session was sent
	// nothing.
	ExecID  uint64
	ResetNs int64
}

// LostReports keeps, from the events of a replay, those whose reports a
// session's store lacks, at most max of them.
type LostReports struct {
	marks   []ReportMark // by session index
	max     int
	events  [][]byte
	dropped int
}

// NewLostReports collects for the sessions marks describes (by index).
func NewLostReports(marks []ReportMark, max int) *LostReports {
	return &LostReports{marks: marks, max: max}
}

// Event looks at one replayed event (valid only during the call).
func (l *LostReports) Event(ev []byte) {
	session, execID, ok := reportOf(ev)
	if !ok || int(session) >= len(l.marks) {
		return
	}
	m := &l.marks[session]
	if !m.Rebuild || (m.ExecID != 0 && execID <= m.ExecID) || (m.ExecID == 0 && venue.TimestampNsOf(ev) <= m.ResetNs) {
		return
	}
	if len(l.events) == l.max {
		l.dropped++
		return
	}
	l.events = append(l.events, append([]byte(nil), ev...))
}

// Events are the kept events, in journal order, and how many more there
// were beyond the bound.
func (l *LostReports) Events() (events [][]byte, dropped int) { return l.events, l.dropped }

// reportOf is the session and ExecID of an event answered with an
// ExecutionReport that carries the matcher's ExecID.
func reportOf(ev []byte) (session uint16, execID uint64, ok bool) {
	id, err := venue.TemplateIDOf(ev, 0)
	if err != nil {
		return 0, 0, false
	}
	switch id {
	case venue.OrderAcceptedTemplateID:
		return reportIn[venue.OrderAccepted](ev)
	case venue.OrderRejectedTemplateID:
		return reportIn[venue.OrderRejected](ev)
	case venue.FillTemplateID:
		return reportIn[venue.Fill](ev)
	case venue.OrderCancelledTemplateID:
		return reportIn[venue.OrderCancelled](ev)
	case venue.OrderReplacedTemplateID:
		return reportIn[venue.OrderReplaced](ev)
	case venue.OrderStatusTemplateID:
		return reportIn[venue.OrderStatus](ev)
	case venue.OrderTriggeredTemplateID:
		return reportIn[venue.OrderTriggered](ev)
	}
	return 0, 0, false
}

// reportIn decodes ev as event type T for reportOf.
func reportIn[T any, P interface {
	*T
	WrapDecode([]byte, int) error
	SessionIdx() uint16
	ExecID() uint64
}](ev []byte) (uint16, uint64, bool) {
	var e T
	if P(&e).WrapDecode(ev, 0) != nil {
		return 0, 0, false
	}
	return P(&e).SessionIdx(), P(&e).ExecID(), true
}

// Redeliver renders the ExecutionReports of events (from LostReports) as
// outbound would and hands them to their sessions' senders, then waits, at
// most within, until every sender has handed them to QuickFIX/Go, which
// stores them. Call it after Start and before any session can log on. It
// returns how many reports it handed over.
func (g *Gateway) Redeliver(events [][]byte, within time.Duration) int {
	// A gateway of its own renders them, as for a drop-copy replay
	// (replayCopies), reading the live open-order view (ExpireTime, StopPx)
	// and instruments.
	rg := &Gateway{cfg: g.cfg, log: g.log, metrics: NewMetrics(nil), open: g.open}
	rg.instruments.Store(g.instruments.Load())
	n := 0
	for _, ev := range events {
		rg.dispatch(ev)
		for _, h := range rg.held {
			if s := g.sessionOf(h.idx); s != nil && s.cfg.DropCopy == nil {
				s.out.enqueue(h.m)
				n++
			}
		}
		clear(rg.held)
		rg.held, rg.openHeld, rg.statusHeld = rg.held[:0], rg.openHeld[:0], rg.statusHeld[:0]
	}
	deadline := time.Now().Add(within)
	for {
		left := g.queued()
		if left == 0 {
			return n
		}
		if time.Now().After(deadline) {
			g.log.Warn("rebuilt answers not yet stored", "messages_queued", left, "waited", within)
			return n
		}
		time.Sleep(time.Millisecond)
	}
}
