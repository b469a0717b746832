package gateway

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/quickfixgo/quickfix"
)

// TestNonPrintable: the first field holding a byte outside printable ASCII
// is found, whatever the byte (a control character, DEL, one of UTF-8's),
// and a data field, which a length field gives and which may hold any byte,
// is passed over, not the field after it.
func TestNonPrintable(t *testing.T) {
	const order = "8=FIX.4.4|9=99|35=D|34=2|49=C|52=20261207-10:00:00.000|56=V|11=ok|55=ACME|54=1|38=10|40=2|44=100.00|"
	cases := []struct {
		name  string
		raw   string // '|' for SOH
		tag   quickfix.Tag
		b     byte
		found bool
	}{
		{"printable", order + "10=000|", 0, 0, false},
		{"every printable byte", order + "58= !~{}=|10=000|", 0, 0, false},
		{"UTF-8 in ClOrdID", strings.Replace(order, "11=ok", "11=o\u00e9", 1) + "10=000|", 11, 0xC3, true},
		{"TAB", order + "1=a\tb|10=000|", 1, '\t', true},
		{"DEL", order + "1=ab\x7f|10=000|", 1, 0x7F, true},
		{"the first of two", order + "58=\xc1|1=\x80|10=000|", 58, 0xC1, true},
		{"MsgType", strings.Replace(order, "35=D", "35=\xc1", 1) + "10=000|", 35, 0xC1, true},
		{"SenderSubID", strings.Replace(order, "49=C|", "49=C|50=\xf5|", 1) + "10=000|", 50, 0xF5, true},
		{"a data field", order + "95=5|96=\xc1\x00\x01\xff\x7f|10=000|", 0, 0, false},
		{"after a data field", order + "95=1|96=\xc1|58=\xc2|10=000|", 58, 0xC2, true},
		{"an encoded field", order + "354=2|355=\xe9\xe9|10=000|", 0, 0, false},
	}
	for _, c := range cases {
		raw := []byte(strings.ReplaceAll(c.raw, "|", "\x01"))
		tg, b, found := nonPrintable(raw)
		if tg != c.tag || b != c.b || found != c.found {
			t.Errorf("%s: tag %d byte %#x found %v, want %d %#x %v", c.name, tg, b, found, c.tag, c.b, c.found)
		}
	}
}

// BenchmarkNonPrintable is the check's cost on an order of printable bytes,
// the case of every message on the order path.
func BenchmarkNonPrintable(b *testing.B) {
	raw := []byte(strings.ReplaceAll("8=FIX.4.4|9=160|35=D|34=1234|49=CLIENT1|52=20261207-10:00:00.000|56=VENUE|"+
		"11=order-000001234|1=ACCOUNT1|55=ACME|54=1|60=20261207-10:00:00.000|38=100|40=2|44=100.25|59=0|10=123|", "|", "\x01"))
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, _, found := nonPrintable(raw); found {
			b.Fatal("found")
		}
	}
}

// TestAllPrintableOrSOH holds the eight-bytes-at-a-time check to the plain
// definition: every byte value at every position of a word and of the tail,
// then random messages.
func TestAllPrintableOrSOH(t *testing.T) {
	plain := func(raw []byte) bool {
		for _, c := range raw {
			if (c < ' ' && c != 0x01) || c > '~' {
				return false
			}
		}
		return true
	}
	buf := make([]byte, 19)
	for v := 0; v < 256; v++ {
		for p := range buf {
			for i := range buf {
				buf[i] = 'a'
			}
			buf[p] = byte(v)
			if got, want := allPrintableOrSOH(buf), plain(buf); got != want {
				t.Fatalf("byte %#x at %d: %v, want %v", v, p, got, want)
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for range 100000 {
		raw := make([]byte, rng.IntN(40))
		for i := range raw {
			// Mostly printable and SOH, as messages are, with a byte of
			// any value now and then.
			switch r := rng.IntN(20); {
			case r == 0:
				raw[i] = byte(rng.IntN(256))
			case r == 1:
				raw[i] = 0x01
			default:
				raw[i] = byte(' ' + rng.IntN('~'-' '+1))
			}
		}
		if got, want := allPrintableOrSOH(raw), plain(raw); got != want {
			t.Fatalf("%q: %v, want %v", raw, got, want)
		}
	}
}
