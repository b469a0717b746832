package decimal

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
)

// MaxScale is the largest number of fractional digits accepted in a price or tick.
const MaxScale = 9

var (
	// ErrSyntax reports a string that is not a plain decimal number.
	ErrSyntax = errors.New("decimal: not a decimal number")
	// ErrRange reports a value too large, or with too many fractional digits.
	ErrRange = errors.New("decimal: value out of range")
	// ErrOffTick reports a price that is not a whole number of ticks.
	ErrOffTick = errors.New("decimal: price is not a multiple of the tick size")
	// ErrBadTick reports a tick size that is zero or negative.
	ErrBadTick = errors.New("decimal: tick size must be positive")
)

var pow10 = [...]int64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000}

// Tick is an exact price step: Mantissa × 10^-Scale.
type Tick struct {
	Mantissa int64
	Scale    int
}

// ParseTick reads a tick size such as "0.01".
func ParseTick(s string) (Tick, error) {
	m, scale, err := parseFixed([]byte(s))
	if err != nil {
		return Tick{}, err
	}
	if m <= 0 {
		return Tick{}, ErrBadTick
	}
	return Tick{Mantissa: m, Scale: scale}, nil
}

// String formats the tick as a decimal string.
func (t Tick) String() string {
	var buf [32]byte
	return string(FormatTicks(buf[:0], 1, t))
}

// parseFixed reads an optional sign, digits, an optional '.' and digits into
// a mantissa and the number of fractional digits, trimming trailing zeros of the fraction.
func parseFixed(s []byte) (mantissa int64, scale int, err error) {
	if len(s) == 0 {
		return 0, 0, ErrSyntax
	}
	neg := false
	i := 0
	switch s[0] {
	case '-':
		neg = true
		i++
	case '+':
		i++
	}
	// zeros counts the fraction's zeros not yet taken into the mantissa:
	// they are taken only when a non-zero digit follows, so that trailing
	// zeros, however many (a client's fixed-width formatting of 105.5),
	// change nothing and cannot overflow the mantissa.
	digits, dot, zeros := 0, false, 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if dot {
				return 0, 0, ErrSyntax
			}
			dot = true
			continue
		}
		if c < '0' || c > '9' {
			return 0, 0, ErrSyntax
		}
		digits++
		if dot {
			if c == '0' {
				zeros++
				continue
			}
			for ; zeros > 0; zeros-- {
				if mantissa > (1<<63-1)/10 {
					return 0, 0, errScale(scale)
				}
				mantissa *= 10
				scale++
			}
			scale++
		}
		if mantissa > (1<<63-1-9)/10 {
			return 0, 0, errScale(scale)
		}
		mantissa = mantissa*10 + int64(c-'0')
	}
	if digits == 0 {
		return 0, 0, ErrSyntax
	}
	for scale > 0 && mantissa%10 == 0 {
		mantissa /= 10
		scale--
	}
	if scale > MaxScale {
		return 0, 0, errTooFine
	}
	if neg {
		mantissa = -mantissa
	}
	return mantissa, scale, nil
}

// errTooFine is ErrRange for a value with more than MaxScale significant
// fractional digits: ParseTick refuses such a tick as out of range, and
// ParseTicks answers ErrOffTick, as no tick has that many digits, so no
// such value is a whole number of ticks.
var errTooFine = fmt.Errorf("%w: more than %d fractional digits", ErrRange, MaxScale)

// errScale is the error of a mantissa that overflows at scale: with
// fractional digits past MaxScale the value is too fine before it is too
// large (errTooFine), else ErrRange.
func errScale(scale int) error {
	if scale > MaxScale {
		return errTooFine
	}
	return ErrRange
}

// ParseTicks converts a decimal string into a whole number of ticks.
func ParseTicks(s []byte, t Tick) (int64, error) {
	if t.Mantissa <= 0 {
		return 0, ErrBadTick
	}
	m, scale, err := parseFixed(s)
	if err == errTooFine {
		return 0, ErrOffTick
	}
	if err != nil {
		return 0, err
	}
	// Bring both to the larger scale, then divide exactly.
	tm := t.Mantissa
	switch {
	case scale < t.Scale:
		f := pow10[t.Scale-scale]
		if m > (1<<63-1)/f || m < -(1<<63-1)/f {
			return 0, ErrRange
		}
		m *= f
	case scale > t.Scale:
		f := pow10[scale-t.Scale]
		if tm > (1<<63-1)/f {
			return 0, ErrRange
		}
		tm *= f
	}
	if m%tm != 0 {
		return 0, ErrOffTick
	}
	return m / tm, nil
}

// FormatTicks appends ticks × tick as a decimal string with exactly the tick's scale.
// The product is taken in 128 bits: a price at the top of a band whose
// ticks are large (a tick of 100000000, say) is more than int64 holds, and
// wrapped to a negative price in a published band.
func FormatTicks(dst []byte, ticks int64, t Tick) []byte {
	if ticks < 0 {
		dst = append(dst, '-')
	}
	hi, lo := bits.Mul64(abs64(ticks), uint64(t.Mantissa))
	return appendFixed(dst, hi, lo, t.Scale)
}

// abs64 is |v| as a uint64, exact for math.MinInt64 too.
func abs64(v int64) uint64 {
	if v < 0 {
		return -uint64(v)
	}
	return uint64(v)
}

// appendFixed appends (hi×2^64 + lo) × 10^-scale (hi < 10^19) with exactly
// scale fractional digits.
func appendFixed(dst []byte, hi, lo uint64, scale int) []byte {
	var buf [40]byte
	d := appendDigits(buf[:0], hi, lo)
	if scale == 0 {
		return append(dst, d...)
	}
	if len(d) <= scale {
		dst = append(dst, '0', '.')
		for i := len(d); i < scale; i++ {
			dst = append(dst, '0')
		}
		return append(dst, d...)
	}
	dst = append(dst, d[:len(d)-scale]...)
	dst = append(dst, '.')
	return append(dst, d[len(d)-scale:]...)
}

// appendDigits appends the decimal digits of hi×2^64 + lo (hi < 10^19,
// which bounds the value by 10^38: every product of two int64 magnitudes
// fits), without leading zeros, "0" for zero.
func appendDigits(dst []byte, hi, lo uint64) []byte {
	top, bottom := bits.Div64(hi, lo, 1e19)
	if top == 0 {
		return strconv.AppendUint(dst, bottom, 10)
	}
	dst = strconv.AppendUint(dst, top, 10)
	var b [19]byte
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte('0' + bottom%10)
		bottom /= 10
	}
	return append(dst, b[:]...)
}

// FormatRatio appends num/den × tick as a decimal with extra fractional digits
// (used for average prices), truncating toward zero past scale+extra digits.
// It is exact for every num and den: num × the tick's mantissa is taken in
// 128 bits and the extra digits are divided out one at a time, where the
// int64 products wrapped for a large tick mantissa, a large price times
// 10^extra or a cumulative quantity near its bound, and wrote a wrong AvgPx.
func FormatRatio(dst []byte, num, den int64, t Tick, extra int) []byte {
	if den == 0 {
		return append(dst, '0')
	}
	if t.Scale+extra > MaxScale {
		extra = MaxScale - t.Scale
	}
	neg := (num < 0) != (den < 0)
	d := abs64(den)
	// The quotient, in units of 10^-t.Scale, is (qhi, qlo); hi % d < d
	// makes the second division's quotient fit 64 bits.
	hi, lo := bits.Mul64(abs64(num), uint64(t.Mantissa))
	qhi := hi / d
	qlo, rem := bits.Div64(hi%d, lo, d)
	var frac [MaxScale]byte
	nonzero := qhi|qlo != 0
	for i := 0; i < extra; i++ {
		h, l := bits.Mul64(rem, 10) // rem < d, so the quotient is a digit
		var digit uint64
		digit, rem = bits.Div64(h, l, d)
		frac[i] = byte('0' + digit)
		nonzero = nonzero || digit != 0
	}
	if neg && nonzero {
		dst = append(dst, '-')
	}
	dst = appendFixed(dst, qhi, qlo, t.Scale)
	if extra <= 0 {
		return dst
	}
	if t.Scale == 0 {
		dst = append(dst, '.')
	}
	return append(dst, frac[:extra]...)
}
