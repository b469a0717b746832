package core

import (
	"bytes"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// massCancelAnySession in MassCancel.filterSessionIdx matches every session.
const massCancelAnySession = 0xFFFF

// massCancel cancels every live order that matches all the filters (session,
// instrument, side, account; each may be "any"), in OrderID order, with
// reason MassCancel, then reports the count. A filter naming an unknown
// instrument or an invalid side is refused in the report and cancels nothing.
// The matcher does not decide who may cancel whose orders: the gateway sets
// filterSessionIdx for sessions that may only cancel their own.
func (m *Matcher) massCancel(c *venue.MassCancel) {
	instrumentID, side, account := c.InstrumentID(), c.Side(), c.Account()
	if instrumentID != 0 {
		if _, ok := m.instrByID.lookup(instrumentID); !ok {
			m.emitMassCancelReport(c, venue.RejectReasonUnknownInstrument, 0)
			return
		}
	}
	if side != 0 && !venue.Side(side).Valid() {
		m.emitMassCancelReport(c, venue.RejectReasonUnsupportedOrderCharacteristic, 0)
		return
	}
	cancelled := m.cancelMatching(c.FilterSessionIdx(), instrumentID, side, account)
	m.emitMassCancelReport(c, venue.RejectReasonNone, cancelled)
}

// cancelMatching cancels, with reason MassCancel and in OrderID order, every
// live order that matches all the filters (filterSession massCancelAnySession,
// instrumentID 0, side 0 and an empty account match anything), and returns
// how many it cancelled. The filters must have been checked.
func (m *Matcher) cancelMatching(filterSession uint16, instrumentID uint32, side uint8, account []byte) uint32 {
	var oi orderIdx
	switch {
	case filterSession == massCancelAnySession:
		oi = m.all.head
	case int(filterSession) < len(m.sessions):
		oi = m.sessions[filterSession].head
	default:
		oi = noOrder // no order can belong to a session beyond SessionsMax
	}
	bySession := filterSession != massCancelAnySession
	var cancelled uint32
	for oi != noOrder {
		o := &m.pool.orders[oi]
		next := o.lists[listAll].next
		if bySession {
			next = o.lists[listSession].next
		}
		if (instrumentID == 0 || m.instrumentOf(o).id == instrumentID) &&
			(side == 0 || uint8(o.side) == side) &&
			(len(account) == 0 || bytes.Equal(account, trimNUL(o.account[:]))) {
			m.cancelQuiet(oi, venue.CancelReasonMassCancel, venue.OrdStatusCancelled)
			cancelled++
		}
		oi = next
	}
	return cancelled
}

// cancelSessionDayOrders is cancel-on-disconnect: the session's DAY orders
// are cancelled (reason Disconnect), its GTC and GTD orders stay, as on CME.
func (m *Matcher) cancelSessionDayOrders(session uint16) {
	for oi := m.sessions[session].head; oi != noOrder; {
		o := &m.pool.orders[oi]
		next := o.lists[listSession].next
		if o.tif == venue.TimeInForceDay {
			m.cancelQuiet(oi, venue.CancelReasonDisconnect, venue.OrdStatusCancelled)
		}
		oi = next
	}
}
