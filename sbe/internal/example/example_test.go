package example_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/fixvenue/fixvenue/sbe"
	"github.com/fixvenue/fixvenue/sbe/internal/example"
	"github.com/fixvenue/fixvenue/sbe/internal/sbetest"
)

const schemaPath = "../../testdata/example.xml"

var codecs = sbetest.Codecs{
	"Quote": func() sbetest.Codec { return new(example.Quote) },
	"Book":  func() sbetest.Codec { return new(example.Book) },
	"Empty": func() sbetest.Codec { return new(example.Empty) },
}

func TestRoundTripEveryMessage(t *testing.T) {
	s := sbetest.LoadSchema(t, schemaPath)
	sbetest.CheckCodecs(t, s, codecs, nil)
	sbetest.RoundTripAll(t, s, codecs)
}

// bookGolden is a Book with two bids and one ask, written out by hand from
// the schema: a 16-byte block padded after instrumentId, 13-byte bid entries,
// 24-byte ask entries with the qty at its explicit offset 12.
var bookGolden = []byte{
	16, 0, 2, 0, 77, 0, 3, 0, // header: blockLength 16, template 2, schema 77, version 3
	0x0a, 0, 0, 0, // @0 instrumentId 10
	0, 0, 0, 0, // @4 padding
	0x0b, 0, 0, 0, 0, 0, 0, 0, // @8 seq 11
	13, 0, 2, 0, // bids: blockLength 13, numInGroup 2
	0x64, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 'A', // bid 0: price 100, qty 5, action Add
	0x63, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 'M', // bid 1: price 99, qty 6, action Modify
	24, 0, 1, 0, // asks: blockLength 24, numInGroup 1
	0x65, 0, 0, 0, 0, 0, 0, 0, 0xfe, // ask 0 @0 price.mantissa 101, @8 price.exponent -2
	0, 0, 0, // @9 padding
	7, 0, 0, 0, // @12 qty 7
	0x09,                // @16 flags Last|Implied
	0, 0, 0, 0, 0, 0, 0, // @17 padding to 24
}

func encodeBook(t testing.TB, m *example.Book, buf []byte) {
	if err := m.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	m.SetInstrumentID(10)
	m.SetSeq(11)
	bids, err := m.BidsCount(2)
	if err != nil {
		t.Fatal(err)
	}
	bids.Entry(0).SetPrice(100)
	bids.Entry(0).SetQty(5)
	bids.Entry(0).SetAction(example.ActionAdd)
	bid := bids.Entry(1)
	bid.SetPrice(99)
	bid.SetQty(6)
	bid.SetAction(example.ActionModify)
	asks, err := m.AsksCount(1)
	if err != nil {
		t.Fatal(err)
	}
	ask := asks.Entry(0)
	ask.Price().SetMantissa(101)
	ask.Price().SetExponent(-2)
	ask.SetQty(7)
	ask.SetFlags(example.FlagsLast | example.FlagsImplied)
}

func TestGoldenBook(t *testing.T) {
	buf := make([]byte, 128)
	var m example.Book
	encodeBook(t, &m, buf)
	if m.EncodedLength() != len(bookGolden) {
		t.Fatalf("EncodedLength %d, golden %d bytes", m.EncodedLength(), len(bookGolden))
	}
	if !bytes.Equal(buf[:len(bookGolden)], bookGolden) {
		t.Fatalf("encoded\n%x\nwant\n%x", buf[:len(bookGolden)], bookGolden)
	}
	var d example.Book
	if err := d.WrapDecode(bookGolden, 0); err != nil {
		t.Fatal(err)
	}
	bids, asks := d.Bids(), d.Asks()
	if d.InstrumentID() != 10 || d.Seq() != 11 || bids.Count() != 2 || asks.Count() != 1 ||
		bids.Entry(1).Price() != 99 || bids.Entry(1).Action() != example.ActionModify ||
		asks.Entry(0).Price().Exponent() != -2 || asks.Entry(0).Qty() != 7 ||
		!asks.Entry(0).Flags().Has(example.FlagsImplied) {
		t.Errorf("decoding the golden Book gave other values")
	}
	if bids.EncodedLength() != 4+2*13 || asks.EncodedLength() != 4+24 {
		t.Errorf("group lengths %d %d", bids.EncodedLength(), asks.EncodedLength())
	}
}

func TestGroupEncoding(t *testing.T) {
	buf := make([]byte, example.BookEncodedLength+4*example.BookBidsBlockLength)
	var m example.Book
	if err := m.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	// A fresh message has both groups, empty.
	if m.Bids().Count() != 0 || m.Asks().Count() != 0 || m.EncodedLength() != example.BookEncodedLength {
		t.Fatalf("fresh Book: %d bids, %d asks, %d bytes", m.Bids().Count(), m.Asks().Count(), m.EncodedLength())
	}
	if _, err := m.BidsCount(-1); err != sbe.ErrGroupCount {
		t.Errorf("BidsCount(-1) = %v", err)
	}
	if _, err := m.BidsCount(sbe.GroupCountMax + 1); err != sbe.ErrGroupCount {
		t.Errorf("BidsCount(max+1) = %v", err)
	}
	if _, err := m.BidsCount(5); err != sbe.ErrShortBuffer {
		t.Errorf("BidsCount past the buffer = %v", err)
	}
	bids, err := m.BidsCount(4)
	if err != nil {
		t.Fatal(err)
	}
	if m.Asks().Count() != 0 {
		t.Errorf("asks not empty after sizing bids")
	}
	// No room is left for an ask.
	if _, err := m.AsksCount(1); err != sbe.ErrShortBuffer {
		t.Errorf("AsksCount past the buffer = %v", err)
	}
	for i := 0; i < bids.Count(); i++ {
		bids.Entry(i).SetQty(int32(i + 1))
	}
	// An out-of-range entry panics, as a slice index would, and writes nothing.
	before := bytes.Clone(buf)
	for _, i := range []int{4, -1} {
		if !sbetest.Panics(func() { bids.Entry(i).SetQty(99) }) {
			t.Errorf("Entry(%d) of 4 did not panic", i)
		}
	}
	if !bytes.Equal(before, buf) || m.Asks().Count() != 0 {
		t.Errorf("an out-of-range entry wrote the buffer")
	}
	// Resizing an earlier group resets the later ones.
	if _, err := m.BidsCount(1); err != nil {
		t.Fatal(err)
	}
	asks, err := m.AsksCount(1)
	if err != nil {
		t.Fatal(err)
	}
	asks.Entry(0).SetQty(3)
	if _, err := m.BidsCount(2); err != nil {
		t.Fatal(err)
	}
	if m.Asks().Count() != 0 || m.Bids().Entry(0).Qty() != 0 {
		t.Errorf("resizing bids kept asks (%d) or old bid values", m.Asks().Count())
	}
}

func TestGroupDecodingRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(b []byte) []byte
		want error
	}{
		{"bids cut", func(b []byte) []byte { return b[:16+8+4+13] }, sbe.ErrShortBuffer},
		{"asks dimension cut", func(b []byte) []byte { return b[:16+8+4+2*13+3] }, sbe.ErrShortBuffer},
		{"asks entry cut", func(b []byte) []byte { return b[:len(b)-1] }, sbe.ErrShortBuffer},
		{"bid entries shorter than ours", func(b []byte) []byte {
			binary.LittleEndian.PutUint16(b[24:], 12)
			return b
		}, sbe.ErrBlockLength},
		{"count beyond the buffer", func(b []byte) []byte {
			binary.LittleEndian.PutUint16(b[26:], 0xffff)
			return b
		}, sbe.ErrShortBuffer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.edit(bytes.Clone(bookGolden))
			var m example.Book
			if err := m.WrapDecode(b, 0); err != tt.want {
				t.Fatalf("WrapDecode = %v, want %v", err, tt.want)
			}
			if m.Bids().Count() != 0 || m.Asks().Count() != 0 || m.EncodedLength() != 0 {
				t.Errorf("groups readable after a failed WrapDecode")
			}
			if !sbetest.Panics(func() { _ = m.Seq() }) {
				t.Errorf("a getter after a failed WrapDecode did not panic")
			}
		})
	}
}

// A newer sender may lengthen the block and the entries: both are accepted,
// and entries are found by the acting lengths.
func TestGroupDecodingLongerEntries(t *testing.T) {
	var b []byte
	b = append(b, 20, 0, 2, 0, 77, 0, 3, 0)   // block 20 instead of 16
	b = append(b, bookGolden[8:24]...)        // the block
	b = append(b, 0xAA, 0xAA, 0xAA, 0xAA)     // 4 new block bytes
	b = append(b, 15, 0, 2, 0)                // bid entries of 15 bytes
	b = append(b, bookGolden[28:28+13]...)    // bid 0
	b = append(b, 0xBB, 0xBB)                 // 2 new bytes
	b = append(b, bookGolden[28+13:28+26]...) // bid 1
	b = append(b, 0xBB, 0xBB)                 // 2 new bytes
	b = append(b, bookGolden[28+26:]...)      // asks unchanged
	var m example.Book
	if err := m.WrapDecode(b, 0); err != nil {
		t.Fatal(err)
	}
	if m.Seq() != 11 || m.Bids().Entry(1).Price() != 99 || m.Bids().Entry(1).Action() != example.ActionModify ||
		m.Asks().Entry(0).Qty() != 7 || m.EncodedLength() != len(b) {
		t.Errorf("longer entries decode wrong: seq %d, bid1 %d, ask qty %d, length %d of %d",
			m.Seq(), m.Bids().Entry(1).Price(), m.Asks().Entry(0).Qty(), m.EncodedLength(), len(b))
	}
}

func TestConstantsEnumsSets(t *testing.T) {
	// Constants occupy no bytes: they read even on the zero value.
	var q example.Quote
	var ask example.Price4
	if q.Venue() != 'X' || ask.Exponent() != -4 {
		t.Errorf("constants read %q %d", q.Venue(), ask.Exponent())
	}
	if example.ActionDelete != 'D' || example.ActionAdd.String() != "Add" || example.Action('Z').String() != "Action(90)" ||
		example.Action('Z').Valid() || !example.ActionModify.Valid() {
		t.Errorf("char enum is wrong")
	}
	if example.Venue16Dark != 2000 || example.Venue16(2000).String() != "Dark" || example.Venue16(3).Valid() {
		t.Errorf("uint16 enum is wrong")
	}
	all := example.Caps32Low | example.Caps32High
	if all != 0x80000001 || !all.Valid() || example.Caps32(2).Valid() || all.String() != "Low|High" {
		t.Errorf("uint32 set is wrong: %x %q", uint32(all), all.String())
	}
	var d example.Decimal
	if err := d.Wrap(make([]byte, example.DecimalEncodedLength-1), 0); err != sbe.ErrShortBuffer {
		t.Errorf("Decimal.Wrap on a short buffer = %v", err)
	}
	buf := make([]byte, example.DecimalEncodedLength)
	if err := d.Wrap(buf, 0); err != nil {
		t.Fatal(err)
	}
	d.SetMantissa(-5)
	d.SetExponent(3)
	if buf[0] != 0xfb || buf[8] != 3 || d.Mantissa() != -5 {
		t.Errorf("Decimal bytes %x", buf)
	}
}

func TestGroupsAllocateNothing(t *testing.T) {
	buf := make([]byte, 128)
	var m, d example.Book
	allocs := testing.AllocsPerRun(200, func() {
		encodeBook(t, &m, buf)
		if d.WrapDecode(buf[:m.EncodedLength()], 0) != nil {
			panic("decode failed")
		}
		bids := d.Bids()
		for i := 0; i < bids.Count(); i++ {
			_ = bids.Entry(i).Price()
		}
	})
	if allocs != 0 {
		t.Errorf("group encode+decode: %v allocs/op", allocs)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(bookGolden)
	for _, newCodec := range codecs {
		c := newCodec()
		buf := make([]byte, 128)
		if err := c.WrapEncode(buf, 0); err != nil {
			f.Fatal(err)
		}
		f.Add(buf[:c.EncodedLength()])
	}
	names := []string{"Book", "Empty", "Quote"}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range names {
			c := codecs[name]()
			if err := c.WrapDecode(data, 0); err != nil {
				if c.EncodedLength() != 0 {
					t.Fatalf("%s refused the bytes (%v) but is wrapped", name, err)
				}
				continue
			}
			sbetest.ReadAll(c)
			if c.EncodedLength() > len(data) {
				t.Fatalf("%s accepted with EncodedLength %d in %d bytes", name, c.EncodedLength(), len(data))
			}
		}
	})
}

// TestTextForm prints a message of each shape through the package-level
// AppendText and compares with the text written out by hand: composites
// and group entries in braces, groups in brackets, constants by value, a
// single char and a char array quoted, floats in their shortest form.
func TestTextForm(t *testing.T) {
	quote := make([]byte, example.QuoteEncodedLength)
	var q example.Quote
	if err := q.WrapEncode(quote, 0); err != nil {
		t.Fatal(err)
	}
	q.SetQuoteID(1)
	q.Bid().SetMantissa(5)
	q.Bid().SetExponent(-1)
	q.SetAction(example.ActionDelete)
	q.SetFlags(example.FlagsLast)
	q.SetVenue16(example.Venue16Main)
	q.SetCaps(example.Caps32High)
	mustNil(t, q.SetSymbolString("AB"))
	q.Ask().SetMantissa(7)
	q.SetCode('Z')
	q.SetI8(-1)
	q.SetI16(-2)
	q.SetI32(-3)
	q.SetU16(4)
	q.SetU32(5)
	q.SetF32(1.5)
	q.SetF64(0.1)
	for _, tt := range []struct {
		name string
		msg  []byte
		want string
	}{
		{"Quote", quote, `Quote quoteId=1 bid={mantissa=5 exponent=-1} action=Delete flags=Last venue16=Main ` +
			`caps=High symbol="AB" ask={mantissa=7 exponent=-4} venue="X" code="Z" i8=-1 i16=-2 i32=-3 u16=4 u32=5 ` +
			`f32=1.5 f64=0.1`},
		{"Book", bookGolden, `Book instrumentId=10 seq=11 bids=[{price=100 qty=5 action=Add} ` +
			`{price=99 qty=6 action=Modify}] asks=[{price={mantissa=101 exponent=-2} qty=7 flags=Last|Implied}]`},
		{"Empty", emptyMessage(t), "Empty"},
	} {
		got, err := example.AppendText(nil, tt.msg, 0)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if string(got) != tt.want {
			t.Errorf("%s text\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func emptyMessage(t *testing.T) []byte {
	buf := make([]byte, example.EmptyEncodedLength)
	var m example.Empty
	mustNil(t, m.WrapEncode(buf, 0))
	return buf
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
