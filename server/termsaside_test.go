package server

import (
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
)

// TestTermsRecordMovedAsideReplaysTheWholeJournal: a start refused for
// ACME's band changed advises moving terms.json aside to replay the
// journal under the configured terms. Done, the start replays the whole
// journal under the configured band and loads no snapshot, as none says
// which terms it was taken under: the orders rest, the band is the
// configured one, and an order only one band takes is answered by that
// band; `journal book` (CheckTermsRecord) loads none either. Before, a
// narrower band failed the start (`bad snapshot: instrument 1 band [9000,
// 11000] does not fit the config's 1 with 1001 levels`) and a wider one
// loaded the end of day's snapshot, the recorded band with it.
func TestTermsRecordMovedAsideReplaysTheWholeJournal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name            string
		band            int64
		low, high       string
		probe, probeAns string // a buy's price, and its ExecType under the configured band
	}{
		{"narrower", 5, "95.00", "105.00", "93.00", "8"}, // the snapshot's band does not fit its levels
		{"wider", 20, "80.00", "120.00", "85.00", "0"},   // it fits, and held the recorded band
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			extra := adminConfig() + "[session_defaults]\ncancel_on_disconnect = false\n"
			s := startServer(t, testConfig(t, dir, extra), Options{})
			cl := gtcThenEndOfDay(t, s) // g1, 1 at 99.00, in the end of day's snapshot
			sendOrder(t, cl, order{id: "g2", side: "1", qty: "2", px: "97.00", tif: "1"})
			expectER(t, cl, map[int]string{11: "g2", 150: "0"})
			cl.Close()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			changed := testConfig(t, dir, extra)
			changed.Instruments[0].BandPercent = c.band
			record := filepath.Join(dir, termsRecordFile)
			refusedStart(t, changed, "ACME's band changed", "move "+record+" aside and start again: the start then replays the whole journal")
			if err := os.Rename(record, filepath.Join(t.TempDir(), termsRecordFile)); err != nil {
				t.Fatal(err)
			}
			if from, err := CheckTermsRecord(changed); err != nil || from != math.MaxUint64 {
				t.Fatalf("the tools' check without a record: snapshots from %d, %v; want none loaded", from, err)
			}

			var logs lockedbuf.Buffer
			s = startServer(t, changed, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
			rec := readRecord(t, dir)
			if rec.SnapshotsFrom < 3 || s.replayed != int64(rec.SnapshotsFrom) {
				t.Fatalf("the start replayed %d commands, snapshots_from %d: want every command from seq 0, no snapshot loaded\n%s",
					s.replayed, rec.SnapshotsFrom, logs.String())
			}
			if !strings.Contains(logs.String(), "no record of the terms the journal was written under") {
				t.Fatalf("the start does not say why it replays the whole journal:\n%s", logs.String())
			}
			if got := rec.Instruments[0].Terms["band_percent"]; got != strconv.FormatInt(c.band, 10) {
				t.Fatalf("band_percent recorded: %s, want %d", got, c.band)
			}
			st := waitInstrument(t, s, "ACME", "the configured band and both orders", func(st ops.InstrumentInfo) bool {
				return st.BandLow == c.low && st.BandHigh == c.high && st.RestingOrders == 2 && st.Bid == "99.00" && st.BidQtyTotal == 3
			})
			if st.BandPercent != c.band {
				t.Fatalf("ACME's band percent: %+v, want %d", st, c.band)
			}
			cl = logon(t, s, "CLIENT1", true)
			sendOrder(t, cl, order{id: "probe", side: "1", qty: "1", px: c.probe, tif: "0"})
			expectER(t, cl, map[int]string{11: "probe", 150: c.probeAns})
			cl.Close()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			// The record written, the next start keeps the configured band.
			s = startServer(t, changed, Options{})
			waitInstrument(t, s, "ACME", "the configured band after another start", func(st ops.InstrumentInfo) bool {
				return st.BandLow == c.low && st.BandHigh == c.high && st.Bid == "99.00"
			})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestTermsRecordMovedAsideReplaysTheArchive: the whole journal a start
// without a record replays includes the segments an end of day archived.
// Without them the start is refused, naming what is missing and why the
// snapshots that would spare them are not loaded, and leaves no record;
// with them back it replays every command under the configured band.
func TestTermsRecordMovedAsideReplaysTheArchive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := daysInSegmentsConfig(t, dir)
	s, c := gtcDay(t, cfg, 1500)
	endOfDay(t, s)
	iocBurst(t, c, "day2", 1500)
	if eod := endOfDay(t, s); eod.ArchivedSegs < 1 {
		t.Fatalf("second end of day %+v: nothing archived", eod)
	}
	c.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	changed := daysInSegmentsConfig(t, dir)
	changed.Instruments[0].BandPercent = 5
	record := filepath.Join(dir, termsRecordFile)
	if err := os.Rename(record, filepath.Join(t.TempDir(), termsRecordFile)); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "journal", journal.ArchiveDirName)
	elsewhere := filepath.Join(t.TempDir(), "archive")
	if err := os.Rename(archive, elsewhere); err != nil {
		t.Fatal(err)
	}
	s, err := New(changed, Options{Logger: testLogger(t)})
	if err == nil {
		s.Close()
		t.Fatal("a start without the record and without the archive")
	}
	for _, want := range []string{"but replay needs seq 0: earlier segments are missing", "archived segments belong in " + archive,
		record + ", the record of the terms they were taken under, is missing"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("the start without the archive: %v\nwant %q", err, want)
		}
	}
	if _, err := os.Stat(record); !os.IsNotExist(err) {
		t.Fatalf("the refused start wrote the record: %v", err)
	}
	if err := os.Rename(elsewhere, archive); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, changed, Options{})
	if rec := readRecord(t, dir); rec.SnapshotsFrom < 3000 || s.replayed != int64(rec.SnapshotsFrom) {
		t.Fatalf("the start replayed %d commands, snapshots_from %d: want every command from seq 0", s.replayed, rec.SnapshotsFrom)
	}
	waitInstrument(t, s, "ACME", "the configured band and the GTC order", func(st ops.InstrumentInfo) bool {
		return st.BandLow == "95.00" && st.BandHigh == "105.00" && st.RestingOrders == 1 && st.Bid == "98.00"
	})
}

// TestTermsRecordMovedAsideCountsRefusedOrders: a start without the terms
// record replays the whole journal under the configured terms, and an
// order the recorded band took and the configured one refuses is gone:
// its owner was told it was accepted, and nothing reports it. The start
// says so: its log counts the refused orders by instrument and names the
// first ones (session, ClOrdID, reason), /metrics and /v1/status give the
// count, and the owner's status request answers the order as unknown. An
// order the configured band takes rests; the next start, with the record,
// refuses nothing and says nothing of it. Before, the start said nothing.
func TestTermsRecordMovedAsideCountsRefusedOrders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	extra := adminConfig() + "[session_defaults]\ncancel_on_disconnect = false\n"
	s := startServer(t, testConfig(t, dir, extra), Options{})
	c := logon(t, s, "CLIENT1", true)
	for _, o := range []order{{id: "in", side: "1", qty: "1", px: "99.00"}, {id: "low", side: "1", qty: "2", px: "93.00"},
		{id: "high", side: "2", qty: "1", px: "108.00"}} {
		o.tif = "1"
		sendOrder(t, c, o)
		expectER(t, c, map[int]string{11: o.id, 150: "0"})
	}
	c.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	changed := testConfig(t, dir, extra)
	changed.Instruments[0].BandPercent = 5 // 95.00 to 105.00
	record := filepath.Join(dir, termsRecordFile)
	if err := os.Rename(record, filepath.Join(t.TempDir(), termsRecordFile)); err != nil {
		t.Fatal(err)
	}

	var logs lockedbuf.Buffer
	s = startServer(t, changed, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	for _, want := range []string{"the configured terms refused recorded orders", "orders=2", `by_instrument="ACME=2"`,
		"ClOrdID low ACME PriceOutOfBand", "ClOrdID high ACME PriceOutOfBand", "CLIENT1"} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("the start's log does not say %q:\n%s", want, logs.String())
		}
	}
	m := scrape(t, s)
	if got, by := metricstest.Value(t, m, "fixvenue_start_refused_orders"),
		metricstest.Value(t, m, `fixvenue_start_refused_orders_by_instrument{instrument="ACME"}`); got != "2" || by != "2" {
		t.Fatalf("fixvenue_start_refused_orders %s, ACME's %s: want 2", got, by)
	}
	var st ops.StatusInfo
	if code := adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st); code != 200 || st.RefusedAtStart == nil ||
		st.RefusedAtStart.Orders != 2 || st.RefusedAtStart.ByInstrument["ACME"] != 2 || len(st.RefusedAtStart.First) != 2 {
		t.Fatalf("/v1/status: %d %+v", code, st.RefusedAtStart)
	}
	waitInstrument(t, s, "ACME", "the order the configured band takes", func(st ops.InstrumentInfo) bool {
		return st.RestingOrders == 1 && st.Bid == "99.00"
	})
	c = logon(t, s, "CLIENT1", true)
	if err := c.Send("H", fixclient.F(11, "low"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "low", 150: "I", 39: "8"})
	c.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	var again lockedbuf.Buffer
	s = startServer(t, changed, Options{Logger: slog.New(slog.NewTextHandler(&again, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if strings.Contains(again.String(), "refused recorded orders") || metricstest.Value(t, scrape(t, s), "fixvenue_start_refused_orders") != "0" {
		t.Fatalf("a start with the record reports refused orders:\n%s", again.String())
	}
}

// TestTermsRecordMovedAsideRefusedOrderWithLaterExecutions: an order the
// recorded band took, that rested and was then cancelled (or filled by
// another session's market order), is refused by a narrower configured
// band on a start without the terms record; its cancel then finds nothing
// and takes no ExecID (the market order finds no bid), so the replay ends
// below the ExecID a FIX store holds, and starting would issue ExecIDs
// (and OrderIDs) the clients already hold for other executions. The start
// is refused naming that cause, the order, and what to do; it wrote no
// record, and the recorded terms with terms.json back start as before.
// Before, the refusal blamed a journal that lost its tail (a segment lost,
// a partial restore) and advised restoring it.
func TestTermsRecordMovedAsideRefusedOrderWithLaterExecutions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		later func(t *testing.T, s *Server, c *fixclient.Client) (session, execID string) // the last report's
	}{
		{"cancelled", func(t *testing.T, s *Server, c *fixclient.Client) (string, string) {
			if err := c.Send("F", fixclient.F(11, "low-x"), fixclient.F(41, "low"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
				fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "2")); err != nil {
				t.Fatal(err)
			}
			return "CLIENT1", expectER(t, c, map[int]string{11: "low-x", 150: "4"}).Get(17)
		}},
		{"filled", func(t *testing.T, s *Server, c *fixclient.Client) (string, string) {
			c2 := logon(t, s, "CLIENT2", true)
			defer c2.Close()
			sendOrder(t, c2, order{id: "mkt", side: "2", qty: "2", typ: "1", tif: "3"})
			theirs := expectER(t, c2, map[int]string{11: "mkt", 150: "F", 39: "2"}).Get(17)
			ours := expectER(t, c, map[int]string{11: "low", 150: "F", 39: "2"}).Get(17)
			if a, b := len(theirs), len(ours); a > b || (a == b && theirs > ours) { // ExecIDs are decimal, no leading zero
				return "CLIENT2", theirs
			}
			return "CLIENT1", ours
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			extra := "[session_defaults]\ncancel_on_disconnect = false\n"
			recorded := testConfig(t, dir, extra)
			s := startServer(t, recorded, Options{})
			cl := logon(t, s, "CLIENT1", true)
			sendOrder(t, cl, order{id: "low", side: "1", qty: "2", px: "93.00", tif: "1"})
			expectER(t, cl, map[int]string{11: "low", 150: "0"})
			session, execID := c.later(t, s, cl)
			cl.Close()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			changed := testConfig(t, dir, extra)
			changed.Instruments[0].BandPercent = 5 // 95.00 to 105.00: "low" is refused
			record := filepath.Join(dir, termsRecordFile)
			aside := filepath.Join(t.TempDir(), termsRecordFile)
			if err := os.Rename(record, aside); err != nil {
				t.Fatal(err)
			}
			_, err := New(changed, Options{Logger: testLogger(t)})
			if err == nil {
				t.Fatal("the start under terms that refuse an order with a later execution was not refused")
			}
			for _, want := range []string{"the configured terms refused recorded orders on this replay without " + record + " (1; first: seq ",
				"CLIENT1 ClOrdID low ACME PriceOutOfBand", "session " + session + "'s FIX store holds ExecID " + execID,
				"starting would issue ExecIDs and OrderIDs its clients hold for other executions",
				"restore the configuration the journal was written under and put " + record + " back",
				"start afresh: move the journal and " + filepath.Join(dir, "fixstore") + " aside"} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("the refusal: %v\nwant %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "commands its clients were answered are missing") {
				t.Fatalf("the refusal blames a lost segment: %v", err)
			}
			if _, err := os.Stat(record); !os.IsNotExist(err) {
				t.Fatalf("the refused start wrote the record: %v", err)
			}
			if err := os.Rename(aside, record); err != nil {
				t.Fatal(err)
			}
			s = startServer(t, recorded, Options{})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestTermsRecordMovedAsideRebuildsNothing: an order the recorded band
// refused at entry is taken by a wider configured band on a start without
// the terms record, and a market order entered after it, which found no
// bid when it was recorded, fills it on replay: that replay's reports
// past what the FIX stores hold are not answers lost at a crash but
// another history. The start sends none of them: it warns, naming the
// session and how many, and the owner's resend gives only what it was
// told (the reject), no accept or fill of an order it was told was
// refused. Before, the rebuild stored those reports and the resend
// delivered them, with ExecIDs of a history the client never had.
func TestTermsRecordMovedAsideRebuildsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	extra := "[session_defaults]\ncancel_on_disconnect = false\n"
	recorded := testConfig(t, dir, extra)
	recorded.Instruments[0].BandPercent = 5 // 95.00 to 105.00: "low" is refused
	s := startServer(t, recorded, Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "low", side: "1", qty: "2", px: "93.00", tif: "1"})
	expectER(t, c, map[int]string{11: "low", 150: "8"})
	c2 := logon(t, s, "CLIENT2", true)
	sendOrder(t, c2, order{id: "mkt", side: "2", qty: "2", typ: "1", tif: "3"})
	if m := expectER(t, c2, map[int]string{11: "mkt"}); m.Get(150) == "F" {
		t.Fatalf("the market order filled under the recorded band: %s", m)
	}
	told := map[string]bool{} // the ExecIDs CLIENT1 was given
	for _, m := range c.Received {
		if m.Type() == "8" && m.Get(17) != "" {
			told[m.Get(17)] = true
		}
	}
	next := c.NextOut
	c.Close()
	c2.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	changed := testConfig(t, dir, extra) // 90.00 to 110.00: "low" is taken
	if err := os.Rename(filepath.Join(dir, termsRecordFile), filepath.Join(t.TempDir(), termsRecordFile)); err != nil {
		t.Fatal(err)
	}

	var logs lockedbuf.Buffer
	s = startServer(t, changed, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if strings.Contains(logs.String(), "rebuilt from the journal and stored") {
		t.Fatalf("the start rebuilt reports from a replay under other terms:\n%s", logs.String())
	}
	for _, want := range []string{"not rebuilt: the start replayed the journal without", `reports_by_session="CLIENT1=1"`} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("the start's log does not say %q:\n%s", want, logs.String())
		}
	}
	r, _ := resume(t, s, "CLIENT1", next)
	if err := r.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	if err := r.Send("1", fixclient.F(112, "resent")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(readWait); ; {
		m, err := r.ReadAny(time.Until(deadline))
		if err != nil {
			t.Fatalf("resend: %v", err)
		}
		if m.Type() == "0" && m.Get(112) == "resent" {
			break
		}
		if m.Type() == "8" && !told[m.Get(17)] {
			t.Fatalf("CLIENT1 got a report it was never given: %s", m)
		}
	}
}
