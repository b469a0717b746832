package edge

import (
	"github.com/fixvenue/fixvenue/internal/fixwire"
	"github.com/quickfixgo/quickfix"
)

// The framer finds whole FIX messages in the bytes a client sends and
// checks each one before QuickFIX/Go may see it. It is a byte-at-a-time
// state machine over one buffer owned by the connection: bytes are read in
// at buf[end:], examined once at buf[pos], and a message is handed out as
// the slice buf[start:pos] without a copy. Nothing is allocated per message.
//
//	8=FIX.4.4␁9=NNN␁35=X␁ … fields … ␁10=NNN␁
//	└ prefix ┘ └ body length ┘└──── body: NNN bytes ────┘└trailer┘
//
// States, in the order a good message passes through them:
//
//	sync        skip bytes until "8=FIX" (garbage is counted, not kept)
//	prefix      matching "8=FIX"
//	begin       the rest of the BeginString, up to SOH: FIX.d.d or FIXT.d.d
//	bodyTag     "9="
//	bodyLength  digits up to SOH: at most 9 digits and Config.MessageBytesMax
//	fieldStart  first digit of a tag, or the trailer when the body is complete
//	tag         tag digits up to '='
//	value       value bytes up to SOH
//	data        exactly N bytes announced by the preceding length field
//	trailer     "10=" three digits SOH, compared with the sum of every byte before it
//
// A message that breaks a rule is dropped with a Reason, and scanning for
// the next "8=FIX" resumes:
//   - after the message, when only the CheckSum value is wrong (its extent
//     is known);
//   - at the start of the field before the one that broke a rule, so that a
//     message glued to a truncated one ("…␁49=CL8=FIX.4.4␁9=…") or one that
//     a too large BodyLength runs into is still found;
//   - at the field that broke a rule when the field before it holds data
//     (XmlData may hold SOH and whole messages), and after the failing byte
//     when the rule broke inside data;
//   - one byte after the "8=", when the header breaks a rule.
// Resuming no further back than one plain field keeps every byte examined a
// small bounded number of times, so messages nested in data fields cannot
// make the scan quadratic.
// A BodyLength too large to buffer is fatal: only a broken or hostile client
// sends one, and skipping it byte by byte would let it hold the connection.

const (
	// beginStringBytesMax bounds the BeginString value ("FIXT.1.1" is 8).
	beginStringBytesMax = 16
	// bodyLengthDigitsMax: more digits than this is an absurd claim.
	bodyLengthDigitsMax = 9
	// tagDigitsMax bounds tag numbers, so that they fit an int without
	// wrapping, as QuickFIX/Go reads them: a longer tag is as well formed as
	// tag 5000 and gets the same Reject (373=0, "Invalid tag number") from
	// QuickFIX/Go; dropped, it was asked for again by a ResendRequest and
	// dropped again, and the session waited for it for ever.
	tagDigitsMax = fixwire.TagDigitsMax
	// seqNumDigitsMax keeps MsgSeqNum within an int64.
	seqNumDigitsMax = fixwire.SeqNumDigitsMax
	// headerBytesMax bounds "8=<begin>␁9=<digits>␁".
	headerBytesMax = 2 + beginStringBytesMax + 1 + 2 + bodyLengthDigitsMax + 1
	// trailerBytes is "10=NNN␁".
	trailerBytes = 7
	// bodyLengthMin is the shortest body: "35=X␁".
	bodyLengthMin = 5
	// initialBufferBytes is a connection's first inbound buffer; it grows
	// once, to the largest message, when a BodyLength needs it.
	initialBufferBytes = 4096
)

type frameState uint8

const (
	stSync frameState = iota
	stPrefix
	stBegin
	stBodyTag
	stBodyLength
	stFieldStart
	stTag
	stValue
	stData
	stTrailer
)

// verdict is what next found.
type verdict uint8

const (
	needMore      verdict = iota // no decision yet: read more bytes
	frameOK                      // a whole, checked message: framer.message()
	frameUnusable                // a whole message QuickFIX/Go must not see: message(), reason
	frameDrop                    // a message was dropped: framer.reason
	frameFatal                   // the stream must be closed: framer.reason
)

const soh = 0x01

// framer frames and checks one connection's inbound messages.
type framer struct {
	buf   []byte
	end   int // buf[:end] holds bytes read
	start int // first byte of the message being framed
	pos   int // next byte to examine
	state frameState

	bufferBytesMax int // the buffer never grows past this
	bodyBytesMax   int // Config.MessageBytesMax
	dropEmpty      bool

	// Per message scratch.
	sum           uint // sum of bytes start..bodyEnd-1
	match         int  // bytes of a fixed string matched so far
	digits        int
	number        int
	begin         [beginStringBytesMax]byte
	beginLen      int
	bodyStart     int
	bodyEnd       int // index of the trailer's '1'
	tag           int
	fields        int // body fields completed
	fieldStart    int // index of the first byte of the field being read
	prevStart     int // index of the first byte of the field before it, -1 if none or data
	valueStart    int
	dataTag       int // tag the pending data field must have, 0 if none
	dataLen       int
	dataEnd       int    // index of the SOH closing the data field
	emptyTag      int    // first tag seen with an empty value, 0 if none
	seqNum        bool   // the message has a MsgSeqNum (34) field
	seqNumValue   uint64 // its value when valid (the last one)
	unusable      Reason // why a well framed message must not be passed on
	routeTag      int    // first routing field holding a byte outside printable ASCII, 0 if none
	msgTypeStart  int
	msgTypeEnd    int
	garbageBytes  int // bytes skipped in sync since the last call to takeGarbage
	reason        Reason
	msgStart      int // last frameOK message: buf[msgStart:msgEnd]
	msgEnd        int
	checkSumValue int
}

// newFramer returns a framer for messages with bodies up to bodyBytesMax.
func newFramer(bodyBytesMax int, dropEmpty bool) *framer {
	total := headerBytesMax + bodyBytesMax + trailerBytes
	initial := min(initialBufferBytes, total)
	return &framer{
		buf:            make([]byte, initial),
		bufferBytesMax: total,
		bodyBytesMax:   bodyBytesMax,
		dropEmpty:      dropEmpty,
	}
}

// space returns the free part of the buffer for the next read, compacting
// or growing it first. It is never empty: the buffer can hold the largest
// message allowed, and a message is handed out before more is read.
func (f *framer) space() []byte {
	if f.start > 0 && (f.end == len(f.buf) || f.start >= len(f.buf)/2) {
		f.compact()
	}
	if f.end == len(f.buf) && len(f.buf) < f.bufferBytesMax {
		grown := make([]byte, f.bufferBytesMax)
		copy(grown, f.buf[:f.end])
		f.buf = grown
	}
	return f.buf[f.end:]
}

// compact moves the unfinished message to the front of the buffer.
func (f *framer) compact() {
	shift := f.start
	copy(f.buf, f.buf[f.start:f.end])
	f.end -= shift
	f.start = 0
	f.pos -= shift
	f.bodyStart -= shift
	f.bodyEnd -= shift
	f.fieldStart -= shift
	if f.prevStart >= 0 {
		f.prevStart -= shift
	}
	f.valueStart -= shift
	f.dataEnd -= shift
	f.msgTypeStart -= shift
	f.msgTypeEnd -= shift
}

// wrote records that n bytes were read into space().
func (f *framer) wrote(n int) {
	f.end += n
}

// message returns the last message next accepted. It stays valid until
// the next call to space.
func (f *framer) message() []byte {
	return f.buf[f.msgStart:f.msgEnd]
}

// msgType returns the MsgType of the message being framed or just accepted.
func (f *framer) msgType() []byte {
	return f.buf[f.msgTypeStart:f.msgTypeEnd]
}

// takeGarbage returns the bytes skipped in sync since the last call.
func (f *framer) takeGarbage() int {
	n := f.garbageBytes
	f.garbageBytes = 0
	return n
}

// drop ends the current message with reason r; scanning resumes at
// resumeAt, which is always after the message's start.
func (f *framer) drop(r Reason, resumeAt int) verdict {
	f.reason = r
	f.start = resumeAt
	f.pos = resumeAt
	f.state = stSync
	return frameDrop
}

// dropHeader drops a message whose header breaks a rule.
func (f *framer) dropHeader(r Reason) verdict { return f.drop(r, f.start+1) }

// dropField drops a message at the field being read (see the resume rules).
func (f *framer) dropField(r Reason) verdict {
	if f.prevStart > f.start {
		return f.drop(r, f.prevStart)
	}
	return f.drop(r, f.fieldStart)
}

// dropData drops a message whose data field broke a rule, resuming after
// the failing byte.
func (f *framer) dropData(r Reason) verdict { return f.drop(r, f.pos) }

func (f *framer) fatal(r Reason) verdict {
	f.reason = r
	return frameFatal
}

// next examines buffered bytes until it can decide something about the
// current message, or runs out of bytes (needMore).
func (f *framer) next() verdict {
	for f.pos < f.end {
		if f.state == stValue {
			// Most bytes are inside values: sum them in a tight loop up to
			// the SOH (or the end of the body), then take the per-byte path.
			limit := min(f.end, f.bodyEnd)
			i, sum, buf := f.pos, f.sum, f.buf
			for i < limit && buf[i] != soh {
				sum += uint(buf[i])
				i++
			}
			f.pos, f.sum = i, sum
			if i == f.end {
				return needMore
			}
		}
		c := f.buf[f.pos]
		if f.state >= stFieldStart && f.pos < f.bodyEnd {
			f.sum += uint(c)
		}
		var v verdict
		switch f.state {
		case stSync:
			v = f.onSync(c)
		case stPrefix:
			v = f.onPrefix(c)
		case stBegin:
			v = f.onBegin(c)
		case stBodyTag:
			v = f.onBodyTag(c)
		case stBodyLength:
			v = f.onBodyLength(c)
		case stFieldStart:
			v = f.onFieldStart(c)
		case stTag:
			v = f.onTag(c)
		case stValue:
			v = f.onValue(c)
		case stData:
			v = f.onData(c)
		case stTrailer:
			v = f.onTrailer(c)
		}
		if v != needMore {
			return v
		}
	}
	return needMore
}

var prefix = [5]byte{'8', '=', 'F', 'I', 'X'}

func (f *framer) onSync(c byte) verdict {
	if c != '8' {
		f.garbageBytes++
		f.pos++
		f.start = f.pos
		return needMore
	}
	f.start = f.pos
	f.match = 1
	f.sum = '8'
	f.state = stPrefix
	f.pos++
	return needMore
}

func (f *framer) onPrefix(c byte) verdict {
	if c != prefix[f.match] {
		// Not a message start: the '8' was garbage; rescan from the next byte.
		f.garbageBytes++
		f.start++
		f.pos = f.start
		f.state = stSync
		return needMore
	}
	f.sum += uint(c)
	f.match++
	f.pos++
	if f.match == len(prefix) {
		copy(f.begin[:], "FIX")
		f.beginLen = 3
		f.state = stBegin
	}
	return needMore
}

func (f *framer) onBegin(c byte) verdict {
	if c == soh {
		if !validBeginString(f.begin[:f.beginLen]) {
			return f.dropHeader(ReasonBadHeader)
		}
		f.sum += soh
		f.match = 0
		f.state = stBodyTag
		f.pos++
		return needMore
	}
	if f.beginLen == beginStringBytesMax {
		return f.dropHeader(ReasonBadHeader)
	}
	f.begin[f.beginLen] = c
	f.beginLen++
	f.sum += uint(c)
	f.pos++
	return needMore
}

// validBeginString accepts FIX.d.d and FIXT.d.d: the shape of every FIX
// version. Which versions a session may use is the Logon gate's decision.
func validBeginString(b []byte) bool {
	s := b[3:]
	if len(s) > 0 && s[0] == 'T' {
		s = s[1:]
	}
	return len(s) == 4 && s[0] == '.' && isDigit(s[1]) && s[2] == '.' && isDigit(s[3])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (f *framer) onBodyTag(c byte) verdict {
	want := byte('9')
	if f.match == 1 {
		want = '='
	}
	if c != want {
		return f.dropHeader(ReasonBadHeader)
	}
	f.sum += uint(c)
	f.match++
	f.pos++
	if f.match == 2 {
		f.digits = 0
		f.number = 0
		f.state = stBodyLength
	}
	return needMore
}

func (f *framer) onBodyLength(c byte) verdict {
	if c == soh {
		if f.digits == 0 {
			return f.dropHeader(ReasonBadBodyLength)
		}
		if f.number > f.bodyBytesMax {
			return f.fatal(ReasonOversize)
		}
		if f.number < bodyLengthMin {
			return f.dropHeader(ReasonBadBodyLength)
		}
		f.sum += soh
		f.pos++
		f.bodyStart = f.pos
		f.bodyEnd = f.pos + f.number
		f.fields = 0
		f.fieldStart = f.pos
		f.prevStart = -1
		f.dataTag = 0
		f.emptyTag = 0
		f.seqNum = false
		f.unusable = ReasonNone
		f.routeTag = 0
		f.state = stFieldStart
		return needMore
	}
	if !isDigit(c) {
		return f.dropHeader(ReasonBadBodyLength)
	}
	if f.digits == bodyLengthDigitsMax {
		return f.fatal(ReasonOversize)
	}
	f.digits++
	f.number = f.number*10 + int(c-'0')
	f.sum += uint(c)
	f.pos++
	return needMore
}

func (f *framer) onFieldStart(c byte) verdict {
	if f.pos != f.fieldStart {
		f.prevStart = f.fieldStart
	}
	f.fieldStart = f.pos
	if f.pos == f.bodyEnd {
		if f.dataTag != 0 {
			// A length field was the last field: its data is missing.
			return f.dropField(ReasonBadDataLength)
		}
		f.match = 0
		f.number = 0
		f.state = stTrailer
		return f.onTrailer(c)
	}
	if c == '0' || c == '-' {
		// Tag 0 and negative tags are invalid tag numbers in a well-formed
		// field: QuickFIX/Go answers them with a session Reject (373=0), as
		// the FIX session rules ask. tag -1 marks "0", -2 a negative tag;
		// their digits are only counted. A leading zero before other digits
		// ("055") stays a bad field: QuickFIX/Go would read it as tag 55.
		f.tag = -1
		if c == '-' {
			f.tag = -2
		}
		f.digits = 1
		f.state = stTag
		f.pos++
		return needMore
	}
	if c < '1' || c > '9' {
		return f.dropField(ReasonBadField)
	}
	f.tag = int(c - '0')
	f.digits = 1
	f.state = stTag
	f.pos++
	return needMore
}

func (f *framer) onTag(c byte) verdict {
	if f.pos == f.bodyEnd {
		return f.dropField(ReasonBadBodyLength)
	}
	if isDigit(c) {
		if f.digits == tagDigitsMax || f.tag == -1 {
			return f.dropField(ReasonBadField)
		}
		f.digits++
		if f.tag >= 0 {
			f.tag = f.tag*10 + int(c-'0')
		}
		f.pos++
		return needMore
	}
	if c != '=' || (f.tag == -2 && f.digits == 1) {
		return f.dropField(ReasonBadField)
	}
	switch {
	case f.fields == 0 && f.tag != 35:
		return f.dropField(ReasonBadHeader)
	case f.fields > 0 && (f.tag == 8 || f.tag == 9 || f.tag == 35):
		return f.dropField(ReasonRepeatedFraming)
	case f.tag == 10:
		// A CheckSum inside the body: BodyLength claims too much.
		return f.dropField(ReasonBadBodyLength)
	}
	f.pos++
	f.valueStart = f.pos
	if f.dataTag != 0 {
		if f.tag != f.dataTag || f.valueStart+f.dataLen >= f.bodyEnd {
			return f.dropField(ReasonBadDataLength)
		}
		f.dataEnd = f.valueStart + f.dataLen
		f.state = stData
		return needMore
	}
	f.state = stValue
	return needMore
}

func (f *framer) onValue(c byte) verdict {
	if f.pos == f.bodyEnd {
		return f.dropField(ReasonBadBodyLength)
	}
	if c != soh {
		f.pos++
		return needMore
	}
	if v := f.endField(f.buf[f.valueStart:f.pos]); v != needMore {
		return v
	}
	f.pos++
	f.fields++
	f.state = stFieldStart
	return needMore
}

// endField checks a complete field's value against the rules that keep
// QuickFIX/Go v0.9.11 from crashing or misreading the message.
func (f *framer) endField(value []byte) verdict {
	if f.fields == 0 {
		// A MsgType outside printable ASCII is garbled as an empty one is:
		// QuickFIX/Go would carry it back in the RefMsgType of its Reject,
		// which a validating client refuses (doc.go, "Framing").
		if len(value) == 0 || fixwire.NotPrintable(value) >= 0 {
			return f.dropField(ReasonBadHeader)
		}
		f.msgTypeStart = f.valueStart
		f.msgTypeEnd = f.pos
		return needMore
	}
	if f.routeTag == 0 && routeEchoed(f.tag) && fixwire.NotPrintable(value) >= 0 {
		f.routeTag = f.tag
	}
	if f.tag == 34 {
		f.seqNum = true
		// QuickFIX/Go reads MsgSeqNum before validating the message and
		// panics on an empty value; without a number there is no sequence
		// number to consume. The message is still framed to its end, so
		// that the Logon gate can refuse such a Logon with a Logout.
		if !validSeqNum(value) {
			if f.unusable == ReasonNone {
				f.unusable = ReasonBadMsgSeqNum
			}
			return needMore
		}
		// QuickFIX/Go keeps the last of a repeated field.
		f.seqNumValue = 0
		for _, d := range value {
			f.seqNumValue = f.seqNumValue*10 + uint64(d-'0')
		}
		return needMore
	}
	if dataTag := dataTagOf(f.tag); dataTag != 0 {
		// QuickFIX/Go panics on an empty XmlDataLen (212) and reads past
		// the message when it claims more than the data; for every length
		// field the data field's extent must be exactly what it says.
		n, ok := fixwire.ParseLength(value)
		if !ok {
			return f.dropField(ReasonBadDataLength)
		}
		f.dataTag = dataTag
		f.dataLen = n
		return needMore
	}
	if len(value) == 0 {
		if f.emptyTag == 0 {
			f.emptyTag = f.tag
		}
		if f.dropEmpty && f.unusable == ReasonNone {
			f.unusable = ReasonEmptyValue
		}
	}
	return needMore
}

func (f *framer) onData(c byte) verdict {
	if f.pos < f.dataEnd {
		if c == soh && f.dataTag != 213 {
			// QuickFIX/Go v0.9.11 reads only XmlData by its length; any
			// other data field is split at the SOH into fields it never had.
			return f.dropData(ReasonDataWithSOH)
		}
		f.pos++
		return needMore
	}
	if c != soh {
		return f.dropData(ReasonBadDataLength)
	}
	f.dataTag = 0
	f.pos++
	f.fields++
	f.fieldStart = f.pos // the data field is never resumed at
	f.prevStart = -1
	f.state = stFieldStart
	return needMore
}

var trailerTag = [3]byte{'1', '0', '='}

func (f *framer) onTrailer(c byte) verdict {
	switch {
	case f.match < 3:
		if c != trailerTag[f.match] {
			return f.dropField(ReasonBadBodyLength)
		}
	case f.match < 6:
		if !isDigit(c) {
			return f.dropField(ReasonBadCheckSum)
		}
		f.number = f.number*10 + int(c-'0')
	default:
		if c != soh {
			return f.dropField(ReasonBadCheckSum)
		}
		if f.number != int(f.sum%256) {
			return f.drop(ReasonBadCheckSum, f.pos+1)
		}
		f.pos++
		f.msgStart = f.start
		f.msgEnd = f.pos
		f.checkSumValue = f.number
		f.start = f.pos
		f.state = stSync
		if f.unusable != ReasonNone {
			f.reason = f.unusable
			return frameUnusable
		}
		return frameOK
	}
	f.match++
	f.pos++
	return needMore
}

// validSeqNum accepts 1 to seqNumDigitsMax digits.
func validSeqNum(v []byte) bool {
	if len(v) == 0 || len(v) > seqNumDigitsMax {
		return false
	}
	for _, c := range v {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// dataTagOf returns the data field that the FIX 4.4 length field tag
// announces, or 0 when tag is not a length field.
func dataTagOf(tag int) int { return int(fixwire.DataTag(quickfix.Tag(tag))) }

// Admits reports whether a connection's framer, with the default limits,
// hands msg (one whole FIX message and nothing after it) to QuickFIX/Go:
// the messages the session layer behind the edge can be given, for the
// tests and fuzz targets of the packages behind it.
func Admits(msg []byte) bool {
	f := newFramer(DefaultMessageBytesMax, false)
	for off := 0; ; {
		n := copy(f.space(), msg[off:])
		f.wrote(n)
		off += n
		switch f.next() {
		case needMore:
			if off == len(msg) {
				return false
			}
		case frameOK:
			return f.msgStart == 0 && f.msgEnd == len(msg)
		default:
			return false
		}
	}
}

// routeEchoed reports the routing fields of the header that QuickFIX/Go
// v0.9.11 copies into its session Reject of a message, sender and target
// swapped (SenderSubID as TargetSubID and so on; the CompIDs are the
// session's).
func routeEchoed(tag int) bool {
	switch tag {
	case 50, 142, 57, 143, 115, 116, 144, 128, 129, 145:
		return true
	}
	return false
}
