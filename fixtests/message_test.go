package fixtests

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// fix turns a readable message with '|' for SOH into wire bytes.
func fix(s string) []byte { return []byte(strings.ReplaceAll(s, "|", "\x01")) }

// sumOf is the three CheckSum digits of s (fixwire's tests check the sum
// itself against values computed outside Go).
func sumOf(s string) string { return fmt.Sprintf("%03d", fixwire.CheckSum([]byte(s))) }

func TestExpandPlaceholders(t *testing.T) {
	now := time.Date(2026, 11, 30, 23, 59, 58, 987654321, time.UTC)
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "no placeholder", in: "35=0|34=2|", want: "35=0|34=2|"},
		{name: "time to the second", in: "52=<TIME>|", want: "52=20261130-23:59:58|"},
		{name: "plus crosses midnight", in: "52=<TIME+2>|", want: "52=20261201-00:00:00|"},
		{name: "minus", in: "122=<TIME-121>|", want: "122=20261130-23:57:57|"},
		{name: "several", in: "52=<TIME>|60=<TIME+1>|", want: "52=20261130-23:59:58|60=20261130-23:59:59|"},
		{name: "other angle brackets kept", in: "58=a<b>c|", want: "58=a<b>c|"},
		{name: "local time is converted to UTC", in: "52=<TIME>", want: "52=20261130-23:59:58"},
		{name: "no closing bracket", in: "52=<TIME|", wantErr: true},
		{name: "letters in shift", in: "52=<TIME+x>|", wantErr: true},
		{name: "sign without digits", in: "52=<TIME->|", wantErr: true},
		{name: "other suffix", in: "52=<TIMES>|", wantErr: true},
		{name: "shift over a day", in: "52=<TIME+86401>|", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := now
			if tt.name == "local time is converted to UTC" {
				at = now.In(time.FixedZone("X", 5*3600))
			}
			got, err := expandPlaceholders([]byte(tt.in), at)
			if tt.wantErr {
				if !errors.Is(err, errPlaceholder) {
					t.Fatalf("err = %v, want errPlaceholder", err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestFillLengthAndChecksum(t *testing.T) {
	hb := "35=0|34=2|49=TW|52=20261130-10:00:00|56=ISLD|"
	tests := []struct {
		name string
		in   string
		o    fillOptions
		want string
	}{
		{
			name: "both missing",
			in:   "8=FIX.4.4|" + hb,
			want: "8=FIX.4.4|9=45|" + hb + "10=" + sumOf(string(fix("8=FIX.4.4|9=45|"+hb))) + "|",
		},
		{
			// A length that is present is kept even when wrong; only CheckSum is added.
			name: "9 present and wrong, 10 missing",
			in:   "8=FIX.4.4|9=30|" + hb,
			want: "8=FIX.4.4|9=30|" + hb + "10=" + sumOf(string(fix("8=FIX.4.4|9=30|"+hb))) + "|",
		},
		{
			// The reference runner's quirk: one short when 10= is there and 9= is not.
			name: "10 present, 9 missing: length one short",
			in:   "8=FIX.4.4|" + hb + "10=256|",
			want: "8=FIX.4.4|9=44|" + hb + "10=256|",
		},
		{
			name: "both present: sent as written",
			in:   "8=FIX.4.4|9=52|35=0|34=2|4garbled9=TW|10=0|",
			want: "8=FIX.4.4|9=52|35=0|34=2|4garbled9=TW|10=0|",
		},
		{
			name: "not starting with 8= is untouched",
			in:   "35=0|8=FIX.4.4|9=29|34=2|",
			want: "35=0|8=FIX.4.4|9=29|34=2|",
		},
		{
			name: "9 elsewhere counts as present",
			in:   "8=FIX.4.4|34=3|9=5|35=0|",
			want: "8=FIX.4.4|34=3|9=5|35=0|10=" + sumOf(string(fix("8=FIX.4.4|34=3|9=5|35=0|"))) + "|",
		},
		{
			name: "missing final SOH gets one before 10=",
			in:   "8=FIX.4.4|9=5|35=0",
			want: "8=FIX.4.4|9=5|35=0|10=" + sumOf(string(fix("8=FIX.4.4|9=5|35=0|"))) + "|",
		},
		{
			// Expectations: BodyLength as if SendingTime had milliseconds.
			name: "expectation with a 17-character SendingTime",
			in:   "8=FIX.4.4|" + hb,
			o:    fillOptions{sendingTimeChars: expectedSendingTimeChars},
			want: "8=FIX.4.4|9=49|" + hb + "10=" + sumOf(string(fix("8=FIX.4.4|9=49|"+hb))) + "|",
		},
		{
			name: "expectation with a 21-character SendingTime",
			in:   "8=FIX.4.4|35=0|34=2|49=ISLD|52=00000000-00:00:00.000|56=TW|",
			o:    fillOptions{sendingTimeChars: expectedSendingTimeChars},
			want: "8=FIX.4.4|9=49|35=0|34=2|49=ISLD|52=00000000-00:00:00.000|56=TW|10=" +
				sumOf(string(fix("8=FIX.4.4|9=49|35=0|34=2|49=ISLD|52=00000000-00:00:00.000|56=TW|"))) + "|",
		},
		{
			name: "checksum pads to three digits",
			in:   "8=|",
			want: "8=|9=0|10=" + sumOf(string(fix("8=|9=0|"))) + "|",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := fix(tt.in)
			orig := string(in)
			got := fillLengthAndChecksum(in, tt.o)
			if string(got) != string(fix(tt.want)) {
				t.Fatalf("\n got  %s\n want %s", showMessage(got), tt.want)
			}
			if string(in) != orig {
				t.Fatalf("input was modified")
			}
		})
	}
}

// TestPrepareSendFromScript checks the whole I-line path on a line from a
// real script: placeholders first, then BodyLength over the expanded text.
func TestPrepareSendFromScript(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	got, err := prepareSend(fix("8=FIX.4.4|35=A|34=1|49=TW|52=<TIME>|56=ISLD|98=0|108=30|"), now)
	if err != nil {
		t.Fatal(err)
	}
	body := "35=A|34=1|49=TW|52=20260102-03:04:05|56=ISLD|98=0|108=30|"
	head := "8=FIX.4.4|9=57|" + body
	if len(fix(body)) != 57 {
		t.Fatalf("test body is %d bytes", len(body))
	}
	want := head + "10=" + sumOf(string(fix(head))) + "|"
	if string(got) != string(fix(want)) {
		t.Fatalf("got %s, want %s", showMessage(got), want)
	}
}

func TestShowMessage(t *testing.T) {
	got := showMessage([]byte("8=FIX.4.4\x019=5\x01\r\xff"))
	if want := `8=FIX.4.4|9=5|\x0d\xff`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
