package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/conftest"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
	"github.com/fixvenue/fixvenue/ops"
)

// TestAddInstrumentWithoutRestart lists an instrument on a running `fixvenue
// serve` with `fixvenue admin instrument add`, then shows that every part of
// the venue knows it: FIX clients find it in a SecurityList, trade it and
// subscribe to its market data; a feed client that was running before the
// addition builds its book; the admin API lists it. It survives a SIGTERM
// restart (from a snapshot) and a kill -9 restart (snapshots removed: the
// journal alone adds it again), book included. Bad requests are refused
// with the reason and change nothing.
func TestAddInstrumentWithoutRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const token = "add-instrument-token-0123456789"
	feedAddr := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	recoveryAddr := fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
	cfgPath := writeVenueConfig(t, dir, `[engine]
orders_max = 1024
clordids_max = 4096
command_ring_slots = 1024
event_ring_slots = 4096
instruments_max = 4
[journal]
snapshot_interval = "200ms"
%s[admin]
addr = "127.0.0.1:0"
[[admin.token]]
operator = "carol"
sha256 = %q
`, feedTOML(feedAddr, recoveryAddr), ops.HashToken(token))
	client, stop := runFeedClient(t, feedclient.Config{FeedAddr: feedAddr, RecoveryAddr: recoveryAddr})
	defer stop()

	v := startVenue(t, cfgPath)
	admin := adminRunner(t, v, token)
	add := []string{"instrument", "add", "NEWCO", "--tick-size", "0.05", "--lot-size", "10", "--min-qty", "10", "--max-qty", "10000",
		"--ref-price", "20.00", "--band-percent", "10", "--reason", "listing NEWCO"}
	with := func(args ...string) []string {
		out := append([]string(nil), add...)
		for i := 0; i < len(args); i += 2 {
			found := false
			for j := range out {
				if out[j] == args[i] {
					out[j+1], found = args[i+1], true
				}
			}
			if !found {
				out = append(out, args[i], args[i+1])
			}
		}
		return out
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{with("--tick-size", "0"), "bad_tick_size"},
		{with("--ref-price", "20.01"), "bad_price"},
		{with("--max-qty", "5"), "bad_quantity"},
		{with("--band-percent", "100"), "bad_band"},
		{with("--status", "sleepy"), "bad_status"},
		{with("--group", "equities"), "unknown_group"},
		{append(with(), "--id", "2"), "duplicate_instrument"},
		{[]string{"instrument", "add", "ACME", "--tick-size", "0.01", "--lot-size", "1", "--min-qty", "1", "--max-qty", "10",
			"--ref-price", "1", "--band-percent", "5", "--reason", "again"}, "duplicate_instrument"},
		// Each 422 names the one bound passed, where it listed three.
		{with("--tick-size", "0.0001", "--ref-price", "1000"), // 2,000,001 ticks: wider than a book side
			"band_percent 10 around ref_price 1000 spans 2000001 ticks of tick_size 0.0001, more than the 1048576 price levels"},
		// Above (2^63−1) / (1024 orders + 4096 ClOrdIDs + 1) = 1801088075933367.
		{with("--max-qty", "1801088075933370"), "max_qty 1801088075933370 is above 1801088075933367, (2^63-1) / (engine.orders_max + clordids_max + 1)"},
		// 3e14 × 22000 ticks (1100.00 at tick 0.05) passes 2^62−2.
		{with("--ref-price", "1000", "--max-qty", "300000000000000"),
			"max_qty 300000000000000 at the band's top (22000 ticks of tick_size 0.05) puts an order's notional above"},
	} {
		if code, out, errs := admin(c.args...); code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("admin %v: exit %d\n%s%s\nwant exit 1 with %q", c.args, code, out, errs, c.want)
		}
	}
	if code, out, errs := admin(add...); code != 0 || !strings.Contains(out, "AddInstrument: done by carol") ||
		!strings.Contains(out, "NEWCO id 4 Open, band 18.00..22.00") {
		t.Fatalf("instrument add: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := admin("instrument", "add", "FULL", "--tick-size", "1", "--lot-size", "1", "--min-qty", "1", "--max-qty", "1",
		"--ref-price", "10", "--band-percent", "5", "--reason", "one too many"); code != 1 || !strings.Contains(errs, "instruments_full") {
		t.Errorf("past engine.instruments_max: exit %d %s", code, errs)
	}

	// FIX: the SecurityList lists it, an order off its tick is refused, and
	// two sessions trade it; market data answers for it.
	c1, c2 := logOn(t, v.fixAddr, "CLIENT1"), logOn(t, v.fixAddr, "CLIENT2")
	if err := c1.Send("x", fixclient.F(320, "sl1"), fixclient.F(559, "0"), fixclient.F(55, "NEWCO")); err != nil {
		t.Fatal(err)
	}
	if m, err := c1.Expect(10*time.Second, "y", map[int]string{320: "sl1", 560: "0", 55: "NEWCO", 561: "10"}); err != nil ||
		!strings.Contains(m.Get(58), "price band 18.00-22.00") {
		t.Fatalf("SecurityList for NEWCO: %v %v", m, err)
	}
	order := func(c *fixclient.Client, id, side, qty, px string) {
		t.Helper()
		if err := c.Send("D", fixclient.F(11, id), fixclient.F(55, "NEWCO"), fixclient.F(54, side), fixclient.F(38, qty),
			fixclient.F(40, "2"), fixclient.F(44, px), fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
			t.Fatal(err)
		}
	}
	expectER := func(c *fixclient.Client, id string, want map[int]string) {
		t.Helper()
		want[11] = id
		if _, err := c.Expect(10*time.Second, "8", want); err != nil {
			t.Fatalf("order %s: %v", id, err)
		}
	}
	// Halted like any instrument: an order is refused until it resumes.
	if code, out, errs := admin("halt", "NEWCO", "--reason", "halt NEWCO"); code != 0 || !strings.Contains(out, "SetTradingStatus: done") {
		t.Fatalf("halt NEWCO: %d %s %s", code, out, errs)
	}
	order(c1, "halted", "1", "10", "20.00")
	expectER(c1, "halted", map[int]string{150: "8"})
	if code, out, errs := admin("resume", "NEWCO", "--reason", "resume NEWCO"); code != 0 || !strings.Contains(out, "SetTradingStatus: done") {
		t.Fatalf("resume NEWCO: %d %s %s", code, out, errs)
	}
	order(c1, "off-tick", "1", "10", "20.01")
	expectER(c1, "off-tick", map[int]string{150: "8"})
	order(c1, "b1", "1", "30", "20.00")
	expectER(c1, "b1", map[int]string{150: "0"})
	order(c2, "s1", "2", "20", "20.00")
	expectER(c2, "s1", map[int]string{150: "F", 31: "20.00", 32: "20"})
	expectER(c1, "b1", map[int]string{150: "F", 32: "20", 151: "10"})
	// FIX market data follows the feed, which sees a command after it is
	// durable, so the ExecutionReport can come first: ask until the
	// snapshot shows the fill (bounded).
	for i := 1; ; i++ {
		id := fmt.Sprintf("md%d", i)
		if err := c2.Send("V", fixclient.F(262, id), fixclient.F(263, "0"), fixclient.F(264, "0"), fixclient.F(267, "1"),
			fixclient.F(269, "0"), fixclient.F(146, "1"), fixclient.F(55, "NEWCO")); err != nil {
			t.Fatal(err)
		}
		w, err := c2.Expect(10*time.Second, "W", map[int]string{262: id, 55: "NEWCO"})
		if err == nil && strings.Contains(w.String(), "|269=0|270=20.00|271=10|") {
			break
		}
		if err != nil || i == 50 {
			t.Fatalf("market data snapshot of NEWCO: %v %v, want a bid of 10 at 20", w, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c1.Close()
	c2.Close()

	// The feed client, running since before the addition, holds its book.
	wantBook := func(stage string, bidLevels int, bidQty int64, volume int64) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		var got string
		for time.Now().Before(deadline) {
			if err := client.Inspect(context.Background(), func(c *feedclient.Client) {
				b := c.BookBySymbol("NEWCO")
				switch {
				case b == nil || !c.InSync():
					got = "no book in sync"
				case !b.Defined || b.InstrumentID != 4 || b.LotSize != 10 || len(b.Bids) != bidLevels || b.Bids[0].PriceTicks != 400 ||
					b.Bids[0].Qty != bidQty || b.Volume != volume:
					got = fmt.Sprintf("%+v", *b)
				default:
					got = ""
				}
			}); err != nil {
				t.Fatal(err)
			}
			if got == "" {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s: feed book of NEWCO: %s, want %d bid levels, the best 10 × 20.00, volume %d", stage, got, bidLevels, volume)
	}
	wantBook("after the trade", 1, 10, 20)
	wantListed := func(stage string, resting int) {
		t.Helper()
		code, out, errs := admin("instruments", "--json")
		var list []ops.InstrumentInfo
		if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 4 {
			t.Fatalf("%s: instruments: %d %s %s", stage, code, out, errs)
		}
		if in := list[3]; in.Symbol != "NEWCO" || in.ID != 4 || in.Bid != "20.00" || in.RestingOrders != resting || in.BandLow != "18.00" {
			t.Fatalf("%s: NEWCO is %+v", stage, in)
		}
	}
	wantListed("after the trade", 1)
	if book := engineBooks(t, cfgPath)["NEWCO"]; len(book.Bids) != 1 {
		t.Fatalf("journal book has no NEWCO bid: %+v", book)
	}

	// SIGTERM, once a snapshot (matcher and feed) holds the instrument.
	waitForFeedState(t, v.fixAddr, filepath.Join(dir, "data", "mdstate"), time.Now())
	v.stop(t)
	v = startVenue(t, cfgPath)
	if !v.loadedSnapshot() {
		t.Fatalf("the restart did not start from a snapshot:\n%s", v.logs())
	}
	admin = adminRunner(t, v, token)
	wantListed("after SIGTERM", 1)
	wantBook("after SIGTERM", 1, 10, 20)
	c1 = logOn(t, v.fixAddr, "CLIENT1")
	order(c1, "b2", "1", "50", "19.95")
	expectER(c1, "b2", map[int]string{150: "0"})
	c1.Close()

	// kill -9, and start from the journal alone.
	v.kill()
	removeSnapshots(t, filepath.Join(dir, "data", "mdstate"), filepath.Join(dir, "data", "journal"))
	v = startVenue(t, cfgPath)
	if v.loadedSnapshot() {
		t.Fatal("a snapshot was loaded after they were removed")
	}
	admin = adminRunner(t, v, token)
	wantListed("after kill -9", 2)
	wantBook("after kill -9", 2, 10, 20)
	if code, out, errs := admin("band", "NEWCO", "--ref-price", "20.50", "--band-percent", "5", "--reason", "band NEWCO"); code != 0 ||
		!strings.Contains(out, "SetPriceBand: done") {
		t.Fatalf("band NEWCO: %d %s %s", code, out, errs)
	}
	if code, out, _ := admin("instruments"); code != 0 || !strings.Contains(out, "19.50..21.50") {
		t.Fatalf("NEWCO's new band is not listed:\n%s", out)
	}
	c2 = logOn(t, v.fixAddr, "CLIENT2")
	order(c2, "s2", "2", "10", "20.00")
	expectER(c2, "s2", map[int]string{150: "F", 32: "10"})
	c2.Close()
	v.kill()

	dump, err := exec.Command(binPath, "journal", "dump", "--config", cfgPath).CombinedOutput()
	if err != nil {
		t.Fatalf("journal dump: %v\n%s", err, dump)
	}
	if !strings.Contains(string(dump), `symbol="NEWCO"`) || !strings.Contains(string(dump), `operator="carol" reason="listing NEWCO"`) {
		t.Error("the journal lacks the addition with its operator and reason")
	}
	for _, refused := range []string{`reason="one too many"`, `reason="again"`} {
		if strings.Contains(string(dump), refused) {
			t.Errorf("a call the API refused reached the journal: %s", refused)
		}
	}
}

// TestToolsRefuseAnInstrumentNewToAJournalThatChangedAll: an operator
// halted and resumed every instrument, so a configuration that adds NEWCO
// would replay that halt onto NEWCO too, which was not there when it ran.
// The venue does not start with it, and `fixvenue journal verify`, `book`
// and `dump`, which replay the journal under the configuration given (or
// are refused a configuration the venue is), refuse it the same way,
// naming NEWCO and the command; before, they rebuilt a venue that never
// ran. ACME and LOTS swapped are refused alike, and the configuration the
// venue ran with is read.
func TestToolsRefuseAnInstrumentNewToAJournalThatChangedAll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const token = "halt-all-token-0123456789"
	body := `[marketdata]
enabled = false
[admin]
addr = "127.0.0.1:0"
[[admin.token]]
operator = "hal"
sha256 = %q
[[session]]
comp_id = "CLIENT1"
%s`
	hash := ops.HashToken(token)
	cfg := writeVenueConfig(t, dir, body, hash, conftest.ACME+conftest.LOTS)
	v := startVenue(t, cfg)
	admin := adminRunner(t, v, token)
	for _, action := range []string{"halt", "resume"} {
		if code, out, errs := admin(action, "all", "--reason", "every instrument"); code != 0 {
			t.Fatalf("%s all: exit %d\n%s%s", action, code, out, errs)
		}
	}
	v.stop(t)
	for _, change := range []struct {
		instruments, want string
	}{
		{conftest.ACME + conftest.LOTS + conftest.NEWCO, "instrument id 3 (NEWCO) is new to the configuration, and the journal changes every instrument's status at seq"},
		{conftest.LOTS + conftest.ACME, "instrument id 2 (LOTS) is configured before id 1 (ACME), which the journal has in the other order"},
	} {
		changed := writeVenueConfig(t, dir, body, hash, change.instruments)
		for _, args := range [][]string{{"serve", "--config", changed}, {"journal", "verify", "--config", changed},
			{"journal", "book", "--config", changed}, {"journal", "dump", "--config", changed}} {
			// Bounded: a venue that did start would serve until killed.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			out, err := exec.CommandContext(ctx, binPath, args...).CombinedOutput()
			cancel()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), change.want) {
				t.Fatalf("fixvenue %s: %v\n%s", strings.Join(args[:2], " "), err, out)
			}
			if tool := args[0] != "serve"; strings.Contains(string(out), "Give --config the configuration the venue runs with") != tool {
				t.Fatalf("fixvenue %s: the wrong advice\n%s", strings.Join(args[:2], " "), out)
			}
		}
	}
	cfg = writeVenueConfig(t, dir, body, hash, conftest.ACME+conftest.LOTS)
	if out, err := exec.Command(binPath, "journal", "verify", "--config", cfg).CombinedOutput(); err != nil {
		t.Fatalf("journal verify with the configuration the venue ran with: %v\n%s", err, out)
	}
}

// adminRunner runs `fixvenue admin` against a venue with a token.
func adminRunner(t *testing.T, v *venueProc, token string) func(args ...string) (int, string, string) {
	addr := v.ready.AdminAddr
	if addr == "" {
		t.Fatalf("no admin API address in the ready file:\n%s", v.logs())
	}
	return func(args ...string) (int, string, string) {
		t.Helper()
		return runAdminCLI(t, addr, token, args...)
	}
}

// TestAddInstrumentWithRiskLimits: with [risk] limits configured, an
// instrument added by `fixvenue admin instrument add` takes the sessions'
// limits in force and a per-instrument limit set with `fixvenue admin risk
// limits --instrument`; a FIX order breaching either is rejected 103=3.
// The limit and the open figures survive a SIGTERM restart (snapshot) and a
// kill -9 restart from the journal alone.
func TestAddInstrumentWithRiskLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const token = "risk-instrument-token-0123456789"
	cfgPath := writeVenueConfig(t, dir, "[marketdata]\nenabled = false\n"+
		"[engine]\ninstruments_max = 4\n[journal]\nsnapshot_interval = \"200ms\"\n[session_defaults]\ncancel_on_disconnect = false\n"+
		"[admin]\naddr = \"127.0.0.1:0\"\n[[admin.token]]\noperator = \"rita\"\nsha256 = %q\n"+
		"[risk]\n[risk.sessions]\nmax_order_qty = 1000\n", ops.HashToken(token))
	v := startVenue(t, cfgPath)
	admin := adminRunner(t, v, token)
	if code, out, errs := admin("instrument", "add", "NEWCO", "--tick-size", "0.05", "--lot-size", "10", "--min-qty", "10",
		"--max-qty", "10000", "--ref-price", "20.00", "--band-percent", "10", "--reason", "listing NEWCO"); code != 0 ||
		!strings.Contains(out, "AddInstrument: done by rita") {
		t.Fatalf("instrument add with risk on: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := admin("risk", "limits", "--session", "CLIENT1", "--limit", "max_position", "--value", "20",
		"--instrument", "NEWCO", "--reason", "new listing cap"); code != 0 || !strings.Contains(out, "SetLimit: Applied by rita") {
		t.Fatalf("risk limit on the added instrument: exit %d\n%s%s", code, out, errs)
	}
	order := func(c *fixclient.Client, id, qty string, want map[int]string) {
		t.Helper()
		if err := c.Send("D", fixclient.F(11, id), fixclient.F(55, "NEWCO"), fixclient.F(54, "1"), fixclient.F(38, qty),
			fixclient.F(40, "2"), fixclient.F(44, "20.00"), fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
			t.Fatal(err)
		}
		want[11] = id
		if m, err := c.Expect(10*time.Second, "8", want); err != nil {
			t.Fatalf("order %s: %v %v", id, m, err)
		}
	}
	c1, c2 := logOn(t, v.fixAddr, "CLIENT1"), logOn(t, v.fixAddr, "CLIENT2")
	order(c1, "over", "30", map[int]string{150: "8", 103: "3", 58: "order exceeds limit: max position of session:CLIENT1 in NEWCO: 0 + 30 > 20"})
	order(c2, "big", "1010", map[int]string{150: "8", 103: "3"}) // the sessions' max_order_qty
	order(c1, "b1", "20", map[int]string{150: "0"})
	c2.Close()

	// A restart from the snapshot, then from the journal alone: the limit
	// and CLIENT1's open 20 are still there.
	stillLimited := func(id string) {
		t.Helper()
		c := logOn(t, v.fixAddr, "CLIENT1")
		order(c, id, "10", map[int]string{150: "8", 103: "3", 58: "order exceeds limit: max position of session:CLIENT1 in NEWCO: 20 + 10 > 20"})
		c.Close()
	}
	// Wait for a snapshot written after the order was accepted, with its
	// the console's state of the same seq (marketdata is off); a
	// snapshot needs commands since the last, so status requests keep coming.
	accepted := time.Now()
	if !statusRequestsUntil(t, c1, "NEWCO", func() bool { return completeSnapSince(filepath.Join(dir, "data"), accepted, "consolestate") }) {
		t.Fatalf("no snapshot after the order:\n%s", v.logs())
	}
	c1.Close()
	v.stop(t)
	v = startVenue(t, cfgPath)
	if !v.loadedSnapshot() {
		t.Fatalf("the restart did not start from a snapshot:\n%s", v.logs())
	}
	stillLimited("again1")
	v.kill()
	removeSnapshots(t, filepath.Join(dir, "data", "journal"))
	v = startVenue(t, cfgPath)
	if v.loadedSnapshot() {
		t.Fatal("a snapshot was loaded after they were removed")
	}
	stillLimited("again2")
	v.kill()
	dump, err := exec.Command(binPath, "journal", "dump", "--config", cfgPath).CombinedOutput()
	if err != nil {
		t.Fatalf("journal dump: %v\n%s", err, dump)
	}
	if !strings.Contains(string(dump), `operator="rita" reason="new listing cap"`) {
		t.Errorf("the journal lacks the limit change's operator and reason:\n%s", dump)
	}
}

// completeSnapSince reports whether data/journal holds a snapshot written
// after since that each companion folder of data holds too (same name).
func completeSnapSince(data string, since time.Time, companions ...string) bool {
	entries, _ := os.ReadDir(filepath.Join(data, "journal"))
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !strings.HasSuffix(e.Name(), ".snap") || !info.ModTime().After(since) {
			continue
		}
		complete := true
		for _, c := range companions {
			if _, err := os.Stat(filepath.Join(data, c, e.Name())); err != nil {
				complete = false
			}
		}
		if complete {
			return true
		}
	}
	return false
}
