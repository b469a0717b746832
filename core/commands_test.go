package core

import (
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Test helpers that encode commands as the gateway would, into a buffer the
// size of a ring slot.

const cmdSlotSize = 256

type newOrderArgs struct {
	seq        uint64
	ts         int64
	session    uint16
	side       venue.Side
	ordType    venue.OrdType
	instrument uint32
	tif        venue.TimeInForce
	flags      venue.OrderFlags
	stp        venue.StpMode
	px, qty    int64
	expireNs   int64
	stopPx     int64
	maxFloor   int64
	clOrdID    string
	account    string
}

func encodeNewOrder(buf []byte, a *newOrderArgs) []byte {
	var c venue.NewOrder
	mustEncode(c.WrapEncode(buf, 0))
	c.SetSeq(a.seq)
	c.SetTimestampNs(a.ts)
	c.SetSessionIdx(a.session)
	c.SetSide(a.side)
	c.SetOrdType(a.ordType)
	c.SetInstrumentID(a.instrument)
	c.SetTimeInForce(a.tif)
	c.SetFlags(a.flags)
	c.SetStpMode(a.stp)
	c.SetPriceTicks(a.px)
	c.SetQty(a.qty)
	c.SetExpireTimeNs(a.expireNs)
	c.SetStopPxTicks(a.stopPx)
	c.SetMaxFloorQty(a.maxFloor)
	mustEncode(c.SetClOrdIDString(a.clOrdID))
	mustEncode(c.SetAccountString(a.account))
	return buf[:c.EncodedLength()]
}

type cancelArgs struct {
	seq         uint64
	ts          int64
	session     uint16
	side        venue.Side
	instrument  uint32
	orderID     uint64
	clOrdID     string
	origClOrdID string
}

func encodeCancel(buf []byte, a *cancelArgs) []byte {
	var c venue.CancelOrder
	mustEncode(c.WrapEncode(buf, 0))
	c.SetSeq(a.seq)
	c.SetTimestampNs(a.ts)
	c.SetSessionIdx(a.session)
	c.SetSide(a.side)
	c.SetInstrumentID(a.instrument)
	c.SetOrderID(a.orderID)
	mustEncode(c.SetClOrdIDString(a.clOrdID))
	mustEncode(c.SetOrigClOrdIDString(a.origClOrdID))
	return buf[:c.EncodedLength()]
}

type replaceArgs struct {
	seq         uint64
	ts          int64
	session     uint16
	side        venue.Side
	ordType     venue.OrdType
	instrument  uint32
	tif         venue.TimeInForce
	orderID     uint64
	px, qty     int64
	expireNs    int64
	stopPx      int64
	maxFloor    int64
	clOrdID     string
	origClOrdID string
	account     string
}

func encodeReplace(buf []byte, a *replaceArgs) []byte {
	var c venue.ReplaceOrder
	mustEncode(c.WrapEncode(buf, 0))
	c.SetSeq(a.seq)
	c.SetTimestampNs(a.ts)
	c.SetSessionIdx(a.session)
	c.SetSide(a.side)
	c.SetOrdType(a.ordType)
	c.SetInstrumentID(a.instrument)
	c.SetTimeInForce(a.tif)
	c.SetOrderID(a.orderID)
	c.SetPriceTicks(a.px)
	c.SetQty(a.qty)
	c.SetExpireTimeNs(a.expireNs)
	c.SetStopPxTicks(a.stopPx)
	c.SetMaxFloorQty(a.maxFloor)
	mustEncode(c.SetClOrdIDString(a.clOrdID))
	mustEncode(c.SetOrigClOrdIDString(a.origClOrdID))
	mustEncode(c.SetAccountString(a.account))
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
	c.SetSeq(a.seq)
	c.SetTimestampNs(a.ts)
	c.SetSessionIdx(a.session)
	c.SetFilterSessionIdx(a.filterSession)
	c.SetInstrumentID(a.instrument)
	c.SetSide(a.side)
	c.SetMassCancelRequestType(a.requestType)
	mustEncode(c.SetClOrdIDString(a.clOrdID))
	mustEncode(c.SetAccountString(a.account))
	return buf[:c.EncodedLength()]
}

type statusArgs struct {
	seq        uint64
	ts         int64
	session    uint16
	side       venue.Side
	instrument uint32
	orderID    uint64
	clOrdID    string
}

func encodeStatus(buf []byte, a *statusArgs) []byte {
	var c venue.OrderStatusRequest
	mustEncode(c.WrapEncode(buf, 0))
	c.SetSeq(a.seq)
	c.SetTimestampNs(a.ts)
	c.SetSessionIdx(a.session)
	c.SetSide(a.side)
	c.SetInstrumentID(a.instrument)
	c.SetOrderID(a.orderID)
	mustEncode(c.SetClOrdIDString(a.clOrdID))
	return buf[:c.EncodedLength()]
}

func encodeDisconnect(buf []byte, seq uint64, ts int64, session uint16, cancelOnDisconnect bool) []byte {
	var c venue.SessionDisconnected
	mustEncode(c.WrapEncode(buf, 0))
	c.SetSeq(seq)
	c.SetTimestampNs(ts)
	c.SetSessionIdx(session)
	if cancelOnDisconnect {
		c.SetCancelOnDisconnect(venue.BooleanTypeTrue)
	}
	return buf[:c.EncodedLength()]
}

func encodeTradingStatus(buf []byte, seq uint64, ts int64, instrument uint32, status venue.TradingStatus) []byte {
	var c venue.SetTradingStatus
	mustEncode(c.WrapEncode(buf, 0))
	c.SetSeq(seq)
	c.SetTimestampNs(ts)
	c.SetInstrumentID(instrument)
	c.SetStatus(status)
	return buf[:c.EncodedLength()]
}

func encodeEndOfDay(buf []byte, seq uint64, ts int64) []byte {
	var c venue.EndOfDay
	mustEncode(c.WrapEncode(buf, 0))
	c.SetSeq(seq)
	c.SetTimestampNs(ts)
	return buf[:c.EncodedLength()]
}

func encodeTick(buf []byte, seq uint64, ts int64) []byte {
	var c venue.Tick
	mustEncode(c.WrapEncode(buf, 0))
	c.SetSeq(seq)
	c.SetTimestampNs(ts)
	return buf[:c.EncodedLength()]
}

func encodeSnapshotCmd(buf []byte, seq uint64, ts int64, id uint64) []byte {
	var c venue.Snapshot
	mustEncode(c.WrapEncode(buf, 0))
	c.SetSeq(seq)
	c.SetTimestampNs(ts)
	c.SetSnapshotID(id)
	return buf[:c.EncodedLength()]
}

func mustEncode(err error) {
	if err != nil {
		panic(err)
	}
}
