package core

import (
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Test helpers that encode commands as the gateway would, into a buffer the
// size of a ring slot.

const cmdSlotSize = 256

// orderArgs are the fields of a NewOrder or a ReplaceOrder. Only a NewOrder
// carries flags and stp, only a ReplaceOrder orderID and origClOrdID; each
// encoder panics when given a field its message does not carry, so a test
// cannot believe it set one.
type orderArgs struct {
	seq         uint64
	ts          int64
	session     uint16
	side        venue.Side
	ordType     venue.OrdType
	instrument  uint32
	tif         venue.TimeInForce
	flags       venue.OrderFlags
	stp         venue.StpMode
	orderID     uint64
	px, qty     int64
	expireNs    int64
	stopPx      int64
	maxFloor    int64
	clOrdID     string
	origClOrdID string
	account     string
	// replaceFlags are a ReplaceOrder's flags (ReplacePossResend,
	// ReplacePostOnly, ReplaceEndedTooLate, ReplaceSaysMarket).
	replaceFlags uint8
}

func encodeNewOrder(buf []byte, a *orderArgs) []byte {
	if a.orderID != 0 || a.origClOrdID != "" {
		panic("a NewOrder carries no OrderID or OrigClOrdID")
	}
	var c venue.NewOrder
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, a.seq, a.ts)
	setOrderTerms(c, a.session, a.side, a.ordType, a.instrument, a.tif, a.px, a.qty, a.expireNs, a.stopPx, a.maxFloor)
	c.SetFlags(a.flags)
	c.SetStpMode(a.stp)
	mustEncode(c.SetClOrdIDString(a.clOrdID))
	mustEncode(c.SetAccountString(a.account))
	return buf[:c.EncodedLength()]
}

// orderRefArgs are the fields of a CancelOrder or an OrderStatusRequest:
// both name a live order the same way (see orderRef); only a CancelOrder
// carries origClOrdID, and encodeStatus panics when given one.
type orderRefArgs struct {
	seq         uint64
	ts          int64
	session     uint16
	side        venue.Side
	instrument  uint32
	orderID     uint64
	clOrdID     string
	origClOrdID string
	checks      uint8 // a CancelOrder's checks (CancelMatchesOrder, CancelRemembersClOrdID) or an OrderStatusRequest's (StatusMatchesOrder)
}

func encodeCancel(buf []byte, a *orderRefArgs) []byte {
	var c venue.CancelOrder
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, a.seq, a.ts)
	setOrderRef(c, a.session, a.side, a.instrument, a.orderID, a.clOrdID)
	mustEncode(c.SetOrigClOrdIDString(a.origClOrdID))
	c.SetChecks(a.checks)
	return buf[:c.EncodedLength()]
}

func encodeReplace(buf []byte, a *orderArgs) []byte {
	if a.flags != 0 || a.stp != 0 {
		panic("a ReplaceOrder carries no flags or STP mode")
	}
	var c venue.ReplaceOrder
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, a.seq, a.ts)
	setOrderTerms(c, a.session, a.side, a.ordType, a.instrument, a.tif, a.px, a.qty, a.expireNs, a.stopPx, a.maxFloor)
	c.SetOrderID(a.orderID)
	mustEncode(c.SetClOrdIDString(a.clOrdID))
	mustEncode(c.SetOrigClOrdIDString(a.origClOrdID))
	mustEncode(c.SetAccountString(a.account))
	c.SetFlags(a.replaceFlags)
	return buf[:c.EncodedLength()]
}

type massCancelArgs struct {
	seq           uint64
	ts            int64
	session       uint16
	filterSession uint16
	instrument    uint32
	side          uint8
	requestType   uint8
	clOrdID       string
	account       string
}

func encodeMassCancel(buf []byte, a *massCancelArgs) []byte {
	var c venue.MassCancel
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, a.seq, a.ts)
	c.SetSessionIdx(a.session)
	c.SetFilterSessionIdx(a.filterSession)
	c.SetInstrumentID(a.instrument)
	c.SetSide(a.side)
	c.SetMassCancelRequestType(a.requestType)
	mustEncode(c.SetClOrdIDString(a.clOrdID))
	mustEncode(c.SetAccountString(a.account))
	return buf[:c.EncodedLength()]
}

func encodeStatus(buf []byte, a *orderRefArgs) []byte {
	if a.origClOrdID != "" {
		panic("an OrderStatusRequest carries no OrigClOrdID")
	}
	var c venue.OrderStatusRequest
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, a.seq, a.ts)
	setOrderRef(c, a.session, a.side, a.instrument, a.orderID, a.clOrdID)
	c.SetChecks(a.checks)
	return buf[:c.EncodedLength()]
}

func encodeDisconnect(buf []byte, seq uint64, ts int64, session uint16, cancelOnDisconnect bool) []byte {
	var c venue.SessionDisconnected
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, seq, ts)
	c.SetSessionIdx(session)
	if cancelOnDisconnect {
		c.SetCancelOnDisconnect(venue.BooleanTypeTrue)
	}
	return buf[:c.EncodedLength()]
}

func encodeTradingStatus(buf []byte, seq uint64, ts int64, instrument uint32, status venue.TradingStatus) []byte {
	var c venue.SetTradingStatus
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, seq, ts)
	c.SetInstrumentID(instrument)
	c.SetStatus(status)
	return buf[:c.EncodedLength()]
}

func encodeEndOfDay(buf []byte, seq uint64, ts int64) []byte {
	var c venue.EndOfDay
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, seq, ts)
	return buf[:c.EncodedLength()]
}

func encodeTick(buf []byte, seq uint64, ts int64) []byte {
	var c venue.Tick
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, seq, ts)
	return buf[:c.EncodedLength()]
}

func encodeSnapshotCmd(buf []byte, seq uint64, ts int64, id uint64) []byte {
	var c venue.Snapshot
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, seq, ts)
	c.SetSnapshotID(id)
	return buf[:c.EncodedLength()]
}

// The helpers below take a flyweight by value: it is one pointer, so
// passing it as an interface does not allocate, and the tests that count
// allocations encode commands inside the counted loop.

// cmdHeader is the header every command starts with.
type cmdHeader interface {
	SetSeq(uint64)
	SetTimestampNs(int64)
}

func stampCmd(c cmdHeader, seq uint64, ts int64) {
	c.SetSeq(seq)
	c.SetTimestampNs(ts)
}

// orderRef is how CancelOrder and OrderStatusRequest name a live order:
// its session, side and instrument, its OrderID and the request's ClOrdID.
type orderRef interface {
	SetSessionIdx(uint16)
	SetSide(venue.Side)
	SetInstrumentID(uint32)
	SetOrderID(uint64)
	SetClOrdIDString(string) error
}

func setOrderRef(c orderRef, session uint16, side venue.Side, instrument uint32, orderID uint64, clOrdID string) {
	c.SetSessionIdx(session)
	c.SetSide(side)
	c.SetInstrumentID(instrument)
	c.SetOrderID(orderID)
	mustEncode(c.SetClOrdIDString(clOrdID))
}

// orderTerms are the fields NewOrder and ReplaceOrder both carry: what a
// new order asks for, and what a replace asks to change an order to.
type orderTerms interface {
	SetSessionIdx(uint16)
	SetSide(venue.Side)
	SetOrdType(venue.OrdType)
	SetInstrumentID(uint32)
	SetTimeInForce(venue.TimeInForce)
	SetPriceTicks(int64)
	SetQty(int64)
	SetExpireTimeNs(int64)
	SetStopPxTicks(int64)
	SetMaxFloorQty(int64)
}

func setOrderTerms(c orderTerms, session uint16, side venue.Side, ordType venue.OrdType, instrument uint32,
	tif venue.TimeInForce, px, qty, expireNs, stopPx, maxFloor int64) {
	c.SetSessionIdx(session)
	c.SetSide(side)
	c.SetOrdType(ordType)
	c.SetInstrumentID(instrument)
	c.SetTimeInForce(tif)
	c.SetPriceTicks(px)
	c.SetQty(qty)
	c.SetExpireTimeNs(expireNs)
	c.SetStopPxTicks(stopPx)
	c.SetMaxFloorQty(maxFloor)
}

func mustEncode(err error) {
	if err != nil {
		panic(err)
	}
}
