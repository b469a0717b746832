package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/eventstream"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/internal/natstest"
	"github.com/fixvenue/fixvenue/journal"
)

// externalNATS starts a NATS server standing for an external one, learns
// its port, and stops it unless running is true; cfg is a venue exporting
// to it (so, without running, to a NATS that is down at its start).
func externalNATS(t *testing.T, running bool) (n *eventstream.Embedded, url string, cfg *config.Config) {
	t.Helper()
	n, err := eventstream.StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	url = n.URL()
	n.Stop()
	if running {
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
	}
	return n, url, testConfig(t, t.TempDir(), fmt.Sprintf("[export]\nenabled = true\nnats_url = %q\n", url))
}

// restingOrders logs CLIENT1 on and has n buy orders accepted (o0, o1, …),
// which rest; it returns the logged-on client.
func restingOrders(t *testing.T, s *Server, n int) *fixclient.Client {
	t.Helper()
	c := logon(t, s, "CLIENT1", true)
	for i := 0; i < n; i++ {
		sendOrder(t, c, order{id: fmt.Sprintf("o%d", i), side: "1", qty: "1", px: "99.00"})
		expectER(t, c, map[int]string{11: fmt.Sprintf("o%d", i), 150: "0"})
	}
	return c
}

// TestExportNATSDownAtStart: the venue starts and trades with its NATS
// unreachable; once NATS comes up the stream catches up with the journal.
func TestExportNATSDownAtStart(t *testing.T) {
	n, url, cfg := externalNATS(t, false)
	s := startServer(t, cfg, Options{})
	restingOrders(t, s, 20)
	if lag := s.ExportLag(); lag < 20 {
		t.Fatalf("export lag %d with NATS down, want at least 20", lag)
	}
	m := scrape(t, s)
	if metricstest.Value(t, m, "fixvenue_export_connected") != "0" || metricstest.Value(t, m, "fixvenue_export_lag_commands") == "0" {
		t.Fatalf("metrics do not show the outage:\n%s", grepLines(m, "fixvenue_export"))
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	waitExported(t, s)
	verifyAt(t, s, url)
}

// TestExportRefusesAForeignStream: a stream of the same name whose last
// message the venue did not write is never appended to; the venue trades
// on, and the export goes on once the stream is the venue's again.
func TestExportRefusesAForeignStream(t *testing.T) {
	t.Parallel()
	_, url, cfg := externalNATS(t, true)
	js := natstest.JetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	subj := eventstream.Subjects{Prefix: "fixvenue", Venue: cfg.Venue.SenderCompID}
	st, err := eventstream.EnsureStream(ctx, js, cfg.ExportStream(), subj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "fixvenue."+cfg.Venue.SenderCompID+".orders.ACME", []byte("not an event")); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "o1", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "o1", 150: "0"})
	for deadline := time.Now().Add(10 * time.Second); metricstest.Value(t, scrape(t, s), "fixvenue_export_errors_total") == "0"; {
		if time.Now().After(deadline) {
			t.Fatal("no export error counted for a foreign stream")
		}
		time.Sleep(10 * time.Millisecond)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("the exporter wrote into a foreign stream: %d messages", info.State.Msgs)
	}
	// An operator removes the foreign stream: the exporter recreates it
	// and exports everything from the journal's start.
	if err := js.DeleteStream(ctx, cfg.ExportStream()); err != nil {
		t.Fatal(err)
	}
	waitExported(t, s)
	verifyAt(t, s, url)
}

// TestExportRefusesAStreamWithAGap: a stream whose last message is not at
// the sequence it was published for (messages removed) is refused.
func TestExportRefusesAStreamWithAGap(t *testing.T) {
	t.Parallel()
	x := exportedStream(t)
	s, c, js, st, info, ctx, cfg := x.s, x.c, x.js, x.st, x.info, x.ctx, x.cfg
	// Cut the stream's last message and republish it one sequence later.
	last, err := st.GetMsg(ctx, info.State.LastSeq)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, info.State.LastSeq); err != nil {
		t.Fatal(err)
	}
	last.Header.Del(jetstream.ExpectedLastSeqHeader)
	last.Header.Del(jetstream.ExpectedLastMsgIDHeader)
	last.Header.Del(jetstream.MsgIDHeader)
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: last.Subject, Header: last.Header, Data: last.Data}); err != nil {
		t.Fatal(err)
	}
	if _, err := eventstream.LastEvent(ctx, st); err == nil || !strings.Contains(err.Error(), "gap") {
		t.Fatalf("LastEvent of a stream with a gap: %v", err)
	}
	orderCountsAnExportError(t, s, c, "a stream with a gap")
	if _, err := eventstream.SummarizeStream(ctx, js, cfg.ExportStream(), 0); err == nil || !strings.Contains(err.Error(), "gap") {
		t.Fatalf("verify of a stream with a gap: %v", err)
	}
}

// TestExportRefusesAnEarlierBatchAtTheStreamsEnd: a copy of the stream's
// first message published at its end, with the Fixvenue-Stream-Seq of its
// new place, does not continue the batch before it; the exporter refuses
// the stream instead of going back to event 1 and publishing every event
// a second time (eventstream/doc.go, "Outages and restarts").
func TestExportRefusesAnEarlierBatchAtTheStreamsEnd(t *testing.T) {
	t.Parallel()
	x := exportedStream(t)
	s, c, js, st, info, ctx := x.s, x.c, x.js, x.st, x.info, x.ctx
	before, err := eventstream.LastEvent(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	first.Header.Set(eventstream.HeaderStreamSeq, fmt.Sprint(info.State.LastSeq+1))
	first.Header.Del(jetstream.ExpectedLastSeqHeader)
	first.Header.Del(jetstream.ExpectedLastMsgIDHeader)
	first.Header.Del(jetstream.ExpectedLastSubjSeqHeader)
	first.Header.Del(jetstream.ExpectedLastSubjSeqSubjHeader)
	first.Header.Del(jetstream.MsgIDHeader)
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: first.Subject, Header: first.Header, Data: first.Data}); err != nil {
		t.Fatal(err)
	}
	if _, err := eventstream.LastEvent(ctx, st); err == nil || !strings.Contains(err.Error(), "does not follow") {
		t.Fatalf("LastEvent of a stream ending in a copy of its first batch: %v", err)
	}
	orderCountsAnExportError(t, s, c, "a stream ending in an earlier batch")
	// A few retries later, the stream holds the events it held only in its
	// messages and the copy: none published a second time.
	time.Sleep(3 * eventstream.RetryDefault)
	held := 0
	for seq := uint64(1); ; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		d, err := eventstream.DecodeMessage(m.Header, m.Data)
		if err != nil {
			t.Fatal(err)
		}
		if d.First <= before.Last {
			held++
		}
	}
	if held != int(info.State.LastSeq)+1 {
		t.Fatalf("%d messages hold events the stream's %d messages and the copy held: the exporter published them again", held, info.State.LastSeq)
	}
}

// exported is a venue whose five resting orders are in the stream of an
// external NATS server, with that stream and its state then, and the
// venue's log.
type exported struct {
	logs *lockedbuf.Buffer
	s    *Server
	c    *fixclient.Client
	cfg  *config.Config
	js   jetstream.JetStream
	st   jetstream.Stream
	info *jetstream.StreamInfo
	ctx  context.Context
}

func exportedStream(t *testing.T) exported {
	t.Helper()
	_, url, cfg := externalNATS(t, true)
	var logs lockedbuf.Buffer
	s := startServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(io.MultiWriter(&logs, testWriter(t)), nil))})
	c := restingOrders(t, s, 5)
	waitExported(t, s)
	js := natstest.JetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	st, err := js.Stream(ctx, cfg.ExportStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return exported{logs: &logs, s: s, c: c, cfg: cfg, js: js, st: st, info: info, ctx: ctx}
}

// orderCountsAnExportError sends an order and waits, bounded, for the
// exporter to count an error publishing it to a stream it must refuse.
func orderCountsAnExportError(t *testing.T, s *Server, c *fixclient.Client, stream string) {
	t.Helper()
	errorsBefore := metricstest.Value(t, scrape(t, s), "fixvenue_export_errors_total")
	sendOrder(t, c, order{id: "after", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "after", 150: "0"})
	for deadline := time.Now().Add(10 * time.Second); metricstest.Value(t, scrape(t, s), "fixvenue_export_errors_total") == errorsBefore; {
		if time.Now().After(deadline) {
			t.Fatalf("no export error counted for %s", stream)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// verifyAt checks the stream at url against the venue's journal. Sessions
// that just logged out may still add commands (cancel-on-disconnect), so a
// stream that is only behind is read again, for a bounded time.
func verifyAt(t *testing.T, s *Server, url string) eventstream.Summary {
	t.Helper()
	js := natstest.JetStream(t, url)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		stream, err := eventstream.SummarizeStream(ctx, js, s.cfg.ExportStream(), 0)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		jour, prefix, err := eventstream.SummarizeJournal(filepath.Join(s.cfg.Venue.DataDir, "journal"), MatcherConfig(s.cfg), stream.Events)
		if err != nil {
			t.Fatal(err)
		}
		err = eventstream.Compare(stream, jour, prefix)
		if err == nil && stream.Events > 0 {
			return stream
		}
		if err == nil || !strings.Contains(err.Error(), "behind") || time.Now().After(deadline) {
			t.Fatalf("%v (stream %s)", err, stream)
		}
	}
}

func grepLines(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestExportCompletesAPartialBatch: a stream that ends inside a batch (its
// last parts never stored: the venue stopped between two parts) is
// completed by the restarted venue: it forms the same batch again from the
// journal, checks the last part the stream holds and publishes the parts
// after it, and the stream then matches the journal.
func TestExportCompletesAPartialBatch(t *testing.T) {
	t.Parallel()
	_, url, _ := externalNATS(t, true)
	dir := t.TempDir()
	section := fmt.Sprintf("[export]\nenabled = true\nnats_url = %q\n", url)
	s := startServer(t, testConfig(t, dir, section), Options{})
	loadRun(t, s, "a", 30, nil)
	waitExported(t, s)
	full := verifyAt(t, s, url)
	s.Close()

	// Copy the stream's messages up to a part that is not its batch's
	// last into a new stream of the same name.
	js := natstest.JetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream := s.cfg.ExportStream()
	var kept []*jetstream.RawStreamMsg
	var cut *eventstream.Message
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); cut == nil; seq++ {
		raw, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("no batch of several parts in the stream (message %d: %v)", seq, err)
		}
		m, err := eventstream.DecodeMessage(raw.Header, raw.Data)
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, raw)
		if m.Part < m.Parts && m.First > 1 {
			cut = m
		}
	}
	if err := js.DeleteStream(ctx, stream); err != nil {
		t.Fatal(err)
	}
	// The server may still be removing the deleted stream's files: creating
	// one of the same name fails until it is done (bounded retries).
	for try := 0; ; try++ {
		_, err := eventstream.EnsureStream(ctx, js, stream, eventstream.Subjects{Prefix: "fixvenue", Venue: s.cfg.Venue.SenderCompID})
		if err == nil {
			break
		}
		if try == 100 {
			t.Fatalf("the stream again after deleting it: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, raw := range kept {
		raw.Header.Del(jetstream.ExpectedLastSeqHeader)
		raw.Header.Del(jetstream.ExpectedLastMsgIDHeader)
		if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: raw.Subject, Header: raw.Header, Data: raw.Data}); err != nil {
			t.Fatal(err)
		}
	}
	if partial, err := eventstream.SummarizeStream(ctx, js, stream, 0); err != nil || partial.LastEventSeq != cut.First-1 {
		t.Fatalf("the cut stream: %s, %v; want it to end at event %d, before the partial batch", partial, err, cut.First-1)
	}

	s2 := startServer(t, testConfig(t, dir, section), Options{})
	waitExported(t, s2)
	if got := verifyAt(t, s2, url); got.Events < full.Events {
		t.Fatalf("after the restart the stream has %d events, before the cut %d", got.Events, full.Events)
	}
	raw, err := st.GetMsg(ctx, uint64(len(kept))+1)
	if err != nil {
		t.Fatal(err)
	}
	next, err := eventstream.DecodeMessage(raw.Header, raw.Data)
	if err != nil {
		t.Fatal(err)
	}
	if next.First != cut.First || next.Part != cut.Part+1 {
		t.Fatalf("the message after the cut is part %d of batch %d-%d, want part %d of batch %d-%d",
			next.Part, next.First, next.Last, cut.Part+1, cut.First, cut.Last)
	}
}

// TestExportReexportsAnArchivedJournal: after two ends of day have moved
// the first day's segments to the archive, an operator deletes the stream;
// the exporter re-exports from the journal's start, reading the archived
// commands from the archive, and the stream matches the journal event for
// event. Before, its catch-up read the live journal only and started an
// empty matcher at the live journal's first command.
func TestExportReexportsAnArchivedJournal(t *testing.T) {
	t.Parallel()
	_, url, _ := externalNATS(t, true)
	cfg := testConfig(t, t.TempDir(), adminConfig()+fmt.Sprintf("[export]\nenabled = true\nnats_url = %q\n", url))
	cfg.Journal.SegmentBytes = 65536 // a day fills several segments
	cfg.Journal.SnapshotInterval.Duration = 0
	s := startServer(t, cfg, Options{})
	c := restingOrders(t, s, 3) // resting across both days: the archive's commands shape the book
	for day := range 2 {
		iocBurst(t, c, fmt.Sprintf("day%d", day), 1500)
		if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"day done"}`, nil); code != 200 {
			t.Fatalf("eod: %d", code)
		}
	}
	archived, _ := filepath.Glob(filepath.Join(cfg.Venue.DataDir, "journal", "archive", "journal-*.seg.gz"))
	if len(archived) == 0 {
		t.Fatal("nothing archived after two ends of day")
	}
	waitExported(t, s)
	js := natstest.JetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, cfg.ExportStream()); err != nil {
		t.Fatal(err)
	}
	sendOrder(t, c, order{id: "after", side: "1", qty: "1", px: "97.00"})
	expectER(t, c, map[int]string{11: "after", 150: "0"})
	waitExported(t, s)
	verifyAt(t, s, url)
}

// limitedNATS starts a NATS server whose JetStream may store maxStore
// bytes, on port (0: any) with its store in dir.
func limitedNATS(t *testing.T, port int, dir string, maxStore int64) *natsserver.Server {
	t.Helper()
	if port == 0 {
		port = natsserver.RANDOM_PORT
	}
	n, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir,
		JetStreamMaxStore: maxStore, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go n.Start()
	if !n.ReadyForConnections(30 * time.Second) {
		t.Fatal("NATS not ready")
	}
	t.Cleanup(n.Shutdown)
	return n
}

// TestExportStreamStorageFull: the NATS server's JetStream storage fills
// up. The venue trades on, the journal keeps every command, the log says
// why the stream takes no more (JetStream's own error, not the
// consequence that a batch's last part does not continue the stream) and
// says it once, not at every retry; once the NATS server has room the
// export resumes and the stream matches the journal (eventstream/doc.go,
// "Outages and restarts").
func TestExportStreamStorageFull(t *testing.T) {
	t.Parallel()
	storeDir := t.TempDir()
	n := limitedNATS(t, 0, storeDir, 48<<10)
	url := n.ClientURL()
	port := n.Addr().(*net.TCPAddr).Port
	var logs lockedbuf.Buffer
	cfg := testConfig(t, t.TempDir(), fmt.Sprintf("[export]\nenabled = true\nnats_url = %q\npublish_window = 64\n", url))
	s := startServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(io.MultiWriter(&logs, testWriter(t)), nil))})
	for i := 0; metricstest.Value(t, scrape(t, s), "fixvenue_export_errors_total") == "0"; i++ {
		if i == 20 {
			t.Fatalf("the stream took every event of 20 load runs within %d bytes:\n%s", 48<<10, logs.String())
		}
		loadRun(t, s, fmt.Sprintf("r%d", i), 20, nil)
	}
	time.Sleep(4 * eventstream.RetryDefault) // several retries
	paused := strings.Count(logs.String(), "event export paused")
	if paused > 2 || !strings.Contains(logs.String(), "insufficient resources") {
		t.Fatalf("%d lines of a paused export, want one or two saying JetStream has no room:\n%s", paused, logs.String())
	}
	if lag := s.ExportLag(); lag == 0 {
		t.Fatal("no export lag with the stream full")
	}
	n.Shutdown()
	n.WaitForShutdown()
	limitedNATS(t, port, storeDir, 0)
	waitExported(t, s)
	verifyAt(t, s, url)
	if !strings.Contains(logs.String(), "event export resumed") {
		t.Fatalf("no line saying the export resumed:\n%s", logs.String())
	}
}

// TestExportNamesAPurgedStreamAGap: a purged stream is empty but keeps
// its last sequence; the exporter connecting to it refuses it as a gap,
// saying so in its log, and writes nothing to it (eventstream/doc.go, "Outages and restarts").
func TestExportNamesAPurgedStreamAGap(t *testing.T) {
	n, url, cfg := externalNATS(t, true)
	var logs lockedbuf.Buffer
	s := startServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(io.MultiWriter(&logs, testWriter(t)), nil))})
	restingOrders(t, s, 5)
	waitExported(t, s)
	js := natstest.JetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, cfg.ExportStream())
	if err != nil {
		t.Fatal(err)
	}
	// No event follows the purge (the exporter's next batch would be
	// refused: TestExportStopsAtAStreamPurgedWhileConnected); NATS
	// restarted, the exporter reads the stream's end again.
	if err := st.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	n.Stop()
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	want := "was removed (deleted, or the stream purged): a gap"
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("no log line saying %q:\n%s", want, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	js = natstest.JetStream(t, url)
	st, err = js.Stream(ctx, cfg.ExportStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Fatalf("the exporter wrote %d messages into a purged stream", info.State.Msgs)
	}
}

// TestExportStopsAtAStreamPurgedWhileConnected: a stream an operator
// purges while the exporter is connected keeps its last sequence, so
// Nats-Expected-Last-Sequence alone would let the exporter go on writing
// into it as if nothing happened; the exporter's next batch is refused
// instead, and it says the stream lost its events, in its log and on
// /metrics, and writes nothing to it (eventstream/doc.go, "Outages and
// restarts").
func TestExportStopsAtAStreamPurgedWhileConnected(t *testing.T) {
	x := exportedStream(t)
	if err := x.st.Purge(x.ctx); err != nil {
		t.Fatal(err)
	}
	sendOrder(t, x.c, order{id: "after", side: "1", qty: "1", px: "99.00"})
	expectER(t, x.c, map[int]string{11: "after", 150: "0"})
	want := "was removed (deleted, or the stream purged): a gap"
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(x.logs.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("no log line saying %q:\n%s", want, x.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	info, err := x.st.Info(x.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Fatalf("the exporter wrote %d messages into the purged stream", info.State.Msgs)
	}
	if m := scrape(t, x.s); !strings.Contains(m, "\nfixvenue_export_connected 0\n") {
		t.Fatalf("/metrics does not show the export stopped:\n%s", grepLines(m, "fixvenue_export_"))
	}
	if x.s.ExportLag() == 0 {
		t.Fatal("no export lag with the order's events not exported")
	}
}

// TestExportCatchUpLogsWhereItStarts: a venue restarted on its stream
// catches up from the first event of the batch the stream ends in
// (eventstream/doc.go, "Outages and restarts"), and its log says that
// event; it called the event before it the stream's last event, so a
// stream ending in one batch of every event was logged as holding none.
func TestExportCatchUpLogsWhereItStarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, testConfig(t, dir, exportSection+"[session_defaults]\ncancel_on_disconnect = false\n"), Options{})
	c1 := logon(t, s, "CLIENT1", true)
	c2 := logon(t, s, "CLIENT2", true)
	sendOrder(t, c2, order{id: "s1", side: "2", qty: "10", px: "100.00"})
	expectER(t, c2, map[int]string{11: "s1", 150: "0"})
	// One command, three events (accepted, a fill each side): a batch of
	// more than one event ends the stream.
	sendOrder(t, c1, order{id: "b1", side: "1", qty: "4", px: "100.00"})
	expectER(t, c1, map[int]string{11: "b1", 150: "F"})
	waitExported(t, s)
	s.Close()

	var logs lockedbuf.Buffer
	s2 := startServer(t, testConfig(t, dir, exportSection+"[session_defaults]\ncancel_on_disconnect = false\n"), Options{Logger: slog.New(slog.NewTextHandler(io.MultiWriter(&logs, testWriter(t)), nil))})
	waitExported(t, s2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := natstest.JetStream(t, s2.EmbeddedNATS().URL()).Stream(ctx, s2.cfg.ExportStream())
	if err != nil {
		t.Fatal(err)
	}
	last, err := eventstream.LastEvent(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if last.First == last.Last {
		t.Fatalf("the stream ends in a batch of one event (%d): the test needs more", last.First)
	}
	want := fmt.Sprintf(" from_event_seq=%d", last.First)
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "catching up from the journal") && strings.HasSuffix(line, want) {
			return
		}
	}
	t.Fatalf("no catch-up log line ending %q:\n%s", want, logs.String())
}

// TestExportCatchUpFailingInTheJournalLogsOnce: a catch-up that fails in
// the journal (a damaged record) is started again at every retry; its
// "catching up from the journal" line is logged once for that failure, as
// the failure itself is, not at every retry, and the export resumes, saying
// so once, when the journal reads again (eventstream/doc.go, "Outages and
// restarts").
func TestExportCatchUpFailingInTheJournalLogsOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir, exportSection+"tap_events = 256\n")
	var logs lockedbuf.Buffer
	s := startServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(io.MultiWriter(&logs, testWriter(t)), nil))})
	sendAndWait(t, s, "before")
	waitExported(t, s)
	// The tap drops events while NATS is away: the exporter catches up
	// from the journal's start (no snapshot), where a byte of the first
	// command is flipped; the venue replayed the journal already and
	// appends after it.
	s.EmbeddedNATS().Stop()
	loadRun(t, s, "a", 100, nil)
	for deadline := time.Now().Add(10 * time.Second); metricstest.Value(t, scrape(t, s), "fixvenue_export_tap_dropped_total") == "0"; {
		if time.Now().After(deadline) {
			t.Fatal("the tap dropped nothing while NATS was away")
		}
		time.Sleep(10 * time.Millisecond)
	}
	f, err := os.OpenFile(filepath.Join(cfg.Venue.DataDir, "journal", "journal-00000000000000000000.seg"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flip := func() {
		t.Helper()
		b := make([]byte, 1)
		const at = journal.SegmentHeaderBytes + journal.FrameHeaderBytes + 4
		if _, err := f.ReadAt(b, at); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0xff
		if _, err := f.WriteAt(b, at); err != nil {
			t.Fatal(err)
		}
	}
	flip()
	if err := s.EmbeddedNATS().Start(); err != nil {
		t.Fatal(err)
	}
	// The damage found, then three retries that meet it again.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs.String(), "journal: corrupt"); {
		if time.Now().After(deadline) {
			t.Fatalf("the export did not fail on the damaged journal:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	errorsNow := func() int {
		n, _ := strconv.Atoi(metricstest.Value(t, scrape(t, s), "fixvenue_export_errors_total"))
		return n
	}
	for deadline, from := time.Now().Add(20*time.Second), errorsNow(); errorsNow() < from+3; {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than 3 retries in 20 s:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	flip()
	waitExported(t, s)
	verifyStream(t, s)
	text := logs.String()
	failed := strings.LastIndex(text[:strings.Index(text, "journal: corrupt")], "\n") + 1
	if n := strings.Count(text[failed:], "catching up from the journal"); n != 0 {
		t.Errorf("%d catch-up lines after the catch-up's failure was logged, want none:\n%s", n, text)
	}
	if n := strings.Count(text[failed:], "event export resumed"); n != 1 {
		t.Errorf("%d lines saying the export resumed, want 1:\n%s", n, text)
	}
}

// TestExportRestartAfterALogoutCatchesUpFromASnapshot: orders, each
// followed by a periodic snapshot, then a session's logout, a command
// without events: no snapshot follows it, so the journal's two snapshots
// are not both after the stream's last event, and the restarted venue's
// export catches up from the one before it. One after the logout removed
// that one, and the catch-up replayed the journal from its first command.
func TestExportRestartAfterALogoutCatchesUpFromASnapshot(t *testing.T) {
	dir := t.TempDir()
	const interval = 50 * time.Millisecond
	venueConfig := func() *config.Config {
		cfg := testConfig(t, dir, exportSection+"[session_defaults]\ncancel_on_disconnect = false\n")
		cfg.Journal.SnapshotInterval.Duration = interval
		return cfg
	}
	s := startServer(t, venueConfig(), Options{})
	c := logon(t, s, "CLIENT1", true)
	// waitSnapshot waits for a snapshot of the last durable command.
	waitSnapshot := func() {
		t.Helper()
		durable := s.pipe.Durable().Load()
		for deadline := time.Now().Add(10 * time.Second); s.snaps.Stats().LastSeq.Load() < durable; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no snapshot of command %d or after within 10 s", durable)
			}
		}
	}
	for i := range 2 {
		id := fmt.Sprintf("o%d", i)
		sendOrder(t, c, order{id: id, side: "1", qty: "1", px: "99.00"})
		expectER(t, c, map[int]string{11: id, 150: "0"})
		waitSnapshot()
	}
	waitExported(t, s)
	snapped := s.snaps.Stats().LastSeq.Load()
	c.Logout()
	for deadline := time.Now().Add(10 * time.Second); s.pipe.Durable().Load() <= snapped; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the logout journaled no command within 10 s")
		}
	}
	// Some intervals: long enough for the snapshot a logout took.
	for end := time.Now().Add(20 * interval); time.Now().Before(end); time.Sleep(interval) {
		if last := s.snaps.Stats().LastSeq.Load(); last != snapped {
			t.Fatalf("a snapshot (seq %d) after the logout, a command without events", last)
		}
	}
	s.Close()

	var logs lockedbuf.Buffer
	s2 := startServer(t, venueConfig(), Options{Logger: slog.New(slog.NewTextHandler(io.MultiWriter(&logs, testWriter(t)), nil))})
	waitExported(t, s2)
	from := ""
	for _, line := range strings.Split(logs.String(), "\n") {
		if _, v, ok := strings.Cut(line, `catching up from the journal" journal_from_seq=`); ok {
			from, _, _ = strings.Cut(v, " ")
			break
		}
	}
	if from == "" || from == "0" {
		t.Fatalf("the restarted venue's export caught up from journal seq %q, want from the snapshot before the stream's last event:\n%s", from, logs.String())
	}
}

// TestExportStopsAtAForeignMessageBeforeABatchsSecondPart: a message of
// the venue's subjects that another publisher writes between two batches
// takes the sequence the next batch's first part expects, so JetStream
// refuses that part; the parts after it expect the sequence of the part
// before them, which the foreign message now holds, and were stored
// after it without their first part, whose events the stream then
// lacked, while the exporter, acked for the batch's last part, went on
// writing into a stream it cannot continue. Every message now names the
// one before it (Nats-Expected-Last-Msg-Id): the batch is refused whole
// and the exporter stops at the foreign message (eventstream/doc.go,
// "Outages and restarts").
func TestExportStopsAtAForeignMessageBeforeABatchsSecondPart(t *testing.T) {
	t.Parallel()
	x := exportedStream(t)
	foreign, err := x.js.Publish(x.ctx, "fixvenue."+x.cfg.Venue.SenderCompID+".orders.ACME", []byte("not an event"))
	if err != nil {
		t.Fatal(err)
	}
	// A sell that trades with the five resting buys and rests the rest:
	// events of orders.ACME and trades.ACME, one batch of two parts.
	c2 := logon(t, x.s, "CLIENT2", true)
	sendOrder(t, c2, order{id: "s1", side: "2", qty: "10", px: "99.00"})
	expectER(t, c2, map[int]string{11: "s1", 150: "0"})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info, err := x.st.Info(x.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.LastSeq != foreign.Sequence {
			m, _ := x.st.GetMsg(x.ctx, info.State.LastSeq)
			t.Fatalf("the exporter wrote after a foreign message (stream sequence %d): the stream ends at %d, %v",
				foreign.Sequence, info.State.LastSeq, m.Header)
		}
		if strings.Contains(x.logs.String(), "not written by this venue's exporter") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter did not say the stream holds a foreign message:\n%s", x.logs.String())
		}
	}
}
