package decimal

import (
	"errors"
	"fmt"
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
func FormatTicks(dst []byte, ticks int64, t Tick) []byte {
	v := ticks * t.Mantissa
	if t.Scale == 0 {
		return strconv.AppendInt(dst, v, 10)
	}
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	return appendFixed(dst, v, t.Scale)
}

// appendFixed appends v × 10^-scale (v ≥ 0, scale ≥ 1) with exactly scale fractional digits.
func appendFixed(dst []byte, v int64, scale int) []byte {
	p := pow10[scale]
	dst = strconv.AppendInt(dst, v/p, 10)
	dst = append(dst, '.')
	frac := v % p
	for d := p / 10; d > 0; d /= 10 {
		dst = append(dst, byte('0'+frac/d))
		frac %= d
	}
	return dst
}

// FormatRatio appends num/den × tick as a decimal with extra fractional digits
// (used for average prices), truncating toward zero past scale+extra digits.
func FormatRatio(dst []byte, num, den int64, t Tick, extra int) []byte {
	if den == 0 {
		return append(dst, '0')
	}
	scale := t.Scale + extra
	if scale > MaxScale {
		scale = MaxScale
		extra = scale - t.Scale
	}
	// value = num*tm/den × 10^-t.Scale ; compute with 10^extra more precision.
	neg := (num < 0) != (den < 0)
	if num < 0 {
		num = -num
	}
	if den < 0 {
		den = -den
	}
	whole := num / den * t.Mantissa
	rem := num % den * t.Mantissa
	whole += rem / den
	rem %= den
	// whole is in units of 10^-t.Scale; extend by extra digits of rem/den.
	scaled := whole
	for i := 0; i < extra; i++ {
		rem *= 10
		scaled = scaled*10 + rem/den
		rem %= den
	}
	if neg && scaled != 0 {
		dst = append(dst, '-')
	}
	if scale == 0 {
		return strconv.AppendInt(dst, scaled, 10)
	}
	return appendFixed(dst, scaled, scale)
}
