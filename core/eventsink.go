package core

import (
	"encoding/binary"
	"iter"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// EventSlotMin is the smallest slot an EventSink may hand out: every event
// of the schema (header included) fits in it. The largest today is Fill.
const EventSlotMin = 256

// EventSink receives the matcher's events, one at a time. For each event the
// matcher calls Claim, encodes the event at the start of the returned slot,
// then calls Commit; the sink publishes committed events when it chooses (the
// pipeline publishes a command's events together, after Apply returns). The slot must hold at least
// EventSlotMin bytes; a shorter slot is a programming error and panics.
//
// Claim may block (the event ring applies back-pressure); it cannot fail,
// because the matcher has already changed its state when it emits an event
// and cannot take it back. An event's length is in its SBE header
// (MessageHeaderSize + blockLength).
type EventSink interface {
	Claim() []byte
	Commit()
}

// eventLength returns the SBE length of the event at the start of b.
func eventLength(b []byte) int {
	return venue.MessageHeaderSize + int(binary.LittleEndian.Uint16(b))
}

// BufferSink is an EventSink that appends events to one growable byte slice,
// for tests, replay checks and tools. It is reusable: Reset keeps the memory,
// so a sink that has seen the largest batch once no longer allocates.
type BufferSink struct {
	buf     []byte
	offsets []int32 // start of each committed event
	claimed int     // start of the claimed slot, -1 when none
}

// NewBufferSink returns a sink with room for about eventsHint events.
func NewBufferSink(eventsHint int) *BufferSink {
	if eventsHint < 1 {
		eventsHint = 1
	}
	return &BufferSink{
		buf:     make([]byte, 0, eventsHint*EventSlotMin),
		offsets: make([]int32, 0, eventsHint),
		claimed: -1,
	}
}

// Claim returns an EventSlotMin-byte slot after the committed events,
// growing the buffer (doubling) only when it is full.
func (s *BufferSink) Claim() []byte {
	start := len(s.buf)
	if cap(s.buf)-start < EventSlotMin {
		grown := make([]byte, start, 2*cap(s.buf)+EventSlotMin)
		copy(grown, s.buf)
		s.buf = grown
	}
	s.claimed = start
	slot := s.buf[start : start+EventSlotMin]
	clear(slot[:venue.MessageHeaderSize])
	return slot
}

// Commit keeps the event encoded in the claimed slot.
func (s *BufferSink) Commit() {
	if s.claimed < 0 {
		panic("core: BufferSink.Commit without Claim")
	}
	slot := s.buf[s.claimed : s.claimed+EventSlotMin]
	n := eventLength(slot)
	if n > EventSlotMin {
		panic("core: event longer than its slot")
	}
	s.buf = s.buf[:s.claimed+n]
	s.offsets = append(s.offsets, int32(s.claimed))
	s.claimed = -1
}

// Reset forgets every event and keeps the memory.
func (s *BufferSink) Reset() {
	s.buf = s.buf[:0]
	s.offsets = s.offsets[:0]
	s.claimed = -1
}

// Len returns the number of committed events.
func (s *BufferSink) Len() int { return len(s.offsets) }

// Event returns the i-th committed event (header and block), valid until the
// next Claim or Reset.
func (s *BufferSink) Event(i int) []byte {
	start := int(s.offsets[i])
	end := len(s.buf)
	if i+1 < len(s.offsets) {
		end = int(s.offsets[i+1])
	}
	return s.buf[start:end:end]
}

// Bytes returns every committed event back to back: the event stream that a
// replay check hashes.
func (s *BufferSink) Bytes() []byte { return s.buf[:len(s.buf):len(s.buf)] }

// All iterates over the committed events in order.
func (s *BufferSink) All() iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		for i := range s.offsets {
			if !yield(i, s.Event(i)) {
				return
			}
		}
	}
}
