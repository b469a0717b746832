package edge

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
)

func TestParseLogon(t *testing.T) {
	good := fixMsg("35=A", "34=1", "49=CLIENT1", "52=20260101-00:00:00.000", "56=VENUE", "98=0", "108=30", "554=pw")
	lf, problem := parseLogon(good)
	if problem != "" || lf.key != (SessionKey{"FIX.4.4", "CLIENT1", "VENUE"}) || string(lf.password) != "pw" {
		t.Fatalf("parsed %+v %q", lf, problem)
	}
	for _, tc := range []struct {
		msg  []byte
		want string
	}{
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "108="), "tag 108 specified without value"},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "49=OTHER"), "tag 49 appears more than once"},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "141=Y", "141=N"), "tag 141 appears more than once"},
		{fixMsg("35=A", "49=CLIENT1", "56=VENUE"), "required tag 34 missing"},
		{fixMsg("35=A", "34=x", "49=CLIENT1", "56=VENUE"), "tag 34 is not a sequence number"},
		{fixMsg("35=A", "34=1", "56=VENUE"), "required tag 49 missing"},
		{fixMsg("35=A", "34=1", "49=CLIENT1"), "required tag 56 missing"},
		{fixMsg("35=A", "34=1", "49="+strings.Repeat("X", 65), "56=VENUE"), "CompID too long"},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "98=0"), "required tag 108 missing"},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "108=0"), "tag 108 must be a heartbeat interval of 1 to 3600 seconds"},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "108=-5"), "tag 108 must be a heartbeat interval of 1 to 3600 seconds"},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "108=3601"), "tag 108 must be a heartbeat interval of 1 to 3600 seconds"},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "108=99999999999"), "tag 108 must be a heartbeat interval of 1 to 3600 seconds"},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "108=30.5"), "tag 108 must be a heartbeat interval of 1 to 3600 seconds"},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "108=abc"), "tag 108 must be a heartbeat interval of 1 to 3600 seconds"},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "108=3600", "98=0"), ""},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "108=007", "98=0"), ""},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "108=30"), "required tag 98 missing"},
		{fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "108=30", "98=1"), "tag 98 must be 0 (no encryption; the venue offers TLS)"},
		{fixMsg("35=A", "34=5", "49=CLIENT1", "56=VENUE", "108=30", "98=0", "141=Y"), "a Logon with 141=Y must carry 34=1"},
		{fixMsg("35=A", "34=01", "49=CLIENT1", "56=VENUE", "108=30", "98=0", "141=Y"), ""},
		{fixMsg("35=A", "34=5", "49=CLIENT1", "56=VENUE", "108=30", "98=0", "141=N"), ""},
	} {
		lf, problem := parseLogon(tc.msg)
		if problem != tc.want {
			t.Errorf("%q: %q, want %q", tc.msg, problem, tc.want)
		}
		// A refused Logon's Logout carries its CompIDs, swapped, whatever
		// the problem (a Logout without them is invalid, dropped unread).
		if bytes.Contains(tc.msg, []byte("\x0149=CLIENT1\x01")) && bytes.Contains(tc.msg, []byte("\x0156=VENUE\x01")) && lf.key != (SessionKey{"FIX.4.4", "CLIENT1", "VENUE"}) {
			t.Errorf("%q: key %+v, want CLIENT1 and VENUE", tc.msg, lf.key)
		}
	}
	// What CheckSeqNums is asked with: the flag and the number as read.
	for _, tc := range []struct {
		msg    []byte
		reset  bool
		seqNum uint64
	}{
		{good, false, 1},
		{fixMsg("35=A", "34=01", "49=CLIENT1", "56=VENUE", "108=30", "98=0", "141=Y"), true, 1},
		{fixMsg("35=A", "34=5", "49=CLIENT1", "56=VENUE", "108=30", "98=0", "141=N"), false, 5},
		{fixMsg("35=A", "34=000123456789", "49=CLIENT1", "56=VENUE", "108=30", "98=0"), false, 123456789},
		{fixMsg("35=A", "34=x", "49=CLIENT1", "56=VENUE", "108=30", "98=0"), false, 0},
	} {
		if lf, _ := parseLogon(tc.msg); lf.reset != tc.reset || lf.seqNum != tc.seqNum {
			t.Errorf("%q: reset %v, seqNum %d, want %v, %d", tc.msg, lf.reset, lf.seqNum, tc.reset, tc.seqNum)
		}
	}
	// Repeating groups may repeat their members.
	grouped := fixMsg("35=A", "34=1", "49=CLIENT1", "56=VENUE", "98=0", "108=30", "384=2", "372=D", "385=R", "372=F", "385=R")
	if _, problem := parseLogon(grouped); problem != "" {
		t.Fatalf("group refused: %q", problem)
	}
}

// TestStripCredentials: the Logon QuickFIX/Go reads has no password, is
// framed exactly, and otherwise carries the same fields in the same order.
func TestStripCredentials(t *testing.T) {
	in := fixMsg("35=A", "34=1", "49=CLIENT1", "52=20260101-00:00:00.000", "56=VENUE", "98=0", "108=30",
		"95=5", "96=ab\x01cd", "554=secret", "925=newsecret", "141=Y")
	out := stripCredentials(in)
	want := fixMsg("35=A", "34=1", "49=CLIENT1", "52=20260101-00:00:00.000", "56=VENUE", "98=0", "108=30",
		"95=5", "96=ab\x01cd", "141=Y")
	if !bytes.Equal(out, want) {
		t.Fatalf("stripped\n%q\nwant\n%q", out, want)
	}
	if got := stripCredentials(want); &got[0] != &want[0] {
		t.Fatal("a Logon without credentials was copied")
	}
}

// TestRefusalLogout: the edge's Logout is a well-formed FIX message that
// the framer and QuickFIX/Go both accept.
func TestRefusalLogout(t *testing.T) {
	lf := logonFields{key: SessionKey{"FIX.4.4", "CLIENT1", "VENUE"}, begin: []byte("FIX.4.4"), sender: []byte("CLIENT1"), target: []byte("VENUE")}
	m := refusalLogout(lf, "Logon refused", time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC))
	want := fixMsg("35=5", "34=1", "49=VENUE", "52=20260102-03:04:05.006", "56=CLIENT1", "58=Logon refused")
	if !bytes.Equal(m, want) {
		t.Fatalf("Logout\n%q\nwant\n%q", m, want)
	}
	checkFramed(t, m)
	msg := quickfix.NewMessage()
	if err := quickfix.ParseMessage(msg, bytes.NewBuffer(m)); err != nil {
		t.Fatal(err)
	}
}
