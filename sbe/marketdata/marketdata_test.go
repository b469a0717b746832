package marketdata_test

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	"github.com/fixvenue/fixvenue/sbe"
	"github.com/fixvenue/fixvenue/sbe/internal/sbetest"
	"github.com/fixvenue/fixvenue/sbe/marketdata"
)

const schemaPath = "../../schemas/marketdata.xml"

// codecs lists every message of marketdata.xml; TestCodecsCoverSchema fails
// when the schema gains a message that is not here.
var codecs = sbetest.Codecs{
	"Heartbeat":            func() sbetest.Codec { return new(marketdata.Heartbeat) },
	"InstrumentDefinition": func() sbetest.Codec { return new(marketdata.InstrumentDefinition) },
	"OrderAdded":           func() sbetest.Codec { return new(marketdata.OrderAdded) },
	"OrderModified":        func() sbetest.Codec { return new(marketdata.OrderModified) },
	"OrderExecuted":        func() sbetest.Codec { return new(marketdata.OrderExecuted) },
	"OrderDeleted":         func() sbetest.Codec { return new(marketdata.OrderDeleted) },
	"PriceLevelUpdate":     func() sbetest.Codec { return new(marketdata.PriceLevelUpdate) },
	"Trade":                func() sbetest.Codec { return new(marketdata.Trade) },
	"InstrumentStatus":     func() sbetest.Codec { return new(marketdata.InstrumentStatus) },
	"AuctionUpdate":        func() sbetest.Codec { return new(marketdata.AuctionUpdate) },
	"EndOfSession":         func() sbetest.Codec { return new(marketdata.EndOfSession) },
	"SnapshotStart":        func() sbetest.Codec { return new(marketdata.SnapshotStart) },
	"SnapshotEntries":      func() sbetest.Codec { return new(marketdata.SnapshotEntries) },
	"SnapshotEnd":          func() sbetest.Codec { return new(marketdata.SnapshotEnd) },
	"RetransmitRequest":    func() sbetest.Codec { return new(marketdata.RetransmitRequest) },
	"RetransmitReject":     func() sbetest.Codec { return new(marketdata.RetransmitReject) },
	"RetransmitEnd":        func() sbetest.Codec { return new(marketdata.RetransmitEnd) },
	"SnapshotRequest":      func() sbetest.Codec { return new(marketdata.SnapshotRequest) },
	"SnapshotReject":       func() sbetest.Codec { return new(marketdata.SnapshotReject) },
}

func TestCodecsCoverSchema(t *testing.T) {
	sbetest.CheckCodecs(t, sbetest.LoadSchema(t, schemaPath), codecs, marketdata.MessageName)
}

func TestRoundTripEveryMessage(t *testing.T) {
	sbetest.RoundTripAll(t, sbetest.LoadSchema(t, schemaPath), codecs)
}

// snapshotEntriesGolden is written out by hand from the schema: a 40-byte
// block (4+1+1+2+8+8+8+8, no blockLength attribute), then the group
// dimension and two 25-byte entries (orderId, priceTicks, qty, side).
var snapshotEntriesGolden = []byte{
	40, 0, 12, 0, 2, 0, 0, 0, // header: blockLength 40, template 12, schema 2, version 0
	0x07, 0, 0, 0, // @0 instrumentId 7
	1,    // @4 status Open
	0,    // @5 reserved
	0, 0, // @6 reserved2
	0x2a, 0, 0, 0, 0, 0, 0, 0, // @8 rptSeq 42
	0xf4, 0x01, 0, 0, 0, 0, 0, 0, // @16 lastTradePriceTicks 500
	0x03, 0, 0, 0, 0, 0, 0, 0, // @24 lastTradeQty 3
	0xe8, 0x03, 0, 0, 0, 0, 0, 0, // @32 volume 1000
	25, 0, 2, 0, // entries: blockLength 25, numInGroup 2
	0x01, 0x01, 0, 0, 0, 0, 0, 0, // entry 0 @0 orderId 257
	0xf5, 0x01, 0, 0, 0, 0, 0, 0, // @8 priceTicks 501
	0x0a, 0, 0, 0, 0, 0, 0, 0, // @16 qty 10
	2,                            // @24 side Sell
	0x02, 0x01, 0, 0, 0, 0, 0, 0, // entry 1 orderId 258
	0xf6, 0x01, 0, 0, 0, 0, 0, 0, // priceTicks 502
	0x14, 0, 0, 0, 0, 0, 0, 0, // qty 20
	2, // side Sell
}

func TestGoldenSnapshotEntries(t *testing.T) {
	want := snapshotEntriesGolden
	if marketdata.SnapshotEntriesBlockLength != 40 || marketdata.SnapshotEntriesEntriesBlockLength != 25 {
		t.Fatalf("block lengths %d and %d, want 40 and 25 from the schema",
			marketdata.SnapshotEntriesBlockLength, marketdata.SnapshotEntriesEntriesBlockLength)
	}
	buf := make([]byte, 256)
	var m marketdata.SnapshotEntries
	if err := m.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	m.SetInstrumentID(7)
	m.SetStatus(marketdata.TradingStatusOpen)
	m.SetRptSeq(42)
	m.SetLastTradePriceTicks(500)
	m.SetLastTradeQty(3)
	m.SetVolume(1000)
	g, err := m.EntriesCount(2)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < g.Count(); i++ {
		e := g.Entry(i)
		e.SetOrderID(uint64(257 + i))
		e.SetPriceTicks(int64(501 + i))
		e.SetQty(int64(10 * (i + 1)))
		e.SetSide(marketdata.SideSell)
	}
	if got := buf[:m.EncodedLength()]; !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%x\nwant\n%x", got, want)
	}
	var d marketdata.SnapshotEntries
	if err := d.WrapDecode(want, 0); err != nil {
		t.Fatal(err)
	}
	entries := d.Entries()
	if d.RptSeq() != 42 || d.Volume() != 1000 || entries.Count() != 2 ||
		entries.Entry(1).OrderID() != 258 || entries.Entry(1).Qty() != 20 || entries.Entry(0).Side() != marketdata.SideSell {
		t.Errorf("decoding the golden SnapshotEntries gave other values")
	}
	if err := d.WrapDecode(want[:len(want)-1], 0); err != sbe.ErrShortBuffer {
		t.Errorf("WrapDecode of a cut entry = %v, want ErrShortBuffer", err)
	}
}

var orderAddedGolden = []byte{
	40, 0, 3, 0, 2, 0, 0, 0, // header: blockLength 40, template 3, schema 2, version 0
	0x01, 0x02, 0x03, 0x04, // @0 instrumentId 0x04030201
	1,    // @4 side Buy
	0,    // @5 reserved
	0, 0, // @6 reserved2
	0x09, 0, 0, 0, 0, 0, 0, 0, // @8 orderId 9
	0x01, 0, 0, 0, 0, 0, 0, 0, // @16 rptSeq 1
	0x38, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // @24 priceTicks -200
	0x40, 0x42, 0x0f, 0, 0, 0, 0, 0, // @32 qty 1,000,000
}

func TestGoldenOrderAdded(t *testing.T) {
	buf := make([]byte, marketdata.OrderAddedEncodedLength)
	var m marketdata.OrderAdded
	if err := m.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	m.SetInstrumentID(0x04030201)
	m.SetSide(marketdata.SideBuy)
	m.SetOrderID(9)
	m.SetRptSeq(1)
	m.SetPriceTicks(-200)
	m.SetQty(1_000_000)
	if !bytes.Equal(buf, orderAddedGolden) {
		t.Fatalf("encoded\n%x\nwant\n%x", buf, orderAddedGolden)
	}
}

func TestPacketHeader(t *testing.T) {
	if marketdata.PacketHeaderEncodedLength != 24 {
		t.Fatalf("PacketHeaderEncodedLength %d, the schema's comment says 24", marketdata.PacketHeaderEncodedLength)
	}
	buf := make([]byte, 24)
	var h marketdata.PacketHeader
	if err := h.Wrap(buf, 0); err != nil {
		t.Fatal(err)
	}
	h.SetChannel(1)
	h.SetMessageCount(3)
	h.SetSeq(0x0102030405060708)
	h.SetSendingTimeNs(-1)
	want := []byte{1, 0, 3, 0, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if !bytes.Equal(buf, want) {
		t.Errorf("packet header %x, want %x", buf, want)
	}
}

func TestSnapshotEntriesAllocateNothing(t *testing.T) {
	buf := make([]byte, marketdata.SnapshotEntriesEncodedLength+8*marketdata.SnapshotEntriesEntriesBlockLength)
	var m, d marketdata.SnapshotEntries
	sum := int64(0)
	allocs := testing.AllocsPerRun(200, func() {
		if m.WrapEncode(buf, 0) != nil {
			panic("encode failed")
		}
		g, err := m.EntriesCount(8)
		if err != nil {
			panic(err)
		}
		for i := 0; i < g.Count(); i++ {
			g.Entry(i).SetQty(int64(i))
		}
		if d.WrapDecode(buf, 0) != nil {
			panic("decode failed")
		}
		entries := d.Entries()
		for i := 0; i < entries.Count(); i++ {
			sum += entries.Entry(i).Qty()
		}
	})
	if allocs != 0 {
		t.Errorf("SnapshotEntries encode+decode: %v allocs/op", allocs)
	}
}

// FuzzDecode wraps arbitrary bytes as every template and calls every getter
// of each wrap that succeeded, group entries included: nothing may panic, a
// refused wrap must leave the flyweight unwrapped, and an accepted message
// must fit in the buffer.
func FuzzDecode(f *testing.F) {
	f.Add(orderAddedGolden)
	f.Add(snapshotEntriesGolden)
	names := slices.Sorted(maps.Keys(codecs))
	for _, name := range names {
		c := codecs[name]()
		buf := make([]byte, 256)
		if err := c.WrapEncode(buf, 0); err != nil {
			f.Fatal(err)
		}
		f.Add(buf[:c.EncodedLength()])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		accepted := 0
		for _, name := range names {
			c := codecs[name]()
			err := c.WrapDecode(data, 0)
			if err != nil {
				if c.EncodedLength() != 0 {
					t.Fatalf("%s refused the bytes (%v) but is wrapped", name, err)
				}
				continue
			}
			sbetest.ReadAll(c)
			accepted++
			if n := c.EncodedLength(); n > len(data) {
				t.Fatalf("%s accepted with EncodedLength %d in %d bytes", name, n, len(data))
			}
		}
		if accepted > 1 {
			t.Fatalf("%d templates accepted the same bytes", accepted)
		}
	})
}
