package server

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/internal/admintest"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// catchUpVenueConfig is the compressed day's venue with both periodic
// commands frequent: a snapshot every 50 ms (when commands arrived) and a
// risk-utilisation report every 20 ms.
func catchUpVenueConfig(t *testing.T, dir string) *config.Config {
	t.Helper()
	cfg := testConfig(t, dir, tradingDayConfig(t, dir)+riskDashboardExtra)
	cfg.Engine.OrdersMax, cfg.Engine.ClOrdIDsMax = 256, 320
	cfg.Journal.SnapshotInterval.Duration = config.SnapshotIntervalMin
	return cfg
}

// syncHold holds the journal's data syncs once on is set, until release:
// the command then published is never durable.
type syncHold struct {
	on                    atomic.Bool
	held, released        chan struct{} // held: closed once a sync waits
	heldOnce, releaseOnce sync.Once
}

func newSyncHold(t *testing.T) *syncHold {
	h := &syncHold{held: make(chan struct{}), released: make(chan struct{})}
	t.Cleanup(h.release)
	return h
}

// sync is the journal's sync (Options.JournalSync).
func (h *syncHold) sync(f *os.File, kind journal.SyncKind) error {
	if kind == journal.SyncData && h.on.Load() {
		h.heldOnce.Do(func() { close(h.held) })
		<-h.released
	}
	return journal.DefaultSync(f, kind)
}

// startHeld starts a venue on cfg whose journal's sync the test holds
// (hold.on) and whose admin calls are answered 504 timeout once their
// command is published and not yet durable (a 300 ms call timeout).
func startHeld(t *testing.T, cfg *config.Config, opts Options) (*Server, *syncHold) {
	t.Helper()
	hold := newSyncHold(t)
	cfg.Admin.CallTimeout.Duration = 300 * time.Millisecond
	opts.JournalSync = hold.sync
	s := startServer(t, cfg, opts)
	t.Cleanup(hold.release) // before the venue's Close, which waits for the journal
	return s, hold
}

func (h *syncHold) release() { h.releaseOnce.Do(func() { close(h.released) }) }

// waitHeld waits for a sync to be held; what names who journals, logs
// are the venue's.
func (h *syncHold) waitHeld(t *testing.T, what string, logs *lockedbuf.Buffer) {
	t.Helper()
	select {
	case <-h.held:
	case <-time.After(readWait):
		t.Fatalf("%s journaled nothing within %s:\n%s", what, readWait, logs.String())
	}
}

// heldCatchUp is a venue started after its close and end of day were due
// (holdCatchUp),
// whose catch-up is held at its first command: the journal's data syncs
// wait from the first reading of the trading day's clock (the catch-up's
// start) until release, so that command is published and never durable.
type heldCatchUp struct {
	s       *Server
	logs    *lockedbuf.Buffer
	hold    *syncHold
	release func()
	started chan error // Start's answer
}

func holdCatchUp(t *testing.T, dir string) *heldCatchUp {
	t.Helper()
	// A day order rests at the open; the venue is away at its close and
	// end of day, which the catch-up runs.
	dayStart := time.Now().Truncate(compressedDayLength)
	s := startServer(t, catchUpVenueConfig(t, dir), Options{Now: stoppedClock(dayStart.Add(5 * time.Second))})
	restDayOrder(t, s, "d1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	at := dayStart.Add(9500 * time.Millisecond)
	h := &heldCatchUp{logs: &lockedbuf.Buffer{}, hold: newSyncHold(t), started: make(chan error, 1)}
	h.release = h.hold.release
	clock := func() time.Time { h.hold.on.Store(true); return at }
	s, err := New(catchUpVenueConfig(t, dir), Options{Now: clock, JournalSync: h.hold.sync,
		Logger: slog.New(slog.NewTextHandler(h.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	go func() { h.started <- s.Start() }()
	t.Cleanup(func() {
		h.release()
		s.Close()
	})
	h.hold.waitHeld(t, "the catch-up", h.logs)
	return h
}

// serve releases the catch-up and waits for the venue to serve.
func (h *heldCatchUp) serve(t *testing.T) {
	t.Helper()
	h.release()
	select {
	case err := <-h.started:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the venue did not start once the catch-up was released")
	}
}

// TestPeriodicCommandsWaitForTheCatchUp: the snapshot command and the risk
// report, journaled by the server every period, wait for the schedule's
// catch-up (docs/ARCHITECTURE.md, "Operations: the control plane and the
// trading day"). They carried the wall clock into the middle of a
// catch-up whose commands carry the times their transitions were due: the
// journal's times went backwards, and the matcher ran its timers (a GTD
// expiry) at the clock's time before the transitions due earlier.
func TestPeriodicCommandsWaitForTheCatchUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := holdCatchUp(t, dir)
	published := h.s.pipe.Commands.Cursor()
	for deadline := time.Now().Add(readWait); ; time.Sleep(10 * time.Millisecond) {
		if c := h.s.pipe.Commands.Cursor(); c != published {
			t.Fatalf("%d commands published while the catch-up waited for its first command", c-published)
		}
		text := h.logs.String()
		if strings.Contains(text, "snapshot command waits for the schedule's catch-up") &&
			strings.Contains(text, "risk report waits for the schedule's catch-up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no period of the snapshot and of the risk report ended during the catch-up within %s:\n%s", readWait, text)
		}
	}
	h.serve(t)

	// Once caught up they run again; none lies among the catch-up's commands.
	waitUntil(t, "a risk report after the catch-up", func() bool { return journaledAfterCatchUp(t, dir) })
}

// journaledAfterCatchUp checks dir's journal, the tail a running venue is
// writing included: from the schedule's first command of the catch-up (its
// close) to its end of day and that end of day's snapshot, every command is
// the schedule's; it reports whether a risk report was journaled after.
func journaledAfterCatchUp(t *testing.T, dir string) bool {
	t.Helper()
	const (
		before = iota
		inCatchUp
		eodSnapshot // the end of day's Snapshot command comes next
		after
	)
	state := before
	for rec, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
		if err != nil {
			break // the tail being written
		}
		id, _ := venue.TemplateIDOf(rec.Payload, 0)
		cmd, isOperator := venue.DecodeOperatorCommand(rec.Payload)
		scheduled := isOperator && string(cmd.Operator()) == ops.OperatorSchedule
		switch {
		case state == before && scheduled && strings.Contains(string(cmd.Reason()), "close"):
			state = inCatchUp
		case state == inCatchUp && scheduled && cmd.Action() == venue.OperatorActionTypeEndOfDay:
			state = eodSnapshot
		case state == inCatchUp && !scheduled:
			t.Fatalf("seq %d, template %d, journaled in the catch-up, among the schedule's commands", rec.Seq, id)
		case state == eodSnapshot && id != venue.SnapshotTemplateID:
			t.Fatalf("seq %d, template %d, journaled between the end of day and its snapshot", rec.Seq, id)
		case state == eodSnapshot:
			state = after
		case state == after && id == venue.RiskControlTemplateID:
			return true
		}
	}
	return false
}

// TestOperatorChangeRefusedDuringTheCatchUp: an operator's change that
// comes while the schedule catches up is refused, 503 catching_up with a
// Retry-After, and nothing is journaled; reads are answered; once the
// venue serves, the same change is done. It was journaled among the
// catch-up's commands, stamped with the time of the transition being run,
// and acted on the state of the day the catch-up was still ending.
func TestOperatorChangeRefusedDuringTheCatchUp(t *testing.T) {
	t.Parallel()
	h := holdCatchUp(t, t.TempDir())
	published := h.s.pipe.Commands.Cursor()
	base := "http://" + h.s.AdminAddr()
	for _, call := range []struct{ path, body string }{
		{"/v1/instruments/ACME/halt", `{"reason":"in the catch-up"}`},
		{"/v1/risk/kill", `{"reason":"in the catch-up","session":"CLIENT1"}`},
	} {
		a := admintest.Call(t, "POST", base+call.path, aliceToken, call.body)
		var e struct{ Code string }
		if err := json.Unmarshal(a.Body, &e); err != nil || a.Status != 503 || e.Code != "catching_up" || a.RetryAfter == "" {
			t.Fatalf("POST %s during the catch-up: %d, Retry-After %q, %s; want 503 catching_up with a Retry-After",
				call.path, a.Status, a.RetryAfter, a.Body)
		}
	}
	if a := admintest.Call(t, "GET", base+"/v1/instruments", aliceToken, ""); a.Status != 200 {
		t.Fatalf("GET /v1/instruments during the catch-up: %d %s", a.Status, a.Body)
	}
	if c := h.s.pipe.Commands.Cursor(); c != published {
		t.Fatalf("%d commands published for the refused changes", c-published)
	}
	h.serve(t)
	if code := adminCall(t, h.s, "POST", "/v1/instruments/ACME/halt", aliceToken, `{"reason":"after the catch-up"}`, nil); code != 200 {
		t.Fatalf("halt once the venue serves: %d", code)
	}
}
