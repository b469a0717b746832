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
	OrigClOrdID string // ReplaceOrder, CancelOrder: the ClOrdID addressed, when set
	Account     string
	MaxFloorQty int64 // NewOrder, ReplaceOrder: an iceberg's display size (0: not an iceberg)
}

// NewOrder encodes a NewOrder.
func NewOrder(t testing.TB, buf []byte, o Order) []byte {
	t.Helper()
	return Encode(t, buf, func(c *venue.NewOrder) { setTerms(t, c, o) })
}

// Replace encodes a ReplaceOrder of order o.OrderID.
func Replace(t testing.TB, buf []byte, o Order) []byte {
	t.Helper()
	return Encode(t, buf, func(c *venue.ReplaceOrder) {
		setTerms(t, c, o)
		setTarget(t, c, o)
	})
}

// Cancel encodes a CancelOrder of order o.OrderID.
func Cancel(t testing.TB, buf []byte, o Order) []byte {
	t.Helper()
	return Encode(t, buf, func(c *venue.CancelOrder) {
		setAddress(t, c, o)
		setTarget(t, c, o)
	})
}

// SetStatus encodes a SetTradingStatus of an instrument.
func SetStatus(t testing.TB, buf []byte, seq uint64, timestampNs int64, instrument uint32, st venue.TradingStatus) []byte {
	t.Helper()
	return Encode(t, buf, func(c *venue.SetTradingStatus) {
		c.SetSeq(seq)
		c.SetTimestampNs(timestampNs)
		c.SetInstrumentID(instrument)
		c.SetStatus(st)
	})
}

// Encode wraps a command's flyweight (*M) at the start of buf, has set
// write its fields and returns the encoded bytes: for the commands this
// package has no function of its own for.
func Encode[M any, P interface {
	*M
	WrapEncode(buf []byte, off int) error
	EncodedLength() int
}](t testing.TB, buf []byte, set func(P)) []byte {
	t.Helper()
	c := P(new(M))
	must(t, c.WrapEncode(buf, 0))
	set(c)
	return buf[:c.EncodedLength()]
}

// address are the setters the order commands share: who sends which
// ClOrdID about which side of which instrument.
type address interface {
	SetSeq(uint64)
	SetTimestampNs(int64)
	SetSessionIdx(uint16)
	SetSide(venue.Side)
	SetInstrumentID(uint32)
	SetClOrdIDString(string) error
}

func setAddress(t testing.TB, c address, o Order) {
	t.Helper()
	c.SetSeq(o.Seq)
	c.SetTimestampNs(o.TimestampNs)
	c.SetSessionIdx(o.Session)
	c.SetSide(o.Side)
	c.SetInstrumentID(o.Instrument)
	must(t, c.SetClOrdIDString(o.ClOrdID))
}

// target are the setters of the order a ReplaceOrder or CancelOrder addresses.
type target interface {
	SetOrderID(uint64)
	SetOrigClOrdIDString(string) error
}

func setTarget(t testing.TB, c target, o Order) {
	t.Helper()
	c.SetOrderID(o.OrderID)
	if o.OrigClOrdID != "" {
		must(t, c.SetOrigClOrdIDString(o.OrigClOrdID))
	}
}

// terms are the setters of a NewOrder and a ReplaceOrder: the address and
// the order's terms.
type terms interface {
	address
	SetOrdType(venue.OrdType)
	SetTimeInForce(venue.TimeInForce)
	SetPriceTicks(int64)
	SetQty(int64)
	SetMaxFloorQty(int64)
	SetAccountString(string) error
}

func setTerms(t testing.TB, c terms, o Order) {
	t.Helper()
	setAddress(t, c, o)
	c.SetOrdType(o.OrdType)
	c.SetTimeInForce(o.TIF)
	c.SetPriceTicks(o.PriceTicks)
	c.SetQty(o.Qty)
	c.SetMaxFloorQty(o.MaxFloorQty)
	must(t, c.SetAccountString(o.Account))
}

func must(t testing.TB, err error) {
	if err != nil {
		t.Helper()
		t.Fatal(err)
	}
}
