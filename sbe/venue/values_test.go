package venue_test

import "github.com/fixvenue/fixvenue/sbe/venue"

// The golden tests and the benchmarks encode a NewOrder and a Fill through
// these setters, so every field is set in one place for both; each gives its
// own values.

// orderValues are the fields a NewOrder and a Fill of that order share.
type orderValues struct {
	timestampNs  int64
	sessionIdx   uint16
	side         venue.Side
	ordType      venue.OrdType
	instrumentID uint32
	tif          venue.TimeInForce
	priceTicks   int64
	qty          int64
	clOrdID      []byte
	account      []byte
}

type newOrderValues struct {
	seq uint64
	orderValues
	flags        venue.OrderFlags
	stpMode      venue.StpMode
	expireTimeNs int64
	stopPxTicks  int64
	maxFloorQty  int64
}

// encodeNewOrderValues wraps m for encoding at the start of buf and sets v.
func encodeNewOrderValues(m *venue.NewOrder, buf []byte, v *newOrderValues) error {
	if err := m.WrapEncode(buf, 0); err != nil {
		return err
	}
	m.SetSeq(v.seq)
	m.SetTimestampNs(v.timestampNs)
	m.SetSessionIdx(v.sessionIdx)
	m.SetSide(v.side)
	m.SetOrdType(v.ordType)
	m.SetInstrumentID(v.instrumentID)
	m.SetTimeInForce(v.tif)
	m.SetFlags(v.flags)
	m.SetStpMode(v.stpMode)
	m.SetPriceTicks(v.priceTicks)
	m.SetQty(v.qty)
	m.SetExpireTimeNs(v.expireTimeNs)
	m.SetStopPxTicks(v.stopPxTicks)
	m.SetMaxFloorQty(v.maxFloorQty)
	if err := m.SetClOrdID(v.clOrdID); err != nil {
		return err
	}
	return m.SetAccount(v.account)
}

type fillValues struct {
	causeSeq uint64
	orderValues
	aggressor        venue.BooleanType
	ordStatus        venue.OrdStatus
	orderID          uint64
	execID           uint64
	tradeID          uint64
	lastPriceTicks   int64
	lastQty          int64
	leavesQty        int64
	cumQty           int64
	cumNotionalTicks int64
	contraOrderID    uint64
	displayQty       int64
}

// encodeFillValues wraps m for encoding at the start of buf and sets v.
func encodeFillValues(m *venue.Fill, buf []byte, v *fillValues) error {
	if err := m.WrapEncode(buf, 0); err != nil {
		return err
	}
	m.SetCauseSeq(v.causeSeq)
	m.SetTimestampNs(v.timestampNs)
	m.SetSessionIdx(v.sessionIdx)
	m.SetSide(v.side)
	m.SetOrdType(v.ordType)
	m.SetInstrumentID(v.instrumentID)
	m.SetTimeInForce(v.tif)
	m.SetAggressor(v.aggressor)
	m.SetOrdStatus(v.ordStatus)
	m.SetOrderID(v.orderID)
	m.SetExecID(v.execID)
	m.SetTradeID(v.tradeID)
	m.SetPriceTicks(v.priceTicks)
	m.SetQty(v.qty)
	m.SetLastPriceTicks(v.lastPriceTicks)
	m.SetLastQty(v.lastQty)
	m.SetLeavesQty(v.leavesQty)
	m.SetCumQty(v.cumQty)
	m.SetCumNotionalTicks(v.cumNotionalTicks)
	m.SetContraOrderID(v.contraOrderID)
	m.SetDisplayQty(v.displayQty)
	if err := m.SetClOrdID(v.clOrdID); err != nil {
		return err
	}
	return m.SetAccount(v.account)
}
