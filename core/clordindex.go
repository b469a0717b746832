package core

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// recIdx is an entry of the ClOrdID record table.
type recIdx int32

const noRec recIdx = -1

// clOrdRecord remembers one ClOrdID of the trading day: the ClOrdID of every
// accepted order and the new ClOrdID of every accepted replace. While the
// ClOrdID is the current one of a live order, slot points at the order and
// the other fields are not read (the order is the truth). When a replace gives
// the order a new ClOrdID the record becomes ordStatus Replaced; when the order
// ends the record keeps its final state, so that PossResend duplicates and
// status requests for finished orders are answered without the order.
type clOrdRecord struct {
	clOrdID          [venue.ClOrdIDLength]byte
	account          [venue.AccountLength]byte
	orderID          uint64
	priceTicks       int64
	qty              int64
	leavesQty        int64
	cumQty           int64
	cumNotionalTicks int64
	instrumentID     uint32
	slot             orderIdx // the live order while current, else noOrder
	sessionIdx       uint16
	clOrdIDLen       uint8
	side             venue.Side
	ordType          venue.OrdType
	tif              venue.TimeInForce
	ordStatus        venue.OrdStatus // Replaced, Filled, Cancelled or Expired once not current
}

func (r *clOrdRecord) id() []byte { return r.clOrdID[:r.clOrdIDLen] }

// clOrdIndex holds the day's ClOrdID records and two open-addressing tables
// over them: (session, ClOrdID) → record, hashed with xxhash and confirmed by
// comparing the stored bytes, and OrderID → the order's current record.
// Both use linear probing in power-of-two tables kept at most half full.
// Nothing is ever deleted during the day, so there are no tombstones;
// EndOfDay compacts the records and rebuilds both tables.
type clOrdIndex struct {
	recs      []clOrdRecord
	recsUsed  int
	byClOrdID []clOrdSlot
	byOrderID []orderIDSlot
	mask      uint64
}

// clOrdSlot stores the record index plus one, so that a zeroed table is empty,
// and the high half of the hash to skip most byte comparisons.
type clOrdSlot struct {
	hashHigh   uint32
	recPlusOne int32
}

type orderIDSlot struct {
	orderIDLow uint32
	recPlusOne int32
}

func newClOrdIndex(recordsMax int) clOrdIndex {
	tableSize := 1 << bits.Len(uint(2*recordsMax-1))
	return clOrdIndex{
		recs:      make([]clOrdRecord, recordsMax),
		byClOrdID: make([]clOrdSlot, tableSize),
		byOrderID: make([]orderIDSlot, tableSize),
		mask:      uint64(tableSize - 1),
	}
}

func (x *clOrdIndex) full() bool { return x.recsUsed == len(x.recs) }

// clOrdHash hashes a ClOrdID for the (session, ClOrdID) table: xxhash of
// the ClOrdID without its last character, mixed with the session index,
// chooses a 16-slot bucket (two cache lines), and the last character's digit
// value chooses the slot in it. Clients mostly number their orders (ORD1041,
// ORD1042, ...), so consecutive ClOrdIDs share a bucket and a new order
// usually finds its slot already in cache instead of missing on a random one;
// random ClOrdIDs (UUIDs) spread as with a plain hash. The last character is
// also mixed into the high half, which the table keeps to skip byte
// comparisons, so neighbours in a bucket are told apart without reading
// their records.
func clOrdHash(sessionIdx uint16, clOrdID []byte) uint64 {
	prefix, last := clOrdID, byte(0)
	if n := len(clOrdID); n > 0 {
		prefix, last = clOrdID[:n-1], clOrdID[n-1]
	}
	h := xxhash.Sum64(prefix) ^ (uint64(sessionIdx)+1)*0x9E3779B97F4A7C15
	h ^= h >> 29
	h ^= uint64(last) * 0x100000001B3 << 32
	return h&^15 | uint64(digitValue(last))
}

// digitValue maps '0'-'9' to 0-9 and hex letters to 10-15 (so decimal and
// hex counters fill a bucket without collisions), anything else to its low
// four bits.
func digitValue(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return c & 15
}

// orderIDHash keeps each run of eight consecutive OrderIDs (orders arrive
// with consecutive ids) in eight consecutive slots, one cache line, and
// scatters the runs over the table with a multiplicative hash. Plain
// identity placement would be cheaper still but forms one long cluster that
// collides with the surviving GTC orders once the ids wrap around the table.
func orderIDHash(orderID uint64) uint64 {
	return bits.RotateLeft64((orderID>>3)*0x9E3779B97F4A7C15, 32)<<3 | orderID&7
}

// find returns the record of (session, ClOrdID), or noRec.
func (x *clOrdIndex) find(sessionIdx uint16, clOrdID []byte) recIdx {
	return x.findHashed(sessionIdx, clOrdID, clOrdHash(sessionIdx, clOrdID))
}

// findHashed is find with the key's clOrdHash already computed, so that a
// new order hashes its ClOrdID once for the duplicate check and the insert.
func (x *clOrdIndex) findHashed(sessionIdx uint16, clOrdID []byte, h uint64) recIdx {
	high := uint32(h >> 32)
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		s := x.byClOrdID[i]
		if s.recPlusOne == 0 {
			return noRec
		}
		if s.hashHigh != high {
			continue
		}
		r := &x.recs[s.recPlusOne-1]
		if r.sessionIdx == sessionIdx && string(r.id()) == string(clOrdID) {
			return recIdx(s.recPlusOne - 1)
		}
	}
}

// add stores a new record for (session, ClOrdID), whose clOrdHash is h, and
// indexes it. The caller has checked that the ClOrdID is not known and that
// the table is not full.
func (x *clOrdIndex) add(sessionIdx uint16, clOrdID []byte, h uint64) recIdx {
	ri := recIdx(x.recsUsed)
	x.recsUsed++
	r := &x.recs[ri]
	*r = clOrdRecord{sessionIdx: sessionIdx, slot: noOrder, clOrdIDLen: uint8(len(clOrdID))}
	copy(r.clOrdID[:], clOrdID)
	x.insertClOrd(ri, h)
	return ri
}

func (x *clOrdIndex) insertClOrd(ri recIdx, h uint64) {
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		if x.byClOrdID[i].recPlusOne == 0 {
			x.byClOrdID[i] = clOrdSlot{hashHigh: uint32(h >> 32), recPlusOne: int32(ri) + 1}
			return
		}
	}
}

// findOrder returns the current record of an OrderID, or noRec.
func (x *clOrdIndex) findOrder(orderID uint64) recIdx {
	for i := orderIDHash(orderID) & x.mask; ; i = (i + 1) & x.mask {
		s := x.byOrderID[i]
		if s.recPlusOne == 0 {
			return noRec
		}
		if s.orderIDLow == uint32(orderID) && x.recs[s.recPlusOne-1].orderID == orderID {
			return recIdx(s.recPlusOne - 1)
		}
	}
}

// setOrder points OrderID at record ri, adding the entry if it is new.
func (x *clOrdIndex) setOrder(orderID uint64, ri recIdx) {
	for i := orderIDHash(orderID) & x.mask; ; i = (i + 1) & x.mask {
		s := &x.byOrderID[i]
		if s.recPlusOne == 0 {
			*s = orderIDSlot{orderIDLow: uint32(orderID), recPlusOne: int32(ri) + 1}
			return
		}
		if s.orderIDLow == uint32(orderID) && x.recs[s.recPlusOne-1].orderID == orderID {
			s.recPlusOne = int32(ri) + 1
			return
		}
	}
}

// compact keeps only the records for which keep returns true, in their
// order, calls moved(old, new) for each kept one, and rebuilds both tables.
// It is the EndOfDay path: O(records + table size).
func (x *clOrdIndex) compact(keep func(ri recIdx) bool, moved func(from, to recIdx)) {
	n := 0
	for i := 0; i < x.recsUsed; i++ {
		if !keep(recIdx(i)) {
			continue
		}
		if i != n {
			x.recs[n] = x.recs[i]
		}
		moved(recIdx(i), recIdx(n))
		n++
	}
	clear(x.recs[n:x.recsUsed])
	x.recsUsed = n
	x.rebuild()
}

// rebuild re-indexes every record: all of them by ClOrdID, and by OrderID
// each record that is the current one of its order (slot set or final).
func (x *clOrdIndex) rebuild() {
	clear(x.byClOrdID)
	clear(x.byOrderID)
	for i := 0; i < x.recsUsed; i++ {
		r := &x.recs[i]
		x.insertClOrd(recIdx(i), clOrdHash(r.sessionIdx, r.id()))
		if r.ordStatus != venue.OrdStatusReplaced {
			x.setOrder(r.orderID, recIdx(i))
		}
	}
}
