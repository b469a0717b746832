package server

import (
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/ops"
)

// TestOperatorEndOfDayThatTimesOutIsTheDays: an operator's end of day
// (POST /v1/eod) in the open is held by the journal's sync past the call's
// timeout: the call answers 504 timeout, and the matcher applies the
// command once the journal has it. That end of day is the day's all the
// same, whether the venue is up when the schedule's end of day comes or
// restarts past it having lost its record (a crash between the command's
// durability and the record): a second one sends nothing (504 naming the
// first while the journal holds it back, then 409 day_ended),
// CLIENT1's DAY order entered after it rests on, and the journal holds one
// end of day. The record was written only by a call answered done, and
// the schedule ran a second end of day, expiring the order.
func TestOperatorEndOfDayThatTimesOutIsTheDays(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	for _, how := range []string{"up", "restart"} {
		t.Run(how, func(t *testing.T) { operatorEndOfDayTimesOut(t, how) })
	}
}

func operatorEndOfDayTimesOut(t *testing.T, how string) {
	dir := t.TempDir()
	dayStart := time.Now().Truncate(compressedDayLength)
	var clock atomic.Int64
	clock.Store(dayStart.Add(5 * time.Second).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	// Started again on its record with nothing missed.
	tradingDayVenueAt(t, dir, now).Close()
	path, before := scheduleRecord(t, dir)
	hold := newSyncHold(t)
	cfg := tradingDayVenueConfig(t, dir)
	// Answered 504 once the command is published and not yet durable.
	cfg.Admin.CallTimeout.Duration = 300 * time.Millisecond
	s := startServer(t, cfg, Options{Now: now, JournalSync: hold.sync})
	t.Cleanup(hold.release) // before the venue's Close, which waits for the journal
	hold.on.Store(true)
	var timedOut struct {
		Code string
		Seq  int64
	}
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"closing early"}`, &timedOut); code != 504 ||
		timedOut.Code != "timeout" || timedOut.Seq == 0 {
		t.Fatalf("an end of day held by the journal's sync: %d %+v, want 504 timeout with its seq", code, timedOut)
	}
	// Another while that one awaits the journal sends nothing: it would
	// end the day a second time once the first is applied.
	var again struct {
		Code string
		Seq  int64
	}
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"again"}`, &again); code != 504 || again.Seq != timedOut.Seq {
		t.Fatalf("an end of day while the one before awaits the journal: %d %+v, want 504 naming seq %d", code, again, timedOut.Seq)
	}
	hold.on.Store(false)
	hold.release()
	waitUntil(t, "the end of day durable", func() bool {
		var st ops.StatusInfo
		adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st)
		return st.DurableSeq >= timedOut.Seq
	})
	var e struct{ Code, Error string }
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"again"}`, &e); code != 409 || e.Code != "day_ended" {
		t.Fatalf("a second end of day the same trading day: %d %+v, want 409 day_ended", code, e)
	}
	restDayOrder(t, s, "after")
	pastEndOfDay := dayStart.Add(9500 * time.Millisecond)
	// Restarted: the record as it was before the end of day, as after a
	// crash once the command was durable, before the record was written.
	passEndOfDayWantOne(t, s, dir, &clock, pastEndOfDay, how, func() {
		if err := os.WriteFile(path, before, 0o644); err != nil {
			t.Fatal(err)
		}
	})
}
