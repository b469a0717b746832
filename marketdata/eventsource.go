package marketdata

import "github.com/fixvenue/fixvenue/core/ring"

// EventSource hands the feed venue events in order, in batches.
//
// The feed must only see events whose command is durable (invariant 3 of
// the design): the pipeline gives the feed a source whose WaitFor honours
// that, for example a barrier that depends on the journal's progress.
type EventSource interface {
	// Next is the sequence of the first event to consume.
	Next() int64
	// WaitFor blocks until the event at seq is available and returns the
	// highest available sequence (at least seq), or an error to stop.
	WaitFor(seq int64) (int64, error)
	// Slot returns the event at seq, valid until Release passes seq.
	Slot(seq int64) []byte
	// Release tells the producer that events up to seq are consumed.
	Release(seq int64)
}

// RingSource reads the event ring as one gating consumer: Barrier decides
// what is available (its dependencies set the durability gate) and
// Sequence, registered by the caller with Ring.AddGatingSequences, tells
// the producer what the feed has consumed.
type RingSource struct {
	Ring     *ring.Ring
	Barrier  *ring.Barrier
	Sequence *ring.Sequence
}

// Next implements EventSource.
func (s RingSource) Next() int64 { return s.Sequence.Load() + 1 }

// WaitFor implements EventSource.
func (s RingSource) WaitFor(seq int64) (int64, error) { return s.Barrier.WaitFor(seq) }

// Slot implements EventSource.
func (s RingSource) Slot(seq int64) []byte { return s.Ring.Slot(seq) }

// Release implements EventSource.
func (s RingSource) Release(seq int64) { s.Sequence.Store(seq) }
