package fixwire

import (
	"errors"
	"strings"
	"testing"
)

func TestFrame(t *testing.T) {
	hb := "8=FIX.4.4|9=49|35=0|34=2|49=ISLD|52=20261130-10:11:12.345|56=TW|10=162|"
	const max = 1 << 16
	cases := []struct {
		name string
		in   string
		max  int
		want int // 0: read more
		err  error
	}{
		{"empty", "", max, 0, nil},
		{"one byte", "8", max, 0, nil},
		{"partial BeginString", "8=FIX.4", max, 0, nil},
		{"partial BodyLength", "8=FIX.4.4|9=4", max, 0, nil},
		{"partial body", hb[:40], max, 0, nil},
		{"all but the last byte", hb[:len(hb)-1], max, 0, nil},
		{"whole", hb, max, len(hb), nil},
		{"whole and the next", hb + "8=FIX", max, len(hb), nil},
		{"exactly the bound", hb, len(hb), len(hb), nil},
		{"leading zeros in BodyLength", "8=FIX.4.4|9=005|35=0|10=000|", max, 28, nil},
		{"first byte wrong", "x", max, 0, ErrBeginString},
		{"second byte wrong", "89", max, 0, ErrBeginString},
		{"empty BeginString", "8=|9=5|", max, 0, ErrBeginString},
		{"BeginString too long", "8=" + strings.Repeat("F", 17), max, 0, ErrBeginString},
		{"BeginString of 16 bytes", "8=" + strings.Repeat("F", 16) + "|9=", max, 0, nil},
		{"no BodyLength", "8=FIX.4.4|35=0|", max, 0, ErrBodyLength},
		{"BodyLength not a number", "8=FIX.4.4|9=4x|", max, 0, ErrBodyLength},
		{"empty BodyLength", "8=FIX.4.4|9=|", max, 0, ErrBodyLength},
		{"negative BodyLength", "8=FIX.4.4|9=-5|", max, 0, ErrBodyLength},
		{"ten digits", "8=FIX.4.4|9=0000000005|", max, 0, ErrBodyLength},
		{"ten digits before the SOH arrives", "8=FIX.4.4|9=0000000005", max, 0, ErrBodyLength},
		{"over the bound", "8=FIX.4.4|9=99999|", max, 0, ErrTooLarge},
		{"one over the bound", hb, len(hb) - 1, 0, ErrTooLarge},
		{"BodyLength one short", "8=FIX.4.4|9=48|35=0|34=2|49=ISLD|52=20261130-10:11:12.345|56=TW|10=162|", max, 0, ErrTrailer},
		{"two-digit CheckSum", "8=FIX.4.4|9=5|35=0|10=12|x", max, 0, ErrTrailer},
		{"trailer without SOH", "8=FIX.4.4|9=5|35=0|10=123x", max, 0, ErrTrailer},
	}
	for _, c := range cases {
		n, err := Frame(fix(c.in), c.max)
		if n != c.want || !errors.Is(err, c.err) {
			t.Errorf("%s: Frame = %d, %v; want %d, %v", c.name, n, err, c.want, c.err)
		}
	}
}

// Every proper prefix of a whole message asks for more bytes: a reader
// never fails on a message that is merely split across reads.
func TestFramePrefixesNeedMore(t *testing.T) {
	msg := AppendMessage(nil, "FIX.4.4", fix("35=D|49=A|56=B|34=2|11=x|"))
	for i := range len(msg) {
		if n, err := Frame(msg[:i], len(msg)); n != 0 || err != nil {
			t.Fatalf("prefix of %d bytes: %d, %v", i, n, err)
		}
	}
}

func TestFrameDoesNotAllocate(t *testing.T) {
	msg := AppendMessage(nil, "FIX.4.4", fix("35=0|34=1|"))
	bad := fix("8=FIX.4.4|9=1x|")
	allocs := testing.AllocsPerRun(100, func() {
		if n, err := Frame(msg, 1024); n != len(msg) || err != nil {
			t.Fatal(n, err)
		}
		if _, err := Frame(bad, 1024); err == nil {
			t.Fatal("bad frame accepted")
		}
		if VerifyCheckSum(msg) != nil {
			t.Fatal("CheckSum")
		}
		SetCheckSum(msg)
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations, want 0", allocs)
	}
}
