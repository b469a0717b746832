package marketdata

import (
	"runtime"
	"time"

	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// EventSource hands the feed venue events in order, in batches.
type EventSource interface {
	// Next is the sequence of the first event to consume.
	Next() int64
	// WaitFor blocks until the event at seq may be consumed and returns the
	// highest sequence that may (at least seq), or an error to stop.
	WaitFor(seq int64) (int64, error)
	// Slot returns the event at seq, valid until Release passes seq.
	Slot(seq int64) []byte
	// Release tells the producer that events up to seq are consumed.
	Release(seq int64)
}

// CommandEnder is an EventSource that knows whether a batch ends on a
// command boundary. The feed then ends the command at once (Tracker.EndCommand)
// instead of when the next command's first event arrives: an incoming
// iceberg, whose display is known only at the end of its command, is shown
// as soon as its command is, not when the venue next has an event.
type CommandEnder interface {
	EndsCommand(last int64) bool
}

// RingSource reads the event ring as one gating consumer (Barrier and
// Sequence as returned by pipeline.AddEventConsumer).
//
// CommandsReady gives the highest command seq whose command is durable (no
// market data leaves for a command before it is durable) and whose events
// are all in the ring (the matcher publishes events one by one, so a batch could
// otherwise end inside a command). WaitFor hands out only events whose
// causeSeq is at most that, so every batch ends on a command boundary and
// the feed never shows the intermediate state of a command. With the
// pipeline: min(Durable().Load(), SeqBase()+MatcherSequence()). A nil
// CommandsReady hands out whatever the barrier allows (tests, tools).
//
// Durable, when set, gives the highest durable command seq. It keeps a
// command with more events than the ring holds (a mass cancel, an end of
// day or a sweep over hundreds of thousands of orders) from stalling the
// venue: the matcher would wait for ring space that only this consumer can
// free, and this consumer would wait for the command to end. When at least
// half the ring holds events that CommandsReady does not allow yet, the
// durable ones are handed out before their command ends. Durability is
// never waived, and the books stay exact across a batch that ends inside a
// command (Tracker.EndBatch); only such a command shows in parts.
type RingSource struct {
	Ring          *ring.Ring
	Barrier       *ring.Barrier
	Sequence      *ring.Sequence
	CommandsReady func() int64
	Durable       func() int64
}

// readyPollNs bounds the sleep while waiting for durability: about a tenth
// of a typical group commit.
const readyPollNs = 20 * time.Microsecond

// Next implements EventSource.
func (s RingSource) Next() int64 { return s.Sequence.Load() + 1 }

// WaitFor implements EventSource.
func (s RingSource) WaitFor(seq int64) (int64, error) {
	for tries := 0; ; tries++ {
		avail, err := s.Barrier.WaitFor(seq)
		if err != nil || s.CommandsReady == nil {
			return avail, err
		}
		if last := s.lastCausedBy(seq, avail, s.CommandsReady()); last >= seq {
			return last, nil
		}
		if s.Durable != nil && avail-seq+1 >= int64(s.Ring.Slots()/2) {
			if last := s.lastCausedBy(seq, avail, s.Durable()); last >= seq {
				return last, nil
			}
		}
		if s.Barrier.Alerted() {
			return 0, ring.ErrAlerted
		}
		if tries < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(readyPollNs)
		}
	}
}

// lastCausedBy returns the highest sequence in [seq, avail] whose event's
// causeSeq is at most watermark, or seq-1 when there is none. Events are in
// causeSeq order, so it searches from the end.
func (s RingSource) lastCausedBy(seq, avail, watermark int64) int64 {
	for ; avail >= seq; avail-- {
		if int64(venue.CauseSeqOf(s.Ring.Slot(avail))) <= watermark {
			return avail
		}
	}
	return seq - 1
}

// EndsCommand implements CommandEnder: the event at last ends its command
// when its command is complete (CommandsReady) and the next event, if
// published, is of a later command. The command may have become complete
// after WaitFor cut the batch inside it (a command taken in parts once
// durable): then its next event is published and is its own, and the batch
// does not end it. The event ring has one producer (the matcher), so its
// Cursor is the last event published. Without CommandsReady it cannot tell
// (false).
func (s RingSource) EndsCommand(last int64) bool {
	if s.CommandsReady == nil {
		return false
	}
	cause := venue.CauseSeqOf(s.Ring.Slot(last))
	if int64(cause) > s.CommandsReady() {
		return false
	}
	if next := last + 1; next <= s.Ring.Cursor() {
		return venue.CauseSeqOf(s.Ring.Slot(next)) != cause
	}
	return true
}

// Slot implements EventSource.
func (s RingSource) Slot(seq int64) []byte { return s.Ring.Slot(seq) }

// Release implements EventSource.
func (s RingSource) Release(seq int64) { s.Sequence.Store(seq) }
