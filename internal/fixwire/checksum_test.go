package fixwire

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// fix turns '|' into SOH, so that tables can be read.
func fix(s string) []byte { return []byte(strings.ReplaceAll(s, "|", "\x01")) }

// The expected CheckSums were computed outside Go (Python: sum(b) % 256).
func TestCheckSum(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want int
	}{
		{"empty", nil, 0},
		{"wraps past 255", []byte{0xFF, 0x02}, 1},
		{"a heartbeat's header and body", fix("8=FIX.4.4|9=5|35=0|"), 163},
		{"a longer heartbeat", fix("8=FIX.4.4|9=49|35=0|34=2|49=ISLD|52=20261130-10:11:12.345|56=TW|"), 162},
		{"a thousand 0xFF", bytes.Repeat([]byte{0xFF}, 1000), 24},
	}
	for _, c := range cases {
		if got := CheckSum(c.in); got != c.want {
			t.Errorf("%s: CheckSum = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestAppendMessage(t *testing.T) {
	want := "8=FIX.4.4|9=5|35=0|10=163|"
	if got := AppendMessage(nil, "FIX.4.4", fix("35=0|")); string(got) != string(fix(want)) {
		t.Fatalf("AppendMessage = %q, want %q", got, fix(want))
	}
	// Appending after other bytes sums only the new message.
	got := AppendMessage([]byte("previous"), "FIX.4.4", fix("35=0|"))
	if string(got) != "previous"+string(fix(want)) {
		t.Fatalf("after other bytes: %q", got)
	}
	long := AppendMessage(nil, "FIXT.1.1", fix("35=0|"+strings.Repeat("58=x|", 30)))
	if n, err := Frame(long, len(long)); n != len(long) || err != nil {
		t.Fatalf("Frame of a built message = %d, %v; want %d", n, err, len(long))
	}
	if err := VerifyCheckSum(long); err != nil {
		t.Fatalf("built message: %v", err)
	}
}

func TestAppendCheckSumPadsToThreeDigits(t *testing.T) {
	// 'x' is 120; two of them sum to 240, one byte 0x05 to 5.
	for in, want := range map[string]string{"\x05": "\x0510=005\x01", "x": "x10=120\x01", "xx": "xx10=240\x01"} {
		if got := string(AppendCheckSum([]byte(in))); got != want {
			t.Errorf("AppendCheckSum(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSetCheckSum(t *testing.T) {
	msg := fix("8=FIX.4.4|9=5|35=0|10=999|")
	SetCheckSum(msg)
	if string(msg) != string(fix("8=FIX.4.4|9=5|35=0|10=163|")) {
		t.Fatalf("SetCheckSum gave %q", msg)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("SetCheckSum without a trailer did not panic")
		}
	}()
	SetCheckSum(fix("8=FIX.4.4|9=5|35=0|"))
}

func TestVerifyCheckSum(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"right", "8=FIX.4.4|9=5|35=0|10=163|", nil},
		{"off by one", "8=FIX.4.4|9=5|35=0|10=164|", ErrCheckSum},
		{"two digits", "8=FIX.4.4|9=5|35=0|10=63|", ErrTrailer},
		{"letters", "8=FIX.4.4|9=5|35=0|10=16a|", ErrTrailer},
		{"no final SOH", "8=FIX.4.4|9=5|35=0|10=163", ErrTrailer},
		{"shorter than a trailer", "10=1|", ErrTrailer},
	}
	for _, c := range cases {
		if err := VerifyCheckSum(fix(c.in)); !errors.Is(err, c.want) {
			t.Errorf("%s: VerifyCheckSum = %v, want %v", c.name, err, c.want)
		}
	}
	if v, ok := StatedCheckSum(fix("35=0|10=007|")); v != 7 || !ok {
		t.Errorf("StatedCheckSum = %d, %v; want 7, true", v, ok)
	}
}
