package fixclient

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fixvenue/fixvenue/internal/fixwire"
)

const (
	// MessageBytesMax bounds one received message.
	MessageBytesMax = 1 << 20
	// beginString is the only version the venue speaks.
	beginString = "FIX.4.4"
)

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
	body := make([]byte, 0, 64*len(fields))
	for _, f := range fields {
		body = strconv.AppendInt(body, int64(f.Tag), 10)
		body = append(body, '=')
		body = append(body, f.Value...)
		body = append(body, fixwire.SOH)
	}
	return fixwire.AppendMessage(nil, beginString, body)
}

// AppendChecksum appends the 10= trailer for msg.
func AppendChecksum(msg []byte) []byte { return fixwire.AppendCheckSum(msg) }

// Message is a received message split into fields.
type Message struct {
	Raw    []byte
	Fields []Field
}

// Parse splits a framed message into fields.
func Parse(raw []byte) (*Message, error) {
	m := &Message{Raw: append([]byte(nil), raw...)}
	it := fixwire.NewIterator(m.Raw)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		m.Fields = append(m.Fields, Field{int(f.Tag), string(f.Value)})
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("fixclient: %w in %s", err, m)
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
