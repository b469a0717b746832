package eventstream

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/internal/periodic"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Defaults of a Tap.
const (
	// TapEventsDefault is the tap's bound: the events the exporter may be
	// behind the matcher before the tap drops and the exporter catches up
	// from the journal (about 6 s at 10,000 events/s; 17 MiB).
	TapEventsDefault = 1 << 16
	// TapPollDefault is how often the copier looks at the event ring. It
	// polls rather than parking on the ring, so that the matcher never has
	// one more consumer to wake (doc.go, "Where the events come from").
	TapPollDefault = time.Millisecond
)

// TapSource is the event ring the tap copies from: the pipeline's ring, a
// gating sequence registered for the tap (pipeline.AddEventConsumer) and
// the seq of the last command the matcher has applied (its events are
// published before it counts as applied).
type TapSource struct {
	Ring     *ring.Ring
	Sequence *ring.Sequence
	// Applied is the command seq of the last command whose events are all
	// published (-1: none).
	Applied func() int64
	// SeqBase is the command seq of the run's first command: with it the
	// exporter knows that the run's first event is the journal's first
	// when SeqBase is 0.
	SeqBase uint64
}

// tapEntry is one copied event and where it stands.
type tapEntry struct {
	ringSeq int64  // the event ring's sequence: this run's event number, from 0
	index   uint32 // its place among its command's events
	n       uint16
	bytes   [core.EventSlotMin]byte
}

// Tap copies every event the matcher publishes into a bounded buffer the exporter reads, so that the exporter consumes the
// venue's own event bytes and needs no matcher of its own. The copier is a
// gating consumer of the event ring that never waits for anything but its
// poll tick: when the buffer is full it drops the event (counted), and the
// exporter, seeing the hole in the ring sequences, rebuilds the missing
// events from the journal. One copier goroutine (Run) and one reader (the
// exporter) use it.
type Tap struct {
	src     TapSource
	entries []tapEntry
	mask    int64
	// written and read count entries: written-read are in the buffer.
	written, read atomic.Int64
	// seen is the last ring sequence the copier has passed (copied or
	// dropped); complete is the last command seq all of whose events it
	// has passed (-1: none).
	seen, complete atomic.Int64
	dropped        atomic.Int64
	// Copier state: the command of the previous event and its index.
	lastCause uint64
	lastIndex uint32
	haveLast  bool
}

// NewTap builds a tap of size events (a power of two).
func NewTap(src TapSource, size int) (*Tap, error) {
	if size <= 0 || size&(size-1) != 0 {
		return nil, errors.New("eventstream: the tap's size must be a power of two")
	}
	if src.Ring == nil || src.Sequence == nil || src.Applied == nil {
		return nil, errors.New("eventstream: the tap needs the event ring, its gating sequence and Applied")
	}
	t := &Tap{src: src, entries: make([]tapEntry, size), mask: int64(size - 1)}
	t.seen.Store(src.Sequence.Load())
	t.complete.Store(int64(src.SeqBase) - 1)
	return t, nil
}

// Run copies until stop is closed.
func (t *Tap) Run(stop <-chan struct{}, poll time.Duration) {
	if poll <= 0 {
		poll = TapPollDefault
	}
	t.copyAvailable()
	periodic.Run(stop, poll, func(time.Time) { t.copyAvailable() })
	t.copyAvailable()
}

// copyAvailable copies every published event and releases the ring slots.
func (t *Tap) copyAvailable() {
	// Applied before the cursor: every event of a command counted applied
	// is published by then (pipeline: events before the matcher's sequence).
	applied := t.src.Applied()
	avail := t.src.Ring.Cursor()
	next := t.src.Sequence.Load() + 1
	if next > avail {
		t.complete.Store(applied)
		return
	}
	for ; next <= avail; next++ {
		t.copyOne(next, t.src.Ring.Slot(next))
	}
	t.seen.Store(avail)
	t.src.Sequence.Store(avail)
	t.complete.Store(applied)
}

func (t *Tap) copyOne(ringSeq int64, slot []byte) {
	n := eventLen(slot)
	cause := venue.CauseSeqOf(slot)
	index := uint32(0)
	if t.haveLast && cause == t.lastCause {
		index = t.lastIndex + 1
	}
	t.lastCause, t.lastIndex, t.haveLast = cause, index, true
	w := t.written.Load()
	if w-t.read.Load() > t.mask || n > core.EventSlotMin {
		t.dropped.Add(1)
		return
	}
	e := &t.entries[w&t.mask]
	e.ringSeq, e.index, e.n = ringSeq, index, uint16(n)
	copy(e.bytes[:], slot[:n])
	t.written.Store(w + 1)
}

// head is the oldest entry, or nil.
func (t *Tap) head() *tapEntry {
	r := t.read.Load()
	if r == t.written.Load() {
		return nil
	}
	return &t.entries[r&t.mask]
}

// pop releases the oldest entry.
func (t *Tap) pop() { t.read.Add(1) }

// Dropped counts the events the tap could not keep.
func (t *Tap) Dropped() int64 { return t.dropped.Load() }

// cause is the command seq of an entry's event.
func (e *tapEntry) cause() uint64 {
	return venue.CauseSeqOf(e.bytes[:])
}
