package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
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

// TestDisableNotWrittenHoldsSnapshotsBack: a disable whose file a full
// disk refuses (here a directory where its temporary file goes) is done
// all the same, the command durable. The start reads that file and replays
// the commands after its snapshot, so a snapshot after the disable would
// have let the session back in at the next start: the snapshots wait
// until the file is written again, and once the disk takes it, a restart
// from the snapshot that follows still refuses the session. The disable's
// command is made slow to become durable (300 ms), so that periodic
// snapshots fall between its command and its file's write: one published
// there held the disable while the file lacked it (a snapshot's check and
// its command are one step against a disable: ops.Ops.SnapshotGate).
func TestDisableNotWrittenHoldsSnapshotsBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, adminConfig())
	cfg.Journal.SnapshotInterval.Duration = 100 * time.Millisecond
	var logs lockedbuf.Buffer
	var slow atomic.Bool
	slowSync := func(f *os.File, kind journal.SyncKind) error {
		if kind == journal.SyncData && slow.Load() {
			time.Sleep(300 * time.Millisecond)
		}
		return journal.DefaultSync(f, kind)
	}
	s := startServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), JournalSync: slowSync})
	c := logon(t, s, "CLIENT1", true)
	unblock := blockWrite(t, dir, disabledSessionsFile)
	var res ops.ActionResponse
	slow.Store(true)
	code := adminCall(t, s, "POST", "/v1/sessions/CLIENT2/disable", aliceToken, `{"reason":"unpaid bill"}`, &res)
	slow.Store(false)
	if code != 200 {
		t.Fatalf("disable with its file unwritable: %d, want 200 (the command is durable)", code)
	}
	// Commands after the disable: a periodic snapshot is due.
	n := 0
	rest := func() {
		t.Helper()
		id := fmt.Sprintf("o%d", n)
		n++
		sendOrder(t, c, order{id: id, side: "1", qty: "1", px: "99.00"})
		expectER(t, c, map[int]string{11: id, 150: "0"})
	}
	waitUntil(t, "the periodic snapshot held back, or taken", func() bool {
		rest()
		return strings.Contains(logs.String(), "periodic snapshot held back") || snapshotAfter(t, dir, res.Seq) != 0
	})
	if seq := snapshotAfter(t, dir, res.Seq); seq != 0 {
		t.Fatalf("snapshot %d taken after the disable (seq %d) while its file lacks it", seq, res.Seq)
	}
	unblock()
	waitUntil(t, "a snapshot once the file is written", func() bool {
		rest()
		return snapshotAfter(t, dir, res.Seq) != 0
	})
	c.Close()
	total := s.Pipeline().Durable().Load() + 1
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, cfg, Options{})
	if after := total - int64(res.Seq) - 1; s.Replayed() >= after {
		t.Fatalf("the restart replayed %d commands, the disable among them: it loaded no snapshot taken after it", s.Replayed())
	}
	logonRefused(t, s, "CLIENT2", "after a restart from a snapshot taken after its disable")
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
