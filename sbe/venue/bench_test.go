package venue_test

import (
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The hot-path shapes: what the gateway writes into a command slot and the
// matcher reads, and what the matcher writes for a fill and outbound reads.

var (
	benchClOrdID = []byte("6f1c2a8e-93b4-4d5e-8f00-1a2b3c4d5e6f")
	benchAccount = []byte("ACCOUNT-0001")
	sinkInt      int64
)

// benchNewOrder is the NewOrder the benchmarks encode, with a new seq each time.
var benchNewOrder = newOrderValues{
	orderValues: orderValues{
		timestampNs:  1_712_345_678_000_000_000,
		sessionIdx:   3,
		side:         venue.SideBuy,
		ordType:      venue.OrdTypeLimit,
		instrumentID: 42,
		tif:          venue.TimeInForceDay,
		priceTicks:   10_050,
		qty:          100,
		clOrdID:      benchClOrdID,
		account:      benchAccount,
	},
	flags:   venue.OrderFlagsPostOnly,
	stpMode: venue.StpModeCancelResting,
}

func encodeNewOrder(m *venue.NewOrder, buf []byte, seq uint64) error {
	benchNewOrder.seq = seq
	return encodeNewOrderValues(m, buf, &benchNewOrder)
}

func decodeNewOrder(m *venue.NewOrder, buf []byte) (int64, error) {
	if err := m.WrapDecode(buf, 0); err != nil {
		return 0, err
	}
	sum := int64(m.Seq()) + m.TimestampNs() + int64(m.SessionIdx()) + int64(m.Side()) +
		int64(m.OrdType()) + int64(m.InstrumentID()) + int64(m.TimeInForce()) + int64(m.Flags()) +
		int64(m.StpMode()) + m.PriceTicks() + m.Qty() + m.ExpireTimeNs() +
		int64(len(m.ClOrdID())) + int64(len(m.Account()))
	return sum, nil
}

// benchFill is the Fill of the benchmarks' NewOrder they encode; its ids
// follow the seq.
var benchFill = fillValues{
	orderValues:      benchNewOrder.orderValues,
	aggressor:        venue.BooleanTypeTrue,
	ordStatus:        venue.OrdStatusPartiallyFilled,
	lastPriceTicks:   10_049,
	lastQty:          30,
	leavesQty:        70,
	cumQty:           30,
	cumNotionalTicks: 30 * 10_049,
}

func encodeFill(m *venue.Fill, buf []byte, seq uint64) error {
	v := &benchFill
	v.causeSeq, v.orderID, v.execID, v.tradeID, v.contraOrderID = seq, seq, seq+1, seq+2, seq+3
	return encodeFillValues(m, buf, v)
}

func decodeFill(m *venue.Fill, buf []byte) (int64, error) {
	if err := m.WrapDecode(buf, 0); err != nil {
		return 0, err
	}
	sum := int64(m.CauseSeq()) + m.TimestampNs() + int64(m.SessionIdx()) + int64(m.Side()) +
		int64(m.OrdType()) + int64(m.InstrumentID()) + int64(m.TimeInForce()) + int64(m.Aggressor()) +
		int64(m.OrdStatus()) + int64(m.OrderID()) + int64(m.ExecID()) + int64(m.TradeID()) +
		m.PriceTicks() + m.Qty() + m.LastPriceTicks() + m.LastQty() + m.LeavesQty() + m.CumQty() +
		m.CumNotionalTicks() + int64(m.ContraOrderID()) + int64(len(m.ClOrdID())) + int64(len(m.Account()))
	return sum, nil
}

// benchEncode times encode writing a message of size bytes, with a new seq
// each time.
func benchEncode[M any](b *testing.B, size int, encode func(*M, []byte, uint64) error) {
	buf := make([]byte, size)
	var m M
	b.ReportAllocs()
	b.SetBytes(int64(size))
	seq := uint64(0)
	for b.Loop() {
		seq++
		if err := encode(&m, buf, seq); err != nil {
			b.Fatal(err)
		}
	}
}

// benchDecode times decode reading every field of a message of size bytes
// that encode wrote.
func benchDecode[M any](b *testing.B, size int, encode func(*M, []byte, uint64) error, decode func(*M, []byte) (int64, error)) {
	buf := make([]byte, size)
	var m M
	if err := encode(&m, buf, 1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	for b.Loop() {
		sum, err := decode(&m, buf)
		if err != nil {
			b.Fatal(err)
		}
		sinkInt += sum
	}
}

func BenchmarkEncodeNewOrder(b *testing.B) {
	benchEncode(b, venue.NewOrderEncodedLength, encodeNewOrder)
}

func BenchmarkDecodeNewOrder(b *testing.B) {
	benchDecode(b, venue.NewOrderEncodedLength, encodeNewOrder, decodeNewOrder)
}

func BenchmarkEncodeFill(b *testing.B) {
	benchEncode(b, venue.FillEncodedLength, encodeFill)
}

func BenchmarkDecodeFill(b *testing.B) {
	benchDecode(b, venue.FillEncodedLength, encodeFill, decodeFill)
}

// TestEncodeDecodeAllocateNothing is the hot-path invariant: encoding and
// decoding a NewOrder and a Fill, every field included, allocates nothing.
func TestEncodeDecodeAllocateNothing(t *testing.T) {
	orderBuf := make([]byte, venue.NewOrderEncodedLength)
	fillBuf := make([]byte, venue.FillEncodedLength)
	var order venue.NewOrder
	var fill venue.Fill
	seq := uint64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		seq++
		if encodeNewOrder(&order, orderBuf, seq) != nil || encodeFill(&fill, fillBuf, seq) != nil {
			panic("encode failed")
		}
		a, errA := decodeNewOrder(&order, orderBuf)
		b, errB := decodeFill(&fill, fillBuf)
		if errA != nil || errB != nil {
			panic("decode failed")
		}
		sinkInt += a + b
	})
	if allocs != 0 {
		t.Errorf("encode+decode of NewOrder and Fill: %v allocs/op, want 0", allocs)
	}
	// The failure paths return sentinel errors: no allocation either.
	allocs = testing.AllocsPerRun(1000, func() {
		if order.WrapDecode(fillBuf, 0) == nil || order.SetClOrdID(make([]byte, 0, 64)[:40]) == nil {
			panic("a bad decode was accepted")
		}
	})
	if allocs != 0 {
		t.Errorf("failed decode: %v allocs/op, want 0", allocs)
	}
}
