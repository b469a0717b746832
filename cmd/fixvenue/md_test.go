package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/conftest"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/testports"
)

// freeUDPPort and freeTCPPort return a loopback port free a moment ago and
// outside the ephemeral range (internal/testports), for the addresses a test
// must know before the venue starts.
func freeUDPPort(t *testing.T) int { return freePort(t, "udp") }

// feedVenueConfig writes the configuration (writeVenueConfig, in a
// directory of its own) of a venue whose feed sends to a free UDP port on
// loopback, with its recovery service on another and heartbeats every
// 200 ms; tables are its sessions and instruments, a %% for each %.
func feedVenueConfig(t *testing.T, tables string) string {
	t.Helper()
	return writeVenueConfig(t, t.TempDir(), "[marketdata]\nfeed_addr = \"127.0.0.1:%d\"\nrecovery_addr = \"127.0.0.1:0\"\nheartbeat_interval = \"200ms\"\n"+tables, freeUDPPort(t))
}

func freeTCPPort(t *testing.T) int { return freePort(t, "tcp") }

func freePort(t *testing.T, network string) int {
	t.Helper()
	ports, release := testports.Reserve(t, network, 1)
	release()
	return ports[0]
}

// TestMarketDataBookEndToEnd sends orders over FIX to `fixvenue serve` and
// reads the book back with `fixvenue md book --json` from the UDP feed and
// its TCP recovery service.
func TestMarketDataBookEndToEnd(t *testing.T) {
	t.Parallel()
	cfg := feedVenueConfig(t, "[[session]]\ncomp_id = \"CLIENT%%d\"\nrange = [1, 2]\n")
	v := startVenue(t, cfg)
	c := logOn(t, v.fixAddr, "CLIENT1")
	defer c.Close()
	orders := []struct{ id, side, qty, px string }{
		{"b1", "1", "10", "99.50"}, {"b2", "1", "5", "99.50"}, {"b3", "1", "7", "99.00"},
		{"s1", "2", "3", "100.50"}, {"s2", "2", "4", "101.00"}, {"x", "2", "2", "99.50"}, // x trades 2 against b1
	}
	for _, o := range orders {
		if err := c.Send("D", fixclient.F(11, o.id), fixclient.F(55, "ACME"), fixclient.F(54, o.side),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, o.qty), fixclient.F(40, "2"),
			fixclient.F(44, o.px), fixclient.F(59, "1")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Expect(10*time.Second, "8", map[int]string{11: "x", 39: "2"}); err != nil {
		t.Fatal(err)
	}
	// The last order is an iceberg that rests, and no event follows it: the
	// feed shows its display once its command is, not at the next event.
	if err := c.Send("D", fixclient.F(11, "ice"), fixclient.F(55, "ACME"), fixclient.F(54, "2"),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "50"), fixclient.F(40, "2"),
		fixclient.F(44, "102.00"), fixclient.F(59, "1"), fixclient.F(111, "10")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(10*time.Second, "8", map[int]string{11: "ice", 150: "0"}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binPath, "md", "book", "--symbol", "ACME", "--json", "--feed-addr", v.ready.FeedAddr, "--recovery-addr", v.ready.RecoveryAddr).Output()
	if err != nil {
		t.Fatalf("md book: %v", err)
	}
	var book struct {
		Symbol string      `json:"symbol"`
		Seq    uint64      `json:"seq"`
		Bids   [][]float64 `json:"bids"`
		Asks   [][]float64 `json:"asks"`
	}
	if err := json.Unmarshal(out, &book); err != nil {
		t.Fatalf("md book printed %q: %v", out, err)
	}
	wantBids := [][]float64{{99.50, 13, 2}, {99.00, 7, 1}}
	wantAsks := [][]float64{{100.50, 3, 1}, {101.00, 4, 1}, {102.00, 10, 1}}
	if book.Symbol != "ACME" || book.Seq == 0 || fmt.Sprint(book.Bids) != fmt.Sprint(wantBids) || fmt.Sprint(book.Asks) != fmt.Sprint(wantAsks) {
		t.Fatalf("book = %s\nwant bids %v asks %v", out, wantBids, wantAsks)
	}
	// The engine's book, rebuilt from the journal, shows the same levels:
	// the iceberg with its display, not its reserve of 40.
	jout, err := exec.Command(binPath, "journal", "book", "--config", cfg, "--symbol", "ACME").Output()
	if err != nil {
		t.Fatalf("journal book: %v", err)
	}
	var engine struct{ Bids, Asks [][]float64 }
	if err := json.Unmarshal(jout, &engine); err != nil {
		t.Fatalf("journal book printed %q: %v", jout, err)
	}
	if fmt.Sprint(engine.Bids) != fmt.Sprint(wantBids) || fmt.Sprint(engine.Asks) != fmt.Sprint(wantAsks) {
		t.Fatalf("journal book = %s, md book = %s", jout, out)
	}
	// A book of a symbol the feed does not list is an error, naming it and
	// those the feed lists.
	bout, err := exec.Command(binPath, "md", "book", "--symbol", "NOPE", "--feed-addr", v.ready.FeedAddr, "--recovery-addr", v.ready.RecoveryAddr).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(bout), `no such symbol: "NOPE" (the feed lists ACME, GLOBEX, INITECH)`) {
		t.Fatalf("md book --symbol NOPE: %v\n%s", err, bout)
	}
	// A B line at the A line's address is a usage error, said before any
	// socket is opened.
	bout, err = exec.Command(binPath, "md", "book", "--feed-addr", v.ready.FeedAddr, "--feed-b-addr", v.ready.FeedAddr,
		"--recovery-addr", v.ready.RecoveryAddr).CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(bout), "--feed-b-addr is --feed-addr") {
		t.Fatalf("md book --feed-b-addr as --feed-addr: %v\n%s", err, bout)
	}
}

// TestMarketDataWatchWaitsForAnInstrumentAddedLater: `fixvenue md watch` on
// a symbol the feed does not list yet says so, naming those it lists, and
// waits; once an operator adds the instrument (`fixvenue admin instrument
// add`) it draws its book. It exited "no such symbol", so a watch could not
// be started before the listing.
func TestMarketDataWatchWaitsForAnInstrumentAddedLater(t *testing.T) {
	t.Parallel()
	v := startVenue(t, feedVenueConfig(t, "[[session]]\ncomp_id = \"CLIENT1\"\n[admin]\naddr = \"127.0.0.1:0\"\n"+adminTokenTOML("carol", "", cliToken)))
	ctx, out := watchSymbol(t, v, "NEWCO")
	waitFor := func(want string) {
		t.Helper()
		for !strings.Contains(out.String(), want) {
			if ctx.Err() != nil {
				t.Fatalf("md watch never showed %q:\n%s", want, out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("NEWCO is not listed on the feed")
	waitFor("waiting for it to be added (fixvenue admin instrument add)")
	waitFor("the feed lists ACME, GLOBEX, INITECH\n")
	if code, stdout, stderr := runAdminCLI(t, v.ready.AdminAddr, cliToken, "instrument", "add", "NEWCO", "--tick-size", "0.05", "--lot-size", "10",
		"--min-qty", "10", "--max-qty", "10000", "--ref-price", "20.00", "--band-percent", "10", "--reason", "listing NEWCO"); code != 0 {
		t.Fatalf("admin instrument add: exit %d\n%s%s", code, stdout, stderr)
	}
	waitFor("NEWCO  Open  seq ")
}

// TestMarketDataLatencyTool runs `fixvenue md latency` on the feed's UDP
// address while orders arrive over FIX, and checks it measured packets.
func TestMarketDataLatencyTool(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	udp := freeUDPPort(t)
	cfg := writeVenueConfig(t, dir, "[marketdata]\nfeed_addr = \"127.0.0.1:%d\"\nrecovery_addr = \"127.0.0.1:0\"\n[[session]]\ncomp_id = \"CLIENT%%d\"\nrange = [1, 1]\n", udp)
	v := startVenue(t, cfg)
	tool := exec.Command(binPath, "md", "latency", "--feed-addr", fmt.Sprintf("127.0.0.1:%d", udp), "--duration", "2s")
	var out strings.Builder
	tool.Stdout = &out
	if err := tool.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // let it bind the feed address
	c := logOn(t, v.fixAddr, "CLIENT1")
	defer c.Close()
	for i := 0; i < 20; i++ {
		if err := c.Send("D", fixclient.F(11, fmt.Sprintf("l%d", i)), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"), fixclient.F(44, "99.00")); err != nil {
			t.Fatal(err)
		}
	}
	if err := tool.Wait(); err != nil {
		t.Fatalf("md latency: %v\n%s", err, out.String())
	}
	m := regexp.MustCompile(`order-to-feed: (\d+) packets, (\d+) messages; p50 `).FindStringSubmatch(out.String())
	if m == nil || m[1] == "0" {
		t.Fatalf("md latency measured nothing: %q", out.String())
	}
}

// TestMarketDataWatchSaysWhyItCannotJoin runs `fixvenue md watch` against a
// recovery address where nothing listens: the screen names the failure
// (it showed only "unrecovered", for ever).
func TestMarketDataWatchSaysWhyItCannotJoin(t *testing.T) {
	t.Parallel()
	// Watched until it draws the failure, not for a fixed time: a loaded
	// machine may take seconds to start the process.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recovery := fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
	watch := exec.CommandContext(ctx, binPath, "md", "watch", "--feed-addr", fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t)),
		"--recovery-addr", recovery)
	var out lockedbuf.Buffer
	watch.Stdout = &out
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = watch.Wait()
		close(exited)
	}()
	defer func() { _ = watch.Process.Kill(); <-exited }()
	drawn := func() bool {
		s := out.String()
		return strings.Contains(s, "last recovery: unrecovered") && strings.Contains(s, recovery+": connect: connection refused")
	}
	for !drawn() {
		select {
		case <-exited:
			if !drawn() {
				t.Fatalf("md watch with no recovery service drew:\n%s", out.String())
			}
		case <-ctx.Done():
			t.Fatalf("md watch with no recovery service drew:\n%s", out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestMarketDataWatchShowsTheIndicative: `fixvenue md watch` on an
// instrument in a call shows what its crossed book would uncross at and the
// imbalance, from the feed's auction updates (it showed the crossed book
// alone).
func TestMarketDataWatchShowsTheIndicative(t *testing.T) {
	t.Parallel()
	cfg := feedVenueConfig(t, "[[session]]\ncomp_id = \"CLIENT1\"\n"+conftest.ACME+"status = \"opening-call\"\n")
	v := startVenue(t, cfg)
	c := logOn(t, v.fixAddr, "CLIENT1")
	defer c.Close()
	crossInTheCall(t, c)
	ctx, out := watchACME(t, v)
	const want = "indicative 4 @ 100.50  imbalance buy 6"
	for !strings.Contains(out.String(), want) {
		if ctx.Err() != nil {
			t.Fatalf("md watch never showed %q:\n%s", want, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMarketDataWatchShowsBothLines: `fixvenue md watch --feed-b-addr`
// reads a venue's B line beside its A line and says what each brought, so
// an operator sees that the B line arrives.
func TestMarketDataWatchShowsBothLines(t *testing.T) {
	t.Parallel()
	lineB := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	v := startVenue(t, feedVenueConfig(t, fmt.Sprintf("feed_b_addr = %q\n[[session]]\ncomp_id = \"CLIENT1\"\n", lineB)))
	c := logOn(t, v.fixAddr, "CLIENT1")
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watch := exec.CommandContext(ctx, binPath, "md", "watch", "--symbol", "ACME", "--feed-addr", v.ready.FeedAddr,
		"--feed-b-addr", lineB, "--recovery-addr", v.ready.RecoveryAddr)
	var out lockedbuf.Buffer
	watch.Stdout, watch.Stderr = &out, &out
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = watch.Process.Kill(); _ = watch.Wait() }()
	both := regexp.MustCompile(`lines: A [1-9][0-9]* datagrams \([0-9]+ duplicates\), B [1-9][0-9]* datagrams \([1-9][0-9]* duplicates\)`)
	for i := 0; !both.MatchString(out.String()); i++ {
		if ctx.Err() != nil {
			t.Fatalf("md watch never showed both lines bringing datagrams:\n%s", out.String())
		}
		// An order a step, each changing ACME's book: the watch draws
		// again, with the lines' counts.
		if err := c.Send("D", fixclient.F(11, fmt.Sprintf("o%d", i)), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"),
			fixclient.F(44, "99.00"), fixclient.F(59, "0")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// TestMarketDataWatchShowsAnUncrossTradeAsAnAuction: an uncross's trades
// have no aggressor (the feed's Trade says auction, its aggressorSide is Buy
// only by convention), so `fixvenue md watch` marks them auction; it showed
// each as a trade a buyer had taken.
func TestMarketDataWatchShowsAnUncrossTradeAsAnAuction(t *testing.T) {
	t.Parallel()
	v := startVenue(t, feedVenueConfig(t, "[[session]]\ncomp_id = \"CLIENT1\"\n"+conftest.ACME+"status = \"opening-call\"\n[admin]\naddr = \"127.0.0.1:0\"\n"+
		adminTokenTOML("carol", "", cliToken)))
	admin := v.ready.AdminAddr
	c := logOn(t, v.fixAddr, "CLIENT1")
	defer c.Close()
	crossInTheCall(t, c)
	ctx, out := watchACME(t, v)
	waitFor := func(re *regexp.Regexp) {
		t.Helper()
		for !re.MatchString(out.String()) {
			if ctx.Err() != nil {
				t.Fatalf("md watch never showed %q:\n%s", re, out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor(regexp.MustCompile(`indicative 4 @ 100\.50`))
	if code, stdout, stderr := runAdminCLI(t, admin, cliToken, "resume", "ACME", "--reason", "open"); code != 0 {
		t.Fatalf("admin resume ACME: exit %d\n%s%s", code, stdout, stderr)
	}
	// In continuous trading s2 takes a bid: a trade whose aggressor sold.
	if err := c.Send("D", fixclient.F(11, "s2"), fixclient.F(55, "ACME"), fixclient.F(54, "2"),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"),
		fixclient.F(44, "100.50"), fixclient.F(59, "0")); err != nil {
		t.Fatal(err)
	}
	// The newest trade is drawn first: the continuous one, then the uncross.
	waitFor(regexp.MustCompile(`(?m)^\S+ +1 @ 100\.50 +sell\n\S+ +4 @ 100\.50 +auction\n`))
}

// TestMarketDataWatchSaysWhereItJoined: a watch that joined says it did, at
// the snapshot's seq; it said "snapshot from seq 0 (0 messages)", a
// recovery of nothing from a seq the feed never had.
func TestMarketDataWatchSaysWhereItJoined(t *testing.T) {
	t.Parallel()
	cfg := feedVenueConfig(t, "[[session]]\ncomp_id = \"CLIENT1\"\n")
	v := startVenue(t, cfg)
	c := logOn(t, v.fixAddr, "CLIENT1")
	defer c.Close()
	restDayBuy(t, c, "b1")
	ctx, out := watchACME(t, v)
	drawn := regexp.MustCompile(`ACME  Open  seq (\d+) [^\x1b]*last recovery: ([^\n]*)\n`)
	for {
		if m := drawn.FindStringSubmatch(out.String()); m != nil {
			if want := "joined with a snapshot at seq " + m[1]; m[2] != want {
				t.Fatalf("md watch drew %q as its last recovery, want %q:\n%s", m[2], want, out.String())
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("md watch never drew the book:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMarketDataRefusesAMalformedRecoveryAddress: a --recovery-addr that is
// no host:port is refused at once, naming it; md watch tried to dial it
// for ever and md book for its whole timeout, saying only that it could
// not join.
func TestMarketDataRefusesAMalformedRecoveryAddress(t *testing.T) {
	feed := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	for _, sub := range []string{"watch", "book"} {
		for _, c := range []struct{ addrs, bad string }{
			{"bogus", "bogus"},
			{"127.0.0.1:99999", "127.0.0.1:99999"},
			{fmt.Sprintf("127.0.0.1:%d,node2", freeTCPPort(t)), "node2"},
		} {
			code, stdout, stderr := runCLI(t, "", nil, "md", sub, "--feed-addr", feed, "--recovery-addr", c.addrs)
			if code != 2 || !strings.Contains(stderr, "--recovery-addr") || !strings.Contains(stderr, strconv.Quote(c.bad)) {
				t.Errorf("md %s --recovery-addr %s: exit %d\nstdout: %s\nstderr: %s", sub, c.addrs, code, stdout, stderr)
			}
		}
	}
}

// crossInTheCall has c enter a buy of 10 ACME at 100.50 ("b") and a sell
// of 4 at 100.00 ("s"), both accepted: in a call they cross, an indicative
// of 4 at 100.50 with 6 more to buy.
func crossInTheCall(t *testing.T, c *fixclient.Client) {
	t.Helper()
	for _, o := range []struct{ id, side, qty, px string }{{"b", "1", "10", "100.50"}, {"s", "2", "4", "100.00"}} {
		if err := c.Send("D", fixclient.F(11, o.id), fixclient.F(55, "ACME"), fixclient.F(54, o.side),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, o.qty), fixclient.F(40, "2"),
			fixclient.F(44, o.px), fixclient.F(59, "0")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Expect(10*time.Second, "8", map[int]string{11: o.id, 150: "0"}); err != nil {
			t.Fatal(err)
		}
	}
}

// watchACME runs `fixvenue md watch --symbol ACME` on v's feed (watchSymbol).
func watchACME(t *testing.T, v *venueProc) (ctx context.Context, out *lockedbuf.Buffer) {
	t.Helper()
	return watchSymbol(t, v, "ACME")
}

// watchSymbol runs `fixvenue md watch --symbol SYMBOL` on v's feed for at
// most 30 s, its output in out; ctx ends then or when the watch exits
// first (a watch runs until interrupted), and the watch is killed when the
// test ends.
func watchSymbol(t *testing.T, v *venueProc, symbol string) (ctx context.Context, out *lockedbuf.Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	watch := exec.CommandContext(ctx, binPath, "md", "watch", "--symbol", symbol, "--feed-addr", v.ready.FeedAddr, "--recovery-addr", v.ready.RecoveryAddr)
	out = &lockedbuf.Buffer{}
	watch.Stdout, watch.Stderr = out, out
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = watch.Wait()
		cancel()
		close(exited)
	}()
	t.Cleanup(func() { _ = watch.Process.Kill(); <-exited })
	return ctx, out
}
