package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/internal/conftest"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
)

// TestConfiguredInstrumentsMatchTheJournal: a resting order's price is in
// ticks of ACME's configured tick size. A restart whose configuration gives
// ACME another tick size, or drops it, is refused before anything is
// replayed, naming the difference; an instrument new to the configuration
// is accepted and recorded, and the order still rests.
func TestConfiguredInstrumentsMatchTheJournal(t *testing.T) {
	t.Parallel()
	dir := journalWithGTC(t)
	changed := testConfig(t, dir, "")
	changed.Instruments[0].TickSize = "0.05"
	refusedStart(t, changed, "ACME's tick size changed", "instrument id 1: tick_size 0.01 recorded, 0.05 configured")
	dropped := testConfig(t, dir, "")
	dropped.Instruments = dropped.Instruments[1:]
	refusedStart(t, dropped, "ACME dropped", "instrument id 1 (ACME) is no longer configured")

	s := startServer(t, testConfig(t, dir, newcoTOML), Options{})
	c := logon(t, s, "CLIENT1", true)
	if err := c.Send("H", fixclient.F(11, "gtc1"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "gtc1", 150: "I", 39: "0", 44: "99.00"})
	if rec := readRecord(t, dir); len(rec.Instruments) != 3 || rec.Instruments[2].Terms["symbol"] != "NEWCO" {
		t.Fatalf("record after adding NEWCO: %+v", rec)
	}
}

// TestConfiguredInstrumentOrderMatchesTheJournal: the matcher numbers the
// configured instruments in the configuration's order, and a command for
// every instrument (an operator's halt of all) changes them in that order,
// so the same journal replays to other events with ACME and LOTS swapped
// (and its snapshots, which list the instruments by position, no longer
// load). A restart with them swapped is refused, naming the order, as one
// with two sessions swapped is; an instrument new to the configuration may
// come anywhere, the recorded ones keeping their order.
func TestConfiguredInstrumentOrderMatchesTheJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, testConfig(t, dir, adminConfig()), Options{})
	if code := adminCall(t, s, "POST", "/v1/instruments/all/halt", aliceToken, `{"reason":"order test"}`, nil); code != 200 {
		t.Fatalf("halt all: %d", code)
	}
	s.Close()
	swapped := testConfig(t, dir, adminConfig())
	swapped.Instruments[0], swapped.Instruments[1] = swapped.Instruments[1], swapped.Instruments[0]
	jdir := filepath.Join(dir, "journal")
	inOrder, err := journal.Verify(jdir, MatcherConfig(testConfig(t, dir, adminConfig())), nil)
	if err != nil {
		t.Fatal(err)
	}
	reordered, err := journal.Verify(jdir, MatcherConfig(swapped), nil)
	if err != nil {
		t.Fatal(err)
	}
	if inOrder.EventsHash == reordered.EventsHash {
		t.Fatalf("the journal replays to the same events with the instruments swapped (%s): the test shows nothing", inOrder)
	}
	refusedStart(t, swapped, "ACME and LOTS swapped", "instrument id 2 (LOTS) is configured before id 1 (ACME), which the journal has in the other order")
	refusedStart(t, swapped, "ACME and LOTS swapped", "keep the recorded ones in that order")
	if _, err := CheckTermsRecord(swapped); err == nil || !strings.Contains(err.Error(), "configured before id 1 (ACME)") {
		t.Fatalf("the tools' check of a configuration with ACME and LOTS swapped: %v", err)
	}

	// Another journal, of a resting order: NEWCO configured before ACME
	// and LOTS, which keep their order.
	dir = journalWithGTC(t)
	first := testConfig(t, dir, newcoTOML)
	first.Instruments = append(first.Instruments[2:], first.Instruments[:2]...)
	startServer(t, first, Options{}).Close()
	if rec := readRecord(t, dir); len(rec.Instruments) != 3 || rec.Instruments[0].Terms["symbol"] != "NEWCO" {
		t.Fatalf("record after adding NEWCO first: %+v", rec.Instruments)
	}
}

// TestConfiguredInstrumentNewToAJournalThatChangedAll: an operator's halt
// of every instrument is one command, which a replay applies to every
// instrument the matcher has then. An instrument new to the configuration
// was not there when it ran: replayed, it would start halted and the replay
// would give events the venue never gave (the feed's among them). So a
// start that adds an instrument to a journal holding such a command is
// refused, naming both and the admin API's way to list it; the same
// configuration without it starts.
func TestConfiguredInstrumentNewToAJournalThatChangedAll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, testConfig(t, dir, adminConfig()), Options{})
	for _, action := range []string{"halt", "resume"} {
		if code := adminCall(t, s, "POST", "/v1/instruments/all/"+action, aliceToken, `{"reason":"every instrument"}`, nil); code != 200 {
			t.Fatalf("%s all: %d", action, code)
		}
	}
	s.Close()
	added := testConfig(t, dir, adminConfig()+newcoTOML)
	refusedStart(t, added, "NEWCO added after a halt of all", "instrument id 3 (NEWCO) is new to the configuration, and the journal changes every instrument's status at seq 0")
	refusedStart(t, added, "NEWCO added after a halt of all", "list it through the admin API")
	s = startServer(t, testConfig(t, dir, adminConfig()), Options{})
	if st := instrumentsOf(t, s)["ACME"].Status; st != "Open" {
		t.Fatalf("ACME after the refused start: %s", st)
	}
	if _, ok := instrumentsOf(t, s)["NEWCO"]; ok {
		t.Fatal("NEWCO is listed after the refused start")
	}
	s.Close()
}

// TestClusterNodeRefusesAnInstrumentNewToAJournalThatChangedAll: a
// cluster node's start replays its committed journal into its standby
// matcher, as a single venue's start replays its journal, and is refused
// alike when the configuration adds an instrument to a journal holding a
// halt of all: each node, the leader that ran the halt and the followers
// that applied it. Before, each started with NEWCO halted by the replay,
// the standby's events past those the leader had given. Recorded
// instruments swapped are refused too, before anything is replayed; the
// configuration the cluster ran with starts.
func TestClusterNodeRefusesAnInstrumentNewToAJournalThatChangedAll(t *testing.T) {
	t.Parallel()
	admin := testConfig(t, t.TempDir(), adminConfig()).Admin
	newco := testConfig(t, t.TempDir(), newcoTOML).Instruments[2]
	nodes := startInProcessCluster(t, newPromotionPause("not logged"), func(_ int, cfg *config.Config) { cfg.Admin = admin })
	var leader *Server
	var leading *ClusterNode
	for deadline := time.Now().Add(30 * time.Second); leader == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no node leads 30 s after the start")
		}
		for _, n := range nodes {
			if s := n.Server(); s != nil {
				leader, leading = s, n
			}
		}
	}
	for _, action := range []string{"halt", "resume"} {
		if code := adminCall(t, leader, "POST", "/v1/instruments/all/"+action, aliceToken, `{"reason":"every instrument"}`, nil); code != 200 {
			t.Fatalf("%s all: %d", action, code)
		}
	}
	// Each node has committed both and recorded the terms (once it knew
	// the leader), so its next start replays them against the record.
	committed := leading.node.Committed().Load() // acknowledged: committed
	for i, n := range nodes {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			_, err := os.Stat(filepath.Join(n.cfg.Venue.DataDir, termsRecordFile))
			if err == nil && n.node.Committed().Load() >= committed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d: committed %d of %d, terms record: %v", i+1, n.node.Committed().Load(), committed, err)
			}
		}
	}
	cfgs := make([]*config.Config, len(nodes))
	for i, n := range nodes {
		cfgs[i] = n.cfg
		if err := n.Close(); err != nil {
			t.Logf("node %d: Close: %v", i+1, err)
		}
		nodes[i] = nil // closed here, not by the cleanup
	}
	start := func(i int, cfg *config.Config) (*ClusterNode, error) {
		return StartCluster(cfg, Options{Logger: testLogger(t).With("restart", i+1)})
	}
	refused := func(i int, what string, change func(cfg *config.Config), want string) {
		t.Helper()
		cfg := *cfgs[i]
		cfg.Instruments = slices.Clone(cfg.Instruments)
		change(&cfg)
		c, err := start(i, &cfg)
		if err == nil {
			c.Close()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("node %d started with %s: %v (want %q)", i+1, what, err, want)
		}
	}
	for i := range cfgs {
		refused(i, "NEWCO added after a halt of all", func(cfg *config.Config) { cfg.Instruments = append(cfg.Instruments, newco) },
			"instrument id 3 (NEWCO) is new to the configuration, and the journal changes every instrument's status at seq")
	}
	swap := func(cfg *config.Config) {
		cfg.Instruments[0], cfg.Instruments[1] = cfg.Instruments[1], cfg.Instruments[0]
	}
	refused(0, "ACME and LOTS swapped", swap, "instrument id 2 (LOTS) is configured before id 1 (ACME), which the journal has in the other order")
	c, err := start(0, cfgs[0])
	if err != nil {
		t.Fatalf("node 1 with the configuration the cluster ran with: %v", err)
	}
	c.Close()
}

// journalWithGTC returns a data directory whose journal has CLIENT1's GTC
// buy gtc1 resting at 99.00 on ACME, the venue stopped.
func journalWithGTC(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, c, _ := restingGTC(t, dir, "gtc1", "99.00")
	c.Close()
	s.Close()
	return dir
}

func readRecord(t *testing.T, dir string) termsRecord {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, termsRecordFile))
	if err != nil {
		t.Fatal(err)
	}
	var rec termsRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return rec
}

// refusedStart asserts that New refuses cfg naming want.
func refusedStart(t *testing.T, cfg *config.Config, what, want string) {
	t.Helper()
	if s, err := New(cfg, Options{Logger: testLogger(t)}); err == nil || !strings.Contains(err.Error(), want) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("a restart with %s: %v (want %q)", what, err, want)
	}
}

// TestConfiguredSessionsMatchTheJournal: commands name their session by
// its index in the configuration. CLIENT1 (index 0) rests an order; a
// restart with CLIENT1 and CLIENT2 swapped would hand CLIENT2 that order
// (its fills, its cancel), so it is refused, as is one without the last
// session; a session added after the recorded ones is accepted, and the
// order is still CLIENT1's.
func TestConfiguredSessionsMatchTheJournal(t *testing.T) {
	t.Parallel()
	dir := journalWithGTC(t)
	swapped := testConfig(t, dir, "")
	swapped.Sessions[0], swapped.Sessions[1] = swapped.Sessions[1], swapped.Sessions[0]
	refusedStart(t, swapped, "CLIENT1 and CLIENT2 swapped", "session index 0 is CLIENT1 in the journal, CLIENT2 configured; session index 1 is CLIENT2 in the journal, CLIENT1 configured")
	dropped := testConfig(t, dir, "")
	dropped.Sessions = dropped.Sessions[:len(dropped.Sessions)-1]
	refusedStart(t, dropped, "SLOW dropped", "session SLOW (index 4) is no longer configured")

	s := startServer(t, testConfig(t, dir, "[[session]]\ncomp_id = \"LATE\"\n"), Options{})
	late := logon(t, s, "LATE", true)
	if err := late.Send("H", fixclient.F(11, "gtc1"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, late, map[int]string{11: "gtc1", 150: "I", 39: "8"}) // not LATE's order
	c := logon(t, s, "CLIENT1", true)
	if err := c.Send("H", fixclient.F(11, "gtc1"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "gtc1", 150: "I", 39: "0", 44: "99.00"})
	if rec := readRecord(t, dir); len(rec.Sessions) != 6 || rec.Sessions[0] != "CLIENT1" || rec.Sessions[5] != "LATE" {
		t.Fatalf("sessions recorded after adding LATE: %v", rec.Sessions)
	}
}

// TestMatcherTermsMatchTheJournal: the matcher's bounds and risk limits
// decide which journaled orders it accepts on replay, so a restart that
// changes them is refused, naming each and where a limit is changed.
func TestMatcherTermsMatchTheJournal(t *testing.T) {
	dir := journalWithGTC(t)
	bigger := testConfig(t, dir, "")
	bigger.Engine.OrdersMax *= 2 // alone, verified (TestBoundChangeIsVerified)
	bigger.Engine.IndicativeInterval.Duration = time.Second
	refusedStart(t, bigger, "orders_max doubled and an indicative interval", "engine.indicative_interval 0s recorded, 1s configured; engine.orders_max 4096 recorded, 8192 configured")
	refusedStart(t, bigger, "orders_max doubled and an indicative interval", "once the journal replays the same under both values")
	limited := testConfig(t, dir, "[risk.sessions]\nmax_order_qty = 2\n")
	refusedStart(t, limited, "risk limits turned on", "risk off recorded, on configured; risk.sessions.max_order_qty none recorded, 2 configured")
	refusedStart(t, limited, "risk limits turned on", "keep the recorded setting")

	// Under limits, a changed limit is named with the way to change it.
	dir = t.TempDir()
	s := startServer(t, testConfig(t, dir, "[risk.sessions]\nmax_order_qty = 5\n"), Options{})
	empty := testConfig(t, dir, "[risk.sessions]\nmax_order_qty = 3\n")
	s.Close()
	// A journal that holds no command yet takes the configured terms (a
	// first start that failed on a port in use recorded its own).
	s = startServer(t, empty, Options{})
	if rec := readRecord(t, dir); rec.Matcher["risk.sessions.max_order_qty"] != "3" {
		t.Fatalf("record after a start on an empty journal: %v", rec.Matcher)
	}
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "r1", side: "1", qty: "1", px: "99.00", tif: "1"})
	expectER(t, c, map[int]string{11: "r1", 150: "0"})
	s.Close()
	refusedStart(t, testConfig(t, dir, "[risk.sessions]\nmax_order_qty = 5\n"), "the limit as first recorded", "max_order_qty 3 recorded, 5 configured")
	refusedStart(t, testConfig(t, dir, "[risk.sessions]\nmax_order_qty = 2\n"), "a lower limit",
		"risk.sessions.max_order_qty 3 recorded, 2 configured")
	refusedStart(t, testConfig(t, dir, "[risk.sessions]\nmax_order_qty = 2\n"), "a lower limit", `the admin API, which journals each change (README, "Risk limits")`)
	startServer(t, testConfig(t, dir, "[risk.sessions]\nmax_order_qty = 3\n"), Options{}).Close()
}

// TestInstrumentOnlyRecordIsChecked: a data directory whose record holds
// only the instruments (written before sessions and matcher terms were
// recorded) is checked against it, and on a start that passes it is
// replaced by the whole record.
func TestInstrumentOnlyRecordIsChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, "")
	old := termsOf(cfg).Instruments
	old[0].Terms["tick_size"] = "0.05"
	b, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(dir, instrumentRecordFile)
	if err := os.WriteFile(legacy, b, 0o600); err != nil {
		t.Fatal(err)
	}
	refusedStart(t, cfg, "an instrument-only record with another tick", "instrument id 1: tick_size 0.05 recorded, 0.01 configured")
	refusedStart(t, cfg, "an instrument-only record with another tick", "move "+legacy+" aside")
	old[0].Terms["tick_size"] = "0.01"
	if b, err = json.Marshal(old); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(legacy, b, 0o600); err != nil {
		t.Fatal(err)
	}
	startServer(t, cfg, Options{}).Close()
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Fatalf("the instrument-only record is still there: %v", err)
	}
	if rec := readRecord(t, dir); len(rec.Sessions) != 5 || rec.Matcher["engine.orders_max"] != "4096" || len(rec.Instruments) != len(old) {
		t.Fatalf("record written in its place: %+v", rec)
	}
}

// TestMatcherTermsCoverTheMatcherConfig: every field of the matcher's
// configuration is either in the record or set by nothing a configuration
// can change between two starts of one journal; a new field fails here
// until it is one or the other.
func TestMatcherTermsCoverTheMatcherConfig(t *testing.T) {
	covered := map[string]string{
		"OrdersMax": "engine.orders_max", "ClOrdIDsMax": "engine.clordids_max", "Instruments": "instruments",
		"Risk": "risk", "IndicativeIntervalNs": "engine.indicative_interval", "SessionsMax": "sessions",
		"InstrumentsMax": "engine.instruments_max",
		// Not recorded: not set from the configuration (MatcherConfig leaves them zero).
		"StopsMax": "", "LevelsPerSideMax": "", "AccountStpModes": "",
	}
	typ := reflect.TypeOf(core.Config{})
	for i := range typ.NumField() {
		if _, ok := covered[typ.Field(i).Name]; !ok {
			t.Errorf("core.Config.%s is neither recorded (termsrecord.go) nor listed here as left out", typ.Field(i).Name)
		}
	}
	mc := MatcherConfig(testConfig(t, t.TempDir(), ""))
	v := reflect.ValueOf(mc)
	for i := range typ.NumField() {
		if covered[typ.Field(i).Name] == "" && !v.Field(i).IsZero() {
			t.Errorf("core.Config.%s is set from the configuration but not recorded", typ.Field(i).Name)
		}
	}
}

// TestEngineTermNewToTheRecordIsRecorded: a record written before an engine
// term was recorded does not refuse the start: the term is added to it.
func TestEngineTermNewToTheRecordIsRecorded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, "")
	old := termsOf(cfg)
	delete(old.Matcher, "engine.instruments_max")
	if err := writeTermsRecord(filepath.Join(dir, termsRecordFile), old); err != nil {
		t.Fatal(err)
	}
	startServer(t, cfg, Options{}).Close()
	if rec := readRecord(t, dir); rec.Matcher["engine.instruments_max"] != "0" {
		t.Fatalf("record after the start: %+v", rec.Matcher)
	}
}

// TestBoundChangeIsVerified: a single venue starts with a new
// engine.orders_max (or clordids_max), and nothing else changed, once the
// journal replays the same under the recorded and the configured value; a
// journal that reached the recorded bound (an order refused there would be
// taken) or would reach the configured one is refused, naming the bound,
// until a snapshot after that point is where a start replays from.
func TestBoundChangeIsVerified(t *testing.T) {
	dir := t.TempDir()
	withBound := func(orders int) *config.Config {
		cfg := testConfig(t, dir, adminConfig()+"[session_defaults]\ncancel_on_disconnect = false\n")
		cfg.Engine.OrdersMax = orders
		none := 0 // one session fills the pool: no bound of its own (openbound_test.go)
		cfg.SessionDefaults.OpenOrdersMax = &none
		cfg.Journal.SnapshotInterval.Duration = 0 // every start replays the whole journal
		return cfg
	}
	rest := func(c *fixclient.Client, ids ...string) {
		t.Helper()
		for i, id := range ids {
			sendOrder(t, c, order{id: id, side: "1", qty: "1", px: fmt.Sprintf("%d.00", 90+i)})
			expectER(t, c, map[int]string{11: id, 150: "0"})
		}
	}
	s := startServer(t, withBound(4), Options{})
	rest(logon(t, s, "CLIENT1", true), "a1", "a2", "a3")
	s.Close()

	// Raised: the three orders are still there, and five more fit.
	s = startServer(t, withBound(8), Options{})
	if rec := readRecord(t, dir); rec.Matcher["engine.orders_max"] != "8" {
		t.Fatalf("record after the raise: %v", rec.Matcher)
	}
	waitInstrument(t, s, "ACME", "the orders from before the raise", func(st ops.InstrumentInfo) bool { return st.RestingOrders == 3 })
	c := logon(t, s, "CLIENT1", true)
	rest(c, "b1", "b2", "b3", "b4", "b5")
	sendOrder(t, c, order{id: "full", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "full", 150: "8", 58: gateway.CapacityText})
	s.Close()

	// The journal reached 8: under 16 the refused order would rest, under
	// 7 the eighth would be refused.
	refusedStart(t, withBound(16), "orders_max raised past a bound the journal reached", "engine.orders_max 8 recorded, 16 configured. The journal replays differently")
	refusedStart(t, withBound(7), "orders_max lowered below what the journal used", "engine.orders_max 8 recorded, 7 configured. The journal replays differently")
	if rec := readRecord(t, dir); rec.Matcher["engine.orders_max"] != "8" {
		t.Fatalf("record after refused starts: %v", rec.Matcher)
	}
	s = startServer(t, withBound(8), Options{})
	waitInstrument(t, s, "ACME", "every order after the refused starts", func(st ops.InstrumentInfo) bool { return st.RestingOrders == 8 })
	// An end of day's snapshot is where the next start replays from: the
	// refused order is behind it, and the raise holds from there.
	if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"day done"}`, nil); code != 200 {
		t.Fatalf("eod: %d", code)
	}
	s.Close()
	startServer(t, withBound(16), Options{}).Close()
	if rec := readRecord(t, dir); rec.Matcher["engine.orders_max"] != "16" {
		t.Fatalf("record after the raise from the snapshot: %v", rec.Matcher)
	}
}

// TestJournalShorterThanAtTheLastStartIsRefused: the terms record keeps the
// journal's next seq at each start, every record then being durable. A
// journal directory that is gone (a volume not mounted) or empty, or whose
// last segment is lost, refuses the start naming what is missing, instead
// of starting an empty venue that lost every answered order; with the
// journal back, the venue starts with its order.
func TestJournalShorterThanAtTheLastStartIsRefused(t *testing.T) {
	t.Parallel()
	dir := journalWithGTC(t)
	s := startServer(t, testConfig(t, dir, ""), Options{}) // records the journal as this start found it
	s.Close()
	if rec := readRecord(t, dir); rec.JournalNextSeq == 0 {
		t.Fatalf("journal_next_seq not recorded: %+v", rec)
	}
	jdir := filepath.Join(dir, "journal")
	if err := os.Rename(jdir, jdir+".away"); err != nil {
		t.Fatal(err)
	}
	refusedStart(t, testConfig(t, dir, ""), "the journal directory gone", "the journal in "+jdir+" ends before seq 0, and when the venue last started or stopped cleanly it held every command before seq")
	if err := os.RemoveAll(jdir); err != nil { // the refused start made it: an empty mount point
		t.Fatal(err)
	}
	if err := os.Rename(jdir+".away", jdir); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, testConfig(t, dir, ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	if err := c.Send("H", fixclient.F(11, "gtc1"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "gtc1", 150: "I", 39: "0"})
}

// TestCleanStopRecordsTheJournalEnd: a clean stop records the journal's
// next seq in the terms record, as a start does, under journal.fsync =
// "batch", so that the next start refuses damage to the last records, the
// commands answered just before the stop, instead of cutting it as a torn
// tail. Under "none" a close does not sync, so nothing is recorded: a
// power cut may yet take those records, as that policy accepts.
func TestCleanStopRecordsTheJournalEnd(t *testing.T) {
	t.Parallel()
	for _, policy := range []journal.Policy{journal.PolicyBatch, journal.PolicyNone} {
		t.Run(policy.String(), func(t *testing.T) { // one after the other: the same sessions (venueCompID)
			dir := t.TempDir()
			cfg := testConfig(t, dir, adminConfig())
			cfg.Journal.Fsync = policy
			s := startServer(t, cfg, Options{})
			var res struct {
				Seq *uint64 `json:"seq"`
			}
			if code := adminCall(t, s, "POST", "/v1/instruments/ACME/halt", aliceToken, `{"reason":"before the stop"}`, &res); code != 200 || res.Seq == nil {
				t.Fatalf("halt: %d, seq %v", code, res.Seq)
			}
			s.Close()
			want := uint64(0) // the first start found an empty journal
			if policy == journal.PolicyBatch {
				want = *res.Seq + 1
			}
			if got := readRecord(t, dir).JournalNextSeq; got != want {
				t.Fatalf("journal_next_seq after the stop is %d, want %d (the halt's seq %d)", got, want, *res.Seq)
			}
		})
	}
}

// TestJournalBehindTheFIXStoresIsRefused: a journal that lost its newest
// segment after a crash (no snapshot or terms record marks how far it
// went: a clean stop records its end, which refuses the start first) is
// found short by the sessions' FIX stores, which hold reports of the lost
// commands: the start is refused, naming the store and both ExecIDs,
// instead of starting without acknowledged orders and issuing their
// ExecIDs again.
func TestJournalBehindTheFIXStoresIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, "")
	cfg.Journal.SegmentBytes = 8192 // below the configuration's floor: several segments
	cfg.Journal.SnapshotInterval.Duration = 0
	s := startServer(t, cfg, Options{})
	atStart, err := os.ReadFile(filepath.Join(dir, termsRecordFile))
	if err != nil {
		t.Fatal(err)
	}
	c := logon(t, s, "CLIENT1", true)
	for i := range 60 {
		sendOrder(t, c, order{id: fmt.Sprintf("o%d", i), side: "1", qty: "1", px: "99.00"})
		expectER(t, c, map[int]string{11: fmt.Sprintf("o%d", i), 150: "0"})
	}
	s.Close()
	segs, err := filepath.Glob(filepath.Join(dir, "journal", "journal-*.seg"))
	if err != nil || len(segs) < 2 {
		t.Fatalf("segments %v, %v: want several", segs, err)
	}
	sort.Strings(segs)
	if err := os.Remove(segs[len(segs)-1]); err != nil {
		t.Fatal(err)
	}
	refusedStart(t, cfg, "the newest segment lost after a clean stop", "when the venue last started or stopped cleanly it held every command before seq")
	// The record as a crash leaves it: as the start wrote it.
	if err := os.WriteFile(filepath.Join(dir, termsRecordFile), atStart, 0o640); err != nil {
		t.Fatal(err)
	}
	refusedStart(t, cfg, "the newest segment lost after a crash", "but session CLIENT1's FIX store holds ExecID 120")
}

// TestTermsHashCoversWhatClientsSee: a cluster's nodes compare termsHash at
// their streams' hello. Besides the journal's terms it covers what the
// clients see of whichever node leads: the venue's CompID (a node with
// another would refuse every logon once it led), a session's CompID for
// the venue, cancel-on-disconnect and drop-copy grants. A password does not
// count.
func TestTermsHashCoversWhatClientsSee(t *testing.T) {
	base := testConfig(t, t.TempDir(), "")
	want, err := termsHash(base)
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	for _, c := range []struct {
		name   string
		change func(*config.Config)
		same   bool
	}{
		{"the venue's CompID", func(c *config.Config) { c.Venue.SenderCompID = "XVENUE" }, false},
		{"a session's venue CompID", func(c *config.Config) { c.Sessions[0].SenderCompID = "OTHER" }, false},
		{"cancel-on-disconnect", func(c *config.Config) {
			on := !c.CancelOnDisconnect(&c.Sessions[1])
			c.Sessions[1].CancelOnDisconnect = &on
		}, false},
		{"a drop-copy grant", func(c *config.Config) {
			c.Sessions[1].Kind, c.Sessions[1].CopyAll = config.KindDropCopy, yes
		}, false},
		{"a password", func(c *config.Config) { c.Sessions[0].Password = "changed" }, true},
	} {
		cfg := testConfig(t, t.TempDir(), "")
		c.change(cfg)
		got, err := termsHash(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if (got == want) != c.same {
			t.Errorf("%s: hash %08x, base %08x; want same=%v", c.name, got, want, c.same)
		}
	}
}

// newcoTOML configures NEWCO, id 3, an instrument new to the journals of
// these tests.
const newcoTOML = conftest.NEWCO

// TestCallExtensionIsATerm: whether a call is extended decides what a
// journaled phase change does, so a journal written without call
// extensions (call_extension = false, or a build before them, whose record
// lacks the term) is refused under a configuration that extends calls,
// naming the term and how to start, and starts under call_extension =
// false; a journal written with them is refused without them. An
// instrument that does not extend its calls records no term, so its terms
// read, and hash, as a build before the rule wrote them.
func TestCallExtensionIsATerm(t *testing.T) {
	t.Parallel()
	off := false
	banded := func(dir string, extend *bool) *config.Config {
		cfg := testConfig(t, dir, "")
		cfg.Instruments[0].VolatilityBandTicks = 100
		cfg.Instruments[0].CallExtension = extend
		return cfg
	}
	// rest journals a resting order under cfg: a command to protect.
	rest := func(cfg *config.Config, id string) {
		s := startServer(t, cfg, Options{})
		c := logon(t, s, "CLIENT1", true)
		sendOrder(t, c, order{id: id, side: "1", qty: "1", px: "99.00", tif: "1"})
		expectER(t, c, map[int]string{11: id, 150: "0"})
		c.Close()
		s.Close()
	}
	dir := t.TempDir()
	rest(banded(dir, &off), "gtc1")
	if rec := readRecord(t, dir); rec.Instruments[0].Terms["call_extension"] != "" {
		t.Fatalf("an instrument without call extensions recorded the term: %+v", rec.Instruments[0].Terms)
	}
	refusedStart(t, banded(dir, nil), "call extensions on", "instrument id 1: call_extension false recorded, true configured")
	refusedStart(t, banded(dir, nil), "call extensions on", "set call_extension = false on the instrument")
	startServer(t, banded(dir, &off), Options{}).Close()

	dir = t.TempDir()
	rest(banded(dir, nil), "gtc2")
	if rec := readRecord(t, dir); rec.Instruments[0].Terms["call_extension"] != "true" {
		t.Fatalf("call extensions not recorded: %+v", rec.Instruments[0].Terms)
	}
	refusedStart(t, banded(dir, &off), "call extensions off", "instrument id 1: call_extension true recorded, false configured")
}

// TestCallExtensionInTheTermsHash: a cluster's nodes must agree on call
// extensions (a phase change would extend a call on one node and uncross
// it on another), so the terms hash covers the term; off, the term is not
// in the terms at all (TestCallExtensionIsATerm), so the hash is the one a
// build before the rule computed.
func TestCallExtensionInTheTermsHash(t *testing.T) {
	hash := func(extend *bool) uint32 {
		cfg := testConfig(t, t.TempDir(), "")
		cfg.Instruments[0].VolatilityBandTicks = 100
		cfg.Instruments[0].CallExtension = extend
		h, err := termsHash(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	off := false
	if on, without := hash(nil), hash(&off); on == without {
		t.Fatalf("call extensions on and off hash alike: %08x", on)
	}
}
