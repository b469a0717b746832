package fixtests

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// soh separates FIX fields.
const soh = fixwire.SOH

// scriptTimeLayout is the layout of the <TIME> placeholder: UTC to the
// second, without a fraction, as the scripts were written for.
const scriptTimeLayout = "20060102-15:04:05"

// expectedSendingTimeChars is the length of a SendingTime with milliseconds
// (YYYYMMDD-HH:MM:SS.sss). An expectation that lacks BodyLength gets one
// computed as if its SendingTime had this length, because the acceptor stamps
// milliseconds while the script may hold a shorter <TIME>.
const expectedSendingTimeChars = 21

// placeholderShiftSecondsMax bounds n in <TIME+n> so that a typo cannot
// overflow the time arithmetic; a day is far beyond any script's need.
const placeholderShiftSecondsMax = 86400

var (
	timePlaceholderOpen = []byte("<TIME")
	errPlaceholder      = errors.New("malformed <TIME> placeholder")
)

// checkPlaceholders reports the first malformed <TIME...> placeholder in
// line, so that scripts fail when they are parsed rather than half-way
// through a run.
func checkPlaceholders(line []byte) error {
	_, err := expandPlaceholders(line, time.Unix(0, 0).UTC())
	return err
}

// expandPlaceholders replaces every <TIME>, <TIME+n> and <TIME-n> in line by
// now shifted by n seconds, formatted as YYYYMMDD-HH:MM:SS in UTC. Other text,
// including other '<' characters, is copied unchanged. The input is never
// modified; a line without placeholders is returned as is.
func expandPlaceholders(line []byte, now time.Time) ([]byte, error) {
	i := bytes.Index(line, timePlaceholderOpen)
	if i < 0 {
		return line, nil
	}
	out := make([]byte, 0, len(line)+8)
	rest := line
	for i >= 0 {
		out = append(out, rest[:i]...)
		rest = rest[i+len(timePlaceholderOpen):]
		end := bytes.IndexByte(rest, '>')
		if end < 0 {
			return nil, fmt.Errorf("%w: no closing '>'", errPlaceholder)
		}
		shift, err := parsePlaceholderShift(rest[:end])
		if err != nil {
			return nil, err
		}
		t := now.UTC().Add(time.Duration(shift) * time.Second)
		out = t.AppendFormat(out, scriptTimeLayout)
		rest = rest[end+1:]
		i = bytes.Index(rest, timePlaceholderOpen)
	}
	return append(out, rest...), nil
}

// parsePlaceholderShift parses what sits between "<TIME" and ">": nothing,
// or a sign followed by decimal seconds.
func parsePlaceholderShift(s []byte) (int, error) {
	if len(s) == 0 {
		return 0, nil
	}
	if s[0] != '+' && s[0] != '-' || len(s) == 1 {
		return 0, fmt.Errorf("%w: <TIME%s>", errPlaceholder, s)
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: <TIME%s>", errPlaceholder, s)
		}
	}
	n, err := strconv.Atoi(string(s[1:]))
	if err != nil || n > placeholderShiftSecondsMax {
		return 0, fmt.Errorf("%w: <TIME%s> (shift limit %d s)", errPlaceholder, s, placeholderShiftSecondsMax)
	}
	if s[0] == '-' {
		n = -n
	}
	return n, nil
}

// fieldSpan locates one field inside a message: msg[start:end] is "tag=value"
// without its SOH.
type fieldSpan struct {
	start, end int
}

// tagOf returns the tag of the field (the bytes before the first '='), or the
// whole field when it has no '='.
func (f fieldSpan) tagOf(msg []byte) []byte {
	b := msg[f.start:f.end]
	if i := bytes.IndexByte(b, '='); i >= 0 {
		return b[:i]
	}
	return b
}

// splitFields returns the spans of msg's SOH-separated fields. Empty pieces
// at the very end are dropped (a message normally ends with SOH), as the
// reference runner's split does; empty pieces in the middle are kept, since
// they are real (garbled) fields.
func splitFields(msg []byte) []fieldSpan {
	spans := make([]fieldSpan, 0, 16)
	start := 0
	for i, c := range msg {
		if c == soh {
			spans = append(spans, fieldSpan{start, i})
			start = i + 1
		}
	}
	spans = append(spans, fieldSpan{start, len(msg)})
	for len(spans) > 0 && spans[len(spans)-1].start == spans[len(spans)-1].end {
		spans = spans[:len(spans)-1]
	}
	return spans
}

// fillOptions tells fillLengthAndChecksum how to compute BodyLength.
type fillOptions struct {
	// sendingTimeChars, when positive, is the length the SendingTime (52)
	// value is assumed to have when BodyLength is computed (expectations).
	sendingTimeChars int
}

// fillLengthAndChecksum completes a message line the way the scripts assume:
//
//   - a line that does not start with "8=" is returned untouched;
//   - without a 9= field, "9=<length>" is inserted after the 8= field, where
//     length counts the bytes after the 8= field's SOH up to (not including)
//     the trailing 10= field; when a trailing 10= field is present the length
//     is one short, as the reference runner computes it (such lines are
//     garbled on purpose);
//   - without a trailing 10= field, "10=<sum of all bytes mod 256, 3 digits>"
//     and SOH are appended (with an SOH first if the line lacks one at its end).
//
// Fields that are present are never changed. msg is not modified.
func fillLengthAndChecksum(msg []byte, o fillOptions) []byte {
	if !bytes.HasPrefix(msg, []byte("8=")) {
		return msg
	}
	spans := splitFields(msg)
	has9 := false
	sendingTimeChars := -1
	for _, f := range spans {
		switch string(f.tagOf(msg)) {
		case "9":
			has9 = true
		case "52":
			sendingTimeChars = f.end - f.start - len("52=")
		}
	}
	last := spans[len(spans)-1]
	has10 := string(last.tagOf(msg)) == "10"

	out := make([]byte, 0, len(msg)+16)
	if has9 {
		out = append(out, msg...)
	} else {
		beginEnd := spans[0].end // index of the SOH after 8=..., or len(msg)
		bodyStart := min(beginEnd+1, len(msg))
		bodyEnd := len(msg)
		if has10 {
			bodyEnd = last.start
		}
		length := bodyEnd - bodyStart
		if has10 {
			length--
		}
		if o.sendingTimeChars > 0 && sendingTimeChars >= 0 {
			length += o.sendingTimeChars - sendingTimeChars
		}
		out = append(out, msg[:bodyStart]...)
		if beginEnd == len(msg) {
			out = append(out, soh)
		}
		out = append(out, "9="...)
		out = strconv.AppendInt(out, int64(length), 10)
		out = append(out, soh)
		out = append(out, msg[bodyStart:]...)
	}
	if has10 {
		return out
	}
	if out[len(out)-1] != soh {
		out = append(out, soh)
	}
	return fixwire.AppendCheckSum(out)
}

// prepareSend turns an I line's message into the bytes to send.
func prepareSend(msg []byte, now time.Time) ([]byte, error) {
	expanded, err := expandPlaceholders(msg, now)
	if err != nil {
		return nil, err
	}
	return fillLengthAndChecksum(expanded, fillOptions{}), nil
}

// prepareExpected turns an E line's message into the message to compare with.
func prepareExpected(msg []byte, now time.Time) ([]byte, error) {
	expanded, err := expandPlaceholders(msg, now)
	if err != nil {
		return nil, err
	}
	return fillLengthAndChecksum(expanded, fillOptions{sendingTimeChars: expectedSendingTimeChars}), nil
}

// showMessage renders a FIX message for a report: SOH as '|', other control
// bytes and non-ASCII as \xNN so that a report is always one readable line.
func showMessage(b []byte) string {
	out := make([]byte, 0, len(b)+8)
	for _, c := range b {
		switch {
		case c == soh:
			out = append(out, '|')
		case c < 0x20 || c >= 0x7f:
			out = append(out, '\\', 'x', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			out = append(out, c)
		}
	}
	return string(out)
}
