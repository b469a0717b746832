package edge

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// sohStr is the FIX field delimiter.
const sohStr = "\x01"

// fixMsg builds a FIX.4.4 message from "tag=value" fields (BeginString,
// BodyLength and CheckSum are added), so tests can write messages readably.
func fixMsg(fields ...string) []byte {
	return fixMsgBegin("FIX.4.4", fields...)
}

// fixMsgBegin is fixMsg with a chosen BeginString.
func fixMsgBegin(begin string, fields ...string) []byte {
	return fixwire.AppendMessage(nil, begin, []byte(strings.Join(fields, sohStr)+sohStr))
}

// withCheckSum appends "10=nnn<SOH>" computed over b.
func withCheckSum(b []byte) []byte { return fixwire.AppendCheckSum(b) }

// rawMsg builds a message whose header is given verbatim (for BodyLength
// tests): head is everything before the body, the CheckSum is correct.
func rawMsg(head string, fields ...string) []byte {
	return withCheckSum([]byte(head + strings.Join(fields, sohStr) + sohStr))
}

// sendingTime is a SendingTime value for now.
func sendingTime() string {
	return time.Now().UTC().Format("20060102-15:04:05.000")
}

// fixFields is a parsed message: fields in order.
type fixFields []struct{ tag, value string }

func (f fixFields) get(tag string) string {
	for _, kv := range f {
		if kv.tag == tag {
			return kv.value
		}
	}
	return ""
}

func (f fixFields) String() string {
	var b strings.Builder
	for _, kv := range f {
		b.WriteString(kv.tag + "=" + kv.value + "|")
	}
	return b.String()
}

// fixClient is a minimal FIX initiator for tests: it writes raw bytes and
// reads whole messages.
type fixClient struct {
	t         testing.TB
	conn      net.Conn
	in        *fixwire.Reader
	compID    string
	venueID   string
	seqOut    int
	timeoutIn time.Duration
}

func newFixClient(t testing.TB, conn net.Conn, compID string) *fixClient {
	return &fixClient{t: t, conn: conn, in: fixwire.NewReader(conn, clientMessageBytesMax), compID: compID, venueID: "VENUE", seqOut: 1, timeoutIn: 5 * time.Second}
}

// header returns the standard header fields for msgType with the next
// sequence number, and advances it.
func (c *fixClient) header(msgType string) []string {
	h := []string{"35=" + msgType, "34=" + strconv.Itoa(c.seqOut), "49=" + c.compID, "52=" + sendingTime(), "56=" + c.venueID}
	c.seqOut++
	return h
}

func (c *fixClient) send(b []byte) {
	c.t.Helper()
	_ = c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatalf("%s: write: %v", c.compID, err)
	}
}

// sendMsg sends a message of msgType with the next sequence number and extra body fields.
func (c *fixClient) sendMsg(msgType string, body ...string) {
	c.t.Helper()
	c.send(fixMsg(append(c.header(msgType), body...)...))
}

// logonBody is the body of a Logon with a password.
func logonBody(password string) []string {
	f := []string{"98=0", "108=30", "141=Y"}
	if password != "" {
		f = append(f, "554="+password)
	}
	return f
}

// clientMessageBytesMax bounds one message the test client reads.
const clientMessageBytesMax = 1 << 20

// read reads one whole message or returns an error (EOF, timeout, a
// framing error). Every message is checked: BeginString first, BodyLength
// and CheckSum right.
func (c *fixClient) read(timeout time.Duration) (fixFields, error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(timeout))
	raw, err := c.in.Next()
	if err != nil {
		return nil, err
	}
	if err := verifyFraming(raw); err != nil {
		c.t.Errorf("%s: venue sent a malformed message: %v", c.compID, err)
	}
	var out fixFields
	it := fixwire.NewIterator(raw)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		out = append(out, struct{ tag, value string }{strconv.Itoa(int(f.Tag)), string(f.Value)})
	}
	return out, it.Err()
}

// verifyFraming checks a whole message's BeginString, BodyLength and
// CheckSum.
func verifyFraming(m []byte) error {
	if !bytes.HasPrefix(m, []byte("8=FIX")) {
		return fmt.Errorf("no BeginString: %q", m)
	}
	if n, err := fixwire.Frame(m, len(m)); n != len(m) || err != nil {
		return fmt.Errorf("framed as %d of %d bytes (%v): %q", n, len(m), err, m)
	}
	if err := fixwire.VerifyCheckSum(m); err != nil {
		return fmt.Errorf("%w: %q", err, m)
	}
	return nil
}

// expect reads messages until one of msgType arrives (skipping heartbeats
// and test requests, answering the latter) and returns it.
func (c *fixClient) expect(msgType string) fixFields {
	c.t.Helper()
	deadline := time.Now().Add(c.timeoutIn)
	for time.Now().Before(deadline) {
		m, err := c.read(time.Until(deadline))
		if err != nil {
			c.t.Fatalf("%s: waiting for 35=%s: %v (partial %s)", c.compID, msgType, err, m)
		}
		switch m.get("35") {
		case msgType:
			return m
		case "0":
			continue
		case "1":
			c.sendMsg("0", "112="+m.get("112"))
			continue
		}
		c.t.Fatalf("%s: waiting for 35=%s, got %s", c.compID, msgType, m)
	}
	c.t.Fatalf("%s: no 35=%s within %v", c.compID, msgType, c.timeoutIn)
	return nil
}

// expectClosed asserts the peer closes the connection (EOF or reset), with
// any messages before that returned; the client then closes its side.
func (c *fixClient) expectClosed(timeout time.Duration) []fixFields {
	c.t.Helper()
	var got []fixFields
	deadline := time.Now().Add(timeout)
	for {
		m, err := c.read(time.Until(deadline))
		if err == nil {
			got = append(got, m)
			continue
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			c.t.Fatalf("%s: connection still open after %v (got %v)", c.compID, timeout, got)
		}
		_ = c.conn.Close()
		return got
	}
}

// expectSilence asserts nothing but heartbeats arrives for d.
func (c *fixClient) expectSilence(d time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		m, err := c.read(time.Until(deadline))
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return
			}
			c.t.Fatalf("%s: expected silence, got error %v", c.compID, err)
		}
		if m.get("35") != "0" {
			c.t.Fatalf("%s: expected silence, got %s", c.compID, m)
		}
	}
}

// containsField reports whether raw contains the field tag=value.
func containsField(raw []byte, tag, value string) bool {
	return bytes.Contains(raw, []byte(sohStr+tag+"="+value+sohStr))
}
