package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/admintest"
	"github.com/fixvenue/fixvenue/internal/browsertest"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/ops"
)

// tapeTrade is a trade as the console lists it.
type tapeTrade struct {
	Price string `json:"price"`
	Qty   int64  `json:"qty"`
	Side  string `json:"side"`
}

// consoleDay is what the test expects the console to show of ACME's day.
type consoleDay struct {
	trades []tapeTrade // oldest first
}

func (d consoleDay) volume() int64 {
	var v int64
	for _, tr := range d.trades {
		v += tr.Qty
	}
	return v
}

// bookStream is the part of the book page's stream the test checks.
type bookStream struct {
	Volume    int64  `json:"volume"`
	Trades    int64  `json:"trades"`
	Last      string `json:"last"`
	Change    string `json:"change"`
	ChangePct string `json:"changePct"`
	Tape      []struct {
		Time string `json:"time"`
		tapeTrade
	} `json:"tape"`
	Chart struct {
		Points   [][2]int64 `json:"points"`
		DayStart string     `json:"dayStart"`
	} `json:"chart"`
}

// firstUpdate reads the first update of a console stream (Server-Sent Events).
func firstUpdate(t *testing.T, url string, into any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d", url, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if body, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if err := json.Unmarshal([]byte(body), into); err != nil {
				t.Fatalf("%s: %v", url, err)
			}
			return
		}
	}
	t.Fatalf("%s: no update: %v", url, sc.Err())
}

// consoleShows checks that the stream and the page in the browser show
// exactly the day's trades of want, newest first, its chart points, volume
// and change from the reference price ref (the last band set), and returns
// the rows and the chart's path as the browser drew them.
func consoleShows(t *testing.T, ctx context.Context, base string, want consoleDay, wantChange, wantPct string) (rows []string, path string) {
	t.Helper()
	n := len(want.trades)
	// The console reads the events behind the ExecutionReports: the last
	// trade may reach it a moment after its report reached the test.
	var b bookStream
	for deadline := time.Now().Add(browsertest.Wait); ; {
		b = bookStream{}
		firstUpdate(t, base+"/stream/book-ACME", &b)
		if b.Trades >= int64(n) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if b.Trades != int64(n) || b.Volume != want.volume() || len(b.Tape) != n || len(b.Chart.Points) != n {
		t.Fatalf("stream: %d trades, volume %d, %d listed, %d chart points; want %d trades, volume %d\n%+v", b.Trades, b.Volume,
			len(b.Tape), len(b.Chart.Points), n, want.volume(), b)
	}
	for i, tr := range b.Tape {
		if w := want.trades[n-1-i]; tr.tapeTrade != w {
			t.Fatalf("stream: trade %d is %+v, want %+v", i, tr.tapeTrade, w)
		}
		if p := b.Chart.Points[n-1-i]; fmt.Sprintf("%d.%02d", p[1]/100, p[1]%100) != tr.Price {
			t.Fatalf("stream: chart point %d is %d ticks, trade %s", n-1-i, p[1], tr.Price)
		}
	}
	if b.Change != wantChange || b.ChangePct != wantPct || b.Chart.DayStart == "" {
		t.Fatalf("stream: change %q %q (want %q %q), day start %q", b.Change, b.ChangePct, wantChange, wantPct, b.Chart.DayStart)
	}
	// Each topic's update is built at most once per update interval and
	// shared: the market stream may hand out one built a moment before the
	// book's.
	eventually(t, "the market stream agrees with the book stream", func() error {
		if in := marketRowOf(t, base, "ACME"); in.Volume != b.Volume || in.Trades != b.Trades || in.Change != b.Change {
			return fmt.Errorf("market stream %+v, book stream volume %d trades %d change %q", in, b.Volume, b.Trades, b.Change)
		}
		return nil
	})
	// The admin API reports the same day, whatever the process saw since it started.
	if api := apiInstrument(t, base, "ACME"); api.Volume != b.Volume || api.Trades != b.Trades || api.LastPrice != b.Last {
		t.Fatalf("GET /v1/instruments: %+v; the console: volume %d, trades %d, last %s", api, b.Volume, b.Trades, b.Last)
	}
	browsertest.Open(t, ctx, base+"/market/ACME")
	browsertest.WaitFor(t, ctx, "the page lists the day's trades", fmt.Sprintf(
		`document.getElementById("live").textContent === "live" && document.querySelectorAll("#trades tbody tr").length === %d`, n))
	rows = browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll("#trades tbody tr")].map(r => [...r.cells].map(c => c.innerText).join("|"))`)
	for i, r := range rows {
		tr := b.Tape[i]
		if w := fmt.Sprintf("%s|%s|%d|%s", tr.Time, tr.Price, tr.Qty, tr.Side); r != w {
			t.Fatalf("page row %d %q, stream %q", i, r, w)
		}
	}
	path = browsertest.Eval[string](t, ctx, `document.querySelector("#chart path.line").getAttribute("d")`)
	if got := strings.Count(path, "M") + strings.Count(path, "L"); got != max(n, 2) {
		t.Fatalf("the chart's line has %d points for %d trades: %q", got, n, path)
	}
	if s := browsertest.Eval[string](t, ctx, browsertest.Text("#summary")); !strings.Contains(s, fmt.Sprintf("volume today%d\n", want.volume())) {
		t.Fatalf("summary %q, want volume %d", s, want.volume())
	}
	return rows, path
}

// TestConsoleTapeSurvivesRestarts: the book page's trades list and price
// chart hold the day's trades (those since the last end of day) across
// restarts with SIGTERM and kill -9, whether the venue starts from a
// snapshot with the tape's state beside it or replays the whole journal;
// the page in a browser shows exactly the rows and the chart it showed
// before the stop, and the streams agree on volume and change from the
// reference price an operator set.
func TestConsoleTapeSurvivesRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const token = "console-test-token-0123456789abcdef"
	cfg := writeVenueConfig(t, dir, `[journal]
snapshot_interval = "200ms"
[marketdata]
feed_addr = "127.0.0.1:%d"
recovery_addr = "127.0.0.1:0"
[admin]
addr = "127.0.0.1:0"
[admin.console]
enabled = true
[[admin.token]]
operator = "carol"
sha256 = %q
[[session]]
comp_id = "CLIENT%%d"
range = [1, 3]
`, freeUDPPort(t), ops.HashToken(token))
	ctx := browsertest.New(t)
	admin := func(v *venueProc, path, body string) {
		t.Helper()
		if a := admintest.Call(t, http.MethodPost, "http://"+v.ready.AdminAddr+path, token, body); a.Status != http.StatusOK {
			t.Fatalf("POST %s: HTTP %d", path, a.Status)
		}
	}

	var day consoleDay
	id := 0
	// trade makes one trade per price: CLIENT1 rests the passive side,
	// CLIENT3 takes it with an IOC order, buying on even counts. Both stay
	// logged on until the venue stops (waitForFeedState logs CLIENT2 on).
	var maker, taker *fixclient.Client
	trade := func(prices ...string) {
		t.Helper()
		for _, px := range prices {
			id++
			qty, aggressor, passive := int64(1+id%4), "1", "2"
			if id%2 == 1 {
				aggressor, passive = "2", "1"
			}
			sendLimit(t, maker, fmt.Sprintf("m%d", id), passive, px, qty, "1")
			if _, err := maker.Expect(10*time.Second, "8", map[int]string{11: fmt.Sprintf("m%d", id), 150: "0"}); err != nil {
				t.Fatal(err)
			}
			sendLimit(t, taker, fmt.Sprintf("t%d", id), aggressor, px, qty, "3")
			if _, err := taker.Expect(10*time.Second, "8", map[int]string{11: fmt.Sprintf("t%d", id), 150: "F", 32: fmt.Sprint(qty)}); err != nil {
				t.Fatal(err)
			}
			side := map[string]string{"1": "buy", "2": "sell"}[aggressor]
			day.trades = append(day.trades, tapeTrade{Price: px, Qty: qty, Side: side})
		}
	}
	start := func() *venueProc {
		v := startVenue(t, cfg)
		m, k := logonClient(t, v, "CLIENT1"), logonClient(t, v, "CLIENT3")
		t.Cleanup(func() { m.Close(); k.Close() })
		maker, taker = m, k
		return v
	}
	stateDir := filepath.Join(dir, "data", "consolestate")

	v := start()
	base := "http://" + v.ready.AdminAddr
	trade("100.10", "99.90") // yesterday's: the end of day drops them
	admin(v, "/v1/eod", `{"reason":"test end of day"}`)
	day = consoleDay{}
	// A new day: no last trade yet, the previous close is the reference, on
	// the page and in the admin API.
	// The tape reads the events behind the admin call's answer: it may see
	// the end of day a moment later.
	eventually(t, "the new day on the market page and in the admin API", func() error {
		r, api := marketRowOf(t, base, "ACME"), apiInstrument(t, base, "ACME")
		if r.Last != "" || r.Change != "" || r.Volume != 0 || r.Trades != 0 || r.Ref != "99.90" || r.RefLabel != "previous close" ||
			api.LastPrice != "" || api.Volume != 0 || api.Trades != 0 || api.PrevClose != "99.90" {
			return fmt.Errorf("market row %+v, GET /v1/instruments %+v", r, api)
		}
		return nil
	})
	admin(v, "/v1/instruments/ACME/band", `{"reason":"test","ref_price":"102.00","band_percent":5}`)
	eventually(t, "the reference price an operator set", func() error {
		if r := marketRowOf(t, base, "ACME"); r.Ref != "102.00" || r.RefLabel != "reference price" {
			return fmt.Errorf("market row %+v", r)
		}
		return nil
	})
	trade("101.00", "103.50", "100.50", "102.25")
	began := time.Now()
	waitForFeedState(t, v.fixAddr, stateDir, began)
	trade("101.75", "100.98")             // after the tape's state: replayed
	const change, pct = "-1.02", "-1.00%" // 100.98 from the reference price 102.00
	rows, path := consoleShows(t, ctx, "http://"+v.ready.AdminAddr, day, change, pct)

	for cycle, how := range []string{"SIGTERM", "kill -9", "kill -9, the tape's state removed"} {
		if how == "SIGTERM" {
			v.stop(t)
		} else {
			v.kill()
		}
		whole := strings.Contains(how, "removed")
		if whole {
			if err := os.RemoveAll(stateDir); err != nil {
				t.Fatal(err)
			}
		}
		v = start()
		if loaded := v.loadedSnapshot(); loaded == whole {
			t.Fatalf("after %s: snapshot loaded = %v:\n%s", how, loaded, v.logs())
		}
		gotRows, gotPath := consoleShows(t, ctx, "http://"+v.ready.AdminAddr, day, change, pct)
		if !reflect.DeepEqual(gotRows, rows) || gotPath != path {
			t.Fatalf("after %s the page shows\n%q\n%s\nbefore it\n%q\n%s", how, gotRows, gotPath, rows, path)
		}
		t.Logf("after %s: the same %d trades and chart", how, len(rows))
		if cycle == 2 {
			break
		}
		trade("101.40")
		waitForFeedState(t, v.fixAddr, stateDir, time.Now())
		trade("100.98")
		rows, path = consoleShows(t, ctx, "http://"+v.ready.AdminAddr, day, change, pct)
	}
}

// eventually retries check until it passes or browsertest.Wait passed.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(browsertest.Wait)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// apiInstrument reads one instrument's row of GET /v1/instruments.
func apiInstrument(t *testing.T, base, symbol string) ops.InstrumentInfo {
	t.Helper()
	resp, err := http.Get(base + "/v1/instruments")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []ops.InstrumentInfo
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/instruments: HTTP %d, %v", resp.StatusCode, err)
	}
	for _, in := range list {
		if in.Symbol == symbol {
			return in
		}
	}
	t.Fatalf("GET /v1/instruments: no %s in %+v", symbol, list)
	return ops.InstrumentInfo{}
}

// marketRow is one instrument's row of the market page's stream.
type marketRow struct {
	Symbol   string `json:"symbol"`
	Last     string `json:"last"`
	Ref      string `json:"ref"`
	RefLabel string `json:"refLabel"`
	Change   string `json:"change"`
	Volume   int64  `json:"volume"`
	Trades   int64  `json:"trades"`
}

// marketRowOf reads one instrument's row of the market page's stream.
func marketRowOf(t *testing.T, base, symbol string) marketRow {
	t.Helper()
	var m struct {
		Instruments []marketRow `json:"instruments"`
	}
	firstUpdate(t, base+"/stream/market", &m)
	for _, in := range m.Instruments {
		if in.Symbol == symbol {
			return in
		}
	}
	t.Fatalf("market stream: no %s", symbol)
	return marketRow{}
}

func logonClient(t *testing.T, v *venueProc, comp string) *fixclient.Client {
	t.Helper()
	c, err := fixclient.Dial(v.fixAddr, comp, "VENUE")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Logon(true); err != nil {
		t.Fatal(err)
	}
	return c
}

func sendLimit(t *testing.T, c *fixclient.Client, id, side, px string, qty int64, tif string) {
	t.Helper()
	if err := c.Send("D", fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(54, side), fixclient.F(60, fixclient.Timestamp(time.Now())),
		fixclient.F(38, fmt.Sprint(qty)), fixclient.F(40, "2"), fixclient.F(44, px), fixclient.F(59, tif)); err != nil {
		t.Fatal(err)
	}
}

// TestClusterNewLeaderShowsTheDay: a cluster's followers keep the
// console's tape from the commands they apply as they commit, so that after
// the leader is killed, the new leader's console and admin API show the
// day's trades the old leader showed, and its journal list the operator
// commands as the old leader listed them: a mass cancel's account and a
// kill switch's operator, which only the commands name.
func TestClusterNewLeaderShowsTheDay(t *testing.T) {
	// The admin address is chosen by each node when it comes to lead (its
	// config says 127.0.0.1:0) and read from its log: a port reserved here
	// and bound only at a later election could be taken meanwhile.
	h := writeClusterConfigs(t, func(int) string {
		return "\n[admin.console]\nenabled = true\n[risk]\n[risk.sessions]\nmax_order_qty = 100000\n"
	}, false)
	for i := range 3 {
		h.procs[i] = startVenue(t, h.cfgs[i])
	}
	adminOf := func(i int) string {
		t.Helper()
		var addr string
		eventually(t, fmt.Sprintf("node %d's admin API", i+1), func() error {
			m := adminListening.FindAllStringSubmatch(h.procs[i].logs(), -1)
			if m == nil {
				return fmt.Errorf("no admin API address in node %d's log", i+1)
			}
			addr = m[len(m)-1][1]
			return nil
		})
		return addr
	}
	l := h.leader(30 * time.Second)
	maker, taker := logonClient(t, h.procs[l], "CLIENT1"), logonClient(t, h.procs[l], "CLIENT2")
	defer maker.Close()
	defer taker.Close()
	var day consoleDay
	for i, px := range []string{"99.50", "100.25", "100.00"} {
		qty := int64(1 + i)
		sendLimit(t, maker, fmt.Sprintf("m%d", i), "2", px, qty, "1")
		if _, err := maker.Expect(10*time.Second, "8", map[int]string{11: fmt.Sprintf("m%d", i), 150: "0"}); err != nil {
			t.Fatal(err)
		}
		sendLimit(t, taker, fmt.Sprintf("t%d", i), "1", px, qty, "3")
		if _, err := taker.Expect(10*time.Second, "8", map[int]string{11: fmt.Sprintf("t%d", i), 150: "F"}); err != nil {
			t.Fatal(err)
		}
		day.trades = append(day.trades, tapeTrade{Price: px, Qty: qty, Side: "buy"})
	}
	// shows reads the book stream and the admin API of the leader at base
	// until they show the day's trades.
	shows := func(base string) (b bookStream) {
		t.Helper()
		eventually(t, base+" shows the day", func() error {
			b = bookStream{}
			firstUpdate(t, base+"/stream/book-ACME", &b)
			api := apiInstrument(t, base, "ACME")
			if b.Trades != int64(len(day.trades)) || b.Volume != day.volume() || len(b.Tape) != len(day.trades) ||
				api.Trades != b.Trades || api.Volume != b.Volume || api.LastPrice != "100.00" || b.Last != "100.00" {
				return fmt.Errorf("book stream %+v, GET /v1/instruments %+v; want %d trades, volume %d", b, api, len(day.trades), day.volume())
			}
			return nil
		})
		return b
	}
	for _, call := range []struct{ path, body string }{
		{"/v1/cancel", `{"reason": "fund closed", "account": "FUND"}`},
		{"/v1/risk/kill", `{"reason": "runaway", "session": "CLIENT2"}`},
	} {
		if a := admintest.Call(t, http.MethodPost, "http://"+adminOf(l)+call.path, clusterToken, call.body); a.Status != http.StatusOK {
			t.Fatalf("POST %s: %d %s", call.path, a.Status, a.Body)
		}
	}
	// journal reads the leader's journal list at base: action, target and
	// operator of each row, newest first.
	journal := func(base string) []string {
		t.Helper()
		var v struct {
			Journal []struct{ Action, Target, Operator string } `json:"journal"`
		}
		firstUpdate(t, base+"/stream/operations", &v)
		var rows []string
		for _, r := range v.Journal {
			rows = append(rows, r.Action+"|"+r.Target+"|"+r.Operator)
		}
		return rows
	}
	listed := []string{"Kill|session CLIENT2|ops", "MassCancel|account FUND|ops"}
	lists := func(base string) {
		t.Helper()
		eventually(t, base+" lists the operator commands", func() error {
			if got := journal(base); !reflect.DeepEqual(got, listed) {
				return fmt.Errorf("the journal list: %q, want %q", got, listed)
			}
			return nil
		})
	}
	lists("http://" + adminOf(l))
	before := shows("http://" + adminOf(l))
	h.kill(l)
	n := h.leader(30 * time.Second)
	after := shows("http://" + adminOf(n))
	lists("http://" + adminOf(n))
	if !reflect.DeepEqual(after.Tape, before.Tape) || !reflect.DeepEqual(after.Chart.Points, before.Chart.Points) {
		t.Fatalf("node %d (the new leader) lists\n%+v\n%v\nnode %d listed\n%+v\n%v", n+1, after.Tape, after.Chart.Points, l+1,
			before.Tape, before.Chart.Points)
	}
	t.Logf("node %d, leading after node %d was killed, shows the same %d trades", n+1, l+1, len(after.Tape))
}

// adminListening finds the admin API's address in a venue's log.
var adminListening = regexp.MustCompile(`msg="admin API listening" addr=(\S+)`)

// TestClusterConsolePageSaysWhoLeads: a console page open on the leader
// when the leadership moves to another node says, once its node refuses
// the stream, that the node follows and which node leads (the admin API's
// JSON answer), not an HTTP status alone.
func TestClusterConsolePageSaysWhoLeads(t *testing.T) {
	h := writeClusterConfigs(t, func(int) string { return "\n[admin.console]\nenabled = true\n" }, false)
	h.startAll()
	l := h.leader(30 * time.Second)
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, "http://"+h.adminAddr(l)+"/market")
	browsertest.WaitFor(t, ctx, "the page goes live", `document.getElementById("live").textContent === "live"`)
	to := (l + 1) % 3
	if out, err := transfer(h.cfgs[l], to); err != nil {
		t.Fatalf("cluster transfer: %v\n%s", err, out)
	}
	browsertest.WaitFor(t, ctx, "the page says its node follows and which leads",
		browsertest.Text("#live")+fmt.Sprintf(`.startsWith("not live: HTTP 503: this cluster node") && `+browsertest.Text("#live")+`.includes("node %d")`, to+1))
}
