package server

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// compressedDay is a trading day of twelve seconds: pre-open (the opening
// call) at 1 s, open from 2 s to 8 s, close at 8 s, end of day at 9 s,
// closed until the next day's pre-open.
const compressedDay = `
[schedule]
enabled = true
time_zone = "Europe/Paris"
day = "12s"
end_of_day = "9s"
[[schedule.group]]
name = "all"
pre_open = "1s"
open = "2s"
close = "8s"
`
const compressedDayLength = 12 * time.Second

// tradingDayConfig is a venue with the compressed day, a ClOrdID table
// smaller than the orders of two days, small journal segments (so that end
// of day has sealed segments to archive), snapshots only at end of day, and
// sessions whose DAY orders survive a disconnect (so that an offline
// session's order expires at end of day).
func tradingDayConfig(t *testing.T, dir string) string {
	return adminConfig() + compressedDay + `
[session_defaults]
cancel_on_disconnect = false
`
}

func tradingDayVenue(t *testing.T, dir string) *Server {
	t.Helper()
	return tradingDayVenueAt(t, dir, nil)
}

// tradingDayVenueAt is tradingDayVenue with the trading day's clock now
// (nil: the wall clock).
func tradingDayVenueAt(t *testing.T, dir string, now func() time.Time) *Server {
	t.Helper()
	cfg := tradingDayVenueConfig(t, dir)
	cfg.Journal.SegmentBytes = 16384 // below the configuration's floor: day 1 fills some before its end of day
	return startServer(t, cfg, Options{Now: now})
}

// tradingDayVenueConfig is the compressed day's venue: a small order pool
// and ClOrdID table, snapshots only at end of day.
func tradingDayVenueConfig(t *testing.T, dir string) *config.Config {
	t.Helper()
	cfg := testConfig(t, dir, tradingDayConfig(t, dir))
	cfg.Engine.OrdersMax, cfg.Engine.ClOrdIDsMax = 256, 320
	cfg.Journal.SnapshotInterval.Duration = 0
	return cfg
}

// stoppedClock is a trading-day clock that reads t for ever: a venue
// started with it stays in t's phase however long its start and the
// checks after it take on a loaded machine.
func stoppedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

// openDay starts the compressed day's venue on a new data directory at a
// stopped clock in today's open phase (5 s into the day), has CLIENT1 rest
// a DAY order for each of ids (restDayOrder), and stops the venue: the
// opening of the tests that start it again on dir later in the day
// (dayStart is the day's start).
func openDay(t *testing.T, ids ...string) (dir string, dayStart time.Time) {
	t.Helper()
	dir = t.TempDir()
	dayStart = time.Now().Truncate(compressedDayLength)
	s := tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(5*time.Second)))
	for _, id := range ids {
		restDayOrder(t, s, id)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, dayStart
}

// restDayOrder logs CLIENT1 on (with a sequence reset), has its DAY buy of
// 5 ACME at 99.00 accepted as id, and logs it off.
func restDayOrder(t *testing.T, s *Server, id string) {
	t.Helper()
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: id, side: "1", qty: "5", px: "99.00"})
	expectER(t, c, map[int]string{11: id, 150: "0"})
	c.Close()
}

// reopenWithDayOrder has the operator reopen trading after the end of day
// and CLIENT1 rest a DAY order of the new day, "next".
func reopenWithDayOrder(t *testing.T, s *Server) {
	t.Helper()
	if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, `{"reason":"extended","group":"all","phase":"open"}`, nil); code != 200 {
		t.Fatalf("reopen: %d", code)
	}
	waitStatus(t, s, "ACME", "Open", readWait)
	restDayOrder(t, s, "next")
}

// scheduleRecord reads dir's schedule record, for a test that writes it
// back to have the files as they were then; path is the file's.
func scheduleRecord(t *testing.T, dir string) (path string, record []byte) {
	t.Helper()
	path = filepath.Join(dir, ops.ScheduleStateFile)
	record, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, record
}

// waitOpening waits for the start of an open phase (a status other than
// Open, then Open), so that the whole phase lies ahead.
func waitOpening(t *testing.T, s *Server) {
	t.Helper()
	waitReady(t, s)
	waitStatus(t, s, "ACME", "OpeningCall", compressedDayLength+2*time.Second) // pre-open: the opening call
	// Due a second after the call began; the Open seen is this day's
	// however late a loaded machine journals it (a bound of 2 s left it one
	// second of slack for the timer, the journal and the admin API).
	waitStatus(t, s, "ACME", "Open", readWait)
}

func waitReady(t *testing.T, s *Server) {
	t.Helper()
	// A start's catch-up may run 64 transitions, their commands each
	// journaled and synced: under the race detector on a loaded machine,
	// many seconds.
	deadline := time.Now().Add(time.Minute)
	for adminCall(t, s, "GET", "/readyz", "", "", nil) != 200 {
		if time.Now().After(deadline) {
			t.Fatal("venue not ready in a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitStatus polls the admin API until instrument sym has status.
func waitStatus(t *testing.T, s *Server, sym, status string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if instrumentsOf(t, s)[sym].Status == status {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not %s within %s: %+v", sym, status, within, instrumentsOf(t, s)[sym])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEndOfDay polls until an end of day later than after has completed.
func waitEndOfDay(t *testing.T, s *Server, after int64, within time.Duration) *ops.EndOfDayReport {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var st ops.StatusInfo
		adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st)
		if e := st.LastEndOfDay; e != nil && e.CompletedUnixNs > after {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("no end of day within %s", within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// iocBurst sends n IOC sells that cannot trade (no bid that high) and
// checks that each is accepted, then cancelled: none is refused.
func iocBurst(t *testing.T, c *fixclient.Client, prefix string, n int) {
	t.Helper()
	// In windows of iocWindow orders: a burst of thousands at once can
	// meet the command ring's back-pressure on a busy machine (an order
	// refused "system busy" after engine.claim_timeout), which is the
	// venue's answer to a client that does not wait, not what these tests
	// are about.
	for from := 0; from < n; from += iocWindow {
		to := min(from+iocWindow, n)
		for i := from; i < to; i++ {
			sendOrder(t, c, order{id: fmt.Sprintf("%s-%d", prefix, i), side: "2", qty: "1", px: "105.00", tif: "3"})
		}
		for i := from; i < to; i++ {
			id := fmt.Sprintf("%s-%d", prefix, i)
			expectER(t, c, map[int]string{11: id, 150: "0"})
			expectER(t, c, map[int]string{11: id, 150: "4"})
		}
	}
}

// iocWindow is how many orders iocBurst sends before it reads their answers.
const iocWindow = 100

// TestTradingDayCompressed runs two compressed days with orders flowing:
// DAY orders expire at end of day with 150=C (an offline session hears of it
// through resend at its next logon), GTC orders survive, more orders than
// engine.clordids_max are entered across the two days and none is refused,
// the archive holds the sealed segments, and journal verify over archive +
// live gives the running venue's events hash.
func TestTradingDayCompressed(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs two 12-second trading days")
	}
	dir := t.TempDir()
	s := tradingDayVenue(t, dir)
	cfg := s.cfg
	waitOpening(t, s)

	// Day 1.
	c1 := logon(t, s, "CLIENT1", true)
	c2 := logon(t, s, "CLIENT2", true)
	sendOrder(t, c2, order{id: "c2-day", side: "1", qty: "5", px: "99.00"})
	expectER(t, c2, map[int]string{11: "c2-day", 150: "0"})
	c2Next := c2.NextOut
	c2.Close() // offline from now on; its DAY order stays (cancel_on_disconnect = false)
	sendOrder(t, c1, order{id: "gtc", side: "1", qty: "5", px: "98.00", tif: "1"})
	sendOrder(t, c1, order{id: "c1-day", side: "2", qty: "5", px: "101.00"})
	sendOrder(t, c1, order{id: "hit", side: "2", qty: "2", px: "99.00"})
	expectER(t, c1, map[int]string{11: "gtc", 150: "0"})
	expectER(t, c1, map[int]string{11: "c1-day", 150: "0"})
	expectER(t, c1, map[int]string{11: "hit", 150: "F", 39: "2"})
	iocBurst(t, c1, "d1", 250)
	started := time.Now().UnixNano()
	eod1 := waitEndOfDay(t, s, started, compressedDayLength)
	expectER(t, c1, map[int]string{11: "c1-day", 150: "C", 39: "C"})
	if eod1.Expired != 2 || eod1.SnapshotSeq < 0 {
		t.Fatalf("day 1 end of day %+v", eod1)
	}

	// Day 2: more orders than the ClOrdID table holds in all, none refused.
	waitOpening(t, s)
	acme := instrumentsOf(t, s)["ACME"]
	if acme.Bid != "98.00" || acme.BidQty != 5 || acme.RestingOrders != 1 || acme.Ask != "" {
		t.Fatalf("day 2 opens with %+v; want only the GTC bid", acme)
	}
	iocBurst(t, c1, "d2", 310)
	if entered := 3 + 1 + 250 + 310; entered <= cfg.Engine.ClOrdIDsMax {
		t.Fatalf("only %d orders entered; the test needs more than clordids_max %d", entered, cfg.Engine.ClOrdIDsMax)
	}
	eod2 := waitEndOfDay(t, s, eod1.CompletedUnixNs, compressedDayLength)
	if eod2.Expired != 0 || eod2.ArchivedSegs < 1 || eod2.ArchiveError != "" {
		t.Fatalf("day 2 end of day %+v; want the first segments archived", eod2)
	}
	archived, _ := filepath.Glob(filepath.Join(dir, "journal", journal.ArchiveDirName, "journal-*.seg.gz"))
	live, _ := filepath.Glob(filepath.Join(dir, "journal", "journal-*.seg"))
	if len(archived) != eod2.ArchivedSegs || len(live) == 0 || strings.HasSuffix(live[0], "journal-00000000000000000000.seg") {
		t.Fatalf("archive %v, live %v", archived, live)
	}

	// The offline session logs on: the fill and the expiry come by resend.
	r, _ := resume(t, s, "CLIENT2", c2Next)
	if err := r.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	expectER(t, r, map[int]string{11: "c2-day", 150: "F", 39: "1", 43: "Y"})
	expectER(t, r, map[int]string{11: "c2-day", 150: "C", 39: "C", 14: "2", 43: "Y"})
	r.Close()
	c1.Close()
	time.Sleep(100 * time.Millisecond)

	var st ops.StatusInfo
	adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// journal verify over archive + live replays what the venue ran; the
	// schedule may have moved on after the status was read, so the first
	// events_since_start events are compared.
	v, err := journal.Verify(filepath.Join(dir, "journal"), MatcherConfig(cfg), nil)
	if err != nil || v.Events < st.EventsSinceStart {
		t.Fatalf("verify %v (%v) covers fewer events than the venue's %d", v, err, st.EventsSinceStart)
	}
	m, err := core.NewMatcher(MatcherConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	sink := &prefixHashSink{digest: xxhash.New(), left: st.EventsSinceStart}
	if _, err := journal.Replay(filepath.Join(dir, "journal"), m, sink, journal.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%016x", sink.digest.Sum64()); got != st.EventsHash {
		t.Fatalf("replay of archive + live hashes the first %d events to %s, the running venue to %s", st.EventsSinceStart, got, st.EventsHash)
	}
}

// prefixHashSink hashes the first left events as journal.HashSink does.
type prefixHashSink struct {
	slot   [core.EventSlotMin]byte
	digest *xxhash.Digest
	left   int64
}

func (h *prefixHashSink) Claim() []byte { return h.slot[:] }

func (h *prefixHashSink) Commit() {
	if h.left > 0 {
		n := venue.MessageHeaderSize + int(binary.LittleEndian.Uint16(h.slot[:]))
		_, _ = h.digest.Write(h.slot[:n])
		h.left--
	}
}

// TestTradingDayRestart stops the venue mid-day and again before an end of
// day it then misses: after each restart the state is what the day without
// a restart gives (the first test): mid-day the book and status are back;
// after the missed end of day, the close and the end of day run once at
// start, in order, the DAY order has expired and the GTC order rests.
// The first venue runs on the wall clock; each restarted one on a stopped
// clock at the moment the test restarts it in (mid-day, then after the end
// of day), so a slow start cannot carry it into the next phase.
func TestTradingDayRestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a 12-second trading day")
	}
	dir := t.TempDir()
	s := tradingDayVenue(t, dir)
	waitOpening(t, s)
	dayStart := time.Now().Truncate(compressedDayLength) // compressed days start at multiples of their length
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "day", side: "1", qty: "5", px: "99.00"})
	sendOrder(t, c, order{id: "gtc", side: "1", qty: "5", px: "98.00", tif: "1"})
	expectER(t, c, map[int]string{11: "day", 150: "0"})
	expectER(t, c, map[int]string{11: "gtc", 150: "0"})
	next := c.NextOut
	c.Close()
	// The admin API's view follows the events a little after the reports.
	waitUntil(t, "both orders in the admin API", func() bool { return instrumentsOf(t, s)["ACME"].RestingOrders == 2 })
	before := instrumentsOf(t, s)["ACME"]
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Restart mid-day: nothing was missed; book and status are back. (The
	// first venue's close at 8 s bounds how late this can be: its status
	// before the restart is checked to be Open.)
	midDay := time.Now()
	if latest := dayStart.Add(7500 * time.Millisecond); midDay.After(latest) {
		midDay = latest
	}
	s2 := tradingDayVenueAt(t, dir, stoppedClock(midDay))
	waitReady(t, s2)
	if got := instrumentsOf(t, s2)["ACME"]; got.Status != "Open" || got != before || got.BidQty != 5 || got.RestingOrders != 2 {
		t.Fatalf("after a mid-day restart ACME is %+v; before it was %+v", got, before)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}

	// Down across the close and the end of day.
	afterEndOfDay := dayStart.Add(9500 * time.Millisecond)
	time.Sleep(time.Until(afterEndOfDay))
	s3 := tradingDayVenueAt(t, dir, stoppedClock(afterEndOfDay))
	// The venue serves once the missed transitions have run: at once the
	// end of day is done, and an order finds ACME closed (one taken before
	// traded in the day long over, then expired with it).
	var st ops.StatusInfo
	adminCall(t, s3, "GET", "/v1/status", aliceToken, "", &st)
	if e := st.LastEndOfDay; e == nil || e.Expired != 1 || e.SnapshotSeq < 0 {
		t.Fatalf("the missed end of day had not run when the venue served: %+v", st)
	}
	late := logon(t, s3, "CLIENT2", true)
	sendOrder(t, late, order{id: "late", side: "1", qty: "5", px: "99.00"})
	expectER(t, late, map[int]string{11: "late", 150: "8"})
	acme := instrumentsOf(t, s3)["ACME"]
	if acme.Status != "Closed" || acme.Bid != "98.00" || acme.BidQty != 5 || acme.RestingOrders != 1 {
		t.Fatalf("after the missed end of day ACME is %+v; want closed with the GTC bid only", acme)
	}
	caughtUp := scrape(t, s3)
	for _, kind := range []string{"close", "end_of_day"} {
		if v := metricstest.Value(t, caughtUp, `fixvenue_schedule_transitions_total{caught_up="true",kind="`+kind+`"}`); v != "1" {
			t.Errorf("%s caught up %s times, want once", kind, v)
		}
	}
	// The session hears of the expiry when it comes back.
	r, _ := resume(t, s3, "CLIENT1", next)
	if err := r.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	expectER(t, r, map[int]string{11: "day", 150: "C", 39: "C"})
}

// TestRestartAfterATransitionMissesNone: a venue stopped after the
// schedule ran a transition, and started again before the next, has missed
// none (README, "The trading day": the log says how many it runs). It said
// it ran one, the transition recorded last, and warned that it passed it
// over: at every restart during a trading day, a warning and a count of
// transitions missed while the venue was down that were not.
func TestRestartAfterATransitionMissesNone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dayStart := time.Now().Truncate(time.Hour)
	var clock atomic.Int64
	clock.Store(dayStart.Add(500 * time.Millisecond).UnixNano()) // before the pre-open
	cfg := testConfig(t, dir, adminConfig()+"\n[schedule]\nenabled = true\ntime_zone = \"UTC\"\nday = \"1h\"\nend_of_day = \"55m\"\n"+
		"[[schedule.group]]\nname = \"all\"\npre_open = \"1s\"\nopen = \"50m\"\nclose = \"51m\"\n")
	s := startServer(t, cfg, Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	waitStatus(t, s, "ACME", "Closed", readWait)
	clock.Store(dayStart.Add(1100 * time.Millisecond).UnixNano()) // the pre-open is due, on time
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
	waitUntil(t, "the pre-open recorded", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, ops.ScheduleStateFile))
		return err == nil && strings.Contains(string(b), "pre_open")
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	logs := &lockedbuf.Buffer{}
	s = startServer(t, cfg, Options{Now: stoppedClock(dayStart.Add(1500 * time.Millisecond)),
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	waitReady(t, s)
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
	for _, said := range []string{"running the transitions missed", "passed over", "caught up"} {
		if strings.Contains(logs.String(), said) {
			t.Errorf("a restart that missed no transition logged %q:\n%s", said, logs.String())
		}
	}
}

// TestCatchUpRunsATransitionAtItsTime: a transition the venue missed runs
// as at its time (README, "The trading day"): a GTD order resting in the
// opening call that expired after the opening, while the venue was down,
// trades in the opening uncross the catch-up runs, as it would have with
// the venue up. The catch-up's commands carried the time of the restart,
// and the first expired the order before the uncross.
func TestCatchUpRunsATransitionAtItsTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The next compressed day, so that its times are ahead of the wall
	// clock the gateway checks an ExpireTime against.
	dayStart := time.Now().Truncate(compressedDayLength).Add(compressedDayLength)
	s := tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(1500*time.Millisecond))) // in the opening call
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
	buyer := logon(t, s, "CLIENT1", true)
	expire := dayStart.Add(2500 * time.Millisecond).UTC().Format("20060102-15:04:05.000") // after the open at 2 s
	sendOrder(t, buyer, order{id: "gtd", side: "1", qty: "5", px: "100.00", tif: "6", extra: []fixclient.Field{fixclient.F(126, expire)}})
	expectER(t, buyer, map[int]string{11: "gtd", 150: "0"})
	next := buyer.NextOut
	buyer.Close()
	seller := logon(t, s, "CLIENT2", true)
	sendOrder(t, seller, order{id: "sell", side: "2", qty: "5", px: "100.00"})
	expectER(t, seller, map[int]string{11: "sell", 150: "0"})
	seller.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Back after the order's expiry: the opening at 2 s is caught up.
	s = tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(3*time.Second)))
	waitReady(t, s)
	waitUntil(t, "the opening uncross traded the GTD order", func() bool {
		a := instrumentsOf(t, s)["ACME"]
		return a.Status == "Open" && a.Volume == 5 && a.RestingOrders == 0
	})
	r, _ := resume(t, s, "CLIENT1", next)
	if err := r.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	expectER(t, r, map[int]string{11: "gtd", 150: "F", 39: "2"})
}

// TestRestartAfterALongStop: a venue down for more days than the schedule
// scans (here 500 compressed days, past its 400) catches up to the
// transitions just before now before it serves, as it does after a short
// stop; none is left to run once FIX is open (README "Operating the
// venue": the last 64 at most, then FIX logons).
func TestRestartAfterALongStop(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir, dayStart := openDay(t) // the open's progress recorded

	later := dayStart.Add(500*compressedDayLength + 5*time.Second) // the open of the 500th day after
	s := tradingDayVenueAt(t, dir, stoppedClock(later))
	waitReady(t, s)
	b, err := os.ReadFile(filepath.Join(dir, ops.ScheduleStateFile))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("day-%d open", later.UnixNano()/int64(compressedDayLength))
	if !strings.Contains(string(b), want) {
		t.Fatalf("ready with the schedule at %s; want it at %q", b, want)
	}
	time.Sleep(500 * time.Millisecond) // a transition left behind would run now
	if v := metricstest.Value(t, scrape(t, s), `fixvenue_schedule_transitions_total{caught_up="false",kind="end_of_day"}`); v != "" && v != "0" {
		t.Fatalf("%s end of days ran after the catch-up", v)
	}
}

// TestScheduleFollowsItsClock: a transition runs when the day's clock reads
// its time, not when a timer set by an earlier reading ends. A venue whose
// clock stands 100 ms before the close stays open well past those 100 ms;
// once the clock passes the close, the close runs.
func TestScheduleFollowsItsClock(t *testing.T) {
	t.Parallel()
	dayStart := time.Now().Truncate(compressedDayLength)
	var mu sync.Mutex
	now := dayStart.Add(7900 * time.Millisecond) // the close is at 8 s
	s := tradingDayVenueAt(t, t.TempDir(), func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	waitReady(t, s)
	if got := instrumentsOf(t, s)["ACME"].Status; got != "Open" {
		t.Fatalf("at 7.9 s ACME is %s, want Open", got)
	}
	time.Sleep(time.Second) // ten times the timer the first reading sets
	if got := instrumentsOf(t, s)["ACME"].Status; got != "Open" {
		t.Fatalf("with the clock at 7.9 s ACME is %s after a second, want Open", got)
	}
	mu.Lock()
	now = dayStart.Add(8050 * time.Millisecond)
	mu.Unlock()
	waitStatus(t, s, "ACME", "Closed", readWait)
}

// TestScheduleRunsTransitionsAtOneInstant: two groups with the same times
// and a close at the end of day. The running schedule moves both groups at
// every transition and runs the end of day after the close at the same
// instant; it used to run only the first of the transitions due at one
// time (the others, due "no later" than the last it ran, were passed over).
func TestScheduleRunsTransitionsAtOneInstant(t *testing.T) {
	t.Parallel()
	dayStart := time.Now().Truncate(compressedDayLength)
	var mu sync.Mutex
	now := dayStart.Add(500 * time.Millisecond)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	set := func(d time.Duration) { mu.Lock(); now = dayStart.Add(d); mu.Unlock() }
	cfg := testConfig(t, t.TempDir(), adminConfig()+`
[schedule]
enabled = true
time_zone = "Europe/Paris"
day = "12s"
end_of_day = "1400ms"
[[schedule.group]]
name = "acme"
instruments = ["ACME"]
pre_open = "1s"
open = "1200ms"
close = "1400ms"
[[schedule.group]]
name = "rest"
pre_open = "1s"
open = "1200ms"
close = "1400ms"
`)
	s := startServer(t, cfg, Options{Now: clock})
	waitReady(t, s)
	set(1050 * time.Millisecond)
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
	waitStatus(t, s, "LOTS", "OpeningCall", readWait)
	set(1250 * time.Millisecond) // the schedule's timers wait at most 0.5 s of real time
	waitStatus(t, s, "ACME", "Open", readWait)
	waitStatus(t, s, "LOTS", "Open", readWait)
	set(1450 * time.Millisecond)
	waitStatus(t, s, "ACME", "Closed", readWait)
	waitStatus(t, s, "LOTS", "Closed", readWait)
	waitEndOfDay(t, s, 0, readWait)
}

// TestEndOfDayNotDoneRunsAgain: an end of day whose command cannot be
// journaled (the venue halted when the journal's disk failed) is not
// recorded as done: the next start runs it, and the DAY order expires. (It
// was recorded as done, and the DAY order lived into the next day.)
func TestEndOfDayNotDoneRunsAgain(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits for an end of day's attempts")
	}
	dir := t.TempDir()
	dayStart := time.Now().Truncate(compressedDayLength)
	var clock atomic.Int64
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	venueAt := func(at time.Duration, opts Options) *Server {
		clock.Store(dayStart.Add(at).UnixNano())
		cfg := tradingDayVenueConfig(t, dir)
		opts.Now = now
		return startServer(t, cfg, opts)
	}
	s := venueAt(5*time.Second, Options{}) // open
	restDayOrder(t, s, "day")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// After the close, before the end of day; the disk fails, then the
	// clock passes the end of day.
	var fail atomic.Bool
	var logs lockedbuf.Buffer
	s = venueAt(8500*time.Millisecond, Options{JournalSync: failingSync(&fail),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	fail.Store(true)
	c := logon(t, s, "CLIENT2", true)
	sendOrder(t, c, order{id: "halts", side: "1", qty: "1", px: "99.00", tif: "1"})
	waitUntil(t, "the venue halted", func() bool { return s.pipe.Err() != nil })
	clock.Store(dayStart.Add(9500 * time.Millisecond).UnixNano())
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		text := logs.String()
		if strings.Contains(text, "schedule: end of day failed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed end of day within 30s:\n%s", text)
		}
	}
	time.Sleep(100 * time.Millisecond) // a schedule that went on would record it now
	s.Close()

	s = venueAt(9500*time.Millisecond, Options{})
	var st ops.StatusInfo
	adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st)
	if e := st.LastEndOfDay; e == nil || e.Expired != 1 {
		t.Fatalf("the end of day that failed did not run at the next start: %+v", st)
	}
}

// TestEndOfDayJournaledBeforeACrashRunsOnce: a venue that stopped between
// journaling the schedule's end of day and recording it (the files as a
// kill -9 in that window leaves them) does not run it again at the next
// start: it would end the next day's orders too. (Here the operator had
// reopened trading after the end of day, and a DAY order rests.)
func TestEndOfDayJournaledBeforeACrashRunsOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir, dayStart := openDay(t, "d1")
	statePath, beforeClose := scheduleRecord(t, dir)

	// The close and the end of day run at the start; the operator then
	// reopens, and a DAY order of the new day rests.
	s := tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(9500*time.Millisecond)))
	reopenWithDayOrder(t, s)
	s.Close()

	// The files as a crash after the end of day's command, before its
	// record, leaves them.
	var eodSeq uint64
	var reason string
	for rec, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if cmd, ok := venue.DecodeOperatorCommand(rec.Payload); ok && cmd.Action() == venue.OperatorActionTypeEndOfDay {
			eodSeq, reason = rec.Seq, string(cmd.Reason())
		}
	}
	if reason == "" {
		t.Fatal("no end of day in the journal")
	}
	if err := os.WriteFile(statePath, beforeClose, 0o644); err != nil {
		t.Fatal(err)
	}
	pending := fmt.Sprintf(`{"reason":%q,"from_seq":%d}`, reason, eodSeq)
	if err := os.WriteFile(filepath.Join(dir, ops.EndOfDayPendingFile), []byte(pending), 0o644); err != nil {
		t.Fatal(err)
	}

	s = tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(9500*time.Millisecond)))
	if acme := instrumentsOf(t, s)["ACME"]; acme.RestingOrders != 1 || acme.BidQty != 5 {
		t.Fatalf("the end of day ran again at the start: ACME %+v", acme)
	}
	if _, err := os.Stat(filepath.Join(dir, ops.EndOfDayPendingFile)); !os.IsNotExist(err) {
		t.Fatalf("the pending mark outlived the catch-up: %v", err)
	}
}

// endOfDaysJournaled counts the EndOfDay commands in dir's journal. A
// record that does not read fails the test, or with toTail ends the count:
// the tail a running venue is writing.
func endOfDaysJournaled(t *testing.T, dir string, toTail bool) int {
	t.Helper()
	n := 0
	for rec, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
		if err != nil && toTail {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if cmd, ok := venue.DecodeOperatorCommand(rec.Payload); ok && cmd.Action() == venue.OperatorActionTypeEndOfDay {
			n++
		}
	}
	return n
}

// wantOneEndOfDay fails the test unless dir's journal holds one EndOfDay
// command: the day was ended, and only once.
func wantOneEndOfDay(t *testing.T, dir string) {
	t.Helper()
	if n := endOfDaysJournaled(t, dir, false); n != 1 {
		t.Fatalf("%d end of day commands in the journal, want 1", n)
	}
}

// blockWrite makes the durable writes of file in dir fail, as a full disk
// does, by putting a directory where its temporary file goes; the returned
// function lifts it.
func blockWrite(t *testing.T, dir, file string) func() {
	t.Helper()
	tmp := filepath.Join(dir, file+".tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.Remove(tmp); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEndOfDayNotJournaledWithoutItsPendingMark: a full data disk refuses
// the end of day's pending mark and the schedule's record (the journal's
// preallocated segment still takes commands). The end of day is not
// journaled until its mark is on disk: journaled without it and never
// recorded, the next start ran it a second time.
func TestEndOfDayNotJournaledWithoutItsPendingMark(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir, dayStart := openDay(t, "d1")

	unblockMark := blockWrite(t, dir, ops.EndOfDayPendingFile)
	unblockState := blockWrite(t, dir, ops.ScheduleStateFile)
	var logs lockedbuf.Buffer
	cfg := tradingDayVenueConfig(t, dir)
	cfg.Journal.SegmentBytes = 16384
	catching, err := New(cfg, Options{Now: stoppedClock(dayStart.Add(9500 * time.Millisecond)),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan error, 1)
	go func() { started <- catching.Start() }() // the catch-up waits for the end of day
	t.Cleanup(func() {
		catching.Close()
		<-started
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		text := logs.String()
		if strings.Contains(text, "schedule: end of day failed") || strings.Contains(text, "schedule: caught up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no end of day within 30s:\n%s", text)
		}
	}
	if n := endOfDaysJournaled(t, dir, false); n != 0 {
		t.Fatalf("the end of day was journaled without its pending mark (%d)", n)
	}
	catching.Close()

	unblockMark()
	unblockState()
	tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(9500*time.Millisecond))).Close()
	wantOneEndOfDay(t, dir)
}

// TestEndOfDayNotRecordedKeepsItsMark: an end of day journaled whose
// transition the schedule could not record (a full disk refused
// schedule.state) keeps its pending mark, so the next start finds it in the
// journal and does not end the day again: the mark was removed anyway, and
// the DAY order of a trading session reopened after it expired.
func TestEndOfDayNotRecordedKeepsItsMark(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir, dayStart := openDay(t)

	unblock := blockWrite(t, dir, ops.ScheduleStateFile)
	s := tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(9500*time.Millisecond)))
	reopenWithDayOrder(t, s)
	s.Close()
	unblock()

	wantDayOrderRestsAfterRestart(t, dir, dayStart)
	wantOneEndOfDay(t, dir)
}

// periodicSnapshotsInTheOpen is the configuration and options of a
// trading day venue on dir in the open (inTheOpen) whose periodic
// snapshot comes as often as it may (config.SnapshotIntervalMin), logging
// at info to logs.
func periodicSnapshotsInTheOpen(t *testing.T, dir string) (cfg *config.Config, dayStart time.Time, opts Options, logs *lockedbuf.Buffer) {
	t.Helper()
	dayStart, _, now := inTheOpen(t, dir)
	cfg = tradingDayVenueConfig(t, dir)
	cfg.Journal.SnapshotInterval.Duration = config.SnapshotIntervalMin
	logs = new(lockedbuf.Buffer)
	return cfg, dayStart, Options{Now: now, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}, logs
}

// snapshotAfter is the seq of a snapshot of dir's journal after seq (0:
// none).
func snapshotAfter(t *testing.T, dir string, seq uint64) uint64 {
	t.Helper()
	snaps, err := journal.ListSnapshots(filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range snaps {
		if f.Seq > seq {
			return f.Seq
		}
	}
	return 0
}

// wantNoSnapshotAfter fails the test when dir's journal has a snapshot
// after seq, an end of day whose day schedule.state does not hold.
func wantNoSnapshotAfter(t *testing.T, dir string, seq uint64) {
	t.Helper()
	if after := snapshotAfter(t, dir, seq); after != 0 {
		t.Errorf("snapshot %d after the end of day (seq %d) whose day schedule.state does not hold", after, seq)
	}
}

// TestEndOfDayNotRecordedTakesNoSnapshot: an operator ends the day in the
// open (POST /v1/eod) while a full disk refuses schedule.state. The day has
// ended (200), but no snapshot follows, at the end of day nor periodically
// while CLIENT1 rests a DAY order after it, so that a restart past the
// day's end of day time, the disk freed, replays the end of day from the
// journal and knows the day ended: the schedule runs no second end of day,
// the order rests on, and the record names the day as ended. The end of
// day's snapshot was taken all the same: the restart loaded it, replayed
// no end of day, took the day as still open from the record and ended it
// again, expiring the order.
func TestEndOfDayNotRecordedTakesNoSnapshot(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir := t.TempDir()
	cfg, dayStart, opts, logs := periodicSnapshotsInTheOpen(t, dir)
	s := startServer(t, cfg, opts)
	unblock := blockWrite(t, dir, ops.ScheduleStateFile)
	var ended ops.ActionResponse
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"closing early"}`, &ended); code != 200 || ended.EndOfDay == nil {
		t.Fatalf("end of day with schedule.state unwritable: %d %+v, want 200 (the day ended)", code, ended)
	}
	if rep := ended.EndOfDay; rep.SnapshotSeq != -1 || !strings.Contains(rep.SnapshotError, ops.ScheduleStateFile) {
		t.Errorf("the end of day's report %+v: want no snapshot, saying the day's end is not in %s", *rep, ops.ScheduleStateFile)
	}
	restDayOrder(t, s, "after") // commands after the end of day: a periodic snapshot is due
	waitUntil(t, "the periodic snapshot held back, or taken", func() bool {
		return strings.Contains(logs.String(), "periodic snapshot held back") || snapshotAfter(t, dir, ended.Seq) != 0
	})
	wantNoSnapshotAfter(t, dir, ended.Seq)
	s.Close()
	unblock()
	wantDayOrderRestsAfterRestart(t, dir, dayStart)
	_, record := scheduleRecord(t, dir)
	var rec struct {
		EndedDay string `json:"ended_day"`
	}
	if err := json.Unmarshal(record, &rec); err != nil || rec.EndedDay == "" {
		t.Errorf("the record after the restart: %s (%v), want the day named as ended", record, err)
	}
	wantOneEndOfDay(t, dir)
}

// TestEndOfDayPendingMarkUnreadable: a pending mark that cannot be parsed
// (a damaged file) still keeps a journaled end of day from running again:
// the journal is searched from its start.
func TestEndOfDayPendingMarkUnreadable(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir, dayStart := openDay(t)
	statePath, beforeClose := scheduleRecord(t, dir)
	s := tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(9500*time.Millisecond)))
	s.Close()
	if err := os.WriteFile(statePath, beforeClose, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ops.EndOfDayPendingFile), []byte(`{"reason":"20`), 0o644); err != nil {
		t.Fatal(err)
	}
	s = tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(9500*time.Millisecond)))
	s.Close()
	wantOneEndOfDay(t, dir)
}

// TestScheduleRecordUnreadableRefusesStart: a start whose schedule.state
// cannot be read does not know which transitions it missed, and is
// refused, naming the file. (It brought every group to its phase now, and
// the end of day it missed never ran: the DAY order lived into the next
// day.)
func TestScheduleRecordUnreadableRefusesStart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir, dayStart := openDay(t, "d1")
	statePath := filepath.Join(dir, ops.ScheduleStateFile)
	if err := os.WriteFile(statePath, []byte(`{"last_unix_ns":17`), 0o644); err != nil {
		t.Fatal(err)
	}

	cfg := tradingDayVenueConfig(t, dir)
	cfg.Journal.SegmentBytes = 16384
	s, err := New(cfg, Options{Now: stoppedClock(dayStart.Add(9500 * time.Millisecond)), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	err = s.Start()
	if err == nil || !strings.Contains(err.Error(), statePath) || !strings.Contains(err.Error(), "end of day") {
		t.Fatalf("start with an unreadable %s: %v, want a refusal naming it", ops.ScheduleStateFile, err)
	}
	s.Close()

	if err := os.Remove(statePath); err != nil { // the operator moves it aside
		t.Fatal(err)
	}
	s = tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(9500*time.Millisecond)))
	if acme := instrumentsOf(t, s)["ACME"]; acme.Status != "Closed" {
		t.Fatalf("ACME %s after a start without the record, want Closed", acme.Status)
	}
}

// TestEndOfDayThatTimesOutRunsOnce: on a journal slower than the admin
// call timeout, the schedule's end of day times out; its retries wait for
// the command published rather than send another (each one more ended the
// day again, expiring the orders of the next). The transition is recorded
// once its retries are over: the journal holds one end of day then.
func TestEndOfDayThatTimesOutRunsOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits for a slow journal")
	}
	dir := t.TempDir()
	dayStart := time.Now().Truncate(compressedDayLength)
	var clock atomic.Int64
	clock.Store(dayStart.Add(8500 * time.Millisecond).UnixNano()) // after the close, before the end of day
	var slow atomic.Bool
	sync := func(f *os.File, kind journal.SyncKind) error {
		if kind == journal.SyncData && slow.Load() {
			time.Sleep(400 * time.Millisecond)
		}
		return journal.DefaultSync(f, kind)
	}
	cfg := tradingDayVenueConfig(t, dir)
	cfg.Admin.CallTimeout.Duration = 150 * time.Millisecond
	s := startServer(t, cfg, Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }, JournalSync: sync})
	slow.Store(true)
	clock.Store(dayStart.Add(9500 * time.Millisecond).UnixNano())
	waitUntil(t, "the end of day", func() bool {
		var st ops.StatusInfo
		adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st)
		return st.LastEndOfDay != nil || st.DurableSeq > 0 && endOfDaysJournaled(t, dir, true) > 0
	})
	// The retries send before the transition is recorded: another end of
	// day would be journaled by then.
	path := filepath.Join(dir, ops.ScheduleStateFile)
	waitUntil(t, "the end of day recorded, or a second one journaled", func() bool {
		var st struct{ Last string }
		b, err := os.ReadFile(path)
		return err == nil && json.Unmarshal(b, &st) == nil && strings.Contains(st.Last, " end_of_day ") ||
			endOfDaysJournaled(t, dir, true) > 1
	})
	slow.Store(false)
	s.Close()
	if n := endOfDaysJournaled(t, dir, true); n != 1 {
		t.Fatalf("%d end-of-day commands journaled for one day", n)
	}
}

// TestStopDuringTheCatchUp: a stop while the start waits for the
// schedule's catch-up (here on a slow journal) ends the start, and the
// venue closes cleanly; FIX never opened.
func TestStopDuringTheCatchUp(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	dir, dayStart := openDay(t) // the open's progress recorded
	cfg := tradingDayVenueConfig(t, dir)
	sync := func(f *os.File, kind journal.SyncKind) error {
		if kind == journal.SyncData {
			time.Sleep(300 * time.Millisecond)
		}
		return journal.DefaultSync(f, kind)
	}
	s, err := New(cfg, Options{Logger: testLogger(t), JournalSync: sync, Now: stoppedClock(dayStart.Add(9500 * time.Millisecond))})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan error, 1)
	go func() { started <- s.Start() }()
	time.Sleep(200 * time.Millisecond) // into the catch-up of the close and the end of day
	s.AbortStart()
	select {
	case err := <-started:
		if err == nil {
			t.Fatal("a start stopped during its catch-up went on serving")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the start did not end after the stop")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestEndOfDayMovedLaterRunsOncePerDay: the configuration's end_of_day is
// moved later after that day's end of day ran, and the venue restarts past
// the new time. The day has ended: its end of day does not run a second
// time (it did, expiring the DAY order of the trading the operator reopened
// after it), and the venue goes on to the next day's transitions.
//
// A record written before schedule.state named the ended day holds its end
// of day as the last transition run, which names its day: the same holds.
func TestEndOfDayMovedLaterRunsOncePerDay(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs parts of a 12-second trading day")
	}
	for _, older := range []bool{false, true} {
		t.Run(fmt.Sprintf("older_record=%v", older), func(t *testing.T) { endOfDayMovedLater(t, older) })
	}
}

func endOfDayMovedLater(t *testing.T, olderRecord bool) {
	dir, dayStart := openDay(t, "d1")
	s := tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(9500*time.Millisecond))) // the end of day at 9 s runs
	reopenWithDayOrder(t, s)
	s.Close()
	if path, record := scheduleRecord(t, dir); olderRecord {
		var fields map[string]any
		if err := json.Unmarshal(record, &fields); err != nil || fields["ended_day"] == nil {
			t.Fatalf("%s holds no ended day: %s (%v)", path, record, err)
		}
		delete(fields, "ended_day")
		record, _ = json.Marshal(fields)
		if err := os.WriteFile(path, record, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	cfg := tradingDayVenueConfig(t, dir)
	cfg.Journal.SegmentBytes = 16384
	cfg.Schedule.EndOfDay.Duration = 11 * time.Second
	s = startServer(t, cfg, Options{Now: stoppedClock(dayStart.Add(11500 * time.Millisecond))})
	if acme := instrumentsOf(t, s)["ACME"]; acme.RestingOrders != 1 || acme.BidQty != 5 {
		t.Fatalf("the day's end of day ran again at its new time: ACME %+v", acme)
	}
	s.Close()
	wantOneEndOfDay(t, dir)

	// The next day's transitions still run: its end of day at the new time.
	next := dayStart.Add(compressedDayLength + 11500*time.Millisecond)
	s = startServer(t, cfg, Options{Now: stoppedClock(next)})
	if acme := instrumentsOf(t, s)["ACME"]; acme.RestingOrders != 0 {
		t.Fatalf("the next day's end of day did not run: ACME %+v", acme)
	}
	s.Close()
	if n := endOfDaysJournaled(t, dir, false); n != 2 {
		t.Fatalf("%d end of day commands after two days, want 2", n)
	}
}

// calendarDaySchedule is a calendar trading day in Paris, with holidays.
const calendarDaySchedule = `
[schedule]
enabled = true
time_zone = "Europe/Paris"
holidays = [%s]
end_of_day = "18h"
[[schedule.group]]
name = "all"
pre_open = "8h"
open = "9h"
close = "17h30m"
`

// TestHolidayAddedAfterTheDayBeganEndsIt: the operator makes today a
// holiday in the configuration after the day opened (a market closed at
// short notice) and restarts the venue. The day ends at the start: the
// group closes and the end of day runs, expiring the DAY order. The day was
// passed over as a holiday, so ACME stayed open through it and the end of
// day never came: the DAY order lived into the next trading day.
func TestHolidayAddedAfterTheDayBeganEndsIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 12, 2, 0, 0, 0, 0, paris) // a Wednesday
	venueWith := func(holidays string, now func() time.Time) *Server {
		cfg := testConfig(t, dir, adminConfig()+fmt.Sprintf(calendarDaySchedule, holidays)+"[session_defaults]\ncancel_on_disconnect = false\n")
		return startServer(t, cfg, Options{Now: now})
	}
	// Started in the opening call half a second before the open; once it
	// serves, the clock passes the open, which the schedule runs.
	var clock atomic.Int64
	clock.Store(day.Add(9*time.Hour - 500*time.Millisecond).UnixNano())
	s := venueWith("", func() time.Time { return time.Unix(0, clock.Load()) })
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
	clock.Store(day.Add(9*time.Hour + time.Second).UnixNano())
	waitStatus(t, s, "ACME", "Open", readWait)
	waitUntil(t, "the open recorded", func() bool {
		_, record := scheduleRecord(t, dir)
		return strings.Contains(string(record), "2026-12-02 open")
	})
	restDayOrder(t, s, "d1")
	s.Close()

	s = venueWith(`"2026-12-02"`, stoppedClock(day.Add(10*time.Hour)))
	if acme := instrumentsOf(t, s)["ACME"]; acme.Status != "Closed" || acme.RestingOrders != 0 {
		t.Fatalf("on the day made a holiday ACME is %+v; want it closed and its DAY order expired", acme)
	}
	s.Close()
	wantOneEndOfDay(t, dir)
}

// wantDayOrderRestsAfterRestart starts the trading-day venue in dir again,
// 9.5 s into the day that started at dayStart (past its end of day time),
// and checks that the DAY order rested before (5 bid on ACME) still rests:
// the start knew the day had ended and ran no second end of day.
func wantDayOrderRestsAfterRestart(t *testing.T, dir string, dayStart time.Time) {
	t.Helper()
	s := tradingDayVenueAt(t, dir, stoppedClock(dayStart.Add(9500*time.Millisecond)))
	if acme := instrumentsOf(t, s)["ACME"]; acme.RestingOrders != 1 || acme.BidQty != 5 {
		t.Errorf("the end of day ran again at the restart: ACME %+v", acme)
	}
	s.Close()
}
