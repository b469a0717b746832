package gateway

import (
	"math"
	"time"

	"github.com/fixvenue/fixvenue/core"
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
// gets them by resend, with their original ExecIDs. A drop-copy session's
// copies reach its store in event order too, through a sender of its own
// that may lag the originals' or lead them: its own store says which copies
// it lacks, and each report and copy is redelivered only where it is lacking.
// A fill's, a cancel's or a replace's report says what its order is beyond
// what the event carries (ExpireTime, StopPx, MaxFloor, ExecInst 6:
// orderTerms); the order may have ended by the replay's end, so the
// matcher being replayed is asked for them as each such event is kept
// (core.Matcher.OrderTerms), when they are those the live report gave.

// ReportMark is what one session's store holds of the matcher's reports
// (of the copies of them, for a drop-copy session).
type ReportMark struct {
	// Rebuild is false for a session whose reports are not rebuilt (no
	// store file).
	Rebuild bool
	// ExecID is the highest matcher ExecID in the store since its last
	// reset; 0: none, and ResetNs says from when the session was sent
	// nothing.
	ExecID  uint64
	ResetNs int64
	// DropCopy marks a drop-copy session's store, which holds copies.
	DropCopy bool
}

// LostReports keeps, from the events of a replay, those whose reports a
// session's store lacks, at most max of them.
type LostReports struct {
	marks []ReportMark // by session index
	// copyExecMin and copyExecResetMin are the least ExecID and reset time
	// of the drop-copy marks with an ExecID, copyResetMin the least reset
	// time of those with none: some drop-copy store may lack an event's
	// copy only when the event is past both of the first or past the
	// last, which Event tests without a walk of the sessions.
	copyExecMin      uint64
	copyExecResetMin int64
	copyResetMin     int64
	max              int
	events           [][]byte
	dropped          int
	// storeless counts, by session, the reports replayed for a session
	// with no store file (NoStore).
	storeless []int
	// lastEchoKey is the seq+1 of the command replayed last when it is a
	// NewOrder whose reject echoes something (0: it is not), lastEcho what;
	// echoes are those of such orders with a kept event, by causeSeq
	// (postonly.go).
	lastEchoKey uint64
	lastEcho    orderEcho
	echoes      map[uint64]orderEcho
	// source is the matcher being replayed (nil: no terms are read);
	// terms are, by index in events, the terms of a kept Fill's,
	// OrderCancelled's or OrderReplaced's order when it has any.
	source OrderTermsSource
	terms  map[int]core.OrderTerms
}

// OrderTermsSource gives an order's terms by OrderID while the replay
// applies the command that emitted its event: the matcher being replayed
// (core.Matcher.OrderTerms).
type OrderTermsSource interface {
	OrderTerms(orderID uint64) (core.OrderTerms, bool)
}

// NewLostReports collects for the sessions marks describes (by index),
// reading the terms of the orders of the kept events from source, the
// matcher the replay applies the commands to.
func NewLostReports(marks []ReportMark, max int, source OrderTermsSource) *LostReports {
	l := &LostReports{marks: marks, max: max, copyExecMin: math.MaxUint64, copyExecResetMin: math.MaxInt64,
		copyResetMin: math.MaxInt64, storeless: make([]int, len(marks)), source: source}
	for _, m := range marks {
		switch {
		case !m.DropCopy || !m.Rebuild:
		case m.ExecID != 0:
			l.copyExecMin = min(l.copyExecMin, m.ExecID)
			l.copyExecResetMin = min(l.copyExecResetMin, m.ResetNs)
		default:
			l.copyResetMin = min(l.copyResetMin, m.ResetNs)
		}
	}
	return l
}

// lacks reports whether a store the mark describes lacks the report (or
// copy) of an event with this ExecID and time. An event from before the
// store's last reset is never lacking, whatever ExecID the store holds: a
// drop-copy session that reset and then asked for an earlier period
// (35=AD) holds copies of old reports only, and the reports between them
// and its reset were sent before it (docs/ARCHITECTURE.md, "Answers lost
// at a crash").
func (m *ReportMark) lacks(execID uint64, tsNs int64) bool {
	return m.Rebuild && tsNs > m.ResetNs && (m.ExecID == 0 || execID > m.ExecID)
}

// Command looks at one replayed command (valid only during the call),
// before its events: what a NewOrder's reject echoes of it (post-only, a
// GTD's expire time) is noted.
func (l *LostReports) Command(cmd []byte) {
	l.lastEchoKey = 0
	if seq, e, ok := echoOfCommand(cmd); ok {
		l.lastEchoKey, l.lastEcho = seq+1, e
	}
}

// Event looks at one replayed event (valid only during the call, which is
// the matcher's sink's Commit): it is kept when its session's store lacks
// its report or some drop-copy session's store lacks a copy of it
// (Redeliver decides which it gets). A kept Fill's, OrderCancelled's or
// OrderReplaced's order is still live in the matcher then, and its terms
// are the ones its live report read from the open-order view.
func (l *LostReports) Event(ev []byte) {
	session, execID, ok := reportOf(ev)
	if !ok || int(session) >= len(l.marks) {
		return
	}
	if !l.marks[session].Rebuild {
		l.storeless[session]++
	}
	ts := venue.TimestampNsOf(ev)
	if !l.marks[session].lacks(execID, ts) && (execID <= l.copyExecMin || ts <= l.copyExecResetMin) && ts <= l.copyResetMin {
		return
	}
	if len(l.events) == l.max {
		l.dropped++
		return
	}
	l.events = append(l.events, append([]byte(nil), ev...))
	if orderID, ok := termsOrderOf(ev); ok && l.source != nil {
		if t, ok := l.source.OrderTerms(orderID); ok && t != (core.OrderTerms{}) {
			if l.terms == nil {
				l.terms = map[int]core.OrderTerms{}
			}
			l.terms[len(l.events)-1] = t
		}
	}
	if cause := venue.CauseSeqOf(ev); l.lastEchoKey == cause+1 {
		if l.echoes == nil {
			l.echoes = map[uint64]orderEcho{}
		}
		l.echoes[cause] = l.lastEcho
	}
}

// Events are the kept events, in journal order, and how many more there
// were beyond the bound.
func (l *LostReports) Events() (events [][]byte, dropped int) { return l.events, l.dropped }

// NoStore returns, by session index, how many reports the replay met for a
// session that has no store file (0 for the others): a store deleted or
// lost, whose client's sequence numbers start again at 1 and whose reports
// cannot be resent.
func (l *LostReports) NoStore() []int { return l.storeless }

// Storeless reports whether session has no store file.
func (l *LostReports) Storeless(session int) bool {
	return session < len(l.marks) && !l.marks[session].Rebuild
}

// Lacking counts, by session index, the kept events whose own session's
// store lacks their report, for a start that sends none of them (the
// copies a drop-copy store lacks are not counted: which sessions it is
// granted is the gateway's to say).
func (l *LostReports) Lacking() []int {
	n := make([]int, len(l.marks))
	for _, ev := range l.events {
		session, execID, _ := reportOf(ev)
		if int(session) < len(l.marks) && l.marks[session].lacks(execID, venue.TimestampNsOf(ev)) {
			n[session]++
		}
	}
	return n
}

// Free drops the kept events once redelivered.
func (l *LostReports) Free() { l.events, l.terms = nil, nil }

// termsOrderOf is the OrderID of an event whose report reads its order's
// terms (orderTerms, onReplaced's post-only).
func termsOrderOf(ev []byte) (uint64, bool) {
	id, err := venue.TemplateIDOf(ev, 0)
	if err != nil {
		return 0, false
	}
	switch id {
	case venue.FillTemplateID:
		var e venue.Fill
		if e.WrapDecode(ev, 0) == nil {
			return e.OrderID(), true
		}
	case venue.OrderCancelledTemplateID:
		var e venue.OrderCancelled
		if e.WrapDecode(ev, 0) == nil {
			return e.OrderID(), true
		}
	case venue.OrderReplacedTemplateID:
		var e venue.OrderReplaced
		if e.WrapDecode(ev, 0) == nil {
			return e.OrderID(), true
		}
	}
	return 0, false
}

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

// Redeliver renders the ExecutionReports of the events lost kept as
// outbound would and hands each to its session's sender when that session's
// store lacks it, and a copy of it to each drop-copy session granted it whose
// store lacks the copy; then it waits, at most within, until every sender
// has handed them to QuickFIX/Go, which stores them. Call it after Start
// and before any session can log on. It returns how many reports and copies
// it handed over.
func (g *Gateway) Redeliver(lost *LostReports, within time.Duration) (reports, copies int) {
	// A gateway of its own renders them, as for a drop-copy replay
	// (replayCopies), reading the instruments. What a fill's, a cancel's or
	// a replace's report says of its order beyond its event (ExpireTime,
	// StopPx, MaxFloor, ExecInst 6: orderTerms) is the terms the replay
	// read as it kept the event, handed to the report as a change held
	// with it (termsOf reads held changes first): the order may have ended
	// by the replay's end, and the open-order view seeded then, read
	// otherwise, no longer holds it.
	rg := &Gateway{cfg: g.cfg, log: g.log, replay: true, metrics: NewMetrics(nil), open: g.open, rejectEchoes: newRejectEchoes(1)}
	rg.instruments.Store(g.instruments.Load())
	marks := lost.marks
	for i, ev := range lost.events {
		sessionIdx, execID, _ := reportOf(ev)
		ts := venue.TimestampNsOf(ev)
		if cause := venue.CauseSeqOf(ev); lost.echoes[cause].noted() {
			rg.rejectEchoes.note(cause, lost.echoes[cause])
		}
		if t, ok := lost.terms[i]; ok {
			orderID, _ := termsOrderOf(ev)
			rg.openHeld = append(rg.openHeld, openChange{session: sessionIdx, kind: openEntered, order: openOrder{orderID: orderID,
				expireTimeNs: t.ExpireTimeNs, stopPxTicks: t.StopPxTicks, maxFloorQty: t.MaxFloorQty,
				postOnly: t.Flags.Has(venue.OrderFlagsPostOnly)}})
		}
		rg.dispatch(ev)
		for _, h := range rg.held {
			s := g.sessionOf(h.idx)
			if s == nil || s.cfg.DropCopy != nil {
				continue
			}
			if s.route != nil {
				s.route.copyTo(h.m, func(dc *session) bool {
					lacks := int(dc.idx) < len(marks) && marks[dc.idx].lacks(execID, ts)
					if lacks {
						copies++
					}
					return lacks
				})
			}
			if int(s.idx) < len(marks) && marks[s.idx].lacks(execID, ts) {
				s.out.enqueueUncopied(h.m)
				reports++
			}
		}
		clear(rg.held)
		rg.held, rg.openHeld, rg.statusHeld = rg.held[:0], rg.openHeld[:0], rg.statusHeld[:0]
	}
	deadline := time.Now().Add(within)
	for {
		left := g.queued()
		if left == 0 {
			return reports, copies
		}
		if time.Now().After(deadline) {
			g.log.Warn("rebuilt answers not yet stored", "messages_queued", left, "waited", within)
			return reports, copies
		}
		time.Sleep(time.Millisecond)
	}
}
