package edge

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/internal/fixwire"
	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/quickfix/datadictionary"
)

// frameEvents feeds input to a fresh framer chunk bytes at a time and
// returns what it decided, one string per event: "ok:<message>",
// "unusable:<reason>", "drop:<reason>" or "fatal:<reason>".
func frameEvents(input []byte, chunk int, bodyMax int, dropEmpty bool) (events []string, garbage int) {
	f := newFramer(bodyMax, dropEmpty)
	for len(input) > 0 || chunk < 0 {
		space := f.space()
		n := min(len(space), chunk, len(input))
		copy(space, input[:n])
		f.wrote(n)
		input = input[n:]
		for {
			v := f.next()
			if v == needMore {
				break
			}
			switch v {
			case frameOK:
				events = append(events, "ok:"+string(f.message()))
			case frameUnusable:
				events = append(events, "unusable:"+f.reason.String())
			case frameDrop:
				events = append(events, "drop:"+f.reason.String())
			case frameFatal:
				events = append(events, "fatal:"+f.reason.String())
				return events, garbage + f.takeGarbage()
			}
		}
		garbage += f.takeGarbage()
	}
	return events, garbage
}

// A good message appended after each bad one shows the framer resynchronises.
var goodMsg = fixMsg("35=0", "34=7", "49=CLIENT1", "52=20260101-00:00:00.000", "56=VENUE")

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestFramerTable(t *testing.T) {
	nos := []string{"11=C1", "55=ACME", "54=1", "38=10", "40=2", "44=100"}
	hdr := []string{"35=D", "34=2", "49=CLIENT1", "52=20260101-00:00:00.000", "56=VENUE"}
	msgD := func(extra ...string) []byte {
		return fixMsg(append(append(append([]string{}, hdr...), nos...), extra...)...)
	}
	withBody := func(extra ...string) []byte { return fixMsg(append(append([]string{}, hdr...), extra...)...) }
	badSum := func(m []byte) []byte {
		out := append([]byte(nil), m...)
		d := &out[len(out)-2]
		*d = '0' + (*d-'0'+1)%10
		return out
	}
	body := strings.Join(append(append([]string{}, hdr...), nos...), sohStr) + sohStr
	withLen := func(n string) []byte {
		return rawMsg("8=FIX.4.4"+sohStr+"9="+n+sohStr, strings.TrimSuffix(body, sohStr))
	}
	ok := func(m []byte) string { return "ok:" + string(m) }
	okGood := ok(goodMsg)

	tests := []struct {
		name   string
		input  []byte
		want   []string
		max    int
		garbge int // expected garbage bytes, -1 to skip
	}{
		{"one message", goodMsg, []string{okGood}, 0, 0},
		{"two messages", cat(msgD(), goodMsg), []string{ok(msgD()), okGood}, 0, 0},
		{"garbage before 8=", cat([]byte("xx88=F\x01junk"), goodMsg), []string{okGood}, 0, 11},
		{"only garbage", []byte("hello world 8=FOO"), nil, 0, 17},
		{"bad checksum", cat(badSum(msgD()), goodMsg), []string{"drop:bad_checksum", okGood}, 0, 0},
		{"checksum not digits", cat(bytes.Replace(msgD(), []byte("\x0110="), []byte("\x0110=a"), 1)[:len(msgD())], goodMsg), []string{"drop:bad_checksum", okGood}, 0, -1},
		{"checksum two digits", cat(append(msgD()[:len(msgD())-2], 1), goodMsg), []string{"drop:bad_checksum", okGood}, 0, -1},
		{"body length too short", cat(withLen(strconv.Itoa(len(body)-3)), goodMsg), []string{"drop:bad_body_length", okGood}, 0, -1},
		{"body length too long", cat(withLen(strconv.Itoa(len(body)+40)), goodMsg), []string{"drop:bad_body_length", okGood}, 0, -1},
		{"body length not digits", cat(withLen("1x2"), goodMsg), []string{"drop:bad_body_length", okGood}, 0, -1},
		{"body length empty", cat(withLen(""), goodMsg), []string{"drop:bad_body_length", okGood}, 0, -1},
		{"body length negative", cat(withLen("-5"), goodMsg), []string{"drop:bad_body_length", okGood}, 0, -1},
		{"body length below minimum", cat(withLen("3"), goodMsg), []string{"drop:bad_body_length", okGood}, 0, -1},
		{"body length over max", withLen("65537"), []string{"fatal:oversize"}, 0, 0},
		{"body length huge", withLen("999999999"), []string{"fatal:oversize"}, 0, 0},
		{"body length ten digits", withLen("0000000100"), []string{"fatal:oversize"}, 0, 0},
		{"body length at small max", withLen(strconv.Itoa(len(body))), []string{"fatal:oversize"}, len(body) - 1, 0},
		{"BeginString not a version", cat(fixMsgBegin("FIXME"), goodMsg), []string{"drop:bad_header", okGood}, 0, -1},
		{"BeginString too long", cat(fixMsgBegin("FIX.4.4.4.4.4.4.4.4", "35=0"), goodMsg), []string{"drop:bad_header", okGood}, 0, -1},
		{"other FIX version framed", fixMsgBegin("FIX.4.2", "35=0"), []string{ok(fixMsgBegin("FIX.4.2", "35=0"))}, 0, 0},
		{"FIXT framed", fixMsgBegin("FIXT.1.1", "35=0"), []string{ok(fixMsgBegin("FIXT.1.1", "35=0"))}, 0, 0},
		{"9 not second", cat(rawMsg("8=FIX.4.4"+sohStr+"35=0"+sohStr+"9=5", "49=X"), goodMsg), []string{"drop:bad_header", okGood}, 0, -1},
		{"35 not third", cat(fixMsg("49=CLIENT1", "35=0"), goodMsg), []string{"drop:bad_header", okGood}, 0, -1},
		{"empty MsgType", cat(fixMsg("35=", "49=CLIENT1"), goodMsg), []string{"drop:bad_header", okGood}, 0, -1},
		{"MsgType not printable ASCII", cat(fixMsg("35=D\xff", "49=CLIENT1"), fixMsg("35=\x7f", "49=CLIENT1"), goodMsg), []string{"drop:bad_header", "drop:bad_header", okGood}, 0, -1},
		{"second BodyLength empty", cat(msgD("9="), goodMsg), []string{"drop:repeated_framing_field", okGood}, 0, -1},
		{"second BodyLength", cat(msgD("9=12"), goodMsg), []string{"drop:repeated_framing_field", okGood}, 0, -1},
		{"second MsgType", cat(msgD("35=A"), goodMsg), []string{"drop:repeated_framing_field", okGood}, 0, -1},
		{"second BeginString", cat(msgD("8=FIX.4.4"), goodMsg), []string{"drop:repeated_framing_field", "drop:bad_header", okGood}, 0, -1},
		{"CheckSum inside body", cat(msgD("10=000"), goodMsg), []string{"drop:bad_body_length", okGood}, 0, -1},
		{"empty MsgSeqNum", cat(fixMsg("35=0", "34=", "49=CLIENT1"), goodMsg), []string{"unusable:bad_msg_seq_num", okGood}, 0, -1},
		{"second MsgSeqNum empty", cat(msgD("34="), goodMsg), []string{"unusable:bad_msg_seq_num", okGood}, 0, -1},
		{"MsgSeqNum not digits", cat(fixMsg("35=0", "34=1a", "49=CLIENT1"), goodMsg), []string{"unusable:bad_msg_seq_num", okGood}, 0, -1},
		{"MsgSeqNum negative", cat(fixMsg("35=0", "34=-1", "49=CLIENT1"), goodMsg), []string{"unusable:bad_msg_seq_num", okGood}, 0, -1},
		{"MsgSeqNum 19 digits", cat(fixMsg("35=0", "34=1234567890123456789"), goodMsg), []string{"unusable:bad_msg_seq_num", okGood}, 0, -1},
		{"MsgSeqNum 18 digits", fixMsg("35=0", "34=123456789012345678"), []string{ok(fixMsg("35=0", "34=123456789012345678"))}, 0, 0},
		{"XmlDataLen empty", cat(withBody("212=", "213=<a/>"), goodMsg), []string{"drop:bad_data_length", okGood}, 0, -1},
		{"XmlDataLen larger than data", cat(withBody("212=500", "213=<a/>"), goodMsg), []string{"drop:bad_data_length", okGood}, 0, -1},
		{"XmlDataLen larger than message", cat(withBody("212=60", "213=<a/>", "55=ACME"), goodMsg), []string{"drop:bad_data_length", okGood}, 0, -1},
		{"XmlDataLen smaller than data", cat(withBody("212=2", "213=<a/>"), goodMsg), []string{"drop:bad_data_length", okGood}, 0, -1},
		{"XmlDataLen not followed by XmlData", cat(withBody("212=4", "55=ACME"), goodMsg), []string{"drop:bad_data_length", okGood}, 0, -1},
		{"XmlDataLen last field", cat(withBody("212=4"), goodMsg), []string{"drop:bad_data_length", okGood}, 0, -1},
		{"XmlDataLen not digits", cat(withBody("212=x", "213=<a/>"), goodMsg), []string{"drop:bad_data_length", okGood}, 0, -1},
		{"XmlData with SOH", withBody("212=8", "213=<a>\x01</a>"), []string{ok(withBody("212=8", "213=<a>\x01</a>"))}, 0, 0},
		{"RawData with SOH", cat(withBody("95=8", "96=<a>\x01</a>"), goodMsg), []string{"drop:data_with_soh", okGood}, 0, -1},
		{"RawData", withBody("95=4", "96=abcd"), []string{ok(withBody("95=4", "96=abcd"))}, 0, 0},
		{"Signature in trailer", withBody("93=3", "89=xyz"), []string{ok(withBody("93=3", "89=xyz"))}, 0, 0},
		{"tag not digits", cat(withBody("5x=1"), goodMsg), []string{"drop:bad_field", okGood}, 0, -1},
		{"tag leading zero", cat(withBody("055=ACME"), goodMsg), []string{"drop:bad_field", okGood}, 0, -1},
		{"tag zero passes (QuickFIX/Go rejects it, 373=0)", withBody("0=HI"), []string{ok(withBody("0=HI"))}, 0, 0},
		{"negative tag passes (QuickFIX/Go rejects it, 373=0)", withBody("-1=HI"), []string{ok(withBody("-1=HI"))}, 0, 0},
		{"lone minus", cat(withBody("-=HI"), goodMsg), []string{"drop:bad_field", okGood}, 0, -1},
		{"tag ten digits passes (QuickFIX/Go rejects it, 373=0)", withBody("1234567890=1"), []string{ok(withBody("1234567890=1"))}, 0, 0},
		{"tag eighteen digits", withBody("123456789012345678=1"), []string{ok(withBody("123456789012345678=1"))}, 0, 0},
		{"tag nineteen digits", cat(withBody("1234567890123456789=1"), goodMsg), []string{"drop:bad_field", okGood}, 0, -1},
		{"negative tag nineteen digits", cat(withBody("-1234567890123456789=1"), goodMsg), []string{"drop:bad_field", okGood}, 0, -1},
		{"tag nine digits", withBody("123456789=1"), []string{ok(withBody("123456789=1"))}, 0, 0},
		{"field without =", cat(withBody("55ACME"), goodMsg), []string{"drop:bad_field", okGood}, 0, -1},
		{"empty tag", cat(withBody("=ACME"), goodMsg), []string{"drop:bad_field", okGood}, 0, -1},
		{"empty value passes", msgD("58="), []string{ok(msgD("58="))}, 0, 0},
		{"truncated message glued to the next", cat(msgD()[:30], goodMsg), []string{"drop:repeated_framing_field", okGood}, 0, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = DefaultMessageBytesMax
			}
			for _, chunk := range []int{1, 7, 1 << 20} {
				got, garbage := frameEvents(tc.input, chunk, max, false)
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("chunk %d: got\n%q\nwant\n%q", chunk, got, tc.want)
				}
				if tc.garbge >= 0 && garbage != tc.garbge {
					t.Fatalf("chunk %d: garbage %d bytes, want %d", chunk, garbage, tc.garbge)
				}
			}
		})
	}
}

func TestFramerEmptyValue(t *testing.T) {
	m := fixMsg("35=D", "34=2", "49=CLIENT1", "44=", "58=")
	got, _ := frameEvents(cat(m, goodMsg), 1<<20, DefaultMessageBytesMax, true)
	if want := []string{"unusable:empty_value", "ok:" + string(goodMsg)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("DropEmptyValues: got %q want %q", got, want)
	}
	f := newFramer(DefaultMessageBytesMax, false)
	copy(f.space(), m)
	f.wrote(len(m))
	if v := f.next(); v != frameOK || f.emptyTag != 44 {
		t.Fatalf("verdict %v emptyTag %d, want ok and 44", v, f.emptyTag)
	}
}

// TestFramerBufferGrowsOnce: a connection starts with a small buffer and
// grows it once, to the largest message, when a message needs it.
func TestFramerBufferGrowsOnce(t *testing.T) {
	big := fixMsg("35=D", "34=2", "58="+strings.Repeat("x", 20000))
	input := cat(goodMsg, big, goodMsg, big)
	got, _ := frameEvents(input, 3000, DefaultMessageBytesMax, false)
	want := []string{"ok:" + string(goodMsg), "ok:" + string(big), "ok:" + string(goodMsg), "ok:" + string(big)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	f := newFramer(DefaultMessageBytesMax, false)
	if len(f.buf) != initialBufferBytes {
		t.Fatalf("initial buffer %d bytes", len(f.buf))
	}
	if f.bufferBytesMax != DefaultMessageBytesMax+headerBytesMax+trailerBytes {
		t.Fatalf("buffer bound %d", f.bufferBytesMax)
	}
}

// TestFramerLargestMessage: a message of exactly MessageBytesMax body fits.
func TestFramerLargestMessage(t *testing.T) {
	const max = 1000
	pad := max - len("35=D\x01") - len("58=\x01")
	m := fixMsg("35=D", "58="+strings.Repeat("y", pad))
	got, _ := frameEvents(m, 100, max, false)
	if len(got) != 1 || got[0] != "ok:"+string(m) {
		t.Fatalf("got %q", got)
	}
	got, _ = frameEvents(fixMsg("35=D", "58="+strings.Repeat("y", pad+1)), 100, max, false)
	if len(got) != 1 || got[0] != "fatal:oversize" {
		t.Fatalf("one byte over: got %q", got)
	}
}

// benchMessages fills a framer's buffer with copies of a NewOrderSingle.
func benchFramer(tb testing.TB) (*framer, int) {
	msg := fixMsg("35=D", "34=1234", "49=CLIENT1", "52=20260101-12:00:00.000", "56=VENUE",
		"11=ORDER-000001", "21=1", "55=ACME", "54=1", "60=20260101-12:00:00.000", "38=100", "40=2", "44=100.25", "59=0")
	f := newFramer(DefaultMessageBytesMax, false)
	space := f.space()
	n := 0
	for n+len(msg) <= len(space) {
		n += copy(space[n:], msg)
	}
	f.wrote(n)
	return f, n / len(msg)
}

// frameOne frames the next message, rewinding over the preloaded buffer.
func frameOne(f *framer, filled int) {
	if f.pos == filled {
		f.start, f.pos = 0, 0
	}
	if f.next() != frameOK {
		panic("benchmark message not framed")
	}
}

func TestFramerAllocations(t *testing.T) {
	f, _ := benchFramer(t)
	filled := f.end
	allocs := testing.AllocsPerRun(1000, func() { frameOne(f, filled) })
	if allocs != 0 {
		t.Fatalf("framing a message allocates %v times", allocs)
	}
}

func BenchmarkFramer(b *testing.B) {
	f, count := benchFramer(b)
	filled := f.end
	b.SetBytes(int64(filled / count))
	b.ReportAllocs()
	for b.Loop() {
		frameOne(f, filled)
	}
}

// qfDictionary is the FIX44 dictionary for the fuzz targets, or nil.
var qfDictionary = func() func() *datadictionary.DataDictionary {
	var dd *datadictionary.DataDictionary
	var done bool
	return func() *datadictionary.DataDictionary {
		if !done {
			done = true
			dd, _ = datadictionary.Parse(dictionaryPath)
		}
		return dd
	}
}()

// FuzzFramer checks, for any input: the framer never panics; it decides
// the same whichever way the input is split into reads; every message it
// accepts is framed exactly (BodyLength, CheckSum), has a usable MsgSeqNum
// if any, and is parsed by QuickFIX/Go v0.9.11 without a panic.
func FuzzFramer(f *testing.F) {
	f.Add(goodMsg)
	f.Add(fixMsg("35=0", "34=", "49=CLIENT1"))
	f.Add(fixMsg("35=D", "34=2", "49=CLIENT1", "55=ACME", "9="))
	f.Add(fixMsg("35=D", "34=2", "49=CLIENT1", "212=500", "213=<a/>"))
	f.Add(fixMsg("35=D", "34=2", "212=8", "213=<a>\x01</a>"))
	f.Add(cat([]byte("junk8=FIX"), goodMsg, goodMsg[:20]))
	dd := qfDictionary()
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, _ := frameEvents(data, 1<<30, 256, false)
		split, _ := frameEvents(data, 1+len(data)%13, 256, false)
		if fmt.Sprint(whole) != fmt.Sprint(split) {
			t.Fatalf("split reads change the result:\n%q\n%q", whole, split)
		}
		for _, e := range whole {
			m, ok := strings.CutPrefix(e, "ok:")
			if !ok {
				continue
			}
			checkFramed(t, []byte(m))
			msg := quickfix.NewMessage()
			_ = quickfix.ParseMessageWithDataDictionary(msg, bytes.NewBufferString(m), dd, dd)
		}
	})
}

// checkFramed verifies a message independently of the framer, with
// fixwire: BeginString, BodyLength and CheckSum right, and fields that
// fixwire's iterator reads to the end (the Logon gate relies on it).
func checkFramed(t *testing.T, m []byte) {
	t.Helper()
	if err := verifyFraming(m); err != nil {
		t.Fatal(err)
	}
	it := fixwire.NewIterator(m)
	for _, ok := it.Next(); ok; _, ok = it.Next() {
	}
	if it.Err() != nil {
		t.Fatalf("fixwire cannot read the fields: %v: %q", it.Err(), m)
	}
	if bytes.Contains(m, []byte("\x0134=\x01")) {
		t.Fatalf("empty MsgSeqNum passed: %q", m)
	}
}

// TestAdmits checks Admits against messages the framer passes and drops.
func TestAdmits(t *testing.T) {
	ok := fixMsg("35=D", "34=2", "49=C", "52=20260101-00:00:00.000", "56=V", "11=a")
	for _, c := range []struct {
		name string
		msg  []byte
		want bool
	}{
		{"plain", ok, true},
		{"empty MsgSeqNum", fixMsg("35=D", "34=", "49=C", "52=20260101-00:00:00.000", "56=V"), false},
		{"tag with a leading zero", fixMsg("35=D", "34=2", "49=C", "52=20260101-00:00:00.000", "56=V", "055=X"), false},
		{"second BodyLength", fixMsg("35=D", "34=2", "49=C", "52=20260101-00:00:00.000", "56=V", "9=1"), false},
		{"bytes after it", append(append([]byte(nil), ok...), 'x'), false},
		{"cut short", ok[:len(ok)-2], false},
	} {
		if got := Admits(c.msg); got != c.want {
			t.Errorf("%s: Admits %v, want %v", c.name, got, c.want)
		}
	}
}
