package server

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/journal"
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
// end of day. Its snapshot follows once it is applied, once. The record
// was written only by a call answered done, and the schedule ran a second
// end of day, expiring the order.
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
	dayStart, clock, now := inTheOpen(t, dir)
	path, before := scheduleRecord(t, dir)
	s, hold := startHeld(t, tradingDayVenueConfig(t, dir), Options{Now: now})
	hold.on.Store(true)
	// Another while that one awaits the journal sends nothing: it would
	// end the day a second time once the first is applied.
	timedOut := endOfDayTimesOut(t, s, "closing early", true)
	hold.on.Store(false)
	hold.release()
	waitUntil(t, "the end of day durable", func() bool {
		var st ops.StatusInfo
		adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st)
		return st.DurableSeq >= timedOut
	})
	// Its snapshot follows, as one answered done's does (the first end of
	// day has no older snapshot to archive through).
	var st ops.StatusInfo
	waitUntil(t, "the end of day's snapshot", func() bool {
		st = ops.StatusInfo{}
		adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st)
		return st.LastEndOfDay != nil && st.LastEndOfDay.Seq == uint64(timedOut)
	})
	if st.LastEndOfDay.SnapshotSeq <= timedOut {
		t.Fatalf("the end of day whose call timed out: %+v, want a snapshot after seq %d", *st.LastEndOfDay, timedOut)
	}
	if st.LastEndOfDay.CommandUnixNs == 0 {
		// A start from its snapshot replays no end of day, and takes the
		// trading day's start from here (gateway/doc.go, "Possible resends").
		t.Fatalf("the end of day whose call timed out: %+v, want its command time in the report", *st.LastEndOfDay)
	}
	var e struct{ Code, Error string }
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"again"}`, &e); code != 409 || e.Code != "day_ended" {
		t.Fatalf("a second end of day the same trading day: %d %+v, want 409 day_ended", code, e)
	}
	var after ops.StatusInfo
	if adminCall(t, s, "GET", "/v1/status", aliceToken, "", &after); after.LastEndOfDay == nil || *after.LastEndOfDay != *st.LastEndOfDay {
		t.Fatalf("the end of day refused changed the last end of day's report: %+v, was %+v", after.LastEndOfDay, *st.LastEndOfDay)
	}
	restDayOrder(t, s, "after")
	pastEndOfDay := dayStart.Add(9500 * time.Millisecond)
	// Restarted: the record as it was before the end of day, as after a
	// crash once the command was durable, before the record was written,
	// so before the snapshot that follows the record.
	passEndOfDayWantOne(t, s, dir, clock, pastEndOfDay, how, func() {
		if err := os.WriteFile(path, before, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, "journal", journal.SnapshotName(uint64(st.LastEndOfDay.SnapshotSeq)))); err != nil {
			t.Fatal(err)
		}
	})
}

// TestEndOfDayThatTimesOutSnapshotsAndArchives: an operator's end of day
// held by the journal's sync past the call's timeout (504 timeout) is
// followed, once its command is durable and applied, by the step that
// follows one answered done: a snapshot after it, and the segments before
// the last snapshot a start loads (the previous end of day's) moved to the
// archive. The call repeated meanwhile sends nothing (504 naming the
// first), and the step runs once. The snapshot and the archive ran only
// after an end of day answered done: this one took none, and the next end
// of day did both.
func TestEndOfDayThatTimesOutSnapshotsAndArchives(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, adminConfig())
	withMarketData(t, cfg)
	cfg.Journal.SegmentBytes = 65536 // a day fills several segments
	cfg.Journal.SnapshotInterval.Duration = 0
	s, hold := startHeld(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	iocBurst(t, c, "day1", 1500) // segments before the first end of day's snapshot
	var first ops.ActionResponse
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"day 1 done"}`, &first); code != 200 || first.EndOfDay == nil ||
		first.EndOfDay.SnapshotSeq < 0 {
		t.Fatalf("first end of day: %d %+v", code, first)
	}
	iocBurst(t, c, "day2", 1500) // their events write the states beside the first one's snapshot
	c.Close()
	hold.on.Store(true)
	timedOut := endOfDayTimesOut(t, s, "day 2 done", true)
	hold.on.Store(false)
	hold.release()
	var st ops.StatusInfo
	waitUntil(t, "the timed-out end of day's snapshot and archive", func() bool {
		st = ops.StatusInfo{}
		adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st)
		return st.LastEndOfDay != nil && st.LastEndOfDay.Seq == uint64(timedOut)
	})
	rep := *st.LastEndOfDay
	if rep.SnapshotSeq <= timedOut || rep.ArchivedThrough != first.EndOfDay.SnapshotSeq || rep.ArchivedSegs < 1 ||
		rep.SnapshotError != "" || rep.ArchiveError != "" {
		t.Fatalf("the timed-out end of day's report %+v: want a snapshot after seq %d and segments archived through the first one's "+
			"snapshot %d", rep, timedOut, first.EndOfDay.SnapshotSeq)
	}
	archived, err := filepath.Glob(filepath.Join(dir, "journal", journal.ArchiveDirName, "*"))
	if err != nil || len(archived) < rep.ArchivedSegs {
		t.Fatalf("archive holds %v (%v), want %d segments", archived, err, rep.ArchivedSegs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	snaps, err := journal.ListSnapshots(filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	var after []uint64
	for _, f := range snaps {
		if f.Seq > uint64(timedOut) {
			after = append(after, f.Seq)
		}
	}
	if len(after) != 1 {
		t.Fatalf("snapshots after the timed-out end of day (seq %d): %v, want one", timedOut, after)
	}
}

// TestTransitionWaitsForAnEndOfDayThatTimesOut: an operator ends the day
// in the open (POST /v1/eod), held by the journal's sync past the call's
// timeout (504), and the close comes due while the journal holds it. The
// close waits for that end of day and, once it is applied, is passed over
// as any transition of an ended day is: ACME stays open, as after an
// operator's end of day answered done. The close ran while the end of day
// was pending, its command journaled after it, and closed ACME.
func TestTransitionWaitsForAnEndOfDayThatTimesOut(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir := t.TempDir()
	s, hold, dayStart, clock, logs := heldInTheOpen(t, dir)
	hold.on.Store(true)
	endOfDayTimesOut(t, s, "closing early", false)
	clock.Store(dayStart.Add(8200 * time.Millisecond).UnixNano()) // the close due, the end of day not yet
	closeRuns := regexp.MustCompile(`msg="schedule: transition" transition="[^"]* close `)
	waitUntil(t, "the schedule at the close", func() bool {
		text := logs.String()
		return strings.Contains(text, "schedule: transition waits for an end of day whose call timed out") || closeRuns.MatchString(text)
	})
	hold.on.Store(false)
	hold.release()
	path, _ := scheduleRecord(t, dir)
	waitUntil(t, "the close recorded", func() bool {
		var st struct{ Last string }
		b, err := os.ReadFile(path)
		return err == nil && json.Unmarshal(b, &st) == nil && strings.Contains(st.Last, " close ")
	})
	if acme := instrumentsOf(t, s)["ACME"]; acme.Status != "Open" {
		t.Fatalf("ACME %s after the close of a day an operator ended, want Open (passed over):\n%s", acme.Status, logs.String())
	}
}

// endOfDayTimesOut posts an end of day that the held journal's sync keeps
// past the call's timeout: 504 timeout naming its seq, which it returns.
// With again, the call repeated meanwhile sends nothing: 504 naming the
// same seq.
func endOfDayTimesOut(t *testing.T, s *Server, reason string, again bool) (seq int64) {
	t.Helper()
	var first struct {
		Code string
		Seq  int64
	}
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"`+reason+`"}`, &first); code != 504 ||
		first.Code != "timeout" || first.Seq == 0 {
		t.Fatalf("an end of day held by the journal's sync: %d %+v, want 504 timeout with its seq", code, first)
	}
	if again {
		var repeated struct {
			Code string
			Seq  int64
		}
		if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"`+reason+`, again"}`, &repeated); code != 504 ||
			repeated.Seq != first.Seq {
			t.Fatalf("an end of day while the one before awaits the journal: %d %+v, want 504 naming seq %d", code, repeated, first.Seq)
		}
	}
	return first.Seq
}

// inTheOpen sets up a trading day venue's data directory dir in the open
// (5 s into a compressed day): started once on the clock now, which the
// test moves through clock, and stopped, so that it starts again on its
// record with nothing missed.
func inTheOpen(t *testing.T, dir string) (dayStart time.Time, clock *atomic.Int64, now func() time.Time) {
	t.Helper()
	dayStart = time.Now().Truncate(compressedDayLength)
	clock = new(atomic.Int64)
	clock.Store(dayStart.Add(5 * time.Second).UnixNano())
	now = func() time.Time { return time.Unix(0, clock.Load()) }
	tradingDayVenueAt(t, dir, now).Close()
	return dayStart, clock, now
}

// heldInTheOpen starts a venue on dir in the open of a compressed day
// (inTheOpen) whose journal's sync can be held (startHeld), logging at
// info to logs.
func heldInTheOpen(t *testing.T, dir string) (s *Server, hold *syncHold, dayStart time.Time, clock *atomic.Int64, logs *lockedbuf.Buffer) {
	t.Helper()
	dayStart, clock, now := inTheOpen(t, dir)
	logs = new(lockedbuf.Buffer)
	s, hold = startHeld(t, tradingDayVenueConfig(t, dir), Options{Now: now,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	return s, hold, dayStart, clock, logs
}

// TestScheduledEndOfDayRecordedOnceDurable: the schedule's end of day is
// held by the journal's sync past the call's timeout and past its retries,
// and the transition runs again (30 s later) while the sync still holds
// it: its command is in the journal's file, not durable. The day is not
// recorded as ended then; the venue crashes before the sync returns (the
// disk fails it, the power is cut, and what was never synced is lost). The
// restart runs that day's end of day, and CLIENT1's DAY order expires,
// once. The run that found the command in the file took it as journaled
// and recorded the day as ended: the restart ran no end of day, and the
// order rested into the next day.
func TestScheduledEndOfDayRecordedOnceDurable(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits for the schedule to run an end of day not done again (30 s)")
	}
	dir, dayStart := openDay(t, "d1")
	journalDir := filepath.Join(dir, "journal")
	var hold, fail atomic.Bool
	released := make(chan struct{})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(released) }) }
	t.Cleanup(release)
	// The journal's data syncs wait while hold is set, until release, and
	// then fail with fail set, as a disk that fails does.
	journalSync := func(f *os.File, kind journal.SyncKind) error {
		if kind == journal.SyncData && hold.Load() && strings.HasPrefix(f.Name(), journalDir+string(filepath.Separator)) {
			<-released
			if fail.Load() {
				return syscall.EIO
			}
		}
		return journal.DefaultSync(f, kind)
	}
	var clock atomic.Int64
	clock.Store(dayStart.Add(8500 * time.Millisecond).UnixNano()) // after the close, before the end of day
	cfg := tradingDayVenueConfig(t, dir)
	cfg.Admin.CallTimeout.Duration = 300 * time.Millisecond
	var logs lockedbuf.Buffer
	s := startServer(t, cfg, Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }, JournalSync: journalSync,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	hold.Store(true)
	clock.Store(dayStart.Add(9500 * time.Millisecond).UnixNano())
	// The first run's tries time out; the run after them finds the command
	// published (and in the journal's file).
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		text := logs.String()
		if strings.Contains(text, "schedule: end of day published, not yet durable and applied") ||
			strings.Contains(text, "schedule: end of day journaled already") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the end of day not run again within 60 s:\n%s", text)
		}
	}
	fail.Store(true)
	release()
	waitUntil(t, "the venue halted", func() bool { return s.pipe.Err() != nil })
	durable := s.pipe.Durable().Load()
	s.Close()
	// The power cut: what was written and never synced is lost.
	if err := journal.TruncateAfter(journalDir, durable, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	if n := endOfDaysJournaled(t, dir, false); n != 0 {
		t.Fatalf("%d end of day commands durable through seq %d, want none (the sync held them)", n, durable)
	}

	s = tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(9500*time.Millisecond)))
	if acme := instrumentsOf(t, s)["ACME"]; acme.RestingOrders != 0 {
		t.Errorf("the day's DAY order rests after the restart past its end of day: ACME %+v; the record %s", acme,
			func() []byte { _, b := scheduleRecord(t, dir); return b }())
	}
	var st ops.StatusInfo
	if adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st); st.LastEndOfDay == nil || st.LastEndOfDay.Expired != 1 {
		t.Errorf("the restart's end of day: %+v, want the day's DAY order expired", st.LastEndOfDay)
	}
	s.Close()
	wantOneEndOfDay(t, dir)
}

// TestCommandsThatTimeOutAreCounted: in the open, an operator's phase
// change (the group's close), end of day and session disable are each held
// by the journal's sync past the call's timeout (504 timeout). Once the
// journal has them, the matcher has applied them and the venue records
// them as done (the phase, the day's end and its snapshot, the disable),
// fixvenue_operator_actions_total counts each command once, with its
// result, as for calls answered done. Only calls answered done were
// counted: the counts stayed where they were.
func TestCommandsThatTimeOutAreCounted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, now := inTheOpen(t, dir)
	s, hold := startHeld(t, tradingDayVenueConfig(t, dir), Options{Now: now})
	done := func(text, action string) float64 {
		return metricstest.Float(t, text, `fixvenue_operator_actions_total{action="`+action+`",result="done"}`)
	}
	before := scrape(t, s)
	group := len(instrumentsOf(t, s)) // group "all" takes every instrument, open: each one's command moves it
	hold.on.Store(true)
	var timedOut struct{ Code string }
	if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, `{"reason":"closing early","group":"all","phase":"close"}`,
		&timedOut); code != 504 || timedOut.Code != "timeout" {
		t.Fatalf("a phase change held by the journal's sync: %d %+v, want 504 timeout", code, timedOut)
	}
	eod := endOfDayTimesOut(t, s, "closing early", false)
	if code := adminCall(t, s, "POST", "/v1/sessions/CLIENT2/disable", aliceToken, `{"reason":"unpaid bill"}`, &timedOut); code != 504 ||
		timedOut.Code != "timeout" {
		t.Fatalf("a disable held by the journal's sync: %d %+v, want 504 timeout", code, timedOut)
	}
	hold.on.Store(false)
	hold.release()
	waitUntil(t, "the three carried out as calls answered done", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, ops.PhasesFile))
		if err != nil || !strings.Contains(string(b), "Closed") {
			return false
		}
		var st ops.StatusInfo
		if adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st); st.LastEndOfDay == nil || st.LastEndOfDay.Seq != uint64(eod) {
			return false
		}
		var sessions []ops.SessionInfo
		adminCall(t, s, "GET", "/v1/sessions", aliceToken, "", &sessions)
		for _, si := range sessions {
			if si.CompID == "CLIENT2" {
				return si.Disabled
			}
		}
		return false
	})
	after := scrape(t, s)
	for _, c := range []struct {
		action string
		want   float64
	}{{"SetPhaseStatus", float64(group)}, {"EndOfDay", 1}, {"SessionDisable", 1}} {
		if got := done(after, c.action) - done(before, c.action); got != c.want {
			t.Errorf("fixvenue_operator_actions_total{action=%q,result=\"done\"} rose by %v, want %v", c.action, got, c.want)
		}
	}
}

// TestScheduledCommandThatTimesOutIsCounted: in the open the day's close
// comes due, and the schedule's command of its first instrument is held by
// the journal's sync past the call's timeout. The try after it waits for
// that command rather than send another, and once the journal has it,
// fixvenue_operator_actions_total counts it with its result (done), as a
// command answered in time, and the log says so: the group's instruments
// are each counted once done, none refused. The schedule's command that
// timed out was neither awaited nor counted: the try after it sent
// another, which changed nothing and was counted as refused
// (InvalidTransition).
func TestScheduledCommandThatTimesOutIsCounted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir := t.TempDir()
	s, hold, dayStart, clock, logs := heldInTheOpen(t, dir)
	count := func(text, result string) float64 {
		name := `fixvenue_operator_actions_total{action="SetPhaseStatus",result="` + result + `"}`
		if !strings.Contains(text, name+" ") {
			return 0 // none counted yet: the series of a refusal appears with its first
		}
		return metricstest.Float(t, text, name)
	}
	before := scrape(t, s)
	group := len(instrumentsOf(t, s)) // group "all" takes every instrument, open: each one's command moves it
	closeHeldPastItsTimeout(t, dir, hold, dayStart, clock, logs)
	after := scrape(t, s)
	if done, refused := count(after, "done")-count(before, "done"), count(after, "InvalidTransition")-count(before, "InvalidTransition"); done != float64(group) || refused != 0 {
		t.Errorf("the close counted %v done and %v refused (InvalidTransition), want %d done, none refused:\n%s", done, refused, group,
			logs.String())
	}
	if !strings.Contains(logs.String(), "operator command whose call timed out is durable and applied") {
		t.Errorf("the command whose call timed out not logged once applied:\n%s", logs.String())
	}
	for sym, in := range instrumentsOf(t, s) {
		if in.Status != "Closed" {
			t.Errorf("%s is %s after the close, want Closed", sym, in.Status)
		}
	}
}

// closeHeldPastItsTimeout brings the close due on a venue of
// heldInTheOpen with the journal's sync held until the schedule's first
// command of it timed out, then lets the journal go on and waits until
// the close is recorded.
func closeHeldPastItsTimeout(t *testing.T, dir string, hold *syncHold, dayStart time.Time, clock *atomic.Int64, logs *lockedbuf.Buffer) {
	t.Helper()
	hold.on.Store(true)
	clock.Store(dayStart.Add(8200 * time.Millisecond).UnixNano()) // the close due
	waitUntil(t, "the schedule's command timed out", func() bool {
		return strings.Contains(logs.String(), "schedule: command not confirmed; trying again")
	})
	hold.on.Store(false)
	hold.release()
	path, _ := scheduleRecord(t, dir)
	waitUntil(t, "the close recorded", func() bool {
		var st struct{ Last string }
		b, err := os.ReadFile(path)
		return err == nil && json.Unmarshal(b, &st) == nil && strings.Contains(st.Last, " close ")
	})
}

// TestPeriodicSnapshotWaitsForAnEndOfDayInFlight: while an operator's end
// of day is published and not yet answered (here, held by the journal's
// sync past its call's timeout) the periodic snapshot is held back, as it
// is once the day's end is not in schedule.state: the matcher may apply
// the end of day before the snapshot, and until the record names the day
// a start from that snapshot would not know the day ended. The snapshot
// was published in that window, at the seq after the end of day's.
func TestPeriodicSnapshotWaitsForAnEndOfDayInFlight(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir := t.TempDir()
	cfg, dayStart, opts, logs := periodicSnapshotsInTheOpen(t, dir)
	s, hold := startHeld(t, cfg, opts)
	restDayOrder(t, s, "before")
	unblock := blockWrite(t, dir, ops.ScheduleStateFile)
	hold.on.Store(true)
	eod := endOfDayTimesOut(t, s, "closing early", false)
	waitUntil(t, "the periodic snapshot held back while the end of day is in flight", func() bool {
		return strings.Contains(logs.String(), "periodic snapshot held back")
	})
	hold.on.Store(false)
	hold.release()
	waitUntil(t, "the end of day durable and applied", func() bool {
		return strings.Contains(logs.String(), "end of day whose call timed out is durable and applied")
	})
	// A DAY order of the day after its end: a restart that ran the end of
	// day again would expire it.
	restDayOrder(t, s, "after")
	s.Close()
	unblock()
	wantNoSnapshotAfter(t, dir, uint64(eod))
	wantDayOrderRestsAfterRestart(t, dir, dayStart)
	wantOneEndOfDay(t, dir)
}

// TestScheduledCommandThatTimesOutSaysItStaysHalted: an operator halted
// ACME in the open; at the close the schedule's command of ACME is held
// by the journal's sync past the call's timeout, and once the journal has
// it the matcher refuses it (InstrumentHalted). The log says once that ACME
// stays halted until an operator resumes it, as for a command answered in
// time, whichever settles the command first: the schedule's retry or the
// background settler, which said only its result.
func TestScheduledCommandThatTimesOutSaysItStaysHalted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir := t.TempDir()
	s, hold, dayStart, clock, logs := heldInTheOpen(t, dir)
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/halt", aliceToken, `{"reason":"news pending"}`, nil); code != 200 {
		t.Fatalf("halt ACME: %d", code)
	}
	closeHeldPastItsTimeout(t, dir, hold, dayStart, clock, logs)
	said := regexp.MustCompile(`msg="schedule: instrument stays halted until an operator resumes it" instrument=ACME`)
	if n := len(said.FindAllString(logs.String(), -1)); n != 1 {
		t.Errorf("the log says %d times that ACME stays halted, want once:\n%s", n, logs.String())
	}
	if acme := instrumentsOf(t, s)["ACME"]; acme.Status != "Halted" {
		t.Errorf("ACME %s after the close, want Halted", acme.Status)
	}
}
