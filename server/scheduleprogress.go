package server

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/fixvenue/fixvenue/schedule"
)

// partScheduleProgress names the schedule's progress in a cluster's replica
// state.
const partScheduleProgress = "schedule"

// scheduleProgress is the command time of the last command the trading
// day's schedule journaled (operator ops.OperatorSchedule), as a cluster
// follower sees it in the results of the commands it applies; a Raft
// snapshot carries it. A node saves it as its schedule's progress when it
// starts to lead, so the new leader's schedule runs only the transitions
// after the old leader's last one: without it the new leader brought every
// group to its phase again (resuming an instrument an operator had halted)
// or ran the day's transitions again from its own last one (an opening
// call in the middle of the day). docs/ARCHITECTURE.md, "Cluster".
type scheduleProgress struct {
	lastNs int64 // 0: the schedule journaled nothing
	// endOfDayNs is the command time of the last end of day that was
	// applied, the schedule's or an operator's (0: none): the trading day holding it has ended, and a
	// new leader whose configuration moved end_of_day later runs no second
	// one that day (docs/ARCHITECTURE.md, "Operations: the control plane
	// and the trading day").
	endOfDayNs int64
}

// Event takes the result of an operator command.
func (p *scheduleProgress) Event(ev []byte) error {
	r, ok := operatorResultOf(ev)
	if !ok {
		return nil
	}
	if string(r.Operator()) == ops.OperatorSchedule {
		p.lastNs = max(p.lastNs, r.TimestampNs())
	}
	if r.Action() == venue.OperatorActionTypeEndOfDay && r.Reason() == venue.RejectReasonNone {
		// The schedule's or an operator's: either ends the trading day.
		p.endOfDayNs = max(p.endOfDayNs, r.TimestampNs())
	}
	return nil
}

// WriteState writes the two times, 8 bytes each.
func (p *scheduleProgress) WriteState(w io.Writer) error {
	return binary.Write(w, binary.LittleEndian, [2]int64{p.lastNs, p.endOfDayNs})
}

// Restore loads what WriteState wrote; a state of 8 bytes (a node that
// kept no end of day wrote it) has none.
func (p *scheduleProgress) Restore(r io.Reader) error {
	if err := binary.Read(r, binary.LittleEndian, &p.lastNs); err != nil {
		return fmt.Errorf("schedule progress: %w", err)
	}
	p.endOfDayNs = 0
	if err := binary.Read(r, binary.LittleEndian, &p.endOfDayNs); err != nil && err != io.EOF {
		return fmt.Errorf("schedule progress: the end of day: %w", err)
	}
	return nil
}

// save records the progress in dataDir for the schedule of plan (nothing
// when the schedule journaled nothing: a first start brings the groups to
// their phases), with the trading day of the last end of day.
func (p *scheduleProgress) save(dataDir string, plan *schedule.Plan) error {
	if p.lastNs == 0 {
		return nil
	}
	endedDay := ""
	if p.endOfDayNs != 0 {
		endedDay, _ = plan.EndedBy(time.Unix(0, p.endOfDayNs))
	}
	return ops.SaveScheduleProgress(dataDir, schedule.Through(time.Unix(0, p.lastNs)),
		"the last scheduled command this node applied as a follower", endedDay)
}
