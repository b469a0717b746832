package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// AppendFrame appends the record frame of (seq, payload), exactly as a
// segment holds it (doc.go, "Segment files"), to dst. A replicated journal
// ships batches of these frames unchanged, so that every replica can check
// each command's CRC before it writes it.
func AppendFrame(dst []byte, seq uint64, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, FrameHeaderBytes+len(payload))...)
	putFrame(dst[start:], seq, payload)
	return dst
}

// ErrFrame is wrapped by NextFrame's errors.
var ErrFrame = errors.New("journal: bad frame")

// NextFrame decodes the frame at the start of src, checking its length and
// CRC, and returns its seq, its payload (aliasing src) and the frame size.
func NextFrame(src []byte) (seq uint64, payload []byte, n int, err error) {
	if len(src) < FrameHeaderBytes {
		return 0, nil, 0, fmt.Errorf("%w: %d bytes left, a frame header is %d", ErrFrame, len(src), FrameHeaderBytes)
	}
	length := int(binary.LittleEndian.Uint32(src))
	if length == 0 || length > PayloadBytesLimit || FrameHeaderBytes+length > len(src) {
		return 0, nil, 0, fmt.Errorf("%w: length %d with %d bytes left", ErrFrame, length, len(src))
	}
	n = FrameHeaderBytes + length
	if got, want := binary.LittleEndian.Uint32(src[4:]), frameCRC(src[:n]); got != want {
		return 0, nil, 0, fmt.Errorf("%w: crc %08x, computed %08x", ErrFrame, got, want)
	}
	return binary.LittleEndian.Uint64(src[8:]), src[FrameHeaderBytes:n], n, nil
}
