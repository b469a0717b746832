package loadgen

import (
	"strconv"

	"github.com/fixvenue/fixvenue/internal/fixwire"
	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"
)

// FIX framing constants.
const (
	soh         = fixwire.SOH
	beginString = "FIX.4.4"
)

// fixWriter builds one FIX message at a time into buffers allocated once.
// Body fields are appended first; finish prepends 8= and 9= (whose length
// depends on the body) and appends the checksum. Appending stays within the
// preallocated capacity for every message the load generator builds, so
// building admin messages does not allocate either.
type fixWriter struct {
	body []byte
	msg  []byte
}

func newFixWriter(capBytes int) *fixWriter {
	return &fixWriter{body: make([]byte, 0, capBytes), msg: make([]byte, 0, capBytes+32)}
}

func (w *fixWriter) reset() { w.body = w.body[:0] }

// open appends "tag=" and returns the body offset where the value starts.
func (w *fixWriter) open(t quickfix.Tag) int {
	w.body = strconv.AppendInt(w.body, int64(t), 10)
	w.body = append(w.body, '=')
	return len(w.body)
}

// field appends tag=value␁ and returns the body offset of the value.
func (w *fixWriter) field(t quickfix.Tag, value []byte) int {
	off := w.open(t)
	w.body = append(append(w.body, value...), soh)
	return off
}

// str is field for a string value.
func (w *fixWriter) str(t quickfix.Tag, value string) int {
	off := w.open(t)
	w.body = append(append(w.body, value...), soh)
	return off
}

// uint is field for an unsigned integer value.
func (w *fixWriter) uint(t quickfix.Tag, value uint64) int {
	off := w.open(t)
	w.body = append(strconv.AppendUint(w.body, value, 10), soh)
	return off
}

// header appends the standard header fields after BeginString and BodyLength.
func (w *fixWriter) header(msgType, sender, target string, seq uint64, sendingTime []byte) {
	w.str(tag.MsgType, msgType)
	w.str(tag.SenderCompID, sender)
	w.str(tag.TargetCompID, target)
	w.uint(tag.MsgSeqNum, seq)
	w.field(tag.SendingTime, sendingTime)
}

// finish frames the body and returns the whole message and the offset at
// which the body starts in it. The result aliases the writer's buffer and
// is valid until the next reset.
func (w *fixWriter) finish() (msg []byte, bodyOff int) {
	w.msg = fixwire.AppendMessage(w.msg[:0], beginString, w.body)
	bodyOff = len(w.msg) - fixwire.TrailerBytes - len(w.body)
	return w.msg, bodyOff
}

// putDigits writes v right-aligned and zero-padded into dst; the caller
// guarantees that v fits (every width here has a named bound).
func putDigits(dst []byte, v uint64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
}
