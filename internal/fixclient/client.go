package fixclient

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// Client is one FIX connection.
type Client struct {
	Conn     net.Conn
	Sender   string // our CompID (49)
	Target   string // the venue's CompID (56)
	NextOut  int    // next MsgSeqNum we send
	in       *fixwire.Reader
	Received []*Message // every application message read so far (not admin)
	// afterLogon is the first MsgSeqNum sent after our Logon on this
	// connection (after the TestRequest Logon sends without a reset): a
	// ResendRequest is answered with a gap fill up to it, since the messages
	// from there on are already in flight.
	afterLogon int
	// pending holds application messages Logon read while it waited for
	// the answer to its TestRequest; ReadAny returns them first.
	pending []*Message
}

// Dial connects to addr.
func Dial(addr, sender, target string) (*Client, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return New(c, sender, target), nil
}

// New returns a Client over an open connection (a TLS one, say).
func New(c net.Conn, sender, target string) *Client {
	return &Client{Conn: c, Sender: sender, Target: target, NextOut: 1, in: fixwire.NewReader(c, MessageBytesMax)}
}

// Timestamp formats t as a FIX UTCTimestamp with milliseconds.
func Timestamp(t time.Time) string { return t.UTC().Format("20060102-15:04:05.000") }

// Send sends a message of msgType with the standard header and the given body fields.
func (c *Client) Send(msgType string, body ...Field) error {
	fields := append([]Field{F(35, msgType), F(49, c.Sender), F(56, c.Target), F(34, strconv.Itoa(c.NextOut)),
		F(52, Timestamp(time.Now()))}, body...)
	c.NextOut++
	return c.SendRaw(Build(fields...))
}

// SendRaw writes bytes as they are.
func (c *Client) SendRaw(b []byte) error {
	c.Conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Conn.Write(b)
	return err
}

// Logon sends a Logon (with ResetSeqNumFlag when reset) and waits for the venue's Logon.
func (c *Client) Logon(reset bool, extra ...Field) (*Message, error) {
	body := []Field{F(98, "0"), F(108, "30")}
	if reset {
		body = append(body, F(141, "Y"))
	}
	body = append(body, extra...)
	if reset {
		c.NextOut = 1
	}
	c.afterLogon = c.NextOut + 1
	if err := c.Send("A", body...); err != nil {
		return nil, err
	}
	m, err := c.ReadAny(5 * time.Second)
	if err != nil {
		return nil, err
	}
	if m.Type() != "A" {
		return m, fmt.Errorf("fixclient: logon answered with %s", m)
	}
	if !reset {
		if err := c.settle(); err != nil {
			return m, err
		}
	}
	return m, nil
}

// settle answers the ResendRequest a venue that expected a lower MsgSeqNum
// sends right after its Logon, before anything else is sent: QuickFIX/Go
// v0.9.11 drops messages that arrive while its ResendRequest is
// outstanding. Whether an ask comes is told by a TestRequest sent at once,
// not by a wait for the ask (a busy machine sent it after any short wait,
// and the message sent next was lost): the venue asks while it handles the
// Logon, before it reads the TestRequest, so either the ask comes first,
// the TestRequest dropped behind it and covered by the gap fill, or the
// Heartbeat answering the TestRequest comes with nothing missing. After a
// gap fill a new TestRequest proves the venue took it. Application
// messages read meanwhile are kept for Read and ReadAny.
func (c *Client) settle() error {
	deadline := time.Now().Add(settleWait)
	for fence := 1; ; fence++ {
		id := "logon-fence-" + strconv.Itoa(fence)
		if err := c.Send("1", F(112, id)); err != nil {
			return err
		}
		// A fill answering an ask goes up to here: the TestRequest is in
		// flight behind the ask.
		c.afterLogon = c.NextOut
		for answered := false; !answered; {
			r, err := c.next(time.Until(deadline))
			if err != nil {
				return fmt.Errorf("fixclient: neither a ResendRequest nor the Heartbeat answering TestRequest %s after logon: %w", id, err)
			}
			switch r.Type() {
			case "2":
				if err := c.gapFill(r); err != nil {
					return err
				}
				answered = true
			case "0":
				if r.Get(112) == id {
					return nil
				}
			case "1":
				if err := c.Send("0", F(112, r.Get(112))); err != nil {
					return err
				}
			case "A", "3", "4", "5":
				return fmt.Errorf("fixclient: after logon got %s", r)
			default:
				c.pending = append(c.pending, r)
			}
		}
	}
}

// settleWait bounds how long Logon waits for the venue to answer the
// TestRequest it sends after a Logon without a reset: a wait for an answer
// that comes, so a long one costs nothing.
const settleWait = 10 * time.Second

// ReadAny returns the next message of any type, or an error at the deadline.
// Bytes that are not a FIX message fail with one of the fixwire framing
// errors.
func (c *Client) ReadAny(timeout time.Duration) (*Message, error) {
	if len(c.pending) > 0 {
		m := c.pending[0]
		c.pending = c.pending[1:]
		return m, nil
	}
	return c.next(timeout)
}

// Check, when set, is given every message a Client reads; an error it
// returns fails the read, naming the message. The tests that run the venue
// set it to fixcheck.Check in TestMain, before any Client reads, so that
// every message they read is one a validating FIX client accepts.
var Check func(raw []byte) error

// next reads the next message from the connection.
func (c *Client) next(timeout time.Duration) (*Message, error) {
	c.Conn.SetReadDeadline(time.Now().Add(timeout))
	raw, err := c.in.Next()
	if err != nil {
		return nil, err
	}
	if Check != nil {
		if err := Check(raw); err != nil {
			return nil, fmt.Errorf("fixclient: a validating FIX client refuses %s: %w", strings.ReplaceAll(string(raw), "\x01", "|"), err)
		}
	}
	return Parse(raw)
}

// Read returns the next application message, answering TestRequests and
// skipping Heartbeats on the way.
func (c *Client) Read(timeout time.Duration) (*Message, error) {
	deadline := time.Now().Add(timeout)
	for {
		m, err := c.ReadAny(time.Until(deadline))
		if err != nil {
			return nil, err
		}
		switch m.Type() {
		case "0":
			continue
		case "1":
			if err := c.Send("0", F(112, m.Get(112))); err != nil {
				return nil, err
			}
			continue
		case "2":
			// We keep no store: fill the requested range up to our Logon with one gap fill.
			if err := c.gapFill(m); err != nil {
				return nil, err
			}
			continue
		}
		if m.Type() != "A" && m.Type() != "5" && m.Type() != "2" && m.Type() != "4" && m.Type() != "3" {
			c.Received = append(c.Received, m)
		}
		return m, nil
	}
}

func (c *Client) gapFill(req *Message) error {
	begin := req.Get(7)
	now := Timestamp(time.Now())
	return c.SendRaw(Build(F(35, "4"), F(49, c.Sender), F(56, c.Target), F(34, begin), F(43, "Y"),
		F(52, now), F(122, now), F(123, "Y"), F(36, strconv.Itoa(c.afterLogon))))
}

// Expect reads until a message of msgType arrives whose fields match want
// (tag → value); other application messages are kept in Received and skipped.
func (c *Client) Expect(timeout time.Duration, msgType string, want map[int]string) (*Message, error) {
	deadline := time.Now().Add(timeout)
	for {
		m, err := c.Read(time.Until(deadline))
		if err != nil {
			return nil, fmt.Errorf("waiting for %s %v: %w", msgType, want, err)
		}
		if m.Type() != msgType {
			continue
		}
		ok := true
		for tag, v := range want {
			if m.Get(tag) != v {
				ok = false
				break
			}
		}
		if ok {
			return m, nil
		}
	}
}

// Closed reports whether the venue closes the connection within timeout
// (reading and discarding anything it still sends).
func (c *Client) Closed(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		_, err := c.ReadAny(time.Until(deadline))
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
			return true
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return false
		}
		if err != nil {
			return true
		}
	}
	return false
}

// Logout sends a Logout and closes the connection.
func (c *Client) Logout() {
	_ = c.Send("5")
	c.Read(500 * time.Millisecond)
	c.Conn.Close()
}

// Close closes the connection without a Logout.
func (c *Client) Close() error { return c.Conn.Close() }
