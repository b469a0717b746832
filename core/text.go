package core

import (
	"bytes"
	"strconv"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// AppendText appends the text form of the command or event whose header is
// at off in buf, as venue.AppendText does, except that a risk limit's
// removal reads value=none, as the admin API writes it: the number the
// command and its RiskControlResult carry for it, RiskLimitRemove, is the
// matcher's stand-in for none (risk.go, riskNone), which means nothing to
// an operator, and an OperatorCommand of an earlier build, whose block is
// shorter, prints as the matcher reads it (flags none). What prints commands and events for people uses it:
// `fixvenue journal dump`, `fixvenue events tail` and the export's JSON.
func AppendText(dst, buf []byte, off int) ([]byte, error) {
	start := len(dst)
	if id, err := venue.TemplateIDOf(buf, off); err == nil && id == venue.OperatorCommandTemplateID {
		// A record of an earlier build prints as the matcher reads it.
		buf, off = widened(nil, buf[off:], operatorCommandBlockBefore, venue.OperatorCommandBlockLength), 0
	}
	out, err := venue.AppendText(dst, buf, off)
	if err != nil || !removesLimit(buf, off) {
		return out, err
	}
	// The value is the first field of either message that prints as
	// " value=": the fields before it are numbers and names, and the
	// quoted ones that could hold those bytes (account, reason) follow it.
	number := strconv.AppendInt([]byte(" value="), RiskLimitRemove, 10)
	i := bytes.Index(out[start:], number)
	if i < 0 {
		return out, nil
	}
	i += start
	tail := append([]byte(" value="+RiskLimitNoneText), out[i+len(number):]...)
	return append(out[:i], tail...), nil
}

// RiskLimitNoneText is a removed or absent limit in text: in the admin
// API's answers and requests (gateway.LimitValue) and in AppendText.
const RiskLimitNoneText = "none"

// removesLimit reports whether the message at off is a RiskSetLimit that
// removes a limit, or the RiskControlResult of one that did.
func removesLimit(buf []byte, off int) bool {
	id, err := venue.TemplateIDOf(buf, off)
	if err != nil {
		return false
	}
	switch id {
	case venue.RiskSetLimitTemplateID:
		var m venue.RiskSetLimit
		return m.WrapDecode(buf, off) == nil && m.Value() == RiskLimitRemove
	case venue.RiskControlResultTemplateID:
		var m venue.RiskControlResult
		return m.WrapDecode(buf, off) == nil && m.Action() == venue.RiskActionSetLimit && m.Value() == RiskLimitRemove
	}
	return false
}
