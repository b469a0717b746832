package fixtests

import (
	"strings"
	"testing"
)

func TestCompareMessages(t *testing.T) {
	const logon = "8=FIX.4.4|9=61|35=A|34=1|49=ISLD|52=00000000-00:00:00.000|56=TW|98=0|108=30|10=0|"
	tests := []struct {
		name, expected, received string
		// wantIndex is the 0-based field index of the first reported
		// difference, -1 for a field count difference, -2 for a match.
		wantIndex int
		wantIn    string // a word the first difference's text must contain
	}{
		{
			name:      "match with milliseconds",
			expected:  logon,
			received:  "8=FIX.4.4|9=61|35=A|34=1|49=ISLD|52=20261130-10:11:12.345|56=TW|98=0|108=30|10=123|",
			wantIndex: -2,
		},
		{
			name:      "52 to the second matches too",
			expected:  "8=FIX.4.4|52=00000000-00:00:00.000|",
			received:  "8=FIX.4.4|52=20261130-10:11:12|",
			wantIndex: -2,
		},
		{
			name:      "pattern tags 42 60 122 match any timestamp",
			expected:  "42=x|60=00000000-00:00:00|122=<TIME>|",
			received:  "42=20261130-10:11:12|60=20261130-10:11:12.123|122=20261130-10:11:12|",
			wantIndex: -2,
		},
		{
			name:      "trailing empty field ignored",
			expected:  "8=FIX.4.4|35=0|",
			received:  "8=FIX.4.4|35=0",
			wantIndex: -2,
		},
		{
			name:      "checksum not three digits",
			expected:  "35=0|10=0|",
			received:  "35=0|10=7|",
			wantIndex: 1,
			wantIn:    "pattern",
		},
		{
			name:      "52 without a time",
			expected:  "52=00000000-00:00:00.000|",
			received:  "52=yesterday|",
			wantIndex: 0,
			wantIn:    "pattern",
		},
		{
			name:      "9 compared literally",
			expected:  logon,
			received:  "8=FIX.4.4|9=65|35=A|34=1|49=ISLD|52=20261130-10:11:12.345|56=TW|98=0|108=30|10=123|",
			wantIndex: 1,
			wantIn:    "tag 9 value differs",
		},
		{
			name:      "value differs",
			expected:  "35=0|34=2|",
			received:  "35=0|34=3|",
			wantIndex: 1,
			wantIn:    "tag 34 value differs",
		},
		{
			name:      "extra field",
			expected:  "35=0|34=2|",
			received:  "35=0|34=2|58=hello|",
			wantIndex: -1,
			wantIn:    "expected 2 fields, received 3",
		},
		{
			name:      "missing field",
			expected:  "35=0|34=2|58=hello|",
			received:  "35=0|34=2|",
			wantIndex: -1,
			wantIn:    "expected 3 fields, received 2",
		},
		{
			name:      "order differs",
			expected:  "35=0|34=2|49=TW|",
			received:  "35=0|49=TW|34=2|",
			wantIndex: 1,
			wantIn:    "tag 34 expected here, received tag 49",
		},
		{
			name:      "<ANY> matches any value, tag still compared",
			expected:  "9=<ANY>|37=<ANY>|17=<ANY>|",
			received:  "9=123|37=O-77|17=|",
			wantIndex: -2,
		},
		{
			name:      "<ANY> does not excuse a different tag",
			expected:  "37=<ANY>|",
			received:  "17=E1|",
			wantIndex: 0,
			wantIn:    "tag 37 expected here",
		},
		{
			name:      "<ANY> only as a whole value",
			expected:  "58=x<ANY>|",
			received:  "58=xyz|",
			wantIndex: 0,
			wantIn:    "tag 58 value differs",
		},
		{
			name:      "field without equals sign",
			expected:  "35=0|34|",
			received:  "35=0|34=|",
			wantIndex: 1,
			wantIn:    "'='",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffs := compareMessages(fix(tt.expected), fix(tt.received))
			if tt.wantIndex == -2 {
				if diffs != nil {
					t.Fatalf("want a match, got %v", diffs)
				}
				return
			}
			if len(diffs) == 0 {
				t.Fatalf("want a difference, got a match")
			}
			if diffs[0].Index != tt.wantIndex || !strings.Contains(diffs[0].String(), tt.wantIn) {
				t.Fatalf("first difference %q (index %d); want index %d containing %q", diffs[0], diffs[0].Index, tt.wantIndex, tt.wantIn)
			}
		})
	}
}

// TestCompareMessagesReportsFieldsAfterCountDifference checks that a field
// count difference also says where the messages part.
func TestCompareMessagesReportsFieldsAfterCountDifference(t *testing.T) {
	diffs := compareMessages(fix("35=0|34=2|"), fix("35=0|58=x|34=2|"))
	if len(diffs) < 3 {
		t.Fatalf("got %v", diffs)
	}
	if diffs[1].Index != 1 || diffs[1].Expected != "34=2" || diffs[1].Received != "58=x" {
		t.Fatalf("second difference %+v", diffs[1])
	}
	if diffs[2].Index != 2 || !strings.Contains(diffs[2].Reason, "extra") {
		t.Fatalf("third difference %+v", diffs[2])
	}
}

// TestCompareMessagesBounded checks that a long run of shifted fields is
// reported with at most differencesMax entries.
func TestCompareMessagesBounded(t *testing.T) {
	e := strings.Repeat("1=a|", 50)
	r := strings.Repeat("1=b|", 50)
	if got := len(compareMessages(fix(e), fix(r))); got != differencesMax {
		t.Fatalf("%d differences, want %d", got, differencesMax)
	}
}
