package server

import (
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/internal/admintest"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestClockSteppedAheadCatchesUp: the venue's clock steps 30 days ahead
// while it serves (a machine resumed from suspend, an NTP step), past some
// 120 transitions. They run as a start's catch-up runs the ones it missed:
// the last 64 only (16 days' four), each stamped with the time it was due,
// each logged as run late. They all ran, at once and stamped with the
// clock's time, with the FIX edge open meanwhile.
func TestClockSteppedAheadCatchesUp(t *testing.T) {
	v := steppingVenue(t, nil)
	s, dir, dayStart := v.s, v.dir, v.dayStart

	const days = 30
	lastDay := dayStart.Add(days * compressedDayLength)
	v.clock.Store(lastDay.Add(9500 * time.Millisecond).UnixNano()) // past that day's end of day
	want := fmt.Sprintf("day-%d end_of_day", lastDay.UnixNano()/int64(compressedDayLength))
	// 64 transitions, their commands each journaled and synced.
	waitWithin(t, "the last day's end of day recorded", time.Minute, func() bool {
		_, record := scheduleRecord(t, dir)
		return strings.Contains(string(record), want)
	})
	metrics := scrape(t, s)
	late := metricstest.Value(t, metrics, `fixvenue_schedule_transitions_total{caught_up="true",kind="end_of_day"}`)
	onTime := metricstest.Value(t, metrics, `fixvenue_schedule_transitions_total{caught_up="false",kind="end_of_day"}`)
	if late != "16" || (onTime != "" && onTime != "0") {
		t.Fatalf("end of days run late %q, on time %q; want 16 late (the last 64 transitions), none on time", late, onTime)
	}
	if n := strings.Count(v.logs.String(), "transition run late"); n != 64 {
		t.Fatalf("%d transitions logged as run late, want 64:\n%s", n, v.logs.String())
	}
	s.Close()

	// Each of the schedule's commands after the start's (its first phase,
	// at 1.5 s) carries the time its transition was due: an offset of 1 s
	// (pre-open), 2 s (open), 8 s (close) or 9 s (end of day) into a day.
	for rec, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		c, ok := venue.DecodeOperatorCommand(rec.Payload)
		if !ok || string(c.Operator()) != ops.OperatorSchedule || c.TimestampNs() <= dayStart.Add(1500*time.Millisecond).UnixNano() {
			continue
		}
		if into := time.Duration(c.TimestampNs() % int64(compressedDayLength)); into != time.Second && into != 2*time.Second &&
			into != 8*time.Second && into != 9*time.Second {
			t.Fatalf("seq %d (%s) stamped %s into its day, not at a transition's time", rec.Seq, c.Action(), into)
		}
	}
}

// TestClockSteppedAheadHoldsOrders: while the transitions a clock stepped
// ahead found due run (their first command held before it is durable), a
// logged-on session's order is refused, saying why, and so is an
// operator's change (503 catching_up), as during a start's catch-up:
// nothing stamped with the clock lands among commands stamped with the
// times their transitions were due. Once they ran, orders are taken.
func TestClockSteppedAheadHoldsOrders(t *testing.T) {
	t.Parallel()
	hold := newSyncHold(t)
	v := steppingVenue(t, hold)
	s, dayStart := v.s, v.dayStart
	c := logon(t, s, "CLIENT1", true)
	defer c.Close()

	hold.on.Store(true)
	v.clock.Store(dayStart.Add(compressedDayLength + 5*time.Second).UnixNano()) // the next day's open: six transitions due
	hold.waitHeld(t, "the stepped clock's catch-up", v.logs)
	sendOrder(t, c, order{id: "held", side: "1", qty: "5", px: "99.00"})
	expectER(t, c, map[int]string{11: "held", 150: "8", 58: gateway.CatchingUpText})
	a := admintest.Call(t, "POST", "http://"+s.AdminAddr()+"/v1/instruments/ACME/halt", aliceToken, `{"reason":"in the catch-up"}`)
	if a.Status != 503 || !strings.Contains(string(a.Body), "catching_up") {
		t.Fatalf("POST halt during the stepped clock's catch-up: %d %s; want 503 catching_up", a.Status, a.Body)
	}

	hold.on.Store(false)
	hold.release()
	waitUntil(t, "the catch-up's end logged", func() bool { return strings.Contains(v.logs.String(), "schedule: caught up") })
	sendOrder(t, c, order{id: "taken", side: "1", qty: "5", px: "99.00"})
	expectER(t, c, map[int]string{11: "taken", 150: "0"})
}

// steppedVenue is the compressed day's venue serving in its opening call
// (1.5 s into the day) on a clock a test steps (clock), logging to logs;
// hold, when set, holds its journal's syncs.
type steppedVenue struct {
	s        *Server
	dir      string
	dayStart time.Time
	clock    *atomic.Int64
	logs     *lockedbuf.Buffer
}

func steppingVenue(t *testing.T, hold *syncHold) steppedVenue {
	t.Helper()
	var sync journal.SyncFunc
	if hold != nil {
		sync = hold.sync
	}
	v := steppedVenue{dir: t.TempDir(), dayStart: time.Now().Truncate(compressedDayLength), clock: &atomic.Int64{},
		logs: &lockedbuf.Buffer{}}
	v.clock.Store(v.dayStart.Add(1500 * time.Millisecond).UnixNano())
	v.s = startServer(t, tradingDayVenueConfig(t, v.dir), Options{Now: func() time.Time { return time.Unix(0, v.clock.Load()) },
		JournalSync: sync, Logger: slog.New(slog.NewTextHandler(v.logs, nil))})
	if hold != nil {
		t.Cleanup(hold.release) // before the venue's Close, which waits for the journal
	}
	waitStatus(t, v.s, "ACME", "OpeningCall", readWait)
	return v
}

// TestTransitionsDueTogetherRunOnTime: two groups open 50 ms apart, and the
// venue's clock reads 100 ms past the first open when its timer fires (a
// loaded machine's latency): both opens are due at once, late by less than
// the schedule's slack. They run as on time, neither logged as run late;
// they took the path of a clock stepped ahead, logged and counted as late,
// with FIX orders and operator changes refused meanwhile.
func TestTransitionsDueTogetherRunOnTime(t *testing.T) {
	dir := t.TempDir()
	dayStart := time.Now().Truncate(compressedDayLength)
	var clock atomic.Int64
	clock.Store(dayStart.Add(1500 * time.Millisecond).UnixNano())
	logs := &lockedbuf.Buffer{}
	cfg := testConfig(t, dir, adminConfig()+opensApartDay)
	s := startServer(t, cfg, Options{Now: func() time.Time { return time.Unix(0, clock.Load()) },
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	waitStatus(t, s, "LOTS", "OpeningCall", readWait)
	clock.Store(dayStart.Add(2100 * time.Millisecond).UnixNano())
	waitStatus(t, s, "ACME", "Open", readWait)
	waitStatus(t, s, "LOTS", "Open", readWait)
	waitOpensOnTime(t, s, 2, logs)
	if strings.Contains(logs.String(), "run late") {
		t.Fatalf("an open due within the slack logged as run late:\n%s", logs.String())
	}
}

// opensApartDay is the compressed day with ACME and LOTS in groups of
// their own, acme opening at 2 s and lots 50 ms later.
const opensApartDay = "\n[schedule]\nenabled = true\ntime_zone = \"Europe/Paris\"\nday = \"12s\"\nend_of_day = \"9s\"\n" +
	"[[schedule.group]]\nname = \"acme\"\ninstruments = [\"ACME\"]\npre_open = \"1s\"\nopen = \"2s\"\nclose = \"8s\"\n" +
	"[[schedule.group]]\nname = \"lots\"\ninstruments = [\"LOTS\"]\npre_open = \"1s\"\nopen = \"2050ms\"\nclose = \"8s\"\n"

// TestTransitionDueWhileTheOneBeforeRunsIsOnTime: acme's open takes three
// seconds (its command's sync held while the clock moves on, as a group of
// many instruments would), and lots' open, due 50 ms after it, runs as on
// time once acme's is done: stamped with the clock, as what was journaled
// meanwhile, and not logged as late. Counting its lateness from the time
// it was due ran it as a catch-up, stamped three seconds back.
func TestTransitionDueWhileTheOneBeforeRunsIsOnTime(t *testing.T) {
	hold := newSyncHold(t)
	dir := t.TempDir()
	dayStart := time.Now().Truncate(compressedDayLength)
	var clock atomic.Int64
	clock.Store(dayStart.Add(1500 * time.Millisecond).UnixNano())
	logs := &lockedbuf.Buffer{}
	s := startServer(t, testConfig(t, dir, adminConfig()+opensApartDay), Options{Now: func() time.Time { return time.Unix(0, clock.Load()) },
		JournalSync: hold.sync, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	t.Cleanup(hold.release) // before the venue's Close, which waits for the journal
	waitStatus(t, s, "LOTS", "OpeningCall", readWait)
	hold.on.Store(true)
	clock.Store(dayStart.Add(2010 * time.Millisecond).UnixNano())
	hold.waitHeld(t, "acme's open", logs)
	waitUntil(t, "acme's open begun", func() bool { return strings.Contains(logs.String(), " open group 0 ") })
	clock.Store(dayStart.Add(5 * time.Second).UnixNano()) // acme's open took three seconds
	hold.on.Store(false)
	hold.release()
	waitStatus(t, s, "LOTS", "Open", readWait)
	if strings.Contains(logs.String(), "run late") {
		t.Fatalf("an open due while the one before ran logged as run late:\n%s", logs.String())
	}
	waitOpensOnTime(t, s, 2, logs)
}

// waitOpensOnTime waits, bounded, until want opens are counted as run on
// time. A transition is counted once its commands are answered, after the
// status they set is visible: read once right after the status, the count
// could still be one short.
func waitOpensOnTime(t *testing.T, s *Server, want int, logs *lockedbuf.Buffer) {
	t.Helper()
	onTime := ""
	for deadline := time.Now().Add(readWait); onTime != strconv.Itoa(want) && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		onTime = metricstest.Value(t, scrape(t, s), `fixvenue_schedule_transitions_total{caught_up="false",kind="open"}`)
	}
	if onTime != strconv.Itoa(want) {
		t.Fatalf("opens run on time %q, want %d:\n%s", onTime, want, logs.String())
	}
}

// TestClockSteppedPastOneTransition: an hour's day, open, its close 50
// minutes ahead; the venue's clock steps to a minute past the close (a
// machine resumed from suspend, whose timers' clock stood still meanwhile;
// an NTP step). The close runs at once, as a transition late by more than
// the schedule's slack: stamped with the time it was due and logged as run
// late. The schedule waited for the timer set before the step, the 50
// minutes, taking orders into the open book meanwhile; and a transition
// late alone ran as on time, stamped with the clock, after GTD expiries
// the auction timer had run at the clock's time.
func TestClockSteppedPastOneTransition(t *testing.T) {
	dir := t.TempDir()
	dayStart := time.Now().Truncate(time.Hour)
	var clock atomic.Int64
	clock.Store(dayStart.Add(2500 * time.Millisecond).UnixNano())
	logs := &lockedbuf.Buffer{}
	cfg := testConfig(t, dir, adminConfig()+"\n[schedule]\nenabled = true\ntime_zone = \"Europe/Paris\"\nday = \"1h\"\nend_of_day = \"55m\"\n"+
		"[[schedule.group]]\nname = \"all\"\npre_open = \"1s\"\nopen = \"2s\"\nclose = \"50m\"\n")
	s := startServer(t, cfg, Options{Now: func() time.Time { return time.Unix(0, clock.Load()) },
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	waitStatus(t, s, "ACME", "Open", readWait)
	closeAt := dayStart.Add(50 * time.Minute)
	// The step comes while the schedule waits for the close. Once the
	// open shows, the schedule still records it; a step before it comes
	// to the close finds it due when it comes, as after transitions that
	// took that long, which is on time.
	waitUntil(t, "the schedule waiting for the close", func() bool {
		next := metricstest.Float(t, scrape(t, s), "fixvenue_schedule_next_transition_timestamp_seconds")
		return math.Abs(next-float64(closeAt.UnixNano())/1e9) < 1e-3
	})
	clock.Store(closeAt.Add(time.Minute).UnixNano())
	waitStatus(t, s, "ACME", "Closed", readWait)
	if n := strings.Count(logs.String(), "transition run late"); n != 1 {
		t.Fatalf("%d transitions logged as run late, want the close:\n%s", n, logs.String())
	}
	s.Close()
	stamped := false
	for rec, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := venue.DecodeOperatorCommand(rec.Payload); ok && string(c.Operator()) == ops.OperatorSchedule &&
			c.Status() == venue.TradingStatusClosed {
			if c.TimestampNs() != closeAt.UnixNano() {
				t.Fatalf("the close stamped %s, want the time it was due, %s", time.Unix(0, c.TimestampNs()), closeAt)
			}
			stamped = true
		}
	}
	if !stamped {
		t.Fatal("no close in the journal")
	}
}

// TestPhaseChangeInFlightWhenTheClockSteps: an operator's /v1/phase of the
// group of ACME and LOTS (a command each) is in flight, its first command's
// sync held, when the venue's clock steps past the close, the end of day
// and the next day's opening. The stepped clock's catch-up waits for the
// change (a change coming meanwhile is refused, 503 catching_up): both its
// commands carry the clock's time, as it was made. Its second command was
// journaled during the catch-up, stamped with the time of the transition
// the catch-up ran, hours before it was made.
func TestPhaseChangeInFlightWhenTheClockSteps(t *testing.T) {
	hold := newSyncHold(t)
	v := steppingVenue(t, hold)
	s, dir, dayStart := v.s, v.dir, v.dayStart
	hold.on.Store(true)
	answered := make(chan int, 1)
	go func() {
		a := admintest.Call(t, "POST", "http://"+s.AdminAddr()+"/v1/phase", aliceToken, `{"reason":"opening early","group":"all","phase":"open"}`)
		answered <- a.Status
	}()
	hold.waitHeld(t, "the phase change", v.logs)
	stepped := dayStart.Add(compressedDayLength + 5*time.Second)
	v.clock.Store(stepped.UnixNano())
	waitUntil(t, "the stepped clock's catch-up begun", func() bool {
		a := admintest.Call(t, "POST", "http://"+s.AdminAddr()+"/v1/instruments/NOSUCH/halt", aliceToken, `{"reason":"probe"}`)
		return a.Status == 503
	})
	hold.on.Store(false)
	hold.release()
	select {
	case code := <-answered:
		if code != 200 {
			t.Fatalf("the phase change: %d", code)
		}
	case <-time.After(readWait):
		t.Fatalf("the phase change not answered within %s", readWait)
	}
	waitUntil(t, "the catch-up's end logged", func() bool { return strings.Contains(v.logs.String(), "schedule: caught up") })
	s.Close()
	var stamps []time.Time
	for rec, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := venue.DecodeOperatorCommand(rec.Payload); ok && string(c.Operator()) == "alice" && c.Action() == venue.OperatorActionTypeSetPhaseStatus {
			stamps = append(stamps, time.Unix(0, c.TimestampNs()))
		}
	}
	if len(stamps) != 2 || !stamps[0].Equal(dayStart.Add(1500*time.Millisecond)) || !stamps[1].Equal(stepped) {
		t.Fatalf("the phase change's commands stamped %v; want the clock's times, %s then %s", stamps, dayStart.Add(1500*time.Millisecond), stepped)
	}
}

// TestClockSteppedBackRunsNoTransitionTwice: the venue's clock, past the
// day's close and end of day, steps back to before the day's open, then
// comes to the open's and the end of day's times again. The schedule waits
// for the next transition after the last it ran (the next day's pre-open)
// by the clock it reads: nothing of the day runs a second time (no
// command of the schedule follows the day's end), the group stays closed
// and the day ends once.
func TestClockSteppedBackRunsNoTransitionTwice(t *testing.T) {
	dir := t.TempDir()
	dayStart := time.Now().Truncate(time.Hour)
	var clock atomic.Int64
	clock.Store(dayStart.Add(2500 * time.Millisecond).UnixNano())
	cfg := testConfig(t, dir, adminConfig()+"\n[schedule]\nenabled = true\ntime_zone = \"Europe/Paris\"\nday = \"1h\"\nend_of_day = \"55m\"\n"+
		"[[schedule.group]]\nname = \"all\"\npre_open = \"1s\"\nopen = \"2s\"\nclose = \"50m\"\n")
	s := startServer(t, cfg, Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	waitStatus(t, s, "ACME", "Open", readWait)
	clock.Store(dayStart.Add(56 * time.Minute).UnixNano())
	preOpen := "pre_open group \"all\" at " + dayStart.Add(time.Hour+time.Second).UTC().Format(time.RFC3339Nano)
	var next string
	waitUntil(t, "the next day's pre-open named next", func() bool {
		var st ops.StatusInfo
		code := adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st)
		next = st.NextTransition
		return code == 200 && strings.HasSuffix(next, preOpen)
	})
	// The day's transitions are all journaled by now: the status names
	// the next day's pre-open only once the schedule has run them (read
	// at once, while the schedule has yet to see the step, it named the
	// transition after the clock, and the end of day ran after the
	// clock stepped back). A transition whose commands a loaded machine
	// did not apply within the call's time is run again before that,
	// stamped anew, so the day's commands are not counted: none may
	// follow.
	ended := s.Pipeline().Durable().Load()
	waitStatus(t, s, "ACME", "Closed", time.Second)
	for _, at := range []time.Duration{1500 * time.Millisecond, 2500 * time.Millisecond, 56 * time.Minute} {
		clock.Store(dayStart.Add(at).UnixNano())
		time.Sleep(1500 * time.Millisecond) // the schedule reads the clock every second
		waitStatus(t, s, "ACME", "Closed", time.Second)
		wantNextTransition(t, s, next)
	}
	s.Close()
	wantOneEndOfDay(t, dir)
	for rec, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := venue.DecodeOperatorCommand(rec.Payload); ok && string(c.Operator()) == ops.OperatorSchedule &&
			int64(rec.Seq) > ended {
			t.Fatalf("journal: the schedule's %v at seq %d, stamped %v, after the day ended at seq %d: a transition ran again",
				c.Status(), rec.Seq, time.Unix(0, c.TimestampNs()), ended)
		}
	}
}

// TestRoundTripAcrossAClockStep: an order whose answer waits (the
// journal's sync held) while the FIX gateway's wall clock is stepped back
// an hour has a round trip of the time it took, not minus an hour: the
// round trip is timed by the monotonic clock (gateway/roundtrip.go), not
// by the commands' wall stamps.
func TestRoundTripAcrossAClockStep(t *testing.T) {
	t.Parallel()
	var step atomic.Int64
	cfg := testConfig(t, t.TempDir(), adminConfig())
	s, hold := startHeld(t, cfg, Options{FIXWallClock: func() time.Time { return time.Now().Add(time.Duration(step.Load())) }})
	c := logon(t, s, "CLIENT1", true)
	hold.on.Store(true)
	sendOrder(t, c, order{id: "o1", side: "1", qty: "1", px: "99.00"})
	hold.waitHeld(t, "the order", &lockedbuf.Buffer{})
	step.Store(-int64(time.Hour))
	hold.release()
	expectER(t, c, map[int]string{11: "o1", 150: "0"})
	m := scrape(t, s)
	if n := metricstest.Float(t, m, "fixvenue_order_round_trip_seconds_count"); n != 1 {
		t.Fatalf("round trips measured: %v, want the order's", n)
	}
	if sum := metricstest.Float(t, m, "fixvenue_order_round_trip_seconds_sum"); sum < 0 || sum > 60 {
		t.Fatalf("an order's round trip of %v s across a clock stepped back an hour; want the time it took", sum)
	}
	// The age of an event is a wall-clock difference: one below zero is
	// the step, not an age, and is not observed.
	if sum := metricstest.Float(t, m, "fixvenue_outbound_event_age_seconds_sum"); sum < 0 {
		t.Fatalf("events aged %v s in all across a clock stepped back an hour", sum)
	}
}
