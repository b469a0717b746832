package gateway

import (
	"bytes"
	"strconv"

	"github.com/quickfixgo/quickfix"
)

// fixBody writes a message body in the order its fields are appended.
// QuickFIX/Go writes a body's fields sorted by tag, which puts a repeating
// group before fields with higher tags that the dictionary places ahead of
// it (SecurityList's NoRelatedSym, 146, before SecurityReqID, 320); a
// validating client then misreads the message. The body is therefore handed
// to QuickFIX/Go as the value of its first field, as erBuilder does (see
// erBuilder.message): the bytes on the wire are the fields in this order.
type fixBody struct {
	b []byte
}

func (w *fixBody) str(t quickfix.Tag, v string) *fixBody {
	w.b = strconv.AppendInt(w.b, int64(t), 10)
	w.b = append(w.b, '=')
	w.b = append(w.b, v...)
	w.b = append(w.b, 1)
	return w
}

func (w *fixBody) int(t quickfix.Tag, v int64) *fixBody {
	return w.str(t, strconv.FormatInt(v, 10))
}

// message returns the body as a message of msgType.
func (w *fixBody) message(msgType string) *quickfix.Message {
	m := quickfix.NewMessage()
	m.Header.SetString(quickfix.Tag(35), msgType)
	if len(w.b) == 0 {
		return m
	}
	eq := bytes.IndexByte(w.b, '=')
	first, _ := strconv.Atoi(string(w.b[:eq]))
	m.Body.SetBytes(quickfix.Tag(first), w.b[eq+1:len(w.b)-1])
	return m
}
