package main

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/admintest"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// daysToken is the operator token of the venues the tests of several
// trading days run.
const daysToken = "days-test-token-0123456789abcdef"

// feedDay is what a feed client shows of one instrument's day.
type feedDay struct {
	volume, lastQty, lastTicks int64
	reason                     mdsbe.StatusReason
}

// feedDays reads every demo instrument's volume and last trade from client,
// once it is in sync.
func feedDays(t *testing.T, client *feedclient.Client) map[string]feedDay {
	t.Helper()
	got := map[string]feedDay{}
	if err := client.Inspect(context.Background(), func(c *feedclient.Client) {
		for _, in := range mdInstruments {
			if b := c.BookBySymbol(in.symbol); b != nil && c.InSync() {
				got[in.symbol] = feedDay{volume: b.Volume, lastQty: b.LastTradeQty, lastTicks: b.LastTradePriceTicks, reason: b.StatusReason}
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestFeedVolumeIsTheDays runs a venue over several trading days, through
// its end of day (POST /v1/eod, twice in a row once), restarts with SIGTERM
// and kill -9 (each at once after an end of day too), and a start that
// replays the whole journal.
// The feed's volume is the day's, as the admin API's is: a client running
// across an end of day sees it go back to 0 (an InstrumentStatus of reason
// EndOfDay), one that joins by snapshot after it sees 0, and both see the
// day's trades after it; the last trade stays the instrument's last. It
// counted every trade since the venue's first start.
func TestFeedVolumeIsTheDays(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	dir := t.TempDir()
	feedAddr := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	clientAddr := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	lateAddr := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t))
	fanOutUDP(t, feedAddr, clientAddr, lateAddr)
	recoveryAddr := fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
	cfg := writeVenueConfig(t, dir, `[journal]
snapshot_interval = "0s"
%s[admin]
addr = "127.0.0.1:0"
%s[[session]]
comp_id = "CLIENT%%d"
range = [1, 2]
`, feedTOML(feedAddr, recoveryAddr), adminTokenTOML("carol", "", daysToken))
	client := startFeedClient(t, feedclient.Config{FeedAddr: clientAddr, RecoveryAddr: recoveryAddr})

	// check waits until the running client, a client that joins now by
	// snapshot and the admin API all show volume as each instrument's
	// volume, and the two clients the same last trade.
	check := func(v *venueProc, when string, volume map[string]int64) map[string]feedDay {
		t.Helper()
		var got map[string]feedDay
		for deadline := time.Now().Add(15 * time.Second); ; {
			got = feedDays(t, client)
			same := len(got) == len(mdInstruments)
			for _, in := range mdInstruments {
				same = same && got[in.symbol].volume == volume[in.symbol]
			}
			if same {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the running feed client shows %+v, the day's volume is %v", when, got, volume)
			}
			time.Sleep(20 * time.Millisecond)
		}
		joined := joinFeed(t, lateAddr, recoveryAddr, when)
		base := "http://" + v.ready.AdminAddr
		for _, in := range mdInstruments {
			g, j := got[in.symbol], joined[in.symbol]
			if j.volume != g.volume || j.lastQty != g.lastQty || j.lastTicks != g.lastTicks {
				t.Fatalf("%s: %s: a client joining by snapshot shows %+v, the running one %+v", when, in.symbol, j, g)
			}
			if api := apiInstrument(t, base, in.symbol); api.Volume != volume[in.symbol] {
				t.Fatalf("%s: %s: GET /v1/instruments says volume %d, the feed %d", when, in.symbol, api.Volume, g.volume)
			}
		}
		return got
	}
	eod := func(v *venueProc) {
		t.Helper()
		if a := admintest.Call(t, http.MethodPost, "http://"+v.ready.AdminAddr+"/v1/eod", daysToken, `{"reason":"test end of day"}`); a.Status != http.StatusOK {
			t.Fatalf("POST /v1/eod: HTTP %d %s", a.Status, a.Body)
		}
	}

	nextID := 0
	var resting []restingOrder
	v := startVenue(t, cfg)
	day := map[string]int64{}
	resting = tradeAFew(t, v.fixAddr, rng, resting, &nextID, day, 0)
	before := check(v, "day 1", day)

	eod(v)
	day = map[string]int64{}
	after := check(v, "after the first end of day", day)
	for _, in := range mdInstruments {
		if b, a := before[in.symbol], after[in.symbol]; a.lastQty != b.lastQty || a.lastTicks != b.lastTicks || a.reason != mdsbe.StatusReasonEndOfDay {
			t.Fatalf("%s after the end of day: %+v, before it %+v: want its last trade kept, reason EndOfDay", in.symbol, a, b)
		}
	}
	eod(v) // a second in a row: nothing traded, still the day's
	check(v, "after a second end of day", day)

	resting = tradeAFew(t, v.fixAddr, rng, resting, &nextID, day, 1)
	check(v, "day 2", day)
	v.stop(t)
	v = startVenue(t, cfg)
	check(v, "day 2, after SIGTERM", day)

	// An end of day, then at once a stop: SIGTERM, and on the next day
	// kill -9.
	for i, how := range []string{"SIGTERM", "kill -9"} {
		eod(v)
		if how == "SIGTERM" {
			v.stop(t)
		} else {
			v.kill()
		}
		v = startVenue(t, cfg)
		day = map[string]int64{}
		check(v, "after an end of day, then "+how, day)
		resting = tradeAFew(t, v.fixAddr, rng, resting, &nextID, day, 2+i)
		check(v, fmt.Sprintf("day %d", 3+i), day)
	}
	v.stop(t)

	// Without the feed's saved state every snapshot is passed over: the
	// start replays the whole journal, its four ends of day included, and
	// numbers the feed as before.
	if err := os.RemoveAll(filepath.Join(dir, "data", "mdstate")); err != nil {
		t.Fatal(err)
	}
	v = startVenue(t, cfg)
	if v.loadedSnapshot() {
		t.Fatalf("a snapshot was loaded: the test replays the whole journal\n%s", v.logs())
	}
	check(v, "day 4, the whole journal replayed", day)
	var stats feedclient.Stats
	if err := client.Inspect(context.Background(), func(c *feedclient.Client) { stats = c.Stats() }); err != nil {
		t.Fatal(err)
	}
	if stats.Inconsistencies != 0 || stats.Snapshots != 1 {
		t.Errorf("the running feed client saw %d inconsistencies and took %d snapshots (want 0 and its first): %+v",
			stats.Inconsistencies, stats.Snapshots, stats)
	}
}

// joinFeed runs a feed client on feedAddr until it has joined by snapshot,
// and returns what it shows of each demo instrument's day.
func joinFeed(t *testing.T, feedAddr, recoveryAddr, when string) map[string]feedDay {
	t.Helper()
	client, stop := runFeedClient(t, feedclient.Config{FeedAddr: feedAddr, RecoveryAddr: recoveryAddr})
	defer stop()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if joined := feedDays(t, client); len(joined) == len(mdInstruments) {
			return joined
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: a new feed client did not join in 15 s", when)
		}
	}
}
