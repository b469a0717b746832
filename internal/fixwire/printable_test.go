package fixwire

import "testing"

func TestNotPrintable(t *testing.T) {
	for _, c := range []struct {
		v    string
		want int
	}{
		{"", -1},
		{" ~abc=|", -1},
		{"ab\x01", 2},
		{"\x1f", 0},
		{"a\x7f", 1},
		{"caf\xc3\xa9", 3},
		{"\x80\x20", 0},
	} {
		if got := NotPrintable([]byte(c.v)); got != c.want {
			t.Errorf("%q: %d, want %d", c.v, got, c.want)
		}
	}
}
