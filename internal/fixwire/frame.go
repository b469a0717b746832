package fixwire

import "errors"

// ErrFrame is what every error of Frame matches (errors.Is): the bytes
// cannot start a FIX message, and the stream cannot be resynchronised.
var ErrFrame = errors.New("not a FIX frame")

// The errors are fixed values, so that reading bad input allocates
// nothing; callers add what they know (the bytes, the bound).
var (
	ErrBeginString = frameError("message does not start with 8=<BeginString>␁ (1 to 16 bytes)")
	ErrBodyLength  = frameError("second field is not BodyLength 9=<1 to 9 digits>␁")
	ErrTooLarge    = frameError("BodyLength makes the message longer than the bound")
	ErrTrailer     = frameError("no 10=NNN␁ CheckSum field where BodyLength says the body ends")
	ErrCheckSum    = errors.New("fixwire: CheckSum field differs from the sum of the bytes before it")
	ErrField       = errors.New("fixwire: malformed field: want <tag>=<value>␁, the tag 1 to 18 digits (9 on 32-bit platforms)")
	ErrDataLength  = errors.New("fixwire: length field not followed by its data field of that length")
)

// wireError is a framing error: it says why and matches ErrFrame.
type wireError struct{ why string }

func frameError(why string) error { return &wireError{why: why} }

func (e *wireError) Error() string { return "not a FIX frame: " + e.why }

func (e *wireError) Unwrap() error { return ErrFrame }

// Frame looks at the start of b for one message of at most messageBytesMax
// bytes (header, body and trailer). It returns n > 0 when b[:n] is a whole
// message, 0 with a nil error when b is a prefix of one, and 0 with an
// error as soon as the bytes present cannot start one (see the package
// contract). The CheckSum's value is not checked (VerifyCheckSum).
func Frame(b []byte, messageBytesMax int) (int, error) {
	if messageBytesMax <= 0 {
		panic("fixwire: Frame needs a positive messageBytesMax")
	}
	pos, err := expect(b, 0, "8=", ErrBeginString)
	if err != nil || pos == len(b) {
		return 0, err
	}
	beginEnd, err := valueEnd(b, pos, BeginStringBytesMax, ErrBeginString)
	if err != nil || beginEnd < 0 {
		return 0, err
	}
	if beginEnd == pos {
		return 0, ErrBeginString
	}
	pos, err = expect(b, beginEnd+1, "9=", ErrBodyLength)
	if err != nil || pos == len(b) {
		return 0, err
	}
	lengthEnd, err := valueEnd(b, pos, BodyLengthDigitsMax, ErrBodyLength)
	if err != nil || lengthEnd < 0 {
		return 0, err
	}
	bodyBytes, ok := ParseLength(b[pos:lengthEnd])
	if !ok {
		return 0, ErrBodyLength
	}
	total := lengthEnd + 1 + bodyBytes + TrailerBytes
	if total > messageBytesMax {
		return 0, ErrTooLarge
	}
	if len(b) < total {
		return 0, nil
	}
	if _, ok := StatedCheckSum(b[:total]); !ok {
		return 0, ErrTrailer
	}
	return total, nil
}

// expect matches the fixed text s at b[from:] as far as b goes. It returns
// the index after s, or len(b) when b ends inside s, or fail.
func expect(b []byte, from int, s string, fail error) (int, error) {
	for i := 0; i < len(s); i++ {
		if from+i == len(b) {
			return len(b), nil
		}
		if b[from+i] != s[i] {
			return 0, fail
		}
	}
	return from + len(s), nil
}

// valueEnd returns the index of the SOH ending the value that starts at
// b[from], -1 when b ends first with the value still within charsMax bytes,
// or fail when the value is longer.
func valueEnd(b []byte, from, charsMax int, fail error) (int, error) {
	for i := from; i < len(b); i++ {
		if b[i] == SOH {
			return i, nil
		}
		if i-from == charsMax {
			return 0, fail
		}
	}
	return -1, nil
}

// ParseLength reads a BodyLength or a data length field's value: 1 to
// BodyLengthDigitsMax decimal digits (leading zeros allowed).
func ParseLength(v []byte) (int, bool) {
	n, ok := ParseUint(v, BodyLengthDigitsMax)
	return int(n), ok
}

// ParseUint reads a FIX integer field's value that must not be negative: 1
// to digitsMax decimal digits (leading zeros allowed; a digitsMax above 19
// would let the value overflow). It returns 0 and false for anything else.
func ParseUint(v []byte, digitsMax int) (uint64, bool) {
	if len(v) == 0 || len(v) > digitsMax {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}
