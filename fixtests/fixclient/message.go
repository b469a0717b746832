package fixclient

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MessageBytesMax bounds one received message.
const MessageBytesMax = 1 << 20

// Field is one tag=value pair.
type Field struct {
	Tag   int
	Value string
}

// F is shorthand for a Field.
func F(tag int, value string) Field { return Field{tag, value} }

// Build encodes a FIX 4.4 message: 8 and 9 first, then the given fields in
// order, then 10 with the computed checksum.
func Build(fields ...Field) []byte {
	var body bytes.Buffer
	for _, f := range fields {
		body.WriteString(strconv.Itoa(f.Tag))
		body.WriteByte('=')
		body.WriteString(f.Value)
		body.WriteByte(1)
	}
	var msg bytes.Buffer
	msg.WriteString("8=FIX.4.4\x019=")
	msg.WriteString(strconv.Itoa(body.Len()))
	msg.WriteByte(1)
	msg.Write(body.Bytes())
	return AppendChecksum(msg.Bytes())
}

// AppendChecksum appends the 10= trailer for msg.
func AppendChecksum(msg []byte) []byte {
	sum := 0
	for _, c := range msg {
		sum += int(c)
	}
	return append(msg, fmt.Sprintf("10=%03d\x01", sum%256)...)
}

// Message is a received message split into fields.
type Message struct {
	Raw    []byte
	Fields []Field
}

// Parse splits a framed message into fields.
func Parse(raw []byte) (*Message, error) {
	m := &Message{Raw: append([]byte(nil), raw...)}
	for _, part := range bytes.Split(bytes.TrimSuffix(raw, []byte{1}), []byte{1}) {
		eq := bytes.IndexByte(part, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("fixclient: field %q has no tag", part)
		}
		tag, err := strconv.Atoi(string(part[:eq]))
		if err != nil {
			return nil, fmt.Errorf("fixclient: bad tag in %q", part)
		}
		m.Fields = append(m.Fields, Field{tag, string(part[eq+1:])})
	}
	return m, nil
}

// Get returns the first value of tag, or "".
func (m *Message) Get(tag int) string {
	v, _ := m.Lookup(tag)
	return v
}

// Lookup returns the first value of tag and whether it is present.
func (m *Message) Lookup(tag int) (string, bool) {
	for _, f := range m.Fields {
		if f.Tag == tag {
			return f.Value, true
		}
	}
	return "", false
}

// Type is MsgType (35).
func (m *Message) Type() string { return m.Get(35) }

// SeqNum is MsgSeqNum (34).
func (m *Message) SeqNum() int {
	n, _ := strconv.Atoi(m.Get(34))
	return n
}

// String shows the message with SOH as |.
func (m *Message) String() string { return strings.ReplaceAll(string(m.Raw), "\x01", "|") }

// ErrFrame reports bytes that are not a FIX message.
var ErrFrame = errors.New("fixclient: bad frame")

// frameLength returns the length of the complete message at the start of b,
// 0 if more bytes are needed, or an error.
func frameLength(b []byte) (int, error) {
	if len(b) < 2 {
		return 0, nil
	}
	if !bytes.HasPrefix(b, []byte("8=")) {
		return 0, fmt.Errorf("%w: does not start with 8=: %q", ErrFrame, trim(b))
	}
	soh := bytes.IndexByte(b, 1)
	if soh < 0 {
		return 0, nil
	}
	rest := b[soh+1:]
	if len(rest) < 3 {
		return 0, nil
	}
	if !bytes.HasPrefix(rest, []byte("9=")) {
		return 0, fmt.Errorf("%w: second field is not 9=: %q", ErrFrame, trim(b))
	}
	end := bytes.IndexByte(rest, 1)
	if end < 0 {
		return 0, nil
	}
	n, err := strconv.Atoi(string(rest[2:end]))
	if err != nil || n < 0 || n > MessageBytesMax {
		return 0, fmt.Errorf("%w: BodyLength %q", ErrFrame, rest[2:end])
	}
	total := soh + 1 + end + 1 + n + 7 // 10=NNN<SOH>
	if len(b) < total {
		return 0, nil
	}
	if !bytes.HasPrefix(b[total-7:], []byte("10=")) {
		return 0, fmt.Errorf("%w: no CheckSum where BodyLength says: %q", ErrFrame, trim(b))
	}
	return total, nil
}

func trim(b []byte) string {
	if len(b) > 80 {
		b = b[:80]
	}
	return strings.ReplaceAll(string(b), "\x01", "|")
}
