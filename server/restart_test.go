package server

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
)

// TestRestartKeepsStateAndSequenceNumbers stops the venue, starts it again on
// the same data, and checks that orders and sequence numbers carried over.
func TestRestartKeepsStateAndSequenceNumbers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, c, ack := restingGTC(t, dir, "k1", "97.00")
	next := c.NextOut
	c.Close()
	time.Sleep(100 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := startServer(t, testConfig(t, dir, ""), Options{})
	if s2.Replayed() == 0 {
		t.Fatal("nothing replayed")
	}
	r, lg := resume(t, s2, "CLIENT1", next)
	if lg.SeqNum() <= ack.SeqNum() {
		t.Fatalf("venue logon seq %d after having sent %d: sequence numbers were reset", lg.SeqNum(), ack.SeqNum())
	}
	if err := r.Send("H", fixclient.F(11, "k1"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, r, map[int]string{11: "k1", 150: "I", 39: "0", 37: ack.Get(37)})

	// The ExecutionReport sent before the restart can be asked for again: it
	// comes back from the FIX store with its original MsgSeqNum and PossDupFlag.
	if err := r.Send("2", fixclient.F(7, itoa(ack.SeqNum())), fixclient.F(16, itoa(ack.SeqNum()))); err != nil {
		t.Fatal(err)
	}
	again := expectER(t, r, map[int]string{11: "k1", 150: "0", 43: "Y"})
	if again.SeqNum() != ack.SeqNum() || again.Get(37) != ack.Get(37) {
		t.Fatalf("resent report %s differs from the original %s", again, ack)
	}
}

func TestSetSeqNumsHook(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), "")
	cfg.Metrics.TestHooks = true
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	c.Close()
	// Set once the venue is done with the connection: its Logon's handling
	// is over, and so is the session's use of the store.
	waitReleased(t, s, "CLIENT1")
	resp, err := http.Post("http://"+s.MetricsAddr()+"/test/seqnums?session=FIX.4.4:"+s.cfg.Venue.SenderCompID+"->CLIENT1&next_sender=40&next_target=7", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status %d", resp.StatusCode)
	}
	_, lg := resume(t, s, "CLIENT1", 7)
	if lg.SeqNum() != 40 {
		t.Fatalf("venue logon seq %d, want 40 after the hook", lg.SeqNum())
	}
	resp, _ = http.Post("http://"+s.MetricsAddr()+"/test/seqnums?session=nope", "", nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown session: status %d", resp.StatusCode)
	}
	// The hook takes no token: a page a browser on the machine shows, of
	// another origin (a form's post), or under its own name resolved to
	// loopback (DNS rebinding), is refused, changing nothing.
	id := quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: s.cfg.Venue.SenderCompID, TargetCompID: "CLIENT1"}
	st, ok := s.stores.Lookup(id)
	if !ok {
		t.Fatal("CLIENT1 has no store")
	}
	next := st.NextSenderMsgSeqNum()
	for _, c := range []struct {
		what   string
		header http.Header
		host   string
	}{
		{"a form of another origin", http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"http://elsewhere.example"}}, ""},
		{"a page of another port of the host", http.Header{"Sec-Fetch-Site": {"same-site"}, "Origin": {"http://127.0.0.1:1"}}, ""},
		{"a page under a name rebound to loopback", http.Header{"Sec-Fetch-Site": {"same-origin"}, "Origin": {"http://rebound.example"}}, "rebound.example"},
	} {
		req, err := http.NewRequest(http.MethodPost, "http://"+s.MetricsAddr()+"/test/seqnums?session=FIX.4.4:"+s.cfg.Venue.SenderCompID+"->CLIENT1&next_sender=900", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = c.header
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: HTTP %d, want 403", c.what, resp.StatusCode)
		}
	}
	if got := st.NextSenderMsgSeqNum(); got != next {
		t.Fatalf("the venue's next sequence number to CLIENT1 moved from %d to %d by refused calls", next, got)
	}
}

// TestRestartFromSnapshot takes periodic snapshots, restarts, and checks that
// start-up loaded the snapshot, replayed only the commands after it, and that
// orders from before and after the snapshot are both there.
func TestRestartFromSnapshot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, "")
	// Start-up uses a snapshot only with the console tape's state saved
	// beside it (waitUsableSnapshot), and the tape holds one snapshot point
	// to save, at the first event of a later command ("after"): a snapshot
	// journaled before the tape takes that event replaces the point. The
	// interval is far above the tape's lag on a loaded machine (at 50 ms a
	// lagging tape lost the point and the restart replayed everything).
	cfg.Journal.SnapshotInterval.Duration = time.Second
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "before", side: "1", qty: "2", px: "96.00", tif: "1"})
	expectER(t, c, map[int]string{11: "before", 150: "0"})
	deadline := time.Now().Add(10 * time.Second)
	for s.snaps.Stats().Taken.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s.snaps.Stats().Taken.Load() == 0 {
		t.Fatal("no snapshot taken")
	}
	sendOrder(t, c, order{id: "after", side: "2", qty: "2", px: "104.00", tif: "1"})
	expectER(t, c, map[int]string{11: "after", 150: "0"})
	next := c.NextOut
	c.Close()
	seq := waitUsableSnapshot(t, s)
	total := s.Pipeline().Durable().Load() + 1
	s.Close()

	cfg2 := testConfig(t, dir, "")
	s2 := startServer(t, cfg2, Options{})
	if s2.Replayed() >= total {
		t.Fatalf("replayed %d of %d commands: the snapshot after seq %d was not used", s2.Replayed(), total, seq)
	}
	r, _ := resume(t, s2, "CLIENT1", next)
	for id, side := range map[string]string{"before": "1", "after": "2"} {
		if err := r.Send("H", fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(54, side)); err != nil {
			t.Fatal(err)
		}
		expectER(t, r, map[int]string{11: id, 150: "I", 39: "0"})
	}
}

// waitUsableSnapshot waits, bounded, until the journal holds a snapshot that
// start-up can use, and returns its seq: one every state kept beside
// snapshots has a file for (the console's tape when the admin API is on,
// the feed's with market data on; Server.replay). Those states are saved on
// their own goroutines, when each takes the first event of a command after
// the snapshot, so they can lag the journal's snapshot by any time.
func waitUsableSnapshot(t *testing.T, s *Server) uint64 {
	t.Helper()
	return waitUsableSnapshotPast(t, s, 0)
}

// waitUsableSnapshotPast is waitUsableSnapshot for a snapshot at or after
// seq after.
func waitUsableSnapshotPast(t *testing.T, s *Server, after uint64) uint64 {
	t.Helper()
	var sides []string
	if s.consoleSnaps != nil {
		sides = append(sides, s.consoleStateDir())
	}
	if s.feed != nil {
		sides = append(sides, s.mdStateDir())
	}
	has := func(dir string, seq uint64) bool {
		files, _ := journal.ListSnapshots(dir)
		for _, f := range files {
			if f.Seq == seq {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		snaps, err := journal.ListSnapshots(filepath.Join(s.cfg.Venue.DataDir, "journal"))
		if err != nil {
			t.Fatal(err)
		}
		for _, sn := range snaps {
			usable := sn.Seq >= after
			for _, dir := range sides {
				usable = usable && has(dir, sn.Seq)
			}
			if usable {
				return sn.Seq
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no journal snapshot of %v at or after seq %d has its states in %v after 10 s", snaps, after, sides)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFailedStartEnds: a Start that fails (the metrics address taken) ends
// with the error and frees what New took, so that the same venue can be
// started again in the process; a venue closed without a Start ends too.
// Before, Close waited for ever on FIX session loops that never ran.
func TestFailedStartEnds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := testConfig(t, dir, "")
	cfg.Metrics.Addr = taken.Addr().String()
	s, err := New(cfg, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil || !strings.Contains(err.Error(), "metrics.addr") {
		t.Fatalf("start with the metrics address taken: %v", err)
	}
	cfg.Metrics.Addr = "127.0.0.1:0"
	s, err = New(cfg, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("a new start after the failed one: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close without a start: %v", err)
	}
	s = startServer(t, cfg, Options{})
	logon(t, s, "CLIENT1", true)
}

// TestEndOfDaySnapshotServesTheNextStart: a start never needs the journal
// archive. The states the feed and the console keep beside a snapshot are
// written at the first event of a later command; so right after an end of
// day (with no periodic snapshots) nothing is archived, and the next end of
// day archives up to the first one's snapshot. A venue stopped right after
// its end of day writes those states at the stop and starts from that
// snapshot; one that crashed before them starts from the previous end of
// day's, with the segments after it still live. Before, end of day archived
// up to its own snapshot, which the next start passed over for want of the
// states, and the start replayed the whole history from the archive, or
// failed without it.
func TestEndOfDaySnapshotServesTheNextStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := daysInSegmentsConfig(t, dir)
	s, c := gtcDay(t, cfg, 1500)
	eod1 := endOfDay(t, s)
	if eod1.ArchivedSegs != 0 || eod1.ArchivedThrough != -1 {
		t.Fatalf("first end of day %+v: archived before any snapshot a start could use", eod1)
	}
	first := eod1.SnapshotSeq
	iocBurst(t, c, "day2", 1500) // their events write the states beside the first snapshot
	eod2 := endOfDay(t, s)
	if eod2.ArchivedSegs < 1 || eod2.ArchivedThrough != first {
		t.Fatalf("second end of day %+v: want segments archived through the first one's snapshot %d", eod2, first)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "journal", journal.ArchiveDirName)
	if err := os.Rename(archive, archive+".elsewhere"); err != nil {
		t.Fatal(err)
	}
	s = startsFromEndOfDay(t, cfg)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A crash before the console's state was written: the snapshot lacks
	// it; and the feed's state beside it damaged. The start says which.
	if err := os.Remove(filepath.Join(dir, "consolestate", fmt.Sprintf("snapshot-%020d.snap", eod2.SnapshotSeq))); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "mdstate", fmt.Sprintf("snapshot-%020d.snap", eod2.SnapshotSeq))
	if fi, err := os.Stat(damaged); err != nil || os.Truncate(damaged, fi.Size()/2) != nil {
		t.Fatalf("truncate %s: %v", damaged, err)
	}
	var logs lockedbuf.Buffer
	s = startServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if s.replayed < 1500 {
		t.Fatalf("the start replayed %d commands, not the day after the first end of day", s.replayed)
	}
	text := logs.String()
	if !strings.Contains(text, "snapshot passed over: its market data state is damaged") || !strings.Contains(text, damaged) ||
		!strings.Contains(text, "snapshot passed over: no console state beside it") {
		t.Fatalf("the start does not say why it passed the snapshot over:\n%s", text)
	}
	waitInstrument(t, s, "ACME", "the GTC order", func(st ops.InstrumentInfo) bool { return st.RestingOrders == 1 && st.Bid == "98.00" })
}

// TestMissingFIXStoreIsReported: a session whose FIX store is gone (deleted,
// or lost with its volume) starts again at sequence number 1 and cannot
// resend its reports; the start says so, naming the session, instead of
// nothing.
func TestMissingFIXStoreIsReported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, "")
	cfg.Journal.SnapshotInterval.Duration = 0
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "o1", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "o1", 150: "0"})
	s.Close()
	stores, err := filepath.Glob(filepath.Join(dir, "fixstore", "*CLIENT1*"))
	if err != nil || len(stores) != 1 {
		t.Fatalf("CLIENT1's store: %v %v", stores, err)
	}
	if err := os.Remove(stores[0]); err != nil {
		t.Fatal(err)
	}
	var logs lockedbuf.Buffer
	s = startServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	text := logs.String()
	if !strings.Contains(text, "FIX store is missing though the journal holds reports for it") || !strings.Contains(text, "session=CLIENT1") {
		t.Fatalf("no warning for the missing store:\n%s", text)
	}
	if strings.Contains(text, "session=CLIENT2") {
		t.Fatalf("a warning for a session that never traded:\n%s", text)
	}
	// Its client going on from its numbers is told to reset, where
	// QuickFIX/Go took the Logon and answered it at 1 (docs/ARCHITECTURE.md,
	// "Answers lost at a crash"); with a reset it trades.
	again, err := fixclient.Dial(s.FIXAddr(), "CLIENT1", s.cfg.Venue.SenderCompID)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	again.NextOut = c.NextOut
	if m, err := again.Logon(false); m == nil || m.Type() != "5" || m.Get(58) != StoreLostResetText {
		t.Fatalf("a Logon without a reset (34=%d) on the lost store answered with %v (%v), want a Logout %q", c.NextOut, m, err, StoreLostResetText)
	}
	c = logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "o2", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "o2", 150: "0"})
	// A session whose store is there is not asked about.
	c2 := logon(t, s, "CLIENT2", false)
	sendOrder(t, c2, order{id: "p1", side: "1", qty: "1", px: "99.00"})
	expectER(t, c2, map[int]string{11: "p1", 150: "0"})
}

// restartFromSnapshot has s take a snapshot past all it made durable, asks
// c's status requests once it is taken (ask: the states kept beside a
// snapshot are saved at a later command's first event, which they give),
// waits until a start can use it, stops c, others and s, starts the venue
// on cfg again, and fails unless that start loaded the snapshot rather than
// replaying every command. It returns the new venue and CLIENT1 resumed on
// it.
func restartFromSnapshot(t *testing.T, s *Server, cfg *config.Config, c *fixclient.Client, ask func(*fixclient.Client, string),
	others ...*fixclient.Client) (*Server, *fixclient.Client) {
	t.Helper()
	durable := uint64(s.Pipeline().Durable().Load())
	waitSnapshotPast(t, s, durable)
	ask(c, "status")
	seq := waitUsableSnapshotPast(t, s, durable)
	total := s.Pipeline().Durable().Load() + 1
	next := c.NextOut
	c.Close()
	for _, o := range others {
		o.Close()
	}
	s.Close()
	s2 := startServer(t, cfg, Options{})
	if s2.Replayed() >= total {
		t.Fatalf("replayed %d of %d commands: the snapshot after seq %d was not used", s2.Replayed(), total, seq)
	}
	r, _ := resume(t, s2, "CLIENT1", next)
	return s2, r
}

// TestLastEndOfDaySurvivesARestart: /v1/status gives the last end of day's
// report after a restart, as before it: the morning's operator asks
// whether the night's end of day ran, on a venue restarted since. One
// whose file is damaged is logged, and the status gives none.
func TestLastEndOfDaySurvivesARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, adminConfig())
	s := startServer(t, cfg, Options{})
	eod := endOfDay(t, s)
	var before ops.StatusInfo
	adminCall(t, s, "GET", "/v1/status", aliceToken, "", &before)
	if before.LastEndOfDay == nil || *before.LastEndOfDay != eod {
		t.Fatalf("status before the restart: %+v, want the end of day's report %+v", before.LastEndOfDay, eod)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, cfg, Options{})
	var after ops.StatusInfo
	adminCall(t, s, "GET", "/v1/status", aliceToken, "", &after)
	if after.LastEndOfDay == nil || *after.LastEndOfDay != *before.LastEndOfDay {
		t.Fatalf("status after the restart: last end of day %+v, want %+v", after.LastEndOfDay, *before.LastEndOfDay)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ops.LastEndOfDayFile), []byte("{not json"), 0o640); err != nil {
		t.Fatal(err)
	}
	var logs lockedbuf.Buffer
	s = startServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	var damaged ops.StatusInfo
	adminCall(t, s, "GET", "/v1/status", aliceToken, "", &damaged)
	if damaged.LastEndOfDay != nil || !strings.Contains(logs.String(), "the last one's report not read") {
		t.Fatalf("a damaged report file: status %+v; log:\n%s", damaged.LastEndOfDay, logs.String())
	}
}

// TestArchiveFailureIsCounted: an end of day whose archiving of journal
// segments fails says why in its report and counts in
// fixvenue_journal_archive_failures_total, where an alert finds it (the
// segments stay live, the disk fills); the next end of day archives them.
func TestArchiveFailureIsCounted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := daysInSegmentsConfig(t, dir)
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	failures := func() string {
		return metricstest.Value(t, scrape(t, s), "fixvenue_journal_archive_failures_total")
	}
	if got := failures(); got != "0" {
		t.Fatalf("archive failures before any end of day: %s", got)
	}
	iocBurst(t, c, "day1", 1500)
	endOfDay(t, s)
	iocBurst(t, c, "day2", 1500)
	// The archive's directory cannot be made: a file holds its name.
	archive := filepath.Join(dir, "journal", journal.ArchiveDirName)
	if err := os.WriteFile(archive, []byte("in the way"), 0o640); err != nil {
		t.Fatal(err)
	}
	if eod := endOfDay(t, s); eod.ArchiveError == "" || eod.ArchivedSegs != 0 {
		t.Fatalf("end of day with no archive directory possible: %+v, want its archive_error", eod)
	}
	if got := failures(); got != "1" {
		t.Fatalf("fixvenue_journal_archive_failures_total after a failed archive: %s, want 1", got)
	}
	if err := os.Remove(archive); err != nil {
		t.Fatal(err)
	}
	iocBurst(t, c, "day3", 1500)
	if eod := endOfDay(t, s); eod.ArchiveError != "" || eod.ArchivedSegs < 1 {
		t.Fatalf("the next end of day: %+v, want the segments archived", eod)
	}
	if got := failures(); got != "1" {
		t.Fatalf("fixvenue_journal_archive_failures_total after an archive done: %s, want still 1", got)
	}
}

// endOfDay ends the day through the admin API and returns its report.
func endOfDay(t *testing.T, s *Server) ops.EndOfDayReport {
	t.Helper()
	var res ops.ActionResponse
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"day done"}`, &res); code != 200 || res.EndOfDay == nil {
		t.Fatalf("eod: %d %+v", code, res)
	}
	return *res.EndOfDay
}

// daysInSegmentsConfig is the configuration of a venue in dir whose days
// fill several journal segments (64 KiB), with no periodic snapshot (an
// end of day takes its own) and no cancel on disconnect.
func daysInSegmentsConfig(t *testing.T, dir string) *config.Config {
	t.Helper()
	cfg := testConfig(t, dir, adminConfig()+"[session_defaults]\ncancel_on_disconnect = false\n")
	withMarketData(t, cfg)
	cfg.Journal.SegmentBytes = 65536
	cfg.Journal.SnapshotInterval.Duration = 0
	return cfg
}

// TestHaltedVenueStartsFromItsLastSnapshot: a venue halted by a FIX store
// it could not write (its directory removed) right after an end of day
// still writes the feed's and the console's states beside that day's
// snapshot at its stop, and the next start loads it. Before, a halted venue
// wrote none (its pipeline's drain was not waited for), and the start
// passed the snapshot over and replayed the day.
func TestHaltedVenueStartsFromItsLastSnapshot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := daysInSegmentsConfig(t, dir)
	s, c := gtcDay(t, cfg, 300)
	eod := endOfDay(t, s)
	states := []string{
		filepath.Join(dir, "mdstate", journal.SnapshotName(uint64(eod.SnapshotSeq))),
		filepath.Join(dir, "consolestate", journal.SnapshotName(uint64(eod.SnapshotSeq))),
	}
	for _, p := range states {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("%s written before any later event or the stop: the test shows nothing", p)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, "fixstore")); err != nil {
		t.Fatal(err)
	}
	// CLIENT1's store written by the answer to a test request, then synced.
	if err := c.Send("1", fixclient.F(112, "probe")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(readWait, "h", map[int]string{336: "ALL", 340: "1"}); err != nil {
		t.Fatalf("no halt after the FIX store directory was removed: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range states {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the halted venue's stop left the end of day's snapshot without a state: %v", err)
		}
	}
	startsFromEndOfDay(t, cfg)
}

// gtcDay starts a venue on cfg whose CLIENT1 rests a GTC bid (gtc, 5 at
// 98.00) and then sends n IOC orders that trade with nothing.
func gtcDay(t *testing.T, cfg *config.Config, n int) (*Server, *fixclient.Client) {
	t.Helper()
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "gtc", side: "1", qty: "5", px: "98.00", tif: "1"})
	expectER(t, c, map[int]string{11: "gtc", 150: "0"})
	iocBurst(t, c, "day1", n)
	return s, c
}

// startsFromEndOfDay starts the venue of gtcDay again and fails unless it
// loaded the end of day's snapshot (it replays the stop's own commands at
// most) and rests the GTC bid.
func startsFromEndOfDay(t *testing.T, cfg *config.Config) *Server {
	t.Helper()
	s := startServer(t, cfg, Options{})
	if s.replayed > 2 {
		t.Fatalf("the start replayed %d commands: the end of day's snapshot was passed over", s.replayed)
	}
	waitInstrument(t, s, "ACME", "the GTC order", func(st ops.InstrumentInfo) bool { return st.RestingOrders == 1 && st.Bid == "98.00" })
	return s
}
