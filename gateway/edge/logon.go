package edge

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/quickfixgo/quickfix"
)

// Tags the Logon gate reads.
const (
	tagBeginString  = 8
	tagBodyLength   = 9
	tagCheckSum     = 10
	tagMsgSeqNum    = 34
	tagMsgType      = 35
	tagSenderCompID = 49
	tagTargetCompID = 56
	tagText         = 58
	tagPassword     = 554
	tagNewPassword  = 925
)

// logonOnceTags may appear at most once in a Logon, in addition to every
// standard header field. QuickFIX/Go keeps the last of a repeated field
// while the gate would check the first; refusing repeats keeps the two
// from ever disagreeing on who is logging on.
var logonOnceTags = []int{tagPassword, tagNewPassword, 98, 108, 141, 383, 464, 789}

// field is one field of a checked message.
type field struct {
	tag        int
	value      []byte
	start, end int // the field's bytes, "tag=value␁", in the message
}

// fieldIter walks the fields of a message the framer accepted, reading
// data fields by the length their length field gave.
type fieldIter struct {
	msg     []byte
	pos     int
	dataLen int // length of the next data field, -1 if none
}

func newFieldIter(msg []byte) fieldIter { return fieldIter{msg: msg, dataLen: -1} }

func (it *fieldIter) next() (field, bool) {
	if it.pos >= len(it.msg) {
		return field{}, false
	}
	f := field{start: it.pos}
	i := it.pos
	for it.msg[i] != '=' {
		f.tag = f.tag*10 + int(it.msg[i]-'0')
		i++
	}
	i++
	valueStart := i
	if it.dataLen >= 0 {
		i += it.dataLen
		it.dataLen = -1
	} else {
		for it.msg[i] != soh {
			i++
		}
	}
	f.value = it.msg[valueStart:i]
	f.end = i + 1
	it.pos = f.end
	if dataTagOf(f.tag) != 0 {
		it.dataLen, _ = parseLength(f.value)
	}
	return f, true
}

// logonFields is what the gate reads from a Logon.
type logonFields struct {
	key      SessionKey
	password []byte
	begin    []byte
}

// parseLogon reads a Logon the framer accepted. A non-empty problem says
// why the Logon is malformed (it becomes the refusing Logout's text).
func parseLogon(msg []byte) (lf logonFields, problem string) {
	it := newFieldIter(msg)
	seen := make(map[int]bool, 16)
	var sender, target []byte
	haveSeqNum := false
	for {
		f, ok := it.next()
		if !ok {
			break
		}
		if len(f.value) == 0 {
			return lf, fmt.Sprintf("tag %d specified without value", f.tag)
		}
		once := quickfix.Tag(f.tag).IsHeader() || slices.Contains(logonOnceTags, f.tag)
		if once && seen[f.tag] {
			return lf, fmt.Sprintf("tag %d appears more than once", f.tag)
		}
		seen[f.tag] = true
		switch f.tag {
		case tagBeginString:
			lf.begin = f.value
		case tagMsgSeqNum:
			if !validSeqNum(f.value) {
				return lf, "tag 34 is not a sequence number"
			}
			haveSeqNum = true
		case tagSenderCompID:
			sender = f.value
		case tagTargetCompID:
			target = f.value
		case tagPassword:
			lf.password = f.value
		}
	}
	switch {
	case !haveSeqNum:
		return lf, "required tag 34 missing"
	case sender == nil:
		return lf, "required tag 49 missing"
	case target == nil:
		return lf, "required tag 56 missing"
	case len(sender) > compIDBytesMax || len(target) > compIDBytesMax:
		return lf, "CompID too long"
	}
	lf.key = SessionKey{BeginString: string(lf.begin), ClientCompID: string(sender), VenueCompID: string(target)}
	return lf, ""
}

// stripCredentials returns the Logon without Password (554) and
// NewPassword (925), with BodyLength and CheckSum recomputed, so that
// QuickFIX/Go, its logs and the application never hold a password. A
// Logon without them is returned as is.
func stripCredentials(msg []byte) []byte {
	var begin []byte
	found := false
	body := make([]byte, 0, len(msg))
	it := newFieldIter(msg)
	for {
		f, ok := it.next()
		if !ok {
			break
		}
		switch f.tag {
		case tagBeginString:
			begin = f.value
			continue
		case tagBodyLength, tagCheckSum:
			continue
		case tagPassword, tagNewPassword:
			if len(f.value) > 0 { // an empty one hides nothing: QuickFIX/Go rejects it
				found = true
				continue
			}
		}
		body = append(body, msg[f.start:f.end]...)
	}
	if !found {
		return msg
	}
	return frame(begin, body)
}

// frame wraps a body ("35=…␁ … ␁") into a whole message.
func frame(begin []byte, body []byte) []byte {
	out := make([]byte, 0, len(body)+headerBytesMax+trailerBytes)
	out = append(out, "8="...)
	out = append(out, begin...)
	out = append(out, "\x019="...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	out = append(out, soh)
	out = append(out, body...)
	sum := 0
	for _, c := range out {
		sum += int(c)
	}
	sum %= 256
	out = append(out, "10="...)
	out = append(out, byte('0'+sum/100), byte('0'+sum/10%10), byte('0'+sum%10))
	return append(out, soh)
}

// refusalLogout builds the Logout the gate sends when it refuses a Logon.
// It carries MsgSeqNum 1: the gate owns no sequence numbers (QuickFIX/Go
// does, and must not see a refused Logon), and the connection closes right
// after, so the number starts nothing.
func refusalLogout(lf logonFields, text string, now time.Time) []byte {
	body := make([]byte, 0, 128+len(text))
	body = append(body, "35=5\x0134=1\x0149="...)
	body = append(body, lf.key.VenueCompID...)
	body = append(body, "\x0152="...)
	body = now.UTC().AppendFormat(body, "20060102-15:04:05.000")
	body = append(body, "\x0156="...)
	body = append(body, lf.key.ClientCompID...)
	body = append(body, "\x0158="...)
	body = append(body, text...)
	body = append(body, soh)
	return frame(lf.begin, body)
}
