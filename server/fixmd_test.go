package server

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/gateway/fixmd"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
)

func TestFIXMarketData(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), "")
	withMarketData(t, cfg)
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	req := func(id, subType, sym string, extra ...fixclient.Field) {
		t.Helper()
		f := []fixclient.Field{fixclient.F(262, id), fixclient.F(263, subType), fixclient.F(264, "5")}
		f = append(f, extra...)
		f = append(f, fixclient.F(267, "2"), fixclient.F(269, "0"), fixclient.F(269, "1"), fixclient.F(146, "1"), fixclient.F(55, sym))
		if err := c.Send("V", f...); err != nil {
			t.Fatal(err)
		}
	}
	req("md1", "1", "ACME", fixclient.F(265, "1"))
	w, err := c.Expect(readWait, "W", map[int]string{262: "md1", 55: "ACME"})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Get(268); got != "0" {
		t.Fatalf("empty book snapshot has %s entries: %s", got, w)
	}
	sendOrder(t, c, order{id: "o1", side: "1", qty: "7", px: "99.50", tif: "1"})
	x, err := c.Expect(readWait, "X", map[int]string{262: "md1"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x.String(), "279=0|269=0|55=ACME|270=99.50|271=7|346=1") {
		t.Fatalf("incremental refresh: %s", x)
	}
	req("md2", "1", "NOPE")
	if _, err := c.Expect(readWait, "Y", map[int]string{262: "md2", 281: "0"}); err != nil {
		t.Fatal(err)
	}
	req("md1", "1", "ACME")
	if _, err := c.Expect(readWait, "Y", map[int]string{262: "md1", 281: "1"}); err != nil {
		t.Fatal(err)
	}
	// Depth beyond what the venue serves: 281=5. (An invalid SubscriptionRequestType
	// never reaches the venue: the data dictionary rejects it with a session Reject.)
	if err := c.Send("V", fixclient.F(262, "md3"), fixclient.F(263, "1"), fixclient.F(264, "500"),
		fixclient.F(267, "1"), fixclient.F(269, "0"), fixclient.F(146, "1"), fixclient.F(55, "ACME")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(readWait, "Y", map[int]string{262: "md3", 281: "5"}); err != nil {
		t.Fatal(err)
	}
	// A one-off snapshot (263=0) of the current book.
	req("md4", "0", "ACME")
	snap, err := c.Expect(readWait, "W", map[int]string{262: "md4", 268: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(snap.String(), "269=0|270=99.50|271=7|346=1") {
		t.Fatalf("snapshot: %s", snap)
	}
}

// TestMassCancelLargerThanTheEventRing: with market data on and the smallest
// event ring, a mass cancel with more events than the ring holds. The feed
// must take the command's durable events before the command ends, or the
// matcher waits for ring space forever and trading stops: every cancel and
// the report must arrive, and the market data must show the empty book.
func TestMassCancelLargerThanTheEventRing(t *testing.T) {
	t.Parallel()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	cfg := testConfig(t, t.TempDir(), "")
	cfg.Engine.EventRingSlots = config.EventRingSlotsMin
	cfg.MarketData.Enabled = true
	cfg.MarketData.FeedAddr = udp.LocalAddr().String()
	cfg.MarketData.RecoveryAddr = "127.0.0.1:0"
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	orders := 2 * config.EventRingSlotsMin
	for i := 0; i < orders; i++ {
		sendOrder(t, c, order{id: fmt.Sprintf("o%d", i), side: "1", qty: "1", px: fmt.Sprintf("%d.%02d", 91+i/100, i%100)})
	}
	if _, err := c.Expect(readWait, "8", map[int]string{11: fmt.Sprintf("o%d", orders-1), 150: "0"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Send("q", fixclient.F(11, "mc"), fixclient.F(530, "7"), fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	cancelled := 0
	for cancelled < orders {
		if _, err := c.Expect(readWait, "8", map[int]string{150: "4"}); err != nil {
			t.Fatalf("%d of %d cancels arrived: %v", cancelled, orders, err)
		}
		cancelled++
	}
	if _, err := c.Expect(readWait, "r", map[int]string{11: "mc", 533: fmt.Sprint(orders)}); err != nil {
		t.Fatal(err)
	}
	// The feed catches up with the answers shortly after them.
	for deadline := time.Now().Add(readWait); ; time.Sleep(10 * time.Millisecond) {
		if err := c.Send("V", fixclient.F(262, "snap"), fixclient.F(263, "0"), fixclient.F(264, "5"),
			fixclient.F(267, "2"), fixclient.F(269, "0"), fixclient.F(269, "1"), fixclient.F(146, "1"), fixclient.F(55, "ACME")); err != nil {
			t.Fatal(err)
		}
		w, err := c.Expect(readWait, "W", map[int]string{262: "snap"})
		if err != nil {
			t.Fatal(err)
		}
		if w.Get(268) == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the market data book still has %s entries after the mass cancel: %s", w.Get(268), w)
		}
	}
}

// TestFeedToPortZeroIsWarnedOf: the feed's address is a destination, so
// port 0 (which a listener's address may give) sends it nowhere: the start
// says so; FIX market data still serves.
func TestFeedToPortZeroIsWarnedOf(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), "")
	withMarketData(t, cfg)
	cfg.MarketData.FeedAddr = "127.0.0.1:0"
	var logs lockedbuf.Buffer
	s := startServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	waitReady(t, s)
	text := logs.String()
	if !strings.Contains(text, "level=WARN") || !strings.Contains(text, "the UDP feed goes nowhere") {
		t.Fatalf("no warning of a feed sent to port 0:\n%s", text)
	}
}

// TestFeedMetrics: the feed's and its recovery service's counters reach
// /metrics: an order makes the feed send, and garbage on the recovery port
// is counted as a protocol error once its connection is closed. An idle
// feed's heartbeats are counted as heartbeats, not as packets, and the
// packets' help says so.
func TestFeedMetrics(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), "")
	withMarketData(t, cfg)
	cfg.MarketData.HeartbeatInterval.Duration = 5 * time.Millisecond
	s := startServer(t, cfg, Options{})
	m := scrape(t, s)
	for deadline := time.Now().Add(readWait); metricstest.Float(t, m, "fixvenue_md_heartbeats_total") < 2; m = scrape(t, s) {
		if time.Now().After(deadline) {
			t.Fatalf("no feed heartbeats within %v:\n%s", readWait, m)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v := metricstest.Float(t, m, "fixvenue_md_packets_sent_total"); v != 0 {
		t.Fatalf("fixvenue_md_packets_sent_total = %v on a feed that sent heartbeats only", v)
	}
	for _, line := range strings.Split(m, "\n") {
		if strings.HasPrefix(line, "# HELP fixvenue_md_packets_sent_total ") && !strings.Contains(line, "heartbeats are fixvenue_md_heartbeats_total") {
			t.Fatalf("the packets' help does not say the heartbeats are counted apart: %s", line)
		}
	}
	seq0 := metricstest.Float(t, m, "fixvenue_md_next_seq")
	if v := metricstest.Value(t, m, "fixvenue_md_stopped"); v != "0" {
		t.Fatalf("fixvenue_md_stopped = %s on a running feed", v)
	}
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "m1", side: "1", qty: "5", px: "99.00", tif: "1"})
	expectER(t, c, map[int]string{11: "m1", 150: "0"})
	waitMetric := func(what string, ok func(m string) bool) string {
		t.Helper()
		deadline := time.Now().Add(readWait)
		for {
			m := scrape(t, s)
			if ok(m) {
				return m
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not seen within %v:\n%s", what, readWait, m)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	m = waitMetric("the order on the feed", func(m string) bool {
		return metricstest.Float(t, m, "fixvenue_md_next_seq") > seq0
	})
	if v := metricstest.Float(t, m, "fixvenue_md_packets_sent_total"); v < 1 {
		t.Fatalf("fixvenue_md_packets_sent_total = %v after the feed's sequence moved", v)
	}
	if v := metricstest.Float(t, m, "fixvenue_md_bytes_sent_total"); v < 1 {
		t.Fatalf("fixvenue_md_bytes_sent_total = %v", v)
	}

	conn, err := net.Dial("tcp", s.RecoveryAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("\xff\xff\xff\xffnot a recovery request at all")); err != nil {
		t.Fatal(err)
	}
	waitMetric("the garbage counted", func(m string) bool {
		return metricstest.Float(t, m, "fixvenue_md_recovery_protocol_errors_total") == 1 &&
			metricstest.Float(t, m, "fixvenue_md_recovery_connections_total") == 1
	})
}

// TestFIXMarketDataSlowReader: a client subscribed to full refreshes of a
// deep book stops reading while another session changes the book several
// hundred times. Its refreshes wait for it and come as their net change
// once it reads again (gateway/fixmd/doc.go, "Slow readers"): it stays
// logged on, however little of its outbound queue and connection buffer
// there is, and the last refresh of each subscription is the book as it
// stands. Every refresh used to be queued (tens of kilobytes each for a
// deep book) until the queue or the connection's buffer overflowed and the
// session was disconnected.
func TestFIXMarketDataSlowReader(t *testing.T) {
	const (
		subs   = 8
		orders = 300
	)
	cfg := testConfig(t, t.TempDir(), "")
	withMarketData(t, cfg)
	cfg.FIX.OutboundQueueMax = 64
	s := startServer(t, cfg, Options{})
	slow := logon(t, s, "CLIENT2", true)
	for i := range subs {
		if err := slow.Send("V", fixclient.F(262, fmt.Sprint("full", i)), fixclient.F(263, "1"), fixclient.F(264, "0"),
			fixclient.F(267, "2"), fixclient.F(269, "0"), fixclient.F(269, "1"), fixclient.F(146, "1"), fixclient.F(55, "ACME")); err != nil {
			t.Fatal(err)
		}
		if _, err := slow.Expect(readWait, "W", map[int]string{262: fmt.Sprint("full", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// The slow client reads nothing while the book grows to 50 levels a
	// side and keeps changing.
	c := logon(t, s, "CLIENT1", true)
	for i := range orders {
		o := order{id: fmt.Sprint("o", i), qty: fmt.Sprint(1 + i%7), tif: "1", side: "1", px: fmt.Sprintf("99.%02d", i%100)}
		if i%2 == 1 {
			o.side, o.px = "2", fmt.Sprintf("100.%02d", 1+i%99)
		}
		sendOrder(t, c, o)
		expectER(t, c, map[int]string{11: o.id, 150: "0"})
	}
	if err := c.Send("V", fixclient.F(262, "now"), fixclient.F(263, "0"), fixclient.F(264, "0"),
		fixclient.F(267, "2"), fixclient.F(269, "0"), fixclient.F(269, "1"), fixclient.F(146, "1"), fixclient.F(55, "ACME")); err != nil {
		t.Fatal(err)
	}
	now, err := c.Expect(readWait, "W", map[int]string{262: "now"})
	if err != nil {
		t.Fatal(err)
	}
	book := func(w *fixclient.Message) string {
		_, entries, _ := strings.Cut(w.String(), "|268=")
		entries, _, _ = strings.Cut(entries, "|10=")
		return entries
	}
	want := book(now)
	// The slow client reads again: it is still logged on, and each
	// subscription's last refresh shows the book as it is now.
	// Each read waits readWait for a message: a refresh missing at the
	// end is one that never comes, however slowly a loaded machine (the
	// race detector) hands over those before it; the refreshes are
	// bounded by the changes, at most one per subscription each.
	last := map[string]string{}
	got := 0
	for done := false; !done; {
		if got > subs*(orders+1) {
			t.Fatalf("%d refreshes for %d subscriptions over %d changes, and the last ones do not show the book", got, subs, orders)
		}
		m, err := slow.Read(readWait)
		if err != nil {
			t.Fatalf("the slow reader, after %d refreshes: %v", got, err)
		}
		if m.Type() == "W" {
			got++
			last[m.Get(262)] = book(m)
		}
		done = len(last) == subs
		for _, b := range last {
			done = done && b == want
		}
	}
	if err := slow.Send("1", fixclient.F(112, "still-there")); err != nil {
		t.Fatal(err)
	}
	// Read skips Heartbeats: the answer to the TestRequest is looked for here.
	for deadline := time.Now().Add(readWait); ; {
		m, err := slow.ReadAny(time.Until(deadline))
		if err != nil {
			t.Fatalf("the slow reader is gone after %d refreshes: %v", got, err)
		}
		if m.Type() == "0" && m.Get(112) == "still-there" {
			break
		}
	}
	t.Logf("%d full refreshes for %d subscriptions over %d changes", got, subs, orders)
}

// TestFIXMarketDataByOrderIsRefused: a request for a book by order
// (AggregatedBook 266=N) is refused with MDReqRejReason 7, naming the
// field; it was answered with price levels, each of which such a client
// takes for one order. AggregatedBook Y, or none, is served.
func TestFIXMarketDataByOrderIsRefused(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), "")
	withMarketData(t, cfg)
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	for _, sub := range []string{"0", "1"} {
		id := "byorder" + sub
		if err := c.Send("V", fixclient.F(262, id), fixclient.F(263, sub), fixclient.F(264, "0"), fixclient.F(266, "N"),
			fixclient.F(267, "2"), fixclient.F(269, "0"), fixclient.F(269, "1"), fixclient.F(146, "1"), fixclient.F(55, "ACME")); err != nil {
			t.Fatal(err)
		}
		y, err := c.Expect(readWait, "Y", map[int]string{262: id, 281: "7"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(y.Get(58), "AggregatedBook N") {
			t.Fatalf("the reject does not name AggregatedBook: %s", y)
		}
	}
	if err := c.Send("V", fixclient.F(262, "levels"), fixclient.F(263, "0"), fixclient.F(264, "0"), fixclient.F(266, "Y"),
		fixclient.F(267, "2"), fixclient.F(269, "0"), fixclient.F(269, "1"), fixclient.F(146, "1"), fixclient.F(55, "ACME")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(readWait, "W", map[int]string{262: "levels"}); err != nil {
		t.Fatal(err)
	}
}

// TestMarketDataRequestWithMarketDataOff: at a venue whose market data is
// off, a MarketDataRequest gets a MarketDataRequestReject naming its
// MDReqID and saying why, which a client's market data code waits for; it
// got a BusinessMessageReject (380=3, a type the venue does not take).
func TestMarketDataRequestWithMarketDataOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	if err := c.Send("V", fixclient.F(262, "off1"), fixclient.F(263, "1"), fixclient.F(264, "5"),
		fixclient.F(267, "1"), fixclient.F(269, "0"), fixclient.F(146, "1"), fixclient.F(55, "ACME")); err != nil {
		t.Fatal(err)
	}
	y, err := c.Expect(readWait, "Y", map[int]string{262: "off1", 58: "market data is not served by this venue"})
	if err != nil {
		t.Fatal(err)
	}
	if y.Get(281) != "" {
		t.Fatalf("MDReqRejReason %s: FIX 4.4 has no reason for market data that is off: %s", y.Get(281), y)
	}
	// The session goes on.
	sendOrder(t, c, order{id: "after", side: "1", qty: "1", px: "99.00", tif: "0"})
	expectER(t, c, map[int]string{11: "after", 150: "0"})
}

// TestMarketDataOfAnInstrumentJustAdded: a client that asks for the market
// data of an instrument as soon as the venue tells it of its addition
// (TradingSessionStatus 325=Y) gets its snapshot, never "unknown symbol":
// the gateway, which sends that status and takes orders for the
// instrument, learns it before the feed has applied the addition, which
// is when FIX market data's depth cache learns it. The race is narrow, so
// the test adds instruments until it has met it often enough.
func TestMarketDataOfAnInstrumentJustAdded(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), adminConfig())
	withMarketData(t, cfg)
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	for i := range 40 {
		sym := fmt.Sprintf("NEW%d", i)
		body := fmt.Sprintf(`{"reason":"listing","symbol":%q,"tick_size":"0.01","lot_size":1,"min_qty":1,"max_qty":100,"ref_price":"10.00","band_percent":10}`, sym)
		// The admin call answers once FIX market data knows the
		// instrument; the session is told of it before that.
		added := make(chan string, 1)
		go func() { added <- postInstrument(s, body) }()
		if _, err := c.Expect(readWait, "h", map[int]string{336: sym}); err != nil {
			t.Fatalf("no TradingSessionStatus for the added %s: %v (admin: %s)", sym, err, <-added)
		}
		if err := c.Send("V", fixclient.F(262, "md-"+sym), fixclient.F(263, "0"), fixclient.F(264, "1"),
			fixclient.F(267, "1"), fixclient.F(269, "0"), fixclient.F(146, "1"), fixclient.F(55, sym)); err != nil {
			t.Fatal(err)
		}
		answered := false
		for range 10 { // the answer, behind the other sessions' statuses at most
			m, err := c.Read(readWait)
			if err != nil {
				t.Fatalf("no answer to the request for %s: %v", sym, err)
			}
			if m.Get(262) != "md-"+sym {
				continue
			}
			if m.Type() != "W" || m.Get(55) != sym {
				t.Fatalf("request for %s, told of its addition: %s", sym, m)
			}
			answered = true
			break
		}
		if !answered {
			t.Fatalf("no answer to the request for %s", sym)
		}
		if got := <-added; got != "200" {
			t.Fatalf("add %s: %s", sym, got)
		}
	}
}

// postInstrument adds an instrument through the admin API and returns the
// answer's status, or the error (from any goroutine).
func postInstrument(s *Server, body string) string {
	req, err := http.NewRequest("POST", "http://"+s.AdminAddr()+"/v1/instruments", strings.NewReader(body))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	return strconv.Itoa(resp.StatusCode)
}

// TestFIXMarketDataSubscriptionsBound: a session at its subscriptions
// bound (fixmd.SubscriptionsMax) asks for one more. It is refused with
// MDReqRejReason 2 (insufficient bandwidth, FIX's reason for a capacity),
// the Text naming the bound, where 281=0 told the client its symbol was
// unknown; the operator sees the subscriptions and the refusal on
// /metrics, where neither showed; the subscriptions already taken keep
// their refreshes, another session subscribes, and a session's end frees
// its subscriptions.
func TestFIXMarketDataSubscriptionsBound(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), "")
	withMarketData(t, cfg)
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	subscribe := func(c *fixclient.Client, id string) {
		t.Helper()
		if err := c.Send("V", fixclient.F(262, id), fixclient.F(263, "1"), fixclient.F(264, "1"), fixclient.F(265, "1"),
			fixclient.F(267, "1"), fixclient.F(269, "0"), fixclient.F(146, "1"), fixclient.F(55, "ACME")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range fixmd.SubscriptionsMax {
		id := "md" + strconv.Itoa(i)
		subscribe(c, id)
		if _, err := c.Expect(readWait, "W", map[int]string{262: id}); err != nil {
			t.Fatal(err)
		}
	}
	subscribe(c, "over")
	y, err := c.Expect(readWait, "Y", map[int]string{262: "over"})
	if err != nil {
		t.Fatal(err)
	}
	if y.Get(281) != "2" || !strings.Contains(y.Get(58), strconv.Itoa(fixmd.SubscriptionsMax)) {
		t.Fatalf("the subscription past the bound: %s, want 281=2 and a Text naming the bound %d", y, fixmd.SubscriptionsMax)
	}
	m := scrape(t, s)
	if v := metricstest.Float(t, m, "fixvenue_fix_md_subscriptions"); v != float64(fixmd.SubscriptionsMax) {
		t.Fatalf("fixvenue_fix_md_subscriptions = %v, want %d", v, fixmd.SubscriptionsMax)
	}
	if v := metricstest.Float(t, m, "fixvenue_fix_md_subscriptions_refused_total"); v != 1 {
		t.Fatalf("fixvenue_fix_md_subscriptions_refused_total = %v, want 1", v)
	}

	d := logon(t, s, "CLIENT2", true)
	subscribe(d, "other")
	if _, err := d.Expect(readWait, "W", map[int]string{262: "other"}); err != nil {
		t.Fatal(err)
	}
	sendOrder(t, d, order{id: "b1", side: "1", qty: "3", px: "99.00", tif: "1"})
	expectER(t, d, map[int]string{11: "b1", 150: "0"})
	for _, id := range []string{"md0", "md" + strconv.Itoa(fixmd.SubscriptionsMax-1)} {
		if _, err := c.Expect(readWait, "X", map[int]string{262: id}); err != nil {
			t.Fatalf("a subscription taken before the bound: %v", err)
		}
	}

	c.Logout()
	c.Close()
	for deadline := time.Now().Add(readWait); ; time.Sleep(10 * time.Millisecond) {
		if v := metricstest.Float(t, scrape(t, s), "fixvenue_fix_md_subscriptions"); v == 1 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("fixvenue_fix_md_subscriptions = %v after CLIENT1's end, want 1 (CLIENT2's)", v)
		}
	}
}
