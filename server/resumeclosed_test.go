package server

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
)

// adminPost makes one POST of the admin API as alice and requires its status.
func adminPost(t *testing.T, s *Server, path, body string, want int) ops.ActionResponse {
	t.Helper()
	var res ops.ActionResponse
	if code := adminCall(t, s, "POST", path, aliceToken, body, &res); code != want {
		t.Fatalf("%s %s: %d, want %d", path, body, code, want)
	}
	return res
}

// wantStatuses requires each instrument's status (GET /v1/instruments).
func wantStatuses(t *testing.T, s *Server, when string, want map[string]string) {
	t.Helper()
	for sym, st := range want {
		waitStatus(t, s, sym, st, readWait)
	}
	got := instrumentsOf(t, s)
	for sym, st := range want {
		if got[sym].Status != st {
			t.Fatalf("%s: %s is %s, want %s", when, sym, got[sym].Status, st)
		}
	}
}

// TestResumeAllKeepsAClosedInstrumentClosed: an instrument an operator
// closed, then halted with all the others, returns to Closed when the
// halts of all are lifted ("all/resume lifts the halts only"), the others
// to Open; it opened. So it does after a restart, from the snapshot taken
// while it was halted and from the journal replayed.
func TestResumeAllKeepsAClosedInstrumentClosed(t *testing.T) {
	t.Parallel()
	for _, fromSnapshot := range []bool{false, true} {
		name := "replay"
		if fromSnapshot {
			name = "snapshot"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			start := func() *Server {
				cfg := testConfig(t, dir, adminConfig())
				if fromSnapshot {
					cfg.Journal.SnapshotInterval.Duration = 100 * time.Millisecond
				}
				s := startServer(t, cfg, Options{})
				waitReady(t, s)
				return s
			}
			s := start()
			adminPost(t, s, "/v1/instruments/LOTS/close", `{"reason":"corporate action"}`, 200)
			adminPost(t, s, "/v1/instruments/all/halt", `{"reason":"market-wide"}`, 200)
			wantStatuses(t, s, "halted", map[string]string{"ACME": "Halted", "LOTS": "Halted"})
			if res := adminPost(t, s, "/v1/instruments/all/resume", `{"reason":"lifted"}`, 200); res.Count != 2 {
				t.Fatalf("resume all: %+v, want both halts lifted", res)
			}
			wantStatuses(t, s, "resumed", map[string]string{"ACME": "Open", "LOTS": "Closed"})
			adminPost(t, s, "/v1/instruments/all/resume", `{"reason":"again"}`, 409)

			halt := adminPost(t, s, "/v1/instruments/all/halt", `{"reason":"market-wide again"}`, 200)
			wantStatuses(t, s, "halted again", map[string]string{"ACME": "Halted", "LOTS": "Halted"})
			journalDir := filepath.Join(dir, "journal")
			snapshotSince := func() bool {
				snaps, err := journal.ListSnapshots(journalDir)
				if err != nil {
					t.Fatal(err)
				}
				return slices.ContainsFunc(snaps, func(sn journal.SnapshotFile) bool { return sn.Seq > halt.Seq })
			}
			if fromSnapshot {
				waitUntil(t, "a snapshot after the halt", snapshotSince)
			} else if snapshotSince() {
				t.Fatal("a snapshot after the halt: the restart would not replay it")
			}
			total := s.Pipeline().Durable().Load() + 1
			s.Close()

			s = start()
			if replayedHalt := s.Replayed() >= total-int64(halt.Seq); replayedHalt == fromSnapshot {
				t.Fatalf("replayed %d of %d commands, the halt at seq %d: the start did not take the path tested", s.Replayed(), total, halt.Seq)
			}
			wantStatuses(t, s, "restarted", map[string]string{"ACME": "Halted", "LOTS": "Halted"})
			if res := adminPost(t, s, "/v1/instruments/all/resume", `{"reason":"lifted"}`, 200); res.Count != 2 {
				t.Fatalf("resume all after the restart: %+v, want both halts lifted", res)
			}
			wantStatuses(t, s, "resumed after the restart", map[string]string{"ACME": "Open", "LOTS": "Closed"})
		})
	}
}

// TestResumeKeepsAnInstrumentClosedInAnOpenGroup: with a schedule, an
// instrument an operator closed while its group is open returns to Closed
// when its halt is lifted, not to the group's phase; once a phase change
// passed over its halt, a resume takes it to that phase, as it would be
// without the halt.
func TestResumeKeepsAnInstrumentClosedInAnOpenGroup(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()+idleSchedule()), Options{})
	waitReady(t, s)
	adminPost(t, s, "/v1/phase", `{"reason":"early","group":"acme","phase":"open"}`, 200)
	adminPost(t, s, "/v1/phase", `{"reason":"early","group":"rest","phase":"open"}`, 200)
	wantStatuses(t, s, "open", map[string]string{"ACME": "Open", "LOTS": "Open"})

	adminPost(t, s, "/v1/instruments/LOTS/close", `{"reason":"corporate action"}`, 200)
	adminPost(t, s, "/v1/instruments/all/halt", `{"reason":"market-wide"}`, 200)
	wantStatuses(t, s, "halted", map[string]string{"ACME": "Halted", "LOTS": "Halted"})
	adminPost(t, s, "/v1/instruments/all/resume", `{"reason":"lifted"}`, 200)
	wantStatuses(t, s, "resumed", map[string]string{"ACME": "Open", "LOTS": "Closed"})

	// One at a time too.
	adminPost(t, s, "/v1/instruments/LOTS/halt", `{"reason":"news"}`, 200)
	adminPost(t, s, "/v1/instruments/LOTS/resume", `{"reason":"news out"}`, 200)
	wantStatuses(t, s, "resumed alone", map[string]string{"LOTS": "Closed"})

	adminPost(t, s, "/v1/instruments/LOTS/halt", `{"reason":"news"}`, 200)
	if res := adminPost(t, s, "/v1/phase", `{"reason":"close","group":"rest","phase":"closing_call"}`, 200); !slices.Equal(res.StayHalted, []string{"LOTS"}) {
		t.Fatalf("the closing call: %+v, want LOTS to stay halted", res)
	}
	wantStatuses(t, s, "the closing call passed over the halt", map[string]string{"LOTS": "Halted"})
	adminPost(t, s, "/v1/instruments/all/resume", `{"reason":"lifted"}`, 200)
	wantStatuses(t, s, "resumed into the closing call", map[string]string{"ACME": "Open", "LOTS": "ClosingCall"})
}
