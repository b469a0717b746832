package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/internal/durable"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// disabledSessionsFile keeps the sessions an operator disabled, so that a
// restart keeps refusing their logons (the journal holds who did it and why).
const disabledSessionsFile = "sessions.disabled"

// partDisabledSessions names them in a cluster's replica state.
const partDisabledSessions = "sessions"

// disabledSessions are the client CompIDs an operator disabled. The serving
// venue changes them when its disable or enable command is durable
// (sessionControl); a cluster follower takes them from the OperatorResult
// events of the commands it applies, and a Raft snapshot carries them (a
// cluster.StatePart), so that a new leader refuses what the old one did
// (docs/ARCHITECTURE.md, "Cluster"). Each change is written to the data
// directory's file before it counts; path "" keeps them in memory only (a
// state being built for a Raft snapshot).
type disabledSessions struct {
	path    string
	compIDs []string // by session index
	mu      sync.Mutex
	ids     map[string]bool
	// unsaved: a change is not in the file (its write failed).
	unsaved bool
}

// newDisabledSessions returns the sessions of cfg disabled in the data
// directory's file (none when there is no file); with memoryOnly, none, and
// nothing is written.
func newDisabledSessions(cfg *config.Config, memoryOnly bool) (*disabledSessions, error) {
	d := &disabledSessions{ids: map[string]bool{}}
	for i := range cfg.Sessions {
		d.compIDs = append(d.compIDs, cfg.Sessions[i].CompID)
	}
	if memoryOnly {
		return d, nil
	}
	d.path = filepath.Join(cfg.Venue.DataDir, disabledSessionsFile)
	b, err := os.ReadFile(d.path)
	if errors.Is(err, os.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, err
	}
	if err := d.load(b); err != nil {
		return nil, fmt.Errorf("%s: %w", d.path, err)
	}
	return d, nil
}

func (d *disabledSessions) load(b []byte) error {
	var ids []string
	if err := json.Unmarshal(b, &ids); err != nil {
		return err
	}
	d.mu.Lock()
	clear(d.ids)
	for _, id := range ids {
		d.ids[id] = true
	}
	d.mu.Unlock()
	return nil
}

func (d *disabledSessions) has(compID string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ids[compID]
}

// set disables or enables a session and writes the file; on an error the
// change holds in memory, and the snapshots wait until recorded writes it.
func (d *disabledSessions) set(compID string, disabled bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids[compID] == disabled {
		return nil
	}
	if disabled {
		d.ids[compID] = true
	} else {
		delete(d.ids, compID)
	}
	if d.path == "" {
		return nil
	}
	if err := durable.WriteFile(d.path, d.encode(), 0o640); err != nil {
		d.unsaved = true
		return fmt.Errorf("disabled sessions not saved (written again before the next snapshot, which waits for it): %w", err)
	}
	d.unsaved = false
	return nil
}

// recorded writes the list again when a change of it could not be written
// (a full disk), and says whether the file holds it (ops.Config.Recorded).
// A start takes the file's list and the disables and enables of the
// commands it replays, those after its snapshot: from a snapshot taken
// after a change the file lacks, the start would have a disabled session
// log on again.
func (d *disabledSessions) recorded() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.unsaved || d.path == "" {
		return nil
	}
	if err := durable.WriteFile(d.path, d.encode(), 0o640); err != nil {
		return fmt.Errorf("the disabled sessions are not in %s (%w)", d.path, err)
	}
	d.unsaved = false
	return nil
}

// encode is the sorted JSON list (d.mu held).
func (d *disabledSessions) encode() []byte {
	ids := make([]string, 0, len(d.ids))
	for id := range d.ids {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	b, _ := json.Marshal(ids)
	return b
}

// operatorResultOf decodes ev when it is an OperatorResult, the event the
// follower's parts kept in the data directory learn from.
func operatorResultOf(ev []byte) (r venue.OperatorResult, ok bool) {
	if id, err := venue.TemplateIDOf(ev, 0); err != nil || id != venue.OperatorResultTemplateID {
		return r, false
	}
	return r, r.WrapDecode(ev, 0) == nil
}

// Event takes the result of an accepted disable or enable command.
func (d *disabledSessions) Event(ev []byte) error {
	r, ok := operatorResultOf(ev)
	if !ok || r.Reason() != venue.RejectReasonNone || int(r.FilterSessionIdx()) >= len(d.compIDs) {
		return nil
	}
	switch r.Action() {
	case venue.OperatorActionTypeSessionDisable:
		return d.set(d.compIDs[r.FilterSessionIdx()], true)
	case venue.OperatorActionTypeSessionEnable:
		return d.set(d.compIDs[r.FilterSessionIdx()], false)
	}
	return nil
}

// WriteState writes the list, as the file holds it.
func (d *disabledSessions) WriteState(w io.Writer) error {
	d.mu.Lock()
	b := d.encode()
	d.mu.Unlock()
	_, err := w.Write(b)
	return err
}

// Restore loads a list WriteState wrote, and writes the file.
func (d *disabledSessions) Restore(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if err := d.load(b); err != nil {
		return err
	}
	if d.path == "" {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return durable.WriteFile(d.path, d.encode(), 0o640)
}
