package schedule_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/schedule"
)

func parse(t *testing.T, sched string) (*config.Config, error) {
	t.Helper()
	return config.Parse([]byte(sched), "test.toml")
}

// mustPlan is the plan of a schedule that must parse.
func mustPlan(t *testing.T, sched string) *schedule.Plan {
	t.Helper()
	cfg, err := parse(t, sched)
	if err != nil {
		t.Fatal(err)
	}
	return schedule.New(cfg.Schedule)
}

// compressedDay is a schedule of 4-second days (so many fit in a test),
// its groups to follow.
const compressedDay = `
[schedule]
enabled = true
time_zone = "UTC"
day = "4s"
end_of_day = "3500ms"
`

const london = `
[schedule]
enabled = true
time_zone = "Europe/London"
holidays = ["2026-12-25"]
end_of_day = "17h"
[[schedule.group]]
name = "all"
pre_open = "7h50m"
open = "8h"
close = "16h30m"
`

func TestCalendarDays(t *testing.T) {
	p := mustPlan(t, london)
	loc, _ := time.LoadLocation("Europe/London")
	// Thursday 24 Dec 2026 12:00 to Tuesday 29 Dec 12:00: the 25th is a
	// holiday, the 26th and 27th a weekend, Monday the 28th trades.
	got := p.Between(schedule.Through(time.Date(2026, 12, 24, 12, 0, 0, 0, loc)), time.Date(2026, 12, 29, 12, 0, 0, 0, loc), 100)
	var lines []string
	for _, tr := range got {
		lines = append(lines, tr.Day+" "+tr.Kind.String()+" "+tr.At.In(loc).Format("15:04"))
	}
	want := []string{"2026-12-24 close 16:30", "2026-12-24 end_of_day 17:00",
		"2026-12-28 pre_open 07:50", "2026-12-28 open 08:00", "2026-12-28 close 16:30", "2026-12-28 end_of_day 17:00",
		"2026-12-29 pre_open 07:50", "2026-12-29 open 08:00"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("transitions:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// Only the last ones when many were missed.
	if last := p.Between(schedule.Through(time.Date(2026, 12, 24, 12, 0, 0, 0, loc)), time.Date(2026, 12, 29, 12, 0, 0, 0, loc), 3); len(last) != 3 || last[2].Kind != schedule.Open {
		t.Fatalf("bounded: %v", last)
	}
	// Wall clock across the change to summer time (29 March 2026): 08:00 local is 07:00 UTC.
	next, ok := p.Next(schedule.Through(time.Date(2026, 3, 30, 7, 55, 0, 0, loc)))
	if !ok || next.Kind != schedule.Open || next.At.UTC().Hour() != 7 {
		t.Fatalf("next after summer time starts: %v", next)
	}
	// Friday evening: the next transition is Monday's pre-open.
	next, _ = p.Next(schedule.Through(time.Date(2026, 12, 4, 18, 0, 0, 0, loc)))
	if next.Day != "2026-12-07" || next.Kind != schedule.PreOpen {
		t.Fatalf("next after Friday: %v", next)
	}
	for _, c := range []struct {
		at   time.Time
		kind schedule.Kind
		ok   bool
	}{
		{time.Date(2026, 12, 1, 7, 0, 0, 0, loc), 0, false},
		{time.Date(2026, 12, 1, 7, 55, 0, 0, loc), schedule.PreOpen, true},
		{time.Date(2026, 12, 1, 12, 0, 0, 0, loc), schedule.Open, true},
		{time.Date(2026, 12, 1, 18, 0, 0, 0, loc), schedule.Close, true},
		{time.Date(2026, 12, 5, 12, 0, 0, 0, loc), 0, false}, // Saturday
	} {
		if kind, ok := p.PhaseAt(c.at, 0); kind != c.kind || ok != c.ok {
			t.Errorf("phase at %s: %s %v, want %s %v", c.at, kind, ok, c.kind, c.ok)
		}
	}
}

func TestCompressedDays(t *testing.T) {
	p := mustPlan(t, compressedDay+`
[[schedule.group]]
name = "a"
instruments = ["ACME"]
pre_open = "0s"
open = "1s"
close = "3s"
[[schedule.group]]
name = "rest"
pre_open = "500ms"
open = "1500ms"
close = "2500ms"
`)
	base := time.Unix(400, 0) // a day boundary (400 = 100 × 4 s)
	got := p.Between(schedule.Through(base.Add(-time.Nanosecond)), base.Add(8*time.Second-time.Nanosecond), 100)
	if len(got) != 14 {
		t.Fatalf("%d transitions in two days: %v", len(got), got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].At.Before(got[i-1].At) {
			t.Fatalf("out of order: %v then %v", got[i-1], got[i])
		}
	}
	if got[0].Day != "day-100" || got[0].Kind != schedule.PreOpen || got[0].Group != 0 || got[6].Kind != schedule.EndOfDay || got[7].Day != "day-101" {
		t.Fatalf("transitions: %v", got)
	}
}

// TestBetweenAfterALongStop: a venue down for more days than the plan
// scans still gets the last transitions before now, not those of the
// first days after it stopped (which left the rest to run after the
// catch-up, with FIX open).
func TestBetweenAfterALongStop(t *testing.T) {
	p := mustPlan(t, compressedDay+`
[[schedule.group]]
name = "all"
pre_open = "0s"
open = "1s"
close = "3s"
`)
	stopped := time.Unix(400, 0).Add(1500 * time.Millisecond) // open, day-100
	now := time.Unix(400, 0).Add(1000*4*time.Second + 1500*time.Millisecond)
	got := p.Between(schedule.Through(stopped), now, 64)
	if len(got) != 64 {
		t.Fatalf("%d transitions, want the last 64", len(got))
	}
	if last := got[len(got)-1]; last.Day != "day-1100" || last.Kind != schedule.Open {
		t.Fatalf("the last transition is %v, want day-1100's open", last)
	}
	cal := mustPlan(t, london)
	got = cal.Between(schedule.Through(time.Date(2024, 3, 4, 12, 0, 0, 0, time.UTC)), time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC), 64)
	if last := got[len(got)-1]; last.Day != "2026-03-04" || last.Kind != schedule.Open {
		t.Fatalf("the last transition is %v, want 2026-03-04's open", last)
	}
}

func TestBadSchedulesAreRefusedNamingTheKey(t *testing.T) {
	good := `
[schedule]
enabled = true
time_zone = "UTC"
end_of_day = "17h"
[[schedule.group]]
name = "g"
pre_open = "7h"
open = "8h"
close = "16h"
`
	if _, err := parse(t, good); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`time_zone = "UTC"`, `time_zone = "Mars/Olympus"`, "schedule.time_zone"},
		// time.LoadLocation's name for the process's zone: it follows TZ.
		{`time_zone = "UTC"`, `time_zone = "Local"`, `schedule.time_zone: "Local" is the zone of the process's environment`},
		{`end_of_day = "17h"`, `end_of_day = "15h"`, "schedule.group[0].close"},
		{`open = "8h"`, `open = "6h"`, "phases overlap"},
		{`close = "16h"`, `close = "8h"`, "phases overlap"},
		{`pre_open = "7h"`, `pre_open = "-5s"`, "schedule.group[0].pre_open: -5s is before the start of the day"},
		{`end_of_day = "17h"`, `end_of_day = "25h"`, "schedule.end_of_day"},
		{`name = "g"`, "name = \"g\"\ninstruments = [\"NOPE\"]", `"NOPE" is not a configured instrument`},
		{`time_zone = "UTC"`, "time_zone = \"UTC\"\nholidays = [\"25/12/2026\"]", "schedule.holidays[0]"},
		{`time_zone = "UTC"`, "time_zone = \"UTC\"\ntrading_days = [\"Monday\"]", "schedule.trading_days[0]"},
		{`time_zone = "UTC"`, "time_zone = \"UTC\"\ntrading_days = []", "schedule.trading_days: the list is empty"},
		{`open = "8h"`, `open = "eight"`, "open"},
		// A time of day, as a TOML time or a clock's text, is refused
		// saying how to write it (time's own error spoke of an unknown
		// unit "-" in "0000-01-01T17:30:00Z").
		{`end_of_day = "17h"`, `end_of_day = 17:30:00`, `"0000-01-01T17:30:00Z" is a time, not a duration: write a time of day as its offset from midnight, in quotes ("17h30m")`},
		{`open = "8h"`, `open = "08:00"`, `"08:00" is a time, not a duration`},
		{`close = "16h"`, "closing_call = \"16h\"\nclose = \"16h\"", "schedule.group[0].closing_call"},
		{`close = "16h"`, "closing_call = \"7h30m\"\nclose = \"16h\"", "schedule.group[0].closing_call"},
	} {
		text := strings.Replace(good, c.from, c.to, 1)
		if _, err := parse(t, text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: error %v, want one naming %q", c.from, c.to, err, c.want)
		}
	}
}

// TestClosingCall: a group with a closing call has it between its open and
// its close, and PhaseAt reports it during the call.
func TestClosingCall(t *testing.T) {
	p := mustPlan(t, compressedDay+`
[[schedule.group]]
name = "a"
pre_open = "0s"
open = "1s"
closing_call = "2500ms"
close = "3s"
`)
	base := time.Unix(400, 0)
	got := p.Between(schedule.Through(base.Add(-time.Nanosecond)), base.Add(4*time.Second-time.Nanosecond), 100)
	var kinds []schedule.Kind
	for _, tr := range got {
		kinds = append(kinds, tr.Kind)
	}
	want := []schedule.Kind{schedule.PreOpen, schedule.Open, schedule.ClosingCall, schedule.Close, schedule.EndOfDay}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("transitions %v, want %v", kinds, want)
	}
	if k, ok := p.PhaseAt(base.Add(2700*time.Millisecond), 0); !ok || k != schedule.ClosingCall {
		t.Fatalf("phase at 2.7 s: %v %v, want closing_call", k, ok)
	}
}

// TestTransitionsAtOneInstant: two groups with the same times and a close
// at the end of day. Next from each transition in turn (as the running
// schedule walks) gives every one of them once, in Between's order, and
// Through(t) passes over all those at t.
func TestTransitionsAtOneInstant(t *testing.T) {
	p := mustPlan(t, `
[schedule]
enabled = true
time_zone = "UTC"
day = "4s"
end_of_day = "3s"
[[schedule.group]]
name = "a"
instruments = ["ACME"]
pre_open = "0s"
open = "1s"
close = "3s"
[[schedule.group]]
name = "rest"
pre_open = "0s"
open = "1s"
close = "3s"
`)
	base := time.Unix(400, 0)
	all := p.Between(schedule.Through(base.Add(-time.Nanosecond)), base.Add(4*time.Second-time.Nanosecond), 100)
	var walked []schedule.Transition
	for tr, ok := p.Next(schedule.Through(base.Add(-time.Nanosecond))); ok && tr.At.Before(base.Add(4*time.Second)); tr, ok = p.Next(tr) {
		walked = append(walked, tr)
	}
	if len(all) != 7 || fmt.Sprint(walked) != fmt.Sprint(all) {
		t.Fatalf("walked by Next:\n%v\nBetween:\n%v\nwant 7 (3 per group and the end of day)", walked, all)
	}
	if last := all[6]; last.Kind != schedule.EndOfDay || all[5].Kind != schedule.Close || all[5].Group != 1 {
		t.Fatalf("order at 3 s: %v", all[4:])
	}
	// A restart after the first group's open runs the second's.
	if rest := p.Between(all[2], base.Add(time.Second), 100); len(rest) != 1 || rest[0] != all[3] {
		t.Fatalf("after %v: %v, want %v", all[2], rest, all[3])
	}
	if next, _ := p.Next(schedule.Through(base.Add(time.Second))); !next.At.Equal(base.Add(3 * time.Second)) {
		t.Fatalf("next through 1 s: %v", next)
	}
}

// TestDateEnd: a local market date (an order's ExpireDate) ends at the end
// of day on that date by the zone's wall clock, on a holiday and across a
// clock change too; with compressed days, at the date's midnight.
func TestDateEnd(t *testing.T) {
	p := mustPlan(t, london)
	for _, tc := range []struct {
		day  int
		want string
	}{
		{24, "2026-12-24T17:00:00Z"},
		{25, "2026-12-25T17:00:00Z"}, // a holiday: the order had the day before
	} {
		if got := p.DateEnd(2026, time.December, tc.day).UTC().Format(time.RFC3339); got != tc.want {
			t.Errorf("December %d ends %s, want %s", tc.day, got, tc.want)
		}
	}
	if got := p.DateEnd(2026, time.July, 1).UTC().Format(time.RFC3339); got != "2026-07-01T16:00:00Z" { // BST
		t.Errorf("July 1 ends %s", got)
	}
	c := mustPlan(t, compressedDay+`
[[schedule.group]]
name = "a"
pre_open = "0s"
open = "1s"
close = "3s"
`)
	if got := c.DateEnd(2026, time.December, 31).UTC().Format(time.RFC3339); got != "2027-01-01T00:00:00Z" {
		t.Errorf("compressed days: December 31 ends %s", got)
	}
	// The next date's midnight skipped (Santiago: 00:00 is 01:00): its
	// first instant, not 23:00 the day before.
	santiago := mustPlan(t, strings.Replace(compressedDay, `"UTC"`, `"America/Santiago"`, 1)+`
[[schedule.group]]
name = "a"
pre_open = "0s"
open = "1s"
close = "3s"
`)
	if got := santiago.DateEnd(2099, time.September, 5).UTC().Format(time.RFC3339); got != "2099-09-06T04:00:00Z" {
		t.Errorf("compressed days in Santiago: 5 September 2099 ends %s", got)
	}
}

// TestDayAfter: trading days compare as dates, compressed days by number
// (day-10 after day-9, which text does not give); names of different kinds
// do not compare and count as after.
func TestDayAfter(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"2026-12-04", "2026-12-03", true},
		{"2026-12-04", "2026-12-04", false},
		{"2026-12-03", "2026-12-04", false},
		{"2027-01-02", "2026-12-31", true},
		{"day-10", "day-9", true},
		{"day-9", "day-9", false},
		{"day-9", "day-10", false},
		{"day-9", "2026-12-04", true},
		{"2026-12-04", "day-9", true},
	} {
		if got := schedule.DayAfter(c.a, c.b); got != c.want {
			t.Errorf("DayAfter(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestClockChangeKeepsTheDaysOrder: on the day clocks go forward (Paris,
// 29 March 2026: 02:00 is 03:00), an offset inside the skipped hour runs
// at 03:00, as does any other inside it; the day's transitions still come
// in their configured order, those at 03:00 a nanosecond apart. Had
// they not, the end of day would have run before the close at one
// instant (DAY orders expired, then the close's uncross traded), and an
// order good for the date (DateEnd) expired at a time that was not the
// day's end.
func TestClockChangeKeepsTheDaysOrder(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	everyDay := `
[schedule]
enabled = true
time_zone = "Europe/Paris"
trading_days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
`
	for _, c := range []struct {
		name, sched string
		want        []schedule.Kind
	}{
		{"pre-open in the skipped hour", everyDay + `
end_of_day = "6h"
[[schedule.group]]
name = "all"
pre_open = "2h30m"
open = "3h15m"
closing_call = "3h40m"
close = "5h"
`, []schedule.Kind{schedule.PreOpen, schedule.Open, schedule.ClosingCall, schedule.Close, schedule.EndOfDay}},
		{"open and close in the skipped hour", everyDay + `
end_of_day = "3h10m"
[[schedule.group]]
name = "all"
pre_open = "1h30m"
open = "2h15m"
close = "2h40m"
`, []schedule.Kind{schedule.PreOpen, schedule.Open, schedule.Close, schedule.EndOfDay}},
		{"closing call, close and end of day in the skipped hour", everyDay + `
end_of_day = "2h50m"
[[schedule.group]]
name = "all"
pre_open = "1h"
open = "1h30m"
closing_call = "2h20m"
close = "2h40m"
`, []schedule.Kind{schedule.PreOpen, schedule.Open, schedule.ClosingCall, schedule.Close, schedule.EndOfDay}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustPlan(t, c.sched)
			day := p.Between(schedule.Through(time.Date(2026, 3, 28, 23, 0, 0, 0, paris)), time.Date(2026, 3, 29, 23, 0, 0, 0, paris), 100)
			var kinds []schedule.Kind
			for i, tr := range day {
				kinds = append(kinds, tr.Kind)
				if i > 0 && tr.At.Before(day[i-1].At) {
					t.Errorf("%s before %s", tr, day[i-1])
				}
			}
			if fmt.Sprint(kinds) != fmt.Sprint(c.want) {
				t.Fatalf("transitions %v, want %v:\n%v", kinds, c.want, day)
			}
			for _, tr := range day {
				if kind, _ := p.PhaseAt(tr.At, 0); tr.Kind != schedule.EndOfDay && kind != tr.Kind {
					t.Errorf("phase at %s: %s, want %s", tr, kind, tr.Kind)
				}
			}
			if end, eod := p.DateEnd(2026, time.March, 29), day[len(day)-1]; !end.Equal(eod.At) {
				t.Errorf("DateEnd %s, want the end of day's %s", end.In(paris), eod)
			}
			// DateEnd runs on an order's path (an ExpireDate).
			if n := testing.AllocsPerRun(100, func() { p.DateEnd(2026, time.March, 29) }); n != 0 {
				t.Errorf("DateEnd allocates %v times", n)
			}
		})
	}
}

// TestUnended: a day that began and no longer trades (here Christmas Eve,
// made a holiday after its open) ends with each group's close and the end
// of day, at its end of day once that has come, else at the time given; a
// day that trades, one whose end of day ran, and a position of no
// transition give nothing.
func TestUnended(t *testing.T) {
	loc, _ := time.LoadLocation("Europe/London")
	before := mustPlan(t, london)
	open := before.Between(schedule.Through(time.Date(2026, 12, 24, 7, 0, 0, 0, loc)), time.Date(2026, 12, 24, 9, 0, 0, 0, loc), 10)
	if len(open) != 2 || open[1].Kind != schedule.Open {
		t.Fatalf("the 24th's morning: %v", open)
	}
	last := open[1]
	p := mustPlan(t, strings.Replace(london, `holidays = ["2026-12-25"]`, `holidays = ["2026-12-24", "2026-12-25"]`, 1))
	for _, c := range []struct {
		until time.Time
		want  string
	}{
		{time.Date(2026, 12, 24, 10, 0, 0, 0, loc), "10:00"},
		{time.Date(2026, 12, 29, 10, 0, 0, 0, loc), "17:00"},
	} {
		got := p.Unended(last, c.until)
		if len(got) != 2 || got[0].Kind != schedule.Close || got[1].Kind != schedule.EndOfDay || got[1].Day != "2026-12-24" ||
			got[0].At.In(loc).Format("15:04") != c.want || !got[1].At.Equal(got[0].At) || !got[0].After(last) {
			t.Errorf("until %s: %v, want the close and the end of day of the 24th at %s", c.until, got, c.want)
		}
	}
	if got := before.Unended(last, time.Date(2026, 12, 24, 10, 0, 0, 0, loc)); got != nil {
		t.Errorf("a day that trades: %v", got)
	}
	if got := p.Unended(schedule.Through(last.At), time.Date(2026, 12, 24, 10, 0, 0, 0, loc)); got != nil {
		t.Errorf("a position of no transition: %v", got)
	}
	eod := before.Between(last, time.Date(2026, 12, 24, 18, 0, 0, 0, loc), 10)
	if got := p.Unended(eod[len(eod)-1], time.Date(2026, 12, 24, 18, 0, 0, 0, loc)); got != nil {
		t.Errorf("a day whose end of day ran: %v", got)
	}
}

// TestEndedBy: the day an end of day journaled at a time ended is the one
// of the last transition at or before it: a late command's day (stamped
// past midnight), the day of one run at an end_of_day since moved later,
// the last trading day across a weekend, and the day before one whose
// first transition has not come (its end of day nearer: that day ended,
// the venue stayed closed all day).
func TestEndedBy(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	late := mustPlan(t, `
[schedule]
enabled = true
time_zone = "Europe/Paris"
end_of_day = "23h59m59s"
[[schedule.group]]
name = "all"
pre_open = "8h"
open = "9h"
close = "17h30m"
`)
	moved := mustPlan(t, strings.Replace(london, `end_of_day = "17h"`, `end_of_day = "18h"`, 1))
	londonTZ, _ := time.LoadLocation("Europe/London")
	for _, c := range []struct {
		p    *schedule.Plan
		at   time.Time
		want string
	}{
		{late, time.Date(2026, 12, 2, 23, 59, 59, 0, paris), "2026-12-02"},
		{late, time.Date(2026, 12, 3, 0, 0, 0, 100_000_000, paris), "2026-12-02"}, // stamped past midnight
		{moved, time.Date(2026, 12, 2, 17, 0, 0, 0, londonTZ), "2026-12-02"},      // at 17:00, now configured 18:00
		{moved, time.Date(2026, 12, 5, 12, 0, 0, 0, londonTZ), "2026-12-04"},      // a Saturday: Friday's
		{moved, time.Date(2026, 12, 7, 6, 0, 0, 0, londonTZ), "2026-12-04"},       // Monday before its pre-open: Friday's
		{moved, time.Date(2026, 12, 3, 7, 49, 0, 0, londonTZ), "2026-12-02"},      // before the pre-open at 7:50
		{moved, time.Date(2026, 12, 3, 7, 50, 0, 0, londonTZ), "2026-12-03"},      // at it
		{moved, time.Date(2026, 12, 3, 12, 0, 0, 0, londonTZ), "2026-12-03"},      // an end of day before its time
	} {
		if got, ok := c.p.EndedBy(c.at); !ok || got != c.want {
			t.Errorf("EndedBy(%s) = %q %v, want %q", c.at, got, ok, c.want)
		}
	}
}

// TestTransitionOfADay: a transition named by its day, kind and group is
// placed at its time, the day's own as Between gives it, on a day that
// does not trade too (a holiday: Unended ends it); a day name of the other
// kind of day, a malformed one, or a kind the group does not have is not.
func TestTransitionOfADay(t *testing.T) {
	p := mustPlan(t, london)
	loc, _ := time.LoadLocation("Europe/London")
	for _, want := range p.Between(schedule.Through(time.Date(2026, 12, 23, 12, 0, 0, 0, loc)), time.Date(2026, 12, 24, 18, 0, 0, 0, loc), 100) {
		got, ok := p.Transition(want.Day, want.Kind, want.Group)
		if !ok || !got.At.Equal(want.At) || got != (schedule.Transition{At: got.At, Day: want.Day, Kind: want.Kind, Group: want.Group}) {
			t.Fatalf("Transition(%s, %s, %d) = %v, %v; want %v", want.Day, want.Kind, want.Group, got, ok, want)
		}
	}
	if got, ok := p.Transition("2026-12-25", schedule.Open, 0); !ok || !got.At.Equal(time.Date(2026, 12, 25, 8, 0, 0, 0, loc)) {
		t.Fatalf("the holiday's open: %v, %v", got, ok)
	}
	for _, bad := range []string{"day-5", "2026-12-32", "2026-12-24x", ""} {
		if got, ok := p.Transition(bad, schedule.Open, 0); ok {
			t.Fatalf("Transition(%q) = %v", bad, got)
		}
	}
	if got, ok := p.Transition("2026-12-24", schedule.ClosingCall, 0); ok {
		t.Fatalf("a closing call the group does not have: %v", got)
	}
	c := mustPlan(t, compressedDay+"[[schedule.group]]\nname = \"all\"\npre_open = \"1s\"\nopen = \"2s\"\nclose = \"3s\"\n")
	if got, ok := c.Transition("day-7", schedule.EndOfDay, -1); !ok || got.At.UnixNano() != 7*4e9+35e8 {
		t.Fatalf("day-7's end of day: %v, %v", got, ok)
	}
	for _, bad := range []string{"2026-12-24", "day-7x", "day-"} {
		if got, ok := c.Transition(bad, schedule.Open, 0); ok {
			t.Fatalf("compressed Transition(%q) = %v", bad, got)
		}
	}
}

// TestDayInProgress: an operator's phase change counts in the trading day
// holding its time until that day's end of day: from its start (before
// the pre-open) to just before 17:00; not after the end of day, on a
// holiday or a weekend. Compressed days alike.
func TestDayInProgress(t *testing.T) {
	p := mustPlan(t, london)
	loc, _ := time.LoadLocation("Europe/London")
	for _, c := range []struct {
		at   time.Time
		want string // "": none
	}{
		{time.Date(2026, 12, 24, 0, 0, 0, 0, loc), "2026-12-24"},
		{time.Date(2026, 12, 24, 6, 0, 0, 0, loc), "2026-12-24"},
		{time.Date(2026, 12, 24, 10, 0, 0, 0, loc), "2026-12-24"},
		{time.Date(2026, 12, 24, 16, 59, 59, 0, loc), "2026-12-24"},
		{time.Date(2026, 12, 24, 17, 0, 0, 0, loc), ""},
		{time.Date(2026, 12, 24, 23, 0, 0, 0, loc), ""},
		{time.Date(2026, 12, 25, 10, 0, 0, 0, loc), ""}, // a holiday
		{time.Date(2026, 12, 26, 10, 0, 0, 0, loc), ""}, // a Saturday
		{time.Date(2026, 12, 28, 10, 0, 0, 0, loc), "2026-12-28"},
	} {
		day, ok := p.DayInProgress(c.at)
		if ok != (c.want != "") || ok && day != c.want {
			t.Errorf("at %s: %q %v, want %q", c.at.Format(time.RFC3339), day, ok, c.want)
		}
	}
	q := mustPlan(t, compressedDay+"[[schedule.group]]\nname = \"g\"\npre_open = \"1s\"\nopen = \"2s\"\nclose = \"3s\"\n")
	for _, c := range []struct {
		at   time.Duration
		want string
	}{{0, "day-5"}, {2500 * time.Millisecond, "day-5"}, {3500 * time.Millisecond, ""}, {3999 * time.Millisecond, ""}} {
		day, ok := q.DayInProgress(time.Unix(0, int64(5*4*time.Second+c.at)))
		if ok != (c.want != "") || ok && day != c.want {
			t.Errorf("compressed, at %s into day 5: %q %v, want %q", c.at, day, ok, c.want)
		}
	}
}

// zoneDay is a schedule in zone trading every day of the week, with one
// group, "all", at the times given.
func zoneDay(zone, endOfDay, preOpen, open, close string) string {
	return fmt.Sprintf(`
[schedule]
enabled = true
time_zone = %q
trading_days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
end_of_day = %q
[[schedule.group]]
name = "all"
pre_open = %q
open = %q
close = %q
`, zone, endOfDay, preOpen, open, close)
}

// TestClockChangeDaysInEveryZone: a time the day's clock change skips
// runs at the first instant after the skipped hour, and one it repeats
// at its first occurrence, east and west of UTC alike (time.Date took a
// skipped 02:30 in New York back to 01:30 EST, before the 01:45 it was to
// follow, and a repeated one in Berlin at its second occurrence); a day
// whose midnight is skipped (Santiago, Havana) starts at its 01:00 and is
// named for itself, and the days after it come (its start was 23:00 the
// day before: the day was named for the day before, and the next day's
// start was that same instant, so the schedule never got past it). Tokyo
// has no clock change: a day from 00:00 to an end of day a second before
// midnight.
func TestClockChangeDaysInEveryZone(t *testing.T) {
	for _, c := range []struct {
		name, sched string
		from, to    string // local dates: the transitions from the first's start to the second's end
		want        []string
	}{
		{"Berlin, clocks go forward at 02:00", zoneDay("Europe/Berlin", "4h", "1h45m", "2h30m", "3h15m"), "2026-03-29", "2026-03-29", []string{
			"2026-03-29 pre_open 01:45:00+01:00", "2026-03-29 open 03:00:00+02:00",
			"2026-03-29 close 03:15:00+02:00", "2026-03-29 end_of_day 04:00:00+02:00"}},
		{"New York, clocks go forward at 02:00", zoneDay("America/New_York", "4h", "1h45m", "2h30m", "3h15m"), "2026-03-08", "2026-03-08", []string{
			"2026-03-08 pre_open 01:45:00-05:00", "2026-03-08 open 03:00:00-04:00",
			"2026-03-08 close 03:15:00-04:00", "2026-03-08 end_of_day 04:00:00-04:00"}},
		{"two times in the skipped hour keep their order", zoneDay("America/New_York", "4h", "2h10m", "2h20m", "3h15m"), "2026-03-08", "2026-03-08", []string{
			"2026-03-08 pre_open 03:00:00-04:00", "2026-03-08 open 03:00:00.000000001-04:00",
			"2026-03-08 close 03:15:00-04:00", "2026-03-08 end_of_day 04:00:00-04:00"}},
		{"Berlin, clocks go back at 03:00", zoneDay("Europe/Berlin", "3h", "1h45m", "2h30m", "2h45m"), "2026-10-25", "2026-10-25", []string{
			"2026-10-25 pre_open 01:45:00+02:00", "2026-10-25 open 02:30:00+02:00",
			"2026-10-25 close 02:45:00+02:00", "2026-10-25 end_of_day 03:00:00+01:00"}},
		{"New York, clocks go back at 02:00", zoneDay("America/New_York", "2h", "45m", "1h30m", "1h45m"), "2026-11-01", "2026-11-01", []string{
			"2026-11-01 pre_open 00:45:00-04:00", "2026-11-01 open 01:30:00-04:00",
			"2026-11-01 close 01:45:00-04:00", "2026-11-01 end_of_day 02:00:00-05:00"}},
		{"Santiago, midnight skipped", zoneDay("America/Santiago", "23h", "0s", "30m", "22h"), "2026-09-06", "2026-09-07", []string{
			"2026-09-06 pre_open 01:00:00-03:00", "2026-09-06 open 01:00:00.000000001-03:00",
			"2026-09-06 close 22:00:00-03:00", "2026-09-06 end_of_day 23:00:00-03:00",
			"2026-09-07 pre_open 00:00:00-03:00", "2026-09-07 open 00:30:00-03:00",
			"2026-09-07 close 22:00:00-03:00", "2026-09-07 end_of_day 23:00:00-03:00"}},
		{"Havana, midnight skipped", zoneDay("America/Havana", "23h", "9h", "9h30m", "16h"), "2026-03-08", "2026-03-09", []string{
			"2026-03-08 pre_open 09:00:00-04:00", "2026-03-08 open 09:30:00-04:00",
			"2026-03-08 close 16:00:00-04:00", "2026-03-08 end_of_day 23:00:00-04:00",
			"2026-03-09 pre_open 09:00:00-04:00", "2026-03-09 open 09:30:00-04:00",
			"2026-03-09 close 16:00:00-04:00", "2026-03-09 end_of_day 23:00:00-04:00"}},
		{"Tokyo, an end of day a second before midnight", zoneDay("Asia/Tokyo", "23h59m59s", "0s", "9h", "15h30m"), "2026-03-08", "2026-03-09", []string{
			"2026-03-08 pre_open 00:00:00+09:00", "2026-03-08 open 09:00:00+09:00",
			"2026-03-08 close 15:30:00+09:00", "2026-03-08 end_of_day 23:59:59+09:00",
			"2026-03-09 pre_open 00:00:00+09:00", "2026-03-09 open 09:00:00+09:00",
			"2026-03-09 close 15:30:00+09:00", "2026-03-09 end_of_day 23:59:59+09:00"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parse(t, c.sched)
			if err != nil {
				t.Fatal(err)
			}
			p, loc := schedule.New(cfg.Schedule), cfg.Schedule.Location()
			from, _ := time.Parse(time.DateOnly, c.from)
			to, _ := time.Parse(time.DateOnly, c.to)
			// From noon the day before to noon the day after, read in UTC:
			// wider than the dates in any zone, and no other day trades
			// that far from them with these times.
			got := p.Between(schedule.Through(from.Add(-12*time.Hour)), to.Add(36*time.Hour), 100)
			var lines []string
			for _, tr := range got {
				if tr.Day < c.from || tr.Day > c.to {
					continue
				}
				lines = append(lines, tr.Day+" "+tr.Kind.String()+" "+tr.At.In(loc).Format("15:04:05.999999999Z07:00"))
			}
			if strings.Join(lines, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("transitions:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(c.want, "\n"))
			}
			// Each asked about alone, by its time or by its day, and the
			// day's end for a GTD order (DateEnd) is the end of day's.
			for i, tr := range got {
				if tr.Day < c.from || tr.Day > c.to {
					continue
				}
				if next, ok := p.Next(schedule.Through(tr.At.Add(-time.Nanosecond))); !ok || next != tr {
					t.Errorf("Next before %s: %v", tr, next)
				}
				if i > 0 {
					if next, ok := p.Next(got[i-1]); !ok || next != tr {
						t.Errorf("Next after %s: %v, want %s", got[i-1], next, tr)
					}
				}
				if at, ok := p.Transition(tr.Day, tr.Kind, tr.Group); !ok || at != tr {
					t.Errorf("Transition(%s, %s): %v, %v", tr.Day, tr.Kind, at, ok)
				}
				if day, ok := p.DayInProgress(tr.At); ok != (tr.Kind != schedule.EndOfDay) || ok && day != tr.Day {
					t.Errorf("DayInProgress(%s) = %q, %v", tr, day, ok)
				}
				if tr.Kind == schedule.EndOfDay {
					d, _ := time.Parse(time.DateOnly, tr.Day)
					if end := p.DateEnd(d.Year(), d.Month(), d.Day()); !end.Equal(tr.At) {
						t.Errorf("DateEnd(%s) = %s, want the end of day's %s", tr.Day, end.In(loc), tr.At.In(loc))
					}
					if day, ok := p.EndedBy(tr.At); !ok || day != tr.Day {
						t.Errorf("EndedBy(%s) = %q, %v", tr, day, ok)
					}
				}
			}
		})
	}
}

// TestAWeekendOverAClockChange: a venue trading Monday to Friday in
// Santiago, where clocks go forward at Saturday's midnight, meets
// Monday's pre-open after Friday's end of day, and catches up on Monday
// after a stop over the weekend; in New York a holiday on the Monday
// after the change passes to Tuesday, its times in summer time.
func TestAWeekendOverAClockChange(t *testing.T) {
	for _, c := range []struct {
		zone, holidays string
		friday         time.Time // Friday evening, in zone
		first          string    // the next trading day
		wantPreOpen    string
	}{
		{"America/Santiago", "[]", time.Date(2026, 9, 4, 20, 0, 0, 0, time.UTC), "2026-09-07", "09:00:00-03:00"},
		{"America/New_York", `["2026-03-09"]`, time.Date(2026, 3, 6, 20, 0, 0, 0, time.UTC), "2026-03-10", "09:00:00-04:00"},
	} {
		cfg, err := parse(t, `
[schedule]
enabled = true
time_zone = "`+c.zone+`"
holidays = `+c.holidays+`
end_of_day = "17h30m"
[[schedule.group]]
name = "all"
pre_open = "9h"
open = "9h30m"
close = "17h"
`)
		if err != nil {
			t.Fatal(err)
		}
		p, loc := schedule.New(cfg.Schedule), cfg.Schedule.Location()
		friday := time.Date(c.friday.Year(), c.friday.Month(), c.friday.Day(), c.friday.Hour(), 0, 0, 0, loc)
		next, ok := p.Next(schedule.Through(friday))
		if !ok || next.Day != c.first || next.Kind != schedule.PreOpen || next.At.In(loc).Format("15:04:05Z07:00") != c.wantPreOpen {
			t.Errorf("%s: after Friday's end of day: %v, %v; want %s's pre-open at %s", c.zone, next, ok, c.first, c.wantPreOpen)
		}
		// Down from Friday evening to the first trading day's noon.
		d, _ := time.Parse(time.DateOnly, c.first)
		noon := time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, loc)
		missed := p.Between(schedule.Through(friday), noon, 64)
		if len(missed) != 2 || missed[0] != next || missed[1].Kind != schedule.Open || missed[1].Day != c.first {
			t.Errorf("%s: missed over the weekend: %v", c.zone, missed)
		}
	}
}

// TestAnEndOfDayInTheHourSkippedBeforeMidnight: in Nuuk clocks go forward
// at 23:00 on the last Saturday of March (23:00 is 00:00), so a close at
// 23:00 and an end of day at 23:30 that Saturday run at Sunday's first
// instants. Next after the close, asked from its time, which is in
// Sunday, found Sunday's pre-open: Saturday's end of day never ran, and
// its DAY orders lived on through Sunday's trading.
func TestAnEndOfDayInTheHourSkippedBeforeMidnight(t *testing.T) {
	p := mustPlan(t, zoneDay("America/Nuuk", "23h30m", "1h", "2h30m", "23h"))
	loc, _ := time.LoadLocation("America/Nuuk")
	var got []string
	at := schedule.Through(time.Date(2026, 3, 28, 12, 0, 0, 0, loc))
	for i := 0; i < 3; i++ {
		tr, ok := p.Next(at)
		if !ok {
			t.Fatalf("Next(%s): none", at)
		}
		got = append(got, tr.Day+" "+tr.Kind.String()+" "+tr.At.In(loc).Format("15:04:05.999999999Z07:00"))
		at = tr
	}
	want := []string{"2026-03-28 close 00:00:00-01:00", "2026-03-28 end_of_day 00:00:00.000000001-01:00",
		"2026-03-29 pre_open 01:00:00-01:00"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Next, one after the other:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A start after the close, before the end of day's instant, finds it too.
	close := time.Date(2026, 3, 29, 0, 0, 0, 0, loc)
	tr, _ := p.Next(schedule.Transition{At: close, Day: "2026-03-28", Kind: schedule.Close, Group: 0})
	if between := p.Between(schedule.Transition{At: close, Day: "2026-03-28", Kind: schedule.Close, Group: 0}, close.Add(time.Hour), 10); len(between) == 0 || between[0] != tr || tr.Kind != schedule.EndOfDay {
		t.Fatalf("Between after the close: %v, Next: %s", between, tr)
	}
}
