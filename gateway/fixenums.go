package gateway

import "github.com/fixvenue/fixvenue/sbe/venue"

// Every enumerated FIX value the gateway writes is a constant of one of the
// types below, one type per FIX field, and the builders take these types, not
// bare numbers or strings. TestWrittenEnumsInDictionary reads this file and
// checks each constant against the field's values in the FIX 4.4 dictionary
// the venue ships (gateway/spec/FIX44.xml): a value a validating client would
// refuse (as 103=18 once was) fails the build's tests. See "FIX 4.4
// conformance of outbound messages" in docs/ARCHITECTURE.md.

// ordRejReason is FIX OrdRejReason (103).
type ordRejReason int

const (
	ordRejUnknownSymbol        ordRejReason = 1
	ordRejExchangeClosed       ordRejReason = 2
	ordRejExceedsLimit         ordRejReason = 3
	ordRejUnknownOrder         ordRejReason = 5
	ordRejDuplicateOrder       ordRejReason = 6
	ordRejUnsupportedOrderChar ordRejReason = 11
	ordRejIncorrectQuantity    ordRejReason = 13
	ordRejUnknownAccount       ordRejReason = 15
	ordRejOther                ordRejReason = 99
)

// cxlRejReason is FIX CxlRejReason (102).
type cxlRejReason int

const (
	cxlRejTooLateToCancel  cxlRejReason = 0
	cxlRejUnknownOrder     cxlRejReason = 1
	cxlRejDuplicateClOrdID cxlRejReason = 6
	cxlRejOther            cxlRejReason = 99
)

// massCancelRejectReason is FIX MassCancelRejectReason (532).
type massCancelRejectReason int

const (
	massCancelRejNotSupported          massCancelRejectReason = 0
	massCancelRejInvalidSecurity       massCancelRejectReason = 1
	massCancelRejInvalidTradingSession massCancelRejectReason = 6
	massCancelRejOther                 massCancelRejectReason = 99
)

// massCancelResponse is FIX MassCancelResponse (531): the request type it
// carried out, or 0 when it was refused.
type massCancelResponse string

const (
	massCancelResponseRejected   massCancelResponse = "0"
	massCancelResponseBySecurity massCancelResponse = "1"
	massCancelResponseAll        massCancelResponse = "7"
)

// massCancelRequestType is FIX MassCancelRequestType (530), echoed in reports.
type massCancelRequestType string

const (
	massCancelRequestBySecurity massCancelRequestType = "1"
	massCancelRequestAll        massCancelRequestType = "7"
)

// execType is FIX ExecType (150).
type execType string

const (
	execTypeNew         execType = "0"
	execTypeCanceled    execType = "4"
	execTypeReplaced    execType = "5"
	execTypeRejected    execType = "8"
	execTypeExpired     execType = "C"
	execTypeRestated    execType = "D"
	execTypeTrade       execType = "F"
	execTypeOrderStatus execType = "I"
)

// ordStatus is FIX OrdStatus (39). FIX 4.4 no longer has 5 (Replaced): a
// replaced order reports its current status.
type ordStatus string

const (
	ordStatusNew             ordStatus = "0"
	ordStatusPartiallyFilled ordStatus = "1"
	ordStatusFilled          ordStatus = "2"
	ordStatusCanceled        ordStatus = "4"
	ordStatusRejected        ordStatus = "8"
	ordStatusExpired         ordStatus = "C"
)

// side is FIX Side (54). Undisclosed is written only by the mass status
// report that says a session has no open order (Side is required in an
// ExecutionReport).
type side string

const (
	sideBuy         side = "1"
	sideSell        side = "2"
	sideUndisclosed side = "7"
)

// ordType is FIX OrdType (40).
type ordType string

const (
	ordTypeMarket    ordType = "1"
	ordTypeLimit     ordType = "2"
	ordTypeStop      ordType = "3"
	ordTypeStopLimit ordType = "4"
)

// timeInForce is FIX TimeInForce (59).
type timeInForce string

const (
	timeInForceDay          timeInForce = "0"
	timeInForceGTC          timeInForce = "1"
	timeInForceAtTheOpening timeInForce = "2"
	timeInForceIOC          timeInForce = "3"
	timeInForceFOK          timeInForce = "4"
	timeInForceGTD          timeInForce = "6"
	timeInForceAtTheClose   timeInForce = "7"
)

// execInst is FIX ExecInst (18).
type execInst string

const execInstParticipateDontInitiate execInst = "6" // post-only

// cxlRejResponseTo is FIX CxlRejResponseTo (434).
type cxlRejResponseTo string

const (
	cxlRejResponseToCancel  cxlRejResponseTo = "1"
	cxlRejResponseToReplace cxlRejResponseTo = "2"
)

// securityRequestResult is FIX SecurityRequestResult (560).
type securityRequestResult string

const (
	securityRequestValid        securityRequestResult = "0"
	securityRequestInvalid      securityRequestResult = "1"
	securityRequestNoInstrument securityRequestResult = "2"
)

// stipulationType is FIX StipulationType (233): the SecurityList carries an
// instrument's tick size and limits as stipulations, the FIX 4.4 fields for
// them (MinPriceIncrement, 969, only exists from FIX 5.0 on).
type stipulationType string

const (
	stipulationMinIncrement stipulationType = "MININCR"
	stipulationMinQty       stipulationType = "MINQTY"
	stipulationPriceRange   stipulationType = "PRICE"
)

// tradSesStatus is FIX TradSesStatus (340).
type tradSesStatus string

const (
	tradSesHalted   tradSesStatus = "1"
	tradSesOpen     tradSesStatus = "2"
	tradSesClosed   tradSesStatus = "3"
	tradSesPreOpen  tradSesStatus = "4" // the opening call and a volatility auction: orders taken, no matching
	tradSesPreClose tradSesStatus = "5" // the closing call
	tradSesRejected tradSesStatus = "6"
)

// tradSesStatusRejReason is FIX TradSesStatusRejReason (567).
type tradSesStatusRejReason string

const tradSesRejUnknownSession tradSesStatusRejReason = "1"

// execRestatementReason is FIX ExecRestatementReason (378), which a
// Restated report (150=D) carries.
type execRestatementReason string

// restatedOther is the reason of the one restatement the venue sends: a stop
// triggered by a trade (FIX 4.4 has no ExecType for it; Text says so).
const restatedOther execRestatementReason = "99"

// businessRejectReason is FIX BusinessRejectReason (380).
type businessRejectReason string

const (
	businessRejOther              businessRejectReason = "0"
	businessRejUnknownSecurity    businessRejectReason = "2"
	businessRejUnsupportedMsg     businessRejectReason = "3"
	businessRejAppNotAvailable    businessRejectReason = "4"
	businessRejConditionalMissing businessRejectReason = "5"
	businessRejNotAuthorized      businessRejectReason = "6"
)

// fixBoolean is FIX Boolean Y (LastFragment 893, LastRptRequested 912,
// UnsolicitedIndicator 325, CopyMsgIndicator 797).
type fixBoolean string

const fixYes fixBoolean = "Y"

// ordRejReasonOf maps the engine's reason for refusing a new order to FIX
// OrdRejReason (103). Reasons FIX 4.4 has no value for (off tick, outside
// the band, post-only, fill-or-kill, capacity) are 99 Other; the Text (58)
// says which (RejectText).
func ordRejReasonOf(r venue.RejectReason) ordRejReason {
	switch r {
	case venue.RejectReasonUnknownInstrument:
		return ordRejUnknownSymbol
	case venue.RejectReasonInstrumentHalted, venue.RejectReasonInstrumentClosed, venue.RejectReasonTradingHalted:
		return ordRejExchangeClosed
	case venue.RejectReasonUnknownOrder:
		return ordRejUnknownOrder
	case venue.RejectReasonDuplicateClOrdID:
		return ordRejDuplicateOrder
	case venue.RejectReasonUnsupportedOrderCharacteristic, venue.RejectReasonStopPostOnly,
		venue.RejectReasonAtTheOpeningOutsideCall, venue.RejectReasonAtTheCloseOutsideCall, venue.RejectReasonImmediateInCall:
		return ordRejUnsupportedOrderChar
	case venue.RejectReasonQtyNotLotMultiple, venue.RejectReasonQtyOutOfRange,
		venue.RejectReasonMaxFloorAboveQty, venue.RejectReasonMaxFloorNotLotMultiple:
		return ordRejIncorrectQuantity
	case venue.RejectReasonRiskLimitExceeded, venue.RejectReasonKillSwitchActive:
		return ordRejExceedsLimit
	}
	return ordRejOther
}

// cxlRejReasonOf maps the engine's reason for refusing a cancel or replace
// to FIX CxlRejReason (102).
func cxlRejReasonOf(r venue.RejectReason) cxlRejReason {
	switch r {
	case venue.RejectReasonTooLateToCancel:
		return cxlRejTooLateToCancel
	case venue.RejectReasonUnknownOrder:
		return cxlRejUnknownOrder
	case venue.RejectReasonDuplicateClOrdID:
		return cxlRejDuplicateClOrdID
	}
	return cxlRejOther
}

// cxlRejReasonOfOrd gives the CxlRejReason of a refusal the gateway decided
// with an OrdRejReason (a cancel or replace that names no known order).
func cxlRejReasonOfOrd(r ordRejReason) cxlRejReason {
	switch r {
	case ordRejUnknownSymbol, ordRejUnknownOrder:
		return cxlRejUnknownOrder
	case ordRejDuplicateOrder:
		return cxlRejDuplicateClOrdID
	}
	return cxlRejOther
}

func cxlRejResponseToOf(r venue.CxlRejResponseTo) cxlRejResponseTo {
	if r == venue.CxlRejResponseToReplace {
		return cxlRejResponseToReplace
	}
	return cxlRejResponseToCancel
}

// ordStatusOf maps the engine's OrdStatus to FIX 39. The engine's Replaced
// (a ClOrdID a replace superseded) never reaches here, as the matcher
// reports the order's current status; should it, the superseded ClOrdID
// is reported Canceled, as it no longer addresses a live order.
func ordStatusOf(s venue.OrdStatus) ordStatus {
	switch s {
	case venue.OrdStatusNew:
		return ordStatusNew
	case venue.OrdStatusPartiallyFilled:
		return ordStatusPartiallyFilled
	case venue.OrdStatusFilled:
		return ordStatusFilled
	case venue.OrdStatusCancelled, venue.OrdStatusReplaced:
		return ordStatusCanceled
	case venue.OrdStatusExpired:
		return ordStatusExpired
	}
	return ordStatusRejected
}

// tradSesStatusOf maps an instrument's trading status to FIX 340.
func tradSesStatusOf(s venue.TradingStatus) tradSesStatus {
	switch s {
	case venue.TradingStatusHalted:
		return tradSesHalted
	case venue.TradingStatusClosed:
		return tradSesClosed
	case venue.TradingStatusOpeningCall, venue.TradingStatusVolatilityAuction:
		return tradSesPreOpen
	case venue.TradingStatusClosingCall:
		return tradSesPreClose
	}
	return tradSesOpen
}
