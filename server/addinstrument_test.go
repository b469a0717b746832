package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/eventstream"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/internal/natstest"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestAddInstrumentScheduleGroup adds instruments through the admin API on
// a venue with a schedule: each joins its schedule group (the one named,
// or the group its symbol falls in), so a phase change of the group moves
// it, before and after a restart. Malformed calls are refused and change
// nothing; the metrics count the instruments.
func TestAddInstrumentScheduleGroup(t *testing.T) {
	t.Parallel()
	sched := idleSchedule()
	dir := t.TempDir()
	cfg := testConfig(t, dir, adminConfig()+sched)
	s := startServer(t, cfg, Options{})
	waitReady(t, s)
	instrument := func(symbol, extra string) string {
		return fmt.Sprintf(`{"reason":"listing %s","symbol":%q,"tick_size":"0.01","lot_size":1,"min_qty":1,"max_qty":100,`+
			`"ref_price":"10.00","band_percent":10,"status":"closed"%s}`, symbol, symbol, extra)
	}
	for _, c := range []struct {
		token, body string
		code        int
		errCode     string
	}{
		{"", instrument("NOTOKEN", ""), 401, "unauthorized"},
		{aliceToken, instrument("BADGROUP", `,"group":"nope"`), 400, "unknown_group"},
		{aliceToken, instrument("EXTRA", `,"colour":"red"`), 400, "bad_json"},
		{aliceToken, instrument("LONG", `,"group":"`+strings.Repeat("x", 1024)+`"`), 413, "body_too_large"},
		{aliceToken, instrument("has space", ""), 400, "bad_symbol"},
		{aliceToken, instrument("all", ""), 400, "bad_symbol"},
		{aliceToken, instrument("..", ""), 400, "bad_symbol"}, // no URL names it: the console could not reach it
		{aliceToken, instrument("LOTS", ""), 409, "duplicate_instrument"},
	} {
		var e struct{ Code string }
		if code := adminCall(t, s, "POST", "/v1/instruments", c.token, c.body, &e); code != c.code || e.Code != c.errCode {
			t.Errorf("%.60s: %d %q, want %d %q", c.body, code, e.Code, c.code, c.errCode)
		}
	}
	if got := instrumentsOf(t, s); len(got) != 2 {
		t.Fatalf("refused calls listed instruments: %+v", got)
	}
	var res ops.AddInstrumentResponse
	if code := adminCall(t, s, "POST", "/v1/instruments", aliceToken, instrument("NEWCO", `,"group":"acme"`), &res); code != 200 ||
		res.Instrument.Symbol != "NEWCO" || res.Instrument.ID != 3 || res.Instrument.Status != "Closed" || res.Operator != "alice" {
		t.Fatalf("add NEWCO: %d %+v", code, res)
	}
	if code := adminCall(t, s, "POST", "/v1/instruments", bobToken, instrument("TWO", `,"id":70`), &res); code != 200 || res.Instrument.ID != 70 {
		t.Fatalf("add TWO: %d %+v", code, res)
	}
	text := scrape(t, s)
	if metricstest.Value(t, text, "fixvenue_instruments") != "4" || !strings.Contains(text, `fixvenue_instrument_trading_status{instrument_id="70",symbol="TWO"} 3`) ||
		!strings.Contains(text, `fixvenue_operator_actions_total{action="AddInstrument",result="done"} 2`) {
		t.Errorf("metrics do not count the added instruments:\n%s", text)
	}
	phase := func(s *Server, group, phase string, want map[string]string) {
		t.Helper()
		var r ops.ActionResponse
		if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, fmt.Sprintf(`{"reason":"test","group":%q,"phase":%q}`, group, phase), &r); code != 200 {
			t.Fatalf("phase %s %s: %d", group, phase, code)
		}
		got := instrumentsOf(t, s)
		for sym, st := range want {
			if got[sym].Status != st {
				t.Errorf("after %s %s: %s is %s, want %s", group, phase, sym, got[sym].Status, st)
			}
		}
	}
	phase(s, "acme", "open", map[string]string{"ACME": "Open", "NEWCO": "Open", "LOTS": "Closed", "TWO": "Closed"})
	phase(s, "rest", "open", map[string]string{"LOTS": "Open", "TWO": "Open"})
	s.Close()

	s = startServer(t, cfg, Options{})
	waitReady(t, s)
	phase(s, "acme", "close", map[string]string{"ACME": "Closed", "NEWCO": "Closed", "LOTS": "Open", "TWO": "Open"})
	if metricstest.Value(t, scrape(t, s), "fixvenue_instruments") != "4" {
		t.Error("after a restart the venue does not count the added instruments")
	}
}

// TestConfiguredInstrumentTheJournalAdds: an [[instrument]] configured for
// one the admin API added, while the journal still adds it, is refused at
// start: replayed, the AddInstrument would be refused as a duplicate and
// the order resting on it (at a price off the configured tick) would
// vanish. Refused both when the addition is in the replayed journal and
// when a snapshot holds it (the start, with an instrument new to the terms
// record, loads no snapshot from before it: the journal is replayed);
// a refused start leaves the terms record as it was, so the venue starts
// again as configured before.
func TestConfiguredInstrumentTheJournalAdds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	extra := adminConfig() + "[session_defaults]\ncancel_on_disconnect = false\n"
	s := startServer(t, testConfig(t, dir, extra), Options{})
	body := `{"reason":"listing","symbol":"NEWCO","tick_size":"0.05","lot_size":1,"min_qty":1,"max_qty":100,"ref_price":"10.00","band_percent":10,"id":9}`
	if code := adminCall(t, s, "POST", "/v1/instruments", aliceToken, body, nil); code != 200 {
		t.Fatalf("add: %d", code)
	}
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "n1", side: "1", qty: "1", px: "10.05", sym: "NEWCO", tif: "1"})
	expectER(t, c, map[int]string{11: "n1", 150: "0"})
	s.Close()
	configured := extra + configuredInstrument(9, "NEWCO")
	refusedStart(t, testConfig(t, dir, configured), "NEWCO configured while the journal adds it",
		"instrument id 9 (NEWCO) is configured, and the journal adds instrument id 9 (NEWCO) at seq 0")
	// From an end of day's snapshot that holds the addition.
	s = startServer(t, testConfig(t, dir, extra), Options{})
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"day done"}`, nil); code != 200 {
		t.Fatalf("eod: %d", code)
	}
	s.Close()
	refusedStart(t, testConfig(t, dir, configured), "NEWCO configured while a snapshot holds it",
		"instrument id 9 (NEWCO) is configured, and the journal adds instrument id 9 (NEWCO) at seq 0")
	s = startServer(t, testConfig(t, dir, extra), Options{})
	waitInstrument(t, s, "NEWCO", "the order on the added instrument", func(st ops.InstrumentInfo) bool { return st.RestingOrders == 1 })
}

// TestFollowerStopsOnAConfiguredInstrumentTheJournalAdds: a cluster node's
// standby sink finds the same conflict as a single venue's replay, and the
// node stops applying (applyCommitted returns it); an addition of an
// instrument the configuration does not list is none.
func TestFollowerStopsOnAConfiguredInstrumentTheJournalAdds(t *testing.T) {
	m, sink := followerSink(t, testConfig(t, t.TempDir(), ""), true)
	add := func(seq uint64, id uint32, symbol string) {
		t.Helper()
		buf := make([]byte, 512)
		a := core.AddedInstrument{ID: id, Symbol: symbol, Tick: decimal.Tick{Mantissa: 1, Scale: 2}, LotSize: 1, MinQty: 1, MaxQty: 100,
			RefPriceTicks: 1000, BandPercent: 10, Status: venue.TradingStatusOpen}
		if err := core.EncodeAddInstrument(buf, seq, 1, &a, "alice", "listing"); err != nil {
			t.Fatal(err)
		}
		if err := m.Apply(buf, sink); err != nil {
			t.Fatal(err)
		}
	}
	add(0, 9, "NEWCO")
	if sink.conflict != nil {
		t.Fatalf("an unconfigured addition: %v", sink.conflict)
	}
	add(1, 1, "ACME")
	if sink.conflict == nil || !strings.Contains(sink.conflict.Error(), "instrument id 1 (ACME) is configured, and the journal adds instrument id 1 (ACME) at seq 1") {
		t.Fatalf("a configured instrument added: %v", sink.conflict)
	}
}

// TestConfiguredInstrumentAfterASnapshot: an [[instrument]] added to the
// configuration of a venue that has snapshots is accepted: the snapshots,
// which list the instruments of their day by position, predate it, so the
// start and the ones after replay the whole journal until an end of day's
// snapshot has it; the orders resting before are there throughout, and
// the event export's catch-up continues its stream likewise. Before, every
// start failed (`bad snapshot: 2 instruments, the config has 3`).
func TestConfiguredInstrumentAfterASnapshot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	extra := adminConfig() + "[session_defaults]\ncancel_on_disconnect = false\n" + exportSection
	s := startServer(t, testConfig(t, dir, extra), Options{})
	c := gtcThenEndOfDay(t, s)
	// An event after the snapshot, exported: a catch-up after a restart
	// would start from that snapshot.
	sendOrder(t, c, order{id: "g2", side: "1", qty: "1", px: "98.00", tif: "1"})
	expectER(t, c, map[int]string{11: "g2", 150: "0"})
	waitExported(t, s)
	s.Close()
	fresh := extra + configuredInstrument(5, "FRESH")
	for start := range 3 {
		s = startServer(t, testConfig(t, dir, fresh), Options{})
		waitInstrument(t, s, "ACME", "the GTC order", func(st ops.InstrumentInfo) bool { return st.Bid == "99.00" && st.BidQty == 1 })
		waitInstrument(t, s, "FRESH", "the new instrument", func(st ops.InstrumentInfo) bool { return st.Status == "Open" })
		switch {
		case start < 2 && s.replayed < 3:
			t.Fatalf("start %d replayed %d commands: a snapshot from before FRESH was loaded", start, s.replayed)
		case start == 2 && s.replayed > 2:
			t.Fatalf("start %d replayed %d commands: the end of day's snapshot with FRESH was passed over", start, s.replayed)
		}
		if start == 0 {
			// The event export continues its stream: its catch-up, too,
			// loads no snapshot from before FRESH.
			sendOrder(t, logon(t, s, "CLIENT2", true), order{id: "after", side: "2", qty: "1", px: "101.00", tif: "1"})
			waitExported(t, s)
			verifyStream(t, s)
		}
		if start == 1 {
			endOfDay(t, s)
		}
		s.Close()
	}
}

// TestConfiguredSessionAfterASnapshot: a [[session]] added after the
// recorded ones on a venue that has snapshots is accepted as an instrument
// is: the snapshots hold per-session state (risk figures) for the
// sessions of their day, so the starts replay the whole journal until an
// end of day's snapshot has the new session. Before, every start failed
// (`bad snapshot: risk for 5 sessions …, the config … give 6`).
func TestConfiguredSessionAfterASnapshot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	extra := adminConfig() + "[session_defaults]\ncancel_on_disconnect = false\n"
	s := startServer(t, testConfig(t, dir, extra), Options{})
	gtcThenEndOfDay(t, s)
	s.Close()
	added := extra + "\n[[session]]\ncomp_id = \"NEWCLIENT\"\n"
	for start := range 2 {
		s = startServer(t, testConfig(t, dir, added), Options{})
		if start == 0 {
			waitInstrument(t, s, "ACME", "the GTC order", func(st ops.InstrumentInfo) bool { return st.Bid == "99.00" && st.BidQty == 1 })
		} else {
			waitInstrument(t, s, "ACME", "NEWCLIENT's trade closing the day", func(st ops.InstrumentInfo) bool {
				return st.PrevClose == "99.00" && st.RestingOrders == 0
			})
		}
		switch {
		case start == 0 && s.replayed < 2:
			t.Fatalf("start %d replayed %d commands: a snapshot from before NEWCLIENT was loaded", start, s.replayed)
		case start == 1 && s.replayed > 1:
			t.Fatalf("start %d replayed %d commands: the end of day's snapshot with NEWCLIENT was passed over", start, s.replayed)
		}
		if start == 0 {
			n := logon(t, s, "NEWCLIENT", true)
			sendOrder(t, n, order{id: "n1", side: "2", qty: "1", px: "99.00", tif: "1"})
			expectER(t, n, map[int]string{11: "n1", 150: "F", 32: "1"})
			endOfDay(t, s)
		}
		s.Close()
	}
}

// gtcThenEndOfDay rests CLIENT1's GTC buy g1 of 1 ACME at 99.00 on s and
// ends the day (a snapshot that has it), and returns CLIENT1's client.
func gtcThenEndOfDay(t *testing.T, s *Server) *fixclient.Client {
	t.Helper()
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "g1", side: "1", qty: "1", px: "99.00", tif: "1"})
	expectER(t, c, map[int]string{11: "g1", 150: "0"})
	endOfDay(t, s)
	return c
}

// configuredInstrument is an [[instrument]] of tick 0.10 around 10.00.
func configuredInstrument(id int, symbol string) string {
	return fmt.Sprintf("\n[[instrument]]\nid = %d\nsymbol = %q\ntick_size = \"0.10\"\nlot_size = 1\nmin_qty = 1\nmax_qty = 100\n"+
		"ref_price = \"10.00\"\nband_percent = 10\n", id, symbol)
}

// TestAddedInstrumentDayAfterARestart: an instrument the admin API added
// keeps its figures of the day across a restart from a snapshot taken
// after the addition (its InstrumentAdded is then not replayed), and the
// trades after the start count: the previous close, the day's trades and
// volume in GET /v1/instruments, as on the console. Before, the restored
// console state dropped the added instrument, which then had no tape: no
// previous close, and no trade of it counted until the journal was reset.
// The event export, resuming past the InstrumentAdded its stream holds,
// publishes the instrument's events under its own subjects, not `_`: the
// start learns the added instruments before it builds the export.
func TestAddedInstrumentDayAfterARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, adminConfig()+exportSection+"[session_defaults]\ncancel_on_disconnect = false\n")
	s := startServer(t, cfg, Options{})
	body := `{"reason":"listing","symbol":"NEWCO","tick_size":"0.05","lot_size":1,"min_qty":1,"max_qty":100,"ref_price":"10.00","band_percent":10}`
	if code := adminCall(t, s, "POST", "/v1/instruments", aliceToken, body, nil); code != 200 {
		t.Fatalf("add: %d", code)
	}
	trade := func(s *Server, id, px string) {
		t.Helper()
		b, c := logon(t, s, "CLIENT1", true), logon(t, s, "CLIENT2", true)
		sendOrder(t, b, order{id: id + "b", side: "1", qty: "2", px: px, sym: "NEWCO"})
		expectER(t, b, map[int]string{11: id + "b", 150: "0"})
		sendOrder(t, c, order{id: id + "s", side: "2", qty: "2", px: px, sym: "NEWCO"})
		expectER(t, c, map[int]string{11: id + "s", 150: "F"})
	}
	trade(s, "d1", "10.05")
	waitInstrument(t, s, "NEWCO", "the first day's trade", func(st ops.InstrumentInfo) bool { return st.Trades == 1 && st.Volume == 2 })
	endOfDay(t, s) // its snapshot holds NEWCO: the restart replays no InstrumentAdded
	s.Close()

	s = startServer(t, cfg, Options{})
	waitReady(t, s)
	if s.replayed > 2 {
		t.Fatalf("the start replayed %d commands: the end of day's snapshot was passed over", s.replayed)
	}
	waitInstrument(t, s, "NEWCO", "the previous close", func(st ops.InstrumentInfo) bool { return st.PrevClose == "10.05" })
	trade(s, "d2", "10.10")
	waitInstrument(t, s, "NEWCO", "the trade after the restart", func(st ops.InstrumentInfo) bool {
		return st.Trades == 1 && st.Volume == 2 && st.LastPrice == "10.10" && st.PrevClose == "10.05"
	})

	waitExported(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := natstest.JetStream(t, s.EmbeddedNATS().URL()).Stream(ctx, cfg.ExportStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(eventstream.Subjects{Prefix: cfg.Export.SubjectPrefix, Venue: cfg.ExportVenue()}.All()))
	if err != nil {
		t.Fatal(err)
	}
	subject := func(kind, sym string) string {
		return cfg.Export.SubjectPrefix + "." + cfg.ExportVenue() + "." + kind + "." + sym
	}
	// The stream counts messages, one per subject and batch: each day's
	// events of NEWCO are in one message or more of each of its subjects
	// (the restart between them ends a batch), and no trade is under _
	// (the end of day's event, of no instrument, is on orders._).
	for _, kind := range []string{"orders", "trades"} {
		if got := info.State.Subjects[subject(kind, "NEWCO")]; got < 2 {
			t.Errorf("%d messages on %s, want both days': %v", got, subject(kind, "NEWCO"), info.State.Subjects)
		}
	}
	if got := info.State.Subjects[subject("trades", "_")]; got != 0 {
		t.Errorf("%d messages of trades under _: %v", got, info.State.Subjects)
	}
}

// TestAddInstrumentSubjectCollision: with the event export on, an
// instrument whose event subjects would be a listed one's (export turns
// '.', '*' and '>' into '_') is refused with the instrument it collides
// with named, and nothing is listed; without export both are listed, and
// a start with export on over that journal names the pair in its log
// (eventstream/doc.go, "Messages").
func TestAddInstrumentSubjectCollision(t *testing.T) {
	t.Parallel()
	instrument := func(symbol string) string {
		return fmt.Sprintf(`{"reason":"listing","symbol":%q,"tick_size":"0.01","lot_size":1,"min_qty":1,"max_qty":100,`+
			`"ref_price":"10.00","band_percent":10,"status":"open"}`, symbol)
	}
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()+exportSection), Options{})
	waitReady(t, s)
	if code := adminCall(t, s, "POST", "/v1/instruments", aliceToken, instrument("BRK.A"), nil); code != 200 {
		t.Fatalf("add BRK.A: %d", code)
	}
	for _, sym := range []string{"BRK_A", "BRK*A", "BRK>A"} {
		var e struct{ Code, Error string }
		if code := adminCall(t, s, "POST", "/v1/instruments", aliceToken, instrument(sym), &e); code != 409 || e.Code != "subject_collision" ||
			!strings.Contains(e.Error, "BRK.A") {
			t.Errorf("add %s beside BRK.A with export on: %d %+v", sym, code, e)
		}
	}
	// "_" is the token of the events of no instrument (a mass cancel over
	// every instrument): a symbol of that token would share their subjects.
	for _, sym := range []string{"_", "*", ">"} {
		var e struct{ Code, Error string }
		if code := adminCall(t, s, "POST", "/v1/instruments", aliceToken, instrument(sym), &e); code != 409 || e.Code != "subject_collision" ||
			!strings.Contains(e.Error, "events of no instrument") {
			t.Errorf("add %s with export on: %d %+v", sym, code, e)
		}
	}
	if got := instrumentsOf(t, s); len(got) != 3 {
		t.Fatalf("refused calls listed instruments: %+v", got)
	}
	s.Close()

	dir := t.TempDir()
	s = startServer(t, testConfig(t, dir, adminConfig()), Options{})
	waitReady(t, s)
	for _, sym := range []string{"BRK.A", "BRK_A"} {
		if code := adminCall(t, s, "POST", "/v1/instruments", aliceToken, instrument(sym), nil); code != 200 {
			t.Fatalf("add %s without export: %d", sym, code)
		}
	}
	s.Close()
	var logs lockedbuf.Buffer
	s = startServer(t, testConfig(t, dir, adminConfig()+exportSection), Options{Logger: slog.New(slog.NewTextHandler(io.MultiWriter(&logs, testWriter(t)), nil))})
	waitReady(t, s)
	if l := logs.String(); !strings.Contains(l, "two instruments share their subjects") || !strings.Contains(l, "symbol=BRK_A other=BRK.A token=BRK_A") {
		t.Fatalf("the start does not name the instruments sharing their subjects:\n%s", l)
	}
}

// TestAddedInstrumentIsAnnounced: every session logged on when an
// instrument is added gets an unsolicited TradingSessionStatus of the new
// trading session (its symbol) with its status, as it gets every status
// change, valid for a strict client; the instrument used to appear with no
// word to the sessions, whose status tables then met its later changes
// for a trading session they had never heard of.
func TestAddedInstrumentIsAnnounced(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()), Options{})
	v := strictValidator(t)
	c := logon(t, s, "CLIENT1", true)
	for _, tt := range []struct{ symbol, status, tradSesStatus string }{
		{"NEWCO", `,"status":"closed"`, "3"},
		{"OPENCO", "", "2"},
	} {
		body := fmt.Sprintf(`{"reason":"listing","symbol":%q,"tick_size":"0.01","lot_size":1,"min_qty":1,"max_qty":100,"ref_price":"10.00","band_percent":10%s}`,
			tt.symbol, tt.status)
		if code := adminCall(t, s, "POST", "/v1/instruments", aliceToken, body, nil); code != 200 {
			t.Fatalf("add %s: %d", tt.symbol, code)
		}
		m, err := c.Expect(readWait, "h", map[int]string{336: tt.symbol})
		if err != nil {
			t.Fatalf("no TradingSessionStatus for the added %s: %v", tt.symbol, err)
		}
		validate(t, v, m)
		if m.Get(325) != "Y" || m.Get(340) != tt.tradSesStatus || !strings.HasPrefix(m.Get(58), "instrument added") {
			t.Fatalf("added %s announced as %s, want 325=Y and 340=%s", tt.symbol, m, tt.tradSesStatus)
		}
	}
}

// TestAddInstrumentIDAfterTheLargest: once an operator lists id 4294967295
// (the largest uint32), an addition without an id takes the lowest id none
// has, before and after a restart; one more than the highest wrapped to 0,
// and every such addition was refused ("no free instrument id") until an
// id was given.
func TestAddInstrumentIDAfterTheLargest(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), adminConfig())
	s := startServer(t, cfg, Options{})
	waitReady(t, s)
	add := func(s *Server, symbol, id string, want uint32) {
		t.Helper()
		extra := ""
		if id != "" {
			extra = `,"id":` + id
		}
		body := fmt.Sprintf(`{"reason":"listing %s","symbol":%q,"tick_size":"0.01","lot_size":1,"min_qty":1,"max_qty":100,`+
			`"ref_price":"10.00","band_percent":10%s}`, symbol, symbol, extra)
		var res ops.AddInstrumentResponse
		if code := adminCall(t, s, "POST", "/v1/instruments", aliceToken, body, &res); code != 200 || res.Instrument.ID != want {
			t.Fatalf("add %s (id %q): %d %+v, want id %d", symbol, id, code, res, want)
		}
	}
	// ACME and LOTS are 1 and 2.
	add(s, "TOP", "4294967295", 4294967295)
	add(s, "NEXT", "", 3)
	add(s, "FIVE", "5", 5)
	add(s, "AFTER", "", 4)
	s.Close()

	s = startServer(t, cfg, Options{})
	waitReady(t, s)
	add(s, "LATER", "", 6)
}
