package server

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/fixvenue/fixvenue/schedule"
)

// partScheduleProgress names the schedule's progress in a cluster's replica
// state.
const partScheduleProgress = "schedule"

// scheduleProgress is the trading day's progress as a cluster follower sees
// it in the commands it applies and their results; a Raft snapshot carries
// it. A node saves it as its schedule's progress when it starts to lead, so
// the new leader's schedule runs neither again what the old leader ran nor
// misses what it did not: without it the new leader brought every group to
// its phase again (resuming an instrument an operator had halted) or ran the
// day's transitions again from its own last one (an opening call in the
// middle of the day). docs/ARCHITECTURE.md, "Cluster".
type scheduleProgress struct {
	lastNs int64 // the command time of the schedule's last command; 0: the schedule journaled nothing
	// endOfDayNs is the command time of the last end of day that was
	// applied, the schedule's or an operator's (0: none): the trading day holding it has ended, and a
	// new leader whose configuration moved end_of_day later runs no second
	// one that day (docs/ARCHITECTURE.md, "Operations: the control plane
	// and the trading day").
	endOfDayNs int64
	// endOfDaySeq and endOfDayExpired are that end of day's command seq
	// and the DAY orders it expired, for the report a new leader's
	// GET /v1/status gives (ops.Config.ReplicatedEndOfDay): the node that
	// ran it wrote its own, which this node lacks (0: not known, a Raft
	// snapshot of an older node).
	endOfDaySeq     uint64
	endOfDayExpired uint32
	// groupNames are the configured groups' names: the commands name a
	// group by its name, cut short with their reason (ops.ScheduleTransitionOf).
	groupNames []string
	sched      config.Schedule
	// plan places an operator's phase change in its trading day (nil
	// without a schedule).
	plan *schedule.Plan
	// groups is, by configured group name, where each group stands in its
	// day: the last transition of it that the schedule finished, or the
	// phase an operator moved it to since: a single venue's record of them
	// (ops.GroupRun), so that a new leader whose configuration moved a
	// group's times takes no group back within a day, and runs none of the
	// day's transitions an operator's phase change superseded (an early
	// close stays closed). At most one per configured group.
	groups map[string]ops.GroupRun
	// phases is, by group name, each group's phase as last set by a
	// phase change (the schedule's or an operator's /v1/phase: where a
	// resume takes a halted instrument), as a single venue's phases.json
	// keeps it; the commands name the instrument, whose group is in
	// configured or, for an instrument added while the venue ran, added
	// (bounded by engine.instruments_max).
	phases     map[string]venue.TradingStatus
	configured map[uint32]string
	added      map[uint32]string
	// unanswered is an operator's phase change command of a group that
	// was in that phase already (Command), until its result (Event): the
	// change is recorded only if the result says it moved its instrument.
	// Always nil between commands (a command's result is among its own
	// events), so a Raft snapshot does not carry it.
	unanswered *phaseCommand
	// operatorRuns are, by group name, the places in the day an
	// operator's phase changes set (as groups has them) that no command
	// of the schedule for the group followed: what a single venue's start
	// takes from its replay over schedule.state (replayedGroups). A
	// transition's record the schedule writes itself once it ran, and runs
	// it again when it did not. Kept by a replay's progress only (nil on
	// a follower's), and not carried by a Raft snapshot.
	operatorRuns map[string]ops.GroupRun
	// last is the transition of the schedule's last command: the
	// transitions before it ran (the schedule runs one at a time, each to
	// its end), it may not have finished (a leader lost between the
	// commands of a group's instruments), and a new leader runs it again
	// for its group (a phase change run twice changes nothing) unless
	// done says it finished.
	last lastTransition
}

// phaseCommand is an operator's phase change command of one instrument of
// group: to status at the command time ns.
type phaseCommand struct {
	group  string
	status venue.TradingStatus
	ns     int64
}

// lastTransition is a transition the schedule journaled a command of.
type lastTransition struct {
	Day   string        `json:"day"`
	Kind  schedule.Kind `json:"kind"` // 0: none (a first start's commands: the position is lastNs)
	Group string        `json:"group,omitempty"`
	// Done: an operator's phase change came after it, so it had finished
	// (ops runs phase changes one at a time): run again, it would undo it.
	Done bool `json:"done,omitempty"`
	// Recorded: it is in groups already, finished when an operator's
	// phase change came, before that change's place. Without it (a Raft
	// snapshot of a node that did not record it then) a Done transition
	// is recorded when the progress is saved.
	Recorded bool `json:"recorded,omitempty"`
}

func newScheduleProgress(cfg *config.Config) *scheduleProgress {
	p := &scheduleProgress{sched: cfg.Schedule, configured: map[uint32]string{}}
	if cfg.Schedule.Enabled {
		p.plan = schedule.New(cfg.Schedule)
	}
	for _, g := range cfg.Schedule.Groups {
		p.groupNames = append(p.groupNames, g.Name)
	}
	for _, in := range cfg.Instruments {
		if g := p.instrumentGroup(in.Symbol, in.Group); g != "" {
			p.configured[in.ID] = g
		}
	}
	return p
}

// replayedSchedule is the progress a single venue's start-up replay
// gathers from the commands after its snapshot (Server.replay), as a
// follower gathers it from those it applies: the phases start from the
// data directory's phases file, over which the replayed phase changes go
// (an operator's phase change is told from one that changed nothing
// against it), so that a change the journal holds and the file lacks (its
// write refused by a full disk, a crash before it) holds after the start.
func replayedSchedule(cfg *config.Config) *scheduleProgress {
	p := newScheduleProgress(cfg)
	p.operatorRuns = map[string]ops.GroupRun{}
	// A file that cannot be read is passed over (ops logs it, and resumes
	// into the schedule's phases).
	saved, _ := ops.ReadPhases(cfg.Venue.DataDir, cfg.Schedule.Groups)
	for name, st := range saved {
		p.setPhase(name, st)
	}
	return p
}

// replayedGroups are the groups' places in their day that operators'
// phase changes among the replayed commands set, those the schedule did
// not move on from since (operatorRuns).
func (p *scheduleProgress) replayedGroups() map[string]ops.GroupRun {
	return maps.Clone(p.operatorRuns)
}

// instrumentGroup is the name of the group of the instrument symbol whose
// group is named group ("": the group its symbol falls in), as ops places
// it; "" when none is configured.
func (p *scheduleProgress) instrumentGroup(symbol, group string) string {
	if group != "" {
		return p.groupNamed(group, false)
	}
	g, err := p.sched.GroupOf(symbol)
	if err != nil || g >= len(p.sched.Groups) {
		return ""
	}
	return p.sched.Groups[g].Name
}

// Event takes the result of an operator command.
func (p *scheduleProgress) Event(ev []byte) error {
	r, ok := operatorResultOf(ev)
	if !ok {
		return nil
	}
	if u := p.unanswered; u != nil && r.Action() == venue.OperatorActionTypeSetPhaseStatus {
		// The result of the command Command was shown last.
		p.unanswered = nil
		if r.Reason() == venue.RejectReasonNone {
			p.operatorSetPhase(u.group, u.status, u.ns) // it moved its instrument
		}
	}
	if string(r.Operator()) == ops.OperatorSchedule {
		p.lastNs = max(p.lastNs, r.TimestampNs())
	}
	if r.Action() == venue.OperatorActionTypeEndOfDay && r.Reason() == venue.RejectReasonNone {
		// The schedule's or an operator's: either ends the trading day.
		if r.TimestampNs() >= p.endOfDayNs {
			p.endOfDayNs, p.endOfDaySeq, p.endOfDayExpired = r.TimestampNs(), r.CauseSeq(), r.Count()
		}
	}
	return nil
}

// Command takes a command before it is applied: the schedule's name the
// transition they run in their reason, and an operator's phase change
// says the schedule's last transition had finished.
func (p *scheduleProgress) Command(cmd []byte) {
	p.unanswered = nil
	if a, ok := venue.DecodeAddInstrument(cmd); ok {
		if _, known := p.configured[a.InstrumentID()]; !known {
			if g := p.instrumentGroup(string(a.Symbol()), string(a.Group())); g != "" {
				if p.added == nil {
					p.added = map[uint32]string{}
				}
				p.added[a.InstrumentID()] = g
			}
		}
		return
	}
	c, ok := core.DecodeOperatorCommand(cmd) // a record of an earlier build too
	if !ok {
		return
	}
	if c.Action() == venue.OperatorActionTypeSetPhaseStatus && string(c.Operator()) == ops.OperatorSchedule {
		// ops records the phase of a group the schedule moves once its
		// commands are durable, whatever the matcher answers them (an
		// instrument there already, or halted). A leader lost between the
		// commands of a group's instruments left it recording none; the
		// follower takes the change from the first command it applies,
		// which the journal has.
		if g := p.groupOf(c.InstrumentID()); g != "" {
			p.setPhase(g, c.Status())
			delete(p.operatorRuns, g)
		}
	}
	if string(c.Operator()) != ops.OperatorSchedule {
		if c.Action() == venue.OperatorActionTypeSetPhaseStatus {
			p.operatorPhase(c)
		}
		return
	}
	day, kind, group, ok := ops.ScheduleTransitionOf(c.Action(), c.Reason())
	if !ok {
		p.last = lastTransition{} // a first start's: the position is its time
		return
	}
	if group != "" {
		group = p.groupNamed(group, len(c.Reason()) == venue.OperatorReasonLength)
	}
	tr := lastTransition{Day: day, Kind: kind, Group: group}
	if tr.Day == p.last.Day && tr.Kind == p.last.Kind && tr.Group == p.last.Group {
		return // the same transition's next instrument
	}
	if !p.last.Recorded {
		p.finish(p.last)
	}
	p.last = tr
}

// operatorPhase takes an operator's phase change of an instrument's group
// (one command per instrument): the schedule's last transition had
// finished (ops runs phase changes one at a time), and the group's phase
// and its place in the day are recorded as a single venue records them
// (ops, handlePhase): once the group was not in that phase, or a command
// of the change moved its instrument (its result, Event). A change that
// did neither, answered 409, records nothing: recorded, a close of a
// group closed before its pre-open had a new leader pass over the group's
// whole day. Later commands of a change that was recorded record it again,
// which changes nothing.
func (p *scheduleProgress) operatorPhase(c venue.OperatorCommand) {
	if p.last.Kind != 0 {
		if !p.last.Recorded {
			p.finish(p.last)
			p.last.Recorded = true
		}
		p.last.Done = true
	}
	g := p.groupOf(c.InstrumentID())
	if g == "" {
		return
	}
	if p.phaseOf(g, c.TimestampNs()) != ops.PhaseOfStatus(c.Status()) {
		p.operatorSetPhase(g, c.Status(), c.TimestampNs())
		return
	}
	p.unanswered = &phaseCommand{group: g, status: c.Status(), ns: c.TimestampNs()}
}

// operatorSetPhase records that an operator moved group g to status at
// ns: its phase, and the phase set in the trading day in progress then
// (ops, "operatorSetPhase").
func (p *scheduleProgress) operatorSetPhase(g string, status venue.TradingStatus, ns int64) {
	p.setPhase(g, status)
	if p.plan == nil {
		return
	}
	if day, ok := p.plan.DayInProgress(time.Unix(0, ns)); ok {
		if p.groups == nil {
			p.groups = map[string]ops.GroupRun{}
		}
		p.groups[g] = ops.GroupRun{Day: day, Kind: ops.PhaseOfStatus(status)}
		if p.operatorRuns != nil {
			p.operatorRuns[g] = p.groups[g]
		}
	}
}

// setPhase records group g's phase as last set.
func (p *scheduleProgress) setPhase(g string, status venue.TradingStatus) {
	if p.phases == nil {
		p.phases = map[string]venue.TradingStatus{}
	}
	p.phases[g] = status
}

// phaseOf is group g's phase at ns as the leader's control plane has it
// (ops, "groupPhase"): as last set, else the schedule's phase then, else
// the close.
func (p *scheduleProgress) phaseOf(g string, ns int64) schedule.Kind {
	if st, ok := p.phases[g]; ok {
		return ops.PhaseOfStatus(st)
	}
	for i, grp := range p.sched.Groups {
		if grp.Name != g || p.plan == nil {
			continue
		}
		if kind, ok := p.plan.PhaseAt(time.Unix(0, ns), i); ok {
			return kind
		}
	}
	return schedule.Close
}

// groupOf is the name of instrument id's group ("": none configured).
func (p *scheduleProgress) groupOf(id uint32) string {
	if g, ok := p.configured[id]; ok {
		return g
	}
	return p.added[id]
}

// groupNamed is the configured group a command names as name, which may be
// cut short; "" when none, or more than one, is.
func (p *scheduleProgress) groupNamed(name string, cut bool) string {
	found := ""
	for _, g := range p.groupNames {
		if g == name {
			return g
		}
		if cut && strings.HasPrefix(g, name) {
			if found != "" {
				return ""
			}
			found = g
		}
	}
	return found
}

// finish records tr, a group's transition, as finished.
func (p *scheduleProgress) finish(tr lastTransition) {
	if tr.Group == "" || tr.Kind == schedule.EndOfDay || tr.Kind == 0 {
		return
	}
	if p.groups == nil {
		p.groups = map[string]ops.GroupRun{}
	}
	p.groups[tr.Group] = ops.GroupRun{Day: tr.Day, Kind: tr.Kind}
}

// progressDetail is the part of the state after the two times.
type progressDetail struct {
	Groups map[string]ops.GroupRun        `json:"groups,omitempty"`
	Last   lastTransition                 `json:"last"`
	Phases map[string]venue.TradingStatus `json:"phases,omitempty"`
	Added  map[uint32]string              `json:"added,omitempty"`
	// The last end of day's seq and expired orders (endOfDaySeq).
	EndOfDaySeq     uint64 `json:"end_of_day_seq,omitempty"`
	EndOfDayExpired uint32 `json:"end_of_day_expired,omitempty"`
}

// WriteState writes the two times, 8 bytes each, then the groups' last
// transitions, the last transition, the phases and the added instruments'
// groups as JSON (an older node reads the times only).
func (p *scheduleProgress) WriteState(w io.Writer) error {
	if err := binary.Write(w, binary.LittleEndian, [2]int64{p.lastNs, p.endOfDayNs}); err != nil {
		return err
	}
	b, err := json.Marshal(progressDetail{Groups: p.groups, Last: p.last, Phases: p.phases, Added: p.added,
		EndOfDaySeq: p.endOfDaySeq, EndOfDayExpired: p.endOfDayExpired})
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Restore loads what WriteState wrote; a state of 8 bytes (a node that
// kept no end of day wrote it) has none, and one of 16 (an older node's)
// nothing of the groups. Groups not configured here are left out.
func (p *scheduleProgress) Restore(r io.Reader) error {
	if err := binary.Read(r, binary.LittleEndian, &p.lastNs); err != nil {
		return fmt.Errorf("schedule progress: %w", err)
	}
	p.endOfDayNs, p.groups, p.last, p.phases, p.added, p.operatorRuns = 0, nil, lastTransition{}, nil, nil, nil
	p.endOfDaySeq, p.endOfDayExpired = 0, 0
	if err := binary.Read(r, binary.LittleEndian, &p.endOfDayNs); err == io.EOF {
		return nil
	} else if err != nil {
		return fmt.Errorf("schedule progress: the end of day: %w", err)
	}
	rest, err := io.ReadAll(r)
	if err != nil || len(bytes.TrimSpace(rest)) == 0 {
		return err
	}
	var d progressDetail
	if err := json.Unmarshal(rest, &d); err != nil {
		return fmt.Errorf("schedule progress: the groups: %w", err)
	}
	for name, run := range d.Groups {
		if p.groupNamed(name, false) != "" {
			if p.groups == nil {
				p.groups = map[string]ops.GroupRun{}
			}
			p.groups[name] = run
		}
	}
	p.last = d.Last
	p.endOfDaySeq, p.endOfDayExpired = d.EndOfDaySeq, d.EndOfDayExpired
	for name, st := range d.Phases {
		if p.groupNamed(name, false) != "" {
			if p.phases == nil {
				p.phases = map[string]venue.TradingStatus{}
			}
			p.phases[name] = st
		}
	}
	for id, name := range d.Added {
		if _, known := p.configured[id]; !known && p.groupNamed(name, false) != "" {
			if p.added == nil {
				p.added = map[uint32]string{}
			}
			p.added[id] = name
		}
	}
	return nil
}

// endOfDayReport is the last end of day this node applied as a follower,
// as a new leader's report of it (nil: none applied).
func (p *scheduleProgress) endOfDayReport() *ops.EndOfDayReport {
	if p.endOfDayNs == 0 {
		return nil
	}
	return &ops.EndOfDayReport{Seq: p.endOfDaySeq, Expired: p.endOfDayExpired, CommandUnixNs: p.endOfDayNs,
		SnapshotSeq: -1, ArchivedThrough: -1,
		NotArchived: "run by the node that led then: its snapshot and archive are that node's"}
}

// Phases is each group's phase as last set, by group name, for a new
// leader's control plane (ops.Config.Phases).
func (p *scheduleProgress) Phases() map[string]venue.TradingStatus { return maps.Clone(p.phases) }

// save records the progress in dataDir for the schedule of cfg (nothing
// when the schedule journaled nothing: a first start brings the groups to
// their phases), with the trading day of the last end of day: the position
// of the last transition under this configuration, else (its group or day
// unknown here, or the last commands a first start's) the time of the last
// command.
func (p *scheduleProgress) save(dataDir string, cfg config.Schedule) error {
	if p.lastNs == 0 {
		return nil
	}
	plan := schedule.New(cfg)
	prog := ops.ScheduleProgress{Last: schedule.Through(time.Unix(0, p.lastNs)),
		What: "the last scheduled command this node applied as a follower", Groups: maps.Clone(p.groups)}
	if p.endOfDayNs != 0 {
		prog.EndedDay, _ = plan.EndedBy(time.Unix(0, p.endOfDayNs))
	}
	if tr, ok := p.lastPlaced(plan, cfg.Groups); ok {
		prog.Last, prog.What = tr, "the transition of the last scheduled command this node applied as a follower: "+tr.String()
		if p.last.Done && !p.last.Recorded && tr.Kind != schedule.EndOfDay {
			if prog.Groups == nil {
				prog.Groups = map[string]ops.GroupRun{}
			}
			prog.Groups[p.last.Group] = ops.GroupRun{Day: p.last.Day, Kind: p.last.Kind}
		}
	}
	return ops.SaveScheduleProgress(dataDir, prog, cfg.Groups)
}

// lastPlaced is the last transition in plan, whose groups are groups.
func (p *scheduleProgress) lastPlaced(plan *schedule.Plan, groups []config.ScheduleGroup) (schedule.Transition, bool) {
	if p.last.Kind == 0 {
		return schedule.Transition{}, false
	}
	g := -1
	if p.last.Kind != schedule.EndOfDay {
		for i, grp := range groups {
			if grp.Name == p.last.Group {
				g = i
			}
		}
		if g < 0 {
			return schedule.Transition{}, false
		}
	}
	return plan.Transition(p.last.Day, p.last.Kind, g)
}
