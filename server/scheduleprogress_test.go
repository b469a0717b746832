package server

import (
	"bytes"
	"testing"

	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestScheduleProgressFollowsTheScheduleCommands: only the results of
// commands the schedule journaled move the progress, to the latest command
// time; it goes through a Raft snapshot's part.
func TestScheduleProgressFollowsTheScheduleCommands(t *testing.T) {
	result := func(operator string, tsNs int64, reason venue.RejectReason) []byte {
		buf := make([]byte, venue.OperatorResultEncodedLength)
		var r venue.OperatorResult
		if err := r.WrapEncode(buf, 0); err != nil {
			t.Fatal(err)
		}
		r.SetTimestampNs(tsNs)
		r.SetReason(reason)
		if err := r.SetOperator([]byte(operator)); err != nil {
			t.Fatal(err)
		}
		return buf
	}
	var p scheduleProgress
	for _, ev := range [][]byte{
		result(ops.OperatorSchedule, 100, venue.RejectReasonNone),
		result(ops.OperatorSchedule, 300, venue.RejectReasonInvalidTransition), // ran, refused: still the schedule's
		result("alice", 500, venue.RejectReasonNone),                           // an operator's
		result(ops.OperatorSchedule, 200, venue.RejectReasonNone),
		{1, 2, 3},
	} {
		if err := p.Event(ev); err != nil {
			t.Fatal(err)
		}
	}
	if p.lastNs != 300 {
		t.Fatalf("progress %d, want 300", p.lastNs)
	}
	var state bytes.Buffer
	if err := p.WriteState(&state); err != nil {
		t.Fatal(err)
	}
	var q scheduleProgress
	if err := q.Restore(&state); err != nil || q.lastNs != 300 {
		t.Fatalf("restored %d, %v", q.lastNs, err)
	}
	if err := q.Restore(bytes.NewReader([]byte{1})); err == nil {
		t.Fatal("a short state restored")
	}
}
