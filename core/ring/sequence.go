package ring

import "sync/atomic"

// cacheLinePadBytes is the padding put around every hot counter. 128 bytes
// rather than 64 because Intel's adjacent-line prefetcher pulls cache lines in
// pairs and Apple silicon uses 128-byte lines: two counters written by
// different cores must not share a 128-byte block, or every write by one core
// invalidates the other core's copy (false sharing).
const cacheLinePadBytes = 128

// cacheLinePad separates hot fields of a struct.
type cacheLinePad [cacheLinePadBytes]byte

// Sequence is an int64 counter alone on its cache line, written by one
// goroutine (a consumer publishing how far it has read) and read by others
// (producers gating on it, consumers depending on it). Store and Load are
// sequentially consistent atomics, so everything the writer did before Store
// happens before whatever a reader does after a Load that observes the value.
type Sequence struct {
	_     cacheLinePad
	value atomic.Int64
	_     [cacheLinePadBytes - 8]byte
}

// NewSequence returns a padded sequence holding initial. A consumer that has
// read nothing yet starts at -1, because the first slot is sequence 0.
func NewSequence(initial int64) *Sequence {
	s := &Sequence{}
	s.value.Store(initial)
	return s
}

// Load returns the current value.
func (s *Sequence) Load() int64 { return s.value.Load() }

// Store sets the value. A consumer stores the last sequence it has finished
// with; from then on producers may overwrite that slot and everything before it.
func (s *Sequence) Store(v int64) { s.value.Store(v) }

// minimumSequence returns the smallest value among seqs, or fallback when
// seqs is empty.
func minimumSequence(seqs []*Sequence, fallback int64) int64 {
	if len(seqs) == 0 {
		return fallback
	}
	lowest := seqs[0].Load()
	for _, s := range seqs[1:] {
		if v := s.Load(); v < lowest {
			lowest = v
		}
	}
	return lowest
}
