package ops

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/pipeline"
	"github.com/fixvenue/fixvenue/internal/durable"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/fixvenue/fixvenue/schedule"
)

// catchUpMax bounds the transitions run at start for the time the venue was
// down: the last ones are what decides the state (schedule.Plan.Between).
const catchUpMax = 64

// ScheduleStateFile, in the data directory, records the last transition
// run, so that a restart runs the ones it missed and no other.
const ScheduleStateFile = "schedule.state"

type scheduleState struct {
	LastUnixNs int64  `json:"last_unix_ns"`
	Last       string `json:"last"`
	// Kind and the group place the last transition among others at the
	// same instant (schedule.Transition.After); without them (kind 0) every
	// transition at that time counts as run. The group is named by
	// GroupName: groups may be reordered in the configuration between
	// restarts, so a start takes every transition of Kind at that instant
	// as not run, and Groups says which groups ran theirs. Group, its
	// position when written, is read only from a record that names no group
	// (written before names were kept, or the end of day's: -1).
	Kind      schedule.Kind `json:"kind,omitempty"`
	Group     int           `json:"group,omitempty"`
	GroupName string        `json:"group_name,omitempty"`
	// Groups is, by group name, where each group stands in its day: the
	// last transition the schedule ran of it, or the phase an operator
	// moved it to since (operatorSetPhase). A transition of that trading
	// day at or before it in the group's day (schedule.PhaseOrder) is
	// passed over (groupPassed), so that times changed in the
	// configuration never take a group back within a day (pre_open moved
	// later after the open ran put the group back into the opening call),
	// and an operator's early close stays closed.
	Groups map[string]GroupRun `json:"groups,omitempty"`
	// EndedDay is the last trading day whose end of day the schedule ran
	// (schedule.Transition.Day): a transition of that day or an earlier one
	// is passed over (dayEnded), so that an end_of_day (or a close) moved
	// later in the configuration after the day's end of day ran does not
	// run a second one the same day.
	EndedDay string `json:"ended_day,omitempty"`
}

// GroupRun is where a group stands in its day: the trading day and kind of
// its last transition run, or of the phase an operator set.
type GroupRun struct {
	Day  string        `json:"day"`
	Kind schedule.Kind `json:"kind"`
}

func (o *Ops) statePath() string { return filepath.Join(o.cfg.DataDir, ScheduleStateFile) }

func (o *Ops) loadScheduleState() (schedule.Transition, bool, error) {
	b, err := os.ReadFile(o.statePath())
	if errors.Is(err, os.ErrNotExist) {
		return schedule.Transition{}, false, nil
	}
	if err != nil {
		return schedule.Transition{}, false, err
	}
	var st scheduleState
	if err := json.Unmarshal(b, &st); err != nil {
		return schedule.Transition{}, false, fmt.Errorf("%s: %w", o.statePath(), err)
	}
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	o.endedDay, o.groupsRun = st.EndedDay, configuredGroups(st.Groups, o.cfg.Schedule.Groups)
	for name, run := range configuredGroups(o.cfg.Groups, o.cfg.Schedule.Groups) {
		// The journal after the start's snapshot holds a place the record
		// lacks (its write refused, or a stop before it): it is the later.
		if was, ok := o.groupsRun[name]; !ok || was != run {
			if o.groupsRun == nil {
				o.groupsRun = map[string]GroupRun{}
			}
			o.log.Warn("schedule: the journal holds an operator's phase change the record lacks (where the group stands in its day); recording it",
				"group", name, "day", run.Day, "phase", run.Kind.String(), "file", o.statePath())
			o.groupsRun[name], o.stateUnsaved = run, true
		}
	}
	if day, rest, ok := strings.Cut(st.Last, " "); o.endedDay == "" && st.Kind == schedule.EndOfDay && ok &&
		strings.HasPrefix(rest, schedule.EndOfDay.String()) {
		// A record written before ended_day was kept, whose last
		// transition is an end of day: Last is that transition's String.
		o.endedDay = day
	}
	o.endedDayWritten = o.endedDay
	last := schedule.Through(time.Unix(0, st.LastUnixNs))
	if st.Kind != 0 {
		last = schedule.Transition{At: last.At, Kind: st.Kind, Group: st.Group}
		if st.GroupName != "" {
			last.Group = -1 // before every group's: groupPassed passes over the ones run
		}
	}
	// An operator's end of day before the schedule runs a transition
	// rewrites the record with it (endDay).
	o.saved, o.savedWhat, o.savedOK = last, st.Last, true
	return last, true, nil
}

// schedulePosition is where the schedule stands: the last transition run
// (saved), or the clock's instant before the schedule's first record. What
// GET /v1/status names as next follows it, as the metric does: a
// transition due and not yet run (a clock stepped ahead past it, a
// catch-up in progress) is next, not the one after the clock.
func (o *Ops) schedulePosition() schedule.Transition {
	o.stateMu.Lock()
	saved, ok := o.saved, o.savedOK
	o.stateMu.Unlock()
	if ok {
		return saved
	}
	return schedule.Through(o.cfg.Now())
}

// saveScheduleState records last as the last transition run, and reports
// whether it is recorded.
func (o *Ops) saveScheduleState(last schedule.Transition, what string) bool {
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	o.saved, o.savedWhat, o.savedOK = last, what, true
	if last.Group >= 0 && last.Group < len(o.cfg.Schedule.Groups) && last.Kind != schedule.EndOfDay {
		if o.groupsRun == nil {
			o.groupsRun = map[string]GroupRun{}
		}
		name := o.cfg.Schedule.Groups[last.Group].Name
		// A transition passed over (groupPassed) leaves the group where
		// it is in its day: at an operator's phase, or a later one run.
		if ran, ok := o.groupsRun[name]; !ok || ran.Day != last.Day || schedule.PhaseOrder(ran.Kind) < schedule.PhaseOrder(last.Kind) {
			o.groupsRun[name] = GroupRun{Day: last.Day, Kind: last.Kind}
		}
	}
	return o.writeScheduleState()
}

// operatorSetPhase records that an operator moved group g to the phase
// kind at t (POST /v1/phase): the group stands there in the trading day
// in progress (schedule.Plan.DayInProgress), and the schedule passes over
// its transitions of that day at or before kind in the group's day
// (groupPassed), running the later ones and the next day's. An operator's
// early close stays closed: the day's closing call would have reopened
// order entry. A change after the day's end of day counts in no day.
// docs/ARCHITECTURE.md, "Operations: the control plane and the trading
// day".
func (o *Ops) operatorSetPhase(g int, kind schedule.Kind, t time.Time) {
	day, ok := o.plan.DayInProgress(t)
	if !ok {
		return
	}
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	if o.groupsRun == nil {
		o.groupsRun = map[string]GroupRun{}
	}
	o.groupsRun[o.cfg.Schedule.Groups[g].Name] = GroupRun{Day: day, Kind: kind}
	if o.savedOK {
		// Written now: a restart's catch-up passes those transitions over
		// too. Before the schedule's first record, that record holds it.
		o.writeScheduleState()
	}
}

// endDay records that the end of day of the trading day day ran (the
// schedule's or an operator's): the schedule runs no transition of that day
// or an earlier one afterwards (dayEnded). A day before the one recorded
// changes nothing.
func (o *Ops) endDay(day string) {
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	o.endDayLocked(day)
}

// setEndingDay sets endingDay ("" once its end of day is answered).
func (o *Ops) setEndingDay(day string) {
	o.stateMu.Lock()
	o.endingDay = day
	o.stateMu.Unlock()
}

// endDayLocked is endDay with stateMu held.
func (o *Ops) endDayLocked(day string) {
	if o.endedDay != "" && !schedule.DayAfter(day, o.endedDay) {
		return
	}
	o.endedDay = day
	if o.savedOK {
		o.writeScheduleState()
	}
}

// awaitedEndOfDay is an end of day published whose call timed out, and
// the trading day it ends ("" without a schedule); result is the wait for
// its result, which the call kept (appliedResult).
type awaitedEndOfDay struct {
	seq    uint64
	day    string
	result <-chan Result
}

// what names a's end of day in logs and errors.
func (a awaitedEndOfDay) what() string {
	if a.day == "" {
		return fmt.Sprintf("the end of day published at seq %d", a.seq)
	}
	return fmt.Sprintf("the end of day of %s published at seq %d", a.day, a.seq)
}

// awaitEndOfDay notes that the end of day command seq, which ends the
// trading day day, was published and its call timed out: the matcher
// applies it once the journal has it, whatever the caller was answered
// (504 timeout), and the day has ended then, as a cluster's follower
// counts it from the command's result. recordAwaited records it, and
// archiveAwaited then runs its snapshot and archive; result is the wait
// for its result.
func (o *Ops) awaitEndOfDay(seq uint64, day string, result <-chan Result) {
	noteAwaited(o, &o.awaited, awaitedEndOfDay{seq: seq, day: day, result: result})
}

// appliedResult is the result of an awaited command, durable and applied,
// from the wait its call kept (result), and counts it in
// fixvenue_operator_actions_total as a call answered then counts its
// command (do): a command whose call timed out is applied all the same,
// and counted then, once. The Monitor hands a result to its wait before it
// counts the command as applied, so it is there; ok is false if not.
func (o *Ops) appliedResult(result <-chan Result) (r Result, ok bool) {
	select {
	case r = <-result:
	default:
		return r, false
	}
	if o.metrics != nil {
		o.metrics.action(r)
	}
	return r, true
}

// noteAwaited adds a to one list of awaited commands (under stateMu) and
// wakes recordAwaited.
func noteAwaited[T any](o *Ops, list *[]T, a T) {
	o.stateMu.Lock()
	*list = append(*list, a)
	o.stateMu.Unlock()
	o.signalAwaited()
}

// takeApplied splits, in order (stateMu held), the awaited commands of list
// that mine selects into those durable and applied before the first that
// is not (due) and the others (kept, mine's or not), and returns that first
// one (waiting false: none is). Carried out in list order, a command is
// never carried out after one published later.
func takeApplied[T any](o *Ops, list []T, seq func(T) uint64, mine func(T) bool) (due, kept []T, first T, waiting bool) {
	kept = list[:0]
	for _, a := range list {
		switch {
		case !mine(a):
			kept = append(kept, a)
		case !waiting && o.applied(seq(a)):
			due = append(due, a)
		default:
			kept = append(kept, a)
			if !waiting {
				first, waiting = a, true
			}
		}
	}
	return due, kept, first, waiting
}

// settleEndOfDaysLocked records as ended (stateMu held) the days of the
// awaited end of days that are durable and applied (their result seen by
// the Monitor), hands each to archiveAwaited, once, and returns the first
// one still awaited (waiting false: none is).
func (o *Ops) settleEndOfDaysLocked() (first awaitedEndOfDay, waiting bool) {
	if len(o.awaited) == 0 {
		return first, false
	}
	kept := o.awaited[:0]
	for _, a := range o.awaited {
		if o.applied(a.seq) {
			o.appliedResult(a.result)
			o.log.Info("end of day whose call timed out is durable and applied: its trading day has ended; its snapshot and "+
				"archive follow", "seq", a.seq, "day", a.day)
			if a.day != "" {
				o.endDayLocked(a.day)
			}
			o.awaitedDone = append(o.awaitedDone, a)
			select {
			case o.archiveSignal <- struct{}{}:
			default:
			}
		} else {
			kept = append(kept, a)
		}
	}
	o.awaited = kept
	if len(kept) == 0 {
		return first, false
	}
	return kept[0], true
}

// awaitEndOfDays waits (timeout at most) until every awaited end of day is
// durable and applied, and records their days. An error says one is not:
// nothing else about the day can be known yet, and an end of day sent now
// would end that day a second time once it is (r.Seq is its seq).
func (o *Ops) awaitEndOfDays(timeout time.Duration) (r Result, err error) {
	return o.awaitSettled(timeout, func() (Result, string, bool) {
		o.stateMu.Lock()
		a, waiting := o.settleEndOfDaysLocked()
		o.stateMu.Unlock()
		return Result{Seq: a.seq, Action: venue.OperatorActionTypeEndOfDay},
			fmt.Sprintf("%s (its call timed out), which ends its day once it is: nothing was sent", a.what()), waiting
	})
}

// awaitSettled waits (timeout at most) until settle, which carries out
// the awaited commands of one kind that are durable and applied, finds
// none still awaited; settle names the first one still awaited (its seq
// and action), and says what it is for an error. An error says one is not
// durable and applied yet (r.Seq is its seq).
func (o *Ops) awaitSettled(timeout time.Duration, settle func() (first Result, what string, waiting bool)) (r Result, err error) {
	deadline := time.Now().Add(timeout)
	for {
		first, what, waiting := settle()
		if !waiting {
			return Result{}, nil
		}
		if err := o.awaitApplied(first.Seq, deadline, what); err != nil {
			return first, err
		}
	}
}

// endOfDayAwaited reports whether an end of day whose call timed out is
// not yet durable and applied.
func (o *Ops) endOfDayAwaited() bool {
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	_, waiting := o.settleEndOfDaysLocked()
	return waiting
}

// archiveAwaited runs, until the venue stops, the step that follows an
// end of day answered done (snapshotAndArchive) for each awaited end of
// day once it is durable and applied (settleEndOfDaysLocked), once: the
// snapshot a start loads then follows the end of day, and the segments it
// makes unnecessary are archived, where the next end of day did both. A
// later end of day that did its own step already (a venue without a
// schedule, whose operator repeated the call once this one was applied)
// covered it. A venue that stops or halts first leaves both to the next
// end of day: the start replays the journal from the snapshot before,
// the end of day included, and never needs the archive
// (docs/ARCHITECTURE.md, "Operations: the control plane and the trading
// day").
func (o *Ops) archiveAwaited() {
	for {
		select {
		case <-o.stop:
			return
		case <-o.archiveSignal:
		}
		for {
			o.stateMu.Lock()
			done := o.awaitedDone
			o.awaitedDone = nil
			o.stateMu.Unlock()
			if len(done) == 0 {
				break
			}
			for _, a := range done {
				if o.stopping() {
					return
				}
				o.archiveAfter(a)
			}
		}
	}
}

// archiveAfter runs the snapshot and archive of a, an awaited end of day
// durable and applied, unless a later end of day ran them.
func (o *Ops) archiveAfter(a awaitedEndOfDay) {
	o.eodMu.Lock() // one end of day at a time
	defer o.eodMu.Unlock()
	if last := o.lastEOD.Load(); last != nil && last.Seq > a.seq {
		return
	}
	rep := EndOfDayReport{Seq: a.seq, SnapshotSeq: -1, ArchivedThrough: -1}
	if r := o.monitor.endOfDay.Load(); r != nil && r.Seq == a.seq {
		rep.Expired, rep.CommandUnixNs = r.Count, r.TimestampNs
	}
	o.snapshotAndArchive(&rep)
}

// applied reports whether command seq is durable and applied (its
// result seen by the Monitor).
func (o *Ops) applied(seq uint64) bool {
	return o.cfg.Pipeline.Durable().Load() >= int64(seq) && o.monitor.resultSeq.Load() >= seq
}

// awaitApplied waits until command seq, published by a call that timed
// out, is durable and applied, or deadline; what describes it in the
// error of a wait that ends first.
func (o *Ops) awaitApplied(seq uint64, deadline time.Time, what string) error {
	for !o.applied(seq) {
		wait := time.Until(deadline)
		switch {
		case o.stopping():
			return ErrStopping
		case o.halted():
			return fmt.Errorf("%w: %w", pipeline.ErrHalted, o.cfg.Pipeline.Err())
		case o.cfg.Pipeline.JournalEnded():
			return fmt.Errorf("%w: %s", ErrUnconfirmed, what)
		case wait <= 0:
			return fmt.Errorf("%w: %s is not yet durable and applied", ErrTimeout, what)
		}
		if o.cfg.Pipeline.WaitDurableOrEnd(int64(seq), min(wait, 10*time.Millisecond)) {
			time.Sleep(min(wait, time.Millisecond)) // durable: its result is on its way to the Monitor
		}
	}
	return nil
}

// awaitedAction is a session action (logout, disable, enable) published
// whose call timed out; result is the wait for its result, which the call
// kept (appliedResult).
type awaitedAction struct {
	seq     uint64
	session uint16
	compID  string
	kind    venue.OperatorActionType
	result  <-chan Result
}

// awaitAction notes a session action published whose call timed out: the
// matcher applies it once the journal has it, and the venue carries it out
// then (settleSessionActions), as for a call answered done and as a
// restart's replay and a cluster's follower take it from the journal.
func (o *Ops) awaitAction(a awaitedAction) { noteAwaited(o, &o.awaitedActions, a) }

func (o *Ops) signalAwaited() {
	select {
	case o.awaitedSignal <- struct{}{}:
	default:
	}
}

// settleSessionActions carries out, in order, the awaited actions of
// session idx that are durable and applied (the session's sessionMu
// held), and returns the first one still awaited (waiting false: none
// is). The matcher refuses a session action only for a session it does
// not have, which the admin API checked before journaling it.
func (o *Ops) settleSessionActions(idx uint16) (first awaitedAction, waiting bool) {
	o.stateMu.Lock()
	var due []awaitedAction
	due, o.awaitedActions, first, waiting = takeApplied(o, o.awaitedActions, func(a awaitedAction) uint64 { return a.seq },
		func(a awaitedAction) bool { return a.session == idx })
	o.stateMu.Unlock()
	for _, a := range due {
		o.appliedResult(a.result)
		o.log.Info("session action whose call timed out is durable and applied: carried out", "seq", a.seq,
			"action", a.kind.String(), "session", a.compID)
		o.carryOut(a.session, a.kind)
	}
	return first, waiting
}

// awaitSessionActions waits (timeout at most, the session's sessionMu
// held) until session idx's awaited actions are durable and applied, and
// carries them out. An error says one is not: the session's state is not
// known yet (r.Seq is its seq).
func (o *Ops) awaitSessionActions(idx uint16, timeout time.Duration) (r Result, err error) {
	return o.awaitSettled(timeout, func() (Result, string, bool) {
		a, waiting := o.settleSessionActions(idx)
		return Result{Seq: a.seq, Action: a.kind}, fmt.Sprintf("the %s of session %s published at seq %d (its call timed out), "+
			"carried out once it is: nothing was sent", a.kind.String(), a.compID, a.seq), waiting
	})
}

// awaitedPhase is an operator's phase change (POST /v1/phase) whose call
// timed out once every command of it was published: group moves to kind,
// set at, once its last command, seq, is durable and applied.
type awaitedPhase struct {
	seq   uint64
	group int
	kind  schedule.Kind
	at    time.Time
	// results are the waits for the results of the commands the call did
	// not wait for (the one that timed out, then the rest), counted once
	// applied (appliedResult).
	results []<-chan Result
	// noOpUnless: the group was in kind's phase already and no command
	// answered before moved its instrument; unless one of results says it
	// moved one, a call answered then would have found that the change
	// changed nothing (409), and recorded nothing (changedNothing).
	noOpUnless bool
}

// appliedResults is the result of each command of a, durable and applied,
// whose call did not wait for it (appliedResult: each counted once).
func (o *Ops) appliedResults(a awaitedPhase) (rs []Result, ok bool) {
	ok = true
	for _, result := range a.results {
		r, seen := o.appliedResult(result)
		rs, ok = append(rs, r), ok && seen
	}
	return rs, ok
}

// changedNothing reports whether a, durable and applied, whose commands
// the call did not wait for gave rs (all seen: ok), changed nothing, as a
// call answered then would have found: its group was in its phase already
// and none of its commands moved an instrument. Recorded, it would be the
// operator's phase of the day all the same: a close of a group closed
// before its pre-open would have the schedule pass over its whole day
// (groupPassed).
func changedNothing(a awaitedPhase, rs []Result, ok bool) bool {
	if !a.noOpUnless || !ok {
		return false // a result not seen: recorded, as a change that moved the group
	}
	for _, r := range rs {
		if r.Reason == venue.RejectReasonNone {
			return false
		}
	}
	return true
}

// awaitedStatusChange is a command of the schedule's phase change (one
// instrument's, action) published whose call timed out; result is the wait
// for its result, which the call kept (appliedResult).
type awaitedStatusChange struct {
	seq    uint64
	action Action
	symbol string
	result <-chan Result
}

// awaitStatusChange notes a command of the schedule's phase change whose
// call timed out: the matcher applies it once the journal has it, and it
// is counted in fixvenue_operator_actions_total and logged then, with its
// result (settleStatusChanges), as a call answered then is (do), whether
// the transition waits for it or has given up.
func (o *Ops) awaitStatusChange(a awaitedStatusChange) { noteAwaited(o, &o.awaitedChanges, a) }

// settleStatusChanges counts and logs, in order, the schedule's awaited
// status changes that are durable and applied, and returns the first one
// still awaited (waiting false: none is).
func (o *Ops) settleStatusChanges() (first awaitedStatusChange, waiting bool) {
	o.settleStatusChangesThrough(0)
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	if len(o.awaitedChanges) == 0 {
		return first, false
	}
	return o.awaitedChanges[0], true
}

// settleStatusChange settles the awaited status changes durable and
// applied, command seq's among them, and returns seq's result (Reason
// None when it was settled meanwhile by recordAwaited, which logged it).
func (o *Ops) settleStatusChange(seq uint64) Result {
	r, _ := o.settleStatusChangesThrough(seq)
	return r
}

// settleStatusChangesThrough counts and logs the awaited status changes
// durable and applied, and returns the result of command seq's if it was
// one of them.
func (o *Ops) settleStatusChangesThrough(seq uint64) (r Result, found bool) {
	o.stateMu.Lock()
	var due []awaitedStatusChange
	due, o.awaitedChanges, _, _ = takeApplied(o, o.awaitedChanges, func(a awaitedStatusChange) uint64 { return a.seq },
		func(awaitedStatusChange) bool { return true })
	o.stateMu.Unlock()
	r = Result{Seq: seq, Action: venue.OperatorActionTypeSetPhaseStatus}
	for _, a := range due {
		res, ok := o.appliedResult(a.result)
		if !ok {
			o.log.Warn("schedule: status change whose call timed out is durable and applied; its result was not seen",
				"seq", a.seq, "instrument", a.symbol, "status", a.action.Status.String())
			continue
		}
		o.log.Info("operator command whose call timed out is durable and applied", "seq", a.seq, "action", a.action.Kind.String(),
			"operator", a.action.Operator, "reason", a.action.Reason, "instrument", a.symbol, "result", resultName(res.Reason),
			"count", res.Count)
		if res.Reason == venue.RejectReasonInstrumentHalted {
			// Said here, whichever settles it first: the schedule's retry
			// or the background settler (recordAwaited).
			o.warnStaysHalted(a.symbol, a.action.Status)
		}
		if a.seq == seq {
			r, found = res, true
		}
	}
	return r, found
}

// awaitPhase notes a phase change published whose call timed out: the
// matcher applies its commands once the journal has them, and the group's
// phase and its place in the day are recorded then
// (settlePhaseChanges), as for a call answered done and as a restart's
// replay and a cluster's follower take the instruments' statuses from the
// journal.
func (o *Ops) awaitPhase(a awaitedPhase) { noteAwaited(o, &o.awaitedPhases, a) }

// settlePhaseChanges records, in order (phaseMu held), the awaited phase
// changes that are durable and applied, as handlePhase records one
// answered then (setPhase, operatorSetPhase; nothing for one that changed
// nothing: changedNothing), and returns the first one
// still awaited (waiting false: none is). Settled under phaseMu, each is
// recorded before any later phase change, whose commands the journal
// holds after its own.
func (o *Ops) settlePhaseChanges() (first awaitedPhase, waiting bool) {
	o.stateMu.Lock()
	var due []awaitedPhase
	due, o.awaitedPhases, first, waiting = takeApplied(o, o.awaitedPhases, func(a awaitedPhase) uint64 { return a.seq },
		func(awaitedPhase) bool { return true })
	o.stateMu.Unlock()
	for _, a := range due {
		if rs, ok := o.appliedResults(a); changedNothing(a, rs, ok) {
			o.log.Info("phase change whose call timed out is durable and applied: it changed nothing (the group was in that "+
				"phase already), so nothing is recorded", "seq", a.seq, "group", o.cfg.Schedule.Groups[a.group].Name,
				"phase", a.kind.String())
			continue
		}
		o.log.Info("phase change whose call timed out is durable and applied: recorded", "seq", a.seq,
			"group", o.cfg.Schedule.Groups[a.group].Name, "phase", a.kind.String())
		o.setPhase(a.group, statusOf(a.kind))
		o.operatorSetPhase(a.group, a.kind, a.at)
	}
	return first, waiting
}

// awaitPhaseChanges waits (timeout at most, phaseMu held) until every
// awaited phase change is durable and applied, and records them. An
// error says one is not: a group's phase is not known yet (r.Seq is its
// last command's seq).
func (o *Ops) awaitPhaseChanges(timeout time.Duration) (r Result, err error) {
	return o.awaitSettled(timeout, func() (Result, string, bool) {
		a, waiting := o.settlePhaseChanges()
		what := ""
		if waiting {
			what = fmt.Sprintf("the phase change of group %q to %s published through seq %d (its call timed out), recorded once it is: "+
				"nothing was sent", o.cfg.Schedule.Groups[a.group].Name, a.kind.String(), a.seq)
		}
		return Result{Seq: a.seq, Action: venue.OperatorActionTypeSetPhaseStatus}, what, waiting
	})
}

// phaseChangeAwaited reports whether a phase change whose call timed out
// is awaited.
func (o *Ops) phaseChangeAwaited() bool {
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	return len(o.awaitedPhases) > 0
}

// recordAwaited records each awaited end of day and phase change, carries
// out each awaited session action, and counts each awaited status change
// of the schedule, once its command is durable and applied, until the
// venue stops: an end of day's day and a group's phase
// are in schedule.state (and phases.json), and a disable refuses the
// session, as soon as the journal has the command, not only when the
// schedule or an operator next asks (dayEnded, awaitEndOfDays,
// awaitSessionActions, awaitPhaseChanges). A venue that halts first leaves
// them to the next start, which finds the end of day and the disable in
// the journal (Config.EndOfDayNs; the server's disabled sessions) and the
// instruments' statuses in the replay, the phase as recorded before.
func (o *Ops) recordAwaited() {
	for {
		select {
		case <-o.stop:
			return
		case <-o.awaitedSignal:
		}
		for {
			seq, waiting := o.settleAwaited()
			if !waiting || o.halted() || o.cfg.Pipeline.JournalEnded() {
				break
			}
			if o.stopping() {
				return
			}
			if o.cfg.Pipeline.WaitDurableOrEnd(int64(seq), 50*time.Millisecond) {
				time.Sleep(time.Millisecond) // durable: its result is on its way to the Monitor
			}
		}
	}
}

// settleAwaited settles every awaited command durable and applied, and
// returns the seq of the first one still awaited (waiting false: none).
func (o *Ops) settleAwaited() (seq uint64, waiting bool) {
	o.stateMu.Lock()
	a, eodWaiting := o.settleEndOfDaysLocked()
	sessions := map[uint16]bool{}
	for _, x := range o.awaitedActions {
		sessions[x.session] = true
	}
	o.stateMu.Unlock()
	if eodWaiting {
		seq, waiting = a.seq, true
	}
	if o.phaseChangeAwaited() {
		o.phaseMu.Lock()
		p, w := o.settlePhaseChanges()
		o.phaseMu.Unlock()
		if w && (!waiting || p.seq < seq) {
			seq, waiting = p.seq, true
		}
	}
	if c, w := o.settleStatusChanges(); w && (!waiting || c.seq < seq) {
		seq, waiting = c.seq, true
	}
	for idx := range sessions {
		mu := o.sessionMu[idx]
		mu.Lock()
		x, w := o.settleSessionActions(idx)
		mu.Unlock()
		if w && (!waiting || x.seq < seq) {
			seq, waiting = x.seq, true
		}
	}
	return seq, waiting
}

// endDayReplayed records as ended the trading day of the last end of day
// the start's replay applied (Config.EndOfDayNs, schedule.Plan.EndedBy, as
// a cluster's follower names it), when the record names an earlier one: a
// stop between that command's durability and its record, or a call that
// timed out and a stop before the command was durable, left the record
// behind the journal, and the schedule would run the day's end of day a
// second time.
func (o *Ops) endDayReplayed() {
	if o.cfg.EndOfDayNs == 0 {
		return
	}
	day, ok := o.plan.EndedBy(time.Unix(0, o.cfg.EndOfDayNs))
	if !ok {
		return
	}
	ended, recorded := o.dayEnded(day)
	if ended {
		return
	}
	o.log.Warn("schedule: the journal holds an end of day of a trading day the record does not name as ended (a stop before "+
		"it was recorded, or its call timed out): recording it; the schedule runs none of that day's transitions",
		"day", day, "recorded", recorded)
	o.endDay(day)
}

// writeScheduleState writes schedule.state (stateMu held), and reports
// whether it is written.
func (o *Ops) writeScheduleState() bool {
	if err := o.writeScheduleStateErr(); err != nil {
		// The transition is journaled; a restart would run it again: a phase
		// change twice changes nothing (it is refused), and an end of day is
		// found in the journal (endOfDayJournaled) through its pending mark,
		// which is kept for that, or replayed (Config.EndOfDayNs): no
		// snapshot is taken meanwhile (endedDayRecorded).
		o.log.Error("schedule: progress not saved (written again before the next snapshot, which waits for it)", "file", o.statePath(), "err", err)
		return false
	}
	return true
}

// writeScheduleStateErr is writeScheduleState, returning why it is not
// written.
func (o *Ops) writeScheduleStateErr() error {
	st := newScheduleState(o.saved, o.savedWhat, o.endedDay)
	if o.saved.Group >= 0 && o.saved.Group < len(o.cfg.Schedule.Groups) {
		st.GroupName = o.cfg.Schedule.Groups[o.saved.Group].Name
	}
	st.Groups = configuredGroups(o.groupsRun, o.cfg.Schedule.Groups)
	if err := writeScheduleState(o.cfg.DataDir, st); err != nil {
		o.stateUnsaved = true
		return err
	}
	o.endedDayWritten, o.stateUnsaved = o.endedDay, false
	return nil
}

// endedDayRecorded says why the last trading day whose end of day ran, or
// another change of the progress (stateUnsaved: an operator's phase
// change, a transition), is not in schedule.state (nil: it is, or none
// ended), having tried to write it again, or why it may not be: an end of day is published and not yet
// answered or settled, which the matcher may have applied already. A
// snapshot is taken only once it is: a start from a snapshot
// after that end of day replays no end of day (Config.EndOfDayNs), and
// with the record behind, it would take the day as still open and run its
// end of day again, expiring the DAY orders entered since. Without the
// snapshot the start replays the end of day from the journal and learns
// the day ended (endDayReplayed). docs/ARCHITECTURE.md, "Operations: the
// control plane and the trading day".
func (o *Ops) endedDayRecorded() error {
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	// An end of day published and not yet recorded as ran: the matcher may
	// have applied it, and the day is not in the record yet.
	if o.endingDay != "" {
		return fmt.Errorf("the end of day of %s is published and not yet answered, so not yet in %s", o.endingDay, o.statePath())
	}
	for _, a := range o.awaited {
		if a.day != "" {
			return fmt.Errorf("%s (its call timed out) is not yet durable and applied, so not yet in %s", a.what(), o.statePath())
		}
	}
	if o.endedDay != "" && o.endedDay != o.endedDayWritten {
		if !o.savedOK {
			// Written with the schedule's first record (runSchedule).
			return fmt.Errorf("the end of day of %s is not yet in %s: the schedule has not written its first record", o.endedDay, o.statePath())
		}
		if err := o.writeScheduleStateErr(); err != nil {
			return fmt.Errorf("the end of day of %s is not in %s (%w)", o.endedDay, o.statePath(), err)
		}
		return nil
	}
	if o.stateUnsaved && o.savedOK {
		// An operator's phase change, or a transition: a start from a
		// snapshot after it would not replay it, and would take the group
		// back in its day (an early close reopened by the closing call).
		if err := o.writeScheduleStateErr(); err != nil {
			return fmt.Errorf("the schedule's progress (where each group stands in its day) is not in %s (%w)", o.statePath(), err)
		}
	}
	return nil
}

// SnapshotGate is SnapshotHeldBack for a periodic snapshot, made one step
// with the snapshot's command: on nil error the caller publishes it and
// then calls release. A phase change in progress (phaseMu) or a session's
// disable or enable whose record is not known written yet (recordGate:
// its command published, or its call timed out before it was carried out)
// holds the snapshot back too: checked and then published, the snapshot
// could follow the command of one that began in between, whose record a
// full disk then refused.
func (o *Ops) SnapshotGate() (release func(), err error) {
	if !o.recordGate.TryLock() {
		return nil, errors.New("a session's disable or enable is being journaled and its record written")
	}
	if !o.phaseMu.TryLock() {
		o.recordGate.Unlock()
		return nil, errors.New("a phase change is being journaled and recorded")
	}
	release = func() {
		o.phaseMu.Unlock()
		o.recordGate.Unlock()
	}
	if err := o.recordsBehind(); err != nil {
		release()
		return nil, err
	}
	o.stateMu.Lock()
	actions := slices.ContainsFunc(o.awaitedActions, func(a awaitedAction) bool { return a.kind != venue.OperatorActionTypeSessionLogout })
	phases := len(o.awaitedPhases) > 0
	o.stateMu.Unlock()
	if actions || phases {
		release()
		return nil, errors.New("a session's disable or enable, or a phase change, whose call timed out is not recorded yet")
	}
	return release, nil
}

// SnapshotHeldBack says why a snapshot must wait (nil: it may be taken
// now): the last trading day whose end of day ran, or another change of
// the schedule's progress, is not in schedule.state (endedDayRecorded),
// the groups' phases are not in PhasesFile (phasesRecorded), or another
// record the venue keeps is behind the journal (Config.Recorded), even
// written again now; a phase change in progress is waited for first. The
// server's periodic snapshot waits for it, as the end of day's own does.
func (o *Ops) SnapshotHeldBack() error {
	// A phase change in progress holds phaseMu from its first command to
	// its records: a snapshot after its commands and before its records
	// are tried would hold the change while a full disk left the files
	// without it, unseen. Its callers hold no phaseMu.
	o.phaseMu.Lock()
	o.phaseMu.Unlock()
	return o.recordsBehind()
}

// recordsBehind says which record kept beside the snapshots is behind the
// journal, writing each again first (nil: none).
func (o *Ops) recordsBehind() error {
	if err := o.endedDayRecorded(); err != nil {
		return err
	}
	if err := o.phasesRecorded(); err != nil {
		return err
	}
	if o.cfg.Recorded != nil {
		return o.cfg.Recorded()
	}
	return nil
}

// configuredGroups is the record of the groups run that the configuration
// still has: a group removed from it (or renamed) is left out when the
// state is written, so that the record is bounded by the configuration
// (config.ScheduleGroupsMax) rather than growing with every group a venue
// ever had. A group configured again later under that name starts with no
// record, as a new one does.
func configuredGroups(run map[string]GroupRun, groups []config.ScheduleGroup) map[string]GroupRun {
	kept := make(map[string]GroupRun, min(len(run), len(groups)))
	for _, g := range groups {
		if r, ok := run[g.Name]; ok {
			kept[g.Name] = r
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// ScheduleProgress is the schedule's progress as a cluster's follower
// derives it from the commands the leader's schedule journaled
// (SaveScheduleProgress).
type ScheduleProgress struct {
	// Last is the position of the last transition run: the transitions
	// after it run, under the configuration of the node that saves it.
	// It is a transition of the plan (schedule.Plan.Transition), placed
	// before every group's at its instant and kind (a start passes over
	// those Groups says ran), or a time (schedule.Through) when the last
	// command names none the configuration has.
	Last schedule.Transition
	// What says what ran there, for the record.
	What string
	// EndedDay is the last trading day whose end of day ran ("" when
	// unknown): none of its transitions or an earlier day's runs.
	EndedDay string
	// Groups is, by group name, each group's last transition run; a
	// transition of that day at or before it in the group's day is passed
	// over, as a single venue's record does.
	Groups map[string]GroupRun
}

// SaveScheduleProgress records p in dataDir as the schedule's progress, for
// the configuration's groups: a start there runs only the transitions after
// p.Last, none of the trading day p.EndedDay or before, and none a group
// went past (p.Groups). A cluster's follower derives it from the commands
// the schedule journaled (transitionReason), so that a new leader runs
// neither again what the old one ran nor misses what it did not run.
func SaveScheduleProgress(dataDir string, p ScheduleProgress, groups []config.ScheduleGroup) error {
	st := newScheduleState(p.Last, p.What, p.EndedDay)
	if p.Last.Group >= 0 && p.Last.Group < len(groups) && p.Last.Kind != schedule.EndOfDay {
		st.GroupName = groups[p.Last.Group].Name
	}
	st.Groups = configuredGroups(p.Groups, groups)
	return writeScheduleState(dataDir, st)
}

// transitionReason is the reason of the commands the schedule journals for
// tr, a transition of group (its name; none for an end of day), which
// ScheduleTransitionOf reads back.
func transitionReason(tr schedule.Transition, group string) string {
	if tr.Kind == schedule.EndOfDay {
		return fmt.Sprintf("%s %s", tr.Day, tr.Kind)
	}
	return fmt.Sprintf("%s %s %s", tr.Day, tr.Kind, group)
}

// ScheduleTransitionOf reads which transition a command the schedule
// journaled ran, from its action and reason (transitionReason): its trading
// day, kind and group's name ("" for an end of day; cut short when the
// reason was, at venue.OperatorReasonLength). ok is false for a command of
// no transition: a first start's, which brings every group to its phase
// ("start: ...").
func ScheduleTransitionOf(action venue.OperatorActionType, reason []byte) (day string, kind schedule.Kind, group string, ok bool) {
	day, rest, _ := strings.Cut(string(reason), " ")
	name, group, _ := strings.Cut(rest, " ")
	if _, err := time.Parse(time.DateOnly, day); err != nil {
		var n int64
		if _, err := fmt.Sscanf(day, "day-%d", &n); err != nil || fmt.Sprintf("day-%d", n) != day {
			return "", 0, "", false
		}
	}
	for _, k := range []schedule.Kind{schedule.PreOpen, schedule.Open, schedule.ClosingCall, schedule.Close, schedule.EndOfDay} {
		if k.String() != name {
			continue
		}
		if k == schedule.EndOfDay {
			return day, k, "", action == venue.OperatorActionTypeEndOfDay && group == ""
		}
		return day, k, group, action == venue.OperatorActionTypeSetPhaseStatus && group != ""
	}
	return "", 0, "", false
}

// newScheduleState is the record of the position last, what ran there and
// the ended day.
func newScheduleState(last schedule.Transition, what, endedDay string) scheduleState {
	st := scheduleState{LastUnixNs: last.At.UnixNano(), Last: what, EndedDay: endedDay}
	if through := schedule.Through(last.At); last.Kind != through.Kind || last.Group != through.Group {
		st.Kind, st.Group = last.Kind, last.Group
	}
	return st
}

func writeScheduleState(dataDir string, st scheduleState) error {
	b, _ := json.Marshal(st)
	return durable.WriteFile(filepath.Join(dataDir, ScheduleStateFile), b, 0o640)
}

// runSchedule catches up from last, the last transition run (found: its
// record was read), then runs each transition at its time until Close. A
// clock stepped ahead (a machine resumed from suspend, an NTP step) that
// finds a transition late by more than onTimeSlack runs those due as the
// start's catch-up does (catchUp).
func (o *Ops) runSchedule(last schedule.Transition, found bool) {
	defer o.endCatchUp()
	// A catch-up that ends early (a stop, a halt) leaves no stamp behind.
	defer o.catchUpAtNs.Store(0)
	now := o.cfg.Now()
	if !found {
		if now, found = o.applyPhasesDone(); !found {
			return
		}
		last = schedule.Through(now)
		o.saveScheduleState(last, "start")
	} else if last, found = o.catchUp(last, now, false); !found {
		return
	}
	o.setReady()
	for {
		tr, ok := o.plan.Next(last)
		if !ok {
			o.log.Warn("schedule: no trading day within a year; the schedule is idle")
			<-o.stop
			return
		}
		if o.metrics != nil {
			if next, ok := o.nextToRun(last); ok {
				o.metrics.nextTransition.Set(float64(next.At.UnixNano()) / 1e9)
			}
		}
		// When the schedule came to tr: one due before then was late
		// because the transitions before it took that long, not because
		// the clock moved (overdue).
		came := o.cfg.Now()
		// The clock, not the timer, says when the transition is due: a wall
		// clock stepped back (or a test's clock) is waited for again, and
		// one stepped ahead is read within onTimeSlack (the timer's own
		// clock stands still while a machine is suspended, and does not
		// follow an NTP step: it would end when it was set to, the venue
		// taking orders meanwhile in a phase whose time is past).
		for wait := tr.At.Sub(o.cfg.Now()); wait > 0; wait = tr.At.Sub(o.cfg.Now()) {
			timer := time.NewTimer(min(wait, onTimeSlack))
			select {
			case <-o.stop:
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		if now := o.cfg.Now(); o.overdue(tr, came, now) {
			if last, ok = o.catchUp(last, now, true); !ok {
				return
			}
			continue
		}
		if !o.runTransitionDone(tr, false) {
			return
		}
		if o.saveScheduleState(tr, tr.String()) {
			o.clearEndOfDayPending(tr)
		}
		last = tr
	}
}

// onTimeSlack is how late a transition may run and still count as on
// time: a timer's latency on a loaded machine, and the time the transitions
// before it at nearly the same time take to run. The schedule reads the
// clock at least this often.
const onTimeSlack = time.Second

// overdue reports whether, at now, the clock passed tr's time by more than
// onTimeSlack while the schedule waited for it (came: when it came to tr),
// or passed the time of the first transition after tr's instant by more
// than that: the clock stepped ahead (a machine resumed from suspend, an
// NTP step), while the schedule waited or ran the transitions before, and
// tr runs, with any others then due, as a catch-up (stamped with the time
// it was due, logged as late). Transitions a few milliseconds apart, which
// a timer's latency finds due together, are not late, nor is one that came
// due while the one before ran (a group of many instruments): they run as
// on time, one after the other, as the orders journaled meanwhile were.
func (o *Ops) overdue(tr schedule.Transition, came, now time.Time) bool {
	from := tr.At
	if came.After(from) {
		from = came
	}
	if now.Sub(from) > onTimeSlack {
		return true
	}
	next, ok := o.plan.Next(schedule.Through(tr.At))
	return ok && now.Sub(next.At) > onTimeSlack
}

// catchUp runs the transitions due after last until now, once, in order,
// each stamped with the time it was due (catchUpAtNs), at most catchUpMax
// of them (the last ones), after ending the day of last when the
// configuration no longer trades it (schedule.Plan.Unended). Meanwhile
// CatchingUp is true: the admin API refuses changes, the server's periodic
// commands wait and the FIX gateway refuses orders, so that nothing
// stamped with the clock lands among them; it begins once the operators'
// changes in flight are answered (changeMu). At start (late false) those are
// the transitions missed while the venue was down; late, the ones due when
// a clock stepped ahead passed the time of one by more than onTimeSlack,
// each logged as run late. It returns
// the last transition run, and false when the venue stopped or halted
// first.
func (o *Ops) catchUp(last schedule.Transition, now time.Time, late bool) (schedule.Transition, bool) {
	o.catchingUp.Store(true)
	defer o.catchingUp.Store(false)
	// The operators' changes in flight are answered first, stamped with
	// the clock (catchUpAtNs is not set yet), so that none lands among the
	// catch-up's commands; new ones are refused (CatchingUp).
	o.changeMu.Lock()
	defer o.changeMu.Unlock()
	defer o.catchUpAtNs.Store(0)
	// A day that began and that the configuration no longer trades (a
	// holiday added) ends first: its groups close and its end of day
	// runs, before the days after it.
	missed := o.plan.Unended(last, now)
	if len(missed) > 0 {
		o.log.Warn("schedule: the day of the last transition run no longer trades (schedule.holidays, schedule.trading_days); "+
			"ending it: every group closes, then its end of day", "day", missed[0].Day, "at", missed[0].At.Format(time.RFC3339Nano))
	}
	missed = append(missed, o.plan.Between(last, now, catchUpMax)...)
	// The record's last transition is read as before every group's at its
	// instant (loadScheduleState: the groups may have been reordered), so
	// the transitions there that the record names as run by their groups
	// come first: they ran before the stop, and are neither missed nor
	// passed over (a warning and a count at every restart of a day).
	for len(missed) > 0 && o.ranBeforeTheStop(missed[0], last) {
		last, missed = missed[0], missed[1:]
	}
	switch {
	case len(missed) == 0:
	case late:
		o.log.Warn("schedule: the clock passed the time of a transition while the schedule waited (stepped ahead: a machine resumed from suspend, "+
			"an NTP step); running them late, as a start runs the ones it missed; FIX orders and operator changes "+
			"are refused meanwhile", "transitions", len(missed), "from", missed[0].String(), "to", missed[len(missed)-1].String())
	default:
		o.log.Info("schedule: running the transitions missed while the venue was down; FIX logons wait for them",
			"transitions", len(missed), "from", missed[0].String(), "to", missed[len(missed)-1].String())
	}
	for _, tr := range missed {
		if o.stopping() {
			return last, false
		}
		if late {
			o.log.Warn("schedule: transition run late", "transition", tr.String(), "late_by", now.Sub(tr.At).String())
		}
		o.catchUpAtNs.Store(tr.At.UnixNano())
		if !o.runTransitionDone(tr, true) {
			return last, false
		}
		if o.saveScheduleState(tr, tr.String()) {
			o.clearEndOfDayPending(tr)
		}
		last = tr
	}
	o.catchUpAtNs.Store(0)
	o.catchingUp.Store(false) // before it says so
	if len(missed) > 0 {
		o.log.Info("schedule: caught up", "transitions", len(missed))
	}
	return last, true
}

// ranBeforeTheStop reports whether tr is a transition at the instant and
// of the kind of last, the record's, that its group's own record (by
// name) says ran: that day, that phase.
func (o *Ops) ranBeforeTheStop(tr, last schedule.Transition) bool {
	if last.Group >= 0 || !tr.At.Equal(last.At) || tr.Kind != last.Kind {
		return false
	}
	passed, ran := o.groupPassed(tr)
	return passed && ran.Day == tr.Day && ran.Kind == tr.Kind
}

func (o *Ops) stopping() bool { return closed(o.stop) }

// applyPhasesDone brings every group to the status of its phase now (a
// first start, with no record of earlier transitions) until every command
// is confirmed, and returns the time it did so at; false when the venue
// stopped or halted first. Until then nothing is recorded: the groups'
// phases are not known to be set, and a record saying so would have a
// failed group keep the status it had (open through a close) until its
// next transition; a start in between brings every group to its phase
// again. A phase change run twice changes nothing. As a transition not
// done, later transitions and FIX logons wait (runTransitionDone).
func (o *Ops) applyPhasesDone() (time.Time, bool) {
	for {
		now := o.cfg.Now()
		err := o.applyPhasesAt(now)
		switch {
		case err == nil:
			return now, true
		case errors.Is(err, ErrStopping) || o.stopping():
			return now, false
		case o.halted():
			o.log.Error("schedule: the venue halted; the schedule stops", "err", o.cfg.Pipeline.Err())
			return now, false
		}
		o.log.Error("schedule: the groups' phases at start not all set; setting them again, the schedule waits",
			"in", transitionAgainWait.String(), "err", err)
		select {
		case <-o.stop:
			return now, false
		case <-time.After(transitionAgainWait):
		}
	}
}

// applyPhasesAt brings every group to the status its phase at t gives, and
// returns the first error of a group's commands (the other groups are
// set all the same).
func (o *Ops) applyPhasesAt(t time.Time) (failed error) {
	for g, grp := range o.cfg.Schedule.Groups {
		kind, ok := o.plan.PhaseAt(t, g)
		if !ok {
			kind = schedule.Close
		}
		if err := o.setGroupStatus(g, statusOf(kind), fmt.Sprintf("start: %s %s", grp.Name, kind)); err != nil && failed == nil {
			failed = err
		}
	}
	return failed
}

// statusOf maps a phase to the instruments' trading status. Pre-open is
// the opening call and the closing call the closing call: orders and
// cancels are accepted and nothing matches; the matcher uncrosses when the
// next transition opens or closes the instrument ("Auctions" in
// core/doc.go).
func statusOf(k schedule.Kind) venue.TradingStatus {
	switch k {
	case schedule.PreOpen:
		return venue.TradingStatusOpeningCall
	case schedule.Open:
		return venue.TradingStatusOpen
	case schedule.ClosingCall:
		return venue.TradingStatusClosingCall
	}
	return venue.TradingStatusClosed
}

// dayEnded reports whether the trading day day (schedule.Transition.Day)
// ended already (endedDay), and which day did. With one configuration and no
// operator's end of day, none of the schedule's transitions' does: the end
// of day is its day's last transition. One does after the configuration
// moved end_of_day (or a close) later once the day's end of day had run, or
// after an operator ended the day (POST /v1/eod): running it would end the
// day twice, expiring the DAY orders of the trading an operator reopened
// after it, or close that trading.
func (o *Ops) dayEnded(day string) (ended bool, endedDay string) {
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	o.settleEndOfDaysLocked()
	return o.endedDay != "" && !schedule.DayAfter(day, o.endedDay), o.endedDay
}

// groupPassed reports whether tr's group stands, in tr's trading day, at
// or after tr in the group's day (schedule.PhaseOrder), and where: an
// operator moved it there (operatorSetPhase: an early close, which the
// closing call would have reopened), or the schedule ran that transition
// after the configuration changed its times once that day began (pre_open
// and open moved later after the open ran: running tr would take the group
// back within the day, into the opening call). The schedule goes on from
// the group's next phase, or the next day.
// nextToRun is the first transition after last that the schedule will run
// as things stand, passing over those runTransition would pass over (of a
// day whose end of day ran, or of a group at or past that phase of its
// day): what GET /v1/status and fixvenue_schedule_next_transition_timestamp_seconds
// name, so that an early close or end of day does not show the
// transitions it made moot as to come. It looks at most nextToRunLook
// transitions ahead, then names the last looked at.
func (o *Ops) nextToRun(last schedule.Transition) (schedule.Transition, bool) {
	tr, ok := o.plan.Next(last)
	for i := 0; ok && i < nextToRunLook; i++ {
		if ended, _ := o.dayEnded(tr.Day); !ended {
			if tr.Kind == schedule.EndOfDay {
				return tr, true
			}
			if passed, _ := o.groupPassed(tr); !passed {
				return tr, true
			}
		}
		tr, ok = o.plan.Next(tr)
	}
	return tr, ok
}

// nextToRunLook bounds nextToRun: a day's transitions, each group's four
// and the end of day, for many groups.
const nextToRunLook = 1024

func (o *Ops) groupPassed(tr schedule.Transition) (passed bool, ran GroupRun) {
	if tr.Group < 0 || tr.Group >= len(o.cfg.Schedule.Groups) {
		return false, ran
	}
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	ran, ok := o.groupsRun[o.cfg.Schedule.Groups[tr.Group].Name]
	return ok && ran.Day == tr.Day && schedule.PhaseOrder(tr.Kind) <= schedule.PhaseOrder(ran.Kind), ran
}

func (o *Ops) runTransition(tr schedule.Transition, caughtUp bool) (failed error) {
	if tr.Kind != schedule.EndOfDay && o.endOfDayAwaited() {
		// An end of day whose call timed out, published and not yet
		// applied, may end tr's day: tr waits for it (as an end of day
		// does, in endOfDay) and is passed over if it did. Run meanwhile,
		// a close journaled after that end of day took effect after it, as
		// no transition of an ended day does.
		o.log.Info("schedule: transition waits for an end of day whose call timed out", "transition", tr.String())
		if err := o.retry(func() error {
			_, err := o.awaitEndOfDays(o.cfg.Admin.CallTimeout.Duration)
			return err
		}); err != nil {
			return err
		}
	}
	if ended, endedDay := o.dayEnded(tr.Day); ended {
		o.log.Warn("schedule: transition passed over: the end of day of its trading day ran already (the schedule's at the time "+
			"configured then, or an operator's)", "transition", tr.String(), "ended_day", endedDay)
		return nil
	}
	if tr.Kind == schedule.EndOfDay {
		o.log.Info("schedule: transition", "transition", tr.String(), "caught_up", caughtUp)
		defer func() {
			if failed == nil {
				o.endDay(tr.Day)
			}
		}()
		reason := transitionReason(tr, "")
		if seq, published := o.eodPublished[reason]; published {
			// Published by a try that timed out (a run of it before did):
			// the journal's files may hold it before its sync returned, and
			// a crash would still lose it (a start cuts what was never
			// synced). It is waited for below, never sent again, and the
			// day recorded as ended only once it is durable and applied.
			o.log.Info("schedule: end of day published, not yet durable and applied; waiting for it, not sent again",
				"day", tr.Day, "seq", seq)
		} else if o.endOfDayJournaled(reason) {
			// Its command is in the journal (the venue stopped before the
			// transition was recorded; the start made what it kept
			// durable, and its replay applied it): a second one would end
			// the next day's orders too.
			o.log.Info("schedule: end of day journaled already; not run again", "day", tr.Day)
			return nil
		}
		if err := o.markEndOfDayPending(reason); err != nil {
			o.log.Error("schedule: end of day failed", "day", tr.Day, "err", err)
			return err
		}
		if err := o.retry(func() error {
			if seq, ok := o.eodPublished[reason]; ok {
				// A try that timed out was published: the matcher applies
				// it once the journal has it. Sending another would end the
				// day twice; wait for this one instead, and record the day
				// as ended only once it is durable and applied.
				if err := o.awaitApplied(seq, time.Now().Add(transitionRetryWait),
					fmt.Sprintf("the end of day of %s published at seq %d", tr.Day, seq)); err != nil {
					return err
				}
				delete(o.eodPublished, reason)
				return nil
			}
			r, _, err := o.endOfDay(OperatorSchedule, reason, tr.Day)
			if errors.Is(err, errDayEnded) {
				return nil // an operator ended it meanwhile
			}
			if errors.Is(err, ErrTimeout) && r.Seq != 0 {
				o.eodPublished[reason] = r.Seq
			}
			return err
		}); err != nil {
			o.log.Error("schedule: end of day failed", "day", tr.Day, "err", err)
			return err
		}
	} else {
		if o.phaseChangeAwaited() {
			// An operator's phase change whose call timed out, published and
			// not yet applied, is recorded first: recorded after tr's, it
			// would take the group's record back to its phase.
			o.log.Info("schedule: transition waits for a phase change whose call timed out", "transition", tr.String())
			if err := o.retry(func() error {
				o.phaseMu.Lock()
				defer o.phaseMu.Unlock()
				_, err := o.awaitPhaseChanges(o.cfg.Admin.CallTimeout.Duration)
				return err
			}); err != nil {
				return err
			}
		}
		// Checked under phaseMu: an operator's phase change just before
		// (operatorSetPhase) is taken into account, not undone.
		o.phaseMu.Lock()
		if _, waiting := o.settlePhaseChanges(); waiting {
			o.phaseMu.Unlock()
			return fmt.Errorf("%w: an operator's phase change whose call timed out is not yet durable and applied", ErrTimeout)
		}
		if passed, ran := o.groupPassed(tr); passed {
			o.phaseMu.Unlock()
			o.log.Warn("schedule: transition passed over: its group is at this or a later phase of the day already (an operator's "+
				"phase change, or the schedule's at the times configured then)", "transition", tr.String(),
				"group", o.cfg.Schedule.Groups[tr.Group].Name, "at", ran.Kind.String())
			return nil
		}
		o.log.Info("schedule: transition", "transition", tr.String(), "caught_up", caughtUp)
		grp := o.cfg.Schedule.Groups[tr.Group]
		err := o.setGroupStatusLocked(tr.Group, statusOf(tr.Kind), transitionReason(tr, grp.Name))
		o.phaseMu.Unlock()
		if err != nil {
			return err
		}
	}
	if o.metrics != nil {
		o.metrics.transition(tr.Kind, caughtUp)
	}
	return nil
}

// EndOfDayPendingFile, in the data directory, names the schedule's end of
// day about to be journaled, from which seq, until the transition is
// recorded in ScheduleStateFile: a start in between finds out from the
// journal whether its command was journaled (endOfDayJournaled).
const EndOfDayPendingFile = "eod.pending"

type endOfDayPending struct {
	Reason  string `json:"reason"`
	FromSeq uint64 `json:"from_seq"`
}

// markEndOfDayPending records the end of day about to be journaled; its
// command's seq is at least the next one not yet durable. One already
// marked (a try before) keeps its seq. An error means the mark is not on
// disk: the end of day must not be journaled then, since a crash before it
// is recorded would run it again (docs/ARCHITECTURE.md, "Operations: the
// control plane and the trading day").
func (o *Ops) markEndOfDayPending(reason string) error {
	if o.cfg.DataDir == "" || o.cfg.Pipeline == nil {
		return nil
	}
	if b, err := os.ReadFile(filepath.Join(o.cfg.DataDir, EndOfDayPendingFile)); err == nil {
		var p endOfDayPending
		if json.Unmarshal(b, &p) == nil && p.Reason == reason {
			return nil
		}
	}
	b, _ := json.Marshal(endOfDayPending{Reason: reason, FromSeq: uint64(o.cfg.Pipeline.Durable().Load() + 1)})
	if err := durable.WriteFile(filepath.Join(o.cfg.DataDir, EndOfDayPendingFile), b, 0o640); err != nil {
		return fmt.Errorf("end of day not marked pending in %s, so not journaled (a crash before it is recorded would run it again): %w",
			filepath.Join(o.cfg.DataDir, EndOfDayPendingFile), err)
	}
	return nil
}

// clearEndOfDayPending removes the mark once tr, an end of day, is
// recorded (the transitions before it leave the mark of theirs). A
// transition whose record could not be saved keeps the mark: the next
// start runs that end of day again unless the mark leads it to the
// journal's command.
func (o *Ops) clearEndOfDayPending(tr schedule.Transition) {
	if o.cfg.DataDir == "" || tr.Kind != schedule.EndOfDay {
		return
	}
	if err := os.Remove(filepath.Join(o.cfg.DataDir, EndOfDayPendingFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		o.log.Warn("schedule: end of day pending mark not removed", "err", err)
	}
}

// endOfDayJournaled reports whether the pending end of day with reason is
// in the journal: the schedule's EndOfDay command with that reason, at or
// after the seq recorded before it was journaled. The journal's files are
// read as written: one the schedule published since the start may be
// there before its sync returned, not yet durable, and is not looked for
// here (eodPublished: it is waited for); a start made all it kept durable.
func (o *Ops) endOfDayJournaled(reason string) bool {
	b, err := os.ReadFile(filepath.Join(o.cfg.DataDir, EndOfDayPendingFile))
	if err != nil {
		return false
	}
	var p endOfDayPending
	if err := json.Unmarshal(b, &p); err != nil {
		// A damaged mark still says an end of day was about to be
		// journaled: look for it in the whole journal rather than run it
		// again (a second one would end the next day's orders too).
		o.log.Warn("schedule: end of day pending mark unreadable; looking for the end of day in the whole journal",
			"file", filepath.Join(o.cfg.DataDir, EndOfDayPendingFile), "err", err)
		p = endOfDayPending{Reason: reason}
	}
	if p.Reason != reason {
		return false
	}
	want := []byte(clip(reason, venue.OperatorReasonLength))
	for rec, err := range journal.Records(o.journalDir(), journal.ReaderOptions{FromSeq: p.FromSeq}) {
		if err != nil {
			o.log.Warn("schedule: journal unreadable while looking for the pending end of day; running it", "err", err)
			return false
		}
		if rec.Seq < p.FromSeq {
			continue
		}
		c, ok := core.DecodeOperatorCommand(rec.Payload) // a record of an earlier build too
		if ok && c.Action() == venue.OperatorActionTypeEndOfDay && string(c.Operator()) == OperatorSchedule &&
			bytes.Equal(c.Reason(), want) {
			return true
		}
	}
	return false
}

// transitionAgainWait is how long the schedule waits before it runs again
// a transition whose commands could not be confirmed.
const transitionAgainWait = 30 * time.Second

// runTransitionDone runs tr until it is done, and reports false when the
// venue stops first. A transition is recorded as done only when it is: an
// end of day skipped for good would leave DAY orders in the next day and
// that day's ClOrdIDs remembered with the next day's. Later transitions
// wait for it.
func (o *Ops) runTransitionDone(tr schedule.Transition, caughtUp bool) bool {
	for {
		err := o.runTransition(tr, caughtUp)
		switch {
		case err == nil:
			return true
		case errors.Is(err, ErrStopping) || o.stopping():
			return false
		case o.halted():
			// Halted: nothing can be journaled any more; the next start
			// runs the transition.
			o.log.Error("schedule: the venue halted; the schedule stops", "transition", tr.String(), "err", o.cfg.Pipeline.Err())
			return false
		}
		o.log.Error("schedule: transition not done; running it again, later transitions wait", "transition", tr.String(),
			"in", transitionAgainWait.String(), "err", err)
		select {
		case <-o.stop:
			return false
		case <-time.After(transitionAgainWait):
		}
	}
}

// setGroupStatus moves every instrument of group g to status, as a phase
// change (SetPhaseStatus): an instrument an operator halted stays halted
// until an operator resumes it, into the group's phase then (resumeStatus).
// An instrument already there refuses the command (InvalidTransition),
// which is expected: an operator may have acted first.
func (o *Ops) setGroupStatus(g int, status venue.TradingStatus, reason string) error {
	o.phaseMu.Lock()
	defer o.phaseMu.Unlock()
	return o.setGroupStatusLocked(g, status, reason)
}

// setGroupStatusLocked is setGroupStatus with phaseMu held. The group's
// phase is recorded (setPhase) once every command is answered and durable:
// a transition whose commands failed recorded a phase nothing had
// journaled, where a resume then took a halted instrument (a restart on a
// configuration without that phase kept it); it runs again and records it
// once done.
//
// One that fails partway (a command applied, then the ring busy or the
// venue halted) records the phase all the same: the journal has the
// change, and a cluster's follower takes it from the first command it
// applies (server/scheduleprogress.go), so that a new leader, and this
// venue until the transition runs again, resume a halted instrument into
// the same phase.
func (o *Ops) setGroupStatusLocked(g int, status venue.TradingStatus, reason string) (failed error) {
	applied := false // a command answered and durable
	defer func() {
		if failed == nil || applied {
			o.setPhase(g, status)
		}
	}()
	for _, in := range o.Instruments() {
		if gi, err := o.groupOf(&in); err != nil || gi != g {
			continue
		}
		var r Result
		a := Action{Kind: venue.OperatorActionTypeSetPhaseStatus, Status: status, Instrument: in.ID,
			Operator: OperatorSchedule, Reason: clip(reason, venue.OperatorReasonLength)}
		// published is the command of a try whose call timed out: the
		// matcher applies it once the journal has it, so a try after it
		// waits for it rather than send another, which would change
		// nothing and be counted as refused (InvalidTransition) where the
		// first was done.
		var published uint64
		settled := false // r is the result of a settled change (settleStatusChangesThrough said it stays halted)
		err := o.retry(func() (err error) {
			if published != 0 {
				if err := o.awaitApplied(published, time.Now().Add(transitionRetryWait),
					fmt.Sprintf("the %s status change of %s published at seq %d", status, in.Symbol, published)); err != nil {
					return err
				}
				r, settled = o.settleStatusChange(published), true
				return nil
			}
			var late <-chan Result
			r, late, err = o.doLate(a)
			if errors.Is(err, ErrTimeout) {
				published = r.Seq
				o.awaitStatusChange(awaitedStatusChange{seq: r.Seq, action: a, symbol: in.Symbol, result: late})
			}
			return err
		})
		applied = applied || err == nil
		if err != nil {
			o.log.Error("schedule: status change failed", "instrument", in.Symbol, "status", status.String(), "err", err)
			if failed == nil {
				failed = err
			}
			if o.halted() {
				return failed // the group's other instruments would fail alike
			}
		} else if r.Reason == venue.RejectReasonInstrumentHalted {
			if !settled {
				o.warnStaysHalted(in.Symbol, status)
			}
		} else if r.Reason != venue.RejectReasonNone && r.Reason != venue.RejectReasonInvalidTransition {
			o.log.Warn("schedule: status change refused", "instrument", in.Symbol, "reason", r.Reason.String())
		}
	}
	return failed
}

// warnStaysHalted says that the schedule's phase change left symbol
// halted (InstrumentHalted).
func (o *Ops) warnStaysHalted(symbol string, phase venue.TradingStatus) {
	o.log.Warn("schedule: instrument stays halted until an operator resumes it", "instrument", symbol, "phase", phase.String())
}

// setPhase records group g's status as set by a phase change (phaseMu
// held), in memory and in PhasesFile, once the change's commands are
// durable. A file the disk refuses is written again before the next
// snapshot, which waits for it (phasesRecorded): a start takes the file and
// the phase changes of the commands after its snapshot (Config.Phases), so
// from a snapshot after the change it would resume a halted instrument into
// the schedule's phase.
func (o *Ops) setPhase(g int, status venue.TradingStatus) {
	o.notePhase(g, status)
	if o.cfg.DataDir == "" || o.cfg.Replica {
		return
	}
	if err := o.savePhases(o.encodePhases()); err != nil {
		o.log.Error("schedule: phases not saved (written again before the next snapshot, which waits for it)", "file", PhasesFile, "err", err)
	}
}

// encodePhases is PhasesFile's content: each group's phase as last set, by
// group name (phaseMu held, or before the Ops runs).
func (o *Ops) encodePhases() []byte {
	saved := map[string]string{}
	for i, grp := range o.cfg.Schedule.Groups {
		if i < len(o.phaseKnown) && o.phaseKnown[i] {
			saved[grp.Name] = o.phases[i].String()
		}
	}
	b, _ := json.Marshal(saved)
	return b
}

// savePhases writes b to PhasesFile; when the disk refuses it, b is kept
// for phasesRecorded.
func (o *Ops) savePhases(b []byte) error {
	o.phasesFileMu.Lock()
	defer o.phasesFileMu.Unlock()
	if err := durable.WriteFile(filepath.Join(o.cfg.DataDir, PhasesFile), b, 0o640); err != nil {
		o.phasesUnsaved = b
		return err
	}
	o.phasesUnsaved = nil
	return nil
}

// phasesRecorded writes PhasesFile again when a phase change could not be
// written, and says why it still lacks it (nil: it holds the phases).
func (o *Ops) phasesRecorded() error {
	o.phasesFileMu.Lock()
	defer o.phasesFileMu.Unlock()
	if o.phasesUnsaved == nil {
		return nil
	}
	path := filepath.Join(o.cfg.DataDir, PhasesFile)
	if err := durable.WriteFile(path, o.phasesUnsaved, 0o640); err != nil {
		return fmt.Errorf("the groups' phases are not in %s (%w)", path, err)
	}
	o.phasesUnsaved = nil
	return nil
}

func (o *Ops) notePhase(g int, status venue.TradingStatus) {
	if len(o.phases) != len(o.cfg.Schedule.Groups) {
		o.phases = make([]venue.TradingStatus, len(o.cfg.Schedule.Groups))
		o.phaseKnown = make([]bool, len(o.cfg.Schedule.Groups))
	}
	o.phases[g], o.phaseKnown[g] = status, true
	if o.metrics != nil {
		// Every phase change sets the gauge, not the schedule's transitions
		// only: a venue started mid-day, or a group an operator moved, showed
		// no phase or the one before (README, "Operating the venue").
		o.metrics.phase.WithLabelValues(o.cfg.Schedule.Groups[g].Name).Set(float64(PhaseOfStatus(status)))
	}
}

// PhaseOfStatus is the phase whose status is status (statusOf's inverse):
// where a phase change to status puts its group (a cluster's follower
// reads an operator's from its commands).
func PhaseOfStatus(status venue.TradingStatus) schedule.Kind {
	for _, k := range []schedule.Kind{schedule.PreOpen, schedule.Open, schedule.ClosingCall} {
		if statusOf(k) == status {
			return k
		}
	}
	return schedule.Close
}

// PhasesFile, in the data directory, holds each schedule group's phase as
// last set (by the schedule or /v1/phase), by group name: a resume after a
// restart returns a halted instrument to the phase an operator set, not
// to the schedule's (README, "Operating the venue").
const PhasesFile = "phases.json"

// loadPhases reads PhasesFile at start; groups no longer configured are
// left out, and a file that cannot be read is logged and passed over.
func (o *Ops) loadPhases() {
	saved, err := ReadPhases(o.cfg.DataDir, o.cfg.Schedule.Groups)
	if err != nil {
		o.log.Warn("schedule: phases unreadable; a resume takes the schedule's phase until the next phase change", "file", PhasesFile, "err", err)
		return
	}
	for g, grp := range o.cfg.Schedule.Groups {
		if st, ok := saved[grp.Name]; ok {
			o.notePhase(g, st)
		}
	}
}

// ReadPhases reads PhasesFile in dataDir: the phase of each of groups as
// last set, by name (none without the file). The start's replay takes the
// phase changes of its commands over it (Config.Phases).
func ReadPhases(dataDir string, groups []config.ScheduleGroup) (map[string]venue.TradingStatus, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, PhasesFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var saved map[string]string
	if err == nil {
		err = json.Unmarshal(b, &saved)
	}
	if err != nil {
		return nil, err
	}
	out := map[string]venue.TradingStatus{}
	for _, grp := range groups {
		if st, ok := tradingStatusNamed(saved[grp.Name]); ok {
			out[grp.Name] = st
		}
	}
	return out, nil
}

// tradingStatusNamed is the TradingStatus whose String is name.
func tradingStatusNamed(name string) (venue.TradingStatus, bool) {
	for _, st := range []venue.TradingStatus{venue.TradingStatusOpeningCall, venue.TradingStatusOpen, venue.TradingStatusClosingCall,
		venue.TradingStatusClosed} {
		if st.String() == name {
			return st, true
		}
	}
	return 0, false
}

// resumeStatus is where resuming instrument in takes it (phaseMu held):
// where it would be without the halt. A halted instrument that was closed
// when halted, with no phase change since, returns to Closed: lifting a
// halt, of all instruments too, must not open what an operator, or the
// close, had closed. Any
// other halted instrument returns to the status of its group's phase (the
// last phase change, else the schedule's phase now); one that is not
// halted, or has no schedule, opens (a call uncrosses, a volatility
// auction ends), but for the closing call's extension, which closes
// (UncrossTo).
func (o *Ops) resumeStatus(in config.Instrument) venue.TradingStatus {
	st, ok := o.monitor.Instrument(in.ID)
	if ok && st.Status == venue.TradingStatusHalted && st.HaltedFrom == venue.TradingStatusClosed {
		return venue.TradingStatusClosed
	}
	if !ok || st.Status != venue.TradingStatusHalted || !o.cfg.Schedule.Enabled || o.plan == nil {
		return st.UncrossTo()
	}
	g, err := o.groupOf(&in)
	if err != nil {
		return venue.TradingStatusOpen
	}
	return o.groupPhase(g)
}

// groupPhase is the status of group g's phase (phaseMu held): as last set,
// else the schedule's phase now.
func (o *Ops) groupPhase(g int) venue.TradingStatus {
	if g < len(o.phaseKnown) && o.phaseKnown[g] {
		return o.phases[g]
	}
	kind, ok := o.plan.PhaseAt(o.cfg.Now(), g)
	if !ok {
		kind = schedule.Close
	}
	return statusOf(kind)
}

// Retries of a scheduled command that could not be journaled (the command
// ring stayed full) or not confirmed in time. A phase change run twice
// changes nothing the second time; an end of day is tried again only if
// its command is not in the journal (endOfDayJournaled).
const (
	transitionAttemptsMax = 5
	transitionRetryWait   = 500 * time.Millisecond
)

func (o *Ops) retry(f func() error) error {
	var err error
	for attempt := 0; attempt < transitionAttemptsMax; attempt++ {
		if err = f(); err == nil || errors.Is(err, ErrStopping) || o.halted() {
			return err // a halted venue journals nothing more: no use trying again
		}
		o.log.Warn("schedule: command not confirmed; trying again", "attempt", attempt+1, "err", err)
		select {
		case <-o.stop:
			return ErrStopping
		case <-time.After(transitionRetryWait):
		}
	}
	return err
}

// halted reports whether the venue has halted (the pipeline failed).
func (o *Ops) halted() bool { return o.cfg.Pipeline != nil && o.cfg.Pipeline.Err() != nil }

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
