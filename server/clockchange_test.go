package server

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/ops"
)

// clockChangeVenue starts a venue whose schedule (its [schedule] table,
// group "all" over every instrument) reads clock, started at start in
// the schedule's zone, and waits until it serves. The days are in 2099, on
// which the wall clock's GTD checks find no date in the past.
func clockChangeVenue(t *testing.T, sched string, clock *atomic.Int64, start time.Time) *Server {
	t.Helper()
	clock.Store(start.UnixNano())
	cfg := testConfig(t, t.TempDir(), adminConfig()+sched)
	s := startServer(t, cfg, Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	waitReady(t, s)
	return s
}

// wantNextTransition checks the next transition GET /v1/status names,
// waiting for it: the status follows the schedule's record, written once a
// transition's commands are applied, so an instrument's new status may be
// read just before it.
func wantNextTransition(t *testing.T, s *Server, want string) {
	t.Helper()
	waitUntil(t, "GET /v1/status naming the next transition "+want, func() bool {
		var st ops.StatusInfo
		return adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st) == 200 && st.NextTransition == want
	})
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	return loc
}

// TestScheduleInTheSkippedHour: in New York on the day clocks go forward
// (02:00 EST is 03:00 EDT), a pre-open at 02:30 runs at 03:00 EDT, the
// first instant after the skipped hour. It ran at 01:30 EST, before the
// hour it was set in: a venue at 01:45 EST was in its opening call, and
// named the open as its next transition.
func TestScheduleInTheSkippedHour(t *testing.T) {
	t.Parallel()
	ny := mustZone(t, "America/New_York")
	var clock atomic.Int64
	s := clockChangeVenue(t, `
[schedule]
enabled = true
time_zone = "America/New_York"
trading_days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
end_of_day = "17h"
[[schedule.group]]
name = "all"
pre_open = "2h30m"
open = "3h30m"
close = "16h"
`, &clock, time.Date(2099, 3, 8, 1, 45, 0, 0, ny))
	if st := instrumentsOf(t, s)["ACME"].Status; st != "Closed" {
		t.Fatalf("at 01:45 EST ACME is %s, want Closed until the pre-open", st)
	}
	wantNextTransition(t, s, `2099-03-08 pre_open group "all" at 2099-03-08T03:00:00-04:00`)
	clock.Store(time.Date(2099, 3, 8, 7, 0, 0, 0, time.UTC).UnixNano()) // 03:00 EDT
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
	wantNextTransition(t, s, `2099-03-08 open group "all" at 2099-03-08T03:30:00-04:00`)
}

// TestScheduleInTheRepeatedHour: in Berlin on the day clocks go back
// (03:00 CEST is 02:00 CET), a close at 02:25 and an end of day at 02:30
// run at their first occurrence, in summer time, and a GTD order good for
// that date (ExpireDate 432) expires with that end of day. They ran an
// hour later, at the second occurrence, the order's ExpireTime (126) with
// them.
func TestScheduleInTheRepeatedHour(t *testing.T) {
	t.Parallel()
	berlin := mustZone(t, "Europe/Berlin")
	var clock atomic.Int64
	s := clockChangeVenue(t, `
[schedule]
enabled = true
time_zone = "Europe/Berlin"
trading_days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
end_of_day = "2h30m"
[[schedule.group]]
name = "all"
pre_open = "1h"
open = "1h30m"
close = "2h25m"
`, &clock, time.Date(2099, 10, 25, 0, 20, 0, 0, time.UTC)) // 02:20 CEST, the first
	if st := instrumentsOf(t, s)["ACME"].Status; st != "Open" {
		t.Fatalf("at 02:20 CEST ACME is %s, want Open", st)
	}
	wantNextTransition(t, s, `2099-10-25 close group "all" at 2099-10-25T02:25:00+02:00`)
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "gtd", side: "1", qty: "1", px: "97.00", tif: "6", extra: []fixclient.Field{fixclient.F(432, "20991025")}})
	expectER(t, c, map[int]string{11: "gtd", 150: "0", 126: "20991025-00:29:59.999"})
	clock.Store(time.Date(2099, 10, 25, 2, 31, 0, 0, berlin).Add(-time.Hour).UnixNano()) // 02:31 CEST
	waitStatus(t, s, "ACME", "Closed", readWait)
	eod := waitEndOfDay(t, s, 0, readWait)
	if want := time.Date(2099, 10, 25, 0, 30, 0, 0, time.UTC).UnixNano(); eod.CommandUnixNs != want {
		t.Errorf("end of day at %s, want 02:30 CEST", time.Unix(0, eod.CommandUnixNs).In(berlin))
	}
	expectER(t, c, map[int]string{11: "gtd", 150: "C"})
	wantNextTransition(t, s, `2099-10-26 pre_open group "all" at 2099-10-26T01:00:00+01:00`)
}

// TestAnEndOfDayInTheHourSkippedBeforeMidnight: in Nuuk clocks go forward
// at 23:00 on the last Saturday of March (23:00 -02 is 00:00 -01), so
// Saturday's close at 23:00 and end of day at 23:30 run at Sunday's first
// instants. After the close the schedule looked for its next transition
// from the day holding the close's time, Sunday, and went on with
// Sunday's pre-open: Saturday's end of day never ran, and its DAY orders
// traded on through Sunday.
func TestAnEndOfDayInTheHourSkippedBeforeMidnight(t *testing.T) {
	t.Parallel()
	nuuk := mustZone(t, "America/Nuuk")
	var clock atomic.Int64
	s := clockChangeVenue(t, `
[schedule]
enabled = true
time_zone = "America/Nuuk"
trading_days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
end_of_day = "23h30m"
[[schedule.group]]
name = "all"
pre_open = "1h"
open = "2h30m"
close = "23h"
`, &clock, time.Date(2099, 3, 28, 22, 0, 0, 0, nuuk))
	if st := instrumentsOf(t, s)["ACME"].Status; st != "Open" {
		t.Fatalf("at 22:00 on Saturday ACME is %s, want Open", st)
	}
	wantNextTransition(t, s, `2099-03-28 close group "all" at 2099-03-29T00:00:00-01:00`)
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "day", side: "1", qty: "1", px: "97.00"})
	expectER(t, c, map[int]string{11: "day", 150: "0"})
	clock.Store(time.Date(2099, 3, 29, 0, 0, 0, 0, nuuk).UnixNano()) // the close's instant, not yet the end of day's
	waitStatus(t, s, "ACME", "Closed", readWait)
	wantNextTransition(t, s, `2099-03-28 end_of_day at 2099-03-29T00:00:00.000000001-01:00`)
	clock.Store(time.Date(2099, 3, 29, 0, 0, 1, 0, nuuk).UnixNano())
	expectER(t, c, map[int]string{11: "day", 150: "C"})
	wantNextTransition(t, s, `2099-03-29 pre_open group "all" at 2099-03-29T01:00:00-01:00`)
}

// TestScheduleOverASkippedMidnight: in Santiago clocks go forward at
// Saturday's midnight (00:00 is 01:00). A venue trading Monday to Friday
// names Monday's pre-open as its next transition after Friday's end of
// day and runs it. The skipped midnight made Sunday start at 23:00 on
// Saturday and named it Saturday, and the day after it started at that same
// instant: the schedule found no trading day within a year and stayed
// idle, the venue closed for good.
func TestScheduleOverASkippedMidnight(t *testing.T) {
	t.Parallel()
	santiago := mustZone(t, "America/Santiago")
	var clock atomic.Int64
	s := clockChangeVenue(t, `
[schedule]
enabled = true
time_zone = "America/Santiago"
end_of_day = "17h30m"
[[schedule.group]]
name = "all"
pre_open = "9h"
open = "9h30m"
close = "17h"
`, &clock, time.Date(2099, 9, 4, 18, 0, 0, 0, santiago)) // Friday
	wantNextTransition(t, s, `2099-09-07 pre_open group "all" at 2099-09-07T09:00:00-03:00`)
	clock.Store(time.Date(2099, 9, 7, 9, 0, 0, 0, santiago).UnixNano())
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
}

// TestRestartOverAClockChangeAndAHoliday: a venue in Paris stopped on
// Friday while open and started again on Tuesday, past the weekend on
// which clocks went forward and Monday's holiday, runs what it missed at
// their times: Friday's close and end of day in winter time (its DAY
// order expired, the day ended once), then Tuesday's pre-open and open in
// summer time, and names Tuesday's close at 17:30 CEST next.
func TestRestartOverAClockChangeAndAHoliday(t *testing.T) {
	t.Parallel()
	paris := mustZone(t, "Europe/Paris")
	dir := t.TempDir()
	cfg := testConfig(t, dir, adminConfig()+fmt.Sprintf(calendarDaySchedule, `"2099-03-30"`)+"[session_defaults]\ncancel_on_disconnect = false\n")
	s := startServer(t, cfg, Options{Now: stoppedClock(time.Date(2099, 3, 27, 10, 0, 0, 0, paris))}) // Friday
	waitStatus(t, s, "ACME", "Open", readWait)
	restDayOrder(t, s, "friday")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = startServer(t, cfg, Options{Now: stoppedClock(time.Date(2099, 3, 31, 10, 0, 0, 0, paris))}) // Tuesday
	waitReady(t, s)
	if acme := instrumentsOf(t, s)["ACME"]; acme.Status != "Open" || acme.RestingOrders != 0 {
		t.Fatalf("on Tuesday ACME is %+v; want it open, Friday's DAY order expired", acme)
	}
	var st ops.StatusInfo
	adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st)
	if e := st.LastEndOfDay; e == nil || e.CommandUnixNs != time.Date(2099, 3, 27, 17, 0, 0, 0, time.UTC).UnixNano() {
		t.Fatalf("last end of day %+v; want Friday's at 18:00 CET", e)
	}
	wantNextTransition(t, s, `2099-03-31 close group "all" at 2099-03-31T17:30:00+02:00`)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wantOneEndOfDay(t, dir)
}
