package core

import (
	"math"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The reference model's operator commands, written from the package
// documentation ("Operator commands"): each changes nothing when it names
// something unknown or asks for nothing to change, and is answered by one
// OperatorResult after the events it caused.

func (m *refModel) operator(c *venue.OperatorCommand) {
	reason, count := venue.RejectReasonNone, uint32(0)
	switch c.Action() {
	case venue.OperatorActionTypeSetTradingStatus:
		reason, count = m.operatorStatus(c.InstrumentID(), c.Status(), false, c.Flags().Has(venue.OperatorFlagsUncrossBetweenCalls))
	case venue.OperatorActionTypeSetPhaseStatus:
		reason, count = m.operatorStatus(c.InstrumentID(), c.Status(), true, c.Flags().Has(venue.OperatorFlagsUncrossBetweenCalls))
	case venue.OperatorActionTypeEndOfDay:
		for _, o := range m.live {
			if refDayLimited(o.tif) {
				count++
			}
		}
		m.endOfDay()
	case venue.OperatorActionTypeMassCancel:
		_, known := m.instruments[c.InstrumentID()]
		switch {
		case c.InstrumentID() != 0 && !known:
			reason = venue.RejectReasonUnknownInstrument
		case c.FilterSessionIdx() != 0xFFFF && int(c.FilterSessionIdx()) >= m.cfg.SessionsMax:
			reason = venue.RejectReasonUnknownSession
		default:
			count = m.cancelWhere(c.FilterSessionIdx(), c.InstrumentID(), 0, string(c.Account()))
		}
	case venue.OperatorActionTypeSetPriceBand:
		reason = m.operatorBand(c.InstrumentID(), c.RefPriceTicks(), c.BandPercent())
		if reason == venue.RejectReasonNone {
			count = 1
		}
	case venue.OperatorActionTypeSessionLogout, venue.OperatorActionTypeSessionDisable, venue.OperatorActionTypeSessionEnable:
		if int(c.FilterSessionIdx()) >= m.cfg.SessionsMax {
			reason = venue.RejectReasonUnknownSession
		}
	default:
		reason = venue.RejectReasonUnsupportedOrderCharacteristic
	}
	var e venue.OperatorResult
	m.begin(&e)
	e.SetAction(c.Action())
	e.SetReason(reason)
	e.SetFilterSessionIdx(c.FilterSessionIdx())
	e.SetInstrumentID(c.InstrumentID())
	e.SetCount(count)
	_ = e.SetOperator(c.Operator())
	if c.Action() == venue.OperatorActionTypeSetPriceBand && reason == venue.RejectReasonNone {
		e.SetRefPriceTicks(c.RefPriceTicks())
		e.SetBandPercent(c.BandPercent())
	}
	m.sink.Commit()
}

// operatorCancel is an operator's cancel of one order: by OrderID (in any
// session, 0xFFFF, or the one named) or by any ClOrdID it had in its
// session. A live order is cancelled (reason Operator); one that ended is
// too late; the result names the order found, its session and instrument.
func (m *refModel) operatorCancel(c *venue.OperatorCancelOrder) {
	session := c.FilterSessionIdx()
	reason := venue.RejectReasonNone
	var rec *refRecord
	switch {
	case c.OrderID() != 0:
		if key, ok := m.current[c.OrderID()]; ok {
			if r := m.records[key]; r != nil && (session == 0xFFFF || r.session == session) {
				rec = r
			}
		}
	case len(c.ClOrdID()) > 0:
		if int(session) >= m.cfg.SessionsMax {
			reason = venue.RejectReasonUnknownSession
			break
		}
		rec = m.records[refKey{session, string(c.ClOrdID())}]
		if rec != nil && !rec.live {
			if cur := m.records[m.current[rec.orderID]]; cur != nil {
				rec = cur
			}
		}
	}
	var count uint32
	switch {
	case reason != venue.RejectReasonNone:
	case rec == nil:
		reason = venue.RejectReasonUnknownOrder
	case !rec.live:
		reason = venue.RejectReasonTooLateToCancel
	default:
		o := m.live[rec.orderID]
		m.cancelLive(o, venue.CancelReasonOperator, venue.OrdStatusCancelled, o.clOrdID, "")
		count = 1
	}
	var e venue.OperatorResult
	m.begin(&e)
	e.SetAction(venue.OperatorActionTypeCancelOrder)
	e.SetReason(reason)
	e.SetFilterSessionIdx(session)
	if rec != nil {
		e.SetFilterSessionIdx(rec.session)
		e.SetInstrumentID(rec.instrument)
		e.SetOrderID(rec.orderID)
	}
	e.SetCount(count)
	_ = e.SetOperator(c.Operator())
	m.sink.Commit()
}

// leastClOrdID is the least of the ClOrdIDs that name order orderID in its
// session (rec, its current record): its current one, or one a replace or
// a recorded cancel left. The least, so that a run is the same whatever
// order the map gives.
func (m *refModel) leastClOrdID(orderID uint64, rec *refRecord) string {
	least := rec.clOrdID
	for key, r := range m.records {
		if r.orderID == orderID && key.session == rec.session && key.clOrdID < least {
			least = key.clOrdID
		}
	}
	return least
}

// operatorStatus moves one instrument, or every one (id 0, in configuration
// order), to status; the status an instrument already has is no change,
// and a command that changes nothing is refused. A phase change
// (keepHalted) leaves a halted instrument halted; naming one is refused
// with InstrumentHalted.
func (m *refModel) operatorStatus(id uint32, status venue.TradingStatus, keepHalted, between bool) (venue.RejectReason, uint32) {
	if !status.Valid() {
		return venue.RejectReasonInvalidTransition, 0
	}
	in, ok := m.instruments[id]
	if id != 0 && !ok {
		return venue.RejectReasonUnknownInstrument, 0
	}
	if id != 0 && keepHalted && in.status == venue.TradingStatusHalted && status != venue.TradingStatusHalted {
		return venue.RejectReasonInstrumentHalted, 0
	}
	// A phase change leaves a volatility auction (or a call's extension)
	// that ends in that status to run: Closed after the closing call's
	// extension, else Open.
	endsIn := func(in *refInstrument) bool {
		end := venue.TradingStatusOpen
		if in.auction.phase == venue.TradingStatusClosingCall {
			end = venue.TradingStatusClosed
		}
		return in.status == venue.TradingStatusVolatilityAuction && status == end
	}
	var changed uint32
	for _, cfg := range m.cfg.Instruments {
		if in := m.instruments[cfg.ID]; (id == 0 || id == cfg.ID) && in.status != status &&
			!(keepHalted && (in.status == venue.TradingStatusHalted || endsIn(in))) {
			if !keepHalted || !m.extends(in, status) { // only a phase change extends a call
				m.setStatus(in, status, between)
			}
			changed++
		}
	}
	if changed == 0 {
		return venue.RejectReasonInvalidTransition, 0
	}
	return venue.RejectReasonNone, changed
}

// operatorBand moves an instrument's band to pct around ref: no wider than
// the configured band, max_qty at its top within the largest order notional, with the limit price of every resting order and
// waiting stop limit, and every stop order's stop price, inside it.
func (m *refModel) operatorBand(id uint32, ref, pct int64) venue.RejectReason {
	in, ok := m.instruments[id]
	if !ok {
		return venue.RejectReasonUnknownInstrument
	}
	if ref <= 0 || ref > math.MaxInt64/200 || pct <= 0 || pct >= 100 {
		return venue.RejectReasonInvalidPriceBand
	}
	edges := func(ref, pct int64) (int64, int64) { return (ref*(100-pct) + 99) / 100, ref * (100 + pct) / 100 }
	low, high := edges(ref, pct)
	cfgLow, cfgHigh := edges(in.cfg.RefPriceTicks, in.cfg.BandPercent)
	if low > high || high-low > cfgHigh-cfgLow || in.cfg.MaxQty > (math.MaxInt64/2-1)/high { // the largest order notional
		return venue.RejectReasonInvalidPriceBand
	}
	outside := func(px int64) bool { return px < low || px > high }
	for _, o := range m.live {
		rests := !o.queued && (!o.waiting || o.ordType == venue.OrdTypeStopLimit) // in the book, or will be once elected
		if o.instrument == id && ((rests && outside(o.price)) || (o.stopPx != 0 && !o.queued && outside(o.stopPx))) {
			return venue.RejectReasonOrdersOutsideBand
		}
	}
	in.low, in.high, in.ref = low, high, ref
	return venue.RejectReasonNone
}

// addInstrument answers an AddInstrument. Listing one is not modelled: the
// property configurations leave no room for one (InstrumentsMax), so a
// valid new instrument is refused for capacity, and a configuration with
// room stops the test rather than let the model guess.
func (m *refModel) addInstrument(c *venue.AddInstrument) {
	id, symbol := c.InstrumentID(), string(c.Symbol())
	taken := m.instruments[id] != nil
	for _, in := range m.cfg.Instruments {
		taken = taken || in.Symbol == symbol
	}
	reason := venue.RejectReasonCapacityExceeded
	switch {
	case id == 0 || symbol == "" || c.TickMantissa() <= 0 || c.TickScale() > 18 || (c.Status() != 0 && !c.Status().Valid()):
		reason = venue.RejectReasonInvalidInstrument
	case taken:
		reason = venue.RejectReasonDuplicateInstrument
	case m.cfg.InstrumentsMax > len(m.cfg.Instruments):
		panic("reference model: listing an instrument is not modelled; give the configuration no room (InstrumentsMax)")
	}
	var e venue.InstrumentAdded
	m.begin(&e)
	e.SetReason(reason)
	e.SetInstrumentID(id)
	e.SetStatus(c.Status())
	e.SetTickMantissa(c.TickMantissa())
	e.SetTickScale(c.TickScale())
	e.SetLotSize(c.LotSize())
	e.SetMinQty(c.MinQty())
	e.SetMaxQty(c.MaxQty())
	e.SetRefPriceTicks(c.RefPriceTicks())
	e.SetBandPercent(c.BandPercent())
	_ = e.SetSymbolString(symbol)
	_ = e.SetGroup(c.Group())
	_ = e.SetOperator(c.Operator())
	m.sink.Commit()
}
