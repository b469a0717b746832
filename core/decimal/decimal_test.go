package decimal

import (
	"errors"
	"testing"
)

func TestParseTicks(t *testing.T) {
	cent := Tick{Mantissa: 1, Scale: 2}
	nickel := Tick{Mantissa: 5, Scale: 2}
	whole := Tick{Mantissa: 1, Scale: 0}
	tests := []struct {
		in    string
		tick  Tick
		ticks int64
		err   error
	}{
		{"100.00", cent, 10000, nil},
		{"100", cent, 10000, nil},
		{"100.5", cent, 10050, nil},
		{"0.01", cent, 1, nil},
		{"-1.25", cent, -125, nil},
		{"+2", cent, 200, nil},
		{"100.001", cent, 0, ErrOffTick},
		{"100.0100", cent, 10001, nil},
		{"50.05", nickel, 1001, nil},
		{"50.06", nickel, 0, ErrOffTick},
		{"7", whole, 7, nil},
		{"7.5", whole, 0, ErrOffTick},
		{"", cent, 0, ErrSyntax},
		{".", cent, 0, ErrSyntax},
		{"1.2.3", cent, 0, ErrSyntax},
		{"1e5", cent, 0, ErrSyntax},
		{"abc", cent, 0, ErrSyntax},
		{"0.0000000001", cent, 0, ErrOffTick}, // finer than any tick
		{"105.5000000000000000001", cent, 0, ErrOffTick},
		{"99999999999999999999", cent, 0, ErrRange},
		{"105.50000000000000000000000000000000000000", cent, 10550, nil}, // trailing zeros, however many
		{"1.000000000000000000000000", whole, 1, nil},
		{"99999999999999999.99", cent, 0, ErrRange},
	}
	for _, tc := range tests {
		got, err := ParseTicks([]byte(tc.in), tc.tick)
		if !errors.Is(err, tc.err) || (err == nil && got != tc.ticks) {
			t.Errorf("ParseTicks(%q, %v) = %d, %v; want %d, %v", tc.in, tc.tick, got, err, tc.ticks, tc.err)
		}
	}
}

func TestParseTick(t *testing.T) {
	for in, want := range map[string]Tick{"0.01": {1, 2}, "0.05": {5, 2}, "1": {1, 0}, "0.0010": {1, 3}, "2.5": {25, 1}} {
		got, err := ParseTick(in)
		if err != nil || got != want {
			t.Errorf("ParseTick(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-0.01", "x", "0.0000000001"} {
		if _, err := ParseTick(in); err == nil {
			t.Errorf("ParseTick(%q) accepted", in)
		}
	}
}

func TestFormatTicks(t *testing.T) {
	tests := []struct {
		ticks int64
		tick  Tick
		want  string
	}{
		{10000, Tick{1, 2}, "100.00"},
		{1, Tick{1, 2}, "0.01"},
		{-125, Tick{1, 2}, "-1.25"},
		{1001, Tick{5, 2}, "50.05"},
		{7, Tick{1, 0}, "7"},
		{2500, Tick{1, 3}, "2.500"},
	}
	for _, tc := range tests {
		if got := string(FormatTicks(nil, tc.ticks, tc.tick)); got != tc.want {
			t.Errorf("FormatTicks(%d, %v) = %q; want %q", tc.ticks, tc.tick, got, tc.want)
		}
		back, err := ParseTicks([]byte(tc.want), tc.tick)
		if err != nil || back != tc.ticks {
			t.Errorf("round trip %q = %d, %v", tc.want, back, err)
		}
	}
}

func TestFormatRatio(t *testing.T) {
	cent := Tick{1, 2}
	tests := []struct {
		num, den int64
		want     string
	}{
		{30000, 3, "100.0000"},         // 3 @ 100.00
		{10000 + 10001, 2, "100.0050"}, // 1 @ 100.00, 1 @ 100.01
		{0, 0, "0"},
		{20001, 3, "66.6700"},
	}
	for _, tc := range tests {
		if got := string(FormatRatio(nil, tc.num, tc.den, cent, 2)); got != tc.want {
			t.Errorf("FormatRatio(%d/%d) = %q; want %q", tc.num, tc.den, got, tc.want)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	tick := Tick{1, 2}
	in := []byte("123.45")
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		v, _ := ParseTicks(in, tick)
		buf = FormatTicks(buf[:0], v, tick)
	})
	if allocs != 0 {
		t.Fatalf("ParseTicks+FormatTicks allocate %.1f times", allocs)
	}
}

func FuzzParseTicks(f *testing.F) {
	for _, s := range []string{"100.00", "-1", "0.0001", "1.2.3", "", "99999999999999999999"} {
		f.Add(s, int64(1), 2)
	}
	f.Fuzz(func(t *testing.T, s string, m int64, scale int) {
		if scale < 0 || scale > MaxScale || m <= 0 || m > 1_000_000 {
			return
		}
		tick := Tick{m, scale}
		v, err := ParseTicks([]byte(s), tick)
		if err != nil {
			return
		}
		if v > 1<<40 || v < -(1<<40) {
			return
		}
		back, err := ParseTicks(FormatTicks(nil, v, tick), tick)
		if err != nil || back != v {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, v, FormatTicks(nil, v, tick), back, err)
		}
	})
}
