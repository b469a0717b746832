package loadgen

import "strconv"

// FIX framing constants.
const (
	soh         = 0x01
	beginString = "FIX.4.4"
	// checksumFieldBytes is "10=NNN␁".
	checksumFieldBytes = 7
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

// field appends tag=value␁ and returns the body offset of the value.
func (w *fixWriter) field(tag int, value []byte) int {
	w.body = strconv.AppendInt(w.body, int64(tag), 10)
	w.body = append(w.body, '=')
	off := len(w.body)
	w.body = append(w.body, value...)
	w.body = append(w.body, soh)
	return off
}

// str is field for a string value.
func (w *fixWriter) str(tag int, value string) int {
	w.body = strconv.AppendInt(w.body, int64(tag), 10)
	w.body = append(w.body, '=')
	off := len(w.body)
	w.body = append(w.body, value...)
	w.body = append(w.body, soh)
	return off
}

// uint is field for an unsigned integer value.
func (w *fixWriter) uint(tag int, value uint64) int {
	w.body = strconv.AppendInt(w.body, int64(tag), 10)
	w.body = append(w.body, '=')
	off := len(w.body)
	w.body = strconv.AppendUint(w.body, value, 10)
	w.body = append(w.body, soh)
	return off
}

// header appends the standard header fields after BeginString and BodyLength.
func (w *fixWriter) header(msgType, sender, target string, seq uint64, sendingTime []byte) {
	w.str(35, msgType)
	w.str(49, sender)
	w.str(56, target)
	w.uint(34, seq)
	w.field(52, sendingTime)
}

// finish frames the body and returns the whole message and the offset at
// which the body starts in it. The result aliases the writer's buffer and
// is valid until the next reset.
func (w *fixWriter) finish() (msg []byte, bodyOff int) {
	w.msg = append(w.msg[:0], "8="+beginString+"\x019="...)
	w.msg = strconv.AppendInt(w.msg, int64(len(w.body)), 10)
	w.msg = append(w.msg, soh)
	bodyOff = len(w.msg)
	w.msg = append(w.msg, w.body...)
	w.msg = append(w.msg, "10=000\x01"...)
	putChecksum(w.msg)
	return w.msg, bodyOff
}

// putChecksum writes the checksum of msg into its trailing "10=NNN␁".
func putChecksum(msg []byte) {
	end := len(msg) - checksumFieldBytes
	sum := 0
	for _, c := range msg[:end] {
		sum += int(c)
	}
	putDigits(msg[end+3:end+6], uint64(sum&0xFF))
}

// putDigits writes v right-aligned and zero-padded into dst; the caller
// guarantees that v fits (every width here has a named bound).
func putDigits(dst []byte, v uint64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
}
