package fixcheck

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/quickfix/datadictionary"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/gateway/spec"
	"github.com/fixvenue/fixvenue/internal/fixwire"
)

var (
	once      sync.Once
	dict      *datadictionary.DataDictionary
	validator quickfix.Validator
	parseErr  error
)

// Check returns why a validating client refuses raw, one whole FIX message
// as read from the wire; nil when it accepts it.
func Check(raw []byte) error {
	once.Do(func() {
		if dict, parseErr = datadictionary.ParseSrc(bytes.NewReader(spec.FIX44())); parseErr == nil {
			validator = quickfix.NewValidator(quickfix.ValidatorSettings{CheckFieldsOutOfOrder: true, CheckFieldsHaveValues: true,
				RejectInvalidMessage: true, CheckUserDefinedFields: true}, dict, nil)
		}
	})
	if parseErr != nil {
		return fmt.Errorf("fixcheck: the FIX 4.4 dictionary: %w", parseErr)
	}
	m := quickfix.NewMessage()
	if err := quickfix.ParseMessageWithDataDictionary(m, bytes.NewBuffer(append([]byte(nil), raw...)), dict, dict); err != nil {
		return fmt.Errorf("unparsable: %w", err)
	}
	if rej := validator.Validate(m); rej != nil {
		return reject(rej)
	}
	if err := printable(raw); err != nil {
		return err
	}
	if dup, err := m.Header.GetBool(tag.PossDupFlag); err == nil && dup {
		if !m.Header.Has(tag.OrigSendingTime) {
			return reject(quickfix.RequiredTagMissing(tag.OrigSendingTime))
		}
		orig, err1 := m.Header.GetTime(tag.OrigSendingTime)
		sent, err2 := m.Header.GetTime(tag.SendingTime)
		if err1 != nil || err2 != nil || orig.After(sent) {
			return fmt.Errorf("OrigSendingTime (122) after SendingTime (52), or either unreadable")
		}
	}
	return nil
}

// printable refuses a byte other than printable ASCII outside the data
// fields. FIX 4.4 carries other characters only in its Encoded fields
// (EncodedText 355 and the like, with MessageEncoding 347), Text in ASCII
// beside them: validating engines do not check it, but a client decoding
// ISO-8859-1 (QuickFIX/J's default) reads UTF-8 as other characters.
func printable(raw []byte) error {
	it := fixwire.NewIterator(raw)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		if ft, ok := dict.FieldTypeByTag[int(f.Tag)]; ok && ft.Type == "DATA" {
			continue
		}
		if i := fixwire.NotPrintable(f.Value); i >= 0 {
			return fmt.Errorf("tag %d: byte %#x is not printable ASCII (FIX 4.4 puts other characters in its Encoded fields)", f.Tag, f.Value[i])
		}
	}
	return nil
}

// reject says what a session Reject of rej would: reason, tag, text.
func reject(rej quickfix.MessageRejectError) error {
	if t := rej.RefTagID(); t != nil {
		return fmt.Errorf("SessionRejectReason %d, tag %d: %s", rej.RejectReason(), *t, rej.Error())
	}
	return fmt.Errorf("SessionRejectReason %d: %s", rej.RejectReason(), rej.Error())
}
