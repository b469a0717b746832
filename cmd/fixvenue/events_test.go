package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/eventstream"
	"github.com/fixvenue/fixvenue/internal/closingln"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/natstest"
	"github.com/fixvenue/fixvenue/internal/testports"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestEventsVerifyAfterLoad runs `fixvenue serve` with the export on and
// its embedded NATS server, a `fixvenue load` run against it, then
// `fixvenue events verify` (the stream against the journal, over the
// process's own files) and `fixvenue events tail`.
// exportTOML is a venue with its event export on an embedded NATS server
// (on a port the system chooses) and no market data.
const exportTOML = `[marketdata]
enabled = false
[engine]
orders_max = 65536
clordids_max = 262144
[export]
enabled = true
embedded_addr = "127.0.0.1:0"
`

func TestEventsVerifyAfterLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath := writeVenueConfig(t, dir, "%s", exportTOML+"format = \"json\"\n")
	v := startVenue(t, cfgPath)
	if v.ready.NATSURL == "" {
		t.Fatalf("ready file names no NATS URL: %+v", v.ready)
	}
	out, err := exec.Command(binPath, "load", "--addr", v.fixAddr, "--sessions", "2", "--rate", "500", "--mix", "mixed",
		"--duration", "1s", "--warmup", "0s", "--p99-max", "1m", "--json", "--quiet").Output()
	if err != nil {
		t.Fatalf("load: %v\n%s\n%s", err, out, v.logs())
	}
	// The export follows the journal on its own; verify until it caught up
	// (bounded), and it must then say OK.
	var verify []byte
	for deadline := time.Now().Add(30 * time.Second); ; {
		verify, err = exec.Command(binPath, "events", "verify", "--config", cfgPath, "--nats", v.ready.NATSURL).CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) || !strings.Contains(string(verify), "behind") {
			t.Fatalf("events verify: %v\n%s", err, verify)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(string(verify), "OK:") || strings.Contains(string(verify), "events=0 ") {
		t.Fatalf("events verify:\n%s", verify)
	}
	// Under other terms the journal would replay into other events: refused.
	text, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.toml")
	if err := os.WriteFile(other, []byte(strings.Replace(string(text), "orders_max = 65536", "orders_max = 65536\nindicative_interval = \"2s\"", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(binPath, "events", "verify", "--config", other, "--nats", v.ready.NATSURL).CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "engine.indicative_interval") {
		t.Fatalf("events verify under other terms: %v\n%s", err, out)
	}
	tail := exec.Command(binPath, "events", "tail", "--config", cfgPath, "--nats", v.ready.NATSURL, "--from", "2",
		"--subject", "fixvenue.VENUE.orders.>", "--json", "--count", "3")
	stdout, err := tail.Output()
	if err != nil {
		t.Fatalf("events tail: %v\n%s", err, stdout)
	}
	sc := bufio.NewScanner(strings.NewReader(string(stdout)))
	lines := 0
	for ; sc.Scan(); lines++ {
		var ev struct {
			EventSeq uint64 `json:"eventSeq"`
			Subject  string `json:"subject"`
			Text     string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("tail line %q: %v", sc.Text(), err)
		}
		if ev.EventSeq < 2 || !strings.HasPrefix(ev.Subject, "fixvenue.VENUE.orders.") || ev.Text == "" {
			t.Fatalf("tail line %q", sc.Text())
		}
	}
	if lines != 3 {
		t.Fatalf("tail printed %d lines, want 3:\n%s", lines, stdout)
	}
	// Without a subject filter the tail puts each batch's parts (one per
	// subject) back in event order: every event from --from, one by one.
	// 400 events: the first tens may all be one symbol's resting orders,
	// one subject.
	all, err := exec.Command(binPath, "events", "tail", "--config", cfgPath, "--nats", v.ready.NATSURL, "--from", "5",
		"--json", "--count", "400").Output()
	if err != nil {
		t.Fatalf("events tail: %v\n%s", err, all)
	}
	want := uint64(5)
	subjects := map[string]bool{}
	for sc := bufio.NewScanner(strings.NewReader(string(all))); sc.Scan(); want++ {
		var ev struct {
			EventSeq uint64 `json:"eventSeq"`
			Subject  string `json:"subject"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.EventSeq != want {
			t.Fatalf("tail line %q (%v), want event %d", sc.Text(), err, want)
		}
		subjects[ev.Subject] = true
	}
	if want != 405 || len(subjects) < 2 {
		t.Fatalf("tail printed events up to %d on subjects %v, want 5-404 on several subjects:\n%s", want-1, subjects, all)
	}
	// A subject outside the stream's would match nothing, ever: refused
	// (the tail waited for ever without a word).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err = exec.CommandContext(ctx, binPath, "events", "tail", "--config", cfgPath, "--nats", v.ready.NATSURL,
		"--subject", "other.VENUE.trades.>", "--count", "1").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `subject "other.VENUE.trades.>" matches none of its subjects [fixvenue.VENUE.>]`) {
		t.Fatalf("events tail of a subject outside the stream: %v\n%s", err, out)
	}
}

// TestEventsTailFromOnAnEmptyStream: a tail --from an event the stream
// does not hold yet follows it until the event comes, also when the
// stream holds nothing yet (it failed reading "message 0").
func TestEventsTailFromOnAnEmptyStream(t *testing.T) {
	t.Parallel()
	cfgPath := writeVenueConfig(t, t.TempDir(), "%s", exportTOML)
	v := startVenue(t, cfgPath)
	// The exporter creates the stream once connected: until then the
	// tail says the stream is not found (bounded retries).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		tail := exec.Command(binPath, "events", "tail", "--config", cfgPath, "--nats", v.ready.NATSURL, "--from", "5", "--count", "1")
		var stderr strings.Builder
		tail.Stderr = &stderr
		if err := tail.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- tail.Wait() }()
		select {
		case err := <-done:
			if !strings.Contains(stderr.String(), "stream not found") || time.Now().After(deadline) {
				t.Fatalf("events tail --from 5 of an empty stream ended (%v): %s", err, stderr.String())
			}
			continue
		case <-time.After(2 * time.Second):
		}
		_ = tail.Process.Kill()
		<-done
		return
	}
}

// TestServeLogNamesTheEmbeddedNATS: the start's log names the embedded
// NATS server's address, which consumers dial; with embedded_addr's port 0
// the system chooses it, and the log said only that the server was
// embedded.
func TestServeLogNamesTheEmbeddedNATS(t *testing.T) {
	v := startVenue(t, writeVenueConfig(t, t.TempDir(), "%s", exportTOML))
	want := "embedded_nats=" + v.ready.NATSURL
	v.waitLogLine(t, "the log saying "+want, func(line string) bool { return strings.Contains(line, want) })
}

// TestEventsVerifyBesideATradingVenue: `events verify` run while orders
// flow says OK: the journal replayed after the stream was read holds
// events the export had not published yet, and verify reads the stream
// again until it holds them (README, "Event stream"), where it said the
// stream was behind and exited 1.
func TestEventsVerifyBesideATradingVenue(t *testing.T) {
	t.Parallel()
	cfgPath := writeVenueConfig(t, t.TempDir(), "%s", exportTOML)
	v := startVenue(t, cfgPath)
	load := exec.Command(binPath, "load", "--addr", v.fixAddr, "--sessions", "2", "--rate", "400", "--mix", "mixed",
		"--duration", "6s", "--warmup", "0s", "--p99-max", "1m", "--json", "--quiet")
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = load.Process.Kill(); _ = load.Wait() })
	js := natstest.JetStream(t, v.ready.NATSURL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Orders flow once the stream holds a few hundred events.
	for {
		sum, err := eventstream.SummarizeStream(ctx, js, "FIXVENUE_VENUE", 0)
		if err == nil && sum.Events >= 300 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the stream did not reach 300 events: %v, %+v\n%s", err, sum, v.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, err := exec.CommandContext(ctx, binPath, "events", "verify", "--config", cfgPath, "--nats", v.ready.NATSURL).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK:") {
		t.Fatalf("events verify while orders flow: %v\n%s", err, out)
	}
	if err := load.Wait(); err != nil {
		t.Fatalf("load: %v", err)
	}
}

// TestEventsVerifyOfAPurgedStream: a stream whose messages were purged
// keeps its last sequence; `events verify` says its messages were removed
// (a gap) instead of waiting for a message at that sequence until its
// timeout (eventstream/doc.go, "Outages and restarts").
func TestEventsVerifyOfAPurgedStream(t *testing.T) {
	t.Parallel()
	cfgPath := writeVenueConfig(t, t.TempDir(), "%s", exportTOML)
	v := startVenue(t, cfgPath)
	c := logOn(t, v.fixAddr, "CLIENT1")
	sendLimit(t, c, "p1", "1", "99.00", 10, "0")
	verify := func() ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, binPath, "events", "verify", "--config", cfgPath, "--nats", v.ready.NATSURL).CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("events verify did not end: %s", out)
		}
		return out, err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, err := verify()
		if err == nil && strings.Contains(string(out), "OK:") && !strings.Contains(string(out), "events=0 ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events verify: %v\n%s", err, out)
		}
	}
	js := natstest.JetStream(t, v.ready.NATSURL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "FIXVENUE_VENUE")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := verify()
	if err == nil || !strings.Contains(string(out), "were removed") || !strings.Contains(string(out), "a gap") {
		t.Fatalf("events verify of a purged stream: %v\n%s", err, out)
	}
	// The error names the stream once.
	if n := strings.Count(string(out), "stream FIXVENUE_VENUE:"); n != 1 {
		t.Fatalf("events verify names the stream %d times:\n%s", n, out)
	}
}

// TestEventsTailFollowsAcrossARestart: a following `events tail` outlives
// the venue's restart, which stops and starts its embedded NATS server: it
// says it lost NATS, dials again until the server is back, and goes on
// from the message after the last it printed, every event once and in
// order, those of orders entered after the restart included. It exited at
// the first loss of its connection.
func TestEventsTailFollowsAcrossARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath, natsAddr := exportVenueWithNATSAt(t, dir)
	order := func(v *venueProc, next int, id string) int {
		c := logOnAt(t, v.fixAddr, "CLIENT1", next, next == 1)
		if err := c.Send("D", tradingOrder(id, 1)...); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Expect(10*time.Second, "8", map[int]string{11: id, 150: "0"}); err != nil {
			t.Fatal(err)
		}
		c.Logout()
		return c.NextOut
	}
	v := startVenue(t, cfgPath)
	next := order(v, 1, "before")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tail := exec.CommandContext(ctx, binPath, "events", "tail", "--config", cfgPath, "--nats", "nats://"+natsAddr, "--json")
	var notes lockedbuf.Buffer
	tail.Stderr = &notes
	stdout, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tail.Process.Kill(); _ = tail.Wait() }()
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	want := uint64(1)
	readUntil := func(clOrdID string) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("the tail ended before %s; its notes:\n%s", clOrdID, notes.String())
				}
				var ev struct {
					EventSeq uint64 `json:"eventSeq"`
					Text     string `json:"text"`
				}
				if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.EventSeq != want {
					t.Fatalf("tail line %q (%v), want event %d", line, err, want)
				}
				want++
				if strings.Contains(ev.Text, clOrdID) {
					return
				}
			case <-timeout:
				t.Fatalf("no event of %s after 30 s (next event %d); the tail's notes:\n%s", clOrdID, want, notes.String())
			}
		}
	}
	readUntil("before")
	v.stop(t)
	v = startVenue(t, cfgPath)
	order(v, next, "after")
	readUntil("after")
	if n := notes.String(); !strings.Contains(n, "lost NATS") || !strings.Contains(n, "NATS is back; going on from stream message") {
		t.Fatalf("the tail's notes do not say it lost NATS and went on:\n%s", n)
	}
	v.stop(t)
}

// TestEventsOfAnInstrumentOnItsSubject: every event that names an
// instrument is on that instrument's subject (README "Event stream",
// eventstream/doc.go "orders.<SYMBOL> … "_" for an event of no
// instrument"), so that a consumer of fixvenue.VENUE.orders.ACME sees the
// stop ACME's trade elected; the stop's OrderTriggered (and an iceberg's
// refill, an auction's indicative and uncross, a volatility interruption)
// went to orders._ with the events of no instrument.
func TestEventsOfAnInstrumentOnItsSubject(t *testing.T) {
	t.Parallel()
	cfgPath := writeVenueConfig(t, t.TempDir(), "%s", exportTOML)
	v := startVenue(t, cfgPath)
	tradeElectingAStop(t, v.fixAddr)
	out, err := exec.Command(binPath, "events", "tail", "--config", cfgPath, "--nats", v.ready.NATSURL,
		"--subject", "fixvenue.VENUE.orders._", "--subject", "fixvenue.VENUE.orders.ACME", "--json", "--count", "5").Output()
	if err != nil {
		t.Fatalf("events tail: %v\n%s", err, out)
	}
	var triggered bool
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var ev struct{ Subject, Text string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if strings.HasPrefix(ev.Text, "OrderTriggered ") {
			triggered = true
		}
		if ev.Subject != "fixvenue.VENUE.orders.ACME" {
			t.Errorf("an ACME event on %s: %s", ev.Subject, ev.Text)
		}
	}
	if !triggered {
		t.Errorf("no OrderTriggered among the first events:\n%s", out)
	}
}

// TestEventsTailLosesNATSInsideABatch: a tail that loses NATS after the
// first part of a batch and before its last reads the batch again from its
// first part when the server is back (it printed none of it), and prints
// its events once. The open batch kept the part it had, took the first
// part read again for a gap and the tail exited (README "Event stream": a
// following tail outlives its NATS connection).
func TestEventsTailLosesNATSInsideABatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath := writeVenueConfig(t, dir, "%s", exportTOML+"[session_defaults]\ncancel_on_disconnect = false\n")
	v := startVenue(t, cfgPath)
	buyer, seller := logOn(t, v.fixAddr, "CLIENT1"), logOn(t, v.fixAddr, "CLIENT2")
	for _, o := range []struct {
		c        *fixclient.Client
		id, side string
	}{{seller, "ask", "2"}, {buyer, "take", "1"}} {
		if err := o.c.Send("D", fixclient.F(11, o.id), fixclient.F(55, "ACME"), fixclient.F(54, o.side),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"),
			fixclient.F(44, "100.00"), fixclient.F(59, "1")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := buyer.Expect(10*time.Second, "8", map[int]string{11: "take", 150: "F"}); err != nil {
		t.Fatal(err)
	}
	v.stop(t)

	// The venue's stream, read from its store, up to and including the
	// trade's batch: a fill (trades.ACME) and order events (orders.ACME).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	msgs := venueStream(t, ctx, dir)
	last := -1
	for i, m := range msgs {
		if strings.HasPrefix(m.Subject, "fixvenue.VENUE.trades.") {
			last = i
		}
	}
	for last >= 0 && last+1 < len(msgs) && msgs[last+1].Header.Get(eventstream.HeaderBatch) == msgs[last].Header.Get(eventstream.HeaderBatch) {
		last++
	}
	if last < 1 || msgs[last].Header.Get(eventstream.HeaderBatch) != msgs[last-1].Header.Get(eventstream.HeaderBatch) {
		t.Fatalf("no batch of two parts or more with the fill among %d messages", len(msgs))
	}
	msgs = msgs[:last+1]

	// A server of the test's holds all but the batch's last part while the
	// tail reads; it stops and starts again, and the last part follows.
	srv, err := eventstream.StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	publish := func(msgs []*nats.Msg) {
		js := natstest.JetStream(t, srv.URL())
		if _, err := eventstream.EnsureStream(ctx, js, "FIXVENUE_VENUE", eventstream.Subjects{Prefix: "fixvenue", Venue: "VENUE"}); err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if _, err := js.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish(msgs[:last])
	tail := exec.CommandContext(ctx, binPath, "events", "tail", "--config", cfgPath, "--nats", srv.URL(), "--json")
	var out, notes lockedbuf.Buffer
	tail.Stdout, tail.Stderr = &out, &notes
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- tail.Wait() }()
	defer func() { _ = tail.Process.Kill(); <-exited }()
	// The tail reads the parts it has (one that had not yet would read the
	// whole batch after the restart, and pass without the case in question).
	time.Sleep(2 * time.Second)
	srv.Stop()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	publish(msgs[last:])
	_, lastEvent, _ := strings.Cut(msgs[last].Header.Get(eventstream.HeaderBatch), "-")
	want, err := strconv.ParseUint(lastEvent, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); strings.Count(out.String(), "\n") < int(want); {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the tail exited (%v) after %d events of %d; its notes:\n%s", err, strings.Count(out.String(), "\n"), want, notes.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events of %d after 30 s; the tail's notes:\n%s", strings.Count(out.String(), "\n"), want, notes.String())
		}
	}
	if n := notes.String(); !strings.Contains(n, "lost NATS") {
		t.Fatalf("the tail did not lose NATS:\n%s", n)
	}
	for i, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev struct {
			EventSeq uint64 `json:"eventSeq"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.EventSeq != uint64(i+1) {
			t.Fatalf("line %d %q (%v), want event %d", i, line, err, i+1)
		}
	}
}

// followingTail is a `fixvenue events tail --json` process a test reads.
type followingTail struct {
	name  string
	cmd   *exec.Cmd
	notes *lockedbuf.Buffer
	lines chan string
	last  uint64 // the last event printed
	// exited is closed once the process ended and its output was read;
	// waitErr is then its end (exec.Cmd.Wait).
	exited  chan struct{}
	waitErr error
}

// startFollowingTail starts `fixvenue events tail --json` with the
// configuration at cfgPath and more arguments; ctx bounds its life.
func startFollowingTail(t *testing.T, ctx context.Context, name, cfgPath string, args ...string) *followingTail {
	t.Helper()
	tail := exec.CommandContext(ctx, binPath, append([]string{"events", "tail", "--config", cfgPath, "--json"}, args...)...)
	p := &followingTail{name: name, cmd: tail, notes: &lockedbuf.Buffer{}, lines: make(chan string, 1024), exited: make(chan struct{})}
	tail.Stderr = p.notes
	stdout, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tail.Process.Kill()
		for range p.lines {
		}
		<-p.exited
	})
	go func() {
		defer close(p.exited)
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			p.lines <- sc.Text()
		}
		close(p.lines)
		// Its output read to the end: Wait closes the pipe (os/exec).
		p.waitErr = tail.Wait()
	}()
	return p
}

// readUntil reads the tail's events up to the first of order clOrdID, each
// after the last read: every event when contiguous, else (a subject
// filter) ascending.
func (p *followingTail) readUntil(t *testing.T, contiguous bool, clOrdID string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("%s: the tail ended before %s; its notes:\n%s", p.name, clOrdID, p.notes.String())
			}
			var ev struct {
				EventSeq uint64 `json:"eventSeq"`
				Text     string `json:"text"`
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.EventSeq <= p.last || (contiguous && ev.EventSeq != p.last+1) {
				t.Fatalf("%s: tail line %q (%v) after event %d", p.name, line, err, p.last)
			}
			p.last = ev.EventSeq
			if strings.Contains(ev.Text, `"`+clOrdID+`"`) {
				return
			}
		case <-timeout:
			t.Fatalf("%s: no event of %s after 30 s (last event %d); the tail's notes:\n%s", p.name, clOrdID, p.last, p.notes.String())
		}
	}
}

// notesSayReplaced fails the test unless the tail said its stream was replaced.
func (p *followingTail) notesSayReplaced(t *testing.T) {
	t.Helper()
	if n := p.notes.String(); !strings.Contains(n, "the stream was deleted or created again") {
		t.Fatalf("%s: the tail's notes do not say the stream was replaced:\n%s", p.name, n)
	}
}

// restingOrderAt logs CLIENT1 on at addr (next: its next MsgSeqNum, 1 for
// a reset) and has order id accepted; it returns the next MsgSeqNum.
func restingOrderAt(t *testing.T, addr string, next int, id string) int {
	t.Helper()
	c := logOnAt(t, addr, "CLIENT1", next, next == 1)
	if err := c.Send("D", tradingOrder(id, next)...); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(10*time.Second, "8", map[int]string{11: id, 150: "0"}); err != nil {
		t.Fatal(err)
	}
	c.Logout()
	return c.NextOut
}

// TestEventsTailFollowsAStreamExportedAgain: a following `events tail`
// over a stream an operator deletes (the exporter then creates it again
// and exports every event from event 1, eventstream/doc.go "Outages and
// restarts") says so and goes on from the event after the last it
// printed, each event once and in order, with or without a subject
// filter. It waited without a word: JetStream's ordered consumer waits
// for the new stream to reach the sequence after the last message it gave.
func TestEventsTailFollowsAStreamExportedAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath := writeVenueConfig(t, dir, "%s", exportTOML+"[session_defaults]\ncancel_on_disconnect = false\n")
	v := startVenue(t, cfgPath)
	defer v.stop(t)
	next := restingOrderAt(t, v.fixAddr, 1, "before")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := startFollowingTail(t, ctx, "all", cfgPath, "--nats", v.ready.NATSURL)
	orders := startFollowingTail(t, ctx, "orders", cfgPath, "--nats", v.ready.NATSURL, "--subject", "fixvenue.VENUE.orders.>")
	all.readUntil(t, true, "before")
	orders.readUntil(t, false, "before")

	js := natstest.JetStream(t, v.ready.NATSURL)
	if err := js.DeleteStream(ctx, "FIXVENUE_VENUE"); err != nil {
		t.Fatal(err)
	}
	restingOrderAt(t, v.fixAddr, next, "after")
	all.readUntil(t, true, "after")
	orders.readUntil(t, false, "after")
	all.notesSayReplaced(t)
	orders.notesSayReplaced(t)
}

// TestEventsTailStopsOnASignalWhileItsStreamIsDeleted: a following
// `events tail` whose stream was deleted, and not created again, stops on
// SIGINT (Ctrl-C) and on SIGTERM as it does when it follows a stream that
// is there: at once, with status 0 and nothing on stderr but its note that
// the stream was deleted. It waited up to 10 s: JetStream's ordered
// consumer, inside Next, tries to create its consumer again for as long as
// the stream is absent, and neither the context that ends the read nor
// Stop is seen between its attempts (README, "Event stream").
func TestEventsTailStopsOnASignalWhileItsStreamIsDeleted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath := writeVenueConfig(t, dir, "%s", exportTOML+"[session_defaults]\ncancel_on_disconnect = false\n")
	v := startVenue(t, cfgPath)
	restingOrderAt(t, v.fixAddr, 1, "resting")
	v.stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	msgs := venueStream(t, ctx, dir)
	last, err := eventstream.DecodeMessage(msgs[len(msgs)-1].Header, msgs[len(msgs)-1].Data)
	if err != nil {
		t.Fatal(err)
	}

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			// The venue's stream on a NATS server of the test's, which no
			// exporter creates again once it is deleted.
			srv, err := eventstream.StartEmbedded("127.0.0.1:0", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			nc, err := nats.Connect(srv.URL())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			js, err := jetstream.New(nc)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := eventstream.EnsureStream(ctx, js, "FIXVENUE_VENUE", eventstream.Subjects{Prefix: "fixvenue", Venue: "VENUE"}); err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if _, err := js.PublishMsg(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
			tail := startFollowingTail(t, ctx, "all", cfgPath, "--nats", srv.URL())
			// It printed the stream's last event: it waits for the next.
			for timeout := time.After(30 * time.Second); tail.last < last.Last; {
				select {
				case line, ok := <-tail.lines:
					var ev struct {
						EventSeq uint64 `json:"eventSeq"`
					}
					if err := json.Unmarshal([]byte(line), &ev); !ok || err != nil || ev.EventSeq != tail.last+1 {
						t.Fatalf("tail line %q (%v) after event %d; its notes:\n%s", line, err, tail.last, tail.notes.String())
					}
					tail.last = ev.EventSeq
				case <-timeout:
					t.Fatalf("the tail printed events up to %d of %d in 30 s; its notes:\n%s", tail.last, last.Last, tail.notes.String())
				}
			}

			if err := js.DeleteStream(ctx, "FIXVENUE_VENUE"); err != nil {
				t.Fatal(err)
			}
			// The tail's requests for the stream (its info, or a consumer on
			// it), seen on the server: it looks for the stream again and
			// again while the stream is absent.
			lookups := make(chan *nats.Msg, 64)
			for _, subj := range []string{"$JS.API.STREAM.INFO.FIXVENUE_VENUE", "$JS.API.CONSUMER.CREATE.FIXVENUE_VENUE.>"} {
				sub, err := nc.ChanSubscribe(subj, lookups)
				if err != nil {
					t.Fatal(err)
				}
				defer sub.Unsubscribe()
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			// Six lookups, then the signal. A tail inside JetStream's ordered
			// consumer, which tries to create its consumer again 1, 2, 4, 8,
			// then 10 s apart, is by then (five attempts at least) in a wait
			// of 10 s before its next, which alone sees the signal.
			timeout := time.After(time.Minute)
			for n := 0; n < 6; n++ {
				select {
				case <-lookups:
				case <-timeout:
					t.Fatalf("the tail looked for its deleted stream %d times in a minute; its notes:\n%s", n, tail.notes.String())
				}
			}
			if err := tail.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			// 5 s is far more than a tail takes to see a signal, and half the
			// ordered consumer's 10 s between attempts, which it waited out.
			select {
			case <-tail.exited:
			case <-time.After(5 * time.Second):
				// Its goroutines on stderr say where it waits.
				_ = tail.cmd.Process.Signal(syscall.SIGQUIT)
				select {
				case <-tail.exited:
				case <-time.After(10 * time.Second):
				}
				t.Fatalf("the tail did not stop within 5 s of %v while its stream was deleted; its stderr:\n%s", sig, tail.notes.String())
			}
			if code := exitCode(tail.waitErr); code != 0 {
				t.Errorf("the tail ended by %v with %v (exit %d), want exit 0; its notes:\n%s", sig, tail.waitErr, code, tail.notes.String())
			}
			for line := range tail.lines {
				t.Errorf("the tail printed after its stream was deleted: %s", line)
			}
			for _, line := range strings.Split(strings.TrimSpace(tail.notes.String()), "\n") {
				if line != "" && !strings.Contains(line, "the stream was deleted or created again") {
					t.Errorf("the tail's stderr: %s", line)
				}
			}
			// It stopped while the stream was still absent, and knew it.
			if _, err := js.Stream(ctx, "FIXVENUE_VENUE"); !errors.Is(err, jetstream.ErrStreamNotFound) {
				t.Fatalf("the stream after the tail stopped: %v", err)
			}
			tail.notesSayReplaced(t)
		})
	}
}

// TestEventsVerifyStopsOnASignal: `events verify` interrupted (Ctrl-C)
// or terminated while it reads stops at once, saying that nothing was
// verified, with exit status 1 (README, "Event stream"); the signal killed
// it without a word, and a verify is allowed minutes. Here it waits on a
// NATS server whose JetStream API never answers (the test takes its
// requests).
func TestEventsVerifyStopsOnASignal(t *testing.T) {
	t.Parallel()
	srv, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server is not ready")
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	requests := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe("$JS.API.>", requests)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	cfgPath := writeVenueConfig(t, t.TempDir(), "[export]\nenabled = true\nnats_url = %q\n", srv.ClientURL())
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			var stderr lockedbuf.Buffer
			verify := exec.Command(binPath, "events", "verify", "--config", cfgPath)
			verify.Stderr = &stderr
			if err := verify.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- verify.Wait() }()
			defer func() {
				_ = verify.Process.Kill()
				<-exited
			}()
			// It asks JetStream for the stream: it reads, and waits.
			select {
			case <-requests:
			case err := <-exited:
				exited <- err
				t.Fatalf("events verify ended before it asked JetStream (%v): %s", err, stderr.String())
			case <-time.After(time.Minute):
				t.Fatalf("events verify asked JetStream nothing in a minute: %s", stderr.String())
			}
			if err := verify.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var waitErr error
			select {
			case waitErr = <-exited:
				exited <- waitErr
			case <-time.After(30 * time.Second):
				t.Fatalf("events verify did not stop within 30 s of %v: %s", sig, stderr.String())
			}
			if code := exitCode(waitErr); code != 1 || !strings.Contains(stderr.String(), "fixvenue events verify: stopped ("+sig.String()+
				") before the stream and the journal were compared: nothing was verified") {
				t.Errorf("events verify ended by %v: %v (exit %d), want exit 1 saying nothing was verified; stderr:\n%s", sig, waitErr, code, stderr.String())
			}
		})
	}
}

// TestEventsNATSFilesThatCannotBeRead: a credentials or TLS file of the
// configuration's [export] that cannot be read is a usage error of `events
// tail` and `events verify` naming its key (exit 2), as one of `admin
// --ca-file` is: it read as a NATS that failed (exit 1).
func TestEventsNATSFilesThatCannotBeRead(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String() // nothing is to be dialled
	ln.Close()
	dir := t.TempDir()
	for _, c := range []struct {
		toml, want string
	}{
		{fmt.Sprintf("creds_file = %q\n", filepath.Join(dir, "missing.creds")), "export.creds_file: stat " + filepath.Join(dir, "missing.creds") + ": no such file or directory"},
		{fmt.Sprintf("tls_ca_file = %q\n", dir), "export.tls_ca_file: " + dir + " is a directory, not a regular file"},
	} {
		cfgPath := writeVenueConfig(t, t.TempDir(), "[export]\nenabled = true\nnats_url = \"nats://%s\"\n%s", closed, c.toml)
		for _, args := range [][]string{{"verify"}, {"tail", "--count", "1"}} {
			code, out, errs := runCLI(t, "", nil, append([]string{"events"}, append(args, "--config", cfgPath)...)...)
			if code != 2 || !strings.Contains(errs, "fixvenue events "+args[0]+": "+c.want) {
				t.Errorf("events %s with %s: exit %d, want 2 saying %q\nstdout: %s\nstderr: %s", args[0], strings.TrimSpace(c.toml), code, c.want, out, errs)
			}
		}
	}
}

// TestEventsTailFollowsAVenueThatLostItsStream: a following `events tail`
// whose venue comes back with its embedded NATS server's store lost (the
// exporter exports every event again into a new stream) says so and goes
// on from the event after the last it printed. It went on from the stream
// sequence after the last message it read, which in the new stream is
// another event or none yet, and printed nothing more.
func TestEventsTailFollowsAVenueThatLostItsStream(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath, natsAddr := exportVenueWithNATSAt(t, dir)
	v := startVenue(t, cfgPath)
	// Orders a round trip apart, each a batch of its own: the new stream,
	// exported at once, holds them in fewer messages.
	next := 1
	for _, id := range []string{"first", "second", "third", "fourth"} {
		next = restingOrderAt(t, v.fixAddr, next, id)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := startFollowingTail(t, ctx, "all", cfgPath, "--nats", "nats://"+natsAddr)
	all.readUntil(t, true, "fourth")
	v.stop(t)
	if err := os.RemoveAll(filepath.Join(dir, "data", "nats")); err != nil {
		t.Fatal(err)
	}
	v = startVenue(t, cfgPath)
	defer v.stop(t)
	restingOrderAt(t, v.fixAddr, next, "after")
	all.readUntil(t, true, "after")
	all.notesSayReplaced(t)
}

// TestEventsTailSaysWhatTheStreamNoLongerHolds: `events tail` (whole
// batches, no subject filter) from an event whose messages were removed
// from the stream (deleted, or a limit of the stream) says which events
// are not there before it prints the first that is; it began with a later
// event without a word.
func TestEventsTailSaysWhatTheStreamNoLongerHolds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath := writeVenueConfig(t, dir, "%s", exportTOML+"[session_defaults]\ncancel_on_disconnect = false\n")
	v := startVenue(t, cfgPath)
	defer v.stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js := natstest.JetStream(t, v.ready.NATSURL)
	// Orders a round trip apart until the stream holds two messages (two
	// batches; the exporter may put orders that come close in one).
	next := 1
	var st jetstream.Stream
	for i := 0; ; i++ {
		if i == 10 {
			t.Fatal("10 orders a round trip apart made fewer than two messages")
		}
		next = restingOrderAt(t, v.fixAddr, next, fmt.Sprintf("o%d", i))
		for deadline := time.Now().Add(30 * time.Second); ; {
			sum, err := eventstream.SummarizeStream(ctx, js, "FIXVENUE_VENUE", 0)
			if err == nil && sum.Events == int64(i+1) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the stream does not hold the %d orders: %v, %v", i+1, sum, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		var err error
		if st, err = js.Stream(ctx, "FIXVENUE_VENUE"); err != nil {
			t.Fatal(err)
		}
		if st.CachedInfo().State.Msgs >= 2 {
			break
		}
	}
	if err := st.DeleteMsg(ctx, 1); err != nil {
		t.Fatal(err)
	}
	raw, err := st.GetMsg(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := eventstream.DecodeMessage(raw.Header, raw.Data)
	if err != nil {
		t.Fatal(err)
	}
	tctx, tcancel := context.WithTimeout(ctx, 30*time.Second)
	defer tcancel()
	cmd := exec.CommandContext(tctx, binPath, "events", "tail", "--config", cfgPath, "--nats", v.ready.NATSURL, "--count", "1")
	var notes lockedbuf.Buffer
	cmd.Stderr = &notes
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), fmt.Sprintf("%d ", kept.First)) {
		t.Fatalf("events tail: %v\n%s\nnotes:\n%s", err, out, notes.String())
	}
	missing := fmt.Sprintf("events 1-%d are", kept.First-1)
	if kept.First == 2 {
		missing = "event 1 is"
	}
	if want := fmt.Sprintf("%s not in the stream (removed from it); going on from event %d", missing, kept.First); !strings.Contains(notes.String(), want) {
		t.Fatalf("the tail's notes do not say %q:\n%s", want, notes.String())
	}
}

// exportVenueWithNATSAt writes, in dir, the configuration of an exporting
// venue (exportTOML) whose embedded NATS server listens at the same free
// port across restarts (natsAddr, for a tail to dial again), and whose
// orders outlive their session's connection.
func exportVenueWithNATSAt(t *testing.T, dir string) (cfgPath, natsAddr string) {
	t.Helper()
	ports, release := testports.Reserve(t, "tcp", 1)
	natsAddr = fmt.Sprintf("127.0.0.1:%d", ports[0])
	cfgPath = writeVenueConfig(t, dir, "%s", strings.Replace(exportTOML, `embedded_addr = "127.0.0.1:0"`, fmt.Sprintf("embedded_addr = %q", natsAddr), 1)+
		"[session_defaults]\ncancel_on_disconnect = false\n")
	release()
	return cfgPath, natsAddr
}

// TestEventsSaysWhereTheEmbeddedNATSIs: `events tail` and `events verify`
// given the configuration of a running venue whose embedded NATS server is
// on port 0 (the system chooses it) dialled port 0 and said only "no
// servers available", as if the venue were not running; they now say
// that the port was chosen at the start and to give it with --nats, a
// usage error (exit 2), as the address is the command line's to give: with
// exit 1 a script read it as a stream it could not read. A
// configuration that turns the export off says so when nothing answers
// at its embedded_addr.
func TestEventsSaysWhereTheEmbeddedNATSIs(t *testing.T) {
	t.Parallel()
	cfgPath := writeVenueConfig(t, t.TempDir(), "%s", exportTOML)
	v := startVenue(t, cfgPath)
	for _, args := range [][]string{{"verify"}, {"tail", "--count", "1"}} {
		out, err := exec.Command(binPath, append([]string{"events"}, append(args, "--config", cfgPath)...)...).CombinedOutput()
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), `export.embedded_addr "127.0.0.1:0" has port 0`) ||
			!strings.Contains(string(out), "--nats") {
			t.Errorf("events %s of a venue on port 0: exit %d (%v): %s", args[0], code, err, out)
		}
	}
	// The address the message points to is the one to give.
	if out, err := exec.Command(binPath, "events", "verify", "--config", cfgPath, "--nats", v.ready.NATSURL).CombinedOutput(); err != nil &&
		strings.Contains(string(out), "port 0") {
		t.Fatalf("events verify --nats %s: %v: %s", v.ready.NATSURL, err, out)
	}

	// Something that is not NATS at the address of a configuration whose
	// export is off: the demo configuration's, given to a venue's tools.
	notNATS, _ := closingln.Listen(t)
	off := writeVenueConfig(t, t.TempDir(), "[export]\nenabled = false\nembedded_addr = %q\n", notNATS)
	out, err := exec.Command(binPath, "events", "verify", "--config", off).CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "turns the export off") {
		t.Fatalf("events verify with the export off: exit %d (%v): %s", code, err, out)
	}
}

// exitCode is a finished command's exit status (0 for no error, -1 for an
// error that is not an exit).
func exitCode(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	return -1
}

// venueStream reads every message of the stream the stopped venue in dir
// exported to its embedded NATS server, from the server's store.
func venueStream(t *testing.T, ctx context.Context, dir string) []*nats.Msg {
	t.Helper()
	venueNATS, err := eventstream.StartEmbedded("127.0.0.1:0", filepath.Join(dir, "data", "nats"))
	if err != nil {
		t.Fatal(err)
	}
	defer venueNATS.Stop()
	return storedStream(t, ctx, venueNATS.URL())
}

// storedStream reads every message of the stream FIXVENUE_VENUE on the
// NATS server at url, in order.
func storedStream(t *testing.T, ctx context.Context, url string) []*nats.Msg {
	t.Helper()
	st, err := natstest.JetStream(t, url).Stream(ctx, "FIXVENUE_VENUE")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*nats.Msg
	for seq := uint64(1); seq <= st.CachedInfo().State.LastSeq; seq++ {
		raw, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		m := nats.NewMsg(raw.Subject)
		m.Header, m.Data = raw.Header, raw.Data
		msgs = append(msgs, m)
	}
	return msgs
}

// TestEventsTailWithSubjectsFollowsAStreamReplacedInsideABatch: a
// following `events tail --subject A --subject B` whose stream is deleted
// after a batch's part on A and before its part on B, which holds events
// before A's last, prints every event of A and B once, in order, when the
// venue has exported them again (eventstream/doc.go, "Outages and
// restarts"). It went on from the event after the highest it printed, and
// never printed B's events of that batch.
func TestEventsTailWithSubjectsFollowsAStreamReplacedInsideABatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const sessions = "[session_defaults]\ncancel_on_disconnect = false\n"
	cfgPath := writeVenueConfig(t, dir, "%s", exportTOML+sessions)
	v := startVenue(t, cfgPath)
	// A stop, then a trade that elects it, and the stop's trade: the
	// trade's batch has order events (orders.ACME: the order, the stop's
	// OrderTriggered) before and after its fills (trades.ACME).
	tradeElectingAStop(t, v.fixAddr)
	v.stop(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	msgs := venueStream(t, ctx, dir)

	// The events of the two subjects, and a part p on one whose last
	// event comes after an event of a later part of its batch on the other.
	subjects := []string{"fixvenue.VENUE.orders.ACME", "fixvenue.VENUE.trades.ACME"}
	want := map[string][]uint64{}
	decoded := make([]*eventstream.Message, len(msgs))
	for i, m := range msgs {
		var err error
		if decoded[i], err = eventstream.DecodeMessage(m.Header, m.Data); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(subjects, m.Subject) {
			for _, ev := range decoded[i].Events {
				want[m.Subject] = append(want[m.Subject], ev.EventSeq)
			}
		}
	}
	cut := -1
	for p := 0; p < len(msgs) && cut < 0; p++ {
		mp := decoded[p]
		if !slices.Contains(subjects, msgs[p].Subject) {
			continue
		}
		for q := p + 1; q < len(msgs) && decoded[q].First == mp.First; q++ {
			if msgs[q].Subject != msgs[p].Subject && slices.Contains(subjects, msgs[q].Subject) &&
				decoded[q].Events[0].EventSeq < mp.Events[len(mp.Events)-1].EventSeq {
				cut = p
				break
			}
		}
	}
	if cut < 0 {
		var layout strings.Builder
		for i, m := range msgs {
			fmt.Fprintf(&layout, "\n%s part %d/%d of %d-%d:", m.Subject, decoded[i].Part, decoded[i].Parts, decoded[i].First, decoded[i].Last)
			for _, ev := range decoded[i].Events {
				fmt.Fprintf(&layout, " %d", ev.EventSeq)
			}
		}
		t.Fatalf("no batch with a part on one of %v holding an event after one of a later part on the other:%s", subjects, layout.String())
	}

	// A NATS server of the test's holds the venue's stream up to part p,
	// as a tail reading while the exporter publishes the batch sees it.
	srv, err := eventstream.StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	js := natstest.JetStream(t, srv.URL())
	if _, err := eventstream.EnsureStream(ctx, js, "FIXVENUE_VENUE", eventstream.Subjects{Prefix: "fixvenue", Venue: "VENUE"}); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs[:cut+1] {
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	tail := startFollowingTail(t, ctx, "subjects", cfgPath, "--nats", srv.URL(), "--subject", subjects[0], "--subject", subjects[1])
	got := map[string][]uint64{}
	readTo := func(until func() bool) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for !until() {
			select {
			case line, ok := <-tail.lines:
				if !ok {
					t.Fatalf("the tail ended; printed %v; its notes:\n%s", got, tail.notes.String())
				}
				var ev struct {
					EventSeq uint64 `json:"eventSeq"`
					Subject  string `json:"subject"`
				}
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatalf("tail line %q: %v", line, err)
				}
				got[ev.Subject] = append(got[ev.Subject], ev.EventSeq)
			case <-timeout:
				t.Fatalf("after 30 s the tail printed %v, want %v; its notes:\n%s", got, want, tail.notes.String())
			}
		}
	}
	lastOfPart := decoded[cut].Events[len(decoded[cut].Events)-1].EventSeq
	readTo(func() bool { return slices.Contains(got[msgs[cut].Subject], lastOfPart) })

	// The stream deleted, the venue, back on the test's server, exports
	// every event again from its journal. (The tail sees the stream
	// deleted and waits for it to be back.)
	if err := js.DeleteStream(ctx, "FIXVENUE_VENUE"); err != nil {
		t.Fatal(err)
	}
	writeVenueConfig(t, dir, "%snats_url = %q\n%s", exportTOML, srv.URL(), sessions)
	v = startVenue(t, cfgPath)
	defer v.stop(t)
	readTo(func() bool {
		for _, s := range subjects {
			if len(want[s]) > 0 && !slices.Contains(got[s], want[s][len(want[s])-1]) {
				return false
			}
		}
		return true
	})
	for _, s := range subjects {
		if !slices.Equal(got[s], want[s]) {
			t.Errorf("%s: the tail printed events %v, want %v", s, got[s], want[s])
		}
	}
	tail.notesSayReplaced(t)
}

// tradeElectingAStop has CLIENT1 rest a buy stop at 100.50 on ACME and
// CLIENT2 two asks at 101.00, then CLIENT1 takes one: the trade elects the
// stop, which trades the other (its fill is awaited). The trade's batch
// has order events (the order, the stop's OrderTriggered) before and after
// its fills.
func tradeElectingAStop(t *testing.T, fixAddr string) {
	t.Helper()
	buyer, seller := logOn(t, fixAddr, "CLIENT1"), logOn(t, fixAddr, "CLIENT2")
	send := func(c *fixclient.Client, id string, fields ...fixclient.Field) {
		t.Helper()
		f := append([]fixclient.Field{fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(60, fixclient.Timestamp(time.Now())),
			fixclient.F(38, "1"), fixclient.F(59, "1")}, fields...)
		if err := c.Send("D", f...); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Expect(10*time.Second, "8", map[int]string{11: id, 150: "0"}); err != nil {
			t.Fatal(err)
		}
	}
	send(buyer, "stop", fixclient.F(54, "1"), fixclient.F(40, "3"), fixclient.F(99, "100.50"))
	send(seller, "ask", fixclient.F(54, "2"), fixclient.F(40, "2"), fixclient.F(44, "101.00"))
	send(seller, "ask2", fixclient.F(54, "2"), fixclient.F(40, "2"), fixclient.F(44, "101.00"))
	send(buyer, "take", fixclient.F(54, "1"), fixclient.F(40, "2"), fixclient.F(44, "101.00"))
	if _, err := buyer.Expect(10*time.Second, "8", map[int]string{11: "stop", 150: "F"}); err != nil {
		t.Fatal(err)
	}
}

// TestEventsReadersLeaveNoConsumer: `events tail` (to a count, and
// following until SIGTERM) and `events verify` delete the JetStream
// consumer they read through when they end. JetStream keeps a consumer
// nobody reads for its inactive threshold, five minutes for the ordered
// consumer they use, each with three goroutines and its state in the
// server's process, the venue's own with the embedded server: a monitor
// that ran a tail or a verify every few seconds kept hundreds there.
func TestEventsReadersLeaveNoConsumer(t *testing.T) {
	t.Parallel()
	cfgPath := writeVenueConfig(t, t.TempDir(), "%s", exportTOML)
	v := startVenue(t, cfgPath)
	restingOrderAt(t, v.fixAddr, 1, "kept")
	url := v.ready.NATSURL
	run := func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return exec.CommandContext(ctx, binPath, append([]string{"events"}, args...)...).CombinedOutput()
	}
	for range 2 {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			out, err := run("tail", "--nats", url, "--from", "1", "--count", "1")
			if err == nil {
				break // the stream holds the order's events
			}
			if time.Now().After(deadline) {
				t.Fatalf("events tail --count 1: %v: %s", err, out)
			}
		}
	}
	if out, err := run("verify", "--config", cfgPath, "--nats", url); err != nil {
		t.Fatalf("events verify: %v: %s", err, out)
	}
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		tail := exec.CommandContext(ctx, binPath, "events", "tail", "--nats", url, "--from", "1")
		stdout, err := tail.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := tail.Start(); err != nil {
			t.Fatal(err)
		}
		if !bufio.NewScanner(stdout).Scan() {
			t.Fatal("a following events tail printed nothing")
		}
		_ = tail.Process.Signal(syscall.SIGTERM)
		if err := tail.Wait(); err != nil {
			t.Fatalf("a following events tail stopped by SIGTERM: %v", err)
		}
		cancel()
	}
	js := natstest.JetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "FIXVENUE_VENUE")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Consumers == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d consumers left on the stream by readers that ended", info.State.Consumers)
		}
	}
}
