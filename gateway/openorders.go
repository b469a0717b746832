package gateway

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The gateway's view of open orders, for OrderMassStatusRequest (AF), and
// for what a fill's or a cancel's report says of its order that the event
// does not carry (outbound.go, orderTerms).
//
// Outbound sees every event that opens, changes or ends an order, so it
// keeps, per session, the state an ExecutionReport of each open order needs;
// the matcher is not asked (it has no locks, and a journaled status command
// per order would cost a command per open order). Changes are applied once
// their commands are durable, just before their answers are handed over: a
// mass status never reports a state that is not durable, and one asked after
// an answer arrived includes it. At start-up the view is seeded from the matcher's books after
// replay (Seed), before the matcher runs. See "OrderMassStatusRequest" in
// docs/ARCHITECTURE.md.
//
// A cancel or replace the gateway refuses itself (throttled, unknown
// symbol...) names its order by OrigClOrdID, and its OrderCancelReject
// gives that order's OrderID and status (answers.go, rejectCancel): each
// session's orders are also indexed by ClOrdID (clOrdIndex), so that the
// look-up under mu, which every chunk of outbound's answers waits for, is
// one map read, where a scan of the session's orders took milliseconds per
// refusal at 80,000 orders. A replace leaves the order's earlier ClOrdID
// naming it in the matcher (core/cancel.go, locate) until the order ends
// or the end of day forgets it, so the index keeps those too (superseded):
// a refusal naming one gives the order, not 37=NONE 39=8, which told the
// client its live order was gone.
//
// The matcher also remembers the day's ended orders (filled, cancelled,
// expired) by each of their ClOrdIDs and their OrderID until the end of
// day, and answers a cancel or replace naming one too late, with the
// order's OrderID and final status (core/cancel.go, locate). So the view
// keeps them too (clOrdIndex.ended), from the event that ends the order:
// its last ClOrdID, those replaces took from it and a done cancel's own,
// forgotten at an end of day's OperatorResult and seeded at start-up from
// the matcher's records (SeedEnded). They are at most endedMax
// (Config.EndedClOrdIDsMax, the matcher's ClOrdIDsMax); past it an ended
// order is not remembered, and a refusal naming it is answered as one
// naming no order (gateway/doc.go).

// openOrder is one open order as a mass status report gives it. ClOrdID and
// Account are kept in arrays, so that the view costs no allocation per order.
type openOrder struct {
	orderID          uint64
	instrumentID     uint32
	side             venue.Side
	ordType          venue.OrdType
	tif              venue.TimeInForce
	postOnly         bool
	priceTicks       int64
	qty              int64
	leavesQty        int64
	cumQty           int64
	cumNotionalTicks int64
	expireTimeNs     int64
	stopPxTicks      int64 // Stop and StopLimit: the trigger price
	maxFloorQty      int64 // an iceberg's display size
	clOrdID          [venue.ClOrdIDLength]byte
	clOrdIDLen       uint8
	account          [venue.AccountLength]byte
	accountLen       uint8
}

func (o *openOrder) setClOrdID(b []byte) { o.clOrdIDLen = uint8(copy(o.clOrdID[:], b)) }
func (o *openOrder) setAccount(b []byte) { o.accountLen = uint8(copy(o.account[:], b)) }
func (o *openOrder) ClOrdID() []byte     { return o.clOrdID[:o.clOrdIDLen] }
func (o *openOrder) Account() []byte     { return o.account[:o.accountLen] }

// openChange is one change to the view, held with the answers of its chunk
// until they are handed over.
type openChange struct {
	session uint16
	kind    openChangeKind
	order   openOrder
	// An openEnded change's final status and, beside the ClOrdID of its
	// event (order.clOrdID), the event's OrigClOrdID: a cancel's event
	// gives the cancel's ClOrdID and the order's, a replace that filled
	// the order its new one and its old one.
	status  venue.OrdStatus
	orig    [venue.ClOrdIDLength]byte
	origLen uint8
}

// openChangeKind says which of a change's fields are news: a Fill carries
// no ExpireTime, StopPx, MaxFloor or ExecInst and a replace no ExecInst, so
// those keep what the order had.
type openChangeKind uint8

const (
	openEntered openChangeKind = iota
	openFilled
	openReplaced
	openEnded
	// openDayEnded is an end of day: the matcher forgets every ClOrdID
	// but the current ones of live orders (core/expiry.go), and so does
	// the view (clOrdIndex.superseded).
	openDayEnded
)

// openOrders is the view: guarded by mu (outbound writes, sessions read).
// It mirrors the matcher's books, so it holds at most the matcher's
// OrdersMax orders (Config.OpenOrdersMax); past that bound a change is
// counted and dropped, never grown into.
type openOrders struct {
	mu        sync.Mutex
	bySession []map[uint64]openOrder
	byClOrdID []clOrdIndex // each session's orders by ClOrdID
	n         int
	max       int
	// open are the orders of each session in the view, read without mu
	// by the session's inbound for its OpenOrdersMax (openbound.go).
	open []atomic.Int64
	// overflowed is set once the bound refused an insert: the view may
	// then miss a live order (HasDayOrders).
	overflowed bool
	// ended counts the ClOrdIDs of ended orders the sessions' indexes
	// hold (clOrdIndex.ended), at most endedMax; endedFull is set once
	// the bound left one out, until the end of day forgets them all.
	ended, endedMax int
	endedFull       bool
	// betweenWindows, when set (by tests), runs between two windows of a
	// snapshot, with mu not held.
	betweenWindows func()
}

func newOpenOrders(sessions, max int) *openOrders {
	v := &openOrders{bySession: make([]map[uint64]openOrder, sessions), byClOrdID: make([]clOrdIndex, sessions), max: max,
		endedMax: DefaultEndedClOrdIDsMax, open: make([]atomic.Int64, sessions)}
	for i := range v.bySession {
		v.bySession[i] = map[uint64]openOrder{}
		v.byClOrdID[i] = clOrdIndex{holders: map[clOrdKey]clOrdHolder{}}
	}
	return v
}

// clOrdKey is a ClOrdID as a map key: an array and its length, so that
// neither an insert nor a look-up converts it to a string (an allocation
// per order).
type clOrdKey struct {
	b [venue.ClOrdIDLength]byte
	n uint8
}

// keyOf is b's key; ok is false for a ClOrdID longer than the schema's,
// which no order has.
func keyOf(b []byte) (k clOrdKey, ok bool) {
	if len(b) > len(k.b) {
		return k, false
	}
	k.n = uint8(copy(k.b[:], b))
	return k, true
}

// clOrdHolder is the order a ClOrdID finds and how many of the session's
// open orders have it.
type clOrdHolder struct {
	orderID uint64
	n       uint32
}

// clOrdIndex is one session's open orders by ClOrdID. The matcher refuses
// a ClOrdID that one of the session's live orders has (an end of day
// forgets the day's others), so a ClOrdID names one open order; the index
// does not rely on that to stay complete: each key counts its orders and
// finds the one given it last, and the orders of a key more than one has
// are listed in shared, in the order they took it, so that when the one
// found ends the next is found there, never by a scan of the session's
// orders under mu. Only such keys cost a list.
type clOrdIndex struct {
	holders map[clOrdKey]clOrdHolder
	shared  map[clOrdKey][]uint64
	// superseded are the ClOrdIDs replaces took from the session's open
	// orders since the last end of day, each with its order and the
	// ClOrdID the order had before it (a chain per order, whose latest
	// link lastSuperseded gives, so that the order's end drops them
	// without a scan and a replace costs no allocation of its own). Both
	// are made at the session's first replace.
	superseded     map[clOrdKey]supersededLink
	lastSuperseded map[uint64]clOrdKey
	// ended are the ClOrdIDs of the session's orders ended since the
	// last end of day, each with its order, and endedStatus those
	// orders' final statuses, by OrderID. Both are made at the session's
	// first ended order.
	ended       map[clOrdKey]uint64
	endedStatus map[uint64]venue.OrdStatus
}

// supersededLink is a ClOrdID a replace took from order orderID, and the
// one the order had before it (when hasPrev), also superseded.
type supersededLink struct {
	orderID uint64
	prev    clOrdKey
	hasPrev bool
}

// add notes that the session's order orderID has ClOrdID k.
func (x *clOrdIndex) add(k clOrdKey, orderID uint64) {
	h, had := x.holders[k]
	if !had {
		x.holders[k] = clOrdHolder{orderID: orderID, n: 1}
		return
	}
	if x.shared == nil {
		x.shared = map[clOrdKey][]uint64{}
	}
	list := x.shared[k]
	if h.n == 1 {
		list = []uint64{h.orderID}
	}
	x.shared[k] = append(list, orderID)
	x.holders[k] = clOrdHolder{orderID: orderID, n: h.n + 1}
}

// remove notes that order orderID no longer has ClOrdID k.
func (x *clOrdIndex) remove(k clOrdKey, orderID uint64) {
	h, had := x.holders[k]
	switch {
	case !had:
		return
	case h.n == 1:
		if h.orderID == orderID {
			delete(x.holders, k)
		}
		return
	}
	list := x.shared[k]
	i := slices.Index(list, orderID)
	if i < 0 {
		return
	}
	list = slices.Delete(list, i, i+1)
	h.n--
	h.orderID = list[len(list)-1]
	if h.n == 1 {
		delete(x.shared, k)
	} else {
		x.shared[k] = list
	}
	x.holders[k] = h
}

// find is the order ClOrdID b finds.
func (x *clOrdIndex) find(b []byte) (uint64, bool) {
	k, ok := keyOf(b)
	if !ok {
		return 0, false
	}
	h, ok := x.holders[k]
	return h.orderID, ok
}

// supersede notes that a replace took ClOrdID k from open order orderID.
// A ClOrdID names one order of the session in a day (the matcher refuses
// it again), so one already noted is left to the order it names.
func (x *clOrdIndex) supersede(k clOrdKey, orderID uint64) {
	if x.superseded == nil {
		x.superseded, x.lastSuperseded = map[clOrdKey]supersededLink{}, map[uint64]clOrdKey{}
	}
	if _, taken := x.superseded[k]; taken {
		return
	}
	prev, hasPrev := x.lastSuperseded[orderID]
	x.superseded[k] = supersededLink{orderID: orderID, prev: prev, hasPrev: hasPrev}
	x.lastSuperseded[orderID] = k
}

// dropSuperseded forgets the superseded ClOrdIDs of order orderID, which
// has ended: the matcher answers them as the ended order's (too late).
func (x *clOrdIndex) dropSuperseded(orderID uint64) {
	k, ok := x.lastSuperseded[orderID]
	if !ok {
		return
	}
	delete(x.lastSuperseded, orderID)
	for ok {
		l, found := x.superseded[k]
		if !found || l.orderID != orderID {
			return
		}
		delete(x.superseded, k)
		k, ok = l.prev, l.hasPrev
	}
}

// endOrder remembers that the session's order orderID has ended with
// status, by the ClOrdID k it had and by the ClOrdIDs replaces took from
// it, which it forgets as superseded (dropSuperseded).
func (v *openOrders) endOrder(x *clOrdIndex, k clOrdKey, orderID uint64, status venue.OrdStatus) {
	v.rememberEnded(x, k, orderID, status)
	for sk, ok := x.lastSuperseded[orderID]; ok; {
		l, found := x.superseded[sk]
		if !found || l.orderID != orderID {
			break
		}
		v.rememberEnded(x, sk, orderID, status)
		sk, ok = l.prev, l.hasPrev
	}
	x.dropSuperseded(orderID)
}

// rememberEnded notes that ClOrdID k names the session's order orderID,
// ended with status, unless the view holds endedMax such ClOrdIDs.
func (v *openOrders) rememberEnded(x *clOrdIndex, k clOrdKey, orderID uint64, status venue.OrdStatus) {
	if k.n == 0 {
		return
	}
	if _, had := x.ended[k]; !had {
		if v.ended >= v.endedMax {
			v.endedFull = true
			return
		}
		if x.ended == nil {
			x.ended, x.endedStatus = map[clOrdKey]uint64{}, map[uint64]venue.OrdStatus{}
		}
		v.ended++
	}
	x.ended[k] = orderID
	x.endedStatus[orderID] = status
}

// forgetEnded forgets every session's ended orders, as the matcher's end
// of day does.
func (v *openOrders) forgetEnded() {
	for i := range v.byClOrdID {
		v.byClOrdID[i].ended, v.byClOrdID[i].endedStatus = nil, nil
	}
	v.ended, v.endedFull = 0, false
}

// findSuperseded is the open order ClOrdID b names that a replace took
// from it.
func (x *clOrdIndex) findSuperseded(b []byte) (uint64, bool) {
	k, ok := keyOf(b)
	if !ok {
		return 0, false
	}
	l, ok := x.superseded[k]
	return l.orderID, ok
}

// apply makes the changes; it reports how many inserts the bound refused.
func (v *openOrders) apply(changes []openChange) (refused int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range changes {
		c := &changes[i]
		if int(c.session) >= len(v.bySession) {
			continue
		}
		if c.kind == openDayEnded {
			for i := range v.byClOrdID {
				v.byClOrdID[i].superseded, v.byClOrdID[i].lastSuperseded = nil, nil
			}
			v.forgetEnded()
			continue
		}
		m, x := v.bySession[c.session], &v.byClOrdID[c.session]
		old, had := m[c.order.orderID]
		switch {
		case c.kind == openEnded:
			if had {
				delete(m, c.order.orderID)
				v.n--
				v.open[c.session].Add(-1)
				k, _ := keyOf(old.ClOrdID())
				x.remove(k, old.orderID)
				v.endOrder(x, k, old.orderID, c.status)
			}
			// The event's ClOrdIDs: the order's own when the view did
			// not hold it (it never rested), a cancel's.
			k, _ := keyOf(c.order.ClOrdID())
			v.rememberEnded(x, k, c.order.orderID, c.status)
			k, _ = keyOf(c.orig[:c.origLen])
			v.rememberEnded(x, k, c.order.orderID, c.status)
		case had:
			o := c.order
			if c.kind != openEntered {
				o.postOnly = old.postOnly
			}
			if c.kind == openFilled {
				o.expireTimeNs, o.stopPxTicks, o.maxFloorQty = old.expireTimeNs, old.stopPxTicks, old.maxFloorQty
			}
			m[c.order.orderID] = o
			// A replace gives the order a new ClOrdID: the old one no
			// longer finds it as current, but still names it (superseded).
			if was, is := old.ClOrdID(), o.ClOrdID(); string(was) != string(is) {
				k, _ := keyOf(was)
				x.remove(k, o.orderID)
				x.supersede(k, o.orderID)
				k, _ = keyOf(is)
				x.add(k, o.orderID)
			}
		case v.n >= v.max:
			refused++
			v.overflowed = true
		default:
			m[c.order.orderID] = c.order
			v.n++
			v.open[c.session].Add(1)
			k, _ := keyOf(c.order.ClOrdID())
			x.add(k, c.order.orderID)
		}
	}
	return refused
}

// snapshot returns a session's open orders that pass the filters (instrument
// 0 and an empty account match any), ordered by OrderID (the order they
// were entered in).
//
// Outbound takes mu for every chunk of answers, so every session's answers
// wait while mu is held. A session may hold open_orders_max orders (262,144
// by default), whose copy in one hold kept every session's answers back for
// 70 ms and more; the hold is bounded instead (docs/ARCHITECTURE.md,
// "OrderMassStatusRequest"): one hold takes the session's OrderIDs alone
// (about 20 times shorter than the copy), and the orders are then copied
// snapshotWindow at a time, each window under a hold of its own. Between
// two holds outbound applies the changes of other answers, so each order
// is given as it was when its window was copied: an order that ended
// before is left out (its end was handed to the session before), one that
// traded shows the trade. An order entered after the first hold is not
// given: the session's own orders after the request are answered after it.
func (v *openOrders) snapshot(session uint16, instrumentID uint32, account []byte) []openOrder {
	ids := v.idsOf(session)
	slices.Sort(ids)
	var out []openOrder
	if instrumentID == 0 && len(account) == 0 {
		out = make([]openOrder, 0, len(ids))
	}
	for len(ids) > 0 {
		n := min(len(ids), snapshotWindow)
		out = v.copyWindow(out, session, ids[:n], instrumentID, account)
		ids = ids[n:]
		if v.betweenWindows != nil {
			v.betweenWindows()
		}
	}
	return out
}

// snapshotWindow is how many orders one hold of mu copies for a mass
// status: about 0.1 ms of copying (docs/benchmarks.md, "Other settings
// measured and left").
const snapshotWindow = 1024

// idsOf returns the OrderIDs of a session's open orders, in no order.
func (v *openOrders) idsOf(session uint16) []uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	orders := v.bySession[session]
	ids := make([]uint64, 0, len(orders))
	for id := range orders {
		ids = append(ids, id)
	}
	return ids
}

// copyWindow appends to out the orders of ids still open in the session
// that pass the filters.
func (v *openOrders) copyWindow(out []openOrder, session uint16, ids []uint64, instrumentID uint32, account []byte) []openOrder {
	v.mu.Lock()
	defer v.mu.Unlock()
	orders := v.bySession[session]
	for _, id := range ids {
		o, ok := orders[id]
		if !ok || instrumentID != 0 && o.instrumentID != instrumentID || len(account) > 0 && string(o.Account()) != string(account) {
			continue
		}
		out = append(out, o)
	}
	return out
}

// find returns the session's open order with that OrderID, or with that
// ClOrdID when orderID is 0 (of orders that share it, the one given it
// last: clOrdIndex).
func (v *openOrders) find(session uint16, orderID uint64, clOrdID []byte) (openOrder, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if orderID == 0 {
		var ok bool
		if orderID, ok = v.byClOrdID[session].find(clOrdID); !ok {
			return openOrder{}, false
		}
	}
	o, ok := v.bySession[session][orderID]
	return o, ok
}

// findNamed returns the session's open order a cancel or replace names:
// by OrderID when it gives one, else by OrigClOrdID origClOrdID, its
// current ClOrdID or one a replace took from it (superseded, as the
// matcher's locate finds it too). superseded reports an origClOrdID that
// is not the order's current ClOrdID but one it had.
func (v *openOrders) findNamed(session uint16, orderID uint64, origClOrdID []byte) (o openOrder, superseded, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	x := &v.byClOrdID[session]
	if orderID == 0 {
		if orderID, ok = x.find(origClOrdID); !ok {
			if orderID, ok = x.findSuperseded(origClOrdID); !ok {
				return openOrder{}, false, false
			}
		}
	}
	if o, ok = v.bySession[session][orderID]; !ok {
		return openOrder{}, false, false
	}
	if len(origClOrdID) > 0 && string(origClOrdID) != string(o.ClOrdID()) {
		named, found := x.findSuperseded(origClOrdID)
		superseded = found && named == orderID
	}
	return o, superseded, true
}

// findEnded returns the OrderID and final status of the session's order
// ended today that a cancel or replace names: by OrderID when it gives
// one, else by OrigClOrdID origClOrdID, any ClOrdID the order had
// (findNamed finds the open orders).
func (v *openOrders) findEnded(session uint16, orderID uint64, origClOrdID []byte) (uint64, venue.OrdStatus, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if int(session) >= len(v.byClOrdID) {
		return 0, 0, false
	}
	x := &v.byClOrdID[session]
	if orderID == 0 {
		k, ok := keyOf(origClOrdID)
		if !ok {
			return 0, 0, false
		}
		if orderID, ok = x.ended[k]; !ok {
			return 0, 0, false
		}
	}
	status, ok := x.endedStatus[orderID]
	if !ok {
		return 0, 0, false
	}
	return orderID, status, true
}

// ClOrdIDs returns the ClOrdID each of a session's orders has in the view
// ("" for one it does not hold: ended, or not yet durable), for an
// operator's listing of the session's orders: one hold of the view's lock
// for all of them, so ids should be few (ops.OpenOrdersMaxListed).
func (g *Gateway) ClOrdIDs(idx uint16, ids []uint64) []string {
	v := g.open
	out := make([]string, len(ids))
	v.mu.Lock()
	defer v.mu.Unlock()
	if int(idx) >= len(v.bySession) {
		return out
	}
	orders := v.bySession[idx]
	for i, id := range ids {
		if o, ok := orders[id]; ok {
			out[i] = string(o.ClOrdID())
		}
	}
	return out
}

// HasDayOrders reports whether session idx may have a live DAY order, as
// the view has it: the orders seeded from the matcher's books at start and
// changed since by the durable commands' events. A session that has not
// logged on since the start entered none since, so the view has all its
// orders (or more: one whose end is not durable yet); a view that ever
// refused an insert says true.
func (g *Gateway) HasDayOrders(idx uint16) bool {
	v := g.open
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.overflowed {
		return true
	}
	if int(idx) >= len(v.bySession) {
		return false
	}
	for _, o := range v.bySession[idx] {
		if o.tif == venue.TimeInForceDay {
			return true
		}
	}
	return false
}

// Seed enters the orders resting in the matcher's books (after replay,
// before the matcher runs) into the open-order view.
func (g *Gateway) Seed(orders []core.OrderView) {
	if refused := g.open.seed(orders); refused > 0 {
		g.log.Error("open-order view full at start-up: mass status will miss orders", "refused", refused, "max", g.open.max)
	}
}

// SeedSuperseded enters the ClOrdIDs replaces took from the orders Seed
// entered (core.Matcher.SupersededClOrdIDs), so that a cancel or replace
// the gateway refuses naming one is answered with its order after a
// restart too.
func (g *Gateway) SeedSuperseded(ids []core.SupersededClOrdID) { g.open.seedSuperseded(ids) }

// SeedEnded enters the ClOrdIDs of the orders ended since the last end of
// day (core.Matcher.EndedClOrdIDs), so that a cancel or replace the
// gateway refuses naming one is answered with its order after a restart
// too.
func (g *Gateway) SeedEnded(ids []core.EndedClOrdID) { g.open.seedEnded(ids) }

func (v *openOrders) seedEnded(ids []core.EndedClOrdID) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range ids {
		id := &ids[i]
		if int(id.SessionIdx) >= len(v.bySession) {
			continue
		}
		if k, ok := keyOf([]byte(id.ClOrdID)); ok {
			v.rememberEnded(&v.byClOrdID[id.SessionIdx], k, id.OrderID, id.OrdStatus)
		}
	}
}

func (v *openOrders) seedSuperseded(ids []core.SupersededClOrdID) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range ids {
		id := &ids[i]
		if int(id.SessionIdx) >= len(v.bySession) {
			continue
		}
		if _, open := v.bySession[id.SessionIdx][id.OrderID]; !open {
			continue
		}
		if k, ok := keyOf([]byte(id.ClOrdID)); ok {
			v.byClOrdID[id.SessionIdx].supersede(k, id.OrderID)
		}
	}
}

func (v *openOrders) seed(orders []core.OrderView) (refused int) {
	changes := make([]openChange, 0, len(orders))
	for i := range orders {
		ov := &orders[i]
		o := openOrder{orderID: ov.OrderID, instrumentID: ov.InstrumentID, side: ov.Side, ordType: ov.OrdType,
			tif: ov.TimeInForce, postOnly: ov.Flags.Has(venue.OrderFlagsPostOnly), priceTicks: ov.PriceTicks,
			qty: ov.Qty, leavesQty: ov.LeavesQty, cumQty: ov.CumQty, cumNotionalTicks: ov.CumNotionalTicks,
			expireTimeNs: ov.ExpireTimeNs, stopPxTicks: ov.StopPxTicks, maxFloorQty: ov.MaxFloorQty}
		o.setClOrdID([]byte(ov.ClOrdID))
		o.setAccount([]byte(ov.Account))
		changes = append(changes, openChange{session: ov.SessionIdx, order: o})
	}
	return v.apply(changes)
}

// OpenView is an open-order view kept outside a gateway: a cluster's
// follower applies to it the events of every committed command, as the
// gateway does on the leader, so that at promotion the new leader's
// gateway takes it ready (Config.OpenView) instead of walking its books
// (docs/benchmarks.md, "failover"). It holds at most max orders, like the
// gateway's own view; past that an insert is counted and dropped.
type OpenView struct {
	v       *openOrders
	changes []openChange
	refused int64
}

// NewOpenView is an empty view of sessions sessions holding at most max
// orders (DefaultOpenOrdersMax when 0) and endedMax ClOrdIDs of ended
// orders (Config.EndedClOrdIDsMax; DefaultEndedClOrdIDsMax when 0).
func NewOpenView(sessions, max, endedMax int) *OpenView {
	if max <= 0 {
		max = DefaultOpenOrdersMax
	}
	v := newOpenOrders(sessions, max)
	if endedMax > 0 {
		v.endedMax = endedMax
	}
	return &OpenView{v: v, changes: make([]openChange, 0, 8)}
}

// Seed enters the orders of a matcher's books (as Gateway.Seed does).
func (w *OpenView) Seed(orders []core.OrderView) { w.refused += int64(w.v.seed(orders)) }

// SeedSuperseded enters the ClOrdIDs replaces took from them (as
// Gateway.SeedSuperseded does).
func (w *OpenView) SeedSuperseded(ids []core.SupersededClOrdID) { w.v.seedSuperseded(ids) }

// SeedEnded enters the ClOrdIDs of the orders ended today (as
// Gateway.SeedEnded does).
func (w *OpenView) SeedEnded(ids []core.EndedClOrdID) { w.v.seedEnded(ids) }

// Event applies one event of a committed command.
func (w *OpenView) Event(ev []byte) {
	w.changes = appendOpenChange(w.changes[:0], ev)
	if len(w.changes) > 0 {
		w.refused += int64(w.v.apply(w.changes))
	}
}

// Refused is how many inserts the bound refused.
func (w *OpenView) Refused() int64 { return w.refused }

// Diff describes the first difference between two views ("" when they
// hold the same orders with the same fields): the check that a view kept
// from events equals one seeded from the books.
func (w *OpenView) Diff(o *OpenView) string {
	a, b := w.v, o.v
	if len(a.bySession) != len(b.bySession) {
		return fmt.Sprintf("%d/%d sessions", len(a.bySession), len(b.bySession))
	}
	for s := range a.bySession {
		for id, x := range a.bySession[s] {
			if y, ok := b.bySession[s][id]; !ok || x != y {
				return fmt.Sprintf("session %d order %d: %+v / %+v (present %v)", s, id, x, y, ok)
			}
		}
		for id, y := range b.bySession[s] {
			if _, ok := a.bySession[s][id]; !ok {
				return fmt.Sprintf("session %d order %d: absent / %+v", s, id, y)
			}
		}
	}
	if a.n != b.n {
		return fmt.Sprintf("%d/%d orders counted", a.n, b.n)
	}
	for s := range a.byClOrdID {
		x, y := &a.byClOrdID[s], &b.byClOrdID[s]
		if len(x.superseded) != len(y.superseded) {
			return fmt.Sprintf("session %d: %d/%d superseded ClOrdIDs", s, len(x.superseded), len(y.superseded))
		}
		for k, l := range x.superseded {
			if m, ok := y.superseded[k]; !ok || m != l {
				return fmt.Sprintf("session %d superseded ClOrdID %q: %+v / %+v (present %v)", s, k.b[:k.n], l, m, ok)
			}
		}
		if len(x.ended) != len(y.ended) || len(x.endedStatus) != len(y.endedStatus) {
			return fmt.Sprintf("session %d: %d/%d ended ClOrdIDs of %d/%d orders", s, len(x.ended), len(y.ended), len(x.endedStatus), len(y.endedStatus))
		}
		for k, id := range x.ended {
			if jd, ok := y.ended[k]; !ok || jd != id || x.endedStatus[id] != y.endedStatus[id] {
				return fmt.Sprintf("session %d ended ClOrdID %q: order %d %v / %d %v (present %v)", s, k.b[:k.n],
					id, x.endedStatus[id], jd, y.endedStatus[jd], ok)
			}
		}
	}
	return ""
}

// appendOpenChange appends what one event changes in an open-order view
// (nothing for an event that opens, changes or ends no order).
func appendOpenChange(out []openChange, ev []byte) []openChange {
	tid, err := venue.TemplateIDOf(ev, 0)
	if err != nil {
		return out
	}
	switch tid {
	case venue.OrderAcceptedTemplateID:
		var e venue.OrderAccepted
		if e.WrapDecode(ev, 0) == nil {
			out = appendAccepted(out, &e)
		}
	case venue.FillTemplateID:
		var e venue.Fill
		if e.WrapDecode(ev, 0) == nil {
			out = appendFilled(out, &e)
		}
	case venue.OrderCancelledTemplateID:
		var e venue.OrderCancelled
		if e.WrapDecode(ev, 0) == nil {
			out = appendCancelled(out, &e)
		}
	case venue.OrderReplacedTemplateID:
		var e venue.OrderReplaced
		if e.WrapDecode(ev, 0) == nil {
			out = appendReplaced(out, &e)
		}
	case venue.OperatorResultTemplateID:
		var e venue.OperatorResult
		if e.WrapDecode(ev, 0) == nil {
			out = appendDayEnded(out, &e)
		}
	}
	return out
}

// Changes from events, on outbound's goroutine (dispatch): each is held in
// g.openHeld until handOver applies it with the answers.

func (g *Gateway) openAccepted(e *venue.OrderAccepted)   { g.openHeld = appendAccepted(g.openHeld, e) }
func (g *Gateway) openFilled(e *venue.Fill)              { g.openHeld = appendFilled(g.openHeld, e) }
func (g *Gateway) openReplaced(e *venue.OrderReplaced)   { g.openHeld = appendReplaced(g.openHeld, e) }
func (g *Gateway) openCancelled(e *venue.OrderCancelled) { g.openHeld = appendCancelled(g.openHeld, e) }
func (g *Gateway) openDayEnded(e *venue.OperatorResult)  { g.openHeld = appendDayEnded(g.openHeld, e) }

func appendAccepted(out []openChange, e *venue.OrderAccepted) []openChange {
	if e.LeavesQty() <= 0 {
		return out
	}
	o := openOrder{orderID: e.OrderID(), instrumentID: e.InstrumentID(), side: e.Side(), ordType: e.OrdType(),
		tif: e.TimeInForce(), postOnly: e.Flags().Has(venue.OrderFlagsPostOnly), priceTicks: e.PriceTicks(),
		qty: e.Qty(), leavesQty: e.LeavesQty(), expireTimeNs: e.ExpireTimeNs(), stopPxTicks: e.StopPxTicks(),
		maxFloorQty: e.MaxFloorQty()}
	o.setClOrdID(e.ClOrdID())
	o.setAccount(e.Account())
	return append(out, openChange{session: e.SessionIdx(), order: o})
}

func appendFilled(out []openChange, e *venue.Fill) []openChange {
	if e.LeavesQty() <= 0 {
		return appendEnded(out, e.SessionIdx(), e.OrderID(), e.OrdStatus(), e.ClOrdID(), nil)
	}
	o := openOrder{orderID: e.OrderID(), instrumentID: e.InstrumentID(), side: e.Side(), ordType: e.OrdType(),
		tif: e.TimeInForce(), priceTicks: e.PriceTicks(), qty: e.Qty(), leavesQty: e.LeavesQty(),
		cumQty: e.CumQty(), cumNotionalTicks: e.CumNotionalTicks()}
	o.setClOrdID(e.ClOrdID())
	o.setAccount(e.Account())
	return append(out, openChange{session: e.SessionIdx(), kind: openFilled, order: o})
}

func appendReplaced(out []openChange, e *venue.OrderReplaced) []openChange {
	o := openOrder{orderID: e.OrderID(), instrumentID: e.InstrumentID(), side: e.Side(), ordType: e.OrdType(),
		tif: e.TimeInForce(), priceTicks: e.PriceTicks(), qty: e.Qty(), leavesQty: e.LeavesQty(),
		cumQty: e.CumQty(), cumNotionalTicks: e.CumNotionalTicks(), expireTimeNs: e.ExpireTimeNs(),
		stopPxTicks: e.StopPxTicks(), maxFloorQty: e.MaxFloorQty()}
	o.setClOrdID(e.ClOrdID())
	o.setAccount(e.Account())
	return append(out, openChange{session: e.SessionIdx(), kind: openReplaced, order: o})
}

func appendCancelled(out []openChange, e *venue.OrderCancelled) []openChange {
	return appendEnded(out, e.SessionIdx(), e.OrderID(), e.OrdStatus(), e.ClOrdID(), e.OrigClOrdID())
}

// appendEnded appends the end of order orderID with status, by an event
// naming ClOrdIDs clOrdID and origClOrdID.
func appendEnded(out []openChange, session uint16, orderID uint64, status venue.OrdStatus, clOrdID, origClOrdID []byte) []openChange {
	c := openChange{session: session, kind: openEnded, order: openOrder{orderID: orderID}, status: status}
	c.order.setClOrdID(clOrdID)
	c.origLen = uint8(copy(c.orig[:], origClOrdID))
	return append(out, c)
}

// appendDayEnded appends the end of a trading day for an OperatorResult of
// an end of day that was done.
func appendDayEnded(out []openChange, e *venue.OperatorResult) []openChange {
	if e.Action() != venue.OperatorActionTypeEndOfDay || e.Reason() != venue.RejectReasonNone {
		return out
	}
	return append(out, openChange{kind: openDayEnded})
}
