package core

import "github.com/fixvenue/fixvenue/sbe/venue"

// operatorCommandBlockBefore is OperatorCommand's block before flags was
// appended. A journal written then still replays (widened): its status
// changes, with no flag, move a call to the other call as they did then
// (changeStatus).
const operatorCommandBlockBefore = 136

// DecodeOperatorCommand decodes an OperatorCommand of any build, as the
// matcher applies it: a record from before flags was appended is read
// from a copy widened with no flag. It reports false for anything else.
func DecodeOperatorCommand(cmd []byte) (venue.OperatorCommand, bool) {
	return venue.DecodeOperatorCommand(widened(nil, cmd, operatorCommandBlockBefore, venue.OperatorCommandBlockLength))
}

// applyOperatorCommand applies an OperatorCommand: an action of an operator
// or of the trading schedule, journaled with who did it and why (see
// "Operator commands" in doc.go). Unlike SetTradingStatus, a command that
// names something unknown or asks for a transition that makes no sense is
// not an error that stops the venue: it changes nothing and is answered with
// an OperatorResult carrying the reason, so the refused attempt stays in the
// journal too.
func (m *Matcher) applyOperatorCommand(cmd []byte) error {
	var c venue.OperatorCommand
	if err := c.WrapDecode(widened(m.widen[:0], cmd, operatorCommandBlockBefore, venue.OperatorCommandBlockLength), 0); err != nil {
		return err
	}
	m.begin(c.Seq(), c.TimestampNs())
	var reason venue.RejectReason
	var count uint32
	between := c.Flags().Has(venue.OperatorFlagsUncrossBetweenCalls)
	switch c.Action() {
	case venue.OperatorActionTypeSetTradingStatus:
		reason, count = m.operatorSetStatus(c.InstrumentID(), c.Status(), false, between)
	case venue.OperatorActionTypeSetPhaseStatus:
		reason, count = m.operatorSetStatus(c.InstrumentID(), c.Status(), true, between)
		m.phasePassedHalts(c.InstrumentID(), reason)
	case venue.OperatorActionTypeEndOfDay:
		count = m.endOfDay()
	case venue.OperatorActionTypeMassCancel:
		reason, count = m.operatorMassCancel(c.FilterSessionIdx(), c.InstrumentID(), c.Account())
	case venue.OperatorActionTypeSetPriceBand:
		reason, count = m.operatorSetBand(c.InstrumentID(), c.RefPriceTicks(), c.BandPercent())
	case venue.OperatorActionTypeSessionLogout, venue.OperatorActionTypeSessionDisable, venue.OperatorActionTypeSessionEnable:
		// The gateway acts on these from the result; the matcher only checks
		// that the session exists, so that the journal records the outcome.
		if int(c.FilterSessionIdx()) >= len(m.sessions) {
			reason = venue.RejectReasonUnknownSession
		}
	default:
		reason = venue.RejectReasonUnsupportedOrderCharacteristic
	}
	m.emitOperatorResult(&c, reason, count)
	return nil
}

// operatorSetStatus moves one instrument (or every instrument, for id 0) to
// status. Moving an instrument to the status it already has is refused
// (InvalidTransition); for every instrument, those already there are left
// alone and the command is refused only when none would change. A phase
// change (keepHalted: the schedule's, or an operator's for a whole group)
// leaves an instrument an operator halted halted (InstrumentHalted): only
// an operator lifts a halt. It also leaves a volatility auction, or a
// call's extension, that its time will end in that status to run, as one
// already there (a phase change sent again must change nothing): an
// operator's status for the instrument ends it early. between is the
// command's UncrossBetweenCalls (changeStatus).
func (m *Matcher) operatorSetStatus(instrumentID uint32, status venue.TradingStatus, keepHalted, between bool) (venue.RejectReason, uint32) {
	if !status.Valid() {
		return venue.RejectReasonInvalidTransition, 0
	}
	if instrumentID != 0 {
		ii, ok := m.instrByID.lookup(instrumentID)
		if !ok {
			return venue.RejectReasonUnknownInstrument, 0
		}
		if in := &m.instruments[ii]; in.status == status || (keepHalted && in.auctionEndsIn(status)) {
			return venue.RejectReasonInvalidTransition, 0
		}
		if keepHalted && m.instruments[ii].status == venue.TradingStatusHalted {
			return venue.RejectReasonInstrumentHalted, 0
		}
		m.setStatusBy(&m.instruments[ii], status, keepHalted, between)
		return venue.RejectReasonNone, 1
	}
	var changed uint32
	for i := range m.instruments {
		in := &m.instruments[i]
		if in.status == status || (keepHalted && (in.status == venue.TradingStatusHalted || in.auctionEndsIn(status))) {
			continue
		}
		m.setStatusBy(in, status, keepHalted, between)
		changed++
	}
	if changed == 0 {
		return venue.RejectReasonInvalidTransition, 0
	}
	return venue.RejectReasonNone, changed
}

// operatorMassCancel cancels the live orders of one session (or any, with
// massCancelAnySession), one instrument (or any, 0) and one account (or any,
// empty). An unknown instrument or session is refused.
func (m *Matcher) operatorMassCancel(filterSession uint16, instrumentID uint32, account []byte) (venue.RejectReason, uint32) {
	if instrumentID != 0 {
		if _, ok := m.instrByID.lookup(instrumentID); !ok {
			return venue.RejectReasonUnknownInstrument, 0
		}
	}
	if filterSession != massCancelAnySession && int(filterSession) >= len(m.sessions) {
		return venue.RejectReasonUnknownSession, 0
	}
	return venue.RejectReasonNone, m.cancelMatching(filterSession, instrumentID, 0, account)
}

// applyOperatorCancelOrder applies an OperatorCancelOrder: an operator
// cancels one live order for its owner (a client that cannot reach the
// venue, an order the venue's operations must pull), as an OperatorCommand
// is applied: refused, it changes nothing and its OperatorResult says why
// (see "Operator commands" in doc.go).
func (m *Matcher) applyOperatorCancelOrder(cmd []byte) error {
	var c venue.OperatorCancelOrder
	if err := c.WrapDecode(cmd, 0); err != nil {
		return err
	}
	m.begin(c.Seq(), c.TimestampNs())
	var key clOrdKey
	keyLen := key.load(c.ClOrdIDArray()[:])
	ri, reason := m.locateForOperator(c.FilterSessionIdx(), c.OrderID(), &key, keyLen)
	var count uint32
	if reason == venue.RejectReasonNone {
		m.cancelQuiet(m.index.recs[ri].slot, venue.CancelReasonOperator, venue.OrdStatusCancelled)
		count = 1
	}
	session, instrumentID, orderID := c.FilterSessionIdx(), uint32(0), uint64(0)
	if ri != noRec {
		r := &m.index.recs[ri]
		session, instrumentID, orderID = r.sessionIdx, r.instrumentID, r.orderID
	}
	e := m.operatorResult(venue.OperatorActionTypeCancelOrder, reason, session, instrumentID, count, c.Operator())
	e.SetOrderID(orderID)
	m.sink.Commit()
	return nil
}

// locateForOperator finds the order an OperatorCancelOrder names: by
// OrderID (in any session with massCancelAnySession, else in that one), or
// by any ClOrdID it had in the session (a replaced ClOrdID, or a client
// cancel's the matcher recorded, names the order's current record). It
// returns the order's current record (noRec when none is known) and
// RejectReasonNone when the order is live, TooLateToCancel when it has
// ended.
func (m *Matcher) locateForOperator(session uint16, orderID uint64, key *clOrdKey, keyLen int) (recIdx, venue.RejectReason) {
	ri := noRec
	switch {
	case orderID != 0:
		ri = m.index.findOrder(orderID)
		if ri != noRec && session != massCancelAnySession && m.index.recs[ri].sessionIdx != session {
			ri = noRec
		}
	case keyLen > 0:
		if int(session) >= len(m.sessions) {
			return noRec, venue.RejectReasonUnknownSession
		}
		if ri = m.index.find(session, key, key.hashLen(keyLen, session)); ri != noRec && m.index.recs[ri].slot == noOrder {
			// A ClOrdID the order had before: its current record.
			if cur := m.index.findOrder(m.index.recs[ri].orderID); cur != noRec {
				ri = cur
			}
		}
	}
	switch {
	case ri == noRec:
		return noRec, venue.RejectReasonUnknownOrder
	case m.index.recs[ri].slot == noOrder:
		return ri, venue.RejectReasonTooLateToCancel
	}
	return ri, venue.RejectReasonNone
}

func (m *Matcher) emitOperatorResult(c *venue.OperatorCommand, reason venue.RejectReason, count uint32) {
	e := m.operatorResult(c.Action(), reason, c.FilterSessionIdx(), c.InstrumentID(), count, c.Operator())
	if c.Action() == venue.OperatorActionTypeSetPriceBand && reason == venue.RejectReasonNone {
		e.SetRefPriceTicks(c.RefPriceTicks())
		e.SetBandPercent(c.BandPercent())
	}
	m.sink.Commit()
}

// operatorResult claims an OperatorResult and writes what every one says;
// the caller adds its action's own fields and commits it.
func (m *Matcher) operatorResult(action venue.OperatorActionType, reason venue.RejectReason, session uint16, instrumentID,
	count uint32, operator []byte) venue.OperatorResult {
	var e venue.OperatorResult
	_ = e.WrapEncode(m.claim(), 0)
	e.SetCauseSeq(m.causeSeq)
	e.SetTimestampNs(m.nowNs)
	e.SetAction(action)
	e.SetReason(reason)
	e.SetFilterSessionIdx(session)
	e.SetInstrumentID(instrumentID)
	e.SetCount(count)
	_ = e.SetOperator(operator)
	return e
}

// setStatusBy moves an instrument for an operator command: a phase change
// (the schedule's, or an operator's for a group) to Open or Closed extends
// a call that would uncross outside the dynamic band instead (extendCall);
// an operator's status for the instrument itself ends a call, or its
// extension, now. A call that a change to the other call ends (between)
// is not extended: the next call is due.
func (m *Matcher) setStatusBy(in *instrument, status venue.TradingStatus, phase, between bool) {
	if phase && (status == venue.TradingStatusOpen || status == venue.TradingStatusClosed) && m.extendCall(in) {
		return
	}
	m.changeStatus(in, status, between)
}

// phasePassedHalts makes the instruments whose halt a phase change passed
// over forget the status the halt interrupted (haltedFrom): without the
// halt they would be in the phase now, which their group's phase says. The
// control plane learns it from the change's OperatorResult, after its
// status changes, so it is said in its terms: the instrument named when
// the change is refused with InstrumentHalted, and every instrument halted
// once a change of every instrument (id 0) is applied, whatever its answer.
func (m *Matcher) phasePassedHalts(instrumentID uint32, reason venue.RejectReason) {
	switch {
	case instrumentID == 0:
		for i := range m.instruments {
			m.instruments[i].haltedFrom = 0
		}
	case reason == venue.RejectReasonInstrumentHalted:
		if ii, ok := m.instrByID.lookup(instrumentID); ok {
			m.instruments[ii].haltedFrom = 0
		}
	}
}
