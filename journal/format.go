package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The on-disk format is drawn in doc.go; the constants below are its numbers.
const (
	// FormatVersion is written in every segment header; a reader refuses
	// any other value rather than guess at a layout it does not know.
	FormatVersion uint16 = 1

	// SegmentHeaderBytes is the size of the header at the start of every
	// segment. Records start right after it, at a 64-byte boundary.
	SegmentHeaderBytes = 64

	// FrameHeaderBytes is the size of the fixed part of a record:
	// length (4), crc32c (4), seq (8).
	FrameHeaderBytes = 16

	// PayloadBytesLimit is the largest payload the format allows (64 KiB;
	// commands are a few hundred bytes). Readers reject a larger length
	// field outright, so a corrupt length never makes them read far.
	PayloadBytesLimit = 1 << 16

	// segmentMagic opens every segment file.
	segmentMagic = "FVJOURNL"

	// EntryMarkBytes is the size of a Raft entry mark (doc.go, "Raft entry
	// marks"): a replicated journal writes one before the command frames of
	// each Raft entry.
	EntryMarkBytes = 32

	// entryMarkLength is the length field that tells a mark from a record:
	// far above PayloadBytesLimit, so no record can carry it.
	entryMarkLength = 0xFFFF_FFFF
)

// Offsets of the segment header fields.
const (
	segOffMagic        = 0
	segOffVersion      = 8
	segOffHeaderBytes  = 10
	segOffReserved     = 12
	segOffFirstSeq     = 16
	segOffSegmentBytes = 24
	segOffCRC          = 60
)

// castagnoli is the CRC32C table (hardware accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segmentHeader is the decoded form of a segment header.
type segmentHeader struct {
	firstSeq     uint64
	segmentBytes int64
}

// encodeSegmentHeader writes h into dst[:SegmentHeaderBytes], reserved bytes zero.
func encodeSegmentHeader(dst []byte, h segmentHeader) {
	dst = dst[:SegmentHeaderBytes]
	clear(dst)
	copy(dst[segOffMagic:], segmentMagic)
	binary.LittleEndian.PutUint16(dst[segOffVersion:], FormatVersion)
	binary.LittleEndian.PutUint16(dst[segOffHeaderBytes:], SegmentHeaderBytes)
	binary.LittleEndian.PutUint64(dst[segOffFirstSeq:], h.firstSeq)
	binary.LittleEndian.PutUint64(dst[segOffSegmentBytes:], uint64(h.segmentBytes))
	binary.LittleEndian.PutUint32(dst[segOffCRC:], crc32.Checksum(dst[:segOffCRC], castagnoli))
}

// errBadHeader is wrapped by every header decoding failure.
var errBadHeader = errors.New("bad segment header")

// decodeSegmentHeader checks and decodes a segment header. Every field is
// checked, reserved bytes included, because the header CRC alone cannot
// tell an old format from a damaged one.
func decodeSegmentHeader(src []byte) (segmentHeader, error) {
	if len(src) < SegmentHeaderBytes {
		return segmentHeader{}, fmt.Errorf("%w: %d bytes, need %d", errBadHeader, len(src), SegmentHeaderBytes)
	}
	if string(src[segOffMagic:segOffMagic+len(segmentMagic)]) != segmentMagic {
		return segmentHeader{}, fmt.Errorf("%w: magic %q", errBadHeader, src[:len(segmentMagic)])
	}
	want := crc32.Checksum(src[:segOffCRC], castagnoli)
	if got := binary.LittleEndian.Uint32(src[segOffCRC:]); got != want {
		return segmentHeader{}, fmt.Errorf("%w: crc %08x, computed %08x", errBadHeader, got, want)
	}
	if v := binary.LittleEndian.Uint16(src[segOffVersion:]); v != FormatVersion {
		return segmentHeader{}, fmt.Errorf("%w: format version %d, this build reads %d", errBadHeader, v, FormatVersion)
	}
	if n := binary.LittleEndian.Uint16(src[segOffHeaderBytes:]); n != SegmentHeaderBytes {
		return segmentHeader{}, fmt.Errorf("%w: header length %d", errBadHeader, n)
	}
	h := segmentHeader{
		firstSeq:     binary.LittleEndian.Uint64(src[segOffFirstSeq:]),
		segmentBytes: int64(binary.LittleEndian.Uint64(src[segOffSegmentBytes:])),
	}
	if h.segmentBytes < minSegmentBytes(1) || h.segmentBytes > SegmentBytesLimit {
		return segmentHeader{}, fmt.Errorf("%w: segment size %d", errBadHeader, h.segmentBytes)
	}
	if h.firstSeq > maxSeq {
		return segmentHeader{}, fmt.Errorf("%w: first sequence %d", errBadHeader, h.firstSeq)
	}
	return h, nil
}

// maxSeq is the largest sequence the journal accepts: sequences are
// exposed as int64 (so that -1 can mean "none"), stored as uint64.
const maxSeq = 1<<63 - 2

// SegmentBytesLimit bounds the segment size (256 MiB): when the end of the
// last segment is damaged, its tail is examined in memory in one piece,
// which must stay bounded.
const SegmentBytesLimit = 1 << 28

// minSegmentBytes is the smallest segment that holds one record of
// payloadBytesMax bytes.
func minSegmentBytes(payloadBytesMax int) int64 {
	return SegmentHeaderBytes + FrameHeaderBytes + int64(payloadBytesMax)
}

// putFrame writes a record frame for (seq, payload) into dst, which must
// be exactly FrameHeaderBytes+len(payload) long.
func putFrame(dst []byte, seq uint64, payload []byte) {
	binary.LittleEndian.PutUint64(dst[8:], seq)
	copy(dst[FrameHeaderBytes:], payload)
	binary.LittleEndian.PutUint32(dst[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(dst[4:], crc32.Checksum(dst[8:], castagnoli))
}

// frameCRC computes the CRC32C a frame whose bytes start at src[0] must
// carry; src must hold the whole frame.
func frameCRC(frame []byte) uint32 {
	return crc32.Checksum(frame[8:], castagnoli)
}

// EntryMark is a Raft entry's place in a replicated journal: its index and
// term, and how many command records follow it (0 for an entry that holds
// no command).
type EntryMark struct {
	Index, Term uint64
	Commands    uint32
}

// putEntryMark writes the mark m into dst[:EntryMarkBytes].
func putEntryMark(dst []byte, m EntryMark) {
	dst = dst[:EntryMarkBytes]
	binary.LittleEndian.PutUint32(dst[0:], entryMarkLength)
	binary.LittleEndian.PutUint64(dst[8:], m.Index)
	binary.LittleEndian.PutUint64(dst[16:], m.Term)
	binary.LittleEndian.PutUint32(dst[24:], m.Commands)
	binary.LittleEndian.PutUint32(dst[28:], 0)
	binary.LittleEndian.PutUint32(dst[4:], crc32.Checksum(dst[8:], castagnoli))
}

// decodeEntryMark checks the mark at the start of src (which holds at least
// EntryMarkBytes) and decodes it; ok is false for a bad CRC, a non-zero
// reserved field or index 0.
func decodeEntryMark(src []byte) (EntryMark, bool) {
	src = src[:EntryMarkBytes]
	if binary.LittleEndian.Uint32(src[4:]) != crc32.Checksum(src[8:], castagnoli) ||
		binary.LittleEndian.Uint32(src[28:]) != 0 {
		return EntryMark{}, false
	}
	m := EntryMark{Index: binary.LittleEndian.Uint64(src[8:]), Term: binary.LittleEndian.Uint64(src[16:]),
		Commands: binary.LittleEndian.Uint32(src[24:])}
	return m, m.Index != 0
}
