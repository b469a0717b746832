package gateway

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/quickfix/config"
	"github.com/quickfixgo/quickfix/datadictionary"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/gateway/edge"
	"github.com/fixvenue/fixvenue/gateway/spec"
	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// fix44 is the dictionary the venue ships.
func fix44(tb testing.TB) *datadictionary.DataDictionary {
	tb.Helper()
	dd, err := datadictionary.ParseSrc(bytes.NewReader(spec.FIX44()))
	if err != nil {
		tb.Fatal(err)
	}
	return dd
}

// wire frames a FIX 4.4 message from its fields after BodyLength (with '|'
// for SOH), with the right BodyLength and CheckSum.
func wire(fields string) []byte {
	return fixwire.AppendMessage(nil, "FIX.4.4", []byte(strings.ReplaceAll(fields, "|", "\x01")))
}

// parsed parses raw as QuickFIX/Go's session does.
func parsed(tb testing.TB, dd *datadictionary.DataDictionary, raw []byte) *quickfix.Message {
	tb.Helper()
	m := quickfix.NewMessage()
	if err := quickfix.ParseMessageWithDataDictionary(m, bytes.NewBuffer(raw), dd, dd); err != nil {
		tb.Fatalf("parse %q: %v", raw, err)
	}
	return m
}

const hdr = "49=TW|56=ISLD|34=2|52=20261202-01:02:03.456|"

// validationCases are messages QuickFIX/Go accepts and refuses for each check
// of RejectInvalidMessage, and for the checks it makes with it off.
var validationCases = []struct{ name, fields string }{
	{"new order", "35=D|" + hdr + "11=o1|1=ACC|21=1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=101.25|59=0|"},
	{"new order, stop limit, iceberg, expiry", "35=D|" + hdr + "11=o1|55=ACME|54=2|60=20261202-01:02:03|38=100|40=4|44=101.25|99=101|111=10|59=6|126=20261203-01:02:03.000|"},
	{"cancel", "35=F|" + hdr + "41=o1|11=o2|55=ACME|54=1|60=20261202-01:02:03.456|38=100|"},
	{"replace", "35=G|" + hdr + "41=o1|11=o2|55=ACME|54=1|60=20261202-01:02:03.456|38=200|40=2|44=100|"},
	{"status", "35=H|" + hdr + "11=o1|55=ACME|54=1|"},
	{"heartbeat", "35=0|" + hdr},
	{"test request", "35=1|" + hdr + "112=T1|"},
	{"logon", "35=A|" + hdr + "98=0|108=30|141=Y|"},
	{"resend request", "35=2|" + hdr + "7=1|16=0|"},
	{"sequence reset", "35=4|" + hdr + "123=Y|36=5|"},
	{"possible duplicate", "35=D|49=TW|56=ISLD|34=2|43=Y|52=20261202-01:02:03.456|122=20261202-01:02:03.000|11=o1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"exec inst list", "35=D|" + hdr + "11=o1|18=1 5|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"exec inst two spaces", "35=D|" + hdr + "11=o1|18=1  5|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"exec inst unknown", "35=D|" + hdr + "11=o1|18=1 #|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"parties group", "35=D|" + hdr + "11=o1|453=1|448=P1|447=D|452=1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"group count wrong", "35=D|" + hdr + "11=o1|453=2|448=P1|447=D|452=1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"group count not a number", "35=D|" + hdr + "11=o1|453=x|448=P1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"bad enum", "35=D|" + hdr + "11=o1|55=ACME|54=9|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"bad float", "35=D|" + hdr + "11=o1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1.2.3|"},
	{"float with plus", "35=D|" + hdr + "11=o1|55=ACME|54=1|60=20261202-01:02:03.456|38=+100|40=2|44=1|"},
	{"bad int", "35=2|" + hdr + "7=1x|16=0|"},
	{"negative int", "35=2|" + hdr + "7=-1|16=0|"},
	{"bad timestamp", "35=D|" + hdr + "11=o1|55=ACME|54=1|60=2026-12-02|38=100|40=2|44=1|"},
	{"bad boolean", "35=D|49=TW|56=ISLD|34=2|43=X|52=20261202-01:02:03.456|11=o1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"tag repeated", "35=D|" + hdr + "11=o1|55=ACME|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"tag not in the dictionary", "35=D|" + hdr + "11=o1|4999=x|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"user-defined tag", "35=D|" + hdr + "11=o1|5001=x|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"tag not for the message type", "35=0|" + hdr + "44=1|"},
	{"empty value", "35=D|" + hdr + "11=o1|1=|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"required tag missing", "35=D|" + hdr + "11=o1|55=ACME|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"header tag in the body", "35=D|" + hdr + "11=o1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|57=X|"},
	{"unknown message type", "35=ZZ|" + hdr},
	{"secure data (a length field)", "35=0|" + hdr[:len(hdr)-1] + "|90=3|91=abc|"},
	// Integers of more than 18 digits (overlongInteger): the one verdict
	// that differs from QuickFIX/Go's, which reads them modulo 2^64.
	{"group count beyond 64 bits", "35=D|" + hdr + "11=o1|453=18446744073709551617|448=P1|447=D|452=1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"group count beyond 64 bits, two over", "35=D|" + hdr + "11=o1|453=18446744073709551618|448=P1|447=D|452=1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"group count with leading zeros", "35=D|" + hdr + "11=o1|453=000000000000000000000001|448=P1|447=D|452=1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|"},
	{"market data counts beyond 64 bits", "35=V|" + hdr + "262=r1|263=1|264=0|267=18446744073709551617|269=0|146=18446744073709551617|55=ACME|"},
	{"market depth beyond 64 bits", "35=V|" + hdr + "262=r1|263=0|264=18446744073709551617|267=1|269=0|146=1|55=ACME|"},
	{"sequence number of 18 digits", "35=2|" + hdr + "7=999999999999999999|16=0|"},
	{"sequence number of 19 digits", "35=2|" + hdr + "7=1000000000000000000|16=0|"},
	{"negative sequence number beyond 64 bits", "35=2|" + hdr + "7=-18446744073709551614|16=0|"},
	{"new sequence number beyond 64 bits", "35=4|" + hdr + "123=Y|36=18446744073709551617|"},
	{"integer too long and not a number", "35=2|" + hdr + "7=18446744073709551617x|16=0|"},
	{"heartbeat interval beyond 64 bits", "35=A|" + hdr + "98=0|108=18446744073709551646|141=Y|"},
}

// oracle holds QuickFIX/Go's validator with the dictionary and
// RejectInvalidMessage on (full) and, as a session with the gateway's
// Validator runs them, QuickFIX/Go's session validator without a dictionary
// (session: TakeOverValidation turns its own checks off) followed by the
// Validator (ours).
type oracle struct {
	dd      *datadictionary.DataDictionary
	full    quickfix.Validator
	session quickfix.Validator
	ours    *Validator
}

func newOracle(dd *datadictionary.DataDictionary, vs quickfix.ValidatorSettings) oracle {
	return oracle{dd: dd, full: quickfix.NewValidator(vs, dd, nil), session: quickfix.NewValidator(quickfix.ValidatorSettings{}, nil, nil), ours: NewValidator(dd, vs)}
}

// verdicts parses raw as QuickFIX/Go's session does with the dictionary and
// as it does without one, and returns QuickFIX/Go's verdict on the first and
// the session's with the Validator on the second, and a description of how
// they differ ("" when they agree: both none, or the same reason, text and
// RefTagID). With several required tags missing, QuickFIX/Go names any one
// of them (it ranges over a map): then the tag is not compared. parsed is
// false when the parser refuses raw with the dictionary and without (a
// session drops such a message unvalidated); a message one parse takes and
// the other refuses is a difference.
func (o oracle) verdicts(raw []byte) (want, got quickfix.MessageRejectError, differ string, parsed bool) {
	withDict, flat := quickfix.NewMessage(), quickfix.NewMessage()
	errDict := quickfix.ParseMessageWithDataDictionary(withDict, bytes.NewBuffer(raw), o.dd, o.dd)
	errFlat := quickfix.ParseMessageWithDataDictionary(flat, bytes.NewBuffer(raw), nil, nil)
	switch {
	case errDict != nil && errFlat != nil:
		return nil, nil, "", false
	case errDict != nil || errFlat != nil:
		return nil, nil, fmt.Sprintf("parsed with the dictionary: %v; without: %v", errDict, errFlat), true
	}
	want = o.full.Validate(withDict)
	checked := flat
	if got = o.session.Validate(flat); got == nil {
		checked, got = o.ours.Check(flat)
	}
	if t, text := overlongInteger(o.dd, raw); t != 0 {
		// The one deliberate difference: QuickFIX/Go judges the message by
		// the value read modulo 2^64 (and accepts 453=2^64+1 with one
		// party); the gateway refuses it.
		switch {
		case got == nil:
			return want, got, fmt.Sprintf("integer of tag %d too long accepted (QuickFIX/Go says %v)", t, want), true
		case got.RejectReason() != rejectReasonValueIsIncorrect || deref(got.RefTagID()) != any(int(t)) || got.Error() != text:
			return want, got, fmt.Sprintf("integer of tag %d too long: %q (%d, tag %v), want %q (5, tag %d)",
				t, got.Error(), got.RejectReason(), deref(got.RefTagID()), text, t), true
		}
		return got, got, "", true
	}
	if !sameTags(withDict.Body.Tags(), checked.Body.Tags()) {
		// QuickFIX/Go's parse with the dictionary filed a field at the
		// wrong level (fileGroups; TestCheckFilesTheTopLevel): its
		// validator's verdict is then taken on the message as filed here.
		want = o.full.Validate(checked)
	}
	switch {
	case want == nil && got == nil:
		return want, got, "", true
	case want == nil || got == nil:
		return want, got, fmt.Sprintf("QuickFIX/Go says %v, the session with the gateway %v", want, got), true
	}
	sameTag := want.RejectReason() == rejectRequiredTagMissing || fmt.Sprint(deref(want.RefTagID())) == fmt.Sprint(deref(got.RefTagID()))
	if want.Error() != got.Error() || want.RejectReason() != got.RejectReason() || !sameTag {
		return want, got, fmt.Sprintf("QuickFIX/Go %q (%d, tag %v), gateway %q (%d, tag %v)",
			want.Error(), want.RejectReason(), deref(want.RefTagID()), got.Error(), got.RejectReason(), deref(got.RefTagID())), true
	}
	return want, got, "", true
}

// overlongDigits is an integer as QuickFIX/Go reads one with more than 18
// digits after its sign and leading zeros.
var overlongDigits = regexp.MustCompile(`^-?0*[1-9][0-9]{18,}$`)

// overlongInteger returns the first tag of raw, in wire order, that dd types
// as an integer and whose value overlongDigits matches, with the Text of the
// gateway's Reject; 0 when none.
func overlongInteger(dd *datadictionary.DataDictionary, raw []byte) (quickfix.Tag, string) {
	it := fixwire.NewIterator(raw)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		ft, known := dd.FieldTypeByTag[int(f.Tag)]
		if !known || !overlongDigits.Match(f.Value) {
			continue
		}
		switch ft.Type {
		case "SEQNUM":
			return f.Tag, ft.Name() + " beyond the largest MsgSeqNum the venue takes (18 digits)"
		case "INT", "LENGTH", "NUMINGROUP", "DAYOFMONTH":
			return f.Tag, ft.Name() + " beyond the largest integer the venue takes (18 digits)"
		}
	}
	return 0, ""
}

// TestOverlongIntegers states the one difference from QuickFIX/Go's
// validator: an integer of more than 18 digits, which QuickFIX/Go reads
// modulo 2^64 and accepts as another number, gets a Reject 373=5 naming
// its tag, on the fast path's way out and in a session with
// RejectInvalidMessage=N; an integer of 18 digits, or of more with leading
// zeros, passes the fast path.
func TestOverlongIntegers(t *testing.T) {
	dd := fix44(t)
	vs := quickfix.ValidatorSettings{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: true, RejectInvalidMessage: true, CheckUserDefinedFields: true}
	o := newOracle(dd, vs)
	echo := NewValidator(dd, vs)
	echo.echoOnly = true
	for _, c := range []struct {
		name, fields string
		refTag       int    // 0: valid
		text         string // the Reject's Text
		qfAccepts    bool   // QuickFIX/Go's validator takes the wrapped value
	}{
		{"one party, count 2^64+1", "35=D|" + hdr + "11=o1|453=18446744073709551617|448=P1|447=D|452=1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|",
			453, "NoPartyIDs beyond the largest integer the venue takes (18 digits)", true},
		{"one symbol and entry type, counts 2^64+1", "35=V|" + hdr + "262=r1|263=1|264=0|267=18446744073709551617|269=0|146=18446744073709551617|55=ACME|",
			267, "NoMDEntryTypes beyond the largest integer the venue takes (18 digits)", true},
		{"MarketDepth 2^64+1", "35=V|" + hdr + "262=r1|263=1|264=18446744073709551617|267=1|269=0|146=1|55=ACME|",
			264, "MarketDepth beyond the largest integer the venue takes (18 digits)", true},
		{"BeginSeqNo -(2^64-2)", "35=2|" + hdr + "7=-18446744073709551614|16=0|",
			7, "BeginSeqNo beyond the largest MsgSeqNum the venue takes (18 digits)", true},
		{"group count with leading zeros", "35=D|" + hdr + "11=o1|453=000000000000000000000001|448=P1|447=D|452=1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|",
			0, "", true},
		{"18 digits", "35=2|" + hdr + "7=999999999999999999|16=0|", 0, "", true},
	} {
		raw := wire(c.fields)
		m := parsed(t, nil, raw)
		if qf := o.full.Validate(parsed(t, dd, raw)); (qf == nil) != c.qfAccepts {
			t.Errorf("%s: QuickFIX/Go's validator says %v: the premise changed", c.name, qf)
		}
		for _, v := range []*Validator{o.ours, echo} {
			_, err := v.Check(m)
			if c.refTag == 0 {
				if err != nil {
					t.Errorf("%s (echoOnly %v): refused: %v", c.name, v.echoOnly, err)
				}
				continue
			}
			if err == nil || err.RejectReason() != 5 || deref(err.RefTagID()) != any(c.refTag) || err.Error() != c.text || err.IsBusinessReject() {
				t.Errorf("%s (echoOnly %v): %v, want session Reject 373=5 371=%d %q", c.name, v.echoOnly, err, c.refTag, c.text)
			}
		}
	}
	for _, v := range []string{"000000000000000000000001", "999999999999999999", "-999999999999999999", "-0000000000000000000000", "1234567890123456789x"} {
		if intTooLong([]byte(v)) {
			t.Errorf("%s: too long", v)
		}
	}
	m := parsed(t, nil, wire("35=2|"+hdr+"7=000000000000000000000001|16=0|"))
	if ok, _ := o.ours.valid(m.Bytes(), nil); !ok {
		t.Error("an integer with leading zeros not passed by the fast check")
	}
}

// TestValidatorAsQuickFIX checks that QuickFIX/Go's session without a
// dictionary followed by the gateway's Validator gives, for every case and
// settings, the verdict of QuickFIX/Go with the dictionary and
// RejectInvalidMessage=Y: the same reject (reason, RefTagID, text) or none.
func TestValidatorAsQuickFIX(t *testing.T) {
	dd := fix44(t)
	settings := []quickfix.ValidatorSettings{
		{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: true, RejectInvalidMessage: true, CheckUserDefinedFields: true},
		{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: false, RejectInvalidMessage: true, AllowUnknownMessageFields: true},
		{CheckFieldsOutOfOrder: false, CheckFieldsHaveValues: true, RejectInvalidMessage: true, CheckUserDefinedFields: false},
	}
	valid := 0
	for si, vs := range settings {
		o := newOracle(dd, vs)
		for _, c := range validationCases {
			want, _, differ, parsed := o.verdicts(wire(c.fields))
			if !parsed {
				t.Fatalf("%s: not parsed", c.name)
			}
			if want == nil && si == 0 {
				valid++
			}
			if differ != "" {
				t.Errorf("settings %d, %s: %s", si, c.name, differ)
			}
		}
	}
	// The cases must exercise both verdicts.
	if valid < 10 || valid == len(validationCases) {
		t.Fatalf("%d of %d cases valid under the default settings: the cases do not cover both verdicts", valid, len(validationCases))
	}
}

// TestCheckGivesGroups checks that a message with a repeating group, which
// QuickFIX/Go's session parsed without the dictionary, reaches the handlers
// with its group readable, and that a message without one is not parsed
// again.
func TestCheckGivesGroups(t *testing.T) {
	dd := fix44(t)
	v := NewValidator(dd, quickfix.ValidatorSettings{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: true, RejectInvalidMessage: true, CheckUserDefinedFields: true})
	flat := func(fields string) *quickfix.Message {
		m := quickfix.NewMessage()
		if err := quickfix.ParseMessageWithDataDictionary(m, bytes.NewBuffer(wire(fields)), nil, nil); err != nil {
			t.Fatal(err)
		}
		return m
	}
	req := flat("35=V|" + hdr + "262=r1|263=1|264=5|267=2|269=0|269=1|146=2|55=ACME|55=BOLT|")
	got, err := v.Check(req)
	if err != nil {
		t.Fatalf("MarketDataRequest refused: %v", err)
	}
	syms := quickfix.NewRepeatingGroup(tag.NoRelatedSym, quickfix.GroupTemplate{quickfix.GroupElement(tag.Symbol)})
	if err := got.Body.GetGroup(syms); err != nil || syms.Len() != 2 {
		t.Fatalf("NoRelatedSym from the checked message: %v, %d entries, want 2", err, syms.Len())
	}
	if s, _ := syms.Get(1).GetString(tag.Symbol); s != "BOLT" {
		t.Errorf("second symbol %q, want BOLT", s)
	}
	order := flat(validationCases[0].fields)
	if got, err := v.Check(order); err != nil || got != order {
		t.Errorf("plain NewOrderSingle: %v, same message %v", err, got == order)
	}
}

// sameTags reports whether a and b hold the same tags.
func sameTags(a, b []quickfix.Tag) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestCheckFilesTheTopLevel checks that a message with groups reaches the
// handlers with the fields of its top level in its body and those of its
// groups out of it, wherever they stand: QuickFIX/Go v0.9.11's parse with
// the dictionary files every field after a group with a nested group
// (Parties with PartySubIDs) inside that group, and a group right after it
// too.
func TestCheckFilesTheTopLevel(t *testing.T) {
	dd := fix44(t)
	v := NewValidator(dd, quickfix.ValidatorSettings{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: true, RejectInvalidMessage: true, CheckUserDefinedFields: true})
	raw := wire("35=D|" + hdr + "11=o1|453=1|448=P1|447=D|452=1|802=1|523=S1|803=1|386=1|336=X|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=1|59=3|")
	m, err := v.Check(parsed(t, nil, raw))
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	for _, tg := range []quickfix.Tag{tag.ClOrdID, tag.NoPartyIDs, tag.NoTradingSessions, tag.Symbol, tag.OrderQty, tag.TimeInForce} {
		if !m.Body.Has(tg) {
			t.Errorf("top-level tag %d not in the body", tg)
		}
	}
	for _, tg := range []quickfix.Tag{tag.PartyID, tag.PartySubID, tag.TradingSessionID} {
		if m.Body.Has(tg) {
			t.Errorf("group member %d in the body", tg)
		}
	}
	parties := quickfix.NewRepeatingGroup(tag.NoPartyIDs, quickfix.GroupTemplate{quickfix.GroupElement(tag.PartyID), quickfix.GroupElement(tag.PartyIDSource),
		quickfix.GroupElement(tag.PartyRole), quickfix.NewRepeatingGroup(tag.NoPartySubIDs, quickfix.GroupTemplate{quickfix.GroupElement(tag.PartySubID), quickfix.GroupElement(tag.PartySubIDType)})})
	if err := m.Body.GetGroup(parties); err != nil || parties.Len() != 1 {
		t.Fatalf("Parties: %v, %d entries", err, parties.Len())
	}
	if id, _ := parties.Get(0).GetString(tag.PartyID); id != "P1" {
		t.Errorf("PartyID %q, want P1", id)
	}
	// The oracle's premise: QuickFIX/Go's own parse loses the fields.
	if withDict := parsed(t, dd, raw); withDict.Body.Has(tag.OrderQty) {
		t.Error("QuickFIX/Go's parse with the dictionary files OrderQty right: fileGroups may no longer be needed")
	}
}

// rejectRequiredTagMissing is SessionRejectReason 1.
const rejectRequiredTagMissing = 1

func deref(t *quickfix.Tag) any {
	if t == nil {
		return nil
	}
	return int(*t)
}

// TestValidatorFastPath checks that the order flow's messages pass without
// QuickFIX/Go's validator, and without allocating.
func TestValidatorFastPath(t *testing.T) {
	dd := fix44(t)
	v := NewValidator(dd, quickfix.ValidatorSettings{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: true, RejectInvalidMessage: true, CheckUserDefinedFields: true})
	for _, c := range validationCases[:12] {
		m := quickfix.NewMessage()
		if err := quickfix.ParseMessageWithDataDictionary(m, bytes.NewBuffer(wire(c.fields)), nil, nil); err != nil {
			t.Fatal(err)
		}
		if ok, _ := v.valid(m.Bytes(), nil); !ok {
			t.Errorf("%s: not passed by the fast check", c.name)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = v.Check(m) }); n != 0 {
			t.Errorf("%s: %.0f allocations per Check, want 0", c.name, n)
		}
	}
}

// TestPlainTimestamp checks that every timestamp plainTimestamp accepts is
// one QuickFIX/Go reads, over edge dates and times and every form it tells
// apart.
func TestPlainTimestamp(t *testing.T) {
	accepted := 0
	for _, date := range []string{"20261202", "20240229", "20230229", "21000229", "20000229", "00000101", "99991231", "20261301", "20261200", "20260431", "20260430", "20261232"} {
		for _, tod := range []string{"00:00:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60", "1a:00:00"} {
			for _, frac := range []string{"", ".123", ".123456", ".123456789", ",123", ".12", ".+12", ".1234", ".12a"} {
				v := []byte(date + "-" + tod + frac)
				var x quickfix.FIXUTCTimestamp
				qf := x.Read(v) == nil
				if plainTimestamp(v) {
					accepted++
					if !qf {
						t.Errorf("%s: accepted, QuickFIX/Go refuses it", v)
					}
				} else if qf && frac != ",123" && frac != ".+12" {
					t.Errorf("%s: left to QuickFIX/Go's reader, a plain timestamp it takes", v)
				}
			}
		}
	}
	if accepted == 0 {
		t.Fatal("no timestamp accepted")
	}
}

// TestPlainDecimal checks that every value plainDecimal accepts is one
// QuickFIX/Go's float reader takes, over every string of up to five bytes
// from digits and the signs, points and letters of other forms, and long
// runs of digits; and that it accepts the forms prices and quantities take.
func TestPlainDecimal(t *testing.T) {
	alphabet := []byte("019.-+eE")
	accepted := 0
	var walk func(v []byte)
	walk = func(v []byte) {
		if plainDecimal(v) {
			accepted++
			var x quickfix.FIXFloat
			if err := x.Read(v); err != nil {
				t.Errorf("%q: accepted, QuickFIX/Go reads %v", v, err)
			}
		}
		if len(v) == 5 {
			return
		}
		for _, c := range alphabet {
			walk(append(v, c))
		}
	}
	walk(nil)
	for _, v := range []string{"100", "101.25", "-1", "0.5", "5.", "000123.4500", strings.Repeat("9", 18) + "." + strings.Repeat("9", 18)} {
		if !plainDecimal([]byte(v)) {
			t.Errorf("%q: not accepted", v)
		}
	}
	for _, v := range []string{"", "-", ".", ".5", "+1", "1e5", "1.2.3", "--1", strings.Repeat("9", 19), strings.Repeat("9", 400)} {
		if plainDecimal([]byte(v)) {
			t.Errorf("%q: accepted", v)
		}
	}
	if accepted < 1000 {
		t.Fatalf("only %d values accepted: the walk does not exercise plainDecimal", accepted)
	}
}

// TestTakeOverValidation checks which sessions' checks move to the gateway.
func TestTakeOverValidation(t *testing.T) {
	path, err := spec.WriteFIX44(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set  map[string]string
		take bool
	}{
		{map[string]string{}, true},
		{map[string]string{"RejectInvalidMessage": "Y", config.AllowUnknownMessageFields: "Y", config.ValidateFieldsOutOfOrder: "Y"}, true},
		{map[string]string{"RejectInvalidMessage": "N"}, false},
	} {
		ss := quickfix.NewSessionSettings()
		for k, v := range c.set {
			ss.Set(k, v)
		}
		v, err := TakeOverValidation(ss, path)
		if err != nil {
			t.Fatal(err)
		}
		if v == nil || v.echoOnly == c.take {
			t.Errorf("%v: validator %v, want one that takes over %v", c.set, v, c.take)
		}
		if got := ss.HasSetting("DataDictionary"); got == c.take {
			t.Errorf("%v: QuickFIX/Go has a dictionary %v, want %v", c.set, got, !c.take)
		}
		if !c.take {
			continue
		}
		for _, name := range []string{"RejectInvalidMessage", config.ValidateFieldsHaveValues, config.ValidateFieldsOutOfOrder} {
			if on, _ := ss.BoolSetting(name); on {
				t.Errorf("%v: %s still on in QuickFIX/Go", c.set, name)
			}
		}
	}
	ss := quickfix.NewSessionSettings()
	ss.Set(config.CheckUserDefinedFields, "maybe")
	if _, err := TakeOverValidation(ss, path); err == nil {
		t.Error("a setting that is not Y or N was accepted")
	}
	ss = quickfix.NewSessionSettings()
	ss.Set("DataDictionary", path)
	if _, err := TakeOverValidation(ss, path); err == nil {
		t.Error("a session's own DataDictionary was accepted")
	}
}

// TestValidatorAsQuickFIXMutations compares the verdicts as
// TestValidatorAsQuickFIX does over seeded random mutations of the cases:
// a value replaced, a field repeated, removed or added with a tag of the
// dictionary (in or out of the message type) or a user-defined one.
func TestValidatorAsQuickFIXMutations(t *testing.T) {
	dd := fix44(t)
	vs := quickfix.ValidatorSettings{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: true, RejectInvalidMessage: true, CheckUserDefinedFields: true}
	o := newOracle(dd, vs)
	rng := rand.New(rand.NewPCG(1, 2))
	values := []string{"0", "1", "2", "9", "Y", "N", "X", "-1", "1.5", "1.2.3", "+3", "18446744073709551617", "000000000000000000000001", "abc", "1 5", "1  5", "20261202-01:02:03", "20261202-01:02:03.456", "2026-12-02", "100", "ACME"}
	tags := []int{1, 11, 18, 21, 38, 40, 43, 44, 54, 55, 59, 60, 99, 111, 126, 7, 16, 36, 123, 112, 98, 108, 141, 58, 150, 39, 4999, 5001, 9999, 57, 97, 453, 448}
	const mutations = 20000
	valid, checked := 0, 0
	for i := 0; i < mutations; i++ {
		c := validationCases[rng.IntN(len(validationCases))]
		fields := strings.Split(strings.TrimSuffix(c.fields, "|"), "|")
		// Keep the first four (35, 49, 56, 34): the parser and the session
		// checks before validation need them.
		j := 4 + rng.IntN(len(fields)-3)
		switch rng.IntN(4) {
		case 0:
			if j < len(fields) {
				k, _, _ := strings.Cut(fields[j], "=")
				fields[j] = k + "=" + values[rng.IntN(len(values))]
			}
		case 1:
			if j < len(fields) {
				fields = append(fields[:j+1], fields[j:]...)
			}
		case 2:
			if j < len(fields) {
				fields = append(fields[:j], fields[j+1:]...)
			}
		case 3:
			f := fmt.Sprintf("%d=%s", tags[rng.IntN(len(tags))], values[rng.IntN(len(values))])
			fields = append(fields[:j], append([]string{f}, fields[j:]...)...)
		}
		raw := wire(strings.Join(fields, "|") + "|")
		want, _, differ, parsed := o.verdicts(raw)
		if !parsed {
			continue // not a message QuickFIX/Go's session would validate
		}
		checked++
		if want == nil {
			valid++
		}
		if differ != "" {
			t.Fatalf("%q: %s", raw, differ)
		}
	}
	t.Logf("%d mutated messages compared, %d valid", checked, valid)
	if checked < mutations/2 || valid == 0 || valid == checked {
		t.Fatalf("%d of %d mutations parsed, %d valid: the mutations do not cover both verdicts", checked, mutations, valid)
	}
}

// BenchmarkValidate: a NewOrderSingle parsed with the dictionary and
// through QuickFIX/Go's validator with RejectInvalidMessage=Y (quickfix),
// against parsed without one, through QuickFIX/Go's session validator with
// its checks off and the gateway's Validator (gateway), as a session runs
// them; gateway-part is the Validator alone.
func BenchmarkValidate(b *testing.B) {
	dd := fix44(b)
	vs := quickfix.ValidatorSettings{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: true, RejectInvalidMessage: true, CheckUserDefinedFields: true}
	o := newOracle(dd, vs)
	raw := wire(validationCases[0].fields)
	parse := func(dict *datadictionary.DataDictionary) *quickfix.Message {
		m := quickfix.NewMessage()
		if err := quickfix.ParseMessageWithDataDictionary(m, bytes.NewBuffer(raw), dict, dict); err != nil {
			b.Fatal(err)
		}
		return m
	}
	b.Run("quickfix", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if o.full.Validate(parse(dd)) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("gateway", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := parse(nil)
			if o.session.Validate(m) != nil {
				b.Fatal("refused")
			}
			if _, err := o.ours.Check(m); err != nil {
				b.Fatal("refused")
			}
		}
	})
	m := parse(nil)
	b.Run("gateway-part", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := o.ours.Check(m); err != nil {
				b.Fatal("refused")
			}
		}
	})
}

// BenchmarkQuickFIXParseBody: QuickFIX/Go's parse of a NewOrderSingle with
// its body as the order's fields (fields) and as one field holding them all
// (one-field), as the edge could hand an order to QuickFIX/Go: what such a
// rewrite could save at most (docs/benchmarks.md, "The FIX path against its
// floor").
func BenchmarkQuickFIXParseBody(b *testing.B) {
	fields := validationCases[0].fields
	body := fields[strings.Index(fields, hdr)+len(hdr):]
	oneField := "35=D|" + hdr + "5000=" + strings.ReplaceAll(body[:len(body)-1], "|", "\x02") + "|"
	for _, c := range []struct {
		name string
		raw  []byte
	}{{"fields", wire(fields)}, {"one-field", wire(oneField)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				parsed(b, nil, c.raw)
			}
		})
	}
}

// TestDictionaryParsedOnce: the same dictionary written in two data
// directories is parsed once.
func TestDictionaryParsedOnce(t *testing.T) {
	a, err := spec.WriteFIX44(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := spec.WriteFIX44(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	da, err := parsedDictionary(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := parsedDictionary(b)
	if err != nil {
		t.Fatal(err)
	}
	if da != db {
		t.Error("the same dictionary was parsed twice")
	}
	if _, err := parsedDictionary(filepath.Join(t.TempDir(), "missing.xml")); err == nil {
		t.Error("a missing dictionary was accepted")
	}
}

// FuzzValidator compares, as TestValidatorAsQuickFIX does, QuickFIX/Go's
// verdict with the dictionary and the session's without one followed by the
// Validator, on messages built from fuzzed fields ('|' for SOH; BodyLength
// and CheckSum are computed) that the FIX edge lets through.
func FuzzValidator(f *testing.F) {
	dd := fix44(f)
	o := newOracle(dd, quickfix.ValidatorSettings{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: true, RejectInvalidMessage: true, CheckUserDefinedFields: true})
	for _, c := range validationCases {
		f.Add(c.fields)
	}
	f.Fuzz(func(t *testing.T, fields string) {
		if !strings.HasPrefix(fields, "35=") || strings.Contains(fields, "\x01") || !strings.HasSuffix(fields, "|") {
			return
		}
		raw := wire(fields)
		if !edge.Admits(raw) {
			return // the FIX edge drops it before QuickFIX/Go
		}
		if _, _, differ, _ := o.verdicts(raw); differ != "" {
			t.Fatalf("%q: %s", fields, differ)
		}
	})
}

// TestCheckForWatchedTags: CheckFor says a message has none of the watched
// tags only when the fast check passed it and saw none; a watched tag
// anywhere, or a message the fast check leaves to QuickFIX/Go's validator
// (a repeating group here), answers true. The verdicts are Check's.
func TestCheckForWatchedTags(t *testing.T) {
	v := NewValidator(fix44(t), quickfix.ValidatorSettings{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: true, RejectInvalidMessage: true})
	var watch TagSet
	for _, tg := range []quickfix.Tag{tag.MinQty, tag.EffectiveTime} {
		if err := watch.Add(tg); err != nil {
			t.Fatal(err)
		}
	}
	if err := watch.Add(fieldsSeenMax); err == nil {
		t.Fatal("Add took a tag beyond the set")
	}
	order := "35=D|" + hdr + "11=o1|55=ACME|54=1|60=20261202-01:02:03.456|38=100|40=2|44=101.25|59=0|"
	cases := []struct {
		name, fields string
		seen         bool
	}{
		{"plain order", order, false},
		{"MinQty", order + "110=5|", true},
		{"EffectiveTime", strings.Replace(order, "59=0|", "59=0|168=20261202-01:02:03|", 1), true},
		{"another optional field", order + "111=5|", false},
		{"a repeating group", strings.Replace(order, "11=o1|", "11=o1|453=1|448=P1|447=D|452=1|", 1), true},
	}
	for _, c := range cases {
		m := parsed(t, nil, wire(c.fields))
		_, seen, err := v.CheckFor(m, &watch)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if seen != c.seen {
			t.Errorf("%s: seen %v, want %v", c.name, seen, c.seen)
		}
	}
}
