package loadgen

import "errors"

// Inbound bounds.
const (
	// messageBytesMax bounds one inbound message. The venue's largest
	// answers (ExecutionReports with a Text) are well under 1 KiB; a
	// BodyLength claiming more is a framing error, not a reason to grow.
	messageBytesMax = 16 << 10
	// bodyLengthDigitsMax and intDigitsMax keep number parsing in range.
	bodyLengthDigitsMax = 6
	intDigitsMax        = 18
	// beginStringBytesMax bounds the value of 8=.
	beginStringBytesMax = 16
)

// Parse errors are values, so that the receive loop never allocates, even
// on bad input.
var (
	errFrame      = errors.New("loadgen: bad FIX frame")
	errChecksum   = errors.New("loadgen: bad FIX checksum")
	errField      = errors.New("loadgen: malformed FIX field")
	errTooLarge   = errors.New("loadgen: FIX message larger than the bound")
	errBadSeqNum  = errors.New("loadgen: bad MsgSeqNum")
	errNoMsgType  = errors.New("loadgen: message without MsgType")
	errSeqMissing = errors.New("loadgen: message without MsgSeqNum")
)

// frameLength returns the length of the complete FIX message at the start
// of b, 0 when more bytes are needed, or an error when b does not start
// with a well-formed "8=…␁9=N␁" or the trailer is not where BodyLength says.
func frameLength(b []byte) (int, error) {
	if len(b) < 2 {
		if len(b) == 1 && b[0] != '8' {
			return 0, errFrame
		}
		return 0, nil
	}
	if b[0] != '8' || b[1] != '=' {
		return 0, errFrame
	}
	i := 2
	for ; i < len(b) && b[i] != soh; i++ {
		if i-2 >= beginStringBytesMax {
			return 0, errFrame
		}
	}
	if i >= len(b) {
		return 0, nil
	}
	i++ // past SOH
	if len(b)-i < 2 {
		return 0, nil
	}
	if b[i] != '9' || b[i+1] != '=' {
		return 0, errFrame
	}
	i += 2
	bodyLen, digits := 0, 0
	for ; i < len(b) && b[i] != soh; i++ {
		c := b[i]
		if c < '0' || c > '9' || digits == bodyLengthDigitsMax {
			return 0, errFrame
		}
		bodyLen = bodyLen*10 + int(c-'0')
		digits++
	}
	if i >= len(b) {
		return 0, nil
	}
	if digits == 0 {
		return 0, errFrame
	}
	total := i + 1 + bodyLen + checksumFieldBytes
	if total > messageBytesMax {
		return 0, errTooLarge
	}
	if len(b) < total {
		return 0, nil
	}
	t := b[total-checksumFieldBytes:]
	if t[0] != '1' || t[1] != '0' || t[2] != '=' || t[6] != soh {
		return 0, errFrame
	}
	return total, nil
}

// inbound is one received message, its fields as sub-slices of the read
// buffer (valid until the buffer is reused). Only the fields the load
// generator acts on are kept.
type inbound struct {
	msgType     []byte
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
	end := len(msg) - checksumFieldBytes
	sum := 0
	for _, c := range msg[:end] {
		sum += int(c)
	}
	want, ok := parseUint(msg[end+3 : end+6])
	if !ok || want != uint64(sum&0xFF) {
		return errChecksum
	}
	haveSeq := false
	for i := 0; i < end; {
		tag := 0
		j := i
		for ; j < end && msg[j] != '='; j++ {
			c := msg[j]
			if c < '0' || c > '9' || j-i >= 9 {
				return errField
			}
			tag = tag*10 + int(c-'0')
		}
		if j == i || j >= end {
			return errField
		}
		k := j + 1
		for k < end && msg[k] != soh {
			k++
		}
		if k >= end {
			return errField
		}
		v := msg[j+1 : k]
		if err := m.set(tag, v, &haveSeq); err != nil {
			return err
		}
		i = k + 1
	}
	if len(m.msgType) == 0 {
		return errNoMsgType
	}
	if !haveSeq {
		return errSeqMissing
	}
	return nil
}

func (m *inbound) set(tag int, v []byte, haveSeq *bool) error {
	var ok bool
	switch tag {
	case 35:
		m.msgType = v
	case 34:
		if m.seq, ok = parseUint(v); !ok || m.seq == 0 {
			return errBadSeqNum
		}
		*haveSeq = true
	case 43:
		m.possDup = len(v) == 1 && v[0] == 'Y'
	case 123:
		m.gapFill = len(v) == 1 && v[0] == 'Y'
	case 11:
		m.clOrdID = v
	case 150:
		m.execType = v
	case 58:
		m.text = v
	case 112:
		m.testReqID = v
	case 103, 102, 373, 380:
		m.rejectCode = v
	case 7:
		m.beginSeq, m.hasBeginSeq = parseUint(v)
	case 36:
		m.newSeq, _ = parseUint(v)
	case 45:
		m.refSeq, _ = parseUint(v)
	}
	return nil
}

// parseUint reads 1 to intDigitsMax decimal digits.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > intDigitsMax {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// is reports whether the one- or two-byte value b equals s.
func is(b []byte, s string) bool { return string(b) == s }
