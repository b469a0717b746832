package venue

import "encoding/binary"

// This file is written by hand. Every event's block starts with causeSeq,
// the seq of the command that caused it, and timestampNs, that command's
// timestamp (schemas/venue.xml); TestEventHeadOffsets holds every event to
// it. CauseSeqOf and TimestampNsOf read the two without decoding the event,
// for the consumers that only order, route or stamp events by their cause.

// CauseSeqOf returns the causeSeq of the event at the start of ev, or 0
// when ev is too short to hold one.
func CauseSeqOf(ev []byte) uint64 {
	if len(ev) < MessageHeaderSize+8 {
		return 0
	}
	return binary.LittleEndian.Uint64(ev[MessageHeaderSize:])
}

// TimestampNsOf returns the timestampNs of the event at the start of ev, or
// 0 when ev is too short to hold one.
func TimestampNsOf(ev []byte) int64 {
	if len(ev) < MessageHeaderSize+16 {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(ev[MessageHeaderSize+8:]))
}
