package eventstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Summary describes an event stream: how many events, the last one's
// sequence and command, and an xxhash64 of every event's SBE bytes in
// order (the hash `fixvenue journal verify` prints for the same events).
type Summary struct {
	Events       int64
	LastEventSeq uint64
	LastCauseSeq int64 // -1: no event
	Hash         uint64
}

func (s Summary) String() string {
	return fmt.Sprintf("events=%d last_event_seq=%d last_cause_seq=%d events_hash=%016x", s.Events, s.LastEventSeq, s.LastCauseSeq, s.Hash)
}

// ErrStreamReplaced is returned by a following ReadStream when the stream
// it reads was deleted, and perhaps created again: the exporter then
// publishes every event again from event 1, at stream sequences that no
// longer say where the reader was.
var ErrStreamReplaced = errors.New("the stream was deleted or created again")

// streamCheckInterval is how often a following ReadStream asks whether its
// stream is still the one it started on. JetStream's ordered consumer
// does not say: over a stream deleted and created again before it created
// its consumer again it waits, without a word, for the new stream to reach
// the sequence after the last message it gave, then gives the new stream's
// messages from there.
const streamCheckInterval = time.Second

// ReadStream calls fn for each message of the stream from stream sequence
// from (1: the start) up to the stream's last message when ReadStream
// starts, or, with follow, until ctx ends or the stream is replaced
// (ErrStreamReplaced, at once for a stream deleted). filter limits the
// subjects (nil: all). A message the venue did not write is an error. A
// following ReadStream returns promptly once ctx ends, also while its
// stream is absent.
func ReadStream(ctx context.Context, js jetstream.JetStream, stream string, from uint64, filter []string, follow bool,
	fn func(m *Message) error) error {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream %s: %w", stream, err)
	}
	// A filter outside the stream's subjects matches nothing, ever: a
	// follower would wait for ever without a word.
	for _, f := range filter {
		if !slices.ContainsFunc(info.Config.Subjects, func(s string) bool { return server.SubjectsCollide(f, s) }) {
			return fmt.Errorf("stream %s: subject %q matches none of its subjects %v", stream, f, info.Config.Subjects)
		}
	}
	last := info.State.LastSeq
	if !follow && (last == 0 || from > last) {
		return nil
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: filter, DeliverPolicy: jetstream.DeliverAllPolicy}
	if follow {
		// The ordered consumer creates its consumer again inside Next when
		// it lost it (the stream deleted, heartbeats missed), by default
		// until that succeeds, 1 to 10 s apart, holding the lock Stop takes:
		// neither ctx nor Stop is seen before its next attempt, and a
		// follower interrupted while its stream was absent waited up to
		// 10 s. One attempt: a failure comes back here, where the wait
		// before the next ends with ctx.
		cfg.MaxResetAttempts = 1
	}
	open := func(from uint64) (jetstream.Consumer, jetstream.MessagesContext, error) {
		cfg := cfg
		if from > 1 {
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
		}
		cons, err := js.OrderedConsumer(ctx, stream, cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("stream %s: %w", stream, err)
		}
		it, err := cons.Messages()
		if err != nil {
			return nil, nil, fmt.Errorf("stream %s: %w", stream, err)
		}
		return cons, it, nil
	}
	// drop deletes a consumer once it is read no more. Stopping the
	// ordered consumer leaves it on the server for its inactive threshold
	// (five minutes), three goroutines and its state in the server's
	// process, the venue's own with the embedded server: a tail or verify
	// run every few seconds kept hundreds there. Best effort, and only
	// while connected, so that a reader stopped while NATS is away stops
	// at once: its consumer, as a killed reader's, is the threshold's.
	drop := func(c jetstream.Consumer) {
		ci := c.CachedInfo()
		if ci == nil || !js.Conn().IsConnected() {
			return
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = js.DeleteConsumer(dctx, stream, ci.Name)
	}
	cons, it, err := open(from)
	if err != nil {
		return err
	}
	stopOnDone := context.AfterFunc(ctx, it.Stop)
	defer func() {
		stopOnDone()
		if it != nil {
			it.Stop()
		}
		drop(cons)
	}()
	// JetStream keeps a stream's last sequence when its last messages are
	// deleted or purged: a reader waiting for a message at that sequence
	// would wait for ever. The consumer's pending count says when there is
	// nothing more to read; a stream read whole that ends before its last
	// sequence lost its last messages, a gap ("Outages and restarts").
	endsEarly := func(seen uint64) error {
		if filter == nil && seen < last {
			return fmt.Errorf("stream %s: messages %d-%d were removed (its last sequence is %d): a gap", stream, max(seen+1, from), last, last)
		}
		return nil
	}
	if ci := cons.CachedInfo(); !follow && ci != nil && ci.NumPending == 0 {
		return endsEarly(from - 1)
	}
	created, checked := info.Created, time.Now()
	next := from // the stream sequence after the last message given
	for {
		var m jetstream.Msg
		if follow {
			m, err = it.Next(jetstream.NextMaxWait(streamCheckInterval))
			if errors.Is(err, nats.ErrTimeout) || (err == nil && time.Since(checked) >= streamCheckInterval) {
				checked = time.Now()
				if rerr := StreamReplaced(ctx, js, stream, created); rerr != nil {
					return rerr
				}
				if err != nil {
					continue
				}
			}
			if err != nil && ctx.Err() == nil && !js.Conn().IsClosed() {
				// The consumer lost and not created again (MaxResetAttempts
				// above): the stream deleted, or a failure of JetStream. A
				// stream still the one is read on, as the ordered consumer
				// would, by a new consumer from the message after the last
				// given, once it can be created.
				stopOnDone()
				it.Stop()
				drop(cons)
				for it = nil; it == nil; {
					if rerr := StreamReplaced(ctx, js, stream, created); rerr != nil {
						return rerr
					}
					select {
					case <-ctx.Done():
						return ctx.Err()
					case <-time.After(streamCheckInterval):
					}
					var again jetstream.Consumer
					if again, it, err = open(next); err != nil && js.Conn().IsClosed() {
						return err
					} else if err == nil {
						cons = again
					}
				}
				stopOnDone = context.AfterFunc(ctx, it.Stop)
				continue
			}
		} else {
			m, err = it.Next()
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("stream %s: %w", stream, err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("stream %s: %w", stream, err)
		}
		next = meta.Sequence.Stream + 1
		msg, err := DecodeMessage(m.Headers(), m.Data())
		if err != nil {
			return fmt.Errorf("stream %s message %d: %w", stream, meta.Sequence.Stream, err)
		}
		if msg.StreamSeq != meta.Sequence.Stream {
			return fmt.Errorf("stream %s: message %d was published as message %d: a gap", stream, meta.Sequence.Stream, msg.StreamSeq)
		}
		msg.Subject = m.Subject()
		if err := fn(msg); err != nil {
			return err
		}
		if !follow && meta.Sequence.Stream >= last {
			return nil
		}
		if !follow && meta.NumPending == 0 {
			return endsEarly(meta.Sequence.Stream)
		}
	}
}

// StreamReplaced returns an error wrapping ErrStreamReplaced when the
// stream no longer exists or is not the one created at created; nil when
// it is, or when NATS did not answer (a lost connection shows elsewhere).
func StreamReplaced(ctx context.Context, js jetstream.JetStream, stream string, created time.Time) error {
	st, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("stream %s: %w (it exists no more)", stream, ErrStreamReplaced)
	}
	if err != nil {
		return nil
	}
	if c := st.CachedInfo().Created; !c.Equal(created) {
		return fmt.Errorf("stream %s: %w (created at %s, then at %s)", stream, ErrStreamReplaced,
			created.UTC().Format(time.RFC3339Nano), c.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// FindEvent returns the stream sequence of the first message of the batch
// that holds event seq (or of the first batch after it), by a binary
// search over the stream's messages (their batches ascend); the sequence
// after the stream's last message when the stream ends before seq.
func FindEvent(ctx context.Context, js jetstream.JetStream, stream string, seq uint64) (uint64, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, err
	}
	get := func(n uint64) (*Message, error) {
		raw, err := st.GetMsg(ctx, n)
		if err != nil {
			return nil, fmt.Errorf("stream %s: message %d: %w", stream, n, err)
		}
		return DecodeMessage(raw.Header, raw.Data)
	}
	if info.State.Msgs == 0 {
		// Empty (FirstSeq is 0 then, not a message to read): seq is after its end.
		return info.State.LastSeq + 1, nil
	}
	lo, hi := info.State.FirstSeq, info.State.LastSeq+1 // the answer is in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		m, err := get(mid)
		if err != nil {
			return 0, err
		}
		if m.Last < seq {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo > info.State.LastSeq || lo == 0 {
		return info.State.LastSeq + 1, nil
	}
	m, err := get(lo)
	if err != nil {
		return 0, err
	}
	return max(info.State.FirstSeq, lo-uint64(m.Part-1)), nil
}

// Batches puts the events of a stream's messages back in event order: a
// batch's parts each hold one subject's events, and the batch's events
// are given, in order, once its last part is in. A message that does not
// continue the batch (or the batch sequence) is a gap.
type Batches struct {
	// Next is the first event of the next batch (0: any, for a reader that
	// starts in the middle of the stream: it passes over the parts before
	// the first part 1).
	Next  uint64
	cur   *Message // the open batch's first part (nil: none)
	got   int
	slots []Event // the open batch's events by event sequence - First
	fill  int
}

// Add takes the next message of the stream and calls emit for each event
// of the batch it completes.
func (b *Batches) Add(m *Message, emit func(Event) error) error {
	if b.cur == nil {
		if b.Next == 0 && m.Part != 1 {
			return nil
		}
		if m.Part != 1 || (b.Next != 0 && m.First != b.Next) {
			return fmt.Errorf("message %d is part %d of batch %d-%d, where the stream needs part 1 of the batch from event %d: a gap",
				m.StreamSeq, m.Part, m.First, m.Last, b.Next)
		}
		b.cur, b.got, b.fill = m, 0, 0
		b.slots = append(b.slots[:0], make([]Event, m.Last-m.First+1)...)
	} else if m.First != b.cur.First || m.Last != b.cur.Last || m.Parts != b.cur.Parts || m.Part != b.got+1 {
		return fmt.Errorf("message %d is part %d/%d of batch %d-%d, where the stream needs part %d/%d of batch %d-%d: a gap",
			m.StreamSeq, m.Part, m.Parts, m.First, m.Last, b.got+1, b.cur.Parts, b.cur.First, b.cur.Last)
	}
	b.got++
	for _, ev := range m.Events {
		s := &b.slots[ev.EventSeq-m.First]
		if s.EventSeq != 0 {
			return fmt.Errorf("message %d: event %d twice in batch %d-%d", m.StreamSeq, ev.EventSeq, m.First, m.Last)
		}
		*s = ev
		b.fill++
	}
	if b.got < m.Parts {
		return nil
	}
	first, last := b.cur.First, b.cur.Last
	b.cur = nil
	if b.fill != len(b.slots) {
		return fmt.Errorf("batch %d-%d: its %d parts hold %d of its %d events: a gap", first, last, m.Parts, b.fill, len(b.slots))
	}
	b.Next = last + 1
	for _, ev := range b.slots {
		if err := emit(ev); err != nil {
			return err
		}
	}
	return nil
}

// SummarizeStream reads the whole stream and checks that it is this
// venue's event stream without a gap: batches of consecutive events from
// event 1, each batch's parts complete. A last batch not complete yet is
// left out (the stream is behind). With limit positive it summarizes the
// stream's first limit events at most, and reads no further.
func SummarizeStream(ctx context.Context, js jetstream.JetStream, stream string, limit int64) (Summary, error) {
	sum := Summary{LastCauseSeq: -1}
	d := xxhash.New()
	b := Batches{Next: 1}
	err := ReadStream(ctx, js, stream, 1, nil, false, func(m *Message) error {
		err := b.Add(m, func(ev Event) error {
			if limit > 0 && sum.Events == limit {
				return errSummarized
			}
			_, _ = d.Write(ev.Bytes)
			sum.Events++
			sum.LastEventSeq = ev.EventSeq
			sum.LastCauseSeq = int64(ev.CauseSeq)
			return nil
		})
		if err != nil && !errors.Is(err, errSummarized) {
			return fmt.Errorf("stream %s: %w", stream, err)
		}
		return err
	})
	if errors.Is(err, errSummarized) {
		err = nil
	}
	sum.Hash = d.Sum64()
	return sum, err
}

// errSummarized stops SummarizeStream at its limit.
var errSummarized = errors.New("eventstream: summarized as far as asked")

// SummarizeJournal replays the journal in dir into a fresh matcher and
// summarizes its events. When prefix is positive, PrefixHash is the hash of
// the first prefix events (to tell a stream that is only behind from one
// that differs).
func SummarizeJournal(dir string, cfg core.Config, prefix int64) (sum Summary, prefixHash uint64, err error) {
	m, err := core.NewMatcher(cfg)
	if err != nil {
		return sum, 0, err
	}
	sink := &summarySink{digest: xxhash.New(), prefix: prefix, sum: Summary{LastCauseSeq: -1}}
	if _, err := journal.Replay(dir, m, sink, journal.ReplayOptions{}); err != nil {
		return sum, 0, err
	}
	sink.sum.Hash = sink.digest.Sum64()
	return sink.sum, sink.prefixHash, nil
}

type summarySink struct {
	slot       [core.EventSlotMin]byte
	digest     *xxhash.Digest
	sum        Summary
	prefix     int64
	prefixHash uint64
}

func (s *summarySink) Claim() []byte {
	clear(s.slot[:venue.MessageHeaderSize])
	return s.slot[:]
}

func (s *summarySink) Commit() {
	ev := s.slot[:eventLen(s.slot[:])]
	_, _ = s.digest.Write(ev)
	s.sum.Events++
	s.sum.LastEventSeq = uint64(s.sum.Events)
	s.sum.LastCauseSeq = int64(venue.CauseSeqOf(ev))
	if s.sum.Events == s.prefix {
		s.prefixHash = s.digest.Sum64()
	}
}

// ErrMismatch is returned by Compare when the stream is not the journal's.
var ErrMismatch = errors.New("eventstream: stream does not match the journal")

// Compare checks a stream's summary against the journal's; prefixHash is
// the journal's hash over as many events as the stream holds.
func Compare(stream, jour Summary, prefixHash uint64) error {
	switch {
	case stream == jour:
		return nil
	case stream.Events < jour.Events && (stream.Events == 0 || stream.Hash == prefixHash):
		return fmt.Errorf("%w: the stream is behind by %d events (its events match the journal's first %d)",
			ErrMismatch, jour.Events-stream.Events, stream.Events)
	}
	return fmt.Errorf("%w: stream %s, journal %s", ErrMismatch, stream, jour)
}
