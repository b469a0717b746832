package core

import (
	"math/bits"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// recIdx is an entry of the ClOrdID record table.
type recIdx int32

const noRec recIdx = -1

// clOrdRecord remembers one ClOrdID of the trading day: the ClOrdID of every
// accepted order, the new ClOrdID of every accepted replace and the ClOrdID
// of every done cancel that records it (CancelRemembersClOrdID: addEnded,
// a record of status Replaced naming the ended order). While the
// ClOrdID is the current one of a live order, slot points at the order and
// the other fields are not read (the order is the truth). When a replace gives
// the order a new ClOrdID the record becomes ordStatus Replaced; when the order
// ends the record keeps its final state, so that PossResend duplicates and
// status requests for finished orders are answered without the order.
type clOrdRecord struct {
	key              clOrdKey
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
	side             venue.Side
	ordType          venue.OrdType
	tif              venue.TimeInForce
	ordStatus        venue.OrdStatus // Replaced, Filled, Cancelled or Expired once not current
	riskSubject      uint16          // the order's risk subject (risk.go): enterCheckedOrder writes it before add
}

// recordTerms is what a record of a stop, GTD, iceberg or post-only order
// keeps beyond clOrdRecord once it is not current: the stop price, the
// expire time, the display size and post-only, which every report of the
// live order gave (FIX 4.4 requires the first two on every report of such
// an order), a status report of a finished one included
// (docs/ARCHITECTURE.md, "FIX 4.4 conformance of outbound messages"). They
// sit in a table of their own beside the records, written only for those
// orders (keepTerms), so that the records of plain orders stay 120 bytes and
// the table's pages are never touched without such orders. An entry is zero
// unless keepTerms wrote it for its record, when the record stopped being
// current: a new record's entry is zero, and EndOfDay's compaction and a
// reset clear what earlier records left (clOrdIndex.termsEnd). The record
// cannot tell an iceberg or a post-only order from a plain one, so the entry
// alone says what the order had.
type recordTerms struct {
	stopPxTicks  int64            // Stop and StopLimit: the stop price when the record was kept
	expireTimeNs int64            // GTD: the expire time
	maxFloorQty  int64            // iceberg: the display size when the record was kept
	flags        venue.OrderFlags // PostOnly and Iceberg as the order had them
}

// hasTerms reports whether an order keeps recordTerms when its record stops
// being current.
func hasTerms(o *order) bool {
	return IsStop(o.ordType) || o.tif == venue.TimeInForceGTD || o.flags&(venue.OrderFlagsPostOnly|venue.OrderFlagsIceberg) != 0
}

// termsFit reports whether terms t may be those of record r: nothing but
// zeros for a current record, and only the terms its order type and time
// in force allow (an iceberg or a post-only order is a limit order that
// can rest).
func termsFit(r *clOrdRecord, t *recordTerms) bool {
	if r.ordStatus == venue.OrdStatusNew {
		return *t == recordTerms{}
	}
	display := t.maxFloorQty != 0 || t.flags != 0
	return (t.stopPxTicks == 0 || IsStop(r.ordType)) && (t.expireTimeNs == 0 || r.tif == venue.TimeInForceGTD) &&
		(!display || (r.ordType == venue.OrdTypeLimit && canRest(r.ordType, r.tif))) && t.maxFloorQty >= 0 && t.stopPxTicks >= 0 &&
		t.flags&^(venue.OrderFlagsPostOnly|venue.OrderFlagsIceberg) == 0 && (t.maxFloorQty != 0) == t.flags.Has(venue.OrderFlagsIceberg)
}

// id returns the record's ClOrdID (a copy, for tests and views).
func (r *clOrdRecord) id() []byte { return r.key.id() }

// clOrdIndex holds the day's ClOrdID records and the indexes over them:
// (session, ClOrdID) → record, an open-addressing table hashed by
// clOrdKey.hash and confirmed by comparing the stored key, and OrderID → the
// order's current record. OrderIDs are the matcher's counter, so the orders
// of the day are indexed by a plain array (byDayOrderID, at OrderID −
// dayOrderID); only the orders of earlier days that are still indexed go to
// an open-addressing table (byOrderID). Both tables are power-of-two sized
// and kept at most half full, the ClOrdID one probing by a step per prefix
// (clOrdStep), the OrderID one linearly.
// Nothing is ever deleted during the day, so there are no tombstones;
// EndOfDay compacts the records and rebuilds the indexes.
type clOrdIndex struct {
	recs  []clOrdRecord
	terms []recordTerms // by record index: see recordTerms
	// termsEnd is one past the last entry of terms written since the last
	// compaction or reset: the entries from it on are zero.
	termsEnd  int
	recsUsed  int
	byClOrdID []clOrdSlot
	// byDayOrderID[orderID−dayOrderID] is the current record plus one (0:
	// none) of each OrderID from dayOrderID on. Each new OrderID comes with
	// a new record, so the OrderIDs handed out since a rebuild never number
	// more than the records; rebuild picks dayOrderID so that they fit
	// (see rebuild).
	byDayOrderID []int32
	dayOrderID   uint64
	byOrderID    []orderIDSlot // OrderIDs below dayOrderID
	mask         uint64
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
		recs:         make([]clOrdRecord, recordsMax),
		terms:        make([]recordTerms, recordsMax),
		byClOrdID:    make([]clOrdSlot, tableSize),
		byDayOrderID: make([]int32, recordsMax),
		dayOrderID:   1,
		byOrderID:    make([]orderIDSlot, tableSize),
		mask:         uint64(tableSize - 1),
	}
}

func (x *clOrdIndex) full() bool { return x.recsUsed == len(x.recs) }

// orderIDHash keeps each run of eight consecutive OrderIDs (orders arrive
// with consecutive ids) in eight consecutive slots, one cache line, and
// scatters the runs over the table with a multiplicative hash. Plain
// identity placement would be cheaper still but forms one long cluster that
// collides with the surviving GTC orders once the ids wrap around the table.
func orderIDHash(orderID uint64) uint64 {
	return bits.RotateLeft64((orderID>>3)*0x9E3779B97F4A7C15, 32)<<3 | orderID&7
}

// clOrdStep is the probe step of a ClOrdID with hash h: odd, so that the
// probes visit every slot, and taken from the bits of h that depend on the
// prefix only (see clOrdKey.hashLen). A ClOrdID whose home slot is taken
// goes on by this step rather than to the next slot: linear probing made
// each full 16-slot bucket (a prefix's counter) a wall that later keys
// crossed slot by slot (measured: 9 probes on average, hundreds at worst,
// at the end of a day of counters), and a common step keeps the displaced
// neighbours of a counter next to each other.
func clOrdStep(h uint64) uint64 { return h>>48 | 1 }

// find returns the record of (session, ClOrdID), or noRec; h is the key's
// hash, computed once per command for the duplicate check and the insert.
func (x *clOrdIndex) find(sessionIdx uint16, k *clOrdKey, h uint64) recIdx {
	ri, _ := x.probe(sessionIdx, k, h)
	return ri
}

// probe is find that also returns, for a ClOrdID it does not know, the empty
// slot where its probe stopped: the slot add fills for that ClOrdID. Nothing
// is deleted during the day, so the slot stays empty, and the ClOrdID's
// first empty slot, until the next insert.
func (x *clOrdIndex) probe(sessionIdx uint16, k *clOrdKey, h uint64) (recIdx, uint64) {
	high := uint32(h >> 32)
	step := clOrdStep(h)
	for i := h & x.mask; ; i = (i + step) & x.mask {
		s := x.byClOrdID[i]
		if s.recPlusOne == 0 {
			return noRec, i
		}
		if s.hashHigh != high {
			continue
		}
		r := &x.recs[s.recPlusOne-1]
		if r.sessionIdx == sessionIdx && r.key.equal(k) {
			return recIdx(s.recPlusOne - 1), i
		}
	}
}

// add stores a new record for ClOrdID k, whose hash is h, as the current
// ClOrdID of live order o in pool slot oi, and indexes it by (session,
// ClOrdID) at slot at, which probe returned for k since the last insert.
// The caller has checked that the table is not full.
func (x *clOrdIndex) add(k *clOrdKey, h, at uint64, o *order, oi orderIdx) recIdx {
	ri := recIdx(x.recsUsed)
	x.recsUsed++
	r := &x.recs[ri]
	// Field by field: a composite literal would be built on the stack and
	// copied. The kept state stays zero while the order is the truth. (The
	// records beyond recsUsed are zero already, but writing every byte was
	// measured faster than skipping the zeros.)
	r.key.w[0], r.key.w[1], r.key.w[2], r.key.w[3], r.key.w[4] = k.w[0], k.w[1], k.w[2], k.w[3], k.w[4]
	r.account = o.account
	r.orderID = o.orderID
	r.priceTicks, r.qty, r.leavesQty, r.cumQty, r.cumNotionalTicks = 0, 0, 0, 0, 0
	r.instrumentID = o.instrumentID()
	r.slot = oi
	r.sessionIdx = o.sessionIdx
	r.side, r.ordType, r.tif, r.ordStatus = o.side, o.ordType, o.tif, 0
	x.byClOrdID[at] = clOrdSlot{hashHigh: uint32(h >> 32), recPlusOne: int32(ri) + 1}
	return ri
}

// addEnded records ClOrdID k (hash h, table slot at from probe) for the
// ended order whose current record is from (a cancel's,
// CancelRemembersClOrdID). The new record is Replaced, as a ClOrdID a
// replace left is: it names the order, whose current record stays from
// (its OrderID is not moved, so that status requests by OrderID and by
// the order's ClOrdID answer as before, and an order keeps one current
// record, which rebuild and a snapshot's load check). The caller has
// checked that the table is not full.
func (x *clOrdIndex) addEnded(k *clOrdKey, h, at uint64, from recIdx) {
	ri := recIdx(x.recsUsed)
	x.recsUsed++
	r := &x.recs[ri]
	*r = x.recs[from]
	r.key = *k
	r.ordStatus = venue.OrdStatusReplaced
	x.byClOrdID[at] = clOrdSlot{hashHigh: uint32(h >> 32), recPlusOne: int32(ri) + 1}
}

func (x *clOrdIndex) insertClOrd(ri recIdx, h uint64) {
	step := clOrdStep(h)
	for i := h & x.mask; ; i = (i + step) & x.mask {
		if x.byClOrdID[i].recPlusOne == 0 {
			x.byClOrdID[i] = clOrdSlot{hashHigh: uint32(h >> 32), recPlusOne: int32(ri) + 1}
			return
		}
	}
}

// findOrder returns the current record of an OrderID, or noRec.
func (x *clOrdIndex) findOrder(orderID uint64) recIdx {
	if d := orderID - x.dayOrderID; d < uint64(len(x.byDayOrderID)) {
		return recIdx(x.byDayOrderID[d] - 1)
	}
	return x.findEarlierOrder(orderID)
}

// findEarlierOrder is findOrder for an OrderID of an earlier day.
func (x *clOrdIndex) findEarlierOrder(orderID uint64) recIdx {
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
	if d := orderID - x.dayOrderID; d < uint64(len(x.byDayOrderID)) {
		x.byDayOrderID[d] = int32(ri) + 1
		return
	}
	x.setEarlierOrder(orderID, ri)
}

// setEarlierOrder is setOrder for an OrderID of an earlier day.
func (x *clOrdIndex) setEarlierOrder(orderID uint64, ri recIdx) {
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
// order, calls moved(old, new) for each kept one, and rebuilds the indexes
// (lastOrderID is the last OrderID handed out). It is the EndOfDay path:
// O(records + table size).
func (x *clOrdIndex) compact(lastOrderID uint64, keep func(ri recIdx) bool, moved func(from, to recIdx)) {
	n := 0
	for i := 0; i < x.recsUsed; i++ {
		if !keep(recIdx(i)) {
			continue
		}
		if i != n {
			x.recs[n] = x.recs[i]
			x.terms[n] = x.terms[i]
		}
		moved(recIdx(i), recIdx(n))
		n++
	}
	clear(x.recs[n:x.recsUsed])
	if x.termsEnd > n {
		// The dropped records' terms: a new record's entry must be zero
		// (recordTerms). Only the entries written are cleared, so that a
		// day without such orders leaves the table's pages untouched.
		clear(x.terms[n:x.termsEnd])
		x.termsEnd = n
	}
	x.recsUsed = n
	x.rebuild(lastOrderID)
}

// rebuild re-indexes every record: all of them by ClOrdID, and by OrderID
// each record that is the current one of its order (slot set or final).
// lastOrderID is the last OrderID handed out, and every record's OrderID is
// at most lastOrderID.
//
// The day's OrderID array starts at lastOrderID + 1 − recsUsed (at least 1):
// the OrderIDs still to come before the next rebuild, one per new record,
// then end at most len(recs) − 1 places into the array, and the records'
// own OrderIDs from there on fit too. Which OrderIDs go to the array and
// which to the table changes no answer, only the cost of finding them.
func (x *clOrdIndex) rebuild(lastOrderID uint64) {
	clear(x.byClOrdID)
	clear(x.byDayOrderID)
	clear(x.byOrderID)
	x.reindex(lastOrderID)
}

// reindex is rebuild over tables that hold no entry (a snapshot's records
// read after resetState), which it does not clear again: at the default
// bounds they take over a hundred MiB.
func (x *clOrdIndex) reindex(lastOrderID uint64) {
	x.dayOrderID = 1
	if back := uint64(x.recsUsed); lastOrderID >= back {
		x.dayOrderID = lastOrderID + 1 - back
	}
	for i := 0; i < x.recsUsed; i++ {
		r := &x.recs[i]
		x.insertClOrd(recIdx(i), r.key.hash(r.sessionIdx))
		if r.ordStatus != venue.OrdStatusReplaced {
			x.setOrder(r.orderID, recIdx(i))
		}
	}
}
