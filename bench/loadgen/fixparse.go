package loadgen

import (
	"errors"

	"github.com/fixvenue/fixvenue/internal/fixwire"
	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"
)

// Inbound bounds.
const (
	// messageBytesMax bounds one inbound message. The venue's largest
	// answers (ExecutionReports with a Text) are well under 1 KiB; a
	// BodyLength claiming more is a framing error, not a reason to grow.
	messageBytesMax = 16 << 10
	// intDigitsMax keeps number parsing in range.
	intDigitsMax = 18
)

// Parse errors are values, so that the receive loop never allocates, even
// on bad input; framing and field errors are fixwire's.
var (
	errBadSeqNum  = errors.New("loadgen: bad MsgSeqNum")
	errNoMsgType  = errors.New("loadgen: message without MsgType")
	errSeqMissing = errors.New("loadgen: message without MsgSeqNum")
)

// frameLength returns the length of the complete FIX message at the start
// of b, 0 when more bytes are needed, or a framing error (fixwire.Frame).
func frameLength(b []byte) (int, error) { return fixwire.Frame(b, messageBytesMax) }

// inbound is one received message, its fields as sub-slices of the read
// buffer (valid until the buffer is reused). Only the fields the load
// generator acts on are kept.
type inbound struct {
	msgType     []byte
	sender      []byte
	seq         uint64
	possDup     bool
	gapFill     bool
	clOrdID     []byte
	execType    []byte
	text        []byte
	testReqID   []byte
	rejectCode  []byte // 103, 102, 373 or 380, whichever the message carries
	beginSeq    uint64 // 7
	newSeq      uint64 // 36
	refSeq      uint64 // 45
	hasBeginSeq bool
}

// parse splits a framed message (as returned by frameLength) into m,
// after checking its checksum.
func (m *inbound) parse(msg []byte) error {
	*m = inbound{}
	if err := fixwire.VerifyCheckSum(msg); err != nil {
		return err
	}
	haveSeq := false
	it := fixwire.NewIterator(msg)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		if err := m.set(f.Tag, f.Value, &haveSeq); err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if len(m.msgType) == 0 {
		return errNoMsgType
	}
	if !haveSeq {
		return errSeqMissing
	}
	return nil
}

func (m *inbound) set(t quickfix.Tag, v []byte, haveSeq *bool) error {
	var ok bool
	switch t {
	case tag.MsgType:
		m.msgType = v
	case tag.SenderCompID:
		m.sender = v
	case tag.MsgSeqNum:
		if m.seq, ok = parseUint(v); !ok || m.seq == 0 {
			return errBadSeqNum
		}
		*haveSeq = true
	case tag.PossDupFlag:
		m.possDup = len(v) == 1 && v[0] == 'Y'
	case tag.GapFillFlag:
		m.gapFill = len(v) == 1 && v[0] == 'Y'
	case tag.ClOrdID:
		m.clOrdID = v
	case tag.ExecType:
		m.execType = v
	case tag.Text:
		m.text = v
	case tag.TestReqID:
		m.testReqID = v
	case tag.OrdRejReason, tag.CxlRejReason, tag.SessionRejectReason, tag.BusinessRejectReason:
		m.rejectCode = v
	case tag.BeginSeqNo:
		m.beginSeq, m.hasBeginSeq = parseUint(v)
	case tag.NewSeqNo:
		m.newSeq, _ = parseUint(v)
	case tag.RefSeqNum:
		m.refSeq, _ = parseUint(v)
	}
	return nil
}

// parseUint reads a sequence number: 1 to intDigitsMax decimal digits.
func parseUint(b []byte) (uint64, bool) { return fixwire.ParseUint(b, intDigitsMax) }

// is reports whether the one- or two-byte value b equals s.
func is(b []byte, s string) bool { return string(b) == s }
