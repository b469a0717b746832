package gateway

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/quickfix/config"
	"github.com/quickfixgo/quickfix/datadictionary"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// Validator makes, for one session, every check QuickFIX/Go's validator makes
// with the session's dictionary and RejectInvalidMessage=Y: the message type,
// required fields, empty values and field order, and then every field's value
// against its type and enumeration, every tag defined for its message type, no
// tag twice, repeating groups. It gives the same answer at the same point of
// the session's flow (just before FromApp or FromAdmin, where QuickFIX/Go runs
// them), without allocating for a message that passes: QuickFIX/Go's
// validator allocates a value per field and a tag set per message, and its
// parse with a dictionary looks every field up in it (docs/benchmarks.md,
// "The FIX path against its floor").
//
// A message is read once from its wire bytes; when every field is defined
// for the message type, none is a repeating group or XML data, none repeats,
// none is empty, the header comes first, every required field is there and
// every value is of its type and enumeration, it is valid. Anything else
// (rare on the order path) is parsed again with the dictionary and goes to
// QuickFIX/Go's own validator with the session's settings, so that a reject
// is always exactly QuickFIX/Go's: reason, RefTagID and text. The one
// exception is an integer of more than intDigitsMax digits, which
// QuickFIX/Go reads modulo 2^64 and judges by that number: such a message
// gets the Validator's own Reject (checkIntegers), also in a session with
// RejectInvalidMessage=N.
// TakeOverValidation installs it, and leaves QuickFIX/Go's session without
// the dictionary (see Check).
type Validator struct {
	dd       *datadictionary.DataDictionary
	fields   []fieldCheck // by tag; tags beyond it are not in the dictionary
	header   tagSet
	trailer  tagSet
	messages map[string]messageCheck // by MsgType
	full     quickfix.Validator
	// echoOnly marks the Validator of a session configured with
	// RejectInvalidMessage=N: QuickFIX/Go validates its messages as
	// configured, and this checks only the values the gateway's answers
	// echo (echoedTags).
	echoOnly bool
}

// echoedTags are, by message type, the fields whose values the gateway's
// own answers carry as the request gave them, strings aside (any value is
// one): an order's reject (Side, OrderQty, OrdType, Price, StopPx,
// TimeInForce, MaxFloor, ExecInst, ExpireTime: answers.go, rejectOrder), an
// unknown order's status report (Side), a mass cancel's reject
// (MassCancelRequestType) and a replay's TradeCaptureReportRequestAck
// (TradeRequestType). A session with RejectInvalidMessage=N passes the
// gateway values the dictionary does not allow; echoed, they made answers a
// validating client refuses (an ExecutionReport with 54=Z), so such a
// message gets the session Reject a validating session gives it
// (Validator.CheckFor).
var echoedTags = map[string][]quickfix.Tag{
	"D":  {tag.Side, tag.OrderQty, tag.OrdType, tag.Price, tag.StopPx, tag.TimeInForce, tag.MaxFloor, tag.ExecInst, tag.ExpireTime},
	"H":  {tag.Side},
	"q":  {tag.MassCancelRequestType},
	"AD": {tag.TradeRequestType},
}

// messageCheck is what the fast check knows of one message type.
type messageCheck struct {
	body tagSet // the body's tags that are plain fields
	// required are the tags a message must have: the header's, the
	// trailer's and the body's; nil when one is beyond fieldsSeenMax (the
	// message type is then left to full).
	required tagSet
}

// fieldCheck is what the dictionary says of one tag's values.
type fieldCheck struct {
	kind  valueKind
	multi bool // a space-separated list of enumerated values
	enums map[string]datadictionary.Enum
	// chars is set when every enumerated value is one byte: a bit per byte
	// value that is one of them (most FIX enumerations are single characters,
	// tested without a map lookup).
	chars *[4]uint64
}

type valueKind uint8

const (
	kindUndefined valueKind = iota // not in the dictionary (or a type QuickFIX/Go does not check)
	kindAny                        // string-like types: any non-empty value
	kindBool
	kindInt
	kindFloat
	kindTimestamp
)

// tagSet is a bit set of tags below len(tagSet)*64.
type tagSet []uint64

func (s tagSet) has(t int) bool { return t>>6 < len(s) && s[t>>6]&(1<<(t&63)) != 0 }

func (s *tagSet) add(t int) {
	for t>>6 >= len(*s) {
		*s = append(*s, 0)
	}
	(*s)[t>>6] |= 1 << (t & 63)
}

// fieldTagsMax bounds the tags the fast check knows (the FIX 4.4 dictionary's
// are below 1,000; user-defined ones from 5,000): a dictionary defining
// higher ones has those checked by QuickFIX/Go's validator.
const fieldTagsMax = 1 << 16

// fieldsCheckedMax bounds the fields of a message the fast check reads; a
// longer message is checked by QuickFIX/Go's validator.
const fieldsCheckedMax = 128

// fieldsSeenMax bounds the tags the fast check records as seen in a bit set
// (the FIX 4.4 dictionary's required tags are all below it).
const fieldsSeenMax = 1024

// highTagsMax bounds the tags at or above fieldsSeenMax in a message the
// fast check passes.
const highTagsMax = 8

// kindOf maps a dictionary type to the value check QuickFIX/Go's validator
// makes for it (validation.go in QuickFIX/Go).
func kindOf(fixType string) valueKind {
	switch fixType {
	case "MULTIPLESTRINGVALUE", "MULTIPLEVALUESTRING", "MULTIPLECHARVALUE", "CHAR", "CURRENCY", "DATA",
		"MONTHYEAR", "LOCALMKTDATE", "DATE", "EXCHANGE", "LANGUAGE", "XMLDATA", "COUNTRY", "UTCTIMEONLY",
		"UTCDATEONLY", "UTCDATE", "TZTIMEONLY", "TZTIMESTAMP", "STRING":
		return kindAny
	case "BOOLEAN":
		return kindBool
	case "LENGTH", "DAYOFMONTH", "NUMINGROUP", "SEQNUM", "INT":
		return kindInt
	case "UTCTIMESTAMP", "TIME":
		return kindTimestamp
	case "QTY", "QUANTITY", "AMT", "PRICE", "PRICEOFFSET", "PERCENTAGE", "FLOAT":
		return kindFloat
	}
	return kindUndefined
}

// NewValidator compiles dd for the fast check; settings are the session's
// (RejectInvalidMessage is taken as on) and serve QuickFIX/Go's validator for
// whatever the fast check does not pass.
func NewValidator(dd *datadictionary.DataDictionary, settings quickfix.ValidatorSettings) *Validator {
	settings.RejectInvalidMessage = true
	v := &Validator{dd: dd, messages: make(map[string]messageCheck, len(dd.Messages)), full: quickfix.NewValidator(settings, dd, nil)}
	maxTag := 0
	for t := range dd.FieldTypeByTag {
		if t > maxTag && t < fieldTagsMax {
			maxTag = t
		}
	}
	v.fields = make([]fieldCheck, maxTag+1)
	for t, ft := range dd.FieldTypeByTag {
		if t < 0 || t > maxTag {
			continue
		}
		c := fieldCheck{kind: kindOf(ft.Type), enums: ft.Enums}
		switch ft.Type {
		case "MULTIPLESTRINGVALUE", "MULTIPLEVALUESTRING", "MULTIPLECHARVALUE":
			c.multi = true
		}
		if len(c.enums) > 0 && !c.multi {
			c.chars = new([4]uint64)
			for e := range c.enums {
				if len(e) != 1 {
					c.chars = nil
					break
				}
				c.chars[e[0]>>6] |= 1 << (e[0] & 63)
			}
		}
		v.fields[t] = c
	}
	plain := func(md *datadictionary.MessageDef) tagSet {
		var s tagSet
		for t, fd := range md.Fields {
			if !fd.IsGroup() && t >= 0 && t <= maxTag {
				s.add(t)
			}
		}
		return s
	}
	if dd.Header != nil {
		v.header = plain(dd.Header)
	}
	if dd.Trailer != nil {
		v.trailer = plain(dd.Trailer)
	}
	// A message's required tags: its body's and the header's and trailer's
	// (QuickFIX/Go's validateRequired), false when one is beyond the bit set.
	required := func(md *datadictionary.MessageDef) (tagSet, bool) {
		var s tagSet
		for _, def := range []*datadictionary.MessageDef{dd.Header, dd.Trailer, md} {
			if def == nil {
				continue
			}
			for t := range def.RequiredTags {
				if t < 0 || t >= fieldsSeenMax {
					return nil, false
				}
				s.add(t)
			}
		}
		return s, true
	}
	for mt, md := range dd.Messages {
		m := messageCheck{body: plain(md)}
		if r, ok := required(md); ok {
			m.required = r
		}
		v.messages[mt] = m
	}
	return v
}

// Check returns QuickFIX/Go's verdict on m (nil when valid, else its reject)
// and the message for the session's handlers to read. QuickFIX/Go's session
// parsed m without a dictionary, which puts a repeating group's fields
// straight into the body; a message the fast check passes has no group, so m
// is returned as it is, and any other is parsed again and its body left with
// the fields of its top level alone (fileGroups), and that message is
// returned and validated.
func (v *Validator) Check(m *quickfix.Message) (*quickfix.Message, quickfix.MessageRejectError) {
	m, _, err := v.CheckFor(m, nil)
	return m, err
}

// TagSet is a set of tags below fieldsSeenMax, a bit each.
type TagSet [fieldsSeenMax / 64]uint64

// Add puts t in the set; a tag at or above fieldsSeenMax is refused.
func (s *TagSet) Add(t quickfix.Tag) error {
	if t <= 0 || int(t) >= fieldsSeenMax {
		return fmt.Errorf("gateway: tag %d outside a TagSet (1..%d)", t, fieldsSeenMax-1)
	}
	s[t>>6] |= 1 << (t & 63)
	return nil
}

// CheckFor is Check that also reports whether the message may have a tag of
// watch: false only when the fast check passed it and saw none of them, so
// that the handlers need not look each up (a lookup in QuickFIX/Go's field
// map costs about 170 instructions; the answer here costs a few).
//
// The Validator of a session with RejectInvalidMessage=N (echoOnly) checks
// only the values of echoedTags, as QuickFIX/Go's validator would (an empty
// value, one outside the enumeration, one not of its type), and returns m.
func (v *Validator) CheckFor(m *quickfix.Message, watch *TagSet) (*quickfix.Message, bool, quickfix.MessageRejectError) {
	if v.echoOnly {
		if err := v.checkIntegers(m.Bytes()); err != nil {
			return m, true, err
		}
		return m, true, v.checkEchoed(m)
	}
	raw := m.Bytes()
	if ok, seen := v.valid(raw, watch); ok {
		return m, seen, nil
	}
	// Before QuickFIX/Go's validator, which reads such a value as another
	// number and judges the message by it (intTooLong).
	if err := v.checkIntegers(raw); err != nil {
		return m, true, err
	}
	grouped := quickfix.NewMessage()
	if err := quickfix.ParseMessage(grouped, bytes.NewBuffer(raw)); err != nil {
		return m, true, v.full.Validate(m)
	}
	v.fileGroups(grouped, raw)
	checked := grouped
	if masked := maskXMLDataSOH(raw); masked != nil {
		// QuickFIX/Go v0.9.11 makes a message's field list as long as its
		// SOH bytes, an XmlData's included: the entries left over have tag 0
		// and no value, and its validator refused every message whose
		// XmlData holds an SOH (which the data type allows, and the FIX
		// edge passes) with a Reject for a tag 0 without a value (373=4,
		// 371=0), a field the message does not have. The message is
		// validated with those bytes masked (any byte is valid data), and
		// handed on as it is.
		checked = quickfix.NewMessage()
		if err := quickfix.ParseMessage(checked, bytes.NewBuffer(masked)); err != nil {
			return grouped, true, v.full.Validate(grouped)
		}
		v.fileGroups(checked, masked)
	}
	return grouped, true, v.full.Validate(checked)
}

// maskXMLDataSOH returns a copy of raw with each SOH inside its XmlData
// (213) value replaced by a space, nil when the XmlData holds none (or the
// message has none).
func maskXMLDataSOH(raw []byte) []byte {
	var masked []byte
	it := fixwire.NewIterator(raw)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		if f.Tag != tag.XmlData || bytes.IndexByte(f.Value, 1) < 0 {
			continue
		}
		if masked == nil {
			masked = bytes.Clone(raw)
		}
		start := f.End - 1 - len(f.Value)
		for i := start; i < f.End-1; i++ {
			if masked[i] == 1 {
				masked[i] = ' '
			}
		}
	}
	return masked
}

// fileGroups leaves in m's body (parsed from raw without a dictionary) the
// fields of the message's top level alone: a field inside a repeating group
// is taken out of it, and a top-level field that a group repeats later has
// its own value again. A group stays readable with GetGroup from its count
// field, whose value QuickFIX/Go reads on through the message's fields, as
// it does for a message it parsed with a dictionary.
//
// QuickFIX/Go v0.9.11's own parse with the dictionary misfiles a group that
// follows one with a nested group (docs/ARCHITECTURE.md, "Known limits of
// the session layer"), so the groups are found here: a field belongs to the
// innermost open group that has it as a member, else to the top level,
// which closes every open group; a group's count field opens it.
func (v *Validator) fileGroups(m *quickfix.Message, raw []byte) {
	mt, err := m.Header.GetBytes(tag.MsgType)
	if err != nil {
		return
	}
	md := v.dd.Messages[string(mt)]
	if md == nil {
		return
	}
	var open [][]*datadictionary.FieldDef // the members of each open group, innermost last
	top := map[quickfix.Tag][]byte{}      // each top-level field's first value
	lastNested := map[quickfix.Tag]bool{} // whether a tag's last occurrence is in a group
	it := fixwire.NewIterator(raw)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		if f.Tag.IsHeader() || f.Tag.IsTrailer() {
			open = open[:0]
			continue
		}
		var def *datadictionary.FieldDef
		for len(open) > 0 && def == nil {
			if def = memberDef(open[len(open)-1], f.Tag); def == nil {
				open = open[:len(open)-1]
			}
		}
		if len(open) == 0 {
			def = md.Fields[int(f.Tag)]
			if _, seen := top[f.Tag]; !seen {
				top[f.Tag] = f.Value
			}
		}
		lastNested[f.Tag] = len(open) > 0
		if def != nil && def.IsGroup() {
			open = append(open, def.Fields)
		}
	}
	for t, nested := range lastNested {
		if !nested {
			continue
		}
		if v, ok := top[t]; ok {
			m.Body.SetBytes(t, v)
		} else {
			m.Body.Remove(t)
		}
	}
}

// memberDef returns the definition of t among a group's members, nil when
// it is not one.
func memberDef(members []*datadictionary.FieldDef, t quickfix.Tag) *datadictionary.FieldDef {
	for _, d := range members {
		if d.Tag() == int(t) {
			return d
		}
	}
	return nil
}

// valid reports whether raw (one whole FIX message) surely passes: false
// leaves the verdict to QuickFIX/Go's validator, as does any field whose
// value a length field gives (QuickFIX/Go's parser reads only XML data by
// its length, fixwire every data field). seen, when raw is valid, is whether
// it has a tag of watch (nil: none to watch).
func (v *Validator) valid(raw []byte, watch *TagSet) (ok, seen bool) {
	// Tags seen: a bit each below fieldsSeenMax, a list above (user-defined
	// tags; a message with more than highTagsMax of them is left to full).
	var low [fieldsSeenMax / 64]uint64
	var high [highTagsMax]quickfix.Tag
	n, nHigh := 0, 0
	var body, required tagSet
	inBody := false
	it := fixwire.NewIterator(raw)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		t := int(f.Tag)
		if n == fieldsCheckedMax || t <= 0 || t >= len(v.fields) || len(f.Value) == 0 || fixwire.DataTag(f.Tag) != 0 {
			return false, false
		}
		n++
		if t < len(low)*64 {
			if low[t>>6]&(1<<(t&63)) != 0 {
				return false, false
			}
			low[t>>6] |= 1 << (t & 63)
		} else {
			for _, s := range high[:nHigh] {
				if s == f.Tag {
					return false, false
				}
			}
			if nHigh == highTagsMax {
				return false, false
			}
			high[nHigh] = f.Tag
			nHigh++
		}
		switch {
		case f.Tag.IsHeader():
			// After the body, a header field is out of order.
			if inBody || !v.header.has(t) {
				return false, false
			}
			if f.Tag == tag.MsgType {
				m, ok := v.messages[string(f.Value)]
				if !ok || m.required == nil {
					return false, false
				}
				body, required = m.body, m.required
			}
		case f.Tag.IsTrailer():
			// Only CheckSum passes here (Signature is a data field), and
			// it ends the message.
			if !v.trailer.has(t) {
				return false, false
			}
		default:
			inBody = true
			if body == nil || !body.has(t) {
				return false, false
			}
		}
		if !v.fields[t].accepts(f.Value) {
			return false, false
		}
		if f.Tag == tag.CheckSum {
			if f.End != len(raw) {
				return false, false
			}
			for i, w := range required {
				if w&^low[i] != 0 {
					return false, false
				}
			}
			if watch != nil {
				for i, w := range low {
					if w&watch[i] != 0 {
						return true, true
					}
				}
			}
			return true, false
		}
	}
	return false, false
}

// checkEchoed returns the session Reject QuickFIX/Go's validator gives the
// first field of echoedTags in m's body whose value it refuses, nil when
// none.
func (v *Validator) checkEchoed(m *quickfix.Message) quickfix.MessageRejectError {
	mt, err := m.Header.GetBytes(tag.MsgType)
	if err != nil {
		return nil
	}
	for _, t := range echoedTags[string(mt)] {
		value, err := m.Body.GetBytes(t)
		switch {
		case err != nil:
			continue // absent: QuickFIX/Go checked the required ones
		case len(value) == 0:
			// Not seen here: with ValidateFieldsHaveValues=N the FIX edge
			// drops messages with empty values (gateway/edge, "Empty
			// values"). QuickFIX/Go's verdict all the same.
			return quickfix.TagSpecifiedWithoutAValue(t)
		case int(t) >= len(v.fields):
			continue
		}
		c := &v.fields[t]
		switch {
		case c.accepts(value):
		case !c.inEnums(value):
			return quickfix.ValueIsIncorrect(t)
		default:
			return quickfix.IncorrectDataFormatForValue(t)
		}
	}
	return nil
}

// inEnums reports whether value is in the field's enumeration (every value
// is when it has none): accepts without the check of the value's type.
func (c *fieldCheck) inEnums(value []byte) bool {
	f := *c
	f.kind = kindAny
	return f.accepts(value)
}

// accepts reports whether value is of the field's type and enumeration, as
// QuickFIX/Go's validator decides (it reads the value with its own types).
func (c *fieldCheck) accepts(value []byte) bool {
	if c.chars != nil {
		if len(value) != 1 || c.chars[value[0]>>6]&(1<<(value[0]&63)) == 0 {
			return false
		}
	} else if len(c.enums) > 0 {
		if c.multi {
			start := 0
			for i := 0; i <= len(value); i++ {
				if i == len(value) || value[i] == ' ' {
					if _, ok := c.enums[string(value[start:i])]; !ok {
						return false
					}
					start = i + 1
				}
			}
		} else if _, ok := c.enums[string(value)]; !ok {
			return false
		}
	}
	switch c.kind {
	case kindAny:
		return true
	case kindBool:
		return len(value) == 1 && (value[0] == 'Y' || value[0] == 'N')
	case kindInt:
		// An integer too long is refused here, and by checkIntegers on the
		// slow path with its own Reject (a length test for every other).
		var x quickfix.FIXInt
		return !intTooLong(value) && x.Read(value) == nil
	case kindFloat:
		if plainDecimal(value) {
			return true
		}
		var x quickfix.FIXFloat
		return x.Read(value) == nil
	case kindTimestamp:
		if plainTimestamp(value) {
			return true
		}
		var x quickfix.FIXUTCTimestamp
		return x.Read(value) == nil
	}
	return false
}

// intDigitsMax bounds the significant digits of an integer value (INT,
// LENGTH, NUMINGROUP, SEQNUM, DAYOFMONTH): the largest MsgSeqNum's, so that
// every integer the venue takes fits an int64 as sequence numbers do.
const intDigitsMax = fixwire.SeqNumDigitsMax

// intTooLong reports whether v is an integer as QuickFIX/Go reads one (an
// optional '-', then digits) with more than intDigitsMax digits after its
// sign and leading zeros: 0000000000000000000001 is 1, but
// 18446744073709551617 has 20 digits. QuickFIX/Go's integer parser does
// not check for overflow and reads such a value modulo 2^64 (that one as
// 1), a number the client never sent, and its validator accepts it. A
// value that is not an integer is left to QuickFIX/Go's verdict (373=6).
func intTooLong(v []byte) bool {
	if len(v) <= intDigitsMax {
		return false
	}
	if v[0] == '-' {
		v = v[1:]
	}
	i := 0
	for i < len(v) && v[i] == '0' {
		i++
	}
	if len(v)-i <= intDigitsMax {
		return false
	}
	for _, c := range v[i:] {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// checkIntegers returns the session Reject of the first field of raw, in
// wire order and at any level of the message, whose tag the dictionary
// types as an integer and whose value is too long (intTooLong): 373=5
// (value out of range), 371 naming the tag, a Text naming the field. nil
// when none. The one verdict that differs from QuickFIX/Go's validator's,
// which judges such a message by the wrapped value (gateway/doc.go,
// "Validation").
func (v *Validator) checkIntegers(raw []byte) quickfix.MessageRejectError {
	it := fixwire.NewIterator(raw)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		t := int(f.Tag)
		if t <= 0 || t >= len(v.fields) || v.fields[t].kind != kindInt || !intTooLong(f.Value) {
			continue
		}
		text := fmt.Sprintf("tag %d beyond the largest integer the venue takes (%d digits)", t, intDigitsMax)
		if ft, ok := v.dd.FieldTypeByTag[t]; ok {
			if ft.Type == "SEQNUM" {
				// As checkResendRequest and checkSequenceReset say it.
				text = seqNoTooLargeText(ft.Name())
			} else {
				text = fmt.Sprintf("%s beyond the largest integer the venue takes (%d digits)", ft.Name(), intDigitsMax)
			}
		}
		rt := f.Tag
		return quickfix.NewMessageRejectError(text, rejectReasonValueIsIncorrect, &rt)
	}
	return nil
}

// plainDecimal reports whether v is [-]digits[.digits], at most 18 digits
// on either side of the point: a value QuickFIX/Go's float reader surely
// takes (strconv.ParseFloat, then only digits, '.' and '-'). Any other form
// is left to that reader.
func plainDecimal(v []byte) bool {
	i := 0
	if len(v) > 0 && v[0] == '-' {
		i = 1
	}
	start := i
	for i < len(v) && isDigit(v[i]) {
		i++
	}
	if i == start || i-start > 18 {
		return false
	}
	if i == len(v) {
		return true
	}
	if v[i] != '.' {
		return false
	}
	i++
	frac := i
	for i < len(v) && isDigit(v[i]) {
		i++
	}
	return i == len(v) && i-frac <= 18
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// twoDigits returns the number v[i:i+2] and whether both are digits.
func twoDigits(v []byte, i int) (int, bool) {
	a, b := v[i], v[i+1]
	return int(a-'0')*10 + int(b-'0'), isDigit(a) && isDigit(b)
}

// plainTimestamp reports whether value is a UTCTimestamp in digits,
// YYYYMMDD-HH:MM:SS with none, 3, 6 or 9 fractional digits after a '.', of
// a real date and time: every such value QuickFIX/Go reads (time.Parse), at a
// fraction of time.Parse's cost. Any other form is left to QuickFIX/Go's
// reader, which also takes a few more (a ',' before the fraction, a sign).
func plainTimestamp(v []byte) bool {
	switch len(v) {
	case 17, 21, 24, 27:
	default:
		return false
	}
	if v[8] != '-' || v[11] != ':' || v[14] != ':' || (len(v) > 17 && v[17] != '.') {
		return false
	}
	for _, c := range v[min(len(v), 18):] {
		if !isDigit(c) {
			return false
		}
	}
	century, ok1 := twoDigits(v, 0)
	yy, ok2 := twoDigits(v, 2)
	month, ok3 := twoDigits(v, 4)
	day, ok4 := twoDigits(v, 6)
	hour, ok5 := twoDigits(v, 9)
	minute, ok6 := twoDigits(v, 12)
	second, ok7 := twoDigits(v, 15)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) {
		return false
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59 {
		return false
	}
	year := century*100 + yy
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month]
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		days = 29
	}
	return day <= days
}

// TakeOverValidation moves the dictionary checks of a session from
// QuickFIX/Go to the gateway (SessionConfig.Validator). dictionary is the
// session's data dictionary file. When ss keeps RejectInvalidMessage on
// (QuickFIX/Go's default), ss gets no dictionary and QuickFIX/Go's own checks
// of empty values and field order are turned off: its session then parses
// without looking every field up and validates nothing, and the returned
// Validator makes all of those checks with the session's settings (see
// Check). Otherwise ss gets the dictionary, QuickFIX/Go validates as
// configured, and the returned Validator checks only the values the
// gateway's answers echo (echoedTags).
func TakeOverValidation(ss *quickfix.SessionSettings, dictionary string) (*Validator, error) {
	if ss.HasSetting(config.DataDictionary) || ss.HasSetting(config.TransportDataDictionary) || ss.HasSetting(config.AppDataDictionary) {
		return nil, fmt.Errorf("data dictionary: the venue sets it")
	}
	// QuickFIX/Go's defaults (validation.go's defaultValidatorSettings).
	vs := quickfix.ValidatorSettings{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: true, RejectInvalidMessage: true, CheckUserDefinedFields: true}
	for _, b := range []struct {
		name string
		dst  *bool
	}{
		{config.ValidateFieldsOutOfOrder, &vs.CheckFieldsOutOfOrder},
		{config.ValidateFieldsHaveValues, &vs.CheckFieldsHaveValues},
		{config.RejectInvalidMessage, &vs.RejectInvalidMessage},
		{config.AllowUnknownMessageFields, &vs.AllowUnknownMessageFields},
		{config.CheckUserDefinedFields, &vs.CheckUserDefinedFields},
	} {
		if !ss.HasSetting(b.name) {
			continue
		}
		on, err := ss.BoolSetting(b.name)
		if err != nil {
			return nil, err
		}
		*b.dst = on
	}
	dd, err := parsedDictionary(dictionary)
	if err != nil {
		return nil, err
	}
	if !vs.RejectInvalidMessage {
		ss.Set(config.DataDictionary, dictionary)
		v := NewValidator(dd, vs)
		v.echoOnly = true
		return v, nil
	}
	ss.Set(config.RejectInvalidMessage, "N")
	ss.Set(config.ValidateFieldsHaveValues, "N")
	ss.Set(config.ValidateFieldsOutOfOrder, "N")
	return NewValidator(dd, vs), nil
}

// dictionaries holds each dictionary parsed, by content, at most
// dictionariesMax: a venue writes the same one into every data directory, and
// parsing it costs tens of milliseconds (QuickFIX/Go parses it once per
// session on top). A parsed dictionary is only read.
var dictionaries struct {
	sync.Mutex
	byContent map[[sha256.Size]byte]*datadictionary.DataDictionary
}

const dictionariesMax = 8

func parsedDictionary(path string) (*datadictionary.DataDictionary, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("data dictionary: %w", err)
	}
	key := sha256.Sum256(src)
	dictionaries.Lock()
	defer dictionaries.Unlock()
	if dd := dictionaries.byContent[key]; dd != nil {
		return dd, nil
	}
	dd, err := datadictionary.ParseSrc(bytes.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("data dictionary %s: %w", path, err)
	}
	if dictionaries.byContent == nil || len(dictionaries.byContent) == dictionariesMax {
		dictionaries.byContent = make(map[[sha256.Size]byte]*datadictionary.DataDictionary)
	}
	dictionaries.byContent[key] = dd
	return dd, nil
}

// CheckLogon returns what the session's Validator finds wrong with logon (a
// whole Logon, as the FIX edge hands it to QuickFIX/Go), "" when nothing or
// when the session has no Validator. FromAdmin would refuse the same Logon,
// and QuickFIX/Go then closes the connection without a word; the edge asks
// first and answers with a Logout naming the problem instead (answer true),
// or, for a SendingTime too far from the clock, closes the connection
// without an answer as the FIX session acceptance tests want (1d), having
// logged why (gateway/edge, "What a connection goes through").
func (g *Gateway) CheckLogon(id quickfix.SessionID, logon []byte) (problem string, answer bool) {
	s, ok := g.bySession[id]
	if !ok || (s.cfg.Validator == nil && s.cfg.LogonLatencyMax <= 0) {
		return "", false
	}
	m := quickfix.NewMessage()
	if err := quickfix.ParseMessage(m, bytes.NewBuffer(logon)); err != nil {
		return "", false // QuickFIX/Go's own parse decides
	}
	if v := s.cfg.Validator; v != nil {
		if _, err := v.Check(m); err != nil {
			if t := err.RefTagID(); t != nil {
				return fmt.Sprintf("%s (tag %d)", err.Error(), *t), true
			}
			return err.Error(), true
		}
	}
	// QuickFIX/Go checks SendingTime against its clock (CheckLatency,
	// MaxLatency) after a ResetSeqNumFlag has reset the session's sequence
	// numbers, and answers a Logon too far off by closing without a word:
	// the client lost its numbers, and nothing said why. The same check,
	// with its clock (time.Now), before; the close stays unanswered.
	if max := s.cfg.LogonLatencyMax; max > 0 {
		if t, err := m.Header.GetTime(tag.SendingTime); err == nil {
			if d := time.Since(t); d <= -max || d >= max {
				return fmt.Sprintf("SendingTime accuracy problem (tag 52): %s from the venue's clock, beyond MaxLatency %s",
					d.Round(time.Second), max), false
			}
		}
	}
	return "", false
}
