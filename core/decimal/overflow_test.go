package decimal

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// bigFixed formats num × mantissa / den × 10^-scale with exactly digits
// fractional digits, truncated toward zero, "0" for den 0: the reference
// FormatTicks (den 1, digits scale) and FormatRatio are held to.
func bigFixed(num, den, mantissa int64, scale, digits int) string {
	if den == 0 {
		return "0"
	}
	v := new(big.Int).Mul(big.NewInt(num), big.NewInt(mantissa))
	v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits-scale)), nil))
	v.Quo(v, big.NewInt(den)) // truncates toward zero
	neg := v.Sign() < 0
	s := new(big.Int).Abs(v).String()
	if digits > 0 {
		for len(s) <= digits {
			s = "0" + s
		}
		s = s[:len(s)-digits] + "." + s[len(s)-digits:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// edgeInt64s are the values where int64 products wrap.
var edgeInt64s = []int64{0, 1, 2, 3, 7, 9, 10, 99, 1e9, 1e12, 1e15, 1e17, 922337203685477580, 922337203685477581,
	1 << 62, math.MaxInt64 / 10, math.MaxInt64/2 + 1, math.MaxInt64 - 1, math.MaxInt64}

// randInt64 draws from the edges, small values and the whole range.
func randInt64(r *rand.Rand) int64 {
	switch r.Intn(3) {
	case 0:
		return edgeInt64s[r.Intn(len(edgeInt64s))] - int64(r.Intn(2))
	case 1:
		return r.Int63n(1e6)
	}
	return r.Int63() >> r.Intn(63)
}

// TestFormatExactAtInt64Edges holds FormatTicks and FormatRatio to exact
// arithmetic for ticks, tick mantissas, notionals and quantities anywhere
// in int64, with either sign: the products of a large tick mantissa, a price
// near the band's top scaled by the AvgPx's extra digits, or a remainder of
// a cumulative quantity near its bound times ten wrapped in int64.
func TestFormatExactAtInt64Edges(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200000; i++ {
		tick := Tick{Mantissa: max(1, randInt64(r)), Scale: r.Intn(MaxScale + 1)}
		ticks, num, den := randInt64(r), randInt64(r), randInt64(r)
		if r.Intn(2) == 0 {
			ticks = -ticks
		}
		if r.Intn(4) == 0 {
			num = -num
		}
		extra := r.Intn(6)
		if got, want := string(FormatTicks(nil, ticks, tick)), bigFixed(ticks, 1, tick.Mantissa, tick.Scale, tick.Scale); got != want {
			t.Fatalf("FormatTicks(%d, %+v) = %q; want %q", ticks, tick, got, want)
		}
		digits := min(tick.Scale+extra, MaxScale)
		if got, want := string(FormatRatio(nil, num, den, tick, extra)), bigFixed(num, den, tick.Mantissa, tick.Scale, digits); got != want {
			t.Fatalf("FormatRatio(%d/%d, %+v, %d) = %q; want %q", num, den, tick, extra, got, want)
		}
	}
}

func TestFormatAtInt64EdgesTable(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		// A band top of 2^62 ticks of 4: the product is above int64.
		{"ticks × mantissa above int64", FormatTicks(nil, 1<<62, Tick{4, 0}), "18446744073709551616"},
		{"most negative ticks", FormatTicks(nil, math.MinInt64, Tick{1, 2}), "-92233720368547758.08"},
		// 5e15 at a tick of 1e8, with 4 extra digits: 5e23 × 10^-4.
		{"AvgPx of a large price", FormatRatio(nil, 2*50_000_000, 2, Tick{100_000_000, 0}, 4), "5000000000000000.0000"},
		// A cumulative quantity above MaxInt64/10: the remainder × 10 wrapped.
		{"AvgPx of a quantity near its bound", FormatRatio(nil, 3*(math.MaxInt64/3)-1, math.MaxInt64/3, Tick{1, 2}, 4), "0.029999"},
		{"AvgPx of a remainder × mantissa above int64", FormatRatio(nil, math.MaxInt64-1, math.MaxInt64, Tick{5, 1}, 2), "0.499"},
	}
	for _, tc := range tests {
		if string(tc.got) != tc.want {
			t.Errorf("%s: %q; want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestFormatRatioNoAllocs(t *testing.T) {
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		buf = FormatRatio(buf[:0], math.MaxInt64-1, math.MaxInt64/3, Tick{100_000_000, 0}, 4)
		buf = FormatTicks(buf[:0], math.MaxInt64, Tick{math.MaxInt64, 9})
	})
	if allocs != 0 {
		t.Fatalf("FormatRatio+FormatTicks allocate %.1f times", allocs)
	}
}
