package server

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
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
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir, dayStart := openDay(t, "d1")
	s := tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(9500*time.Millisecond))) // the end of day at 9 s runs
	reopenWithDayOrder(t, s)
	s.Close()

	// The follower's view: the schedule's commands and their results.
	cfg := tradingDayVenueConfig(t, dir)
	p := followerProgress(t, dir, cfg)
	if p.endOfDayNs == 0 || p.groups["all"].Kind != schedule.Close || p.last.Kind != schedule.EndOfDay {
		t.Fatalf("no end of day, or not the close before it, in the progress: %+v", p)
	}
	// A Raft snapshot's state, built by replaying the journal, keeps the
	// same (the part reads the commands too).
	replayed := replicaProgress(t, dir, cfg)
	// followerProgress builds the results from the commands: the count of
	// orders the end of day expired is the matcher's.
	if replayed.endOfDayExpired != 1 {
		t.Fatalf("a Raft snapshot's part: the end of day expired %d orders, want the one DAY order", replayed.endOfDayExpired)
	}
	p.endOfDayExpired = replayed.endOfDayExpired
	if !reflect.DeepEqual(replayed, p) {
		t.Fatalf("a Raft snapshot's part %+v, the follower's %+v", replayed, p)
	}
	var state bytes.Buffer
	if err := p.WriteState(&state); err != nil {
		t.Fatal(err)
	}
	older := state.Bytes()[:8]
	q := newScheduleProgress(cfg)
	if err := q.Restore(bytes.NewReader(state.Bytes())); err != nil || !reflect.DeepEqual(q, p) {
		t.Fatalf("restored %+v, %v; want %+v", q, err, p)
	}
	if err := q.Restore(bytes.NewReader(older)); err != nil || q.lastNs != p.lastNs || q.endOfDayNs != 0 {
		t.Fatalf("restored from 8 bytes %+v, %v", q, err)
	}

	cfg.Journal.SegmentBytes = 16384
	cfg.Schedule.EndOfDay.Duration = 11 * time.Second
	if err := p.save(dir, cfg.Schedule); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, cfg, Options{Now: stoppedClock(dayStart.Add(11500 * time.Millisecond))})
	if acme := instrumentsOf(t, s)["ACME"]; acme.RestingOrders != 1 || acme.BidQty != 5 {
		t.Fatalf("the day's end of day ran again on the progress a follower saved: ACME %+v", acme)
	}
	s.Close()
	wantOneEndOfDay(t, dir)
}

// TestScheduleProgressNamesTheLastTransition: two groups open at one
// instant, and the old leader's last command opened acme (the schedule's),
// lots' not journaled when it was lost. The new leader opens lots: the
// follower placed the old leader's last transition from its command's
// reason, where the time of the last command counted every transition at
// or before it as run, and lots stayed in the opening call until its close.
// acme's open runs again (its other instruments, had it had any, were
// perhaps not moved; a phase change run twice changes nothing), unless an
// operator's phase change came after it: run again, it would reopen the
// group the operator closed.
func TestScheduleProgressNamesTheLastTransition(t *testing.T) {
	for _, closedAfter := range []bool{false, true} {
		t.Run(fmt.Sprintf("operator_closed_acme=%v", closedAfter), func(t *testing.T) { lastTransitionOfAFailover(t, closedAfter) })
	}
}

func lastTransitionOfAFailover(t *testing.T, closedAfter bool) {
	dir := t.TempDir()
	dayStart := time.Now().Truncate(compressedDayLength)
	day := fmt.Sprintf("day-%d", dayStart.UnixNano()/int64(compressedDayLength))
	cfg := testConfig(t, dir, adminConfig()+twoGroupsDay("acme", "lots"))
	s := startServer(t, cfg, Options{Now: stoppedClock(dayStart.Add(1500 * time.Millisecond))}) // both in the opening call
	waitStatus(t, s, "LOTS", "OpeningCall", readWait)
	phase := func(p string) {
		if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, `{"reason":"as the schedule","group":"acme","phase":"`+p+`"}`, nil); code != 200 {
			t.Fatalf("acme %s: %d", p, code)
		}
	}
	phase("open") // the matcher's state after the schedule's open of acme
	if closedAfter {
		phase("close")
	}
	acmeID := instrumentsOf(t, s)["ACME"].ID
	s.Close()

	// The follower's view: the first start's commands, then the schedule's
	// open of acme, stamped 1 ms after it was due, then the operator's close.
	p := followerProgress(t, dir, cfg)
	command := func(operator, reason string, status venue.TradingStatus, ts int64) {
		buf := make([]byte, venue.OperatorCommandEncodedLength)
		var c venue.OperatorCommand
		if err := c.WrapEncode(buf, 0); err != nil {
			t.Fatal(err)
		}
		c.SetTimestampNs(ts)
		c.SetAction(venue.OperatorActionTypeSetPhaseStatus)
		c.SetStatus(status)
		c.SetInstrumentID(acmeID)
		if c.SetOperatorString(operator) != nil || c.SetReasonString(reason) != nil {
			t.Fatal("operator or reason too long")
		}
		p.Command(buf)
		r := make([]byte, venue.OperatorResultEncodedLength)
		var res venue.OperatorResult
		if err := res.WrapEncode(r, 0); err != nil {
			t.Fatal(err)
		}
		res.SetTimestampNs(ts)
		res.SetAction(venue.OperatorActionTypeSetPhaseStatus)
		if err := res.SetOperatorString(operator); err != nil {
			t.Fatal(err)
		}
		if err := p.Event(r); err != nil {
			t.Fatal(err)
		}
	}
	open := dayStart.Add(2*time.Second + time.Millisecond).UnixNano()
	command(ops.OperatorSchedule, day+" open acme", venue.TradingStatusOpen, open)
	if closedAfter {
		command("alice", "closing early", venue.TradingStatusClosed, open+1)
	}
	if err := p.save(dir, cfg.Schedule); err != nil {
		t.Fatal(err)
	}

	s = startServer(t, cfg, Options{Now: stoppedClock(dayStart.Add(2500 * time.Millisecond))})
	want := "Open"
	if closedAfter {
		want = "Closed"
	}
	if in := instrumentsOf(t, s); in["LOTS"].Status != "Open" || in["ACME"].Status != want {
		t.Fatalf("the new leader's ACME is %s and LOTS %s, want %s and Open", in["ACME"].Status, in["LOTS"].Status, want)
	}
}

// TestScheduleProgressKeepsThePhases: a follower keeps each group's phase
// as last set by a phase change, the schedule's or an operator's, for the
// instruments configured and those added while the venue ran (in the
// group the command names, or the one its symbol falls in), through a
// Raft snapshot's part; a group no longer configured is left out.
func TestScheduleProgressKeepsThePhases(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir, adminConfig()+twoGroupsDay("acme", "lots"))
	p := newScheduleProgress(cfg)
	add := func(id uint32, symbol, group string) {
		buf := make([]byte, venue.AddInstrumentEncodedLength)
		var a venue.AddInstrument
		if err := a.WrapEncode(buf, 0); err != nil {
			t.Fatal(err)
		}
		a.SetInstrumentID(id)
		if a.SetSymbolString(symbol) != nil || a.SetGroupString(group) != nil {
			t.Fatal("symbol or group too long")
		}
		p.Command(buf)
	}
	phase := func(id uint32, operator string, status venue.TradingStatus) {
		buf := make([]byte, venue.OperatorCommandEncodedLength)
		var c venue.OperatorCommand
		if err := c.WrapEncode(buf, 0); err != nil {
			t.Fatal(err)
		}
		c.SetAction(venue.OperatorActionTypeSetPhaseStatus)
		c.SetInstrumentID(id)
		c.SetStatus(status)
		if c.SetOperatorString(operator) != nil || c.SetReasonString("as planned") != nil {
			t.Fatal("operator or reason too long")
		}
		p.Command(buf)
	}
	var lots uint32
	for _, in := range cfg.Instruments {
		if in.Symbol == "LOTS" {
			lots = in.ID
		}
	}
	add(900, "NEWCO", "acme")
	phase(900, ops.OperatorSchedule, venue.TradingStatusOpeningCall)
	phase(900, "alice", venue.TradingStatusClosingCall) // acme's, by the added instrument
	phase(lots, ops.OperatorSchedule, venue.TradingStatusOpen)
	phase(901, "alice", venue.TradingStatusClosed) // no such instrument
	want := map[string]venue.TradingStatus{"acme": venue.TradingStatusClosingCall, "lots": venue.TradingStatusOpen}
	if got := p.Phases(); !reflect.DeepEqual(got, want) {
		t.Fatalf("phases %v, want %v", got, want)
	}
	var state bytes.Buffer
	if err := p.WriteState(&state); err != nil {
		t.Fatal(err)
	}
	q := newScheduleProgress(cfg)
	if err := q.Restore(&state); err != nil || !reflect.DeepEqual(q, p) {
		t.Fatalf("restored %+v, %v; want %+v", q, err, p)
	}
	state.Reset()
	if err := p.WriteState(&state); err != nil {
		t.Fatal(err)
	}
	one := testConfig(t, dir, adminConfig()+strings.Replace(twoGroupsDay("lots", "acme"), "[[schedule.group]]\nname = \"acme\"\ninstruments = [\"ACME\"]", "[[schedule.group]]\nname = \"all\"", 1))
	r := newScheduleProgress(one)
	if err := r.Restore(&state); err != nil || !reflect.DeepEqual(r.Phases(), map[string]venue.TradingStatus{"lots": venue.TradingStatusOpen}) || r.added != nil {
		t.Fatalf("restored without group acme: %v, %+v", err, r)
	}
}
