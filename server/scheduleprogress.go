package server

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/fixvenue/fixvenue/ops"
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
}

// Event takes the result of an operator command.
func (p *scheduleProgress) Event(ev []byte) error {
	if r, ok := operatorResultOf(ev); ok && string(r.Operator()) == ops.OperatorSchedule {
		p.lastNs = max(p.lastNs, r.TimestampNs())
	}
	return nil
}

// WriteState writes the time, 8 bytes.
func (p *scheduleProgress) WriteState(w io.Writer) error {
	return binary.Write(w, binary.LittleEndian, p.lastNs)
}

// Restore loads what WriteState wrote.
func (p *scheduleProgress) Restore(r io.Reader) error {
	if err := binary.Read(r, binary.LittleEndian, &p.lastNs); err != nil {
		return fmt.Errorf("schedule progress: %w", err)
	}
	return nil
}

// save records the progress in dataDir for the schedule (nothing when the
// schedule journaled nothing: a first start brings the groups to their
// phases).
func (p *scheduleProgress) save(dataDir string) error {
	if p.lastNs == 0 {
		return nil
	}
	return ops.SaveScheduleProgress(dataDir, schedule.Through(time.Unix(0, p.lastNs)), "the last scheduled command this node applied as a follower")
}
