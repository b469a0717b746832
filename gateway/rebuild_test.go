package gateway

import (
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

func acceptedEvent(t *testing.T, session uint16, execID uint64, tsNs int64) []byte {
	t.Helper()
	buf := make([]byte, venue.OrderAcceptedEncodedLength)
	var e venue.OrderAccepted
	if err := e.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	e.SetSessionIdx(session)
	e.SetExecID(execID)
	e.SetTimestampNs(tsNs)
	return buf
}

// TestLostReports: an event's report is kept when its session's store
// lacks it: an ExecID above the store's highest, or, for a store with no
// report since its reset, an event after the reset; never for a session not
// rebuilt, nor beyond the bound (counted).
func TestLostReports(t *testing.T) {
	marks := []ReportMark{
		{Rebuild: true, ExecID: 10},
		{Rebuild: true, ResetNs: 1000},
		{Rebuild: false},
	}
	l := NewLostReports(marks, 3, nil)
	for _, c := range []struct {
		session uint16
		execID  uint64
		ts      int64
	}{
		{0, 9, 5000}, {0, 10, 5000}, {0, 11, 5000}, // only 11
		{1, 3, 999}, {1, 4, 1000}, {1, 5, 1001}, // only the one after the reset
		{2, 50, 5000},                // not rebuilt
		{3, 60, 5000},                // no such session
		{0, 12, 5000}, {0, 13, 5000}, // 12 fits, 13 is over the bound
	} {
		l.Event(acceptedEvent(t, c.session, c.execID, c.ts))
	}
	var other venue.TradingStatusChanged
	buf := make([]byte, venue.TradingStatusChangedEncodedLength)
	_ = other.WrapEncode(buf, 0)
	l.Event(buf) // no report
	events, dropped := l.Events()
	var got []uint64
	for _, ev := range events {
		_, id, _ := reportOf(ev)
		got = append(got, id)
	}
	if len(got) != 3 || got[0] != 11 || got[1] != 5 || got[2] != 12 || dropped != 1 {
		t.Fatalf("kept ExecIDs %v, %d dropped; want [11 5 12], 1", got, dropped)
	}
}

// TestLostReportsForADropCopy: an event whose report its session holds is
// kept when a drop-copy session's store lacks its copy.
func TestLostReportsForADropCopy(t *testing.T) {
	l := NewLostReports([]ReportMark{{Rebuild: true, ExecID: 20}, {Rebuild: true, ExecID: 15, DropCopy: true}}, 8, nil)
	for _, id := range []uint64{14, 15, 16, 21} {
		l.Event(acceptedEvent(t, 0, id, 5000))
	}
	events, _ := l.Events()
	if len(events) != 2 {
		t.Fatalf("kept %d events, want 2 (16 for the copy, 21 for both)", len(events))
	}
	if m := l.marks[0]; m.lacks(16, 5000) || !m.lacks(21, 5000) {
		t.Fatal("the order session's mark")
	}
	// The count a start that sends none gives: the order session's own
	// report lacking, not the copies only a drop-copy store lacks.
	if n := l.Lacking(); len(n) != 2 || n[0] != 1 || n[1] != 0 {
		t.Fatalf("lacking by session %v, want [1 0] (21 only)", n)
	}
}
