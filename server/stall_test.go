package server

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/ops"
)

// TestJournalStallIsReported: a disk that stops completing the journal's
// syncs fails nothing, so the venue neither halts nor says anything while
// its orders wait unanswered. Once commands have waited for seconds with
// none made durable, the log, /v1/status and
// fixvenue_journal_stalled_seconds say so; when the disk completes the
// sync, the order is acknowledged, the log says the stall ended and the
// status no longer reports it.
func TestJournalStallIsReported(t *testing.T) {
	t.Parallel()
	logs := &lockedbuf.Buffer{}
	hold := newSyncHold(t)
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()), Options{JournalSync: hold.sync, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	t.Cleanup(hold.release) // before the venue's Close, which waits for the journal
	c := logon(t, s, "CLIENT1", true)
	hold.on.Store(true)
	sendOrder(t, c, order{id: "held", side: "1", qty: "1", px: "99.00"})
	hold.waitHeld(t, "the order", logs)
	status := func() ops.StatusInfo {
		var st ops.StatusInfo
		if code := adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st); code != 200 {
			t.Fatalf("/v1/status: %d", code)
		}
		return st
	}
	deadline := time.Now().Add(stallReported + readWait)
	st := status()
	for ; st.Stalled == ""; st = status() {
		if time.Now().After(deadline) {
			t.Fatalf("/v1/status while the journal's sync has not returned for %s: %+v\n%s", stallReported+readWait, st, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(st.Stalled, "waiting") || st.Halted != "" {
		t.Fatalf("/v1/status of a stalled journal: %+v", st)
	}
	if stalled := metricstest.Float(t, scrape(t, s), "fixvenue_journal_stalled_seconds"); stalled < stallReported.Seconds() {
		t.Fatalf("fixvenue_journal_stalled_seconds %v once the status reports the stall", stalled)
	}
	if !strings.Contains(logs.String(), "no command has become durable for a while") {
		t.Fatalf("no warning of the stall in the log:\n%s", logs.String())
	}
	hold.release()
	expectER(t, c, map[int]string{11: "held", 150: "0"})
	for deadline = time.Now().Add(readWait); status().Stalled != ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("/v1/status still reports a stall once the journal's sync returned: %+v", status())
		}
	}
	if !strings.Contains(logs.String(), "commands durable again after a stall") {
		t.Fatalf("the end of the stall is not logged:\n%s", logs.String())
	}
}
