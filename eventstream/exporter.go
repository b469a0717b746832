package eventstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Config configures an Exporter.
type Config struct {
	// JournalDir is the journal (and its snapshots) the exporter catches
	// up from when the tap cannot give it the events it needs.
	JournalDir string
	// SnapshotsFrom is the first seq whose snapshots fit NewMatcher's
	// configuration (those before it list other instruments); 0: all.
	SnapshotsFrom uint64
	// NewMatcher returns a fresh matcher configured as the venue's, for a
	// catch-up from the journal (doc.go, "Catching up from the journal").
	NewMatcher func() (*core.Matcher, error)
	// Base, when set, returns the state the journal continues from when
	// it does not hold the commands from the first (a cluster replica
	// restored from a Raft snapshot: cluster.Base), with the seq of the
	// first command after it; a nil matcher: the journal holds them all.
	// A catch-up starts there when no journal snapshot before the event
	// to continue after fits.
	Base func() (*core.Matcher, uint64, error)
	// Durable returns the highest durable command seq (-1: none); nothing
	// after it is exported.
	Durable func() int64
	// Tap holds the venue's own events (nil: every event comes from the
	// journal through a matcher of the exporter's own, as for a tool).
	Tap *Tap
	// Connect dials NATS. The connection must not reconnect on its own
	// (nats.NoReconnect): the exporter reconnects itself and reads where
	// the stream ends before it publishes again.
	Connect  func() (*nats.Conn, error)
	Subjects Subjects
	Stream   string
	Format   Format
	// Window bounds the events published and not yet acknowledged (but
	// for the batch the stream ends in, completed after a restart). The
	// exporter holds up to max(Window, BatchEventsMax) events.
	Window int
	Logger *slog.Logger
	// Registerer receives the exporter's metrics (nil: not registered).
	Registerer prometheus.Registerer
	// Retry is the wait after a failure (NATS unreachable, a stream it
	// cannot continue) before the next attempt. Default RetryDefault.
	Retry time.Duration
	// Poll is the wait for new events once caught up. Default PollDefault.
	Poll time.Duration
	// AckTimeout bounds the wait for an event's ack. Default AckTimeoutDefault.
	AckTimeout time.Duration
}

// Defaults of Config.
const (
	RetryDefault      = time.Second
	PollDefault       = 10 * time.Millisecond
	AckTimeoutDefault = 5 * time.Second
	// opTimeout bounds one JetStream API call (stream info, get message).
	opTimeout = 5 * time.Second
)

// pendingEvent is an event taken for the stream and not yet acknowledged.
type pendingEvent struct {
	Event
	buf [core.EventSlotMin]byte
}

// flight is a batch published and not yet acknowledged: its events are
// the oldest pending ones.
type flight struct {
	events    int
	last      Position               // its last event
	streamSeq uint64                 // the stream sequence of its last part
	fut       jetstream.PubAckFuture // nil: the stream held every part already
	published time.Time
	// unacked: parts published before the last without asking for an ack.
	unacked int
}

// forcedBatch is a batch the stream holds parts of (after a restart or a
// lost ack): the exporter forms the same batch again, checks the last part
// the stream holds against its own and publishes the parts after it.
type forcedBatch struct {
	first, last uint64
	stored      int    // the parts the stream holds
	data        []byte // the events of the last part the stream holds (format sbe)
}

// batchPart is one subject's events of the batch being formed.
type batchPart struct {
	subject string
	events  []Event
}

// Exporter publishes every durable event to a JetStream stream, in order,
// each once (see doc.go).
type Exporter struct {
	cfg Config
	log *slog.Logger
	tap *Tap
	// runBase maps the tap to the stream: the run's event of ring
	// sequence k is event runBase+k+1 (-1: not known yet; a catch-up
	// learns it where it meets the tap).
	runBase int64
	// popped is the ring sequence of the last entry taken off the tap.
	popped int64
	// Catch-up state, while m is not nil: a matcher of the exporter's own
	// applies the journal's durable commands from a snapshot and produces
	// the venue's events (determinism) until they meet the tap's.
	m        *core.Matcher
	tail     *journal.ChainTailer
	sink     collectSink
	staged   []Event // events of the last applied command, not yet pending
	skipTo   *Event  // while catching up: the stream's last event, not yet reached
	filledTo int64   // the last command applied by the catch-up matcher
	// next is the event sequence the next event taken gets.
	next uint64
	// last is where a catch-up starts: after the last event taken, or,
	// with lastStart, at the first event of the batch the stream ends with.
	last      Event
	lastBuf   [core.EventSlotMin]byte
	haveLast  bool
	lastStart bool
	// skipStart: the catch-up's skipTo is the first event to take, not
	// the last one to pass over.
	skipStart bool
	// pend is a ring of Window events taken and not yet acknowledged:
	// pLen of them from pHead, the first pPub of those in batches
	// published on this connection (flights, fLen of them from fHead).
	pend              []pendingEvent
	pHead, pLen, pPub int
	flights           []flight
	fHead, fLen       int
	parts             []batchPart
	// streamLast is the stream sequence of the last message published (or
	// the stream's last, after a resume), lastMsgID its Nats-Msg-Id
	// ("": none, an empty stream).
	streamLast uint64
	lastMsgID  string
	forced     *forcedBatch
	acked      Position
	met        *metrics
	subjects   map[subjectKey]string
	// lastErr is logged only when it changes, so an outage is one line;
	// it is cleared, and the export logged as resumed, once a connection
	// makes progress, not merely once it connects (a stream that refuses
	// every batch would otherwise log two lines at every retry).
	lastErr string
	// catchUpLoggedIn is the failure (lastErr) during which a catch-up was
	// last logged: a catch-up that fails in the journal is started again
	// at every retry, and is logged once for that failure, not each time.
	catchUpLoggedIn string
	// ackEach: every part of the next batch asks for an ack, which it
	// waits for. Set on a connection after a failure: a part published
	// without a reply subject that JetStream refuses (its storage full, a
	// limit of the stream) shows only as the next part not continuing the
	// stream; its ack says why.
	ackEach bool
	// lastKept: the server checks, for the first message of each batch,
	// that the stream still holds its last message (checkLastKept).
	lastKept bool
}

// New checks the configuration; Run does the work.
func New(cfg Config) (*Exporter, error) {
	if cfg.JournalDir == "" || cfg.NewMatcher == nil || cfg.Durable == nil || cfg.Connect == nil || cfg.Stream == "" {
		return nil, errors.New("eventstream: JournalDir, NewMatcher, Durable, Connect and Stream are required")
	}
	if cfg.Format != FormatSBE && cfg.Format != FormatJSON {
		return nil, fmt.Errorf("eventstream: format %q is not sbe or json", cfg.Format)
	}
	if cfg.Window <= 0 {
		return nil, errors.New("eventstream: Window must be positive")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Retry <= 0 {
		cfg.Retry = RetryDefault
	}
	if cfg.Poll <= 0 {
		cfg.Poll = PollDefault
	}
	if cfg.AckTimeout <= 0 {
		cfg.AckTimeout = AckTimeoutDefault
	}
	e := &Exporter{cfg: cfg, log: cfg.Logger, tap: cfg.Tap, met: newMetrics(cfg.Registerer),
		runBase: -1, popped: -1, pend: make([]pendingEvent, max(cfg.Window, BatchEventsMax)), flights: make([]flight, cfg.Window),
		subjects: map[subjectKey]string{}}
	if e.tap != nil && e.tap.src.SeqBase == 0 {
		// The run started on an empty journal: its first event is the first.
		e.runBase = 0
	}
	e.met.lag = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_export_lag_commands",
		Help: "Durable commands whose events the stream has not acknowledged yet."},
		func() float64 { return float64(e.Lag()) })
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(e.met.lag)
		if e.tap != nil {
			cfg.Registerer.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_export_tap_dropped_total",
				Help: "Events the export's tap could not keep (the exporter was behind by more than its bound); the exporter rebuilt them from the journal."},
				func() float64 { return float64(e.tap.Dropped()) }))
		}
	}
	e.acked.EventSeq = noEvent
	return e, nil
}

// noEvent marks acked before the exporter has read the stream.
const noEvent = ^uint64(0)

// Lag is the number of durable commands whose events the stream has not
// all acknowledged (all of them before the stream was read).
func (e *Exporter) Lag() int64 {
	return max(0, e.cfg.Durable()-e.met.doneSeq.Load())
}

// Run exports until stop is closed. Failures are logged and retried; Run
// returns only at stop.
func (e *Exporter) Run(stop <-chan struct{}) {
	defer e.endCatchUp()
	for {
		err := e.connection(stop)
		select {
		case <-stop:
			return
		default:
		}
		e.met.connected.Set(0)
		e.met.errors.Inc()
		if msg := err.Error(); msg != e.lastErr {
			e.lastErr = msg
			if e.m != nil {
				// It failed catching up, which its log already said.
				e.catchUpLoggedIn = msg
			}
			e.log.Warn("event export paused; the venue trades on and the export resumes from the stream's end", "err", err,
				"stream", e.cfg.Stream, "lag_commands", e.Lag())
		}
		select {
		case <-stop:
			return
		case <-time.After(e.cfg.Retry):
		}
	}
}

// connection is one connection's worth of exporting.
func (e *Exporter) connection(stop <-chan struct{}) error {
	nc, err := e.cfg.Connect()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer nc.Close()
	// lost is closed when the connection goes: the exporter stops waiting
	// for acks that will not come.
	lost := make(chan struct{})
	var lostOnce sync.Once
	nc.SetDisconnectErrHandler(func(*nats.Conn, error) { lostOnce.Do(func() { close(lost) }) })
	nc.SetClosedHandler(func(*nats.Conn) { lostOnce.Do(func() { close(lost) }) })
	// No per-message ack timer (WithPublishAsyncTimeout): idle checks the
	// oldest pending event against AckTimeout instead.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(e.cfg.Window+1))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	st, err := EnsureStream(ctx, js, e.cfg.Stream, e.cfg.Subjects)
	if err != nil {
		return err
	}
	last, err := LastEvent(ctx, st)
	if err != nil {
		return err
	}
	if err := e.resume(last); err != nil {
		return err
	}
	e.met.connected.Set(1)
	e.ackEach = e.lastErr != ""
	e.lastKept = checksLastKept(nc.ConnectedServerVersion())
	from := e.acked.EventSeq
	wait := time.NewTimer(e.cfg.Poll)
	defer wait.Stop()
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		if !nc.IsConnected() {
			return fmt.Errorf("nats: connection lost (%v)", nc.LastError())
		}
		took, err := e.fill()
		if err != nil {
			return err
		}
		if err := e.publish(nc, js); err != nil {
			return err
		}
		acked, err := e.collectAcks()
		if err != nil {
			return err
		}
		e.updateDone()
		if e.lastErr != "" && (e.acked.EventSeq != from || e.pLen == 0) {
			// Progress, or nothing left to publish: the failure is over.
			e.log.Info("event export resumed", "stream", e.cfg.Stream, "from_event_seq", from+1)
			e.lastErr, e.catchUpLoggedIn = "", ""
		}
		if took || acked {
			continue
		}
		if err := e.idle(wait, stop, lost); err != nil {
			return err
		}
	}
}

// idle waits for the poll tick (new events, and the acks that came
// meanwhile, taken together) or stop; only with the window full does it
// wake for the oldest event's ack itself. An ack does not wake the
// exporter on its own: at thousands of events a second that would be
// thousands of wake-ups, and the export has no hurry.
func (e *Exporter) idle(wait *time.Timer, stop, lost <-chan struct{}) error {
	wait.Reset(e.cfg.Poll)
	var ok <-chan *jetstream.PubAck
	var fail <-chan error
	if e.fLen > 0 {
		front := &e.flights[e.fHead]
		if time.Since(front.published) > e.cfg.AckTimeout {
			return fmt.Errorf("no ack for the batch up to event %d within %s", front.last.EventSeq, e.cfg.AckTimeout)
		}
		if e.pPub >= e.cfg.Window || e.pLen == len(e.pend) || e.fLen == len(e.flights) {
			ok, fail = front.fut.Ok(), front.fut.Err()
		}
	}
	select {
	case <-stop:
	case <-lost:
		return errors.New("nats: connection lost")
	case <-wait.C:
		return nil
	case a := <-ok:
		return e.ackFront(a)
	case err := <-fail:
		return e.flightErr(&e.flights[e.fHead], err)
	}
	wait.Stop()
	return nil
}

// resume positions the exporter at the end of the stream, whose last
// message is last (nil: an empty stream). When the events it holds
// continue the stream they are published again (the batch the stream
// ends in, if not complete, formed again and completed); a fresh stream
// of a run that started on an empty journal starts from the tap;
// otherwise the exporter catches up from the journal, from the first
// event of the batch the stream ends in.
func (e *Exporter) resume(last *Message) error {
	if last != nil {
		lastEv := last.Events[len(last.Events)-1]
		if d := e.cfg.Durable(); int64(lastEv.CauseSeq) > d {
			return fmt.Errorf("stream %s ends with an event of command %d, beyond the journal's durable %d: not this journal's stream",
				e.cfg.Stream, lastEv.CauseSeq, d)
		}
	}
	// Nothing is published on the new connection yet.
	e.pPub, e.fHead, e.fLen, e.forced, e.streamLast, e.lastMsgID = 0, 0, 0, nil, 0, ""
	if last != nil {
		e.streamLast = last.StreamSeq
		e.lastMsgID = msgID(last.First, last.Last, last.Part)
	}
	if e.acked.EventSeq != noEvent && e.skipTo == nil {
		if last == nil && e.acked.EventSeq == 0 {
			return nil
		}
		held := e.acked.EventSeq + uint64(e.pLen)
		if last != nil && last.First > e.acked.EventSeq && last.Last <= held {
			// The stream ends in a batch of the pending events (acks lost).
			for e.pLen > 0 && e.pend[e.pHead].EventSeq < last.First {
				e.setAcked(e.pend[e.pHead].Position)
				e.popPending()
			}
			e.forceBatch(last)
			return nil
		}
		if last != nil && last.Part == last.Parts && last.Last == e.acked.EventSeq {
			return nil
		}
	}
	e.pHead, e.pLen = 0, 0
	e.setAcked(Position{})
	e.haveLast, e.lastStart = false, false
	if last == nil && e.runBase == 0 && e.popped < 0 && e.m == nil {
		// Nothing taken off the tap yet: it holds this run's events from
		// the first, which is the journal's first.
		e.next = 1
		e.met.doneSeq.Store(-1)
		return nil
	}
	if last != nil {
		e.setAcked(Position{EventSeq: last.First - 1})
		e.last, e.haveLast, e.lastStart = Event{Position: last.Start}, true, true
		e.forceBatch(last)
		return e.catchUp(&e.last, true)
	}
	return e.catchUp(nil, false)
}

// forceBatch makes the next batch the one the stream ends in (see forcedBatch).
func (e *Exporter) forceBatch(last *Message) {
	e.forced = &forcedBatch{first: last.First, last: last.Last, stored: last.Part, data: appendPayload(nil, last.Events, FormatSBE)}
}

// pendAt is the i-th pending event from the oldest.
func (e *Exporter) pendAt(i int) *pendingEvent { return &e.pend[(e.pHead+i)%len(e.pend)] }

func (e *Exporter) popPending() {
	e.pHead = (e.pHead + 1) % len(e.pend)
	e.pLen--
	if e.pPub > 0 {
		e.pPub--
	}
}

// catchUp starts a matcher of the exporter's own from the newest snapshot
// before the command of last (the event to continue after, or with start
// the first event to take; nil: the journal's start) and the journal
// after it, to skip the events before it and produce the ones from it,
// until they meet the tap's events.
func (e *Exporter) catchUp(last *Event, start bool) error {
	e.endCatchUp()
	m, err := e.cfg.NewMatcher()
	if err != nil {
		return err
	}
	from := uint64(0)
	if last != nil && last.CauseSeq > 0 {
		snaps, err := journal.ListSnapshots(e.cfg.JournalDir)
		if err != nil {
			return err
		}
		for _, sf := range snaps { // newest first
			if sf.Seq < last.CauseSeq && sf.Seq >= e.cfg.SnapshotsFrom {
				if _, err := journal.ReadSnapshot(sf.Path, m.ReadSnapshot); err != nil {
					return fmt.Errorf("snapshot %s: %w", sf.Path, err)
				}
				from = sf.Seq + 1
				break
			}
		}
	}
	if from == 0 && e.cfg.Base != nil {
		bm, next, err := e.cfg.Base()
		if err != nil {
			return err
		}
		if bm != nil {
			// The journal starts after its base: the events of the
			// commands before it can be rebuilt from no command here.
			if last == nil || last.CauseSeq < next {
				at := "the stream is empty"
				if last != nil {
					at = fmt.Sprintf("the stream ends at event %d, of command %d", last.EventSeq, last.CauseSeq)
				}
				return fmt.Errorf("%s, before this replica's journal, which starts after a Raft snapshot at command %d: "+
					"a replica that holds those commands exports them", at, next)
			}
			m, from = bm, next
		}
	}
	if e.tail, err = journal.NewChainTailer(e.cfg.JournalDir, from); err != nil {
		return err
	}
	e.m, e.staged, e.skipTo, e.skipStart = m, e.staged[:0], nil, start
	e.next = 1
	if last != nil {
		cp := *last
		cp.Bytes = append([]byte(nil), last.Bytes...)
		e.skipTo = &cp
		e.next = last.EventSeq + 1
		if start {
			e.next = last.EventSeq
		}
	}
	e.filledTo = int64(from) - 1
	if e.pLen == 0 {
		e.met.doneSeq.Store(e.filledTo)
	}
	e.met.catchUps.Inc()
	e.met.catchingUp.Set(1)
	if e.lastErr == "" || e.lastErr != e.catchUpLoggedIn {
		e.log.Info("event export: catching up from the journal", "journal_from_seq", from, "from_event_seq", e.next)
		e.catchUpLoggedIn = e.lastErr
	}
	return nil
}

// endCatchUp drops the catch-up matcher: from here the tap gives the events.
func (e *Exporter) endCatchUp() {
	if e.tail != nil {
		_ = e.tail.Close()
	}
	e.m, e.tail, e.staged, e.skipTo = nil, nil, nil, nil
	e.met.catchingUp.Set(0)
}

func (e *Exporter) setAcked(p Position) {
	e.acked = p
	e.met.ackedEvent.Set(float64(p.EventSeq))
}

// fill takes events, up to Window pending: from the tap, or while
// catching up from the journal. It reports whether it took any.
func (e *Exporter) fill() (took bool, err error) {
	durable := e.cfg.Durable()
	for e.pLen < len(e.pend) {
		var ok bool
		if e.m != nil {
			ok, err = e.fillFromJournal(durable)
		} else {
			ok, err = e.fillFromTap(durable)
		}
		if err != nil || !ok {
			return took, err
		}
		took = true
	}
	return took, nil
}

// fillFromTap takes the tap's next event when it is durable. A hole (the
// tap dropped events the exporter needs) starts a catch-up.
func (e *Exporter) fillFromTap(durable int64) (bool, error) {
	if e.tap == nil || e.runBase < 0 {
		// The tap cannot be mapped to the stream yet (a catch-up that
		// failed before it met the tap): catch up again.
		return true, e.catchUpFromLast()
	}
	want := int64(e.next) - 1 - e.runBase // the ring sequence of the next event
	for {
		seen := e.tap.seen.Load()
		h := e.tap.head()
		switch {
		case h == nil && seen < want:
			return false, nil
		case h != nil && h.ringSeq < want:
			e.popTap(h)
			continue
		case h == nil || h.ringSeq > want:
			e.log.Warn("event export: the tap dropped events the stream needs; catching up from the journal",
				"next_event_seq", e.next, "tap_dropped_total", e.tap.Dropped())
			return true, e.catchUpFromLast()
		case int64(h.cause()) > durable:
			return false, nil
		}
		e.push(Position{EventSeq: e.next, CauseSeq: h.cause(), Index: h.index}, h.bytes[:h.n])
		e.next++
		e.popTap(h)
		return true, nil
	}
}

// catchUpFromLast catches up from where the exporter is (see last).
func (e *Exporter) catchUpFromLast() error {
	if !e.haveLast {
		return e.catchUp(nil, false)
	}
	return e.catchUp(&e.last, e.lastStart)
}

func (e *Exporter) popTap(h *tapEntry) {
	e.popped = h.ringSeq
	e.tap.pop()
}

// fillFromJournal takes the catch-up's next event, applying the next
// durable command when the last one's are all taken, and hands over to
// the tap where its events continue the catch-up's.
func (e *Exporter) fillFromJournal(durable int64) (bool, error) {
	for len(e.staged) == 0 {
		if e.handOver() {
			return true, nil
		}
		rec, ok, err := e.tail.Next(durable)
		if err != nil {
			return false, fmt.Errorf("journal: %w", err)
		}
		if !ok {
			return false, nil
		}
		e.sink.reset()
		if err := e.m.Apply(rec.Payload, &e.sink); err != nil {
			return false, fmt.Errorf("catch-up matcher at seq %d: %w", rec.Seq, err)
		}
		if err := e.take(rec.Seq); err != nil {
			return false, err
		}
		e.filledTo = int64(rec.Seq)
	}
	ev := e.staged[0]
	e.staged = e.staged[1:]
	e.push(ev.Position, ev.Bytes)
	return true, nil
}

// handOver ends the catch-up when the tap's oldest event is the next one
// to take: with runBase known, by its ring sequence; otherwise when it is
// the first event of the next command, which fixes runBase.
func (e *Exporter) handOver() bool {
	if e.tap == nil || e.skipTo != nil {
		return false
	}
	for {
		h := e.tap.head()
		if e.runBase >= 0 {
			want := int64(e.next) - 1 - e.runBase
			if h != nil && h.ringSeq < want {
				e.popTap(h)
				continue
			}
			if want < 0 || (h == nil && e.tap.seen.Load() >= want) || (h != nil && h.ringSeq != want) {
				return false // the tap no longer has that event (or never had it)
			}
		} else {
			if h == nil {
				return false
			}
			if int64(h.cause()) <= e.filledTo {
				e.popTap(h)
				continue
			}
			if int64(h.cause()) != e.filledTo+1 || h.index != 0 {
				return false
			}
			e.runBase = int64(e.next) - 1 - h.ringSeq
		}
		e.log.Info("event export: caught up; following the venue's events", "next_event_seq", e.next, "journal_seq", e.filledTo)
		e.endCatchUp()
		return true
	}
}

// take moves the events of command seq from the sink to the staged
// events, or passes over them while the stream already holds them.
func (e *Exporter) take(seq uint64) error {
	for i, b := range e.sink.events {
		pos := Position{CauseSeq: seq, Index: uint32(i)}
		if s := e.skipTo; s != nil {
			if seq < s.CauseSeq || (seq == s.CauseSeq && pos.Index < s.Index) {
				continue
			}
			if seq == s.CauseSeq && pos.Index == s.Index && e.skipStart {
				e.skipTo = nil // the first event to take
			} else if seq == s.CauseSeq && pos.Index == s.Index {
				if string(b) != string(s.Bytes) {
					return fmt.Errorf("stream %s: its last event (seq %d) differs from the journal's event at command %d index %d: not this journal's stream",
						e.cfg.Stream, s.EventSeq, seq, i)
				}
				e.skipTo = nil
				continue
			}
		}
		pos.EventSeq = e.next
		e.next++
		e.staged = append(e.staged, Event{Position: pos, Bytes: b})
	}
	if s := e.skipTo; s != nil && seq >= s.CauseSeq {
		return fmt.Errorf("stream %s: its last event is index %d of command %d, which has %d events in the journal: not this journal's stream",
			e.cfg.Stream, s.Index, s.CauseSeq, len(e.sink.events))
	}
	return nil
}

// push adds an event to the pending ones and remembers it as the last taken.
func (e *Exporter) push(pos Position, b []byte) {
	p := e.pendAt(e.pLen)
	n := copy(p.buf[:], b)
	p.Event = Event{Position: pos, Bytes: p.buf[:n]}
	e.pLen++
	n = copy(e.lastBuf[:], b)
	e.last, e.haveLast, e.lastStart = Event{Position: pos, Bytes: e.lastBuf[:n]}, true, false
}

// publish sends the pending events not yet sent on this connection, in
// batches, without waiting for their acks (doc.go, "Messages"). Every
// message expects the stream's last sequence to be its own minus one, so
// the stream can never get a gap or a foreign message in between: a
// publish that does not continue the stream fails, and the exporter reads
// the stream's end again. Only a batch's last part asks for an ack: it
// is stored only after the parts before it.
func (e *Exporter) publish(nc *nats.Conn, js jetstream.JetStream) error {
	for e.pPub < e.pLen && e.fLen < len(e.flights) {
		n := e.formBatch()
		if n == 0 {
			return nil
		}
		if err := e.publishBatch(nc, js, n); err != nil {
			return err
		}
	}
	return nil
}

// formBatch groups the next batch's events by subject (e.parts) and
// returns their number (0: wait for more): all the unpublished ones, up to
// BatchEventsMax, BatchPartsMax subjects and Window events in flight, or
// exactly the forced batch's (the first on a connection, whatever the
// window: the stream holds part of it).
// Subjects are taken in event order (an InstrumentAdded names the
// subjects of the events after it), once per event.
func (e *Exporter) formBatch() int {
	n, limit := min(e.pLen-e.pPub, BatchEventsMax, e.cfg.Window-e.pPub), BatchPartsMax
	if f := e.forced; f != nil {
		need := int(f.last - f.first + 1)
		if e.pLen-e.pPub < need {
			return 0
		}
		n, limit = need, -1
	}
	e.parts = e.parts[:0]
	for i := 0; i < n; i++ {
		if !e.addToPart(e.pendAt(e.pPub+i).Event, limit) {
			return i
		}
	}
	return max(n, 0)
}

// addToPart adds an event to the part of its subject, unless it would need
// a part beyond limit.
func (e *Exporter) addToPart(ev Event, limit int) bool {
	subj := e.subject(ev.Bytes)
	for i := range e.parts {
		if e.parts[i].subject == subj {
			e.parts[i].events = append(e.parts[i].events, ev)
			return true
		}
	}
	if len(e.parts) == limit {
		return false
	}
	if len(e.parts) < cap(e.parts) {
		e.parts = e.parts[:len(e.parts)+1]
		e.parts[len(e.parts)-1].subject = subj
		e.parts[len(e.parts)-1].events = append(e.parts[len(e.parts)-1].events[:0], ev)
	} else {
		e.parts = append(e.parts, batchPart{subject: subj, events: []Event{ev}})
	}
	return true
}

// publishBatch publishes the next n pending events, grouped in e.parts,
// as one batch: one message per subject, in the order of their first events.
func (e *Exporter) publishBatch(nc *nats.Conn, js jetstream.JetStream, n int) error {
	first, last := e.pendAt(e.pPub), e.pendAt(e.pPub+n-1)
	if f := e.forced; f != nil && first.EventSeq != f.first {
		return fmt.Errorf("stream %s ends in the batch of events %d-%d, the exporter's next event is %d", e.cfg.Stream, f.first, f.last, first.EventSeq)
	}
	stored := 0
	if f := e.forced; f != nil {
		stored = f.stored
		if stored > len(e.parts) {
			return fmt.Errorf("stream %s holds part %d of batch %d-%d, which has %d parts in the journal: not this journal's stream",
				e.cfg.Stream, stored, f.first, f.last, len(e.parts))
		}
		p := &e.parts[stored-1]
		if string(appendPayload(nil, p.events, FormatSBE)) != string(f.data) {
			return fmt.Errorf("stream %s: its last message (part %d of batch %d-%d) differs from the journal's: not this journal's stream",
				e.cfg.Stream, stored, f.first, f.last)
		}
		e.forced = nil
	}
	fl := flight{events: n, last: last.Position, published: time.Now()}
	m := Message{First: first.EventSeq, Last: last.EventSeq, Start: first.Position, Parts: len(e.parts)}
	for i := stored; i < len(e.parts); i++ {
		m.Part, m.Events = i+1, e.parts[i].events
		m.StreamSeq = e.streamLast + 1
		msg := encodeMessage(e.parts[i].subject, &m, e.cfg.Format)
		if i == stored && e.lastKept {
			// The stream's last sequence outlives a purge (or the deletion
			// of its last message): Nats-Expected-Last-Sequence alone
			// would let the batch go on after the events the stream lost.
			// The last message of the venue's subjects must still be at
			// that sequence (none for an empty stream, sequence 0); a
			// refused batch sends the exporter back to LastEvent, which
			// names the gap (doc.go, "Outages and restarts").
			msg.Header[jetstream.ExpectedLastSubjSeqHeader] = []string{strconv.FormatUint(e.streamLast, 10)}
			msg.Header[jetstream.ExpectedLastSubjSeqSubjHeader] = []string{e.cfg.Subjects.All()}
		}
		if e.lastMsgID != "" {
			// The message before this one must be the stream's last.
			// Nats-Expected-Last-Sequence alone does not say it: when
			// JetStream refused that message (a part published unacked,
			// or a last part whose ack is still to come) because another
			// publisher's message took its sequence, this one would be
			// stored after that message, the refused part's events missing.
			msg.Header[jetstream.ExpectedLastMsgIDHeader] = []string{e.lastMsgID}
		}
		var err error
		switch {
		case m.Part < m.Parts && e.ackEach:
			err = e.publishAcked(js, msg)
		case m.Part < m.Parts:
			msg.Header[jetstream.ExpectedLastSeqHeader] = []string{strconv.FormatUint(e.streamLast, 10)}
			err = nc.PublishMsg(msg)
			fl.unacked++
		default:
			fl.fut, err = js.PublishMsgAsync(msg, jetstream.WithExpectLastSequence(e.streamLast))
		}
		if err != nil {
			return fmt.Errorf("publish batch %d-%d part %d: %w", m.First, m.Last, m.Part, err)
		}
		e.streamLast++
		e.lastMsgID = msg.Header.Get(nats.MsgIdHdr)
	}
	fl.streamSeq = e.streamLast
	e.ackEach = false
	e.flights[(e.fHead+e.fLen)%len(e.flights)] = fl
	e.fLen++
	e.pPub += n
	return nil
}

// checksLastKept reports whether a NATS server of version v checks
// Nats-Expected-Last-Subject-Sequence against another subject than the
// message's (Nats-Expected-Last-Subject-Sequence-Subject, NATS 2.11): an
// older one would check it against the message's own subject and refuse
// every batch.
func checksLastKept(v string) bool {
	major, rest, _ := strings.Cut(v, ".")
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	return err1 == nil && err2 == nil && (ma > 2 || ma == 2 && mi >= 11)
}

// publishAcked publishes a part that is not its batch's last and waits
// for its ack (see ackEach).
func (e *Exporter) publishAcked(js jetstream.JetStream, msg *nats.Msg) error {
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.AckTimeout)
	defer cancel()
	a, err := js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequence(e.streamLast))
	if err != nil {
		return err
	}
	if a.Sequence != e.streamLast+1 {
		return fmt.Errorf("stream %s stored it at sequence %d, not %d", e.cfg.Stream, a.Sequence, e.streamLast+1)
	}
	return nil
}

// subjectsCachedMax bounds the exporter's cache of subjects (one per kind
// and instrument); beyond it subjects are built per event.
const subjectsCachedMax = 4096

type subjectKey struct {
	kind string
	inst uint32
}

// subject is Subjects.Subject, built once per kind and instrument.
func (e *Exporter) subject(ev []byte) string {
	kind, inst := kindAndInstrument(ev)
	k := subjectKey{kind, inst}
	if s, ok := e.subjects[k]; ok && kind != KindStatus {
		return s
	}
	// Status events always go through Subjects.Subject: an InstrumentAdded
	// enters its symbol there. A subject of no known symbol is not kept.
	s := e.cfg.Subjects.Subject(ev)
	if len(e.subjects) < subjectsCachedMax && !strings.HasSuffix(s, "._") {
		e.subjects[k] = s
	}
	return s
}

// collectAcks takes the acks that have arrived, oldest first, without
// waiting, and reports whether there were any.
func (e *Exporter) collectAcks() (bool, error) {
	any := false
	for e.fLen > 0 {
		front := &e.flights[e.fHead]
		if front.fut == nil {
			e.acknowledge(front)
			any = true
			continue
		}
		select {
		case a := <-front.fut.Ok():
			if err := e.ackFront(a); err != nil {
				return any, err
			}
			any = true
		case err := <-front.fut.Err():
			return any, e.flightErr(front, err)
		default:
			return any, nil
		}
	}
	return any, nil
}

// flightErr is the error of a batch whose last part JetStream refused.
// When it refused the last part as not continuing the stream and parts
// before it went without an ack, those parts were refused first, for a
// reason only their acks would have told: the next connection asks for
// them (ackEach).
func (e *Exporter) flightErr(f *flight, err error) error {
	var apiErr *jetstream.APIError
	if f.unacked > 0 && errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		return fmt.Errorf("batch up to event %d: the stream did not store the %d part(s) before its last (%w); the next attempt asks an ack of each part to learn why",
			f.last.EventSeq, f.unacked, err)
	}
	return fmt.Errorf("batch up to event %d: %w", f.last.EventSeq, err)
}

// ackFront checks the ack of the oldest batch in flight and records it.
func (e *Exporter) ackFront(a *jetstream.PubAck) error {
	front := &e.flights[e.fHead]
	if a.Sequence != front.streamSeq {
		return fmt.Errorf("stream %s stored the batch up to event %d at sequence %d, not %d", e.cfg.Stream, front.last.EventSeq, a.Sequence, front.streamSeq)
	}
	e.acknowledge(front)
	return nil
}

// acknowledge records the oldest batch in flight as stored.
func (e *Exporter) acknowledge(f *flight) {
	for range f.events {
		e.popPending()
	}
	e.setAcked(f.last)
	e.met.events.Add(float64(f.events))
	f.fut = nil
	e.fHead = (e.fHead + 1) % len(e.flights)
	e.fLen--
}

// updateDone sets the last command whose events the stream has all
// acknowledged (for the lag).
func (e *Exporter) updateDone() {
	var done int64
	switch {
	case e.pLen > 0:
		done = int64(e.pend[e.pHead].CauseSeq) - 1
	case e.m != nil && len(e.staged) > 0:
		done = int64(e.staged[0].CauseSeq) - 1
	case e.m != nil:
		done = e.filledTo
	case e.tap != nil:
		durable := e.cfg.Durable()
		if h := e.tap.head(); h != nil {
			done = min(durable, int64(h.cause())-1)
		} else {
			done = min(durable, e.tap.complete.Load())
		}
	default:
		return
	}
	e.met.doneSeq.Store(max(done, e.met.doneSeq.Load()))
}

// collectSink keeps a copy of each event of one command.
type collectSink struct {
	slot   [core.EventSlotMin]byte
	events [][]byte
}

func (s *collectSink) reset() { s.events = s.events[:0] }

func (s *collectSink) Claim() []byte {
	clear(s.slot[:venue.MessageHeaderSize])
	return s.slot[:]
}

func (s *collectSink) Commit() {
	s.events = append(s.events, append([]byte(nil), s.slot[:eventLen(s.slot[:])]...))
}

// DuplicatesWindow is the duplicate window of a stream the exporter
// creates. Every publish also expects the stream's last sequence, which
// alone keeps duplicates out; the window only has to cover a resend after
// a lost ack (Retry plus a reconnection), and JetStream keeps one entry per
// message of the window in memory (the embedded server's are the venue's
// heap): 10 s instead of the default 2 minutes.
const DuplicatesWindow = 10 * time.Second

// EnsureStream returns the stream, creating it when it does not exist. An
// existing stream must take the venue's subjects.
func EnsureStream(ctx context.Context, js jetstream.JetStream, name string, subj Subjects) (jetstream.Stream, error) {
	st, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subj.All()},
			Storage: jetstream.FileStorage, Duplicates: DuplicatesWindow, Description: "fixvenue events, in order, in batches: one message per subject of a batch (Fixvenue-Batch, Fixvenue-Part)"})
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", name, err)
	}
	for _, s := range st.CachedInfo().Config.Subjects {
		if s == subj.All() {
			return st, nil
		}
	}
	return nil, fmt.Errorf("stream %s exists with subjects %v, not %s: not this venue's stream", name, st.CachedInfo().Config.Subjects, subj.All())
}

// LastEvent reads the stream's last message (nil for an empty stream). A
// stream whose last message is not one this exporter wrote at that
// sequence (a foreign message, or a message published for another
// sequence, which means a gap) is an error.
func LastEvent(ctx context.Context, st jetstream.Stream) (*Message, error) {
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream info: %w", err)
	}
	if info.State.LastSeq == 0 {
		return nil, nil
	}
	raw, err := st.GetMsg(ctx, info.State.LastSeq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		// JetStream keeps a stream's last sequence when its last messages
		// are deleted or the stream is purged: the stream lost events, as
		// `fixvenue events verify` reports it.
		return nil, fmt.Errorf("stream %s: its last message, %d, was removed (deleted, or the stream purged): a gap; delete the stream to export it again from the journal",
			info.Config.Name, info.State.LastSeq)
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: last message %d: %w", info.Config.Name, info.State.LastSeq, err)
	}
	m, err := DecodeMessage(raw.Header, raw.Data)
	if err != nil {
		return nil, fmt.Errorf("stream %s: message %d: %w", info.Config.Name, raw.Sequence, err)
	}
	if m.StreamSeq != raw.Sequence {
		return nil, fmt.Errorf("stream %s: message %d was published as message %d: the stream has a gap or foreign messages", info.Config.Name, raw.Sequence, m.StreamSeq)
	}
	// The batch must continue the one before it: a message of an earlier
	// batch published again at the end (its Fixvenue-Stream-Seq set to
	// its new place) would otherwise send the exporter back to that batch,
	// and it would publish everything after it a second time
	// ("Outages and restarts": never a duplicate).
	if prev := raw.Sequence - uint64(m.Part); prev == 0 {
		if m.First != 1 {
			return nil, fmt.Errorf("stream %s: message %d is part %d of batch %d-%d, where the stream's first batch starts at event 1: the stream has a gap or foreign messages",
				info.Config.Name, raw.Sequence, m.Part, m.First, m.Last)
		}
	} else if prev >= info.State.FirstSeq {
		// (A stream whose limits removed its first messages keeps no
		// message to check the batch against: it is taken as it is.)
		praw, err := st.GetMsg(ctx, prev)
		if err != nil {
			return nil, fmt.Errorf("stream %s: message %d, before the batch of its last message: %w", info.Config.Name, prev, err)
		}
		pm, err := DecodeMessage(praw.Header, praw.Data)
		if err != nil {
			return nil, fmt.Errorf("stream %s: message %d: %w", info.Config.Name, prev, err)
		}
		if pm.StreamSeq != prev || pm.Part != pm.Parts || pm.Last+1 != m.First {
			return nil, fmt.Errorf("stream %s: message %d is part %d of batch %d-%d, which does not follow message %d, part %d/%d of batch %d-%d: the stream has a gap or foreign messages",
				info.Config.Name, raw.Sequence, m.Part, m.First, m.Last, prev, pm.Part, pm.Parts, pm.First, pm.Last)
		}
	}
	m.Subject = raw.Subject
	return m, nil
}
