// Package decimal converts between FIX decimal strings and integer tick counts
// without ever passing through floating point.
//
// A Tick is an exact decimal step (mantissa × 10^-scale, for example "0.01" is
// {Mantissa: 1, Scale: 2}). ParseTicks reads a decimal string and returns how many
// ticks it is; a value that is not an exact multiple of the tick is an error
// (ErrOffTick), never a rounding. FormatTicks writes ticks back as a decimal string
// into a caller's buffer.
//
// Limits: at most MaxScale (9) significant fractional digits (trailing zeros,
// however many, do not count), and magnitudes that fit in int64 after scaling;
// anything else is ErrRange, except that ParseTicks answers a value with more
// significant fractional digits ErrOffTick: no tick has them, so it is not a
// multiple of the tick. FormatTicks and FormatRatio (an average price: a
// notional over a quantity) are exact for any int64 operands: their
// products are taken in 128 bits, as a price near the largest a tick allows
// times the tick's mantissa, or times the average's extra digits, is beyond
// int64. None of these functions allocates.
package decimal
