package fixwire

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// walk returns "tag=value" for each field, and the iterator's error.
func walk(msg []byte) ([]string, error) {
	var got []string
	it := NewIterator(msg)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		if span := string(msg[f.Start:f.End]); !strings.HasSuffix(span, fmt.Sprintf("%d=%s\x01", f.Tag, f.Value)) {
			return got, fmt.Errorf("field %d spans %q", f.Tag, msg[f.Start:f.End])
		}
		got = append(got, fmt.Sprintf("%d=%s", f.Tag, strings.ReplaceAll(string(f.Value), "\x01", "|")))
	}
	return got, it.Err()
}

func TestIterator(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string // fields joined by space
		err  error
	}{
		{"empty", "", "", nil},
		{"heartbeat", "8=FIX.4.4|9=5|35=0|10=163|", "8=FIX.4.4 9=5 35=0 10=163", nil},
		{"empty value", "35=0|58=|", "35=0 58=", nil},
		{"value with =", "58=a=b|", "58=a=b", nil},
		{"leading zeros", "0034=7|", "34=7", nil},
		{"data with SOH and =", "95=5|96=a|b=c|58=x|", "95=5 96=a|b=c 58=x", nil},
		{"empty data", "212=0|213=|", "212=0 213=", nil},
		{"Encoded…Len", "354=3|355=a|b|", "354=3 355=a|b", nil},
		{"tag zero", "0=x|", "0=x", nil},
		{"negative tag", "35=0|-12=x|", "35=0 -12=x", nil},
		{"minus alone", "-=x|", "", ErrField},
		{"minus inside a tag", "1-2=x|", "", ErrField},
		{"tag with a letter", "35=0|3a=1|", "35=0", ErrField},
		{"empty tag", "35=0|=1|", "35=0", ErrField},
		{"ten-digit tag", "1234567890=1|", "1234567890=1", nil},
		{"eighteen-digit tag", "123456789012345678=1|", "123456789012345678=1", nil},
		{"nineteen-digit tag", "1234567890123456789=1|", "", ErrField},
		{"no =", "35=0|35|", "35=0", ErrField},
		{"no final SOH", "35=0|58=x", "35=0", ErrField},
		{"length not a number", "95=x|96=a|", "", ErrDataLength},
		{"data of another tag", "95=1|58=a|", "95=1", ErrDataLength},
		{"data shorter than said", "95=3|96=a|", "95=3", ErrDataLength},
		{"data longer than said", "95=1|96=ab|", "95=1", ErrDataLength},
		{"length field last", "95=1|", "95=1", ErrDataLength},
	}
	for _, c := range cases {
		got, err := walk(fix(c.in))
		if strings.Join(got, " ") != c.want || !errors.Is(err, c.err) {
			t.Errorf("%s: fields %q, %v; want %q, %v", c.name, got, err, c.want, c.err)
		}
	}
}

func TestIteratorDoesNotAllocate(t *testing.T) {
	msg := AppendMessage(nil, "FIX.4.4", fix("35=8|34=12|11=ORD1|95=3|96=a|b|58=text|"))
	allocs := testing.AllocsPerRun(100, func() {
		it := NewIterator(msg)
		fields := 0
		for _, ok := it.Next(); ok; _, ok = it.Next() {
			fields++
		}
		if fields != 9 || it.Err() != nil {
			t.Fatal(fields, it.Err())
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations, want 0", allocs)
	}
}

func TestDataTag(t *testing.T) {
	for length, data := range map[int]int{90: 91, 93: 89, 95: 96, 212: 213, 348: 349, 354: 355, 364: 365, 445: 446, 618: 619, 621: 622, 35: 0, 96: 0, 366: 0} {
		if got := DataTag(tagOf(length)); int(got) != data {
			t.Errorf("DataTag(%d) = %d, want %d", length, got, data)
		}
	}
}
