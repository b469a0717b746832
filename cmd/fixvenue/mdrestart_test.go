package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
)

// mdInstrument is one of the default configuration's instruments, with what
// the test needs to price orders on it.
type mdInstrument struct {
	symbol    string
	refTicks  int64
	tick      float64
	lot       int64
	decimals  int
	priceStep int64 // ticks between the test's price levels
}

var mdInstruments = []mdInstrument{
	{symbol: "ACME", refTicks: 10000, tick: 0.01, lot: 1, decimals: 2, priceStep: 10},
	{symbol: "GLOBEX", refTicks: 1000, tick: 0.05, lot: 10, decimals: 2, priceStep: 2},
	{symbol: "INITECH", refTicks: 2500, tick: 0.001, lot: 100, decimals: 3, priceStep: 5},
}

func (in mdInstrument) price(ticks int64) string {
	return strconv.FormatFloat(float64(ticks)*in.tick, 'f', in.decimals, 64)
}

// bookLevels is a book side as comparable text: "price×qty/orders" per
// level, best first, prices normalised to six decimals.
type bookLevels struct{ Bids, Asks []string }

func levelText(px float64, qty, orders int64) string {
	return fmt.Sprintf("%.6f×%d/%d", px, qty, orders)
}

// engineBooks is what the matcher holds, from `fixvenue journal book`
// (a replay of the journal into a matcher, in another process).
func engineBooks(t *testing.T, cfg string) map[string]bookLevels {
	t.Helper()
	var stderr strings.Builder
	cmd := exec.Command(binPath, "journal", "book", "--config", cfg)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("journal book: %v\n%s", err, stderr.String())
	}
	books := map[string]bookLevels{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		sym, b := parseBookJSON(t, []byte(line))
		books[sym] = b
	}
	return books
}

func parseBookJSON(t *testing.T, line []byte) (string, bookLevels) {
	t.Helper()
	var raw struct {
		Symbol string      `json:"symbol"`
		Bids   [][]float64 `json:"bids"`
		Asks   [][]float64 `json:"asks"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		t.Fatalf("book JSON %q: %v", line, err)
	}
	var b bookLevels
	for _, l := range raw.Bids {
		b.Bids = append(b.Bids, levelText(l[0], int64(l[1]), int64(l[2])))
	}
	for _, l := range raw.Asks {
		b.Asks = append(b.Asks, levelText(l[0], int64(l[1]), int64(l[2])))
	}
	return raw.Symbol, b
}

func clientBook(b *feedclient.Book) bookLevels {
	var out bookLevels
	px := func(ticks int64) float64 {
		v, _ := strconv.ParseFloat(string(b.AppendPrice(nil, ticks)), 64)
		return v
	}
	for _, l := range b.Bids {
		out.Bids = append(out.Bids, levelText(px(l.PriceTicks), l.Qty, int64(l.OrderCount)))
	}
	for _, l := range b.Asks {
		out.Asks = append(out.Asks, levelText(px(l.PriceTicks), l.Qty, int64(l.OrderCount)))
	}
	return out
}

// fixBook asks for a one-off snapshot (V, 263=0) and reads the W.
func fixBook(t *testing.T, c *fixclient.Client, reqID, symbol string) bookLevels {
	t.Helper()
	if err := c.Send("V", fixclient.F(262, reqID), fixclient.F(263, "0"), fixclient.F(264, "0"),
		fixclient.F(267, "2"), fixclient.F(269, "0"), fixclient.F(269, "1"), fixclient.F(146, "1"), fixclient.F(55, symbol)); err != nil {
		t.Fatal(err)
	}
	w, err := c.Expect(10*time.Second, "W", map[int]string{262: reqID})
	if err != nil {
		t.Fatalf("FIX market data for %s: %v", symbol, err)
	}
	var b bookLevels
	var side, px, qty, n string
	flush := func() {
		if side == "" {
			return
		}
		p, _ := strconv.ParseFloat(px, 64)
		q, _ := strconv.ParseInt(qty, 10, 64)
		o, _ := strconv.ParseInt(n, 10, 64)
		if side == "0" {
			b.Bids = append(b.Bids, levelText(p, q, o))
		} else {
			b.Asks = append(b.Asks, levelText(p, q, o))
		}
		side, px, qty, n = "", "", "", ""
	}
	for _, f := range w.Fields {
		switch f.Tag {
		case 269:
			flush()
			side = f.Value
		case 270:
			px = f.Value
		case 271:
			qty = f.Value
		case 346:
			n = f.Value
		}
	}
	flush()
	return b
}

// TestMarketDataSurvivesRestarts restarts a venue with resting orders on
// several instruments and levels, alternately with SIGTERM and kill -9, with
// orders, trades and cancels in between. After every start the feed's book
// (through `md book`, through a feed client that runs across all the
// restarts, and through FIX market data) must be exactly the book the
// matcher holds, and the running client's traded volume must count every
// trade, before and after the restarts.
func TestMarketDataSurvivesRestarts(t *testing.T) {
	t.Parallel()
	cycles := 6
	if testing.Short() {
		cycles = 2
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	// The venue sends the feed to a fan-out that copies every datagram to
	// the long-running client and to the port `md book` listens on, as a
	// multicast group would deliver it to both.
	feedAddr := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	clientAddr := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	toolAddr := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	fanOutUDP(t, feedAddr, clientAddr, toolAddr)
	recoveryAddr := fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
	cfg := writeVenueConfig(t, dir, `[journal]
snapshot_interval = "300ms"
%s[[session]]
comp_id = "CLIENT%%d"
range = [1, 2]
`, feedTOML(feedAddr, recoveryAddr))

	client := startFeedClient(t, feedclient.Config{FeedAddr: clientAddr, RecoveryAddr: recoveryAddr})

	volume := map[string]int64{} // traded quantity per symbol, from the fills' ExecutionReports
	var resting []restingOrder   // orders the test may cancel later
	nextID := 0
	// Starts alternate between the two ways the feed is rebuilt: from the
	// state saved with the newest snapshot plus the commands after it, and,
	// with the saved states removed, from the whole journal.
	mdState := filepath.Join(dir, "data", "mdstate")
	fromSnapshot := false
	for cycle := 0; cycle <= cycles; cycle++ {
		v := startVenue(t, cfg)
		if loaded := v.loadedSnapshot(); cycle > 0 && loaded != fromSnapshot {
			t.Fatalf("cycle %d: snapshot loaded = %v, want %v:\n%s", cycle, loaded, fromSnapshot, v.logs())
		}
		checkFeedEqualsEngine(t, cfg, v, client, toolAddr, recoveryAddr, volume, cycle)
		if cycle == cycles {
			v.kill()
			break
		}
		began := time.Now()
		resting = tradeAFew(t, v.fixAddr, rng, resting, &nextID, volume, cycle)
		fromSnapshot = cycle%3 != 2
		if fromSnapshot {
			waitForFeedState(t, v.fixAddr, mdState, began)
		}
		if cycle%2 == 0 {
			v.stop(t)
		} else {
			v.kill()
		}
		if !fromSnapshot {
			if err := os.RemoveAll(mdState); err != nil {
				t.Fatal(err)
			}
		}
	}
	var stats feedclient.Stats
	if err := client.Inspect(context.Background(), func(c *feedclient.Client) { stats = c.Stats() }); err != nil {
		t.Fatal(err)
	}
	if stats.Inconsistencies != 0 {
		t.Errorf("the running feed client saw %d inconsistencies across the restarts", stats.Inconsistencies)
	}
	t.Logf("feed client across %d restarts: %+v", cycles, stats)
}

// TestMarketDataFollowsAVenueOnAnotherDataDirectory: a venue started at the
// same addresses on another data directory numbers its feed anew, below what
// a feed client that ran before applied (marketdata doc, "Restarts"). The
// client takes the new feed's heartbeat for what it is and joins it with a
// snapshot: its books become the new venue's (it kept the old venue's books
// for ever, taking the new packets for duplicates).
func TestMarketDataFollowsAVenueOnAnotherDataDirectory(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	feedAddr := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	clientAddr := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	toolAddr := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	fanOutUDP(t, feedAddr, clientAddr, toolAddr)
	recoveryAddr := fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
	body := "[journal]\nsnapshot_interval = \"0s\"\n" + feedTOML(feedAddr, recoveryAddr) +
		"[[session]]\ncomp_id = \"CLIENT%d\"\nrange = [1, 2]\n"
	client := startFeedClient(t, feedclient.Config{FeedAddr: clientAddr, RecoveryAddr: recoveryAddr})

	nextID := 0
	first := writeVenueConfig(t, t.TempDir(), "%s", body)
	v := startVenue(t, first)
	volume := map[string]int64{}
	var resting []restingOrder
	for range 3 {
		resting = tradeAFew(t, v.fixAddr, rng, resting, &nextID, volume, 0)
	}
	checkFeedEqualsEngine(t, first, v, client, toolAddr, recoveryAddr, volume, 0)
	v.stop(t)

	second := writeVenueConfig(t, t.TempDir(), "%s", body)
	v = startVenue(t, second)
	defer v.kill()
	volume = map[string]int64{}
	tradeAFew(t, v.fixAddr, rng, nil, &nextID, volume, 1)
	checkFeedEqualsEngine(t, second, v, client, toolAddr, recoveryAddr, volume, 1)
}

// fanOutUDP copies every datagram that arrives at from to each of to, until
// the test ends.
func fanOutUDP(t *testing.T, from string, to ...string) {
	t.Helper()
	la, err := net.ResolveUDPAddr("udp", from)
	if err != nil {
		t.Fatal(err)
	}
	in, err := net.ListenUDP("udp", la)
	if err != nil {
		t.Fatal(err)
	}
	out, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var dsts []*net.UDPAddr
	for _, a := range to {
		d, err := net.ResolveUDPAddr("udp", a)
		if err != nil {
			t.Fatal(err)
		}
		dsts = append(dsts, d)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 65536)
		for {
			n, _, err := in.ReadFromUDP(buf)
			if err != nil {
				return
			}
			for _, d := range dsts {
				out.WriteToUDP(buf[:n], d) // a port nobody reads loses the datagram, as UDP may
			}
		}
	}()
	t.Cleanup(func() {
		in.Close()
		<-done
		out.Close()
	})
}

// waitForFeedState waits until the venue has saved a feed state written
// after since (snapshots come every 300 ms; the feed saves its state when
// the first event after the snapshot's command arrives, so this asks for
// order status meanwhile).
func waitForFeedState(t *testing.T, addr, dir string, since time.Time) {
	t.Helper()
	c := logOn(t, addr, "CLIENT2")
	defer c.Close()
	saved := func() bool {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".snap") && info.ModTime().After(since) {
				return true
			}
		}
		return false
	}
	if !statusRequestsUntil(t, c, "ACME", saved) {
		t.Fatalf("no feed state saved in %s within 15 s", dir)
	}
}

type restingOrder struct{ id, symbol, side string }

// checkFeedEqualsEngine compares, after a start and before any new order,
// the engine's books with every view the feed gives.
func checkFeedEqualsEngine(t *testing.T, cfg string, v *venueProc, client *feedclient.Client, feedAddr, recoveryAddr string,
	volume map[string]int64, cycle int) {
	t.Helper()
	want := engineBooks(t, cfg)
	levels := 0
	for _, in := range mdInstruments {
		levels += len(want[in.symbol].Bids) + len(want[in.symbol].Asks)
		out, err := exec.Command(binPath, "md", "book", "--symbol", in.symbol, "--json",
			"--feed-addr", feedAddr, "--recovery-addr", recoveryAddr).Output()
		if err != nil {
			t.Fatalf("cycle %d: md book %s: %v\n%s", cycle, in.symbol, err, v.logs())
		}
		if _, got := parseBookJSON(t, out); fmt.Sprint(got) != fmt.Sprint(want[in.symbol]) {
			t.Fatalf("cycle %d: md book %s = %v, the engine holds %v", cycle, in.symbol, got, want[in.symbol])
		}
	}
	if cycle > 0 && levels == 0 {
		t.Fatalf("cycle %d: the engine holds no resting order: the test checks nothing", cycle)
	}
	// The client that ran across the restart catches up without any action.
	deadline := time.Now().Add(15 * time.Second)
	for {
		var got map[string]bookLevels
		gotVolume := map[string]int64{}
		if err := client.Inspect(context.Background(), func(c *feedclient.Client) {
			got = map[string]bookLevels{}
			for _, in := range mdInstruments {
				if b := c.BookBySymbol(in.symbol); b != nil && c.InSync() {
					got[in.symbol] = clientBook(b)
					gotVolume[in.symbol] = b.Volume
				}
			}
		}); err != nil {
			t.Fatal(err)
		}
		same := true
		for _, in := range mdInstruments {
			// A client that joined by snapshot knows no volume from before it.
			if fmt.Sprint(got[in.symbol]) != fmt.Sprint(want[in.symbol]) || gotVolume[in.symbol] != volume[in.symbol] {
				same = false
			}
		}
		if same {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cycle %d: the running feed client shows %v (volume %v), the engine holds %v (volume %v)",
				cycle, got, gotVolume, want, volume)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c := logOn(t, v.fixAddr, "CLIENT2")
	defer c.Close()
	for i, in := range mdInstruments {
		if got := fixBook(t, c, fmt.Sprintf("r%d-%d", cycle, i), in.symbol); fmt.Sprint(got) != fmt.Sprint(want[in.symbol]) {
			t.Fatalf("cycle %d: FIX market data for %s = %v, the engine holds %v", cycle, in.symbol, got, want[in.symbol])
		}
	}
}

// startFeedClient runs a feed client until the test ends.
func startFeedClient(t *testing.T, cfg feedclient.Config) *feedclient.Client {
	t.Helper()
	client, stop := runFeedClient(t, cfg)
	t.Cleanup(stop)
	return client
}

// runFeedClient runs a feed client until stop is called.
func runFeedClient(t *testing.T, cfg feedclient.Config) (client *feedclient.Client, stop func()) {
	t.Helper()
	client, err := feedclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- client.Run(ctx) }()
	return client, func() {
		cancel()
		<-runDone
	}
}

// tradeAFew sends limit orders on every instrument at a few levels each side,
// some crossing (trades), and cancels some resting ones; it waits for every
// answer and adds the fills to volume.
func tradeAFew(t *testing.T, addr string, rng *rand.Rand, resting []restingOrder, nextID *int, volume map[string]int64, cycle int) []restingOrder {
	t.Helper()
	c := logOn(t, addr, "CLIENT1")
	defer c.Close()
	// Every order comes from this session, so each trade gives two fills here.
	traded := map[string]int64{}
	answer := func(id string, want map[int]string) *fixclient.Message {
		for {
			m, err := c.Read(10 * time.Second)
			if err != nil {
				t.Fatalf("cycle %d: waiting for the answer to %s: %v", cycle, id, err)
			}
			if m.Type() == "8" && (m.Get(150) == "F") {
				q, _ := strconv.ParseInt(m.Get(32), 10, 64)
				traded[m.Get(55)] += q
			}
			if m.Type() == "3" || m.Type() == "j" {
				t.Fatalf("cycle %d: %s", cycle, m)
			}
			match := m.Get(11) == id
			for tag, v := range want {
				match = match && m.Get(tag) == v
			}
			if match {
				return m
			}
		}
	}
	var last, lastSymbol, lastSide string
	for n := 0; n < 30 || last == ""; n++ {
		if len(resting) > 0 && rng.Intn(5) == 0 {
			i := rng.Intn(len(resting))
			o := resting[i]
			resting = append(resting[:i], resting[i+1:]...)
			*nextID++
			id := fmt.Sprintf("x%d", *nextID)
			if err := c.Send("F", fixclient.F(11, id), fixclient.F(41, o.id), fixclient.F(55, o.symbol), fixclient.F(54, o.side),
				fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
				t.Fatal(err)
			}
			for {
				// Canceled, or rejected because the order has traded since.
				m := answer(id, nil)
				if m.Type() == "9" || m.Get(150) == "4" {
					break
				}
			}
			continue
		}
		in := mdInstruments[rng.Intn(len(mdInstruments))]
		buy := rng.Intn(2) == 0
		// Buys rest at or below the reference, sells at or above; one in
		// five crosses by two steps, so trades happen at several levels.
		off := int64(rng.Intn(4)) * in.priceStep
		ticks := in.refTicks - off
		side := "1"
		if !buy {
			ticks, side = in.refTicks+off+in.priceStep, "2"
		}
		if rng.Intn(5) == 0 {
			if buy {
				ticks += 4 * in.priceStep
			} else {
				ticks -= 4 * in.priceStep
			}
		}
		qty := in.lot * int64(1+rng.Intn(5))
		*nextID++
		id := fmt.Sprintf("o%d", *nextID)
		if err := c.Send("D", fixclient.F(11, id), fixclient.F(55, in.symbol), fixclient.F(54, side),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, strconv.FormatInt(qty, 10)), fixclient.F(40, "2"),
			fixclient.F(44, in.price(ticks)), fixclient.F(59, "1")); err != nil {
			t.Fatal(err)
		}
		answer(id, map[int]string{150: "0"})
		last, lastSymbol, lastSide = id, in.symbol, side
		resting = append(resting, restingOrder{id: id, symbol: in.symbol, side: side})
	}
	// A status request for the last order flushes the fills of earlier crosses.
	if err := c.Send("H", fixclient.F(11, last), fixclient.F(55, lastSymbol), fixclient.F(54, lastSide)); err != nil {
		t.Fatal(err)
	}
	answer(last, map[int]string{150: "I"})
	for sym, q := range traded {
		if q%2 != 0 {
			t.Fatalf("cycle %d: %s fills add up to %d, not two per trade", cycle, sym, q)
		}
		volume[sym] += q / 2
	}
	return resting
}
