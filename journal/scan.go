package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// readBufferBytes is the read window of a segment scan: large enough for
// the biggest frame, small enough to stay in L2 cache friendly territory
// and to make a scan a handful of preads per segment.
const readBufferBytes = 1 << 20

// ErrCorrupt is wrapped by every CorruptionError.
var ErrCorrupt = errors.New("journal corrupt")

// CorruptionError names the segment file and byte offset where the journal
// stops making sense. It is returned for damage that a torn write cannot
// explain: anywhere in a sealed segment, a bad record followed by valid
// records, a broken header, a sequence gap. Nothing is skipped past it.
type CorruptionError struct {
	Segment string // path of the segment file
	Offset  int64  // byte offset in that file
	Reason  string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("journal: corrupt segment %s at offset %d: %s", e.Segment, e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorrupt }

// window is a sliding read buffer over one file.
type window struct {
	f     io.ReaderAt
	size  int64  // file size
	buf   []byte // backing storage, len readBufferBytes
	start int64  // file offset of buf[0]
	n     int    // valid bytes in buf
}

// bytes returns the file bytes [off, off+n), reading from the file when the
// window does not hold them. n must not exceed len(buf). The slice is valid
// until the next call.
func (w *window) bytes(off int64, n int) ([]byte, error) {
	if off < 0 || off+int64(n) > w.size {
		return nil, io.ErrUnexpectedEOF
	}
	if off >= w.start && off+int64(n) <= w.start+int64(w.n) {
		i := int(off - w.start)
		return w.buf[i : i+n], nil
	}
	want := int(min(int64(len(w.buf)), w.size-off))
	kept := 0
	if off >= w.start && off < w.start+int64(w.n) {
		// Keep the part already read; a frame straddling the window edge
		// costs one copy of at most a frame, not a re-read.
		kept = copy(w.buf, w.buf[off-w.start:w.n])
	}
	if err := readFull(w.f, w.buf[kept:want], off+int64(kept)); err != nil {
		w.n = 0
		return nil, err
	}
	w.start, w.n = off, want
	return w.buf[:n], nil
}

// frameStatus is what a segment scan found at its current offset.
type frameStatus uint8

const (
	frameOK   frameStatus = iota // a complete record with a good CRC and the expected seq
	frameEnd                     // a zero length field, or no room for another frame
	frameBad                     // a length that cannot be, or a CRC mismatch
	frameGap                     // a good CRC but not the expected sequence
	frameMark                    // a Raft entry mark with a good CRC (checked further by Reader)
)

// segmentScan walks the frames of one segment in order.
type segmentScan struct {
	win     window
	file    *os.File // nil when scanning memory (fuzzing)
	path    string
	hdr     segmentHeader
	off     int64  // offset of the next frame
	nextSeq uint64 // the seq the next frame must carry

	// Set by next for frameOK.
	seq      uint64
	payload  []byte
	frameOff int64
	// Set by next for frameMark (frameOff too).
	mark EntryMark
	// Set by next for frameBad and frameGap.
	badReason string
}

// openSegmentScan opens a segment and checks its header against its name
// and size. buf is the read window storage to use.
func openSegmentScan(seg segmentFile, buf []byte) (*segmentScan, error) {
	if seg.archived && !seg.plain {
		b, err := readArchived(seg.path)
		if err != nil {
			return nil, err
		}
		return newSegmentScan(bytes.NewReader(b), int64(len(b)), seg, buf)
	}
	f, err := os.Open(seg.path)
	if err != nil {
		return nil, fmt.Errorf("journal: open segment: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("journal: stat %s: %w", seg.path, err)
	}
	s, err := newSegmentScan(f, st.Size(), seg, buf)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	s.file = f
	return s, nil
}

// newSegmentScan checks the header of the segment held by r (size bytes)
// and positions the scan at the first frame.
func newSegmentScan(r io.ReaderAt, size int64, seg segmentFile, buf []byte) (*segmentScan, error) {
	s := &segmentScan{win: window{f: r, size: size, buf: buf}, path: seg.path}
	raw, err := s.win.bytes(0, SegmentHeaderBytes)
	if err != nil {
		return nil, &CorruptionError{Segment: seg.path, Offset: 0, Reason: fmt.Sprintf("file of %d bytes has no complete header", size)}
	}
	s.hdr, err = decodeSegmentHeader(raw)
	if err != nil {
		return nil, &CorruptionError{Segment: seg.path, Offset: 0, Reason: err.Error()}
	}
	if s.hdr.firstSeq != seg.firstSeq {
		return nil, &CorruptionError{Segment: seg.path, Offset: segOffFirstSeq,
			Reason: fmt.Sprintf("header first sequence %d differs from the file name's %d", s.hdr.firstSeq, seg.firstSeq)}
	}
	if s.hdr.segmentBytes != size {
		return nil, &CorruptionError{Segment: seg.path, Offset: size,
			Reason: fmt.Sprintf("file is %d bytes, header says %d", size, s.hdr.segmentBytes)}
	}
	s.off = SegmentHeaderBytes
	s.nextSeq = s.hdr.firstSeq
	return s, nil
}

func (s *segmentScan) close() error {
	if s.file == nil {
		return nil
	}
	return s.file.Close()
}

// next reads the frame at s.off. On frameOK it advances past the frame.
// Errors are I/O errors only; damage is reported through the status.
func (s *segmentScan) next() (frameStatus, error) {
	off := s.off
	if off+FrameHeaderBytes > s.win.size {
		return frameEnd, nil // the segment is full; what is left must be zeros
	}
	head, err := s.win.bytes(off, FrameHeaderBytes)
	if err != nil {
		return 0, fmt.Errorf("journal: read %s at %d: %w", s.path, off, err)
	}
	length := binary.LittleEndian.Uint32(head)
	if length == 0 {
		return frameEnd, nil
	}
	if length == entryMarkLength {
		return s.nextMark(off)
	}
	if length > PayloadBytesLimit || off+FrameHeaderBytes+int64(length) > s.win.size {
		s.badReason = fmt.Sprintf("length field %d does not fit (limit %d, %d bytes left in segment)",
			length, PayloadBytesLimit, s.win.size-off-FrameHeaderBytes)
		return frameBad, nil
	}
	frame, err := s.win.bytes(off, FrameHeaderBytes+int(length))
	if err != nil {
		return 0, fmt.Errorf("journal: read %s at %d: %w", s.path, off, err)
	}
	if got, want := binary.LittleEndian.Uint32(frame[4:]), frameCRC(frame); got != want {
		s.badReason = fmt.Sprintf("crc32c %08x, computed %08x (record of %d bytes)", got, want, length)
		return frameBad, nil
	}
	seq := binary.LittleEndian.Uint64(frame[8:])
	if seq != s.nextSeq {
		s.badReason = fmt.Sprintf("record has sequence %d, expected %d", seq, s.nextSeq)
		return frameGap, nil
	}
	s.seq, s.payload, s.frameOff = seq, frame[FrameHeaderBytes:], off
	s.off = off + FrameHeaderBytes + int64(length)
	s.nextSeq = seq + 1
	return frameOK, nil
}

// nextMark reads the Raft entry mark at off.
func (s *segmentScan) nextMark(off int64) (frameStatus, error) {
	if off+EntryMarkBytes > s.win.size {
		s.badReason = fmt.Sprintf("entry mark does not fit (%d bytes left in segment)", s.win.size-off)
		return frameBad, nil
	}
	b, err := s.win.bytes(off, EntryMarkBytes)
	if err != nil {
		return 0, fmt.Errorf("journal: read %s at %d: %w", s.path, off, err)
	}
	m, ok := decodeEntryMark(b)
	if !ok {
		s.badReason = "entry mark with a bad crc32c, reserved field or index 0"
		return frameBad, nil
	}
	s.mark, s.frameOff = m, off
	s.off = off + EntryMarkBytes
	return frameMark, nil
}

// tailReport describes the bytes of a segment after its last good record.
type tailReport struct {
	dirtyEnd  int64 // one past the last non-zero byte at or after the end of data; == end when clean
	validOff  int64 // offset of a valid frame found after the end of data, or -1
	validSeq  uint64
	validSize int
}

// inspectTail examines [end, size): it finds the last non-zero byte and, when
// there is one, looks for any frame with a good CRC starting after end. A
// torn write leaves zeros or garbage after the last good record; a valid
// record there means the damage is in the middle of the data, not a tail.
func (s *segmentScan) inspectTail(end int64) (tailReport, error) {
	rep := tailReport{dirtyEnd: end, validOff: -1}
	for off := end; off < s.win.size; {
		n := int(min(int64(len(s.win.buf)), s.win.size-off))
		chunk, err := s.win.bytes(off, n)
		if err != nil {
			return rep, fmt.Errorf("journal: read %s at %d: %w", s.path, off, err)
		}
		if i := lastNonZero(chunk); i >= 0 {
			rep.dirtyEnd = off + int64(i) + 1
		}
		off += int64(n)
	}
	if rep.dirtyEnd == end {
		return rep, nil
	}
	// Slow path, only for a damaged tail: hold the dirty region (plus room
	// for a frame that starts in it) in memory and try every offset.
	regionEnd := min(s.win.size, rep.dirtyEnd+FrameHeaderBytes+PayloadBytesLimit)
	region := make([]byte, regionEnd-end)
	if err := readFull(s.win.f, region, end); err != nil {
		return rep, fmt.Errorf("journal: read %s at %d: %w", s.path, end, err)
	}
	for i := 1; int64(i) < rep.dirtyEnd-end; i++ {
		if size, ok := validFrameAt(region[i:]); ok {
			rep.validOff = end + int64(i)
			rep.validSeq = binary.LittleEndian.Uint64(region[i+8:])
			rep.validSize = size
			break
		}
	}
	return rep, nil
}

// validFrameAt reports whether b starts with a complete frame whose CRC is
// right, and its size.
func validFrameAt(b []byte) (int, bool) {
	if len(b) < FrameHeaderBytes {
		return 0, false
	}
	length := binary.LittleEndian.Uint32(b)
	if length == entryMarkLength {
		if len(b) < EntryMarkBytes {
			return 0, false
		}
		_, ok := decodeEntryMark(b)
		return EntryMarkBytes, ok
	}
	if length == 0 || length > PayloadBytesLimit || FrameHeaderBytes+int(length) > len(b) {
		return 0, false
	}
	size := FrameHeaderBytes + int(length)
	return size, binary.LittleEndian.Uint32(b[4:]) == frameCRC(b[:size])
}

// zeroBlock is compared against to find non-zero bytes quickly (bytes.Equal
// is vectorised; clean tails are megabytes of zeros).
var zeroBlock [4096]byte

// lastNonZero returns the index of the last non-zero byte of b, or -1.
func lastNonZero(b []byte) int {
	i := len(b)
	for i > 0 {
		start := max(0, i-len(zeroBlock))
		if !bytes.Equal(b[start:i], zeroBlock[:i-start]) {
			break
		}
		i = start
	}
	for i > 0 {
		if b[i-1] != 0 {
			return i - 1
		}
		i--
	}
	return -1
}

// SegmentCopyEnd is where a copy of a live segment's bytes, read while the
// venue may be writing them (fixvenue backup), ends: the offset after its
// last whole record in sequence, and the seq after that record. path names
// the segment (its name carries its first seq). A sealed segment (one
// before the journal's last) is whole: a bad record in it, or bytes after
// its last record, is a CorruptionError, as a start finds it. A segment
// holding Raft entry marks (a cluster node's journal) is refused.
func SegmentCopyEnd(path string, data []byte, sealed bool) (end int64, next uint64, err error) {
	first, ok := parseSegmentName(filepath.Base(path))
	if !ok {
		return 0, 0, fmt.Errorf("journal: %s: not a segment's name", path)
	}
	s, err := newSegmentScan(bytes.NewReader(data), int64(len(data)), segmentFile{path: path, name: filepath.Base(path), firstSeq: first},
		make([]byte, readBufferBytes))
	if err != nil {
		return 0, 0, err
	}
	for {
		st, err := s.next()
		if err != nil {
			return 0, 0, err
		}
		switch st {
		case frameOK:
			continue
		case frameMark:
			return 0, 0, fmt.Errorf("journal: %s holds Raft entry marks: a cluster node's journal", path)
		case frameEnd:
			if sealed && bytes.ContainsFunc(data[s.off:], func(r rune) bool { return r != 0 }) {
				return 0, 0, &CorruptionError{Segment: path, Offset: s.off, Reason: "bytes after the last record of a sealed segment"}
			}
		default:
			if sealed {
				return 0, 0, &CorruptionError{Segment: path, Offset: s.off, Reason: s.badReason}
			}
		}
		return s.off, s.nextSeq, nil
	}
}
