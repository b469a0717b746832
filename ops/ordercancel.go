package ops

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// orderCancelRequest is the body of POST /v1/orders/cancel: one order, by
// its OrderID (FIX 37, optionally only in one session) or by a ClOrdID
// (FIX 11) it had in its session, and why.
type orderCancelRequest struct {
	Reason  string `json:"reason"`
	OrderID string `json:"order_id,omitempty"`
	Session string `json:"session,omitempty"`
	ClOrdID string `json:"cl_ord_id,omitempty"`
}

// CancelledOrder names the order an operator's cancel found (ActionResponse).
type CancelledOrder struct {
	OrderID    string `json:"order_id"`
	Session    string `json:"session"`
	Instrument string `json:"instrument"`
}

// OrderCancel is one operator's cancel of one order (CancelOrder): by
// OrderID (Session AnySession: in any session), or by ClOrdID in Session.
type OrderCancel struct {
	OrderID  uint64
	Session  uint16
	ClOrdID  string
	Operator string
	Reason   string
}

// CancelOrder publishes an OperatorCancelOrder, waits until it is applied
// and durable, and returns its result: the order's owner gets an
// unsolicited cancel (reason Operator). A refused cancel (Result.Reason
// UnknownOrder, UnknownSession or TooLateToCancel) changed nothing; it is
// journaled all the same.
func (o *Ops) CancelOrder(c OrderCancel) (Result, error) {
	r, _, err := o.submitAction(func(slot []byte, cmdSeq uint64) error {
		var m venue.OperatorCancelOrder
		_ = m.WrapEncode(slot, 0)
		m.SetSeq(cmdSeq)
		m.SetTimestampNs(o.stampNs())
		m.SetFilterSessionIdx(c.Session)
		m.SetOrderID(c.OrderID)
		// Lengths were checked by the caller (handleOrderCancel).
		if err := m.SetClOrdIDString(c.ClOrdID); err != nil {
			return err
		}
		_ = m.SetOperatorString(c.Operator)
		_ = m.SetReasonString(c.Reason)
		return nil
	}, false, venue.OperatorActionTypeCancelOrder, c.Operator, c.Reason)
	return r, err
}

// handleOrderCancel is POST /v1/orders/cancel.
func (o *Ops) handleOrderCancel(w http.ResponseWriter, r *http.Request) {
	var req orderCancelRequest
	if !o.decodeBody(w, r, &req) || !checkReason(w, req.Reason) {
		return
	}
	c := OrderCancel{Session: AnySession, ClOrdID: req.ClOrdID, Operator: operatorOf(r), Reason: req.Reason}
	switch {
	case req.OrderID != "" && req.ClOrdID != "":
		refuse(w, http.StatusBadRequest, "bad_body", "name the order by order_id, or by session and cl_ord_id, not both")
		return
	case req.OrderID != "":
		id, err := strconv.ParseUint(req.OrderID, 10, 64)
		if err != nil || id == 0 {
			refuse(w, http.StatusBadRequest, "bad_order_id", "order_id must be an OrderID (37) the venue gave: a decimal number above 0")
			return
		}
		c.OrderID = id
	case req.ClOrdID != "":
		if req.Session == "" {
			refuse(w, http.StatusBadRequest, "no_session", "a cl_ord_id is a session's: name the session (its CompID)")
			return
		}
		if len(req.ClOrdID) > venue.ClOrdIDLength || strings.IndexFunc(req.ClOrdID, nonPrintable) >= 0 {
			refuse(w, http.StatusBadRequest, "bad_cl_ord_id", "cl_ord_id must be at most %d printable ASCII characters", venue.ClOrdIDLength)
			return
		}
	default:
		refuse(w, http.StatusBadRequest, "no_order", "name the order: order_id, or session and cl_ord_id")
		return
	}
	if req.Session != "" {
		s, ok := o.orderSession(w, req.Session)
		if !ok {
			return
		}
		c.Session = s.Idx
	}
	res, err := o.CancelOrder(c)
	switch {
	case err != nil:
		o.answer(w, c.Operator, res, err, nil)
	case res.Reason == venue.RejectReasonNone:
		writeJSON(w, http.StatusOK, ActionResponse{Seq: res.Seq, Action: res.Action.String(), Operator: c.Operator, Result: "done",
			Count: res.Count, Order: o.cancelledOrder(res)})
	case res.Reason == venue.RejectReasonTooLateToCancel:
		writeJSON(w, http.StatusConflict, apiError{Error: "the order has ended (filled, cancelled or expired): nothing to cancel (nothing changed)",
			Code: "too_late", Seq: res.Seq})
	case res.Reason == venue.RejectReasonUnknownOrder:
		writeJSON(w, http.StatusNotFound, apiError{Error: "no such order: none with that order_id (in that session), or no order of the session " +
			"had that cl_ord_id today (nothing changed)", Code: "unknown_order", Seq: res.Seq})
	default:
		o.answer(w, c.Operator, res, nil, nil)
	}
}

// orderSession finds a session that enters orders, whose orders a cancel
// may name; otherwise it answers 404 (unknown) or 400 (a drop-copy
// session) and ok is false.
func (o *Ops) orderSession(w http.ResponseWriter, compID string) (s Session, ok bool) {
	if s, ok = o.byCompID[compID]; !ok {
		refuse(w, http.StatusNotFound, "unknown_session", "unknown session %q", compID)
		return s, false
	}
	if s.DropCopy {
		refuse(w, http.StatusBadRequest, "drop_copy_session", "session %s is a drop-copy session: it has no orders", compID)
		return s, false
	}
	return s, true
}

// cancelledOrder names the order of a CancelOrder's result.
func (o *Ops) cancelledOrder(r Result) *CancelledOrder {
	c := &CancelledOrder{OrderID: strconv.FormatUint(r.OrderID, 10), Instrument: strconv.FormatUint(uint64(r.Instrument), 10)}
	for _, s := range o.cfg.Sessions {
		if s.Idx == r.Session {
			c.Session = s.CompID
		}
	}
	if in, ok := o.instrumentByID(r.Instrument); ok {
		c.Instrument = in.Symbol
	}
	return c
}

// instrumentByID finds a configured or added instrument by its id.
func (o *Ops) instrumentByID(id uint32) (config.Instrument, bool) {
	for _, in := range o.cfg.Instruments {
		if in.ID == id {
			return in, true
		}
	}
	for _, in := range o.monitor.addedInstruments() {
		if in.ID == id {
			return in, true
		}
	}
	return config.Instrument{}, false
}

// OpenOrdersMaxListed bounds the orders GET /v1/sessions/{comp_id}/orders
// lists (its limit's default and largest value): the first by OrderID.
const OpenOrdersMaxListed = 1000

// OpenOrder is one row of GET /v1/sessions/{comp_id}/orders.
type OpenOrder struct {
	OrderID string `json:"order_id"`
	// ClOrdID is the order's current ClOrdID as the FIX gateway knows it:
	// absent for an order whose command is not durable yet, or that ended
	// since the listing was taken.
	ClOrdID    string `json:"cl_ord_id,omitempty"`
	Instrument string `json:"instrument"`
	Side       string `json:"side"`            // buy or sell
	Price      string `json:"price,omitempty"` // none: a market order waiting for an uncross, or a stop order
	LeavesQty  int64  `json:"leaves_qty"`
	// StopWaiting: a stop order waiting for its trigger, off the book.
	StopWaiting bool `json:"stop_waiting,omitempty"`
}

// SessionOrders is the answer of GET /v1/sessions/{comp_id}/orders.
type SessionOrders struct {
	Session string      `json:"session"`
	Total   int         `json:"total"` // the session's open orders; Orders lists the first of them
	Orders  []OpenOrder `json:"orders"`
}

// handleSessionOrders is GET /v1/sessions/{comp_id}/orders[?limit=N]: the
// session's open orders by OrderID (the first N, OpenOrdersMaxListed by
// default and at most), from the monitor's view, which the events keep.
func (o *Ops) handleSessionOrders(w http.ResponseWriter, r *http.Request) {
	s, ok := o.byCompID[r.PathValue("comp_id")]
	if !ok {
		refuse(w, http.StatusNotFound, "unknown_session", "unknown session %q", r.PathValue("comp_id"))
		return
	}
	limit := OpenOrdersMaxListed
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > OpenOrdersMaxListed {
			refuse(w, http.StatusBadRequest, "bad_limit", "limit must be a whole number from 1 to %d", OpenOrdersMaxListed)
			return
		}
		limit = n
	}
	views, total := o.monitor.OpenOrdersOf(s.Idx, limit)
	out := SessionOrders{Session: s.CompID, Total: total, Orders: make([]OpenOrder, 0, len(views))}
	clOrdIDs := make([]string, len(views))
	if o.cfg.SessionControl != nil {
		ids := make([]uint64, len(views))
		for i, v := range views {
			ids[i] = v.OrderID
		}
		clOrdIDs = o.cfg.SessionControl.ClOrdIDs(s.Idx, ids)
	}
	// Each instrument is looked up once: the look-up walks the instruments
	// and copies the added ones under the monitor's lock.
	instruments := map[uint32]*config.Instrument{} // nil: not found
	for i, v := range views {
		row := OpenOrder{OrderID: strconv.FormatUint(v.OrderID, 10), ClOrdID: clOrdIDs[i], Instrument: strconv.FormatUint(uint64(v.InstrumentID), 10),
			Side: strings.ToLower(v.Side.String()), LeavesQty: v.LeavesQty, StopWaiting: v.StopWaiting}
		in, seen := instruments[v.InstrumentID]
		if !seen {
			if c, ok := o.instrumentByID(v.InstrumentID); ok {
				in = &c
			}
			instruments[v.InstrumentID] = in
		}
		if in != nil {
			row.Instrument = in.Symbol
			if v.PriceTicks != 0 {
				row.Price = string(decimal.FormatTicks(nil, v.PriceTicks, in.Tick))
			}
		}
		out.Orders = append(out.Orders, row)
	}
	writeJSON(w, http.StatusOK, out)
}
