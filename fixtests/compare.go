package fixtests

import (
	"bytes"
	"fmt"
	"regexp"
)

// patternTags are the tags whose received value is matched against a
// pattern instead of compared literally, because the acceptor fills them
// with the time or a checksum the script cannot know. The match is an
// unanchored search, as in the reference runner, so 52 accepts both
// second and millisecond precision.
var patternTags = map[string]*regexp.Regexp{
	"10":  regexp.MustCompile(`\d{3}`),
	"42":  regexp.MustCompile(`\d{8}-\d{2}:\d{2}:\d{2}`),
	"52":  regexp.MustCompile(`\d{8}-\d{2}:\d{2}:\d{2}|\d{8}-\d{2}:\d{2}:\d{2}[.]\d{3}`),
	"60":  regexp.MustCompile(`\d{8}-\d{2}:\d{2}:\d{2}`),
	"122": regexp.MustCompile(`\d{8}-\d{2}:\d{2}:\d{2}`),
}

// anyValue, as a whole value in an E line, matches any received value of
// that tag. It is this runner's extension for our own scripts, where the
// venue assigns identifiers (OrderID, ExecID) and hence BodyLength that a
// script cannot know; the QuickFIX scripts never contain it. The tag and
// its position are still compared.
const anyValue = "<ANY>"

// differencesMax bounds how many field differences one comparison reports;
// after a shifted field every later one differs, and the first few say it all.
const differencesMax = 8

// Difference is one reason why a received message does not match the
// expected one.
type Difference struct {
	// Index is the 0-based field position, or -1 for a whole-message
	// difference (the field count).
	Index int
	// Expected and Received are the fields ("tag=value") at Index; empty
	// when a side has no field there.
	Expected, Received string
	// Reason says what differs, in words.
	Reason string
}

func (d Difference) String() string {
	if d.Index < 0 {
		return d.Reason
	}
	return fmt.Sprintf("field %d: %s (expected %q, received %q)", d.Index+1, d.Reason, d.Expected, d.Received)
}

// compareMessages compares a received message with an expected one by the
// rules of the script format: same number of SOH-separated fields, same tag
// at every position, values equal as strings except for the pattern tags.
// It returns nil when they match.
func compareMessages(expected, received []byte) []Difference {
	ef := splitFields(expected)
	rf := splitFields(received)
	var diffs []Difference
	if len(ef) != len(rf) {
		diffs = append(diffs, Difference{
			Index:  -1,
			Reason: fmt.Sprintf("field count differs: expected %d fields, received %d", len(ef), len(rf)),
		})
	}
	n := max(len(ef), len(rf))
	for i := 0; i < n && len(diffs) < differencesMax; i++ {
		var e, r []byte
		if i < len(ef) {
			e = expected[ef[i].start:ef[i].end]
		}
		if i < len(rf) {
			r = received[rf[i].start:rf[i].end]
		}
		if reason := compareField(e, r, i < len(ef), i < len(rf)); reason != "" {
			diffs = append(diffs, Difference{Index: i, Expected: showMessage(e), Received: showMessage(r), Reason: reason})
		}
	}
	return diffs
}

// compareField compares one expected field with one received field and
// returns why they differ, or "" when they match.
func compareField(e, r []byte, haveE, haveR bool) string {
	switch {
	case !haveE:
		return "unexpected extra field"
	case !haveR:
		return "missing field"
	}
	eTag, eVal, eHasEq := bytes.Cut(e, []byte("="))
	rTag, rVal, rHasEq := bytes.Cut(r, []byte("="))
	if !bytes.Equal(eTag, rTag) {
		return fmt.Sprintf("tag %s expected here, received tag %s", showMessage(eTag), showMessage(rTag))
	}
	if eHasEq != rHasEq {
		return "one field has '=', the other has not"
	}
	if eHasEq && string(eVal) == anyValue {
		return ""
	}
	if re, ok := patternTags[string(eTag)]; ok {
		if !re.Match(rVal) {
			return fmt.Sprintf("tag %s value does not match pattern %s", eTag, re)
		}
		return ""
	}
	if !bytes.Equal(eVal, rVal) {
		return fmt.Sprintf("tag %s value differs", showMessage(eTag))
	}
	return ""
}
