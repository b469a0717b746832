package fixcheck

import (
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestCheck: what a validating client accepts passes, and each way of
// breaking it is refused with the reason such a client gives.
func TestCheck(t *testing.T) {
	now := fixclient.Timestamp(time.Now())
	header := func(extra ...fixclient.Field) []fixclient.Field {
		return append([]fixclient.Field{fixclient.F(35, "8"), fixclient.F(49, "V"), fixclient.F(56, "C"), fixclient.F(34, "2"), fixclient.F(52, now)}, extra...)
	}
	er := func(side string, extra ...fixclient.Field) []fixclient.Field {
		return append([]fixclient.Field{fixclient.F(37, "1"), fixclient.F(17, "1"), fixclient.F(150, "0"), fixclient.F(39, "0"),
			fixclient.F(55, "ACME"), fixclient.F(54, side), fixclient.F(151, "1"), fixclient.F(14, "0"), fixclient.F(6, "0")}, extra...)
	}
	w := []fixclient.Field{fixclient.F(35, "W"), fixclient.F(49, "V"), fixclient.F(56, "C"), fixclient.F(34, "2"), fixclient.F(52, now),
		fixclient.F(262, "md"), fixclient.F(55, "ACME")}
	for _, c := range []struct {
		name   string
		fields []fixclient.Field
		want   string // "" accepted, else in the error
	}{
		{"ExecutionReport", append(header(), er("1")...), ""},
		{"value outside the enumeration", append(header(), er("Z")...), "SessionRejectReason 5, tag 54"},
		{"tag not defined for the message", append(header(), er("1", fixclient.F(262, "x"))...), "SessionRejectReason 2, tag 262"},
		{"user-defined tag", append(header(), er("1", fixclient.F(5001, "x"))...), "SessionRejectReason 0, tag 5001"},
		{"empty value", append(header(), er("1", fixclient.F(58, ""))...), "SessionRejectReason 4, tag 58"},
		{"required field missing", append(header(), er("1")[1:]...), "SessionRejectReason 1, tag 37"},
		{"repeated tag", append(header(), er("1", fixclient.F(55, "ACME"))...), "SessionRejectReason 13, tag 55"},
		{"header field in the body", append(header(), append(er("1")[:3], append([]fixclient.Field{fixclient.F(43, "N")}, er("1")[3:]...)...)...), "SessionRejectReason 14, tag 43"},
		{"PossDup without OrigSendingTime", append(header(fixclient.F(43, "Y")), er("1")...), "SessionRejectReason 1, tag 122"},
		{"PossDup with OrigSendingTime", append(header(fixclient.F(43, "Y"), fixclient.F(122, now)), er("1")...), ""},
		{"OrigSendingTime after SendingTime", append(header(fixclient.F(43, "Y"), fixclient.F(122, fixclient.Timestamp(time.Now().Add(time.Hour)))), er("1")...), "OrigSendingTime (122) after"},
		{"UTF-8 in Text", append(header(), er("1", fixclient.F(58, "5 \u00d7 2"))...), "tag 58: byte 0xc3 is not printable ASCII"},
		{"W", append(w, fixclient.F(268, "2"), fixclient.F(269, "0"), fixclient.F(270, "1.00"), fixclient.F(269, "1"), fixclient.F(270, "2.00")), ""},
		{"group count", append(w, fixclient.F(268, "2"), fixclient.F(269, "0"), fixclient.F(270, "1.00")), "SessionRejectReason 16, tag 268"},
		{"group member before its delimiter", append(w, fixclient.F(268, "1"), fixclient.F(270, "1.00"), fixclient.F(269, "0")), "SessionRejectReason 16, tag 268"},
	} {
		err := Check(fixclient.Build(c.fields...))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
