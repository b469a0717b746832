package venue_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/fixvenue/fixvenue/sbe"
	"github.com/fixvenue/fixvenue/sbe/internal/sbetest"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// encodedNewOrder returns a valid NewOrder of n bytes (n ≥ its encoded
// length) with a few fields set.
func encodedNewOrder(t *testing.T, n int) []byte {
	t.Helper()
	buf := make([]byte, n)
	var m venue.NewOrder
	if err := m.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	m.SetSeq(99)
	m.SetQty(5)
	mustSet(t, m.SetClOrdIDString("X"))
	return buf
}

func TestWrapDecodeRefuses(t *testing.T) {
	good := encodedNewOrder(t, venue.NewOrderEncodedLength)
	with := func(edit func(b []byte)) []byte {
		b := bytes.Clone(good)
		edit(b)
		return b
	}
	tests := []struct {
		name string
		buf  []byte
		off  int
		want error
	}{
		{"nil buffer", nil, 0, sbe.ErrShortBuffer},
		{"header cut", good[:venue.MessageHeaderSize-1], 0, sbe.ErrShortBuffer},
		{"block cut", good[:venue.NewOrderEncodedLength-1], 0, sbe.ErrShortBuffer},
		{"negative offset", good, -1, sbe.ErrShortBuffer},
		{"offset past the end", good, len(good) + 1, sbe.ErrShortBuffer},
		{"block cut at an offset", append([]byte{0, 0}, good[:len(good)-1]...), 2, sbe.ErrShortBuffer},
		{"at an offset", append([]byte{0, 0}, good...), 2, nil},
		{"wrong schema", with(func(b []byte) { binary.LittleEndian.PutUint16(b[4:], venue.SchemaID+1) }), 0, sbe.ErrWrongSchema},
		{"wrong template", with(func(b []byte) { binary.LittleEndian.PutUint16(b[2:], venue.FillTemplateID) }), 0, sbe.ErrWrongTemplate},
		{"block shorter than ours", with(func(b []byte) {
			binary.LittleEndian.PutUint16(b[0:], uint16(venue.NewOrderBlockLength-1))
		}), 0, sbe.ErrBlockLength},
		{"block longer than the buffer", with(func(b []byte) {
			binary.LittleEndian.PutUint16(b[0:], uint16(venue.NewOrderBlockLength+1))
		}), 0, sbe.ErrShortBuffer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m venue.NewOrder
			err := m.WrapDecode(tt.buf, tt.off)
			if err != tt.want {
				t.Fatalf("WrapDecode = %v, want %v", err, tt.want)
			}
			if err == nil {
				if m.Seq() != 99 || m.EncodedLength() != venue.NewOrderEncodedLength {
					t.Errorf("decoded seq %d, length %d", m.Seq(), m.EncodedLength())
				}
				return
			}
			// A failed wrap leaves the flyweight unwrapped: its length is 0,
			// and an accessor panics instead of reading zeros or dropping a
			// write, without touching the buffer.
			if m.EncodedLength() != 0 {
				t.Errorf("EncodedLength after a failed WrapDecode = %d", m.EncodedLength())
			}
			before := bytes.Clone(tt.buf)
			for name, use := range map[string]func(){
				"Seq":              func() { _ = m.Seq() },
				"ClOrdID":          func() { _ = m.ClOrdID() },
				"SetSeq":           func() { m.SetSeq(1) },
				"SetClOrdIDString": func() { _ = m.SetClOrdIDString("Y") },
			} {
				if !sbetest.Panics(use) {
					t.Errorf("%s on an unwrapped flyweight did not panic", name)
				}
			}
			if !bytes.Equal(before, tt.buf) {
				t.Errorf("setters after a failed WrapDecode wrote the buffer")
			}
		})
	}
}

// A sender with a newer schema version may append fields: a longer block is
// accepted, read at our offsets, and counted by EncodedLength.
func TestWrapDecodeAcceptsLongerBlock(t *testing.T) {
	const extra = 16
	buf := encodedNewOrder(t, venue.NewOrderEncodedLength+extra)
	binary.LittleEndian.PutUint16(buf[0:], uint16(venue.NewOrderBlockLength+extra))
	var m venue.NewOrder
	if err := m.WrapDecode(buf, 0); err != nil {
		t.Fatal(err)
	}
	if m.Seq() != 99 || m.Qty() != 5 || string(m.ClOrdID()) != "X" {
		t.Errorf("fields of a longer block read wrong: seq %d qty %d clOrdId %q", m.Seq(), m.Qty(), m.ClOrdID())
	}
	if got := m.EncodedLength(); got != venue.NewOrderEncodedLength+extra {
		t.Errorf("EncodedLength = %d, want %d", got, venue.NewOrderEncodedLength+extra)
	}
}

func TestWrapEncodeShortBuffer(t *testing.T) {
	buf := bytes.Repeat([]byte{0xEE}, venue.NewOrderEncodedLength+2)
	var m venue.NewOrder
	for _, off := range []int{-1, 3, len(buf)} {
		if err := m.WrapEncode(buf, off); err != sbe.ErrShortBuffer {
			t.Errorf("WrapEncode at %d = %v, want ErrShortBuffer", off, err)
		}
	}
	if !bytes.Equal(buf, bytes.Repeat([]byte{0xEE}, len(buf))) {
		t.Errorf("a refused WrapEncode wrote the buffer")
	}
	if err := m.WrapEncode(buf, 2); err != nil {
		t.Fatalf("WrapEncode at the last offset that fits: %v", err)
	}
	if !bytes.Equal(buf[2+venue.MessageHeaderSize:], make([]byte, venue.NewOrderBlockLength)) {
		t.Errorf("WrapEncode did not zero the block")
	}
}

// The zero flyweight is unwrapped: its length is 0 and its accessors panic,
// so that code that ignored a failed Wrap cannot read zeros or lose writes.
func TestZeroValueFlyweight(t *testing.T) {
	var m venue.Fill
	if m.EncodedLength() != 0 {
		t.Errorf("the zero flyweight has length %d", m.EncodedLength())
	}
	for name, use := range map[string]func(){
		"CauseSeq":     func() { _ = m.CauseSeq() },
		"Side":         func() { _ = m.Side() },
		"ClOrdIDArray": func() { _ = m.ClOrdIDArray() },
		"SetCauseSeq":  func() { m.SetCauseSeq(1) },
		"SetAccount":   func() { _ = m.SetAccount([]byte("a")) },
		"AppendText":   func() { _ = m.AppendText(nil) },
	} {
		if !sbetest.Panics(use) {
			t.Errorf("%s on the zero flyweight did not panic", name)
		}
	}
}

func TestCharArrays(t *testing.T) {
	buf := make([]byte, venue.NewOrderEncodedLength)
	var m venue.NewOrder
	if err := m.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	full := bytes.Repeat([]byte{'a'}, venue.ClOrdIDLength)
	mustSet(t, m.SetClOrdID(full))
	if !bytes.Equal(m.ClOrdID(), full) {
		t.Errorf("a full-length ClOrdID reads back as %q", m.ClOrdID())
	}
	// Too long: refused, and the previous value stays.
	if err := m.SetClOrdID(append(full, 'b')); err != sbe.ErrValueTooLong {
		t.Errorf("SetClOrdID(37 bytes) = %v, want ErrValueTooLong", err)
	}
	if err := m.SetClOrdIDString(string(append(full, 'b'))); err != sbe.ErrValueTooLong {
		t.Errorf("SetClOrdIDString(37 bytes) = %v, want ErrValueTooLong", err)
	}
	if !bytes.Equal(m.ClOrdID(), full) {
		t.Errorf("a refused SetClOrdID wrote %q", m.ClOrdID())
	}
	// Shorter: the old tail is cleared, not left behind the NUL.
	mustSet(t, m.SetClOrdIDString("abc"))
	clOrdIDAt := venue.MessageHeaderSize + 52
	want := append([]byte("abc"), make([]byte, venue.ClOrdIDLength-3)...)
	if !bytes.Equal(buf[clOrdIDAt:clOrdIDAt+venue.ClOrdIDLength], want) {
		t.Errorf("ClOrdID bytes %q, want abc and NUL padding", buf[clOrdIDAt:clOrdIDAt+venue.ClOrdIDLength])
	}
	// The getter aliases the buffer and cannot be appended into the padding.
	got := m.ClOrdID()
	if cap(got) != len(got) {
		t.Errorf("ClOrdID has spare capacity %d into the padding", cap(got)-len(got))
	}
	buf[clOrdIDAt] = 'z'
	if got[0] != 'z' {
		t.Errorf("ClOrdID copied the buffer")
	}
	mustSet(t, m.SetAccount(nil))
	if len(m.Account()) != 0 || venue.AccountLength != 16 {
		t.Errorf("empty Account reads %q; AccountLength %d", m.Account(), venue.AccountLength)
	}
}

func TestTemplateIDOf(t *testing.T) {
	buf := make([]byte, 4+venue.FillEncodedLength)
	var m venue.Fill
	if err := m.WrapEncode(buf, 4); err != nil {
		t.Fatal(err)
	}
	if id, err := venue.TemplateIDOf(buf, 4); err != nil || id != venue.FillTemplateID {
		t.Errorf("TemplateIDOf = %d, %v; want %d", id, err, venue.FillTemplateID)
	}
	if _, err := venue.TemplateIDOf(buf[:4+venue.MessageHeaderSize-1], 4); err != sbe.ErrShortBuffer {
		t.Errorf("TemplateIDOf on a cut header = %v", err)
	}
	if _, err := venue.TemplateIDOf(buf, -4); err != sbe.ErrShortBuffer {
		t.Errorf("TemplateIDOf at a negative offset = %v", err)
	}
	binary.LittleEndian.PutUint16(buf[4+4:], 2)
	if _, err := venue.TemplateIDOf(buf, 4); err != sbe.ErrWrongSchema {
		t.Errorf("TemplateIDOf on another schema = %v", err)
	}
	if venue.MessageName(venue.FillTemplateID) != "Fill" || venue.MessageName(999) != "" {
		t.Errorf("MessageName: %q %q", venue.MessageName(venue.FillTemplateID), venue.MessageName(999))
	}
}

func TestMessageHeaderComposite(t *testing.T) {
	var h venue.MessageHeader
	if err := h.Wrap(newOrderGolden, 0); err != nil {
		t.Fatal(err)
	}
	if h.BlockLength() != uint16(venue.NewOrderBlockLength) || h.TemplateID() != venue.NewOrderTemplateID ||
		h.SchemaID() != venue.SchemaID || h.Version() != venue.SchemaVersion {
		t.Errorf("header reads %d %d %d %d", h.BlockLength(), h.TemplateID(), h.SchemaID(), h.Version())
	}
	if err := h.Wrap(newOrderGolden[:7], 0); err != sbe.ErrShortBuffer || !sbetest.Panics(func() { h.TemplateID() }) {
		t.Errorf("Wrap on 7 bytes = %v, or left the composite wrapped", err)
	}
}

func TestEnums(t *testing.T) {
	tests := []struct {
		v     interface{ String() string }
		valid bool
		want  string
	}{
		{venue.SideBuy, venue.SideBuy.Valid(), "Buy"},
		{venue.Side(7), venue.Side(7).Valid(), "Side(7)"},
		{venue.Side(0), venue.Side(0).Valid(), "Side(0)"},
		{venue.TimeInForceIOC, venue.TimeInForceIOC.Valid(), "IOC"},
		{venue.TimeInForce(5), venue.TimeInForce(5).Valid(), "TimeInForce(5)"},
		{venue.TimeInForceAtTheClose, venue.TimeInForceAtTheClose.Valid(), "AtTheClose"},
		{venue.OrdStatusUnknown, venue.OrdStatusUnknown.Valid(), "Unknown"},
		{venue.RejectReasonDuplicateClOrdID, venue.RejectReasonDuplicateClOrdID.Valid(), "DuplicateClOrdId"},
		{venue.RejectReasonOrderIDMismatch, venue.RejectReasonOrderIDMismatch.Valid(), "OrderIdMismatch"},
		{venue.CancelReasonSelfTrade, venue.CancelReasonSelfTrade.Valid(), "SelfTrade"},
		{venue.BooleanTypeFalse, venue.BooleanTypeFalse.Valid(), "False"},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		if wantValid := tt.want[len(tt.want)-1] != ')'; tt.valid != wantValid {
			t.Errorf("%s.Valid() = %v", tt.want, tt.valid)
		}
	}
	if venue.SideBuy != 1 || venue.SideSell != 2 || venue.TimeInForceGTD != 6 || venue.OrdStatusExpired != 12 {
		t.Errorf("enum values differ from the schema")
	}
}

func TestSets(t *testing.T) {
	both := venue.OrderFlagsPostOnly | venue.OrderFlagsPossResend
	if venue.OrderFlagsPostOnly != 1 || venue.OrderFlagsPossResend != 2 {
		t.Errorf("set bits differ from the schema")
	}
	if !both.Has(venue.OrderFlagsPossResend) || venue.OrderFlagsPostOnly.Has(both) || !venue.OrderFlags(0).Has(0) {
		t.Errorf("Has is wrong")
	}
	if !both.Valid() || !venue.OrderFlagsIceberg.Valid() || venue.OrderFlags(8).Valid() {
		t.Errorf("Valid is wrong")
	}
	for v, want := range map[venue.OrderFlags]string{0: "none", both: "PostOnly|PossResend", 0x81: "PostOnly|bit7"} {
		if got := v.String(); got != want {
			t.Errorf("OrderFlags(%d).String() = %q, want %q", uint8(v), got, want)
		}
	}
}

// OverwriteFill writes the header and leaves the block as the buffer held
// it, for an encoder that sets every field; WrapEncode zeroes it.
func TestOverwriteKeepsTheBlock(t *testing.T) {
	buf := bytes.Repeat([]byte{0xEE}, venue.FillEncodedLength)
	m, ok := venue.OverwriteFill(buf)
	if !ok {
		t.Fatal("OverwriteFill refused a buffer of FillEncodedLength")
	}
	id, err := venue.TemplateIDOf(buf, 0)
	if err != nil || id != venue.FillTemplateID || m.EncodedLength() != venue.FillEncodedLength {
		t.Fatalf("header: template %d (%v), length %d", id, err, m.EncodedLength())
	}
	if !bytes.Equal(buf[venue.MessageHeaderSize:], bytes.Repeat([]byte{0xEE}, venue.FillBlockLength)) {
		t.Errorf("OverwriteFill changed the block")
	}
	ref := make([]byte, venue.FillEncodedLength)
	var r venue.Fill
	if err := r.WrapEncode(ref, 0); err != nil || !bytes.Equal(buf[:venue.MessageHeaderSize], ref[:venue.MessageHeaderSize]) {
		t.Errorf("OverwriteFill header %x, WrapEncode's %x (%v)", buf[:venue.MessageHeaderSize], ref[:venue.MessageHeaderSize], err)
	}
	short := bytes.Repeat([]byte{0xEE}, venue.FillEncodedLength-1)
	if m, ok := venue.OverwriteFill(short); ok || m.EncodedLength() != 0 || !bytes.Equal(short, bytes.Repeat([]byte{0xEE}, len(short))) {
		t.Errorf("OverwriteFill on a short buffer: ok %v, length %d, buffer %x", ok, m.EncodedLength(), short)
	}
}

// DecodeNewOrder accepts exactly what WrapDecode(buf, 0) accepts, over the
// cases of TestWrapDecodeRefuses at offset 0 and random edits of the header.
func TestDecodeAgreesWithWrapDecode(t *testing.T) {
	good := encodedNewOrder(t, venue.NewOrderEncodedLength+4)
	bufs := [][]byte{nil, good[:7], good[:8], good[:venue.NewOrderEncodedLength-1], good[:venue.NewOrderEncodedLength], good}
	for i := range 8 * 256 {
		b := bytes.Clone(good)
		b[i/256] = byte(i) // every value of every header byte
		bufs = append(bufs, b)
	}
	for _, b := range bufs {
		var w venue.NewOrder
		err := w.WrapDecode(b, 0)
		d, ok := venue.DecodeNewOrder(b)
		if ok != (err == nil) {
			t.Fatalf("header %x, %d bytes: DecodeNewOrder ok %v, WrapDecode %v", b[:min(8, len(b))], len(b), ok, err)
		}
		if ok && (d.Seq() != w.Seq() || d.EncodedLength() != w.EncodedLength()) {
			t.Fatalf("DecodeNewOrder and WrapDecode read different messages")
		}
	}
}
