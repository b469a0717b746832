package cmdtest

import (
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Order holds the fields of a NewOrder, ReplaceOrder or CancelOrder; each
// command takes the ones it has (a NewOrder ignores OrderID, a
// CancelOrder the order's terms).
type Order struct {
	Seq         uint64
	TimestampNs int64
	Session     uint16
	Instrument  uint32
	Side        venue.Side
	OrdType     venue.OrdType
	TIF         venue.TimeInForce
	PriceTicks  int64
	Qty         int64
	OrderID     uint64 // ReplaceOrder, CancelOrder: the order addressed
	ClOrdID     string
	Account     string
}

// NewOrder encodes a NewOrder.
func NewOrder(t testing.TB, buf []byte, o Order) []byte {
	t.Helper()
	var c venue.NewOrder
	must(t, c.WrapEncode(buf, 0))
	c.SetSeq(o.Seq)
	c.SetTimestampNs(o.TimestampNs)
	c.SetSessionIdx(o.Session)
	c.SetSide(o.Side)
	c.SetOrdType(o.OrdType)
	c.SetInstrumentID(o.Instrument)
	c.SetTimeInForce(o.TIF)
	c.SetPriceTicks(o.PriceTicks)
	c.SetQty(o.Qty)
	must(t, c.SetClOrdIDString(o.ClOrdID))
	must(t, c.SetAccountString(o.Account))
	return buf[:c.EncodedLength()]
}

// Replace encodes a ReplaceOrder of order o.OrderID.
func Replace(t testing.TB, buf []byte, o Order) []byte {
	t.Helper()
	var c venue.ReplaceOrder
	must(t, c.WrapEncode(buf, 0))
	c.SetSeq(o.Seq)
	c.SetTimestampNs(o.TimestampNs)
	c.SetSessionIdx(o.Session)
	c.SetSide(o.Side)
	c.SetOrdType(o.OrdType)
	c.SetInstrumentID(o.Instrument)
	c.SetTimeInForce(o.TIF)
	c.SetOrderID(o.OrderID)
	c.SetPriceTicks(o.PriceTicks)
	c.SetQty(o.Qty)
	must(t, c.SetClOrdIDString(o.ClOrdID))
	must(t, c.SetAccountString(o.Account))
	return buf[:c.EncodedLength()]
}

// Cancel encodes a CancelOrder of order o.OrderID.
func Cancel(t testing.TB, buf []byte, o Order) []byte {
	t.Helper()
	var c venue.CancelOrder
	must(t, c.WrapEncode(buf, 0))
	c.SetSeq(o.Seq)
	c.SetTimestampNs(o.TimestampNs)
	c.SetSessionIdx(o.Session)
	c.SetSide(o.Side)
	c.SetInstrumentID(o.Instrument)
	c.SetOrderID(o.OrderID)
	must(t, c.SetClOrdIDString(o.ClOrdID))
	return buf[:c.EncodedLength()]
}

// SetStatus encodes a SetTradingStatus of an instrument.
func SetStatus(t testing.TB, buf []byte, seq uint64, timestampNs int64, instrument uint32, st venue.TradingStatus) []byte {
	t.Helper()
	var c venue.SetTradingStatus
	must(t, c.WrapEncode(buf, 0))
	c.SetSeq(seq)
	c.SetTimestampNs(timestampNs)
	c.SetInstrumentID(instrument)
	c.SetStatus(st)
	return buf[:c.EncodedLength()]
}

func must(t testing.TB, err error) {
	if err != nil {
		t.Helper()
		t.Fatal(err)
	}
}
