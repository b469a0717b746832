package fixwire

import "strconv"

// SOH ends every field.
const SOH = 0x01

const (
	// TrailerBytes is the CheckSum field, "10=NNN␁".
	TrailerBytes = 7
	// BeginStringBytesMax bounds the BeginString value ("FIXT.1.1" is 8).
	BeginStringBytesMax = 16
	// BodyLengthDigitsMax bounds the digits of BodyLength and of a length
	// field's value, so that both fit an int on every platform.
	BodyLengthDigitsMax = 9
	// TagDigitsMax bounds a tag number's digits: the most an int holds
	// without wrapping (18 with 64 bits, 9 with 32). A longer tag is read as
	// QuickFIX/Go reads it, so an invalid tag number of 10 to 18 digits is
	// one the session layer answers (Reject 373=0), as it does 5000 or 0;
	// beyond, QuickFIX/Go would wrap it into another tag.
	TagDigitsMax = strconv.IntSize / 32 * 9
	// SeqNumDigitsMax bounds a MsgSeqNum's digits, so that it fits an
	// int64: the FIX edge drops a message whose MsgSeqNum has more, and
	// the gateway refuses a SequenceReset whose NewSeqNo would lead there.
	SeqNumDigitsMax = 18
	// HeaderBytesMax is the longest header Frame accepts,
	// "8=<BeginString>␁9=<digits>␁".
	HeaderBytesMax = len("8=") + BeginStringBytesMax + 1 + len("9=") + BodyLengthDigitsMax + 1
)

// CheckSum is the FIX CheckSum (10) of b: the sum of its bytes modulo 256.
func CheckSum(b []byte) int {
	var sum uint
	for _, c := range b {
		sum += uint(c)
	}
	return int(sum % 256)
}

// AppendCheckSum appends the trailer "10=NNN␁" to msg, which holds exactly
// one message up to and including the SOH of its last body field.
func AppendCheckSum(msg []byte) []byte {
	return appendTrailer(msg, CheckSum(msg))
}

// appendTrailer appends "10=<sum>␁".
func appendTrailer(dst []byte, sum int) []byte {
	dst = append(dst, "10=000\x01"...)
	putThreeDigits(dst[len(dst)-4:len(dst)-1], sum)
	return dst
}

// AppendMessage appends to dst the whole message with the given BeginString
// and body: "8=<beginString>␁9=<len(body)>␁<body>10=NNN␁". body holds every
// field from MsgType (35) on, each ended by SOH.
func AppendMessage(dst []byte, beginString string, body []byte) []byte {
	start := len(dst)
	dst = append(dst, "8="...)
	dst = append(dst, beginString...)
	dst = append(dst, SOH, '9', '=')
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, SOH)
	dst = append(dst, body...)
	return appendTrailer(dst, CheckSum(dst[start:]))
}

// SetCheckSum rewrites the three digits of msg's trailer with the CheckSum
// of the bytes before it, for messages patched in place (a template whose
// sequence number and times change). msg must end with "10=" three digits
// SOH; anything else is a programming error and panics.
func SetCheckSum(msg []byte) {
	if _, ok := StatedCheckSum(msg); !ok {
		panic("fixwire: SetCheckSum on a message without a 10=NNN trailer")
	}
	end := len(msg) - TrailerBytes
	putThreeDigits(msg[end+3:end+6], CheckSum(msg[:end]))
}

// StatedCheckSum returns the value msg's trailer states, and false when msg
// does not end with "10=" three digits SOH.
func StatedCheckSum(msg []byte) (int, bool) {
	if len(msg) < TrailerBytes {
		return 0, false
	}
	t := msg[len(msg)-TrailerBytes:]
	if t[0] != '1' || t[1] != '0' || t[2] != '=' || !isDigit(t[3]) || !isDigit(t[4]) || !isDigit(t[5]) || t[6] != SOH {
		return 0, false
	}
	return int(t[3]-'0')*100 + int(t[4]-'0')*10 + int(t[5]-'0'), true
}

// VerifyCheckSum checks that msg, one whole message, ends with a trailer
// that states the CheckSum of every byte before it. It returns ErrTrailer
// or ErrCheckSum.
func VerifyCheckSum(msg []byte) error {
	stated, ok := StatedCheckSum(msg)
	if !ok {
		return ErrTrailer
	}
	if stated != CheckSum(msg[:len(msg)-TrailerBytes]) {
		return ErrCheckSum
	}
	return nil
}

// putThreeDigits writes v, 0 to 999, as three digits.
func putThreeDigits(dst []byte, v int) {
	dst[0] = byte('0' + v/100)
	dst[1] = byte('0' + v/10%10)
	dst[2] = byte('0' + v%10)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
