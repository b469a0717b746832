// Package decimal converts between FIX decimal strings and integer tick counts
// without ever passing through floating point.
//
// A Tick is an exact decimal step (mantissa × 10^-scale, for example "0.01" is
// {Mantissa: 1, Scale: 2}). ParseTicks reads a decimal string and returns how many
// ticks it is; a value that is not an exact multiple of the tick is an error
// (ErrOffTick), never a rounding. FormatTicks writes ticks back as a decimal string
// into a caller's buffer.
//
// Limits: at most MaxScale (9) fractional digits, and magnitudes that fit in int64
// after scaling; anything else is ErrRange. Neither function allocates.
package decimal
