package core

import (
	"unsafe"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Prefetching. Applying a cancel or replace of an order of a deep book reads
// three things that are rarely in the cache: the table slot of its
// OrigClOrdID (or the entry of its OrderID), the record the slot points to,
// and the order the record points to; a NewOrder reads its ClOrdID's slot.
// Each address depends on the one before, so each miss is paid in turn.
// A caller that sees commands before it applies them (the pipeline sees
// every published command in its ring) shows them to Prefetch in order, a
// few ahead of Apply, and Prefetch moves each one a step further along that
// chain per call:
//
//   - the command given: hash its key, prefetch its slot;
//   - the command given one call earlier: read its slot, now in the cache,
//     and prefetch the record;
//   - the command given two calls earlier: read its record, now in the
//     cache, and prefetch the order.
//
// With the commands shown PrefetchDistance ahead, Apply then finds all
// three in the cache. What Prefetch keeps between calls (prefetchQueue) are
// hints: they never change what Apply does, and a stale one (a command
// applied, a record moved by EndOfDay) costs only a useless prefetch.

// PrefetchDistance is how far ahead of Apply a caller should show commands
// to Prefetch so that the three stages complete before Apply: with the
// command about to be applied at position i, show up to i+PrefetchDistance.
const PrefetchDistance = 3

// prefetchStep is one command's progress through the stages.
type prefetchStep struct {
	kind uint8  // what at indexes: prefetchNone, prefetchClOrdID or prefetchOrderID
	high uint32 // the hash's high half, for a ClOrdID slot
	at   uint64 // the byClOrdID slot, or the byDayOrderID entry
	rec  recIdx // the record, once stage 2 found it; else noRec
}

const (
	prefetchNone uint8 = iota
	prefetchClOrdID
	prefetchOrderID
)

// prefetchQueue holds the commands of the last two calls: [0] the last.
type prefetchQueue [2]prefetchStep

func newPrefetchQueue() prefetchQueue {
	return prefetchQueue{{rec: noRec}, {rec: noRec}}
}

// Prefetch shows the matcher a command it will apply soon (see above): it
// starts loading the index entries that applying it, and the two commands
// shown before it, will read, without waiting for them. Show each command
// once, in the order they will be applied, ideally PrefetchDistance ahead
// of Apply; the pipeline does so whenever those commands are already in
// its ring.
//
// Prefetch emits nothing and changes nothing Apply reads: whether and how
// it was called cannot change what Apply does (TestPrefetchChangesNothing,
// FuzzMatcher). It takes any bytes (a short, foreign or malformed command
// counts as one without a key) and never panics. It costs the hashing of
// one key, which Apply repeats, and on architectures other than amd64 it
// loads nothing ahead.
func (m *Matcher) Prefetch(cmd []byte) {
	m.advancePrefetches()
	q := &m.prefetches
	q[1], q[0] = q[0], prefetchStep{rec: noRec}
	field, session, orderID := addressedKey(cmd)
	x := &m.index
	var k clOrdKey
	if n := k.loadIfAny(field); n > 0 {
		h := k.hashLen(n, session)
		q[0] = prefetchStep{kind: prefetchClOrdID, high: uint32(h >> 32), at: h & x.mask, rec: noRec}
		prefetch(unsafe.Pointer(&x.byClOrdID[q[0].at]))
		return
	}
	if d := orderID - x.dayOrderID; orderID != 0 && d < uint64(len(x.byDayOrderID)) {
		q[0] = prefetchStep{kind: prefetchOrderID, at: d, rec: noRec}
		prefetch(unsafe.Pointer(&x.byDayOrderID[d]))
	}
}

// advancePrefetches runs stage 3 for the command shown two calls ago and
// stage 2 for the one shown last. Every index is checked against its
// table, so a stale step is harmless.
func (m *Matcher) advancePrefetches() {
	x := &m.index
	q := &m.prefetches
	if ri := q[1].rec; ri != noRec && int(ri) < len(x.recs) {
		if oi := x.recs[ri].slot; oi != noOrder && uint(oi) < uint(len(m.pool.orders)) {
			prefetch(unsafe.Pointer(&m.pool.orders[oi]))
		}
	}
	s := &q[0]
	switch {
	case s.kind == prefetchClOrdID && s.at < uint64(len(x.byClOrdID)):
		if e := x.byClOrdID[s.at]; e.recPlusOne != 0 && e.hashHigh == s.high {
			s.rec = recIdx(e.recPlusOne - 1)
		}
	case s.kind == prefetchOrderID && s.at < uint64(len(x.byDayOrderID)):
		s.rec = recIdx(x.byDayOrderID[s.at] - 1)
	}
	if s.rec != noRec && int(s.rec) < len(x.recs) {
		prefetch(unsafe.Pointer(&x.recs[s.rec]))
	}
}

// addressedKey returns what applying cmd looks up first: for a NewOrder
// its ClOrdID field; for a CancelOrder or ReplaceOrder its OrigClOrdID
// field and OrderID (the field empty when the OrderID alone addresses the
// order); otherwise a nil field. session is the command's session.
func addressedKey(cmd []byte) (field *[venue.ClOrdIDLength]byte, session uint16, orderID uint64) {
	id, err := venue.TemplateIDOf(cmd, 0)
	if err != nil {
		return nil, 0, 0
	}
	switch id {
	case venue.NewOrderTemplateID:
		if c, ok := venue.DecodeNewOrder(cmd); ok {
			return c.ClOrdIDArray(), c.SessionIdx(), 0
		}
	case venue.CancelOrderTemplateID:
		if c, ok := venue.DecodeCancelOrder(cmd); ok {
			return c.OrigClOrdIDArray(), c.SessionIdx(), c.OrderID()
		}
	case venue.ReplaceOrderTemplateID:
		if c, ok := venue.DecodeReplaceOrder(cmd); ok {
			return c.OrigClOrdIDArray(), c.SessionIdx(), c.OrderID()
		}
	}
	return nil, 0, 0
}

// loadIfAny is load for a field that may be missing (nil): then the key is
// empty.
func (k *clOrdKey) loadIfAny(field *[venue.ClOrdIDLength]byte) int {
	if field == nil {
		return 0
	}
	return k.load(field[:])
}
