package gateway

import (
	"sync"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The gateway's view of open orders, for OrderMassStatusRequest (AF).
//
// Outbound sees every event that opens, changes or ends an order, so it
// keeps, per session, the state an ExecutionReport of each open order needs;
// the matcher is not asked (it has no locks, and a journaled status command
// per order would cost a command per open order). Changes are applied when
// their answers are handed over, after their commands are durable, so a
// mass status never reports an order state a client could not have been
// told yet. At start-up the view is seeded from the matcher's books after
// replay (Seed), before the matcher runs. See "OrderMassStatusRequest" in
// docs/ARCHITECTURE.md.

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
}

// openChangeKind says which of a change's fields are news: a Fill carries
// no ExpireTime or ExecInst and a replace no ExecInst, so those keep what
// the order had.
type openChangeKind uint8

const (
	openEntered openChangeKind = iota
	openFilled
	openReplaced
	openEnded
)

// openOrders is the view: guarded by mu (outbound writes, sessions read).
// It mirrors the matcher's books, so it holds at most the matcher's
// OrdersMax orders (Config.OpenOrdersMax); past that bound a change is
// counted and dropped, never grown into.
type openOrders struct {
	mu        sync.Mutex
	bySession []map[uint64]openOrder
	n         int
	max       int
}

func newOpenOrders(sessions, max int) *openOrders {
	v := &openOrders{bySession: make([]map[uint64]openOrder, sessions), max: max}
	for i := range v.bySession {
		v.bySession[i] = map[uint64]openOrder{}
	}
	return v
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
		m := v.bySession[c.session]
		old, had := m[c.order.orderID]
		switch {
		case c.kind == openEnded:
			if had {
				delete(m, c.order.orderID)
				v.n--
			}
		case had:
			o := c.order
			if c.kind != openEntered {
				o.postOnly = old.postOnly
			}
			if c.kind == openFilled {
				o.expireTimeNs = old.expireTimeNs
			}
			m[c.order.orderID] = o
		case v.n >= v.max:
			refused++
		default:
			m[c.order.orderID] = c.order
			v.n++
		}
	}
	return refused
}

// snapshot returns a session's open orders that pass the filters (instrument
// 0 and an empty account match any), ordered by OrderID (the order they
// were entered in).
func (v *openOrders) snapshot(session uint16, instrumentID uint32, account []byte) []openOrder {
	v.mu.Lock()
	var out []openOrder
	for _, o := range v.bySession[session] {
		if instrumentID != 0 && o.instrumentID != instrumentID {
			continue
		}
		if len(account) > 0 && string(o.Account()) != string(account) {
			continue
		}
		out = append(out, o)
	}
	v.mu.Unlock()
	sortByOrderID(out)
	return out
}

func sortByOrderID(list []openOrder) {
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && list[j].orderID < list[j-1].orderID; j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
}

// Seed enters the orders resting in the matcher's books (after replay,
// before the matcher runs) into the open-order view.
func (g *Gateway) Seed(orders []core.OrderView) {
	changes := make([]openChange, 0, len(orders))
	for i := range orders {
		ov := &orders[i]
		o := openOrder{orderID: ov.OrderID, instrumentID: ov.InstrumentID, side: ov.Side, ordType: ov.OrdType,
			tif: ov.TimeInForce, postOnly: ov.Flags.Has(venue.OrderFlagsPostOnly), priceTicks: ov.PriceTicks,
			qty: ov.Qty, leavesQty: ov.LeavesQty, cumQty: ov.CumQty, cumNotionalTicks: ov.CumNotionalTicks,
			expireTimeNs: ov.ExpireTimeNs}
		o.setClOrdID([]byte(ov.ClOrdID))
		o.setAccount([]byte(ov.Account))
		changes = append(changes, openChange{session: ov.SessionIdx, order: o})
	}
	if refused := g.open.apply(changes); refused > 0 {
		g.log.Error("open-order view full at start-up: mass status will miss orders", "refused", refused, "max", g.open.max)
	}
}

// Changes from events, on outbound's goroutine (dispatch): each is held in
// g.openHeld until handOver applies it with the answers.

func (g *Gateway) openAccepted(e *venue.OrderAccepted) {
	if e.LeavesQty() <= 0 {
		return
	}
	o := openOrder{orderID: e.OrderID(), instrumentID: e.InstrumentID(), side: e.Side(), ordType: e.OrdType(),
		tif: e.TimeInForce(), postOnly: e.Flags().Has(venue.OrderFlagsPostOnly), priceTicks: e.PriceTicks(),
		qty: e.Qty(), leavesQty: e.LeavesQty(), expireTimeNs: e.ExpireTimeNs()}
	o.setClOrdID(e.ClOrdID())
	o.setAccount(e.Account())
	g.openHeld = append(g.openHeld, openChange{session: e.SessionIdx(), order: o})
}

func (g *Gateway) openFilled(e *venue.Fill) {
	if e.LeavesQty() <= 0 {
		g.openRemoved(e.SessionIdx(), e.OrderID())
		return
	}
	o := openOrder{orderID: e.OrderID(), instrumentID: e.InstrumentID(), side: e.Side(), ordType: e.OrdType(),
		tif: e.TimeInForce(), priceTicks: e.PriceTicks(), qty: e.Qty(), leavesQty: e.LeavesQty(),
		cumQty: e.CumQty(), cumNotionalTicks: e.CumNotionalTicks()}
	o.setClOrdID(e.ClOrdID())
	o.setAccount(e.Account())
	g.openHeld = append(g.openHeld, openChange{session: e.SessionIdx(), kind: openFilled, order: o})
}

func (g *Gateway) openReplaced(e *venue.OrderReplaced) {
	o := openOrder{orderID: e.OrderID(), instrumentID: e.InstrumentID(), side: e.Side(), ordType: e.OrdType(),
		tif: e.TimeInForce(), priceTicks: e.PriceTicks(), qty: e.Qty(), leavesQty: e.LeavesQty(),
		cumQty: e.CumQty(), cumNotionalTicks: e.CumNotionalTicks(), expireTimeNs: e.ExpireTimeNs()}
	o.setClOrdID(e.ClOrdID())
	o.setAccount(e.Account())
	g.openHeld = append(g.openHeld, openChange{session: e.SessionIdx(), kind: openReplaced, order: o})
}

func (g *Gateway) openRemoved(session uint16, orderID uint64) {
	g.openHeld = append(g.openHeld, openChange{session: session, kind: openEnded, order: openOrder{orderID: orderID}})
}
