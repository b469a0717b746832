package venue_test

import (
	"bytes"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The golden tests write the expected bytes out by hand from the schema's
// field order and widths (offsets in the comments count from the start of
// the block, after the 8-byte header), so that a layout mistake the round
// trip cannot see — two fields swapped consistently, a wrong width, a wrong
// header — still fails.

// chars is a char array: the text, then NUL padding up to n bytes.
func chars(text string, n int) []byte {
	b := make([]byte, n)
	copy(b, text)
	return b
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

var newOrderGolden = concat(
	[]byte{
		120, 0, // blockLength 120
		1, 0, // templateId 1
		1, 0, // schemaId 1
		0, 0, // version 0
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // @0 seq 0x0102030405060708
		0x00, 0x8c, 0xdd, 0x5d, 0x52, 0x79, 0xc3, 0x17, // @8 timestampNs 1,712,345,678,000,000,000 = 0x17c379525ddd8c00
		0x34, 0x12, // @16 sessionIdx 0x1234
		2,                      // @18 side Sell
		2,                      // @19 ordType Limit
		0x78, 0x56, 0x34, 0x12, // @20 instrumentId 0x12345678
		3,                                              // @24 timeInForce IOC
		0x03,                                           // @25 flags PostOnly|PossResend
		1,                                              // @26 stpMode CancelResting
		0,                                              // @27 reserved
		0x9c, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // @28 priceTicks -100
		0xe8, 0x03, 0, 0, 0, 0, 0, 0, // @36 qty 1000
		0, 0, 0, 0, 0, 0, 0, 0, // @44 expireTimeNs 0
	},
	chars("ORD-1", 36),                   // @52 clOrdId
	chars("ACC42", 16),                   // @88 account
	[]byte{0x10, 0x27, 0, 0, 0, 0, 0, 0}, // @104 stopPxTicks 10000
	[]byte{0x05, 0, 0, 0, 0, 0, 0, 0},    // @112 maxFloorQty 5
)

func TestGoldenNewOrder(t *testing.T) {
	buf := make([]byte, venue.NewOrderEncodedLength)
	var m venue.NewOrder
	mustSet(t, encodeNewOrderValues(&m, buf, &newOrderValues{
		seq: 0x0102030405060708,
		orderValues: orderValues{
			timestampNs:  1_712_345_678_000_000_000,
			sessionIdx:   0x1234,
			side:         venue.SideSell,
			ordType:      venue.OrdTypeLimit,
			instrumentID: 0x12345678,
			tif:          venue.TimeInForceIOC,
			priceTicks:   -100,
			qty:          1000,
			clOrdID:      []byte("ORD-1"),
			account:      []byte("ACC42"),
		},
		flags:       venue.OrderFlagsPostOnly | venue.OrderFlagsPossResend,
		stpMode:     venue.StpModeCancelResting,
		stopPxTicks: 10000,
		maxFloorQty: 5,
	}))
	compareGolden(t, buf, newOrderGolden)

	var d venue.NewOrder
	if err := d.WrapDecode(newOrderGolden, 0); err != nil {
		t.Fatal(err)
	}
	if d.Seq() != 0x0102030405060708 || d.TimestampNs() != 1_712_345_678_000_000_000 ||
		d.SessionIdx() != 0x1234 || d.Side() != venue.SideSell || d.OrdType() != venue.OrdTypeLimit ||
		d.InstrumentID() != 0x12345678 || d.TimeInForce() != venue.TimeInForceIOC ||
		!d.Flags().Has(venue.OrderFlagsPostOnly|venue.OrderFlagsPossResend) ||
		d.StpMode() != venue.StpModeCancelResting || d.PriceTicks() != -100 || d.Qty() != 1000 ||
		d.ExpireTimeNs() != 0 || string(d.ClOrdID()) != "ORD-1" || string(d.Account()) != "ACC42" {
		t.Errorf("decoding the golden NewOrder gave other values")
	}
}

var fillGolden = concat(
	[]byte{
		176, 0, // blockLength 176
		103, 0, // templateId 103
		1, 0, // schemaId 1
		0, 0, // version 0
		0x11, 0, 0, 0, 0, 0, 0, 0, // @0 causeSeq 17
		0x22, 0, 0, 0, 0, 0, 0, 0, // @8 timestampNs 34
		0x05, 0x00, // @16 sessionIdx 5
		1,                      // @18 side Buy
		2,                      // @19 ordType Limit
		0x07, 0x00, 0x00, 0x00, // @20 instrumentId 7
		1,                            // @24 timeInForce GTC
		1,                            // @25 aggressor True
		1,                            // @26 ordStatus PartiallyFilled
		0,                            // @27 reserved
		0x01, 0x01, 0, 0, 0, 0, 0, 0, // @28 orderId 257
		0x02, 0x01, 0, 0, 0, 0, 0, 0, // @36 execId 258
		0x03, 0x01, 0, 0, 0, 0, 0, 0, // @44 tradeId 259
		0x10, 0x27, 0, 0, 0, 0, 0, 0, // @52 priceTicks 10000
		0x64, 0, 0, 0, 0, 0, 0, 0, // @60 qty 100
		0x0f, 0x27, 0, 0, 0, 0, 0, 0, // @68 lastPriceTicks 9999
		0x1e, 0, 0, 0, 0, 0, 0, 0, // @76 lastQty 30
		0x46, 0, 0, 0, 0, 0, 0, 0, // @84 leavesQty 70
		0x1e, 0, 0, 0, 0, 0, 0, 0, // @92 cumQty 30
		0xc2, 0x93, 0x04, 0, 0, 0, 0, 0, // @100 cumNotionalTicks 299970 = 0x0493c2
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // @108 contraOrderId max uint64
	},
	chars("0123456789abcdef0123456789abcdef0123", 36), // @116 clOrdId, full length
	chars("", 16),                     // @152 account, empty
	[]byte{0x0a, 0, 0, 0, 0, 0, 0, 0}, // @168 displayQty 10
)

func TestGoldenFill(t *testing.T) {
	buf := make([]byte, venue.FillEncodedLength)
	var m venue.Fill
	mustSet(t, encodeFillValues(&m, buf, &fillValues{
		causeSeq: 17,
		orderValues: orderValues{
			timestampNs:  34,
			sessionIdx:   5,
			side:         venue.SideBuy,
			ordType:      venue.OrdTypeLimit,
			instrumentID: 7,
			tif:          venue.TimeInForceGTC,
			priceTicks:   10000,
			qty:          100,
			clOrdID:      []byte("0123456789abcdef0123456789abcdef0123"),
		},
		aggressor:        venue.BooleanTypeTrue,
		ordStatus:        venue.OrdStatusPartiallyFilled,
		orderID:          257,
		execID:           258,
		tradeID:          259,
		lastPriceTicks:   9999,
		lastQty:          30,
		leavesQty:        70,
		cumQty:           30,
		cumNotionalTicks: 299970,
		contraOrderID:    ^uint64(0),
		displayQty:       10,
	}))
	compareGolden(t, buf, fillGolden)

	var d venue.Fill
	if err := d.WrapDecode(fillGolden, 0); err != nil {
		t.Fatal(err)
	}
	if d.CauseSeq() != 17 || d.Aggressor() != venue.BooleanTypeTrue || d.OrdStatus() != venue.OrdStatusPartiallyFilled ||
		d.TradeID() != 259 || d.LastPriceTicks() != 9999 || d.CumNotionalTicks() != 299970 ||
		d.ContraOrderID() != ^uint64(0) || len(d.ClOrdID()) != 36 || len(d.Account()) != 0 {
		t.Errorf("decoding the golden Fill gave other values")
	}
}

var cancelRejectedGolden = concat(
	[]byte{
		108, 0, // blockLength 108
		106, 0, // templateId 106
		1, 0, // schemaId 1
		0, 0, // version 0
		0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01, // @0 causeSeq 0x0123456789abcdef
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // @8 timestampNs -1
		0xff, 0xff, // @16 sessionIdx 0xffff
		2,                      // @18 responseTo Replace
		9,                      // @19 reason UnknownOrder
		0x2a, 0x00, 0x00, 0x00, // @20 instrumentId 42
		255,        // @24 ordStatus Unknown
		2,          // @25 side Sell
		0xad, 0xde, // @26 reserved 0xdead
		0, 0, 0, 0, 0, 0, 0, 0, // @28 orderId 0 (unknown)
	},
	chars("CXL-9", 36), // @36 clOrdId
	chars("ORD-1", 36), // @72 origClOrdId
)

func TestGoldenCancelRejected(t *testing.T) {
	// Encode at an offset, as into a ring slot behind a frame header.
	const off = 3
	buf := make([]byte, off+venue.CancelRejectedEncodedLength)
	var m venue.CancelRejected
	if err := m.WrapEncode(buf, off); err != nil {
		t.Fatal(err)
	}
	m.SetCauseSeq(0x0123456789abcdef)
	m.SetTimestampNs(-1)
	m.SetSessionIdx(0xffff)
	m.SetResponseTo(venue.CxlRejResponseToReplace)
	m.SetReason(venue.RejectReasonUnknownOrder)
	m.SetInstrumentID(42)
	m.SetOrdStatus(venue.OrdStatusUnknown)
	m.SetSide(venue.SideSell)
	m.SetReserved(0xdead)
	mustSet(t, m.SetClOrdIDString("CXL-9"))
	mustSet(t, m.SetOrigClOrdIDString("ORD-1"))
	compareGolden(t, buf[off:], cancelRejectedGolden)
	if !bytes.Equal(buf[:off], make([]byte, off)) {
		t.Errorf("bytes before the offset were written: %x", buf[:off])
	}

	var d venue.CancelRejected
	if err := d.WrapDecode(cancelRejectedGolden, 0); err != nil {
		t.Fatal(err)
	}
	if d.CauseSeq() != 0x0123456789abcdef || d.TimestampNs() != -1 || d.SessionIdx() != 0xffff ||
		d.ResponseTo() != venue.CxlRejResponseToReplace || d.Reason() != venue.RejectReasonUnknownOrder ||
		d.InstrumentID() != 42 || d.OrdStatus() != venue.OrdStatusUnknown || d.Side() != venue.SideSell ||
		d.Reserved() != 0xdead || d.OrderID() != 0 ||
		string(d.ClOrdID()) != "CXL-9" || string(d.OrigClOrdID()) != "ORD-1" {
		t.Errorf("decoding the golden CancelRejected gave other values")
	}
}

func mustSet(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// compareGolden compares an encoding, made in a buffer of the message's
// EncodedLength, with its golden, length included.
func compareGolden(t *testing.T, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("encoded bytes differ from the golden first at byte %d (block offset %d):\n got %x\nwant %x",
				i, i-venue.MessageHeaderSize, got, want)
		}
	}
	t.Fatalf("encoded %d bytes, golden %d", len(got), len(want))
}
