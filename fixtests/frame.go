package fixtests

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// MaxMessageBytes bounds one message received from the acceptor. Session
// and order messages in the scripts are a few hundred bytes; anything
// larger is reported as a framing failure rather than buffered without end.
const MaxMessageBytes = 1 << 16

// beginStringCharsMax bounds the "8=..." field while looking for its SOH.
const beginStringCharsMax = 16

// bodyLengthDigitsMax bounds the digits of the "9=" value; MaxMessageBytes
// needs five.
const bodyLengthDigitsMax = 6

// trailerBytes is the length of "10=nnn" plus its SOH.
const trailerBytes = 7

// readChunkBytes is how much one read asks the socket for.
const readChunkBytes = 4096

// frameError says why received bytes cannot be a FIX message.
type frameError struct {
	reason string
}

func (e *frameError) Error() string { return "not a FIX frame: " + e.reason }

func frameErrorf(format string, args ...any) error {
	return &frameError{reason: fmt.Sprintf(format, args...)}
}

// parseFrame looks at the start of b, which holds bytes received from the
// acceptor. It returns n > 0 when b[:n] is one complete message framed by
// its BodyLength ("8=..." SOH "9=len" SOH, len bytes of body, "10=nnn" SOH),
// n == 0 with a nil error when more bytes are needed, and an error when b
// cannot start a well-framed message. It does not verify the checksum value;
// verifyChecksum does.
func parseFrame(b []byte) (int, error) {
	const begin = "8="
	for i := 0; i < len(begin) && i < len(b); i++ {
		if b[i] != begin[i] {
			return 0, frameErrorf("message does not start with %q", begin)
		}
	}
	pos := len(begin)
	beginEnd, ok, err := scanField(b, pos, beginStringCharsMax, "BeginString")
	if err != nil || !ok {
		return 0, err
	}
	if beginEnd == pos {
		return 0, frameErrorf("empty BeginString")
	}
	pos = beginEnd + 1
	const length = "9="
	for i := 0; i < len(length) && pos+i < len(b); i++ {
		if b[pos+i] != length[i] {
			return 0, frameErrorf("second field is not BodyLength (9)")
		}
	}
	pos += len(length)
	lengthEnd, ok, err := scanField(b, pos, bodyLengthDigitsMax, "BodyLength")
	if err != nil || !ok {
		return 0, err
	}
	bodyBytes := 0
	for _, c := range b[pos:lengthEnd] {
		if c < '0' || c > '9' {
			return 0, frameErrorf("BodyLength %q is not a number", b[pos:lengthEnd])
		}
		bodyBytes = bodyBytes*10 + int(c-'0')
	}
	if lengthEnd == pos {
		return 0, frameErrorf("empty BodyLength")
	}
	total := lengthEnd + 1 + bodyBytes + trailerBytes
	if total > MaxMessageBytes {
		return 0, frameErrorf("BodyLength %d makes a message longer than %d bytes", bodyBytes, MaxMessageBytes)
	}
	if len(b) < total {
		return 0, nil
	}
	t := b[total-trailerBytes : total]
	if t[0] != '1' || t[1] != '0' || t[2] != '=' || !isDigit(t[3]) || !isDigit(t[4]) || !isDigit(t[5]) || t[6] != soh {
		return 0, frameErrorf("BodyLength %d does not end where a 10=nnn CheckSum field starts", bodyBytes)
	}
	return total, nil
}

// scanField finds the SOH that ends a field value starting at b[from]. It
// reports ok=false (need more bytes) when no SOH is there yet and the value is
// still within charsMax, and an error when the value is longer.
func scanField(b []byte, from, charsMax int, name string) (end int, ok bool, err error) {
	for i := from; i < len(b); i++ {
		if b[i] == soh {
			return i, true, nil
		}
		if i-from >= charsMax {
			return 0, false, frameErrorf("%s longer than %d bytes", name, charsMax)
		}
	}
	return 0, false, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// verifyChecksum checks that a framed message's CheckSum field equals the
// byte sum of everything before it.
func verifyChecksum(msg []byte) error {
	if len(msg) < trailerBytes {
		return frameErrorf("message shorter than its trailer")
	}
	t := msg[len(msg)-trailerBytes:]
	stated := int(t[3]-'0')*100 + int(t[4]-'0')*10 + int(t[5]-'0')
	if actual := checksumOf(msg[:len(msg)-trailerBytes]); actual != stated {
		return fmt.Errorf("CheckSum field says %03d but the bytes sum to %03d", stated, actual)
	}
	return nil
}

var (
	// errPeerClosed is returned when the acceptor closed the connection.
	errPeerClosed = errors.New("connection closed by the acceptor")
	// errReadTimeout is returned when the deadline passed first.
	errReadTimeout = errors.New("deadline passed")
)

// messageReader splits the byte stream of one connection into messages.
// Its buffer is allocated once per connection and bounded by
// MaxMessageBytes plus one read.
type messageReader struct {
	conn net.Conn
	buf  []byte
	n    int
}

func newMessageReader(conn net.Conn) *messageReader {
	return &messageReader{conn: conn, buf: make([]byte, MaxMessageBytes+readChunkBytes)}
}

// buffered returns the bytes received but not yet returned as a message.
func (r *messageReader) buffered() []byte { return r.buf[:r.n] }

// next returns the next complete message, waiting until deadline. The
// returned slice is a copy. On an error the bytes received so far stay
// available through buffered.
func (r *messageReader) next(deadline time.Time) ([]byte, error) {
	for {
		n, err := parseFrame(r.buf[:r.n])
		if err != nil {
			return nil, err
		}
		if n > 0 {
			msg := append([]byte(nil), r.buf[:n]...)
			r.n = copy(r.buf, r.buf[n:r.n])
			return msg, nil
		}
		if err := r.fill(deadline); err != nil {
			return nil, err
		}
	}
}

// fill reads at least one more byte, or fails with errPeerClosed,
// errReadTimeout or the socket error.
func (r *messageReader) fill(deadline time.Time) error {
	if err := r.conn.SetReadDeadline(deadline); err != nil {
		return err
	}
	end := min(r.n+readChunkBytes, len(r.buf))
	if end == r.n {
		return frameErrorf("more than %d bytes without a complete message", MaxMessageBytes)
	}
	n, err := r.conn.Read(r.buf[r.n:end])
	r.n += n
	if n > 0 {
		return nil
	}
	return classifyReadError(err)
}

// classifyReadError maps socket errors to errPeerClosed (EOF or reset: the
// acceptor is gone) and errReadTimeout; others pass through.
func classifyReadError(err error) error {
	var ne net.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ne) && ne.Timeout():
		return errReadTimeout
	case isPeerClosed(err):
		return errPeerClosed
	}
	return err
}
