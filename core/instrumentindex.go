package core

import "math/bits"

// instrumentIndex maps instrument ids to indexes into Matcher.instruments:
// an open-addressing table with linear probing, sized at start-up for
// Config.InstrumentsMax so that it is at most a quarter full even after
// instruments are added (AddInstrument), so a lookup is a multiply, a shift
// and usually one probe (a Go map costs several times more on every order).
type instrumentIndex struct {
	slots []instrumentSlot
	shift uint
}

type instrumentSlot struct {
	id  uint32 // 0 marks an empty slot: instrument id 0 is reserved
	idx uint16
}

// newInstrumentIndex sizes the table for capacity ids and enters ids.
func newInstrumentIndex(ids []uint32, capacity int) instrumentIndex {
	size := 1 << bits.Len(uint(4*max(capacity, len(ids), 1)-1))
	x := instrumentIndex{slots: make([]instrumentSlot, size), shift: uint(64 - bits.TrailingZeros(uint(size)))}
	x.rebuild(ids)
	return x
}

// rebuild empties the table and enters ids, id i at index i.
func (x *instrumentIndex) rebuild(ids []uint32) {
	clear(x.slots)
	for i, id := range ids {
		x.insert(id, uint16(i))
	}
}

// insert enters an id that is not in the table yet; the table's size
// (four slots per instrument allowed) guarantees a free slot.
func (x *instrumentIndex) insert(id uint32, idx uint16) {
	j := x.home(id)
	for x.slots[j].id != 0 {
		j = (j + 1) & (len(x.slots) - 1)
	}
	x.slots[j] = instrumentSlot{id: id, idx: idx}
}

func (x *instrumentIndex) home(id uint32) int {
	return int((uint64(id) * 0x9E3779B97F4A7C15) >> x.shift)
}

// lookup returns the index of an instrument id; id 0 is never found.
func (x *instrumentIndex) lookup(id uint32) (uint16, bool) {
	if id == 0 {
		return 0, false
	}
	for j := x.home(id); ; j = (j + 1) & (len(x.slots) - 1) {
		s := x.slots[j]
		if s.id == id {
			return s.idx, true
		}
		if s.id == 0 {
			return 0, false
		}
	}
}
