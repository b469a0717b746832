package gateway

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Drop-copy replay (README.md, "Drop copy"). Beyond its FIX store's bound a
// drop-copy session asks for the ExecutionReports of a period with a
// TradeCaptureReportRequest (35=AD): FIX 4.4 has no message to resend an
// application's reports by range, and AD is its request for the post-trade
// record of a period (TradeRequestType 569=0, all trades; the period in
// TrdCapDtGrp: NoDates 580=1 or 2, each entry TradeDate 75, the group's
// delimiter, and TransactTime 60: from and, optionally, to, both
// inclusive). Both AD and its acknowledgement
// TradeCaptureReportRequestAck (35=AQ) are in FIX44.xml, so strict clients
// accept the exchange. The venue answers an AQ Accepted (750=0), then the
// copies, exactly as it copies them live (797=Y, DeliverToCompID 128) and
// only those of the session's grants, whose TransactTime lies in the
// period, in the venue's order, then an AQ Completed (750=1) with
// TotNumTradeReports (748) the number sent. The copies are rebuilt from the
// journal's durable commands by a matcher of their own (Config.ReplayEvents):
// reports that never reached the matcher (the gateway's own rejects) are
// not in the journal and are not replayed, and a gateway with no sessions
// renders them, so what came from a session's live state (a status
// report's OrdStatusReqID, the session's name in a risk reject's Text) is
// not in the replayed copy. Live copies keep flowing
// meanwhile; a client tells a replayed report it already has by its ExecID.
//
// Refused with an AQ Rejected (750=2): a request from an order session
// (749=9, not authorized: only drop-copy sessions have grants), a
// TradeRequestType other than 0 (749=8), a subscription (263 other than 0),
// no period or a field the replay does not serve (749=99, the Text naming
// it: replayRequestTags), and a request while another replay runs, venue
// wide (749=99: a replay holds a matcher; ask again). At most
// replayReportsMax reports are sent per request; the Completed AQ's Text
// then says where to ask again.

// replayReportsMax bounds the copies one request is sent.
const replayReportsMax = 100_000

// replayQueueWait bounds how long a replay waits for room in the
// drop-copy session's outbound queue before it gives up.
const replayQueueWait = 30 * time.Second

// errReplayStopped ends a replay when the venue stops: its AQ says
// Rejected, with how many reports were sent and where to ask again, and
// the stop waits for it to be queued (awaitStopDrain), so that it reaches
// the session's store. Before, the replay went on after the session's
// sender had stopped: its last copies and the final AQ were neither sent
// nor stored, and the client had an Accepted with no end.
var errReplayStopped = errors.New("the venue is stopping")

// TradeRequestResult (749) and TradeRequestStatus (750) values.
const (
	tradeRequestSuccessful       = 0
	tradeRequestTypeNotSupported = 8
	tradeRequestUnauthorized     = 9
	tradeRequestOther            = 99
	tradeRequestAccepted         = 0
	tradeRequestCompleted        = 1
	tradeRequestRejected         = 2
)

// ReplayEvents walks the journal's durable commands in order, calling fn
// with each command and then with each of its events (header and block;
// venue.IsCommand tells them apart: a reject's report reads its command,
// postonly.go); fn returns false to stop early. It returns when the
// durable commands are done, fn stopped or stop closed.
type ReplayEvents func(stop <-chan struct{}, fn func(ev []byte) bool) error

// replayRequest is a parsed TradeCaptureReportRequest.
type replayRequest struct {
	id, reqType  string
	fromNs, toNs int64
	refusal      int // 0: none, else TradeRequestResult
	refusalText  string
}

// replayRequestTags are the fields of an AD the venue serves: the
// request's ID and type, a snapshot, the period (NoDates, its entries'
// TradeDate and TransactTime), in-band delivery and a Text. Any other
// narrows the request (an instrument, a side, an order, an execution, a
// trading session, parties, a clearing date...) or asks for another
// delivery, which a replay does not do: it sends every report of the
// period of the session's grants. A request with one is refused naming it,
// never served as if the field were absent.
var replayRequestTags = map[quickfix.Tag]bool{
	tag.TradeRequestID: true, tag.TradeRequestType: true, tag.SubscriptionRequestType: true,
	tag.NoDates: true, tag.TradeDate: true, tag.TransactTime: true,
	tag.ResponseTransportType: true, tag.Text: true, tag.EncodedTextLen: true, tag.EncodedText: true,
}

// responseTransportInband is ResponseTransportType (725) 0: the answer on
// the session that asked, the only delivery the venue makes.
const responseTransportInband = "0"

// unservedReplayField returns the refusal Text of an AD field the venue
// does not serve (replayRequestTags), the lowest tag of them, or "".
func unservedReplayField(m *quickfix.Message) string {
	tags := m.Body.Tags()
	slices.Sort(tags)
	for _, t := range tags {
		v := string(fieldBytes(m, t))
		if replayRequestTags[t] && (t != tag.ResponseTransportType || v == responseTransportInband) {
			continue
		}
		return "tag " + strconv.Itoa(int(t)) + "=" + v + " is not served: a replay sends every report of the period of the " +
			"session's grants, in band; ask with the period (NoDates 580) alone"
	}
	return ""
}

// parseReplayRequest reads an AD.
func parseReplayRequest(m *quickfix.Message) replayRequest {
	var r replayRequest
	r.id, _ = m.Body.GetString(tag.TradeRequestID)
	r.reqType, _ = m.Body.GetString(tag.TradeRequestType)
	if r.reqType != "0" {
		r.refusal, r.refusalText = tradeRequestTypeNotSupported, "only TradeRequestType 0 (all trades) is served"
		return r
	}
	if text := unservedReplayField(m); text != "" {
		r.refusal, r.refusalText = tradeRequestOther, text
		return r
	}
	if sub, err := m.Body.GetString(tag.SubscriptionRequestType); err == nil && sub != "0" {
		r.refusal, r.refusalText = tradeRequestOther, "subscriptions are not served: live copies already flow on this session"
		return r
	}
	dates := quickfix.NewRepeatingGroup(tag.NoDates, quickfix.GroupTemplate{
		quickfix.GroupElement(tag.TradeDate), quickfix.GroupElement(tag.TransactTime)})
	if err := m.Body.GetGroup(dates); err != nil || dates.Len() < 1 || dates.Len() > 2 {
		r.refusal, r.refusalText = tradeRequestOther, "give the period as NoDates (580) 1 or 2 with TransactTime (60) from [and to]"
		return r
	}
	r.toNs = 1<<63 - 1
	for i := 0; i < dates.Len(); i++ {
		t, err := dates.Get(i).GetTime(tag.TransactTime)
		if err != nil {
			r.refusal, r.refusalText = tradeRequestOther, "each NoDates (580) entry needs a TransactTime (60)"
			return r
		}
		if i == 0 {
			r.fromNs = clampedUnixNano(t)
		} else {
			r.toNs = clampedUnixNano(t)
		}
	}
	if r.toNs < r.fromNs {
		r.refusal, r.refusalText = tradeRequestOther, "the period ends before it starts"
	}
	return r
}

// clampedUnixNano is t in nanoseconds since the epoch, with a time before
// it as 0 and one past what an int64 holds (year 2262) as the largest: no
// report is outside either, and UnixNano would wrap around.
func clampedUnixNano(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, 0)):
		return 0
	case t.After(time.Unix(0, 1<<63-1)):
		return 1<<63 - 1
	}
	return t.UnixNano()
}

// transactTimeLayout is the TransactTime (60) of the venue's reports
// (erBuilder.time): milliseconds.
const transactTimeLayout = "20060102-15:04:05.000"

// transactTimeNs is event time ns as a report's TransactTime shows it:
// truncated to the millisecond.
func transactTimeNs(ns int64) int64 { return ns - ns%int64(time.Millisecond) }

// tradeRequestAck builds an AQ. total < 0 leaves TotNumTradeReports out.
// Its Instrument, which FIX 4.4 requires (QuickFIX's dictionary cannot
// say so: Symbol is optional within the component), is Symbol [N/A]: a
// replay is of every instrument, as an ExecutionReport with no instrument
// of the venue's names none (gatewayER).
func tradeRequestAck(r replayRequest, result, status, total int, text string) *quickfix.Message {
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "AQ")
	m.Body.SetString(tag.TradeRequestID, r.id)
	m.Body.SetString(tag.TradeRequestType, r.reqType)
	m.Body.SetInt(tag.TradeRequestResult, result)
	m.Body.SetInt(tag.TradeRequestStatus, status)
	m.Body.SetString(tag.Symbol, "[N/A]")
	if total >= 0 {
		m.Body.SetInt(tag.TotNumTradeReports, total)
	}
	if text != "" {
		m.Body.SetString(tag.Text, text)
	}
	return m
}

// onTradeCaptureReportRequest answers an AD from session s.
func (g *Gateway) onTradeCaptureReportRequest(s *session, m *quickfix.Message) {
	r := parseReplayRequest(m)
	switch {
	case s.cfg.DropCopy == nil:
		r.refusal, r.refusalText = tradeRequestUnauthorized, "only drop-copy sessions may ask for reports"
	case r.refusal == 0 && g.cfg.ReplayEvents == nil:
		r.refusal, r.refusalText = tradeRequestOther, "this venue does not replay reports"
		if g.cfg.NoReplayText != "" {
			r.refusalText = g.cfg.NoReplayText
		}
	case r.refusal == 0 && !g.replayBusy.CompareAndSwap(false, true):
		r.refusal, r.refusalText = tradeRequestOther, "another replay is running: ask again later"
	}
	if r.refusal != 0 {
		g.metrics.dropCopyRefused.Inc()
		s.out.enqueue(tradeRequestAck(r, r.refusal, tradeRequestRejected, -1, r.refusalText))
		return
	}
	s.out.enqueue(tradeRequestAck(r, tradeRequestSuccessful, tradeRequestAccepted, -1, ""))
	g.replaying.Add(1) // a stop waits until its last AQ is queued
	go func() {
		defer g.replaying.Add(-1)
		n, next, err := g.replayCopies(s, r)
		if !errors.Is(err, errReplayStopped) {
			// The replay's matcher, as large as the venue's, is garbage
			// now: collect it and return its memory before the next replay
			// may start, or back-to-back requests each allocate another
			// before the last is collected, and the venue holds several
			// times its own memory long after (README "Drop copy": as much
			// memory as the venue's while the replay runs).
			debug.FreeOSMemory()
		}
		// Free before the last answer goes out: a client that asks again
		// as soon as it reads it must not be told a replay is running.
		g.replayBusy.Store(false)
		text := ""
		switch {
		case errors.Is(err, errReplayStopped):
			s.out.enqueue(tradeRequestAck(r, tradeRequestOther, tradeRequestRejected, n, fmt.Sprintf(
				"the venue stopped after %d reports of the period: ask again from TransactTime %s once it is back",
				n, time.Unix(0, next).UTC().Format(transactTimeLayout))))
			return
		case err != nil:
			g.log.Warn("drop-copy replay failed", "session", s.cfg.ID.String(), "err", err)
			s.out.enqueue(tradeRequestAck(r, tradeRequestOther, tradeRequestRejected, n, "replay failed after "+strconv.Itoa(n)+" reports: "+err.Error()))
			return
		case next != 0:
			text = fmt.Sprintf("first %d reports of the period; ask again from TransactTime %s",
				n, time.Unix(0, next).UTC().Format(transactTimeLayout))
		}
		s.out.enqueue(tradeRequestAck(r, tradeRequestSuccessful, tradeRequestCompleted, n, text))
	}()
}

// replayCopies sends s the copies of the period's reports of its grants.
// next is the TransactTime of the first report left out by the bound (0:
// none left out); when the venue stops (errReplayStopped), the time to ask
// again from: the first report not sent, when the stop came at one, else
// the last one sent (copies at that millisecond come again), or the
// period's start.
func (g *Gateway) replayCopies(s *session, r replayRequest) (n int, next int64, err error) {
	// The replay's matcher and gateway are its own and touch no live state:
	// a fault in them fails this request, never the venue.
	defer func() {
		if p := recover(); p != nil {
			g.log.Error("drop-copy replay panicked", "session", s.cfg.ID.String(), "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	// A gateway of its own renders the reports: it starts with the
	// configured instruments, learns added ones from the replayed events and
	// has no session, so rendering touches no live state. It keeps an
	// open-order view and the trading statuses of its own from the events,
	// as outbound does, since reports read them (a fill's or a cancel's
	// ExpireTime, StopPx, MaxFloor and ExecInst 6: orderTerms; an auction's
	// TradingSessionSubID): from every replayed event, those before the
	// period too, or a copy of an order entered before it would lack them.
	rg := &Gateway{cfg: g.cfg, log: g.log, replay: true, metrics: NewMetrics(nil),
		open: newOpenOrders(len(g.cfg.Sessions), g.open.max), rejectEchoes: newRejectEchoes(1)}
	rg.open.endedMax = 0 // it refuses no cancel: no ended order need be remembered
	rg.instruments.Store(newInstrumentTable(g.cfg.Instruments))
	grant := s.cfg.DropCopy
	stop := make(chan struct{})
	defer close(stop)
	var waitErr error
	sentUpTo := r.fromNs
	err = g.cfg.ReplayEvents(stop, func(ev []byte) bool {
		if g.stopping.Load() != nil {
			waitErr, next = errReplayStopped, sentUpTo
			return false
		}
		if id, err := venue.TemplateIDOf(ev, 0); err == nil && venue.IsCommand(id) {
			rg.noteCommand(ev) // its events follow: one slot is enough
			return true
		}
		rg.dispatch(ev)
		rg.open.apply(rg.openHeld)
		rg.applyStatus()
		held := rg.held
		rg.held, rg.openHeld, rg.statusHeld = rg.held[:0], rg.openHeld[:0], rg.statusHeld[:0]
		// The period is compared with the TransactTime the event's reports
		// show (its time), in milliseconds, not the event's nanoseconds: a
		// period that ends at a report's TransactTime includes it, as the
		// period is inclusive (README "Drop copy").
		shown := transactTimeNs(venue.TimestampNsOf(ev))
		if shown < r.fromNs || shown > r.toNs {
			return true
		}
		for _, h := range held {
			if t, e := h.m.Header.GetBytes(tag.MsgType); e != nil || string(t) != "8" {
				continue
			}
			orig := g.sessionOf(h.idx)
			if orig == nil || orig.cfg.DropCopy != nil {
				continue
			}
			client := orig.cfg.ID.TargetCompID
			if !grant.All && !contains(grant.Sessions, client) && !g.copiedByAccount(orig, grant, accountOf(h.m)) {
				continue
			}
			if n == replayReportsMax {
				next = shown
				return false
			}
			if waitErr = g.waitQueueRoom(s); waitErr != nil {
				if errors.Is(waitErr, errReplayStopped) {
					next = shown
				}
				return false
			}
			s.out.enqueue(dropCopyOf(h.m, client))
			g.metrics.dropCopies.Inc()
			n++
			sentUpTo = shown
		}
		return true
	})
	return n, next, errors.Join(err, waitErr)
}

// waitQueueRoom waits, as a mass status does (sender.enqueueWait), until
// at most a small window of the session's outbound queue is in use and its
// connection's outbound buffer is at most half full (Backlogger), so that
// a replay never fills either (a full one disconnects). Waiting for the
// queue alone let a client that reads slower than the journal replays
// fill the connection's buffer, which the sender fills as fast as
// QuickFIX/Go writes to it: the drop-copy session was disconnected
// mid-replay (fix.outbound_queue_max writes or 4 MiB). A stop ends the
// wait (errReplayStopped).
func (g *Gateway) waitQueueRoom(s *session) error {
	deadline := time.Now().Add(replayQueueWait)
	window := max(1, min(massStatusWindowMax, s.out.queue.max/4))
	backlog, _ := s.out.pacer.(Backlogger)
	for s.out.queue.len() >= window || (backlog != nil && backlog.Backlogged(s.out.id)) {
		if g.stopping.Load() != nil {
			return errReplayStopped
		}
		if !s.loggedOn.Load() {
			return fmt.Errorf("session %s logged off", s.cfg.ID.String())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("session %s read nothing for %s", s.cfg.ID.String(), replayQueueWait)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}
