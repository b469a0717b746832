package sbe

import "errors"

// The errors returned by generated codecs. They are plain sentinel values,
// never wrapped, so that a failed decode on the hot path costs no allocation
// and callers can compare with == or errors.Is.
var (
	// ErrShortBuffer: the buffer ends before the header, the block or a
	// repeating group that the message needs; or the flyweight is not wrapped.
	ErrShortBuffer = errors.New("sbe: buffer too short for the message")
	// ErrWrongSchema: the header names another schema id.
	ErrWrongSchema = errors.New("sbe: message header names another schema")
	// ErrWrongTemplate: the header names another template id than the
	// flyweight that was asked to wrap it.
	ErrWrongTemplate = errors.New("sbe: message header names another template")
	// ErrUnknownTemplate: the header names a template id that the schema
	// does not define (from the package-level AppendText).
	ErrUnknownTemplate = errors.New("sbe: template id not defined by the schema")
	// ErrBlockLength: the header (or a group dimension) declares a block
	// shorter than the schema's, so some fields would be missing.
	ErrBlockLength = errors.New("sbe: block length shorter than the schema's")
	// ErrValueTooLong: a value given to a fixed-length char array setter is
	// longer than the field; nothing was written.
	ErrValueTooLong = errors.New("sbe: value longer than the fixed-length field")
	// ErrGroupCount: a repeating group count is negative or above
	// GroupCountMax; nothing was written.
	ErrGroupCount = errors.New("sbe: repeating group count out of range")
)

// GroupCountMax is the largest number of entries in one repeating group: the
// standard dimension encodes numInGroup as a uint16.
const GroupCountMax = 1<<16 - 1
