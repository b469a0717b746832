package eventstream

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"
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

// ReadStream calls fn for each message of the stream from sequence from
// (1: the start) up to the stream's last message when ReadStream starts,
// or, with follow, until ctx ends. filter limits the subjects (nil: all).
func ReadStream(ctx context.Context, js jetstream.JetStream, stream string, from uint64, filter []string, follow bool,
	fn func(subject string, streamSeq uint64, ev Event) error) error {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return err
	}
	last := info.State.LastSeq
	if !follow && (last == 0 || from > last) {
		return nil
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: filter, DeliverPolicy: jetstream.DeliverAllPolicy}
	if from > 1 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
	}
	cons, err := js.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	go func() {
		<-ctx.Done()
		it.Stop()
	}()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		meta, err := m.Metadata()
		if err != nil {
			return err
		}
		ev, err := Decode(m.Headers(), m.Data())
		if err != nil {
			return fmt.Errorf("stream %s message %d: %w", stream, meta.Sequence.Stream, err)
		}
		if err := fn(m.Subject(), meta.Sequence.Stream, ev); err != nil {
			return err
		}
		if !follow && meta.Sequence.Stream >= last {
			return nil
		}
	}
}

// SummarizeStream reads the whole stream and checks that it is this
// venue's event stream without a gap: message n holds event n.
func SummarizeStream(ctx context.Context, js jetstream.JetStream, stream string) (Summary, error) {
	sum := Summary{LastCauseSeq: -1}
	d := xxhash.New()
	err := ReadStream(ctx, js, stream, 1, nil, false, func(_ string, seq uint64, ev Event) error {
		if ev.EventSeq != seq || seq != sum.LastEventSeq+1 {
			return fmt.Errorf("stream %s: message %d holds event %d after event %d: a gap", stream, seq, ev.EventSeq, sum.LastEventSeq)
		}
		_, _ = d.Write(ev.Bytes)
		sum.Events++
		sum.LastEventSeq = ev.EventSeq
		sum.LastCauseSeq = int64(ev.CauseSeq)
		return nil
	})
	sum.Hash = d.Sum64()
	return sum, err
}

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
	s.sum.LastCauseSeq = int64(binary.LittleEndian.Uint64(ev[venue.MessageHeaderSize:]))
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
