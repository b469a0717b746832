// Package fixwire is the FIX tag=value wire format, once: the CheckSum, the
// header and trailer that frame a body, finding one whole message in a
// buffer under a size bound, reading a stream message by message, and
// walking a message's fields. Test clients, the conformance runner and the
// load generator build and read FIX with it. The edge's streaming framer
// (gateway/edge/framer.go) keeps its own byte-at-a-time state machine and
// CheckSum: it checks every rule QuickFIX/Go needs in one pass over bytes
// it examines exactly once, which this package does not try to do.
//
// # The frame
//
//	8=FIX.4.4␁9=NNN␁35=X␁ … body fields … ␁10=NNN␁
//	└ header ────────┘└──── body: NNN bytes ────┘└trailer┘
//
// BeginString (8) comes first and BodyLength (9) second; BodyLength counts
// the bytes from the first byte after its SOH up to and including the SOH
// before the trailer. The trailer is CheckSum (10): the sum of every byte
// before it (header and body) modulo 256, as exactly three digits, then SOH.
//
// # Contract
//
//   - Frame(b, messageBytesMax) returns the length of the whole message at
//     the start of b, 0 when b is a prefix of one (read more), or an error
//     as soon as the bytes present cannot start a message: ErrBeginString,
//     ErrBodyLength, ErrTooLarge (the BodyLength makes the message longer
//     than messageBytesMax), ErrTrailer (the bytes where BodyLength says the
//     body ends are not "10=" three digits SOH). It checks the frame's
//     shape, not the CheckSum's value: VerifyCheckSum does that.
//   - AppendMessage writes header, body and trailer; AppendCheckSum and
//     SetCheckSum write the trailer of a message built in place.
//   - Iterator returns each field's tag and value as a sub-slice of the
//     message; a length field (DataTag) makes the next field's value that
//     many bytes, so data fields may hold SOH. A malformed field stops the
//     walk with ErrField or ErrDataLength.
//   - Reader frames a stream with a buffer that grows to messageBytesMax at
//     most (NewReaderSize: a larger one, allocated once); the message it
//     returns aliases that buffer. Every Frame error matches ErrFrame.
//   - ParseUint reads a non-negative integer value of at most a given
//     number of digits (a sequence number); ParseLength is ParseUint for a
//     BodyLength or a length field.
//
// Nothing here allocates per message: Frame, the CheckSum functions, the
// Iterator and SetCheckSum never allocate, the errors are fixed values,
// AppendMessage allocates only when dst lacks capacity, and Reader.Next
// only when its buffer grows.
//
// # Limits
//
//   - BeginString: 1 to BeginStringBytesMax bytes; BodyLength: 1 to
//     BodyLengthDigitsMax digits (leading zeros allowed); tags: 1 to
//     TagDigitsMax digits (18 where an int has 64 bits), with a leading '-' read as a negative tag (invalid
//     FIX that the session layer answers, so it is not refused here); a
//     length field's value: 1 to BodyLengthDigitsMax digits.
//   - Frame does not check that MsgType is the first body field, that tags
//     are known, that values are valid for their type, or repeated fields:
//     that is the session layer's work (QuickFIX/Go, or the edge's framer).
//   - After a framing error a stream cannot be resynchronised here; the
//     callers close the connection and report what they received.
package fixwire
