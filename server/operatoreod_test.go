package server

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/fixvenue/fixvenue/schedule"
)

// TestOperatorEndOfDayIsTheDays: an operator ends the trading day (POST
// /v1/eod) in the open, and CLIENT1 rests a DAY order after it. The day's
// scheduled end of day does not run a second one, whether the venue is up
// at its time, restarts past it, or a cluster's new leader starts past it
// on the progress its follower kept: the DAY order rests on and the journal
// holds one end of day. A second end of day expired the DAY orders entered
// since the first (the matcher keeps no trading date: every end of day
// expires what is DAY-limited, forgets the ClOrdIDs and starts the risk
// day and the console's day again).
func TestOperatorEndOfDayIsTheDays(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	for _, how := range []string{"up", "restart", "failover"} {
		t.Run(how, func(t *testing.T) { operatorEndsTheDay(t, how) })
	}
}

func operatorEndsTheDay(t *testing.T, how string) {
	dir := t.TempDir()
	dayStart := time.Now().Truncate(compressedDayLength)
	var clock atomic.Int64
	clock.Store(dayStart.Add(5 * time.Second).UnixNano())
	// Started again on its record with nothing missed: the operator's end
	// of day is the first thing it records.
	tradingDayVenueAt(t, dir, func() time.Time { return time.Unix(0, clock.Load()) }).Close()
	s := tradingDayVenueAt(t, dir, func() time.Time { return time.Unix(0, clock.Load()) })
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"closing early"}`, nil); code != 200 {
		t.Fatalf("end of day: %d", code)
	}
	restDayOrder(t, s, "after")
	// A second one the same trading day is refused: it would expire the
	// order just entered and forget the day's ClOrdIDs again.
	var e struct{ Code, Error string }
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"again"}`, &e); code != 409 || e.Code != "day_ended" {
		t.Fatalf("a second end of day the same trading day: %d %+v, want 409 day_ended", code, e)
	}
	pastEndOfDay := dayStart.Add(9500 * time.Millisecond)
	var atRestart func()
	if how == "failover" {
		atRestart = func() {
			p := followerProgress(t, dir, s.cfg)
			if err := p.save(dir, s.cfg.Schedule); err != nil {
				t.Fatal(err)
			}
		}
	}
	passEndOfDayWantOne(t, s, dir, &clock, pastEndOfDay, how, atRestart)
}

// passEndOfDayWantOne takes the trading day past its end of day's time
// with the venue s up (how "up": the schedule's end of day comes) or
// restarted past it (atRestart, if any, runs first on the stopped venue's
// directory), then checks that CLIENT1's DAY order, rested after the
// operator's end of day, rests on and that the journal holds one end of
// day.
func passEndOfDayWantOne(t *testing.T, s *Server, dir string, clock *atomic.Int64, pastEndOfDay time.Time, how string, atRestart func()) {
	t.Helper()
	if how == "up" {
		clock.Store(pastEndOfDay.UnixNano())
		waitUntil(t, "the end of day's transition recorded", func() bool {
			_, record := scheduleRecord(t, dir)
			return strings.Contains(string(record), schedule.EndOfDay.String())
		})
	} else {
		s.Close()
		if atRestart != nil {
			atRestart()
		}
		s = tradingDayVenueAt(t, dir, stoppedClock(pastEndOfDay))
	}
	if acme := instrumentsOf(t, s)["ACME"]; acme.RestingOrders != 1 || acme.BidQty != 5 {
		t.Fatalf("the scheduled end of day ran after the operator's: ACME %+v", acme)
	}
	s.Close()
	wantOneEndOfDay(t, dir)
}

// followerProgress is the schedule's progress a cluster's follower of
// configuration cfg keeps from the operator commands in dir's journal and
// their results.
func followerProgress(t *testing.T, dir string, cfg *config.Config) *scheduleProgress {
	t.Helper()
	p := newScheduleProgress(cfg)
	for rec, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		p.Command(rec.Payload)
		if cmd, ok := venue.DecodeOperatorCommand(rec.Payload); ok {
			buf := make([]byte, venue.OperatorResultEncodedLength)
			var r venue.OperatorResult
			if err := r.WrapEncode(buf, 0); err != nil {
				t.Fatal(err)
			}
			r.SetTimestampNs(cmd.TimestampNs())
			r.SetCauseSeq(cmd.Seq())
			r.SetAction(cmd.Action())
			if err := r.SetOperator(cmd.Operator()); err != nil {
				t.Fatal(err)
			}
			if err := p.Event(buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	return p
}

// TestOperatorEndOfDayBeforeTheDayBegins: a day whose transitions come late
// in it (pre-open at 5 s of 12, end of day at 8 s). The operator ends the
// previous day after its end of day's time, then calls an end of day again
// early the next day, before its pre-open, nearer that day's end of day
// than the previous one's. It is refused, 409 day_ended (the previous day
// ended already), and the day then opens. It ended the day that had not
// begun, whose transitions were then passed over: the venue stayed closed
// all day.
func TestOperatorEndOfDayBeforeTheDayBegins(t *testing.T) {
	dir := t.TempDir()
	dayStart := time.Now().Truncate(compressedDayLength)
	var clock atomic.Int64
	clock.Store(dayStart.Add(-3500 * time.Millisecond).UnixNano()) // the previous day, past its end of day at 8 s
	cfg := testConfig(t, dir, adminConfig()+`
[schedule]
enabled = true
time_zone = "Europe/Paris"
day = "12s"
end_of_day = "8s"
[[schedule.group]]
name = "all"
pre_open = "5s"
open = "6s"
close = "7s"
`)
	s := startServer(t, cfg, Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	waitReady(t, s)
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"the day's end of day"}`, nil); code != 200 {
		t.Fatalf("the previous day's end of day: %d", code)
	}
	clock.Store(dayStart.Add(2500 * time.Millisecond).UnixNano()) // before the day's pre-open
	var e struct{ Code, Error string }
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"again, early"}`, &e); code != 409 || e.Code != "day_ended" {
		t.Fatalf("an end of day before the day's pre-open: %d %+v, want 409 day_ended (the previous day's ended)", code, e)
	}
	clock.Store(dayStart.Add(5500 * time.Millisecond).UnixNano())
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
}
