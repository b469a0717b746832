package fixwire

import (
	"bytes"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"
)

// Field is one field of a message.
type Field struct {
	Tag   quickfix.Tag
	Value []byte // a sub-slice of the message
	// Start and End delimit the whole field, "tag=value␁", in the message.
	Start, End int
}

// Iterator walks the fields of one message in order, header and trailer
// included, without allocating:
//
//	it := fixwire.NewIterator(msg)
//	for f, ok := it.Next(); ok; f, ok = it.Next() { … }
//	if err := it.Err(); err != nil { … }
type Iterator struct {
	msg     []byte
	pos     int
	dataTag quickfix.Tag // the field the previous length field announced, 0 if none
	dataLen int
	err     error
}

// NewIterator returns an Iterator over msg, which ends with the SOH of its
// last field (a framed message does).
func NewIterator(msg []byte) Iterator { return Iterator{msg: msg} }

// Next returns the next field, or false at the end of the message or at
// the first malformed field (then Err says why).
func (it *Iterator) Next() (Field, bool) {
	if it.err != nil {
		return Field{}, false
	}
	if it.pos >= len(it.msg) {
		if it.dataTag != 0 {
			return it.fail(ErrDataLength) // the last field announced data
		}
		return Field{}, false
	}
	f := Field{Start: it.pos}
	i, sign := it.pos, 1
	if it.msg[i] == '-' {
		// A negative tag is invalid FIX, but the session layer answers it
		// (QuickFIX/Go: Reject 373=0), so it is read, not refused here.
		i, sign = i+1, -1
	}
	digitsStart, n := i, 0
	for ; i < len(it.msg) && it.msg[i] != '='; i++ {
		c := it.msg[i]
		if !isDigit(c) || i-digitsStart == TagDigitsMax {
			return it.fail(ErrField)
		}
		n = n*10 + int(c-'0')
	}
	if i == digitsStart || i == len(it.msg) {
		return it.fail(ErrField)
	}
	f.Tag = quickfix.Tag(sign * n)
	valueStart := i + 1
	valueEnd, err := it.valueEnd(f.Tag, valueStart)
	if err != nil {
		return it.fail(err)
	}
	f.Value = it.msg[valueStart:valueEnd]
	f.End = valueEnd + 1
	it.pos = f.End
	if data := DataTag(f.Tag); data != 0 {
		length, ok := ParseLength(f.Value)
		if !ok {
			return it.fail(ErrDataLength)
		}
		it.dataTag, it.dataLen = data, length
	}
	return f, true
}

// valueEnd returns the index of the SOH that ends the value of tag t
// starting at from: the first SOH, or for the data field a length field
// announced, the byte right after that many bytes.
func (it *Iterator) valueEnd(t quickfix.Tag, from int) (int, error) {
	if it.dataTag != 0 {
		want, length := it.dataTag, it.dataLen
		it.dataTag = 0
		end := from + length
		if t != want || end >= len(it.msg) || it.msg[end] != SOH {
			return 0, ErrDataLength
		}
		return end, nil
	}
	if i := bytes.IndexByte(it.msg[from:], SOH); i >= 0 {
		return from + i, nil
	}
	return 0, ErrField
}

func (it *Iterator) fail(err error) (Field, bool) {
	it.err = err
	return Field{}, false
}

// Err is why Next stopped early, or nil when it reached the end.
func (it *Iterator) Err() error { return it.err }

// DataTag returns the data field whose length the FIX 4.4 length field t
// gives, or 0 when t is not a length field. A data field's value may hold
// SOH, so it is read by that length.
func DataTag(t quickfix.Tag) quickfix.Tag {
	switch t {
	case tag.SecureDataLen:
		return tag.SecureData
	case tag.SignatureLength:
		return tag.Signature
	case tag.RawDataLength:
		return tag.RawData
	case tag.XmlDataLen:
		return tag.XmlData
	case tag.EncodedIssuerLen, tag.EncodedSecurityDescLen, tag.EncodedListExecInstLen,
		tag.EncodedTextLen, tag.EncodedSubjectLen, tag.EncodedHeadlineLen,
		tag.EncodedAllocTextLen, tag.EncodedUnderlyingIssuerLen, tag.EncodedUnderlyingSecurityDescLen,
		tag.EncodedListStatusTextLen, tag.EncodedLegIssuerLen, tag.EncodedLegSecurityDescLen:
		return t + 1 // each Encoded…Len is followed by its Encoded… field
	}
	return 0
}
