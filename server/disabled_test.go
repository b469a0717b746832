package server

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestDisabledSessionsFollowTheEvents: the sessions an operator disabled
// are taken from the results of the journaled commands (as a follower
// does), refused and unknown ones change nothing, each change is in the
// data directory's file, and the list goes through a Raft snapshot's part
// (WriteState, Restore) to another node's file.
func TestDisabledSessionsFollowTheEvents(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), "")
	m, sink := followerSink(t, cfg, false)
	d := sink.disabled
	seq := uint64(0)
	act := func(action venue.OperatorActionType, session uint16) {
		t.Helper()
		var c venue.OperatorCommand
		buf := make([]byte, venue.OperatorCommandEncodedLength)
		if err := c.WrapEncode(buf, 0); err != nil {
			t.Fatal(err)
		}
		c.SetSeq(seq)
		c.SetAction(action)
		c.SetFilterSessionIdx(session)
		seq++
		if err := m.Apply(buf, sink); err != nil {
			t.Fatal(err)
		}
	}
	act(venue.OperatorActionTypeSessionDisable, 1) // CLIENT2
	act(venue.OperatorActionTypeSessionDisable, 3) // CLIENT4
	act(venue.OperatorActionTypeSessionEnable, 3)
	act(venue.OperatorActionTypeSessionDisable, 99) // refused: no such session
	if !d.has("CLIENT2") || d.has("CLIENT4") || d.has("CLIENT1") {
		t.Fatalf("disabled after the events: %v", d.ids)
	}
	if b, err := os.ReadFile(filepath.Join(cfg.Venue.DataDir, disabledSessionsFile)); err != nil || string(b) != `["CLIENT2"]` {
		t.Fatalf("file: %s %v", b, err)
	}
	var state bytes.Buffer
	if err := d.WriteState(&state); err != nil {
		t.Fatal(err)
	}
	other := testConfig(t, t.TempDir(), "")
	o, err := newDisabledSessions(other, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Restore(&state); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(other.Venue.DataDir, disabledSessionsFile)); err != nil || string(b) != `["CLIENT2"]` || !o.has("CLIENT2") {
		t.Fatalf("restored file: %s %v", b, err)
	}
}

// TestDisableHoldsWithoutItsFile: the disable of a session is a journaled
// command, made durable before its file is written; a crash in between (here
// the file removed after the venue stopped) must not let the session back
// in: the replay takes the disables and enables of the journal into the
// file. An enable after it is replayed too.
func TestDisableHoldsWithoutItsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, adminConfig())
	cfg.Journal.SnapshotInterval.Duration = 0 // the disable stays in the journal's replayed tail
	file := filepath.Join(dir, disabledSessionsFile)
	restart := func(s *Server) *Server {
		t.Helper()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		return startServer(t, cfg, Options{})
	}
	s := startServer(t, cfg, Options{})
	if code := adminCall(t, s, "POST", "/v1/sessions/CLIENT2/disable", aliceToken, `{"reason":"unpaid bill"}`, nil); code != 200 {
		t.Fatalf("disable: %d", code)
	}
	s = restart(s)
	logonRefused(t, s, "CLIENT2", "after a restart without its file")
	if b, err := os.ReadFile(file); err != nil || string(b) != `["CLIENT2"]` {
		t.Fatalf("file after the replay: %s %v", b, err)
	}
	if code := adminCall(t, s, "POST", "/v1/sessions/CLIENT2/enable", aliceToken, `{"reason":"paid"}`, nil); code != 200 {
		t.Fatalf("enable: %d", code)
	}
	s = restart(s)
	logon(t, s, "CLIENT2", true)
}

// followerSink is a new matcher and a cluster follower's own sink for its
// events, as applyCommitted hands them over; its disabled sessions are kept
// in memory only when memoryOnly.
func followerSink(t *testing.T, cfg *config.Config, memoryOnly bool) (*core.Matcher, *standbySink) {
	t.Helper()
	m, err := core.NewMatcher(MatcherConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDisabledSessions(cfg, memoryOnly)
	if err != nil {
		t.Fatal(err)
	}
	return m, &standbySink{hash: journal.NewHashSink(), disabled: d, schedule: &scheduleProgress{}, log: testLogger(t),
		configured: configuredInstruments(cfg)}
}

// logonRefused asserts that comp's logon is refused (a disabled session).
func logonRefused(t *testing.T, s *Server, comp, when string) {
	t.Helper()
	c, err := fixclient.Dial(s.FIXAddr(), comp, s.cfg.Venue.SenderCompID)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if m, err := c.Logon(true); err == nil {
		t.Fatalf("the disabled session %s logged on %s: %v", comp, when, m)
	}
}
