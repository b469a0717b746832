package server

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/cluster"
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/fixvenue/fixvenue/schedule"
)

// haltedInItsOpen starts the closing-call day's venue on dir at 2.5 s (a
// first start: the groups open, recorded once done), then fails the
// journal's data syncs and has an operator's mass cancel halt the venue.
// logs are the venue's.
func haltedInItsOpen(t *testing.T, dir string, clock *dayClock, logs *lockedbuf.Buffer) *Server {
	t.Helper()
	clock.at(2500 * time.Millisecond)
	var fail atomic.Bool
	s := startServer(t, testConfig(t, dir, adminConfig()+closingCallDay),
		Options{Now: clock.now, JournalSync: failingSync(&fail), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	waitStatus(t, s, "ACME", "Open", readWait)
	waitUntil(t, "the first start's record", func() bool {
		_, err := os.Stat(filepath.Join(dir, ops.ScheduleStateFile))
		return err == nil
	})
	fail.Store(true)
	if code := adminCall(t, s, "POST", "/v1/cancel", aliceToken, `{"reason":"disk check","instrument":"all"}`, nil); code != 503 {
		t.Fatalf("a cancel whose sync failed answered %d, want 503", code)
	}
	waitUntil(t, "the venue halted", func() bool { return s.pipe.Err() != nil })
	return s
}

// resumedTo halts sym on s and resumes it, and returns the status the
// resume took it to: its group's phase as recorded.
func resumedTo(t *testing.T, s *Server, sym string) string {
	t.Helper()
	if code := adminCall(t, s, "POST", "/v1/instruments/"+sym+"/halt", aliceToken, `{"reason":"news"}`, nil); code != 200 {
		t.Fatalf("halt %s: %d", sym, code)
	}
	if code := adminCall(t, s, "POST", "/v1/instruments/"+sym+"/resume", aliceToken, `{"reason":"news out"}`, nil); code != 200 {
		t.Fatalf("resume %s: %d", sym, code)
	}
	return instrumentsOf(t, s)[sym].Status
}

// TestFailedPhaseChangeRecordsNothing: an operator's phase change (close
// the group, in its open) on a venue that halted is refused, its answer
// saying the group's phase is not recorded, and nothing is: after a
// restart the group stands where the journal has it, in its open, a halted
// instrument resumes into the open, and the schedule's record holds no
// operator's close. The phase was saved before the commands were journaled,
// so the restarted venue resumed ACME into the close that never happened.
func TestFailedPhaseChangeRecordsNothing(t *testing.T) {
	t.Parallel()
	dir, clock := t.TempDir(), newDayClock()
	s := haltedInItsOpen(t, dir, clock, &lockedbuf.Buffer{})
	clock.at(3 * time.Second)
	var refused struct{ Error, Code string }
	if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, `{"reason":"closing early","group":"all","phase":"close"}`,
		&refused); code != 503 || refused.Code != "halted" || !strings.Contains(refused.Error, `group "all"'s phase is not recorded as close`) {
		t.Errorf("a phase change on a halted venue answered %d %+v, want 503 halted saying the phase is not recorded", code, refused)
	}
	s.Close()
	if b, err := os.ReadFile(filepath.Join(dir, ops.PhasesFile)); err != nil || strings.Contains(string(b), "Closed") {
		t.Errorf("%s after the phase change that failed: %s (%v), want the group's open", ops.PhasesFile, b, err)
	}

	s = startServer(t, testConfig(t, dir, adminConfig()+closingCallDay), Options{Now: clock.now})
	if acme := instrumentsOf(t, s)["ACME"]; acme.Status != "Open" {
		t.Fatalf("after the restart ACME is %s, want Open", acme.Status)
	}
	if st := resumedTo(t, s, "ACME"); st != "Open" {
		t.Errorf("ACME resumed to %s after the restart, want Open: the group's phase the journal has", st)
	}
	_, record := scheduleRecord(t, dir)
	var rec struct {
		Groups map[string]ops.GroupRun `json:"groups"`
	}
	if err := json.Unmarshal(record, &rec); err != nil || rec.Groups["all"].Kind == schedule.Close {
		t.Errorf("the schedule's record after the phase change that failed: %s (%v), want no operator's close", record, err)
	}
}

// TestFailedTransitionRecordsNoPhase: the schedule's closing call comes on
// a venue that halted in the open: its commands fail and the group's phase
// is not recorded. Restarted on a configuration whose day has no closing
// call any more, the group is in its open, where a halted instrument
// resumes. The phase was saved before the commands, and the restarted
// venue resumed ACME into a closing call that never happened.
func TestFailedTransitionRecordsNoPhase(t *testing.T) {
	t.Parallel()
	dir, clock, logs := t.TempDir(), newDayClock(), &lockedbuf.Buffer{}
	s := haltedInItsOpen(t, dir, clock, logs)
	clock.at(6500 * time.Millisecond) // the closing call's time
	waitUntil(t, "the schedule stopped at its closing call", func() bool {
		return strings.Contains(logs.String(), "the venue halted; the schedule stops")
	})
	s.Close()
	if b, err := os.ReadFile(filepath.Join(dir, ops.PhasesFile)); err != nil || strings.Contains(string(b), "ClosingCall") {
		t.Errorf("%s after the closing call that failed: %s (%v), want the group's open", ops.PhasesFile, b, err)
	}

	noClosingCall := strings.Replace(closingCallDay, "closing_call = \"6s\"\n", "", 1)
	clock.at(6600 * time.Millisecond)
	s = startServer(t, testConfig(t, dir, adminConfig()+noClosingCall), Options{Now: clock.now})
	if acme := instrumentsOf(t, s)["ACME"]; acme.Status != "Open" {
		t.Fatalf("after the restart ACME is %s, want Open", acme.Status)
	}
	if st := resumedTo(t, s, "ACME"); st != "Open" {
		t.Errorf("ACME resumed to %s after the restart, want Open: the group's phase the journal has", st)
	}
}

// TestPhaseChangeThatTimesOutIsRecorded: an operator closes the group early
// (POST /v1/phase) in the open, held by the journal's sync past the call's
// timeout: 504 timeout, and the call repeated meanwhile sends nothing (504
// naming the same seq). Once the journal has the commands, the group's
// instruments are closed and its phase is recorded as a call answered
// done's is: a halted ACME resumes into the close, the schedule's record
// holds the operator's close, the call repeated is 409 invalid_transition,
// and a restart finds the same. The phase was recorded only by a call
// answered done: the venue's record kept the open (ACME resumed into it)
// until the operator repeated the call, and the group's other instruments
// were not sent.
func TestPhaseChangeThatTimesOutIsRecorded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, now := inTheOpen(t, dir)
	s, hold := startHeld(t, tradingDayVenueConfig(t, dir), Options{Now: now})
	const closeEarly = `{"reason":"closing early","group":"all","phase":"close"}`
	hold.on.Store(true)
	var first, repeated struct {
		Code, Error string
		Seq         int64
	}
	if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, closeEarly, &first); code != 504 || first.Code != "timeout" || first.Seq == 0 {
		t.Fatalf("a phase change held by the journal's sync: %d %+v, want 504 timeout with its seq", code, first)
	}
	if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, closeEarly, &repeated); code != 504 || repeated.Seq != first.Seq {
		t.Fatalf("a phase change while the one before awaits the journal: %d %+v, want 504 naming seq %d", code, repeated, first.Seq)
	}
	hold.on.Store(false)
	hold.release()
	waitUntil(t, "the group's phase recorded", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, ops.PhasesFile))
		return err == nil && strings.Contains(string(b), "Closed")
	})
	closedEarly := func(when string) {
		t.Helper()
		for sym, in := range instrumentsOf(t, s) {
			if in.Status != "Closed" {
				t.Errorf("%s: %s is %s, want Closed", when, sym, in.Status)
			}
		}
		if st := resumedTo(t, s, "ACME"); st != "Closed" {
			t.Errorf("%s: ACME resumed to %s, want Closed: the group's phase the operator set", when, st)
		}
		_, record := scheduleRecord(t, dir)
		var rec struct {
			Groups map[string]ops.GroupRun `json:"groups"`
		}
		if err := json.Unmarshal(record, &rec); err != nil || rec.Groups["all"].Kind != schedule.Close {
			t.Errorf("%s: the schedule's record %s (%v), want the operator's close of group all", when, record, err)
		}
		var e struct{ Code string }
		if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, closeEarly, &e); code != 409 || e.Code != "invalid_transition" {
			t.Errorf("%s: the phase change repeated: %d %+v, want 409 invalid_transition", when, code, e)
		}
	}
	closedEarly("the venue up")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, tradingDayVenueConfig(t, dir), Options{Now: now})
	closedEarly("after a restart")
}

// TestTransitionWaitsForAPhaseChangeThatTimesOut: an operator closes the
// group early in the open (POST /v1/phase), held by the journal's sync past
// the call's timeout (504), and the day's closing call comes due while the
// journal holds it. The closing call waits for that phase change and, once
// it is durable and applied and recorded, is passed over as after an early
// close answered done: ACME and LOTS stay closed, the schedule journals no
// command of it, its record is the closing call's with the group at the
// operator's close, phases.json and the phase gauge say closed, and the
// closing calls run count none. Run meanwhile, the closing call's commands
// were journaled after the operator's close and reopened order entry (ACME
// and LOTS in the closing call), counted as run and recorded as the
// group's place in its day.
func TestTransitionWaitsForAPhaseChangeThatTimesOut(t *testing.T) {
	t.Parallel()
	dir, clock, logs := t.TempDir(), newDayClock(), &lockedbuf.Buffer{}
	clock.at(5 * time.Second) // the open
	s, hold := startHeld(t, testConfig(t, dir, adminConfig()+closingCallDay), Options{Now: clock.now,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	waitStatus(t, s, "ACME", "Open", readWait)
	path := filepath.Join(dir, ops.ScheduleStateFile)
	waitUntil(t, "the first start's record", func() bool {
		_, err := os.Stat(path)
		return err == nil
	})

	hold.on.Store(true)
	var timedOut struct {
		Code string
		Seq  int64
	}
	if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, `{"reason":"closing early","group":"all","phase":"close"}`,
		&timedOut); code != 504 || timedOut.Code != "timeout" || timedOut.Seq == 0 {
		t.Fatalf("a phase change held by the journal's sync: %d %+v, want 504 timeout with its seq", code, timedOut)
	}
	clock.at(6200 * time.Millisecond) // the closing call due, the operator's close not yet durable
	const waits = "schedule: transition waits for a phase change whose call timed out"
	closingCallRuns := regexp.MustCompile(`msg="schedule: transition" transition="[^"]* closing_call `)
	waitUntil(t, "the schedule at the closing call", func() bool {
		text := logs.String()
		return strings.Contains(text, waits) || closingCallRuns.MatchString(text)
	})
	hold.on.Store(false)
	hold.release()
	var rec struct {
		Last   string
		Groups map[string]ops.GroupRun
	}
	waitUntil(t, "the closing call recorded", func() bool {
		b, err := os.ReadFile(path)
		return err == nil && json.Unmarshal(b, &rec) == nil && strings.Contains(rec.Last, " closing_call ")
	})

	text := logs.String()
	recorded := strings.Index(text, "phase change whose call timed out is durable and applied: recorded")
	passed := strings.Index(text, "schedule: transition passed over: its group is at this or a later phase")
	if w := strings.Index(text, waits); w < 0 || recorded < w || passed < recorded || closingCallRuns.MatchString(text) {
		t.Errorf("want the closing call to wait, the operator's close recorded, then the closing call passed over (never run):\n%s", text)
	}
	for sym, in := range instrumentsOf(t, s) {
		if in.Status != "Closed" {
			t.Errorf("%s is %s after the closing call, want Closed: the operator's early close stays closed", sym, in.Status)
		}
	}
	day, _, _ := strings.Cut(rec.Last, " ")
	if g := rec.Groups["all"]; g.Day != day || g.Kind != schedule.Close {
		t.Errorf("the schedule's record %+v: want group all at the operator's close of %s", rec, day)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ops.PhasesFile)); err != nil || string(b) != `{"all":"Closed"}` {
		t.Errorf("%s: %s (%v), want the group closed", ops.PhasesFile, b, err)
	}
	m := scrape(t, s)
	if got := metricstest.Value(t, m, `fixvenue_schedule_phase{group="all"}`); got != "3" {
		t.Errorf("the group's phase gauge %s, want 3 (closed)", got)
	}
	if got := metricstest.Value(t, m, `fixvenue_schedule_transitions_total{caught_up="false",kind="closing_call"}`); got != "0" {
		t.Errorf("closing calls run: %s, want 0 (passed over)", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The journal holds the operator's close of both instruments and
	// nothing of the schedule's closing call.
	var closes int
	for r, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		c, ok := venue.DecodeOperatorCommand(r.Payload)
		switch {
		case !ok || c.Action() != venue.OperatorActionTypeSetPhaseStatus:
		case string(c.Operator()) == "alice" && c.Status() == venue.TradingStatusClosed:
			closes++
		case string(c.Operator()) == ops.OperatorSchedule && strings.Contains(string(c.Reason()), "closing_call"):
			t.Errorf("seq %d: the schedule's closing call journaled (%s) after the operator's close", r.Seq, c.Reason())
		}
	}
	if closes != 2 {
		t.Errorf("the journal holds %d of the operator's close commands, want 2 (ACME, LOTS)", closes)
	}
}

// TestPhaseChangeThatTimesOutRecordsAsAnswered: before the day's pre-open
// the group is closed, and an operator closes it (POST /v1/phase), on one
// venue answered, on another held by the journal's sync past the call's
// timeout (504); the call repeated then (409 invalid_transition, once the
// one before is durable and applied) says the group is closed. Both leave
// the same schedule.state and phases.json: the close that changed nothing
// (409 when answered) records nothing, and the day's pre-open opens the
// call at its time; one that closed ACME, which an operator had opened,
// is the operator's phase of the day. The timed-out close that changed
// nothing was recorded as the operator's phase of the day, and the
// schedule passed over the group's whole day (pre-open, open, close),
// leaving it closed.
func TestPhaseChangeThatTimesOutRecordsAsAnswered(t *testing.T) {
	t.Parallel()
	dayStart := newDayClock().dayStart // both venues' day
	for _, c := range []struct {
		name     string
		openACME bool // ACME opened before the close: it moves
		answered int
	}{{"nothing changed", false, 409}, {"ACME closed", true, 200}} {
		t.Run(c.name, func(t *testing.T) {
			// One venue at a time: they name the same sessions (venueCompID).
			answered := closedBeforePreOpen(t, dayStart, c.openACME, false, c.answered)
			if err := answered.s.Close(); err != nil {
				t.Fatal(err)
			}
			timedOut := closedBeforePreOpen(t, dayStart, c.openACME, true, 504)
			if timedOut.records != answered.records {
				t.Fatalf("the records after the close whose call timed out:\n%s\nwant those after the call answered:\n%s",
					timedOut.records, answered.records)
			}
			if c.openACME {
				if timedOut.records == timedOut.before {
					t.Fatalf("the close that closed ACME recorded nothing:\n%s", timedOut.records)
				}
				return
			}
			if timedOut.records != timedOut.before {
				t.Fatalf("the close that changed nothing changed the records from\n%s\nto\n%s", timedOut.before, timedOut.records)
			}
			timedOut.clock.at(1200 * time.Millisecond) // the pre-open
			waitStatus(t, timedOut.s, "ACME", "OpeningCall", readWait)
		})
	}
}

// closedBefore is a venue an operator closed the group of before its
// pre-open (closedBeforePreOpen): its schedule.state and phases.json
// before and after.
type closedBefore struct {
	s               *Server
	clock           *dayClock
	before, records string
}

// closedBeforePreOpen starts the closing-call day's venue on a new data
// directory at 0.5 s into the day starting at dayStart (a first start:
// closed, recorded), has an operator open ACME (resume) when openACME, and
// close the group (POST /v1/phase), answered want (504: held by the
// journal's sync past the call's timeout); the call repeated then is
// 409 invalid_transition.
func closedBeforePreOpen(t *testing.T, dayStart time.Time, openACME, hold bool, want int) closedBefore {
	t.Helper()
	dir, clock := t.TempDir(), &dayClock{dayStart: dayStart}
	clock.at(500 * time.Millisecond) // before the pre-open: closed
	s, held := startHeld(t, testConfig(t, dir, adminConfig()+closingCallDay), Options{Now: clock.now})
	statePath, phasesPath := filepath.Join(dir, ops.ScheduleStateFile), filepath.Join(dir, ops.PhasesFile)
	waitUntil(t, "the first start's record", func() bool {
		_, err := os.Stat(statePath)
		return err == nil
	})
	records := func() string {
		t.Helper()
		state, err := os.ReadFile(statePath)
		if err != nil {
			t.Fatal(err)
		}
		phases, err := os.ReadFile(phasesPath)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s: %s\n%s: %s", ops.ScheduleStateFile, state, ops.PhasesFile, phases)
	}
	v := closedBefore{s: s, clock: clock, before: records()}
	if openACME {
		if code := adminCall(t, s, "POST", "/v1/instruments/ACME/resume", aliceToken, `{"reason":"early bird"}`, nil); code != 200 {
			t.Fatalf("open ACME: %d", code)
		}
		waitStatus(t, s, "ACME", "Open", readWait)
	}
	const closeEarly = `{"reason":"closing early","group":"all","phase":"close"}`
	held.on.Store(hold)
	var e struct{ Code string }
	if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, closeEarly, &e); code != want {
		t.Fatalf("a close of the group before its pre-open (held %v): %d %+v, want %d", hold, code, e, want)
	}
	held.on.Store(false)
	held.release()
	// The call repeated waits for one that timed out to be durable and
	// applied, and settled, before it looks at the group.
	if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, closeEarly, &e); code != 409 || e.Code != "invalid_transition" {
		t.Fatalf("the close repeated: %d %+v, want 409 invalid_transition", code, e)
	}
	v.records = records()
	return v
}

// TestFollowerRecordsPhaseChangesAsTheLeader: before the day's pre-open the
// group is closed, and an operator closes it (POST /v1/phase): once
// changing nothing (409), once closing ACME, which an operator had opened
// (200). A cluster's follower, applying the venue's journal as it applies
// committed commands (the commands, the matcher's events), keeps the
// group's phase and its place in the day as the venue recorded them
// (phases.json, schedule.state), and a new leader started on the progress
// it saves opens the call at the pre-open after the close that changed
// nothing, and keeps ACME closed after the one that closed it. The
// follower took the close that changed nothing for the operator's phase of
// the day, and the new leader passed over the group's whole day (pre-open,
// open, close), leaving it closed.
func TestFollowerRecordsPhaseChangesAsTheLeader(t *testing.T) {
	t.Parallel()
	dayStart := newDayClock().dayStart
	for _, c := range []struct {
		name     string
		openACME bool
		answered int
		want     string // ACME on the new leader at the pre-open
	}{{"nothing changed", false, 409, "OpeningCall"}, {"ACME closed", true, 200, "Closed"}} {
		t.Run(c.name, func(t *testing.T) {
			leader := closedBeforePreOpen(t, dayStart, c.openACME, false, c.answered)
			dir, cfg := leader.s.cfg.Venue.DataDir, leader.s.cfg
			if err := leader.s.Close(); err != nil {
				t.Fatal(err)
			}
			leaderGroups, leaderPhases := recordedProgress(t, dir)
			p := replicaProgress(t, dir, cfg)
			phases := map[string]string{}
			for g, st := range p.Phases() {
				phases[g] = st.String()
			}
			if !reflect.DeepEqual(p.groups, leaderGroups) || !reflect.DeepEqual(phases, leaderPhases) {
				t.Fatalf("the follower's groups %v and phases %v, want the venue's records %v and %v", p.groups, phases,
					leaderGroups, leaderPhases)
			}

			// The new leader: the same journal, and the progress its
			// follower saves (the phases are the venue's, as compared).
			if err := p.save(dir, cfg.Schedule); err != nil {
				t.Fatal(err)
			}
			leader.clock.at(1200 * time.Millisecond) // the pre-open
			s := startServer(t, testConfig(t, dir, adminConfig()+closingCallDay), Options{Now: leader.clock.now})
			if acme := instrumentsOf(t, s)["ACME"]; acme.Status != c.want {
				t.Fatalf("ACME on a new leader at the pre-open: %s, want %s", acme.Status, c.want)
			}
		})
	}
}

// recordedProgress is where a venue on dir recorded its groups in their
// day (schedule.state) and their phases (phases.json).
func recordedProgress(t *testing.T, dir string) (map[string]ops.GroupRun, map[string]string) {
	t.Helper()
	var state struct {
		Groups map[string]ops.GroupRun `json:"groups"`
	}
	var phases map[string]string
	for file, v := range map[string]any{ops.ScheduleStateFile: &state, ops.PhasesFile: &phases} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	return state.Groups, phases
}

// replicaProgress is the trading day's progress a cluster's follower keeps
// from the journal on dir, applied as it applies committed commands: each
// command shown to the progress, then applied by a matcher whose events it
// takes (as a Raft snapshot's state is built, cluster.MatcherState).
func replicaProgress(t *testing.T, dir string, cfg *config.Config) *scheduleProgress {
	t.Helper()
	p := newScheduleProgress(cfg)
	st, err := cluster.NewMatcherState(MatcherConfig(cfg), map[string]cluster.StatePart{partScheduleProgress: p})
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Apply(rec.Seq, rec.Payload); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestPhaseChangeFailingPartwayRecordsAsTheFollower: in the open, a phase
// change of the group (ACME, then LOTS) fails partway: ACME's command is
// durable, and the journal's sync fails at LOTS's, halting the venue. Once
// an operator's close (503, its error naming ACME as moved and the phase as
// recorded), once the schedule's closing call. The venue records the
// group's phase and its place in the day (phases.json, schedule.state) as
// a cluster's follower applying its journal does, from ACME's command. The
// venue recorded nothing of a change that failed, whatever it had applied,
// and the follower, and so a new leader, had the group in the new phase
// where the venue kept the open.
func TestPhaseChangeFailingPartwayRecordsAsTheFollower(t *testing.T) {
	t.Parallel()
	for _, by := range []string{"operator", "schedule"} {
		t.Run(by, func(t *testing.T) {
			dir, clock, logs := t.TempDir(), newDayClock(), &lockedbuf.Buffer{}
			clock.at(5 * time.Second) // the open
			journalDir := filepath.Join(dir, "journal")
			// Once armed, the journal's first data sync passes (ACME's
			// command) and the later ones fail (LOTS's).
			var armed atomic.Bool
			var syncs atomic.Int32
			journalSync := func(f *os.File, kind journal.SyncKind) error {
				if kind == journal.SyncData && armed.Load() && strings.HasPrefix(f.Name(), journalDir+string(filepath.Separator)) &&
					syncs.Add(1) > 1 {
					return syscall.EIO
				}
				return journal.DefaultSync(f, kind)
			}
			cfg := testConfig(t, dir, adminConfig()+closingCallDay)
			s := startServer(t, cfg, Options{Now: clock.now, JournalSync: journalSync,
				Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
			waitStatus(t, s, "ACME", "Open", readWait)
			waitUntil(t, "the first start's record", func() bool {
				_, err := os.Stat(filepath.Join(dir, ops.ScheduleStateFile))
				return err == nil
			})
			armed.Store(true)
			if by == "operator" {
				var e struct{ Error, Code string }
				code := adminCall(t, s, "POST", "/v1/phase", aliceToken, `{"reason":"closing early","group":"all","phase":"close"}`, &e)
				if code != 503 || !strings.Contains(e.Error, "ACME moved to close before it") ||
					!strings.Contains(e.Error, `group "all"'s phase is recorded as close`) {
					t.Errorf("a close whose second command's sync failed: %d %+v, want 503 naming ACME as moved and the phase recorded", code, e)
				}
			} else {
				clock.at(6200 * time.Millisecond) // the closing call
				waitUntil(t, "the schedule stopped at its closing call", func() bool {
					return strings.Contains(logs.String(), "the venue halted; the schedule stops")
				})
				if !regexp.MustCompile(`schedule: status change failed" instrument=LOTS`).MatchString(logs.String()) {
					t.Fatalf("want the closing call to fail at LOTS, after ACME:\n%s", logs.String())
				}
			}
			s.Close()
			followerRecordsAsTheVenue(t, dir, cfg, map[string]string{"operator": "Closed", "schedule": "ClosingCall"}[by])
		})
	}
}

// followerRecordsAsTheVenue checks that the venue stopped on dir recorded
// group all's phase as want, and that a cluster's follower applying its
// journal keeps the venue's records of the groups' phases and places in
// their day.
func followerRecordsAsTheVenue(t *testing.T, dir string, cfg *config.Config, want string) {
	t.Helper()
	leaderGroups, leaderPhases := recordedProgress(t, dir)
	if leaderPhases["all"] != want {
		t.Errorf("the venue's phases %v, want group all %s: a command of the change is durable", leaderPhases, want)
	}
	p := replicaProgress(t, dir, cfg)
	phases := map[string]string{}
	for g, st := range p.Phases() {
		phases[g] = st.String()
	}
	if !reflect.DeepEqual(p.groups, leaderGroups) || !reflect.DeepEqual(phases, leaderPhases) {
		t.Errorf("the follower's groups %v and phases %v, want the venue's records %v and %v", p.groups, phases,
			leaderGroups, leaderPhases)
	}
}

// TestPhaseChangeTimedOutThenBusyRecordsAsTheFollower: in the open, an
// operator closes a group of eight instruments on a command ring of two
// slots, the journal's sync held: ACME's command times out, and publishing
// the others finds the ring full (503 busy, naming the commands published
// and saying the phase is recorded once the journal has them). Once it
// does, the venue records the group's phase and place in its day as a
// cluster's follower applying its journal does. The venue recorded nothing
// of a change whose rest could not be published, and the follower had the
// group closed where the venue kept the open.
func TestPhaseChangeTimedOutThenBusyRecordsAsTheFollower(t *testing.T) {
	t.Parallel()
	dir, clock := t.TempDir(), newDayClock()
	clock.at(5 * time.Second) // the open
	extra := adminConfig() + closingCallDay
	for id := 3; id <= 8; id++ {
		extra += fmt.Sprintf("[[instrument]]\nid = %d\nsymbol = \"X%d\"\ntick_size = \"0.01\"\nlot_size = 1\nmin_qty = 1\n"+
			"max_qty = 1000\nref_price = \"10.00\"\nband_percent = 10\n", id, id)
	}
	cfg := testConfig(t, dir, extra)
	cfg.Engine.CommandRingSlots = 2
	cfg.Engine.ClaimTimeout.Duration = 100 * time.Millisecond
	cfg.Journal.SnapshotInterval.Duration = 0
	s, hold := startHeld(t, cfg, Options{Now: clock.now})
	waitStatus(t, s, "ACME", "Open", readWait)
	waitUntil(t, "the first start's record", func() bool {
		_, err := os.Stat(filepath.Join(dir, ops.PhasesFile))
		return err == nil
	})
	hold.on.Store(true)
	var e struct{ Error, Code string }
	code := adminCall(t, s, "POST", "/v1/phase", aliceToken, `{"reason":"closing early","group":"all","phase":"close"}`, &e)
	if code != 503 || e.Code != "busy" || !strings.Contains(e.Error, `its phase is recorded as close once the journal has them`) {
		t.Errorf("a close whose first command timed out and whose rest met a full ring: %d %+v, want 503 busy saying the phase "+
			"is recorded once the journal has the commands published", code, e)
	}
	hold.on.Store(false)
	hold.release()
	// Recorded once the journal has the commands: waited for (bounded),
	// then compared with the follower's.
	for deadline := time.Now().Add(readWait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, ops.PhasesFile)); err == nil && strings.Contains(string(b), "Closed") {
			break
		}
	}
	s.Close()
	followerRecordsAsTheVenue(t, dir, cfg, "Closed")
}

// TestPhaseChangeNotRecordedHoldsSnapshotsBack: an operator closes the
// group early, ACME halted, while a full disk refuses one of the change's
// records (here a directory where its temporary file goes): phases.json,
// where a resume takes a halted instrument, or schedule.state, where the
// group stands in its day. The change is done all the same (200, its
// commands durable). A start takes each record and the commands after its
// snapshot, so the periodic snapshots wait; a restart meanwhile, after the
// closing call's time, takes the change from the journal (ACME resumes
// into the close; the closing call is passed over) and writes it; and once
// the disk takes the record, a snapshot follows, from which a restart
// keeps the change too. A snapshot taken after the change made the next
// start resume ACME into the open, or run the closing call.
func TestPhaseChangeNotRecordedHoldsSnapshotsBack(t *testing.T) {
	t.Parallel()
	for _, file := range []string{ops.PhasesFile, ops.ScheduleStateFile} {
		t.Run(file, func(t *testing.T) {
			dir, clock := t.TempDir(), newDayClock()
			cfg := testConfig(t, dir, adminConfig()+closingCallDay)
			cfg.Journal.SnapshotInterval.Duration = 100 * time.Millisecond
			clock.at(2500 * time.Millisecond)
			var logs lockedbuf.Buffer
			s := startServer(t, cfg, Options{Now: clock.now, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			waitStatus(t, s, "ACME", "Open", readWait)
			waitUntil(t, "the first start's records", func() bool {
				_, err1 := os.Stat(filepath.Join(dir, ops.ScheduleStateFile))
				_, err2 := os.Stat(filepath.Join(dir, ops.PhasesFile))
				return err1 == nil && err2 == nil
			})
			if code := adminCall(t, s, "POST", "/v1/instruments/ACME/halt", aliceToken, `{"reason":"news"}`, nil); code != 200 {
				t.Fatalf("halt ACME: %d", code)
			}
			unblock := blockWrite(t, dir, file)
			clock.at(3 * time.Second)
			var res ops.ActionResponse
			if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, `{"reason":"closing early","group":"all","phase":"close"}`, &res); code != 200 {
				t.Fatalf("close with %s unwritable: %d, want 200 (the commands are durable)", file, code)
			}
			waitStatus(t, s, "LOTS", "Closed", readWait)
			// Commands (refused: ACME halted) after the change: a periodic
			// snapshot is due.
			n := 0
			rest := func(c *fixclient.Client) {
				t.Helper()
				id := fmt.Sprintf("o%d", n)
				n++
				sendOrder(t, c, order{id: id, side: "1", qty: "1", px: "99.00"})
				expectER(t, c, map[int]string{11: id})
			}
			c := logon(t, s, "CLIENT1", true)
			waitUntil(t, "the periodic snapshot held back, or taken", func() bool {
				rest(c)
				return strings.Contains(logs.String(), "periodic snapshot held back") || snapshotAfter(t, dir, res.Seq) != 0
			})
			if seq := snapshotAfter(t, dir, res.Seq); seq != 0 {
				t.Fatalf("snapshot %d taken after the phase change (seq %d) while %s lacks it", seq, res.Seq, file)
			}
			if !strings.Contains(logs.String(), file) {
				t.Errorf("the log does not name %s:\n%s", file, logs.String())
			}
			c.Close()
			s.Close()

			// A restart after the closing call's time, the record still
			// refused: the journal has the change.
			clock.at(6500 * time.Millisecond)
			s = startServer(t, cfg, Options{Now: clock.now})
			kept := func(when string) {
				t.Helper()
				if lots := instrumentsOf(t, s)["LOTS"]; lots.Status != "Closed" {
					t.Fatalf("%s LOTS is %s, want Closed: the closing call ran over the operator's early close", when, lots.Status)
				}
				if code := adminCall(t, s, "POST", "/v1/instruments/ACME/resume", aliceToken, `{"reason":"news out"}`, nil); code != 200 {
					t.Fatalf("resume ACME %s: %d", when, code)
				}
				if acme := instrumentsOf(t, s)["ACME"]; acme.Status != "Closed" {
					t.Fatalf("%s ACME resumed to %s, want Closed: the phase the operator set", when, acme.Status)
				}
				if code := adminCall(t, s, "POST", "/v1/instruments/ACME/halt", aliceToken, `{"reason":"news"}`, nil); code != 200 {
					t.Fatalf("halt ACME %s: %d", when, code)
				}
			}
			kept("after a restart from the journal")
			c = logon(t, s, "CLIENT1", true)
			unblock()
			durable := uint64(s.Pipeline().Durable().Load())
			// A snapshot a start loads: its side states are written at the
			// first event of a later command (usableSnapshot).
			waitUntil(t, "a snapshot a start loads, once the record is written", func() bool {
				rest(c)
				seq, ok := s.usableSnapshot(math.MaxUint64)
				return ok && seq > durable
			})
			c.Close()
			// Read once the venue has stopped: the disconnect's command, and
			// an order still on its way, are journaled after c.Close
			// returns, and a restart replays them too.
			s.Close()
			total := s.Pipeline().Durable().Load() + 1
			s = startServer(t, cfg, Options{Now: clock.now})
			if after := total - int64(durable) - 1; s.Replayed() >= after {
				t.Fatalf("the restart replayed %d commands: it loaded no snapshot taken after seq %d", s.Replayed(), durable)
			}
			kept("after a restart from a snapshot taken after the change")
		})
	}
}
