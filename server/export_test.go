package server

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/eventstream"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/journal"
)

const exportSection = `
[export]
enabled = true
embedded_addr = "127.0.0.1:0"
publish_window = 64
`

// loadRun sends orders crossing each other from several sessions, each
// session waiting for the first answer to each order before it counts it,
// and calls mid once, half-way through.
func loadRun(t *testing.T, s *Server, tag string, perSession int, mid func()) {
	t.Helper()
	comps := []string{"CLIENT1", "CLIENT2", "CLIENT3"}
	clients := make([]*fixclient.Client, len(comps))
	for i, comp := range comps {
		clients[i] = logon(t, s, comp, true)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(clients))
	var answered atomic.Int64
	for i, c := range clients {
		wg.Add(1)
		go func(i int, c *fixclient.Client) {
			defer wg.Done()
			for n := 0; n < perSession; n++ {
				side := []string{"1", "2"}[(n+i)%2]
				id := fmt.Sprintf("%s-%d-%d", tag, i, n)
				px := fmt.Sprintf("%d.00", 99+(n+i)%3)
				f := []fixclient.Field{fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(54, side),
					fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "3"), fixclient.F(40, "2"),
					fixclient.F(44, px), fixclient.F(59, "0")}
				if err := c.Send("D", f...); err != nil {
					errs <- err
					return
				}
				if _, err := c.Expect(readWait, "8", map[int]string{11: id}); err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
					return
				}
				c.Received = c.Received[:0]
				answered.Add(1)
			}
		}(i, c)
	}
	if mid != nil {
		// Half-way, while the sessions keep sending (bounded: the
		// sessions fail on their own read deadlines).
		for deadline := time.Now().Add(time.Minute); answered.Load() < int64(len(clients)*perSession/2) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		mid()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, c := range clients {
		c.Logout()
	}
}

// waitExported waits until the exporter has every durable command's events.
func waitExported(t *testing.T, s *Server) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for s.ExportLag() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("export lag still %d commands", s.ExportLag())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// verifyStream is `fixvenue events verify`: the stream against the journal.
func verifyStream(t *testing.T, s *Server) eventstream.Summary {
	t.Helper()
	return verifyAt(t, s, s.EmbeddedNATS().URL())
}

// TestExportSurvivesNATSRestartAndVenueRestart: the embedded NATS server
// is stopped in the middle of a load run and started again; the orders go
// on being answered, and afterwards the stream matches the journal event
// for event. After a restart of the venue the export continues the same
// stream.
func TestExportSurvivesNATSRestartAndVenueRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir, exportSection)
	// Snapshots, so that the restarted exporter starts its shadow matcher
	// from one (eventstream/doc.go, "Outages and restarts").
	cfg.Journal.SnapshotInterval.Duration = 50 * time.Millisecond
	s := startServer(t, cfg, Options{})
	if s.EmbeddedNATS() == nil {
		t.Fatal("no embedded NATS server")
	}
	var outage time.Duration
	loadRun(t, s, "a", 300, func() {
		s.EmbeddedNATS().Stop()
		// The venue keeps answering while NATS is away (loadRun waits
		// for each answer), and the lag shows it.
		start := time.Now()
		for i := 0; i < 20; i++ {
			sendAndWait(t, s, fmt.Sprintf("out-%d", i))
		}
		if s.ExportLag() <= 0 {
			t.Errorf("export lag %d while NATS is down", s.ExportLag())
		}
		for deadline := time.Now().Add(10 * time.Second); metricstest.Value(t, scrape(t, s), "fixvenue_export_connected") != "0"; {
			if time.Now().After(deadline) {
				t.Fatal("exporter says connected while NATS is down")
			}
			time.Sleep(10 * time.Millisecond)
		}
		outage = time.Since(start)
		if err := s.EmbeddedNATS().Start(); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("NATS was down for %s of the run", outage)
	waitExported(t, s)
	first := verifyStream(t, s)
	m := scrape(t, s)
	if metricstest.Value(t, m, "fixvenue_export_errors_total") == "0" {
		t.Fatal("the outage left no trace in fixvenue_export_errors_total")
	}
	// The tap held every event through the outage: the exporter never
	// built a matcher of its own.
	if v := metricstest.Value(t, m, "fixvenue_export_catchups_total"); v != "0" {
		t.Fatalf("a venue started on an empty journal caught up from it %s times; the tap should have served every event", v)
	}
	s.Close()
	if snaps, err := journal.ListSnapshots(filepath.Join(dir, "journal")); err != nil || len(snaps) == 0 {
		t.Fatalf("no snapshot to restart the export from (%v)", err)
	}

	// A new venue on the same data: it resumes from the stream's end.
	cfg2 := testConfig(t, dir, exportSection)
	cfg2.Journal.SnapshotInterval.Duration = 50 * time.Millisecond
	s2 := startServer(t, cfg2, Options{})
	loadRun(t, s2, "b", 50, nil)
	waitExported(t, s2)
	second := verifyStream(t, s2)
	if second.Events <= first.Events {
		t.Fatalf("after the restart the stream has %d events, before %d", second.Events, first.Events)
	}
	// The restarted exporter caught up from the journal (its stream ends
	// before this run's first event), then met the tap and dropped its
	// matcher; the orders after that come from the tap.
	caughtUpThenTap(t, s2, second.Events, "after-handover")
}

// caughtUpThenTap checks that the exporter caught up from the journal,
// waits until it follows the tap, and checks that an order sent then
// reaches the stream: it holds more than before events, all the journal's.
func caughtUpThenTap(t *testing.T, s *Server, before int64, id string) {
	t.Helper()
	if v := metricstest.Value(t, scrape(t, s), "fixvenue_export_catchups_total"); v == "0" {
		t.Fatal("the exporter did not catch up from the journal")
	}
	waitFollowingTap(t, s)
	sendAndWait(t, s, id)
	waitExported(t, s)
	if after := verifyStream(t, s); after.Events <= before {
		t.Fatalf("after the hand-over to the tap the stream has %d events, before %d", after.Events, before)
	}
}

// waitFollowingTap waits until the exporter has left its catch-up and
// follows the tap, sending an order now and then: a catch-up hands over
// where the tap holds the first event of the next command.
func waitFollowingTap(t *testing.T, s *Server) {
	t.Helper()
	for i := 0; metricstest.Value(t, scrape(t, s), "fixvenue_export_catching_up") != "0"; i++ {
		if i == 100 {
			t.Fatal("the exporter is still catching up from the journal after 100 orders")
		}
		sendAndWait(t, s, fmt.Sprintf("handover-%d", i))
		time.Sleep(20 * time.Millisecond)
	}
}

// TestExportCatchesUpWhenTheTapDrops: with a tap of 256 events and NATS
// away while the venue trades, the tap drops events; once NATS is back
// the exporter rebuilds the missing ones from the journal, then follows
// the tap again, and the stream matches the journal.
func TestExportCatchesUpWhenTheTapDrops(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir, exportSection+"tap_events = 256\n")
	s := startServer(t, cfg, Options{})
	sendAndWait(t, s, "before")
	waitExported(t, s)
	s.EmbeddedNATS().Stop()
	loadRun(t, s, "a", 100, nil) // 300 orders: more than 256 events
	// The tap copies the ring's events on its own poll, behind the answers
	// on a starved machine: its drops are waited for, not read once.
	for deadline := time.Now().Add(10 * time.Second); metricstest.Value(t, scrape(t, s), "fixvenue_export_tap_dropped_total") == "0"; {
		if time.Now().After(deadline) {
			t.Fatal("the tap dropped nothing while NATS was away")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.EmbeddedNATS().Start(); err != nil {
		t.Fatal(err)
	}
	waitExported(t, s)
	caughtUpThenTap(t, s, verifyStream(t, s).Events, "after")
}

// sendAndWait sends one order from CLIENT4 and waits for its answer.
func sendAndWait(t *testing.T, s *Server, id string) {
	t.Helper()
	c := logonOnce(t, s, "CLIENT4")
	sendOrder(t, c, order{id: id, side: "1", qty: "1", px: "95.00"})
	if _, err := c.Expect(readWait, "8", map[int]string{11: id, 150: "0"}); err != nil {
		t.Fatalf("order while NATS is down: %v", err)
	}
}

var onceClients sync.Map

// logonOnce logs a session on the first time a test asks for it. The entry
// goes with the test: a later test's server may have the same address.
func logonOnce(t *testing.T, s *Server, comp string) *fixclient.Client {
	key := fmt.Sprintf("%p/%s", s, comp)
	if c, ok := onceClients.Load(key); ok {
		return c.(*fixclient.Client)
	}
	c := logon(t, s, comp, true)
	onceClients.Store(key, c)
	t.Cleanup(func() { onceClients.Delete(key) })
	return c
}
