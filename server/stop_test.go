package server

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// templateCounter counts a replay's events by template.
type templateCounter struct {
	slot  [core.EventSlotMin]byte
	count map[uint16]int
}

func (c *templateCounter) Claim() []byte { return c.slot[:] }

func (c *templateCounter) Commit() {
	id, _ := venue.TemplateIDOf(c.slot[:], 0)
	c.count[id]++
}

// TestStopStoresEveryAnswer stops the venue while a burst of orders is
// being answered, on a session with cancel-on-disconnect. After a restart,
// a resend from the first message gives a New report for every order the
// journal accepted and a Canceled report for each (the cancel-on-disconnect
// the stop caused). Answers used to wait in the senders' queues when
// QuickFIX/Go forgot its sessions: neither sent nor stored, so no resend
// brought them back.
func TestStopStoresEveryAnswer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, "")
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	const n = 400
	for i := range n {
		sendOrder(t, c, order{id: fmt.Sprintf("o%d", i), side: "1", qty: "1", px: "99.00"})
	}
	expectER(t, c, map[int]string{11: "o0", 150: "0"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c.Close()

	m, err := core.NewMatcher(MatcherConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	journaled := &templateCounter{count: map[uint16]int{}}
	if _, err := journal.Replay(filepath.Join(dir, "journal"), m, journaled, journal.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	accepted, cancelled := journaled.count[venue.OrderAcceptedTemplateID], journaled.count[venue.OrderCancelledTemplateID]
	if accepted == 0 || cancelled != accepted {
		t.Fatalf("journal: %d orders accepted, %d cancelled; want every accepted order cancelled on disconnect", accepted, cancelled)
	}

	s2 := startServer(t, testConfig(t, dir, ""), Options{})
	r, _ := resume(t, s2, "CLIENT1", c.NextOut)
	if err := r.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	seen := map[string]map[string]bool{"0": {}, "4": {}}
	for len(seen["0"]) < accepted || len(seen["4"]) < cancelled {
		m, err := r.Read(readWait)
		if err != nil {
			t.Fatalf("resend gave %d New and %d Canceled reports of the %d orders the journal accepted and cancelled: %v",
				len(seen["0"]), len(seen["4"]), accepted, err)
		}
		if et := m.Get(150); m.Type() == "8" && seen[et] != nil {
			seen[et][m.Get(11)] = true
		}
	}
}

// TestStopLogoutSaysWhy stops the venue with a session logged on: the
// Logout QuickFIX/Go sends each session at the stop carries a Text saying
// the venue is shutting down (it had none, and a client could not tell a
// shutdown from a fault of its own).
func TestStopLogoutSaysWhy(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	m, err := c.Expect(readWait, "5", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Get(58); got != gateway.ShuttingDownText {
		t.Fatalf("stop's Logout Text %q, want %q: %s", got, gateway.ShuttingDownText, m)
	}
	_ = c.Send("5") // answered, the stop goes on without waiting for the logout timeout
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}
