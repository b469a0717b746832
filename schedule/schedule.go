package schedule

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/fixvenue/fixvenue/config"
)

// Kind is what a transition does.
type Kind uint8

// The transitions of a trading day: PreOpen, Open, ClosingCall (when the
// group has one), Close, EndOfDay happen in that order; ClosingCall comes
// last in value so that the numbers of the others stay as they were (they
// are a metric's values).
const (
	PreOpen Kind = iota + 1
	Open
	Close
	EndOfDay
	ClosingCall
)

func (k Kind) String() string {
	switch k {
	case PreOpen:
		return "pre_open"
	case Open:
		return "open"
	case Close:
		return "close"
	case EndOfDay:
		return "end_of_day"
	case ClosingCall:
		return "closing_call"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// PhaseOrder is the place of a group's transition of kind k in the group's
// day: pre-open, open, closing call, close (0 for the end of day, which is
// no group's).
func PhaseOrder(k Kind) int {
	switch k {
	case PreOpen:
		return 1
	case Open:
		return 2
	case ClosingCall:
		return 3
	case Close:
		return 4
	}
	return 0
}

// Transition is one scheduled change.
type Transition struct {
	At    time.Time
	Day   string // the trading day it belongs to: a date, or "day-N" for compressed days
	Kind  Kind
	Group int // index into the schedule's groups; -1 for EndOfDay
}

func (t Transition) String() string {
	if t.Group < 0 {
		return fmt.Sprintf("%s %s at %s", t.Day, t.Kind, t.At.Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("%s %s group %d at %s", t.Day, t.Kind, t.Group, t.At.Format(time.RFC3339Nano))
}

// After reports whether t comes after u in the order of a day's
// transitions: by time, then kind, then group. Transitions at one instant
// (two groups with the same times, a close at the end of day) are each
// run, one after the other, in that order.
func (t Transition) After(u Transition) bool {
	if !t.At.Equal(u.At) {
		return t.At.After(u.At)
	}
	if t.Kind != u.Kind {
		return t.Kind > u.Kind
	}
	return t.Group > u.Group
}

// DayAfter reports whether the trading day named a (Transition.Day) comes
// after the one named b: dates as dates, compressed days by number. Names
// of different kinds (a schedule changed between calendar and compressed
// days) do not compare: a is taken to come after.
func DayAfter(a, b string) bool {
	if da, err := time.Parse(time.DateOnly, a); err == nil {
		db, err := time.Parse(time.DateOnly, b)
		return err != nil || da.After(db)
	}
	var na, nb int64
	if _, err := fmt.Sscanf(a, "day-%d", &na); err != nil {
		return true
	}
	if _, err := fmt.Sscanf(b, "day-%d", &nb); err != nil {
		return true
	}
	return na > nb
}

// Through is the position after every transition at or before t: where a
// schedule stands once it brought every group to its phase at t, or when
// it knows only the time of the last transition it ran.
func Through(t time.Time) Transition {
	return Transition{At: t, Kind: math.MaxUint8, Group: math.MaxInt}
}

// daysScannedMax bounds how many days Between and Next look through: a
// year and a bit, more than any run of holidays and weekends.
const daysScannedMax = 400

// Plan computes the transitions of a validated schedule. It has no state
// and reads no clock: every answer is a function of its arguments.
type Plan struct {
	sched    config.Schedule
	loc      *time.Location
	day      time.Duration
	weekdays map[time.Weekday]bool
	holidays map[string]bool
	// steps are a day's transitions in the order of their offsets (ties:
	// as Transition.After orders them), the order every day keeps.
	steps []step
}

// step is one transition of every trading day, as configured.
type step struct {
	offset time.Duration
	kind   Kind
	group  int
}

// New builds the plan of a schedule that config validation accepted.
func New(s config.Schedule) *Plan {
	p := &Plan{sched: s, loc: s.Location(), day: s.DayLength(), weekdays: s.Weekdays(), holidays: map[string]bool{}}
	for _, h := range s.Holidays {
		p.holidays[h] = true
	}
	for g, grp := range s.Groups {
		p.steps = append(p.steps, step{grp.PreOpen.Duration, PreOpen, g}, step{grp.Open.Duration, Open, g},
			step{grp.Close.Duration, Close, g})
		if grp.ClosingCall.Duration != 0 {
			p.steps = append(p.steps, step{grp.ClosingCall.Duration, ClosingCall, g})
		}
	}
	p.steps = append(p.steps, step{s.EndOfDay.Duration, EndOfDay, -1})
	sort.SliceStable(p.steps, func(i, j int) bool {
		a, b := p.steps[i], p.steps[j]
		if a.offset != b.offset {
			return a.offset < b.offset
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.group < b.group
	})
	return p
}

// Compressed reports whether days are shorter than a calendar day.
func (p *Plan) Compressed() bool { return p.day < 24*time.Hour }

// dayOf returns the start of the day holding t and its name.
func (p *Plan) dayOf(t time.Time) (time.Time, string) {
	if p.Compressed() {
		n := t.UnixNano() / int64(p.day)
		if t.UnixNano() < 0 && t.UnixNano()%int64(p.day) != 0 {
			n--
		}
		return time.Unix(0, n*int64(p.day)), fmt.Sprintf("day-%d", n)
	}
	y, m, d := t.In(p.loc).Date()
	start := p.wall(y, m, d, 0)
	return start, start.Format(time.DateOnly)
}

// EndedBy names the trading day (Transition.Day) that an end of day
// journaled at t ended: the trading day of the last transition at or before
// t, the day in progress or the last one. A command is stamped when it
// runs, after its time (across midnight for an end of day just before it),
// and the configuration may have moved end_of_day since (a later one is
// after t): the day's close or another transition is then the last. An
// end of day before the day's first transition (an operator's, early in
// the morning) ends the trading day before, not a day that has not begun;
// ok is false when no trading day is found.
func (p *Plan) EndedBy(t time.Time) (day string, ok bool) {
	start, name := p.dayOf(t)
	for i := 0; i < daysScannedMax; i++ {
		if p.trades(start, name) {
			begun := false
			p.stepTimes(start, func(_ step, at time.Time) {
				begun = begun || !at.After(t)
			})
			if begun {
				return name, true
			}
		}
		start = p.daysBefore(start, 1)
		_, name = p.dayOf(start)
	}
	return "", false
}

// dayBefore returns the start and name of the calendar day before the one
// holding t (the day holding t for compressed days). A day's transitions
// inside the hour a clock change skips at its end (Greenland's 23:00 to
// 00:00 on the last Saturday of March) run at the first instant after it,
// which is the next day's start: scanning from the day holding such a
// transition's time would pass over the rest of its own day, its end of
// day among them.
func (p *Plan) dayBefore(t time.Time) (time.Time, string) {
	if p.Compressed() {
		return p.dayOf(t)
	}
	start := p.daysBefore(t, 1)
	_, name := p.dayOf(start)
	return start, name
}

// nextDay returns the start of the day after the one starting at start.
func (p *Plan) nextDay(start time.Time) time.Time {
	if p.Compressed() {
		return start.Add(p.day)
	}
	y, m, d := start.Date()
	return p.wall(y, m, d+1, 0)
}

// daysBefore returns the start of the day n days before the one holding t.
func (p *Plan) daysBefore(t time.Time, n int) time.Time {
	start, _ := p.dayOf(t)
	if p.Compressed() {
		return start.Add(-time.Duration(n) * p.day)
	}
	y, m, d := start.Date()
	return p.wall(y, m, d-n, 0)
}

// at returns the time offset into the day starting at start: on calendar
// days by wall clock (wall), so that 8h is 08:00 also on the days clocks
// change.
func (p *Plan) at(start time.Time, offset time.Duration) time.Time {
	if p.Compressed() {
		return start.Add(offset)
	}
	y, m, d := start.Date()
	return p.wall(y, m, d, offset)
}

// wall returns the first instant at which the venue's clock shows the
// date y-m-d (normalised as time.Date does: the 32nd is the next month's
// 1st) at clock or later. A time the day's clock change skips (02:30 when
// 02:00 is 03:00) is the first instant after the skipped hour (03:00), and
// a time the change repeats (02:30 when 03:00 is 02:00) its first
// occurrence, in every zone. time.Date, which leaves both choices open,
// takes a skipped time an hour on east of UTC (03:30) and an hour back
// west of it (01:30, before the hour it was to follow), and a repeated
// one at its second occurrence east of UTC, its first west; a day whose
// midnight is skipped (America/Havana, America/Santiago) began at 23:00
// the day before, so that day was named for the day before and the next
// day's start was the same instant. A time is looked up in the offsets
// in effect 14 hours before and after it as read in UTC, which bound
// every instant it may be (offsets lie within UTC-12 and UTC+14; a zone
// changes its offset at most once within them). It does not allocate.
func (p *Plan) wall(y int, m time.Month, d int, clock time.Duration) time.Time {
	utc := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Add(clock) // the wall time read in UTC
	_, before := utc.Add(-14 * time.Hour).In(p.loc).Zone()
	_, after := utc.Add(14 * time.Hour).In(p.loc).Zone()
	first := utc.Add(-time.Duration(before) * time.Second) // the wall time at the offset before
	second := utc.Add(-time.Duration(after) * time.Second)
	_, firstOff := first.In(p.loc).Zone()
	_, secondOff := second.In(p.loc).Zone()
	switch {
	case firstOff == before && secondOff == after:
		if second.Before(first) {
			first = second // a clock set back: the earlier of the two
		}
		return first.In(p.loc)
	case firstOff == before:
		return first.In(p.loc)
	case secondOff == after:
		return second.In(p.loc)
	}
	// Skipped: first lies after the change (it has the offset after), which
	// is where its zone starts.
	start, _ := first.In(p.loc).ZoneBounds()
	return start
}

// DateEnd returns when a local market date ends for an order that may
// trade through it (FIX ExpireDate, 432): the end of day on that date in the
// venue's time zone, whether or not the date trades; with compressed days,
// the start of the next date in that zone (its midnight, or the first
// instant after it when a clock change skips it: wall).
func (p *Plan) DateEnd(year int, month time.Month, day int) time.Time {
	if p.Compressed() {
		return p.wall(year, month, day+1, 0)
	}
	var end time.Time
	p.stepTimes(p.wall(year, month, day, 0), func(s step, at time.Time) {
		if s.kind == EndOfDay {
			end = at
		}
	})
	return end
}

// stepTimes calls f with each step of the day starting at start and its
// time, in the steps' order. The times follow that order: a time that is
// not after the previous step's (both offsets inside the hour the day's
// clock change skips, which run at the first instant after it, see wall)
// becomes a nanosecond after it, so that the phases keep their configured
// order on that day too (at one instant transitions run by kind, which
// would put a close before the closing call it follows, and the end of
// day before a close). It does not allocate (DateEnd runs on an order's
// path).
func (p *Plan) stepTimes(start time.Time, f func(s step, at time.Time)) {
	// Until the zone's offset at a calendar day's midnight changes, an
	// offset is that long after it; past a change (and on a day whose
	// midnight a change skipped) the wall clock is looked up (wall), a few
	// times slower, on an order's path too.
	var steady time.Time
	if h, m, sec := start.Clock(); !p.Compressed() && h == 0 && m == 0 && sec == 0 && start.Nanosecond() == 0 {
		if _, steady = start.ZoneBounds(); steady.IsZero() {
			steady = start.Add(48 * time.Hour) // no change to come: past every offset of the day
		}
	}
	var prev time.Time
	for i, s := range p.steps {
		at := start.Add(s.offset)
		if !at.Before(steady) {
			at = p.at(start, s.offset)
		}
		if i > 0 {
			if s.offset == p.steps[i-1].offset {
				at = prev
			} else if !at.After(prev) {
				at = prev.Add(time.Nanosecond)
			}
		}
		prev = at
		f(s, at)
	}
}

// Trades reports whether the day starting at start trades.
func (p *Plan) trades(start time.Time, name string) bool {
	if p.Compressed() {
		return true
	}
	return p.weekdays[start.Weekday()] && !p.holidays[name]
}

// dayTransitions returns the transitions of one trading day in time order
// (ties: pre-open, open, close, end of day, closing call; then by group),
// which is the order of their offsets (stepTimes).
func (p *Plan) dayTransitions(start time.Time, name string) []Transition {
	out := make([]Transition, 0, len(p.steps))
	p.stepTimes(start, func(s step, at time.Time) {
		out = append(out, Transition{At: at, Day: name, Kind: s.kind, Group: s.group})
	})
	return out
}

// Between returns the transitions after the position after (Transition.After)
// up to At <= until, in order. When there are more than max, only the last
// max are returned (a venue down for weeks needs the end of its last day,
// not every day it missed). The days scanned are the last daysScannedMax
// up to until: scanning from after's day would stop short of until when the
// venue was down for longer than that (a year, or minutes of compressed
// days), leaving the days before until for after the catch-up.
func (p *Plan) Between(after Transition, until time.Time, max int) []Transition {
	var out []Transition
	start, name := p.dayBefore(after.At)
	if first := p.daysBefore(until, daysScannedMax-1); first.After(start) {
		start, name = p.dayOf(first)
	}
	for i := 0; i < daysScannedMax && !start.After(until); i++ {
		if p.trades(start, name) {
			for _, t := range p.dayTransitions(start, name) {
				if t.After(after) && !t.At.After(until) {
					out = append(out, t)
				}
			}
		}
		start = p.nextDay(start)
		_, name = p.dayOf(start)
	}
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}

// Unended returns what ends the day of last, a transition run, when the
// plan does not trade that day: the configuration made it a holiday (or
// its weekday one that does not trade) after it began. Between passes such
// a day over: without them its groups would keep their phases through it
// and its end of day would never come (DAY orders living on into the next
// day). They
// are each group's close, then the end of day, at the day's end of day, or
// at until when that is earlier; nil when the day trades, when last is an
// end of day or a position of no transition (Through), and for compressed
// days, which have no holidays.
func (p *Plan) Unended(last Transition, until time.Time) []Transition {
	if p.Compressed() || last.Kind < PreOpen || last.Kind > ClosingCall || last.Kind == EndOfDay {
		return nil
	}
	start, name := p.dayOf(last.At)
	if p.trades(start, name) {
		return nil
	}
	var at time.Time
	p.stepTimes(start, func(s step, t time.Time) {
		if s.kind == EndOfDay {
			at = t
		}
	})
	if at.After(until) {
		at = until
	}
	if !at.After(last.At) {
		at = last.At.Add(time.Nanosecond) // after last, as a position
	}
	out := make([]Transition, 0, len(p.sched.Groups)+1)
	for g := range p.sched.Groups {
		out = append(out, Transition{At: at, Day: name, Kind: Close, Group: g})
	}
	return append(out, Transition{At: at, Day: name, Kind: EndOfDay, Group: -1})
}

// Next returns the first transition after the position after
// (Transition.After; Through(t) for the first after a time), or ok=false
// when none comes within daysScannedMax days (a schedule whose every day is
// a holiday).
func (p *Plan) Next(after Transition) (Transition, bool) {
	start, name := p.dayBefore(after.At)
	for i := 0; i < daysScannedMax; i++ {
		if p.trades(start, name) {
			for _, tr := range p.dayTransitions(start, name) {
				if tr.After(after) {
					return tr, true
				}
			}
		}
		start = p.nextDay(start)
		_, name = p.dayOf(start)
	}
	return Transition{}, false
}

// Transition returns the transition of kind of group g (-1 for the end
// of day) on the trading day named day (Transition.Day), at its time under
// this plan, whether or not the plan trades that day (Unended ends such a
// day); ok is false when day names no day of this plan's kind (a calendar
// date for compressed days, or the other way round) or the plan has no such
// transition (a group without a closing call). A cluster's new leader
// places the old leader's last transition, known from its command, with it.
func (p *Plan) Transition(day string, kind Kind, g int) (tr Transition, ok bool) {
	var start time.Time
	if p.Compressed() {
		var n int64
		if _, err := fmt.Sscanf(day, "day-%d", &n); err != nil || n > math.MaxInt64/int64(p.day) || n < math.MinInt64/int64(p.day) {
			return tr, false
		}
		start = time.Unix(0, n*int64(p.day))
	} else {
		d, err := time.Parse(time.DateOnly, day)
		if err != nil {
			return tr, false
		}
		start = p.wall(d.Year(), d.Month(), d.Day(), 0)
	}
	if _, name := p.dayOf(start); name != day {
		return tr, false // "day-5x"
	}
	p.stepTimes(start, func(s step, at time.Time) {
		if s.kind == kind && s.group == g {
			tr, ok = Transition{At: at, Day: day, Kind: kind, Group: g}, true
		}
	})
	return tr, ok
}

// DayInProgress names the trading day (Transition.Day) in progress at t,
// in which an operator's phase change at t takes its group's place in the
// day: the day holding t when it trades and its end of day is after t,
// its transitions before or after t. ok is false when the day does not
// trade or its end of day's time has come: its transitions are over, and
// the next day's run as configured.
func (p *Plan) DayInProgress(t time.Time) (day string, ok bool) {
	start, name := p.dayOf(t)
	if !p.trades(start, name) {
		return "", false
	}
	var end time.Time
	p.stepTimes(start, func(s step, at time.Time) {
		if s.kind == EndOfDay {
			end = at
		}
	})
	return name, t.Before(end)
}

// PhaseAt returns the last transition of group g at or before t within the
// same day, or ok=false when the day does not trade or the group's pre-open
// has not come: then the group is closed.
func (p *Plan) PhaseAt(t time.Time, g int) (Kind, bool) {
	start, name := p.dayOf(t)
	if !p.trades(start, name) {
		return 0, false
	}
	var kind Kind
	for _, tr := range p.dayTransitions(start, name) {
		if tr.Group == g && !tr.At.After(t) {
			kind = tr.Kind
		}
	}
	return kind, kind != 0
}
