package eventstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	// JournalDir is the journal (and its snapshots) the events come from.
	JournalDir string
	// NewMatcher returns a fresh matcher configured as the venue's.
	NewMatcher func() (*core.Matcher, error)
	// Durable returns the highest durable command seq (-1: none); nothing
	// after it is exported.
	Durable func() int64
	// Connect dials NATS. The connection must not reconnect on its own
	// (nats.NoReconnect): the exporter reconnects itself and reads where
	// the stream ends before it publishes again.
	Connect  func() (*nats.Conn, error)
	Subjects Subjects
	Stream   string
	Format   Format
	// Window bounds the events published before waiting for their acks.
	Window int
	Logger *slog.Logger
	// Registerer receives the exporter's metrics (nil: not registered).
	Registerer prometheus.Registerer
	// Retry is the wait after a failure (NATS unreachable, a stream it
	// cannot continue) before the next attempt. Default RetryDefault.
	Retry time.Duration
	// Poll is the wait for new durable commands once caught up. Default PollDefault.
	Poll time.Duration
	// AckTimeout bounds the wait for a window's acks. Default AckTimeoutDefault.
	AckTimeout time.Duration
}

// Defaults of Config.
const (
	RetryDefault      = time.Second
	PollDefault       = 2 * time.Millisecond
	AckTimeoutDefault = 5 * time.Second
	// opTimeout bounds one JetStream API call (stream info, get message).
	opTimeout = 5 * time.Second
)

// Exporter publishes every durable event to a JetStream stream, in order,
// each once (see doc.go).
type Exporter struct {
	cfg Config
	log *slog.Logger
	// The shadow matcher: it applies the journal's durable commands and
	// produces the same events as the venue's (determinism).
	m      *core.Matcher
	tail   *journal.Tailer
	sink   collectSink
	next   Position // the position the next produced event takes (EventSeq, CauseSeq of the command being applied)
	skipTo *Event   // while rebuilding: the stream's last event, not yet reached
	// batch holds produced events not yet acknowledged by the stream.
	batch []Event
	acked Position
	// filledTo is the seq of the last command applied to the shadow
	// matcher; once the batch is acknowledged, every command up to it is done.
	filledTo int64
	met      *metrics
	// lastErr is logged only when it changes, so an outage is one line.
	lastErr string
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
	e := &Exporter{cfg: cfg, log: cfg.Logger, met: newMetrics(cfg.Registerer)}
	e.met.lag = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_export_lag_commands",
		Help: "Durable commands whose events the stream has not acknowledged yet."},
		func() float64 { return float64(e.Lag()) })
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(e.met.lag)
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
	defer func() {
		if e.tail != nil {
			_ = e.tail.Close()
		}
	}()
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
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(e.cfg.Window+1),
		jetstream.WithPublishAsyncTimeout(e.cfg.AckTimeout))
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
	if e.lastErr != "" {
		e.log.Info("event export resumed", "stream", e.cfg.Stream, "from_event_seq", e.acked.EventSeq+1)
		e.lastErr = ""
	}
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		if !nc.IsConnected() {
			return fmt.Errorf("nats: connection lost (%v)", nc.LastError())
		}
		if len(e.batch) == 0 {
			if err := e.fill(); err != nil {
				return err
			}
		}
		if len(e.batch) == 0 {
			select {
			case <-stop:
				return nil
			case <-time.After(e.cfg.Poll):
			}
			continue
		}
		if err := e.publish(js, lost); err != nil {
			return err
		}
	}
}

// resume positions the exporter after last, the stream's last event (nil:
// an empty stream). The events it still holds continue the stream when
// last is their predecessor; otherwise the shadow matcher is rebuilt from
// the journal up to last.
func (e *Exporter) resume(last *Event) error {
	var lastPos Position
	if last != nil {
		lastPos = last.Position
		if d := e.cfg.Durable(); int64(last.CauseSeq) > d {
			return fmt.Errorf("stream %s ends with an event of command %d, beyond the journal's durable %d: not this journal's stream",
				e.cfg.Stream, last.CauseSeq, d)
		}
	}
	if e.m != nil && e.skipTo == nil && e.acked.EventSeq != noEvent {
		if lastPos == e.acked {
			return nil
		}
		for i := range e.batch {
			if e.batch[i].Position == lastPos {
				e.batch = e.batch[i+1:]
				e.setAcked(lastPos)
				return nil
			}
		}
	}
	return e.rebuild(last)
}

// rebuild starts a fresh shadow matcher from the newest snapshot before
// the stream's last event's command (or the journal's start), to skip the
// events up to that one and export from the next.
func (e *Exporter) rebuild(last *Event) error {
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
		for i := len(snaps) - 1; i >= 0; i-- {
			if snaps[i].Seq < last.CauseSeq {
				if _, err := journal.ReadSnapshot(snaps[i].Path, m.ReadSnapshot); err != nil {
					return fmt.Errorf("snapshot %s: %w", snaps[i].Path, err)
				}
				from = snaps[i].Seq + 1
				break
			}
		}
	}
	if e.tail != nil {
		_ = e.tail.Close()
	}
	if e.tail, err = journal.NewTailer(e.cfg.JournalDir, from); err != nil {
		return err
	}
	e.m, e.batch, e.skipTo = m, e.batch[:0], nil
	e.next = Position{EventSeq: 1}
	if last != nil {
		e.skipTo = last
		e.next.EventSeq = last.EventSeq + 1
		e.setAcked(last.Position)
	} else {
		e.setAcked(Position{})
	}
	e.filledTo = int64(from) - 1
	e.met.doneSeq.Store(e.filledTo)
	e.log.Info("event export: shadow matcher started", "journal_from_seq", from, "stream_last_event_seq", e.next.EventSeq-1)
	return nil
}

func (e *Exporter) setAcked(p Position) {
	e.acked = p
	e.met.ackedEvent.Set(float64(p.EventSeq))
}

// fill applies durable commands to the shadow matcher until the batch
// holds Window events or nothing durable is left.
func (e *Exporter) fill() error {
	durable := e.cfg.Durable()
	for len(e.batch) < e.cfg.Window {
		rec, ok, err := e.tail.Next(durable)
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		if !ok {
			return nil
		}
		e.sink.reset()
		if err := e.m.Apply(rec.Payload, &e.sink); err != nil {
			return fmt.Errorf("shadow matcher at seq %d: %w", rec.Seq, err)
		}
		if err := e.take(rec.Seq); err != nil {
			return err
		}
		e.filledTo = int64(rec.Seq)
		if len(e.batch) == 0 {
			e.met.doneSeq.Store(e.filledTo) // nothing of it left to publish
		}
	}
	return nil
}

// take moves the events of command seq from the sink to the batch, or
// passes over them while the stream already holds them.
func (e *Exporter) take(seq uint64) error {
	for i, b := range e.sink.events {
		pos := Position{CauseSeq: seq, Index: uint32(i)}
		if s := e.skipTo; s != nil {
			if seq < s.CauseSeq || (seq == s.CauseSeq && pos.Index < s.Index) {
				continue
			}
			if seq == s.CauseSeq && pos.Index == s.Index {
				if string(b) != string(s.Bytes) {
					return fmt.Errorf("stream %s: its last event (seq %d) differs from the journal's event at command %d index %d: not this journal's stream",
						e.cfg.Stream, s.EventSeq, seq, i)
				}
				e.skipTo = nil
				continue
			}
		}
		pos.EventSeq = e.next.EventSeq
		e.next.EventSeq++
		e.batch = append(e.batch, Event{Position: pos, Bytes: b})
	}
	if s := e.skipTo; s != nil && seq >= s.CauseSeq {
		return fmt.Errorf("stream %s: its last event is index %d of command %d, which has %d events in the journal: not this journal's stream",
			e.cfg.Stream, s.Index, s.CauseSeq, len(e.sink.events))
	}
	return nil
}

// publish sends the batch and waits for every ack. Each message expects
// the stream's last sequence to be its own minus one, so the stream can
// never get a gap or a foreign message in between: a publish that does not
// continue the stream fails, and the exporter reads the stream's end again.
func (e *Exporter) publish(js jetstream.JetStream, lost <-chan struct{}) error {
	futures := make([]jetstream.PubAckFuture, 0, len(e.batch))
	for _, ev := range e.batch {
		m := message(e.cfg.Subjects.Subject(ev.Bytes), ev, e.cfg.Format)
		f, err := js.PublishMsgAsync(m, jetstream.WithExpectLastSequence(ev.EventSeq-1))
		if err != nil {
			return fmt.Errorf("publish event %d: %w", ev.EventSeq, err)
		}
		futures = append(futures, f)
	}
	timeout := time.NewTimer(e.cfg.AckTimeout)
	defer timeout.Stop()
	for i, f := range futures {
		select {
		case ack := <-f.Ok():
			if ack.Sequence != e.batch[i].EventSeq {
				return fmt.Errorf("stream %s stored event %d at sequence %d", e.cfg.Stream, e.batch[i].EventSeq, ack.Sequence)
			}
		case err := <-f.Err():
			return fmt.Errorf("event %d: %w", e.batch[i].EventSeq, err)
		case <-timeout.C:
			return fmt.Errorf("no ack for event %d within %s", e.batch[i].EventSeq, e.cfg.AckTimeout)
		case <-lost:
			return fmt.Errorf("nats: connection lost waiting for the ack of event %d", e.batch[i].EventSeq)
		}
	}
	e.setAcked(e.batch[len(e.batch)-1].Position)
	e.met.doneSeq.Store(e.filledTo)
	e.met.events.Add(float64(len(e.batch)))
	e.batch = e.batch[:0]
	return nil
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

// EnsureStream returns the stream, creating it when it does not exist. An
// existing stream must take the venue's subjects.
func EnsureStream(ctx context.Context, js jetstream.JetStream, name string, subj Subjects) (jetstream.Stream, error) {
	st, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subj.All()},
			Storage: jetstream.FileStorage, Description: "fixvenue events, in order, one message per event (Fixvenue-Event-Seq = stream sequence)"})
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

// LastEvent reads the stream's last event (nil for an empty stream). A
// stream whose last message is not an event this exporter wrote at that
// sequence (a foreign message, or a sequence that does not match, which
// means a gap) is an error.
func LastEvent(ctx context.Context, st jetstream.Stream) (*Event, error) {
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream info: %w", err)
	}
	if info.State.LastSeq == 0 {
		return nil, nil
	}
	raw, err := st.GetMsg(ctx, info.State.LastSeq)
	if err != nil {
		return nil, fmt.Errorf("stream %s: last message %d: %w", info.Config.Name, info.State.LastSeq, err)
	}
	ev, err := Decode(raw.Header, raw.Data)
	if err != nil {
		return nil, fmt.Errorf("stream %s: message %d: %w", info.Config.Name, raw.Sequence, err)
	}
	if ev.EventSeq != raw.Sequence {
		return nil, fmt.Errorf("stream %s: message %d holds event %d: the stream has a gap or foreign messages", info.Config.Name, raw.Sequence, ev.EventSeq)
	}
	return &ev, nil
}
