package fixtests

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// MessageBytesMax bounds one message received from the acceptor. Session
// and order messages in the scripts are a few hundred bytes; anything
// larger is reported as a framing failure rather than buffered without end.
const MessageBytesMax = 1 << 16

// verifyChecksum checks that a framed message's CheckSum field equals the
// byte sum of everything before it, and says both when they differ.
func verifyChecksum(msg []byte) error {
	err := fixwire.VerifyCheckSum(msg)
	if errors.Is(err, fixwire.ErrCheckSum) {
		stated, _ := fixwire.StatedCheckSum(msg)
		return fmt.Errorf("CheckSum field says %03d but the bytes sum to %03d", stated, fixwire.CheckSum(msg[:len(msg)-fixwire.TrailerBytes]))
	}
	return err
}

var (
	// errPeerClosed is returned when the acceptor closed the connection.
	errPeerClosed = errors.New("connection closed by the acceptor")
	// errReadTimeout is returned when the deadline passed first.
	errReadTimeout = errors.New("deadline passed")
)

// messageReader splits the byte stream of one connection into messages,
// with a buffer bounded by MessageBytesMax.
type messageReader struct {
	conn net.Conn
	in   *fixwire.Reader
}

func newMessageReader(conn net.Conn) *messageReader {
	return &messageReader{conn: conn, in: fixwire.NewReader(conn, MessageBytesMax)}
}

// buffered returns the bytes received but not yet returned as a message.
func (r *messageReader) buffered() []byte { return r.in.Buffered() }

// next returns the next complete message, waiting until deadline. The
// returned slice is a copy. On an error the bytes received so far stay
// available through buffered.
func (r *messageReader) next(deadline time.Time) ([]byte, error) {
	if err := r.conn.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	msg, err := r.in.Next()
	if err != nil {
		return nil, classifyReadError(err)
	}
	return append([]byte(nil), msg...), nil
}

// fill reads at least one more byte, or fails with errPeerClosed,
// errReadTimeout or the socket error.
func (r *messageReader) fill(deadline time.Time) error {
	if err := r.conn.SetReadDeadline(deadline); err != nil {
		return err
	}
	return classifyReadError(r.in.Fill())
}

// classifyReadError maps socket errors to errPeerClosed (EOF or reset: the
// acceptor is gone) and errReadTimeout; others, framing errors among them,
// pass through.
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

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
