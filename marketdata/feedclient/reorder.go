package feedclient

import "github.com/fixvenue/fixvenue/marketdata/packet"

// reorderBuffer holds sequenced packets that arrived ahead of a gap, in
// fixed slots allocated at start, until the gap is filled or recovered.
type reorderBuffer struct {
	arena []byte
	slots []reorderSlot
	used  int
}

type reorderSlot struct {
	seq   uint64
	count int
	n     int
	used  bool
}

func newReorderBuffer(packets int) reorderBuffer {
	return reorderBuffer{arena: make([]byte, packets*packet.DatagramBytesMax), slots: make([]reorderSlot, packets)}
}

func (r *reorderBuffer) full() bool { return r.used == len(r.slots) }

// put keeps a copy of pkt; it reports false when the buffer is full or the
// packet is larger than a datagram. A packet already held is not stored twice.
func (r *reorderBuffer) put(pkt []byte, seq uint64, count int) bool {
	if len(pkt) > packet.DatagramBytesMax {
		return false
	}
	free := -1
	for i := range r.slots {
		s := &r.slots[i]
		if s.used && s.seq == seq && s.count == count {
			return true
		}
		if !s.used && free < 0 {
			free = i
		}
	}
	if free < 0 {
		return false
	}
	copy(r.arena[free*packet.DatagramBytesMax:], pkt)
	r.slots[free] = reorderSlot{seq: seq, count: count, n: len(pkt), used: true}
	r.used++
	return true
}

// takeNext copies into dst and removes a packet that contains expected,
// dropping packets that end at or before it. ok is false when none does.
func (r *reorderBuffer) takeNext(dst []byte, expected uint64) (pkt []byte, ok bool) {
	for i := range r.slots {
		if !r.holdsFrom(i, expected) {
			continue
		}
		s := &r.slots[i]
		if s.seq <= expected && !ok {
			pkt = append(dst[:0], r.arena[i*packet.DatagramBytesMax:i*packet.DatagramBytesMax+s.n]...)
			r.free(i)
			ok = true
		}
	}
	return pkt, ok
}

// lowestSeq returns the smallest first sequence held among packets that
// still carry messages from expected on; it drops the others.
func (r *reorderBuffer) lowestSeq(expected uint64) (uint64, bool) {
	var low uint64
	found := false
	for i := range r.slots {
		if !r.holdsFrom(i, expected) {
			continue
		}
		if s := &r.slots[i]; !found || s.seq < low {
			low, found = s.seq, true
		}
	}
	return low, found
}

// holdsFrom reports whether slot i holds a packet that still carries
// messages from expected on; it frees one that ends before.
func (r *reorderBuffer) holdsFrom(i int, expected uint64) bool {
	s := &r.slots[i]
	if !s.used {
		return false
	}
	if s.seq+uint64(s.count) <= expected {
		r.free(i)
		return false
	}
	return true
}

// dropAbove forgets packets that start beyond limit.
func (r *reorderBuffer) dropAbove(limit uint64) {
	for i := range r.slots {
		if s := &r.slots[i]; s.used && s.seq > limit {
			r.free(i)
		}
	}
}

func (r *reorderBuffer) free(i int) {
	r.slots[i].used = false
	r.used--
}

func (r *reorderBuffer) clear() {
	for i := range r.slots {
		r.slots[i].used = false
	}
	r.used = 0
}
