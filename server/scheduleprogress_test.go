package server

import (
	"bytes"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/fixvenue/fixvenue/schedule"
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

// TestScheduleProgressKeepsTheEndedDay: a follower keeps the time of the
// schedule's last end of day applied, through a Raft snapshot's part (one
// of 8 bytes, from a node that kept none, restores without it), and the
// progress a new leader saves names its trading day; a venue started on it
// with end_of_day moved later does not end that day again. Without it the
// new leader knew only the time of the old one's last command, and ran a
// second end of day the same day.
func TestScheduleProgressKeepsTheEndedDay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir, dayStart := openDay(t, "d1")
	s := tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(9500*time.Millisecond))) // the end of day at 9 s runs
	reopenWithDayOrder(t, s)
	s.Close()

	// The follower's view: the results of the schedule's commands.
	p := followerProgress(t, dir)
	if p.endOfDayNs == 0 {
		t.Fatal("no end of day in the progress")
	}
	var state bytes.Buffer
	if err := p.WriteState(&state); err != nil {
		t.Fatal(err)
	}
	older := state.Bytes()[:8]
	var q scheduleProgress
	if err := q.Restore(bytes.NewReader(state.Bytes())); err != nil || q != p {
		t.Fatalf("restored %+v, %v; want %+v", q, err, p)
	}
	if err := q.Restore(bytes.NewReader(older)); err != nil || q.lastNs != p.lastNs || q.endOfDayNs != 0 {
		t.Fatalf("restored from 8 bytes %+v, %v", q, err)
	}

	cfg := tradingDayVenueConfig(t, dir)
	cfg.Journal.SegmentBytes = 16384
	cfg.Schedule.EndOfDay.Duration = 11 * time.Second
	if err := p.save(dir, schedule.New(cfg.Schedule)); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, cfg, Options{Now: stoppedClock(dayStart.Add(11500 * time.Millisecond))})
	if acme := instrumentsOf(t, s)["ACME"]; acme.RestingOrders != 1 || acme.BidQty != 5 {
		t.Fatalf("the day's end of day ran again on the progress a follower saved: ACME %+v", acme)
	}
	s.Close()
	wantOneEndOfDay(t, dir)
}
