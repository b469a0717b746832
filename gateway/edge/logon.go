package edge

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixwire"
	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"
)

// logonOnceTags may appear at most once in a Logon, in addition to every
// standard header field. QuickFIX/Go keeps the last of a repeated field
// while the gate would check the first; refusing repeats keeps the two
// from ever disagreeing on who is logging on.
var logonOnceTags = []quickfix.Tag{tag.Password, tag.NewPassword, tag.EncryptMethod, tag.HeartBtInt,
	tag.ResetSeqNumFlag, tag.MaxMessageSize, tag.TestMessageIndicator, tag.NextExpectedMsgSeqNum}

// logonFields is what the gate reads from a Logon.
type logonFields struct {
	key         SessionKey
	password    []byte
	newPassword []byte
	begin       []byte
	// sender and target are the CompIDs as sent, for the refusal's
	// Logout: key holds none that is too long (it names the session in
	// maps and logs), and a Logout without them is itself invalid.
	sender, target []byte
	// reset is ResetSeqNumFlag (141) Y; seqNum is MsgSeqNum (34), 0 when
	// it is not a sequence number (the Logon is malformed then).
	reset  bool
	seqNum uint64
}

// parseLogon reads a Logon the framer accepted. A non-empty problem says
// why the Logon is malformed (it becomes the refusing Logout's text).
func parseLogon(msg []byte) (lf logonFields, problem string) {
	it := fixwire.NewIterator(msg)
	seen := make(map[quickfix.Tag]bool, 16)
	var sender, target []byte
	haveSeqNum, haveHeartBtInt, haveEncryptMethod := false, false, false
	var seqNum []byte
	reset := false
	// The first problem is the one named; the fields go on being read so
	// that the refusal's Logout carries the CompIDs, swapped (a Logout with
	// empty ones is itself invalid, and a validating client drops it
	// without reading why).
	fail := func(p string) {
		if problem == "" {
			problem = p
		}
	}
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		if len(f.Value) == 0 {
			fail(fmt.Sprintf("tag %d specified without value", f.Tag))
			continue
		}
		once := f.Tag.IsHeader() || slices.Contains(logonOnceTags, f.Tag)
		if once && seen[f.Tag] {
			fail(fmt.Sprintf("tag %d appears more than once", f.Tag))
			continue
		}
		seen[f.Tag] = true
		switch f.Tag {
		case tag.BeginString:
			lf.begin = f.Value
		case tag.MsgSeqNum:
			if !validSeqNum(f.Value) {
				fail("tag 34 is not a sequence number")
			}
			haveSeqNum, seqNum = true, f.Value
		case tag.HeartBtInt:
			if !validHeartBtInt(f.Value) {
				fail(fmt.Sprintf("tag 108 must be a heartbeat interval of 1 to %d seconds", HeartBtIntMax))
			}
			haveHeartBtInt = true
		case tag.EncryptMethod:
			// QuickFIX/Go closes without a word on a Logon lacking it, and
			// takes any value while it encrypts nothing.
			if string(f.Value) != "0" {
				fail("tag 98 must be 0 (no encryption; the venue offers TLS)")
			}
			haveEncryptMethod = true
		case tag.SenderCompID:
			sender = f.Value
		case tag.TargetCompID:
			target = f.Value
		case tag.Password:
			lf.password = f.Value
		case tag.NewPassword:
			lf.newPassword = f.Value
		case tag.ResetSeqNumFlag:
			reset = string(f.Value) == "Y"
		}
	}
	if err := it.Err(); err != nil {
		// Not expected: the framer accepted msg, so its fields are well formed.
		fail("malformed field: " + err.Error())
	}
	tooLong := len(sender) > compIDBytesMax || len(target) > compIDBytesMax
	switch {
	case !haveSeqNum:
		fail("required tag 34 missing")
	case sender == nil:
		fail("required tag 49 missing")
	case target == nil:
		fail("required tag 56 missing")
	case tooLong:
		fail("CompID too long")
	case !haveHeartBtInt:
		fail("required tag 108 missing")
	case !haveEncryptMethod:
		fail("required tag 98 missing")
	case reset && strings.TrimLeft(string(seqNum), "0") != "1":
		// Both sides start again at 1 (FIX 4.4, ResetSeqNumFlag);
		// QuickFIX/Go took it and asked the client to resend its own Logon.
		fail(resetNotAtOneProblem)
	}
	lf.sender, lf.target = sender, target
	lf.reset = reset
	if validSeqNum(seqNum) {
		lf.seqNum, _ = strconv.ParseUint(string(seqNum), 10, 64)
	}
	if tooLong {
		sender, target = nil, nil
	}
	lf.key = SessionKey{BeginString: string(lf.begin), ClientCompID: string(sender), VenueCompID: string(target)}
	return lf, problem
}

// resetNotAtOneProblem is what is wrong with a Logon that has
// ResetSeqNumFlag Y and a MsgSeqNum other than 1.
const resetNotAtOneProblem = "a Logon with 141=Y must carry 34=1"

// resetSeqNumFlagOf reports whether a framed Logon's ResetSeqNumFlag is Y
// (the last one, as QuickFIX/Go reads a repeated field).
func resetSeqNumFlagOf(msg []byte) bool {
	reset := false
	it := fixwire.NewIterator(msg)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		if f.Tag == tag.ResetSeqNumFlag {
			reset = string(f.Value) == "Y"
		}
	}
	return reset
}

// heartBtIntOf returns the first HeartBtInt of a framed Logon.
func heartBtIntOf(msg []byte) ([]byte, bool) {
	it := fixwire.NewIterator(msg)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		if f.Tag == tag.HeartBtInt {
			return f.Value, true
		}
	}
	return nil, false
}

// HeartBtIntMax bounds the heartbeat interval a Logon may ask for, in
// seconds. QuickFIX/Go takes any integer: with 0 or less its timers fire at
// once (a TestRequest, then a disconnect right after the Logon), and a value
// beyond 32 bits wraps; an hour is far beyond what a client needs and still
// finds a silent peer the same day.
const HeartBtIntMax = 3600

// validHeartBtInt reports whether v is a whole number of seconds from 1 to
// HeartBtIntMax (leading zeros allowed, as FIX's int type does).
func validHeartBtInt(v []byte) bool {
	n, ok := fixwire.ParseUint(v, 19)
	return ok && n >= 1 && n <= HeartBtIntMax
}

// stripCredentials returns the Logon without Password (554) and
// NewPassword (925), with BodyLength and CheckSum recomputed, so that
// QuickFIX/Go, its logs and the application never hold a password. A
// Logon without them is returned as is.
func stripCredentials(msg []byte) []byte {
	var begin []byte
	found := false
	body := make([]byte, 0, len(msg))
	it := fixwire.NewIterator(msg)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		switch f.Tag {
		case tag.BeginString:
			begin = f.Value
			continue
		case tag.BodyLength, tag.CheckSum:
			continue
		case tag.Password, tag.NewPassword:
			if len(f.Value) > 0 { // an empty one hides nothing: QuickFIX/Go rejects it
				found = true
				continue
			}
		}
		body = append(body, msg[f.Start:f.End]...)
	}
	if !found && it.Err() == nil {
		return msg
	}
	// On an iterator error (not expected: the framer accepted msg, and
	// FuzzFramer checks that fixwire reads what it accepts) the
	// fields before the bad one go on: never a password.
	return frame(begin, body)
}

// frame wraps a body ("35=…␁ … ␁") into a whole message.
func frame(begin []byte, body []byte) []byte {
	out := make([]byte, 0, len(body)+headerBytesMax+trailerBytes)
	return fixwire.AppendMessage(out, string(begin), body)
}

// refusalLogout builds the Logout the gate sends when it refuses a Logon.
// It carries MsgSeqNum 1: the gate owns no sequence numbers (QuickFIX/Go
// does, and must not see a refused Logon), and the connection closes right
// after, so the number starts nothing.
func refusalLogout(lf logonFields, text string, now time.Time) []byte {
	body := make([]byte, 0, 128+len(lf.sender)+len(lf.target)+len(text))
	body = append(body, "35=5\x0134=1\x0149="...)
	body = append(body, lf.target...)
	body = append(body, "\x0152="...)
	body = now.UTC().AppendFormat(body, "20060102-15:04:05.000")
	body = append(body, "\x0156="...)
	body = append(body, lf.sender...)
	body = append(body, "\x0158="...)
	body = append(body, text...)
	body = append(body, soh)
	return frame(lf.begin, body)
}
