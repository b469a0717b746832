package server

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestScheduledOpeningAuction runs the opening call of the compressed
// trading day over FIX on TCP: in the pre-open a crossing buy and sell and
// an order at the opening (59=2) are accepted and do not trade; at the
// scheduled open the book uncrosses at one price (the reference 100.00,
// the lower of the tied prices), both fills carry TradingSessionSubID 2
// (opening auction), and the order at the opening that did not trade
// expires.
//
// The day's clock is the test's: the schedule moves ACME into the call and
// out of it when the test moves the clock, so the orders are in the call
// however long they take to be answered (on the wall clock's call of one
// second a loaded machine could answer them after the open).
func TestScheduledOpeningAuction(t *testing.T) {
	t.Parallel()
	dayStart := time.Now().Truncate(compressedDayLength)
	var clock atomic.Int64
	set := func(d time.Duration) { clock.Store(dayStart.Add(d).UnixNano()) }
	set(500 * time.Millisecond) // before the pre-open
	s := tradingDayVenueAt(t, t.TempDir(), func() time.Time { return time.Unix(0, clock.Load()) })
	waitReady(t, s)
	c := logon(t, s, "CLIENT1", true)
	waitStatus(t, s, "ACME", "Closed", readWait)
	set(1500 * time.Millisecond) // the pre-open: the opening call
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
	sendOrder(t, c, order{id: "opg-buy", side: "1", qty: "10", px: "100.50"})
	sendOrder(t, c, order{id: "opg-sell", side: "2", qty: "10", px: "100.00"})
	sendOrder(t, c, order{id: "at-open", side: "1", qty: "1", px: "99.00", tif: "2"})
	sendOrder(t, c, order{id: "ioc", side: "1", qty: "1", px: "99.00", tif: "3"})
	expectER(t, c, map[int]string{11: "opg-buy", 150: "0"})
	expectER(t, c, map[int]string{11: "opg-sell", 150: "0"})
	expectER(t, c, map[int]string{11: "at-open", 150: "0", 59: "2"})
	expectER(t, c, map[int]string{11: "ioc", 150: "8", 103: "11",
		58: "IOC and FOK orders are not accepted during a call phase: nothing matches until the uncross"})
	st := waitInstrument(t, s, "ACME", "a crossed book in the call", func(st ops.InstrumentInfo) bool { return st.Bid != "" && st.Ask != "" })
	if st.Status != "OpeningCall" || st.Bid != "100.50" || st.Ask != "100.00" {
		t.Fatalf("in the call the book should rest crossed: %+v", st)
	}
	set(2500 * time.Millisecond) // the open
	waitStatus(t, s, "ACME", "Open", readWait)
	expectER(t, c, map[int]string{11: "opg-buy", 150: "F", 39: "2", 31: "100.00", 32: "10", 625: "2"})
	expectER(t, c, map[int]string{11: "opg-sell", 150: "F", 39: "2", 31: "100.00", 32: "10", 625: "2"})
	expectER(t, c, map[int]string{11: "at-open", 150: "C", 39: "C"})
	waitInstrument(t, s, "ACME", "an empty book after the uncross", func(st ops.InstrumentInfo) bool { return st.Bid == "" && st.Ask == "" })
}

// TestVolatilityAuctionEndsOnItsOwn: an order that would trade outside
// ACME's dynamic band (1.00 around the last trade) does not; FIX clients
// hear why in a TradingSessionStatus (340=4 and the reason in Text); and
// with no further order, the venue's own timer journals the command that
// ends the volatility auction, which uncrosses the crossed book (625=6).
func TestVolatilityAuctionEndsOnItsOwn(t *testing.T) {
	t.Parallel()
	_, _, c := volatileACME(t, "", 500*time.Millisecond)
	sendOrder(t, c, order{id: "s2", side: "2", qty: "5", px: "102.00"})
	sendOrder(t, c, order{id: "b2", side: "1", qty: "5", px: "102.00"})
	expectER(t, c, map[int]string{11: "s2", 150: "0"})
	expectER(t, c, map[int]string{11: "b2", 150: "0"}) // no fill: 102.00 is outside 99.00 to 101.00
	h, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: "4"})
	if err != nil {
		t.Fatalf("no TradingSessionStatus for the interruption: %v (received %v)", err, c.Received)
	}
	if text := h.Get(58); !strings.Contains(text, "volatility interruption: a trade at 102.00 would be outside 99.00 to 101.00") {
		t.Fatalf("Text %q does not say why", text)
	}
	// The buy side of an uncross's trade is reported first.
	expectER(t, c, map[int]string{11: "b2", 150: "F", 31: "102.00", 625: "6"})
	expectER(t, c, map[int]string{11: "s2", 150: "F", 31: "102.00", 625: "6"})
	if _, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: "2"}); err != nil {
		t.Fatalf("no TradingSessionStatus for the reopening: %v", err)
	}
}

// volatileACME starts a venue whose ACME has a dynamic band of 1.00 and
// volatility auctions of auction, and trades 1 at 100.00 there (the last
// trade price the band is around).
func volatileACME(t *testing.T, extra string, auction time.Duration) (*config.Config, *Server, *fixclient.Client) {
	t.Helper()
	return volatileACMEWith(t, extra, auction, Options{})
}

// volatileACMEWith is volatileACME on a venue started with opts.
func volatileACMEWith(t *testing.T, extra string, auction time.Duration, opts Options) (*config.Config, *Server, *fixclient.Client) {
	t.Helper()
	cfg := testConfig(t, t.TempDir(), extra)
	for i := range cfg.Instruments {
		if cfg.Instruments[i].Symbol == "ACME" {
			cfg.Instruments[i].VolatilityBandTicks = 100
			cfg.Instruments[i].VolatilityAuction.Duration = auction
		}
	}
	s := startServer(t, cfg, opts)
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "s1", side: "2", qty: "1", px: "100.00"})
	sendOrder(t, c, order{id: "b1", side: "1", qty: "1", px: "100.00"})
	expectER(t, c, map[int]string{11: "b1", 150: "F", 31: "100.00"})
	return cfg, s, c
}

// TestOperatorClosesClosingCall: ACME starts in the closing call; a buy at
// the close (59=7), a crossing sell and a buy at the close that cannot
// trade rest without matching; when an operator closes ACME (the admin
// API, what the schedule does at the close) the book uncrosses at the
// reference 100.00 (100.00 and 100.50 tie on volume and imbalance), both
// fills carry TradingSessionSubID 4 (closing auction), the order at the
// close left over expires, and the session hears that ACME closed (340=3).
// A FIX client cannot end a call, so the venue scripts cannot show this
// (fixtests/scripts/venue/auction_closing_call.def).
func TestOperatorClosesClosingCall(t *testing.T) {
	t.Parallel()
	s, c := closingCallACME(t)
	sendOrder(t, c, order{id: "cls-buy", side: "1", qty: "10", px: "100.50", tif: "7"})
	sendOrder(t, c, order{id: "cls-sell", side: "2", qty: "10", px: "100.00"})
	sendOrder(t, c, order{id: "at-close", side: "1", qty: "1", px: "99.00", tif: "7"})
	expectER(t, c, map[int]string{11: "cls-buy", 150: "0", 59: "7"})
	expectER(t, c, map[int]string{11: "cls-sell", 150: "0"})
	expectER(t, c, map[int]string{11: "at-close", 150: "0", 59: "7"})
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/close", aliceToken, `{"reason":"the close"}`, nil); code != 200 {
		t.Fatalf("close: %d", code)
	}
	expectER(t, c, map[int]string{11: "cls-buy", 150: "F", 39: "2", 31: "100.00", 32: "10", 625: "4"})
	expectER(t, c, map[int]string{11: "cls-sell", 150: "F", 39: "2", 31: "100.00", 32: "10", 625: "4"})
	expectER(t, c, map[int]string{11: "at-close", 150: "C", 39: "C"})
	if _, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: "3"}); err != nil {
		t.Fatalf("no TradingSessionStatus for the close: %v", err)
	}
}

// TestVolatilityAuctionEndsAfterARestart: a venue stopped during a
// volatility auction ends it on time after its restart, with no order
// arriving: the control plane's timer takes the due time from the matcher
// it starts on (core.Matcher.NextDueNs).
func TestVolatilityAuctionEndsAfterARestart(t *testing.T) {
	t.Parallel()
	cfg, s, c := volatileACME(t, adminConfig(), 3*time.Second)
	sendOrder(t, c, order{id: "s2", side: "2", qty: "5", px: "102.00", tif: "1"})
	sendOrder(t, c, order{id: "b2", side: "1", qty: "5", px: "102.00", tif: "1"})
	expectER(t, c, map[int]string{11: "b2", 150: "0"})
	if _, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: "4"}); err != nil {
		t.Fatalf("no volatility interruption: %v", err)
	}
	c.Close()
	s.Close()
	s = startServer(t, cfg, Options{})
	waitStatus(t, s, "ACME", "VolatilityAuction", time.Second)
	waitStatus(t, s, "ACME", "Open", 5*time.Second)
}

// TestVolatilityAuctionEndsAfterTheClockSteppedBack: the venue's clock
// steps back an hour during a volatility auction of 2 s on an idle venue;
// the auction still ends about 2 s later: the control plane's timer, its
// clock reading well before the last command's time, journals a Tick, and
// the matcher ends the auction at most its length after that Tick's time.
// Both waited for the clock to come back to the auction's end, an hour on.
func TestVolatilityAuctionEndsAfterTheClockSteppedBack(t *testing.T) {
	t.Parallel()
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	_, _, c := volatileACMEWith(t, "", 2*time.Second, Options{Now: clock})
	sendOrder(t, c, order{id: "s2", side: "2", qty: "5", px: "102.00"})
	sendOrder(t, c, order{id: "b2", side: "1", qty: "5", px: "102.00"})
	expectER(t, c, map[int]string{11: "b2", 150: "0"})
	if _, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: "4"}); err != nil {
		t.Fatalf("no volatility interruption: %v", err)
	}
	offset.Store(int64(-time.Hour))
	if _, err := c.Expect(2*readWait, "8", map[int]string{11: "b2", 150: "F", 31: "102.00", 625: "6"}); err != nil {
		t.Fatalf("the auction did not end after the clock stepped back: %v", err)
	}
}

// TestGTDOrderExpiresOnItsOwn: a GTD order is reported expired (150=C) at
// its ExpireTime with no other traffic: the control plane's timer journals
// a Tick once the earliest expiry of the resting orders has passed, and
// the matcher expires it at that command ("Order lifecycle" in core/doc.go).
// One that expired while the venue was stopped expires right after the
// restart.
func TestGTDOrderExpiresOnItsOwn(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), adminConfig())
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	gtd := func(id string, in time.Duration) {
		t.Helper()
		expire := time.Now().Add(in).UTC().Format("20060102-15:04:05.000")
		sendOrder(t, c, order{id: id, side: "1", qty: "1", px: "97.00", tif: "6", extra: []fixclient.Field{fixclient.F(126, expire)}})
		expectER(t, c, map[int]string{11: id, 150: "0"})
	}
	gtd("soon", time.Second)
	gtd("later", time.Hour)
	expectER(t, c, map[int]string{11: "soon", 150: "C", 39: "C"})
	gtd("after-restart", 2*time.Second)
	c.Close()
	s.Close()
	time.Sleep(2500 * time.Millisecond) // it expires while the venue is down
	s = startServer(t, cfg, Options{})
	// No command arrives: only "later" is left once the timer has acted.
	waitInstrument(t, s, "ACME", "the GTD order that expired while the venue was down gone",
		func(st ops.InstrumentInfo) bool { return st.RestingOrders == 1 })
}

// TestGTDExpireDateEndsAtTheEndOfDay: a GTD order with an ExpireDate (432)
// instead of an ExpireTime trades through that local market date: with a
// schedule, it rests until the end of day on that date in the schedule's
// time zone, which its report gives as ExpireTime (126) in UTC.
func TestGTDExpireDateEndsAtTheEndOfDay(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), adminConfig()+`
[schedule]
enabled = true
time_zone = "America/New_York"
trading_days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
end_of_day = "17h30m"
[[schedule.group]]
name = "all"
pre_open = "7h"
open = "8h"
close = "16h"
`)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	// The schedule's clock stays at noon in New York: every instrument open.
	s := startServer(t, cfg, Options{Now: stoppedClock(time.Date(2026, 12, 2, 12, 0, 0, 0, ny))})
	waitStatus(t, s, "ACME", "Open", 5*time.Second)
	c := logon(t, s, "CLIENT1", true)
	for _, tc := range []struct{ date, expire string }{
		{"20991231", "20991231-22:29:59.999"}, // EST: UTC-5
		{"20990704", "20990704-21:29:59.999"}, // EDT: UTC-4
	} {
		id := "gtd-" + tc.date
		sendOrder(t, c, order{id: id, side: "1", qty: "1", px: "97.00", tif: "6", extra: []fixclient.Field{fixclient.F(432, tc.date)}})
		expectER(t, c, map[int]string{11: id, 150: "0", 126: tc.expire})
	}
	sendOrder(t, c, order{id: "gtd-past", side: "1", qty: "1", px: "97.00", tif: "6", extra: []fixclient.Field{fixclient.F(432, "20260101")}})
	expectER(t, c, map[int]string{11: "gtd-past", 150: "8", 58: "expire time is in the past"})
	// A date past the last year the matcher's nanoseconds hold is a date
	// all the same: the reject says what is wrong with it.
	sendOrder(t, c, order{id: "gtd-far", side: "1", qty: "1", px: "97.00", tif: "6", extra: []fixclient.Field{fixclient.F(432, "99991231")}})
	expectER(t, c, map[int]string{11: "gtd-far", 150: "8", 58: "ExpireDate (432) 99991231 is after 2261, the last year the venue takes (GTC, 59=1, for no expiry)"})
}

// TestThrottledIndicativeIsPublishedOnItsOwn: with indicative_interval set,
// a change to a call's indicative uncross within the interval of the last
// publication waits for it; with no further order, the control plane's
// timer journals the Tick that publishes it (before, it waited for the
// next command of anyone).
func TestThrottledIndicativeIsPublishedOnItsOwn(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), "")
	withMarketData(t, cfg)
	cfg.Engine.IndicativeInterval.Duration = time.Second
	for i := range cfg.Instruments {
		if cfg.Instruments[i].Symbol == "ACME" {
			cfg.Instruments[i].Status = venue.TradingStatusOpeningCall
		}
	}
	s := startServer(t, cfg, Options{})
	md := imbalanceSubscriber(t, s)
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "b", side: "1", qty: "10", px: "100.50"})
	expectER(t, c, map[int]string{11: "b", 150: "0"})
	if _, err := md.Expect(readWait, "X", map[int]string{262: "imb", 269: "A", 271: "0"}); err != nil { // nothing crosses yet
		t.Fatalf("%v: %v", err, md.Received)
	}
	sendOrder(t, c, order{id: "s", side: "2", qty: "10", px: "100.00"}) // within the interval: held back
	expectER(t, c, map[int]string{11: "s", 150: "0"})
	if _, err := md.Expect(3*time.Second, "X", map[int]string{262: "imb", 269: "A", 271: "10"}); err != nil {
		t.Fatalf("the held-back indicative was not published on its own: %v", err)
	}
}

// TestStopsWaitForTheVolatilityAuction: a buy stop whose stop price is
// reached by the trade that starts a volatility interruption is not
// elected in the auction (it was elected and then cancelled as a market
// order with nowhere to go); it waits until the uncross reopens ACME and
// then buys. A stop elected in continuous trading whose own trade meets
// the interruption waits for the uncross with its remainder, as a market
// order does, instead of being cancelled.
func TestStopsWaitForTheVolatilityAuction(t *testing.T) {
	t.Parallel()
	stopAt := func(id, qty, stopPx string) order {
		return order{id: id, side: "1", qty: qty, typ: "3", tif: "1", extra: []fixclient.Field{fixclient.F(99, stopPx)}}
	}
	t.Run("elected by the trade that interrupts", func(t *testing.T) {
		_, _, c := volatileACME(t, "", time.Second)
		sendOrder(t, c, order{id: "a1", side: "2", qty: "5", px: "100.50"})
		sendOrder(t, c, order{id: "a2", side: "2", qty: "5", px: "102.00"})
		sendOrder(t, c, stopAt("stop", "3", "100.25"))
		expectER(t, c, map[int]string{11: "stop", 150: "0"})
		// 5 at 100.50 reach the stop price; 102.00 is outside 99.00 to 101.00.
		sendOrder(t, c, order{id: "agg", side: "1", qty: "10", px: "103.00"})
		expectER(t, c, map[int]string{11: "agg", 150: "F", 39: "1", 31: "100.50", 32: "5"})
		if _, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: "4"}); err != nil {
			t.Fatalf("no interruption: %v", err)
		}
		// In the auction, an offer the stop can buy once ACME reopens (the
		// uncross at 102.00 moves the band to 101.00 to 103.00).
		sendOrder(t, c, order{id: "a3", side: "2", qty: "5", px: "102.50"})
		expectER(t, c, map[int]string{11: "a3", 150: "0"})
		expectER(t, c, map[int]string{11: "agg", 150: "F", 31: "102.00", 32: "5", 625: "6"})
		expectER(t, c, map[int]string{11: "stop", 150: "D"})
		expectER(t, c, map[int]string{11: "stop", 150: "F", 31: "102.50", 32: "3", 39: "2"})
		before(t, c, map[int]string{11: "agg", 625: "6"}, map[int]string{11: "stop", 150: "D"})
		never(t, c, map[int]string{11: "stop", 150: "4"})
	})
	t.Run("interrupted while it trades", func(t *testing.T) {
		_, _, c := volatileACME(t, "", 300*time.Millisecond)
		sendOrder(t, c, order{id: "a1", side: "2", qty: "5", px: "100.50"})
		sendOrder(t, c, order{id: "a2", side: "2", qty: "5", px: "102.00"})
		sendOrder(t, c, stopAt("stop", "3", "100.25"))
		expectER(t, c, map[int]string{11: "stop", 150: "0"})
		// Exactly the 5 at 100.50: the stop is elected in continuous
		// trading, and 102.00 is outside 99.50 to 101.50.
		sendOrder(t, c, order{id: "b", side: "1", qty: "5", px: "100.50"})
		expectER(t, c, map[int]string{11: "b", 150: "F", 31: "100.50"})
		expectER(t, c, map[int]string{11: "stop", 150: "D"})
		if _, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: "4"}); err != nil {
			t.Fatalf("no interruption: %v", err)
		}
		// The uncross: the stop's 3 against the offer at 102.00.
		expectER(t, c, map[int]string{11: "stop", 150: "F", 31: "102.00", 32: "3", 625: "6"})
		never(t, c, map[int]string{11: "stop", 150: "4"})
	})
}

// TestElectedStopWaitingForTheUncrossKeepsStopPx: a stop elected in
// continuous trading whose own trade meets a volatility interruption waits
// for the uncross; a status request (H) for it meanwhile reports it as its
// trigger report did, a stop order (40=3) with its StopPx (99), which FIX
// 4.4 requires of every report of an order that gave one. The matcher
// dropped the stop price of a stop waiting for an uncross, and the answer
// lacked it. So it goes on after a restart from a snapshot taken while it
// waits.
func TestElectedStopWaitingForTheUncrossKeepsStopPx(t *testing.T) {
	t.Parallel()
	// volatileACME's venue, with snapshots as in TestRestartFromSnapshot
	// (which says why a second) and an auction that outlasts the test: the
	// stop waits throughout.
	cfg := testConfig(t, t.TempDir(), "")
	cfg.Journal.SnapshotInterval.Duration = time.Second
	for i := range cfg.Instruments {
		if cfg.Instruments[i].Symbol == "ACME" {
			cfg.Instruments[i].VolatilityBandTicks = 100
			cfg.Instruments[i].VolatilityAuction.Duration = time.Hour
		}
	}
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "s1", side: "2", qty: "1", px: "100.00"})
	sendOrder(t, c, order{id: "b1", side: "1", qty: "1", px: "100.00"})
	expectER(t, c, map[int]string{11: "b1", 150: "F", 31: "100.00"})
	sendOrder(t, c, order{id: "a1", side: "2", qty: "5", px: "100.50"})
	sendOrder(t, c, order{id: "a2", side: "2", qty: "5", px: "102.00"})
	sendOrder(t, c, order{id: "stop", side: "1", qty: "3", typ: "3", tif: "1", extra: []fixclient.Field{fixclient.F(99, "100.25")}})
	expectER(t, c, map[int]string{11: "stop", 150: "0", 40: "3", 99: "100.25"})
	// Exactly the 5 at 100.50 elect the stop, whose buy at 102.00 would
	// be outside 99.50 to 101.50.
	sendOrder(t, c, order{id: "b", side: "1", qty: "5", px: "100.50"})
	expectER(t, c, map[int]string{11: "b", 150: "F", 31: "100.50"})
	expectER(t, c, map[int]string{11: "stop", 150: "D", 40: "3", 99: "100.25"})
	if _, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: "4"}); err != nil {
		t.Fatalf("no interruption: %v", err)
	}
	ask := func(r *fixclient.Client, when string) {
		t.Helper()
		if err := r.Send("H", fixclient.F(11, "stop"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
			t.Fatal(err)
		}
		m := expectER(t, r, map[int]string{11: "stop", 150: "I"})
		for tg, v := range map[int]string{39: "0", 40: "3", 99: "100.25", 151: "3"} {
			if m.Get(tg) != v {
				t.Errorf("%s: the status of the waiting stop has tag %d %q, want %q: %s", when, tg, m.Get(tg), v, m)
			}
		}
	}
	_, r := restartFromSnapshot(t, s, cfg, c, ask)
	ask(r, "status after a restart from a snapshot")
}

// TestReplaceOfWaitingMarketOrderSaysWhy: a replace of an order waiting
// for the uncross with no price, a market order entered in the call or a
// stop elected before it (which keeps OrdType 3 in its reports), is
// refused with a Text that says so, the order left as it was; the Text
// was the catch-all one of a replace that changes what the order is
// ("a replace must keep the order's Side...").
func TestReplaceOfWaitingMarketOrderSaysWhy(t *testing.T) {
	t.Parallel()
	_, _, c := volatileACME(t, "", time.Hour) // an auction that outlasts the test
	sendOrder(t, c, order{id: "a1", side: "2", qty: "5", px: "100.50"})
	sendOrder(t, c, order{id: "a2", side: "2", qty: "5", px: "102.00"})
	sendOrder(t, c, order{id: "stop", side: "1", qty: "3", typ: "3", tif: "1", extra: []fixclient.Field{fixclient.F(99, "100.25")}})
	expectER(t, c, map[int]string{11: "stop", 150: "0", 40: "3", 99: "100.25"})
	// The 5 at 100.50 elect the stop, whose buy at 102.00 would be outside
	// 99.50 to 101.50: it waits for the uncross.
	sendOrder(t, c, order{id: "b", side: "1", qty: "5", px: "100.50"})
	expectER(t, c, map[int]string{11: "stop", 150: "D", 40: "3", 99: "100.25"})
	if _, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: "4"}); err != nil {
		t.Fatalf("no interruption: %v", err)
	}
	sendOrder(t, c, order{id: "mkt", side: "1", qty: "2", typ: "1"})
	expectER(t, c, map[int]string{11: "mkt", 150: "0", 39: "0", 40: "1"})
	for _, tc := range []struct {
		id, orig, typ, text string
		extra               []fixclient.Field
	}{
		{"mkt2", "mkt", "1", "a market order cannot be replaced: it waits for the uncross with no price to change; cancel it instead", nil},
		{"stop2", "stop", "3", "an elected stop order cannot be replaced: it is a market order now, waiting for the uncross with no price " +
			"to change; cancel it instead", []fixclient.Field{fixclient.F(59, "1"), fixclient.F(99, "100.25")}},
	} {
		f := append([]fixclient.Field{fixclient.F(11, tc.id), fixclient.F(41, tc.orig), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, tc.typ)}, tc.extra...)
		if err := c.Send("G", f...); err != nil {
			t.Fatal(err)
		}
		m, err := c.Expect(readWait, "9", map[int]string{11: tc.id})
		if err != nil {
			t.Fatalf("%s: %v (received so far: %v)", tc.id, err, c.Received)
		}
		if m.Get(41) != tc.orig || m.Get(39) != "0" || m.Get(102) != "99" || m.Get(434) != "2" || m.Get(58) != tc.text {
			t.Errorf("%s: %s; want 41=%s 39=0 102=99 434=2 58=%q", tc.id, m, tc.orig, tc.text)
		}
	}
}

// before fails unless c received an ExecutionReport matching first before
// one matching second.
func before(t *testing.T, c *fixclient.Client, first, second map[int]string) {
	t.Helper()
	i, j := indexOf(c, first), indexOf(c, second)
	if i < 0 || j < 0 || i > j {
		t.Fatalf("%v (at %d) should come before %v (at %d): %v", first, i, second, j, c.Received)
	}
}

// never fails if c received an ExecutionReport matching want.
func never(t *testing.T, c *fixclient.Client, want map[int]string) {
	t.Helper()
	if i := indexOf(c, want); i >= 0 {
		t.Fatalf("unexpected %v: %v", want, c.Received[i])
	}
}

func indexOf(c *fixclient.Client, want map[int]string) int {
next:
	for i, m := range c.Received {
		if m.Type() != "8" {
			continue
		}
		for tag, v := range want {
			if m.Get(tag) != v {
				continue next
			}
		}
		return i
	}
	return -1
}

// closingCallACME starts a venue with the admin API whose ACME is in its
// closing call, and logs CLIENT1 on.
func closingCallACME(t *testing.T) (*Server, *fixclient.Client) {
	t.Helper()
	return closingCallACMEWith(t, "")
}

// closingCallACMEWith is closingCallACME with extra configuration.
func closingCallACMEWith(t *testing.T, extra string) (*Server, *fixclient.Client) {
	t.Helper()
	cfg := testConfig(t, t.TempDir(), adminConfig()+extra)
	for i := range cfg.Instruments {
		if cfg.Instruments[i].Symbol == "ACME" {
			cfg.Instruments[i].Status = venue.TradingStatusClosingCall
		}
	}
	s := startServer(t, cfg, Options{})
	return s, logon(t, s, "CLIENT1", true)
}

// TestUncrossRemainderSaysSo: a market order that waited in a call and
// found nothing at the uncross is cancelled with a Text that says so (it
// said "no more liquidity within the price band", continuous trading's).
func TestUncrossRemainderSaysSo(t *testing.T) {
	t.Parallel()
	s, c := closingCallACME(t)
	sendOrder(t, c, order{id: "mkt", side: "1", qty: "5", typ: "1"})
	expectER(t, c, map[int]string{11: "mkt", 150: "0"})
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/close", aliceToken, `{"reason":"the close"}`, nil); code != 200 {
		t.Fatalf("close: %d", code)
	}
	expectER(t, c, map[int]string{11: "mkt", 150: "4", 58: "market order remainder cancelled: nothing left to match it at the uncross"})
}

// TestUncrossAfterBandMoveStaysInBand: in ACME's closing call a market buy
// and a market sell would uncross at the reference price, 100.00; an
// operator moves the band to 2% around 108.00 (105.84 to 110.16). The
// indicative moves to 108.00 at once, and the uncross prints there: it
// stayed at the configured 100.00, outside the band in force, and the
// feed kept showing 100.00 (core doc, "Auctions").
func TestUncrossAfterBandMoveStaysInBand(t *testing.T) {
	t.Parallel()
	s, md, c := marketOrdersInACall(t)
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/band", aliceToken, `{"reason":"new reference","ref_price":"108.00","band_percent":2}`, nil); code != 200 {
		t.Fatalf("band: %d", code)
	}
	if _, err := md.Expect(readWait, "X", map[int]string{262: "imb", 269: "A", 270: "108.00", 271: "5"}); err != nil {
		t.Fatalf("the indicative did not follow the reference price: %v: %v", err, md.Received)
	}
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/close", aliceToken, `{"reason":"the close"}`, nil); code != 200 {
		t.Fatalf("close: %d", code)
	}
	expectER(t, c, map[int]string{11: "mkt-buy", 150: "F", 39: "2", 31: "108.00", 32: "5", 625: "4"})
	expectER(t, c, map[int]string{11: "mkt-sell", 150: "F", 39: "2", 31: "108.00", 32: "5", 625: "4"})
}

// TestBandMoveMovesTheVolatilityReference: ACME last traded at 100.00 and
// has a dynamic band of 1.00; an operator moves the price band to 2% around
// 108.00, away from that trade. A trade at 108.00 is inside the dynamic
// band around the new reference and trades: measured from the last trade,
// which no order can reach any more, every trade interrupted.
func TestBandMoveMovesTheVolatilityReference(t *testing.T) {
	t.Parallel()
	_, s, c := volatileACME(t, adminConfig(), time.Minute)
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/band", aliceToken, `{"reason":"new reference","ref_price":"108.00","band_percent":2}`, nil); code != 200 {
		t.Fatalf("band: %d", code)
	}
	sendOrder(t, c, order{id: "s108", side: "2", qty: "1", px: "108.00"})
	sendOrder(t, c, order{id: "b108", side: "1", qty: "1", px: "108.00"})
	expectER(t, c, map[int]string{11: "s108", 150: "0"})
	expectER(t, c, map[int]string{11: "b108", 150: "0"})
	expectER(t, c, map[int]string{11: "b108", 150: "F", 39: "2", 31: "108.00"})
}

// TestStopElectedAtTheCloseRunsAtTheOpen: a sell stop at 99.50 is elected
// by the closing uncross at 99.00 and waits for the open; the next opening
// uncross prints at 101.00, which alone would not elect it. At the open it
// runs all the same (150=D, triggered by the close's 99.00) and sells to
// the bid at 98.00: it stayed waiting, without a word (core doc,
// "Auctions").
func TestStopElectedAtTheCloseRunsAtTheOpen(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()+idleSchedule()), Options{})
	waitReady(t, s)
	c := logon(t, s, "CLIENT1", true)
	phase := func(p string) {
		t.Helper()
		if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, `{"reason":"test","group":"acme","phase":"`+p+`"}`, nil); code != 200 {
			t.Fatalf("phase %s: %d", p, code)
		}
	}
	cross := func(id, px string) {
		t.Helper()
		sendOrder(t, c, order{id: id + "-b", side: "1", qty: "1", px: px})
		sendOrder(t, c, order{id: id + "-s", side: "2", qty: "1", px: px})
		expectER(t, c, map[int]string{11: id + "-b", 150: "0"})
		expectER(t, c, map[int]string{11: id + "-s", 150: "0"})
	}
	phase("pre_open")
	cross("opg", "100.00")
	phase("open")
	expectER(t, c, map[int]string{11: "opg-s", 150: "F", 31: "100.00"})
	sendOrder(t, c, order{id: "stop", side: "2", qty: "5", typ: "3", extra: []fixclient.Field{fixclient.F(99, "99.50")}})
	expectER(t, c, map[int]string{11: "stop", 150: "0"})
	phase("closing_call")
	cross("cls", "99.00")
	phase("close")
	expectER(t, c, map[int]string{11: "cls-s", 150: "F", 31: "99.00", 625: "4"})
	phase("pre_open")
	cross("opg2", "101.00")
	sendOrder(t, c, order{id: "bid", side: "1", qty: "5", px: "98.00"})
	expectER(t, c, map[int]string{11: "bid", 150: "0"})
	phase("open")
	expectER(t, c, map[int]string{11: "opg2-s", 150: "F", 31: "101.00", 625: "2"})
	expectER(t, c, map[int]string{11: "stop", 150: "D", 58: "stop triggered by a trade at 99.00"})
	expectER(t, c, map[int]string{11: "stop", 150: "F", 39: "2", 31: "98.00", 32: "5"})
}

// imbalanceSubscriber logs CLIENT2 on and subscribes it (MDReqID "imb") to
// ACME's auction imbalance (269=A), its snapshot read.
func imbalanceSubscriber(t *testing.T, s *Server) *fixclient.Client {
	t.Helper()
	md := logon(t, s, "CLIENT2", true)
	if err := md.Send("V", fixclient.F(262, "imb"), fixclient.F(263, "1"), fixclient.F(264, "0"), fixclient.F(265, "1"),
		fixclient.F(267, "1"), fixclient.F(269, "A"), fixclient.F(146, "1"), fixclient.F(55, "ACME")); err != nil {
		t.Fatal(err)
	}
	if _, err := md.Expect(readWait, "W", map[int]string{262: "imb"}); err != nil {
		t.Fatalf("%v: %v", err, md.Received)
	}
	return md
}

// TestMarketOrdersAloneUncrossAtTheReference: in ACME's closing call a
// market buy and a market sell of 5 would uncross at the reference price,
// 100.00; an ask of 2 at 105.00 joins them, behind the market sell. Only
// the market orders would trade still, and they trade at 100.00: the
// indicative stays there, and so do the fills. The uncross took the ask's
// price, the only limit price in the book, for theirs: one small order at
// the band's edge that does not trade set the price the market buyers paid.
func TestMarketOrdersAloneUncrossAtTheReference(t *testing.T) {
	t.Parallel()
	s, md, c := marketOrdersInACall(t)
	sendOrder(t, c, order{id: "edge-ask", side: "2", qty: "2", px: "105.00"})
	expectER(t, c, map[int]string{11: "edge-ask", 150: "0"})
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/close", aliceToken, `{"reason":"the close"}`, nil); code != 200 {
		t.Fatalf("close: %d", code)
	}
	// At 100.00 the ask would not trade (no imbalance): the indicative did
	// not change, so the next update is the uncross's delete.
	m, err := md.Expect(readWait, "X", map[int]string{262: "imb"})
	if err != nil || m.Get(279) != "2" {
		t.Fatalf("the indicative moved for an ask that does not trade (%v): %v", err, md.Received)
	}
	expectER(t, c, map[int]string{11: "mkt-buy", 150: "F", 39: "2", 31: "100.00", 32: "5", 625: "4"})
	expectER(t, c, map[int]string{11: "mkt-sell", 150: "F", 39: "2", 31: "100.00", 32: "5", 625: "4"})
}

// marketOrdersInACall starts a venue with ACME in its closing call, an
// imbalance subscriber, and CLIENT1's market buy and market sell of 5,
// which would uncross at the reference price, 100.00: the indicative says
// so when it returns.
func marketOrdersInACall(t *testing.T) (*Server, *fixclient.Client, *fixclient.Client) {
	t.Helper()
	s, md := closingCallVenue(t)
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "mkt-buy", side: "1", qty: "5", typ: "1"})
	sendOrder(t, c, order{id: "mkt-sell", side: "2", qty: "5", typ: "1"})
	expectER(t, c, map[int]string{11: "mkt-buy", 150: "0"})
	expectER(t, c, map[int]string{11: "mkt-sell", 150: "0"})
	if _, err := md.Expect(readWait, "X", map[int]string{262: "imb", 269: "A", 270: "100.00", 271: "5"}); err != nil {
		t.Fatalf("%v: %v", err, md.Received)
	}
	return s, md, c
}

// TestUncrossAtTheReferenceBetweenCandidates: in ACME's closing call a bid
// of 10 at 101.00 and an ask of 10 at 99.00 would trade 10 at either price
// with nothing left over, and the reference price, 100.00, lies between
// them: the feed's indicative and the uncross are at 100.00, and both
// clients' fills say so (31) and name the closing auction (625=4). The
// venue took the lower of the two equally near prices, 99.00, for the
// buyer's benefit alone.
func TestUncrossAtTheReferenceBetweenCandidates(t *testing.T) {
	t.Parallel()
	s, md := closingCallVenue(t)
	buyer := logon(t, s, "CLIENT1", true)
	seller := logon(t, s, "CLIENT3", true)
	sendOrder(t, buyer, order{id: "bid", side: "1", qty: "10", px: "101.00"})
	expectER(t, buyer, map[int]string{11: "bid", 150: "0"})
	sendOrder(t, seller, order{id: "ask", side: "2", qty: "10", px: "99.00"})
	expectER(t, seller, map[int]string{11: "ask", 150: "0"})
	if _, err := md.Expect(readWait, "X", map[int]string{262: "imb", 269: "A", 270: "100.00", 271: "10",
		58: "imbalance none 0; rule ReferencePrice"}); err != nil {
		t.Fatalf("%v: %v", err, md.Received)
	}
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/close", aliceToken, `{"reason":"the close"}`, nil); code != 200 {
		t.Fatalf("close: %d", code)
	}
	expectER(t, buyer, map[int]string{11: "bid", 150: "F", 39: "2", 31: "100.00", 32: "10", 625: "4"})
	expectER(t, seller, map[int]string{11: "ask", 150: "F", 39: "2", 31: "100.00", 32: "10", 625: "4"})
}

// closingCallVenue starts a venue with market data and ACME in its closing
// call, and an imbalance subscriber to ACME.
func closingCallVenue(t *testing.T) (*Server, *fixclient.Client) {
	t.Helper()
	cfg := testConfig(t, t.TempDir(), adminConfig())
	withMarketData(t, cfg)
	for i := range cfg.Instruments {
		if cfg.Instruments[i].Symbol == "ACME" {
			cfg.Instruments[i].Status = venue.TradingStatusClosingCall
		}
	}
	s := startServer(t, cfg, Options{})
	md := imbalanceSubscriber(t, s)
	return s, md
}

// extendedDayVenue starts the compressed day's venue with a closing call
// (pre-open 1 s, open 2 s, closing call 6 s, close 8 s) and ACME's dynamic
// band 1.00 either side with volatility auctions of one second, on the
// test's clock: the schedule, the control plane's timer and the FIX
// gateway's command times all read it, so that a call's extension ends
// when the test moves the clock, not before. extra is more configuration.
func extendedDayVenue(t *testing.T, extra string) (set func(time.Duration), s *Server) {
	t.Helper()
	dayStart := time.Now().Truncate(compressedDayLength)
	var clock atomic.Int64
	set = func(d time.Duration) { clock.Store(dayStart.Add(d).UnixNano()) }
	set(500 * time.Millisecond) // before the pre-open
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	cfg := testConfig(t, t.TempDir(), adminConfig()+strings.Replace(compressedDay, `close = "8s"`, `closing_call = "6s"
close = "8s"`, 1)+`
[session_defaults]
cancel_on_disconnect = false
`+extra)
	cfg.Journal.SnapshotInterval.Duration = 0
	for i := range cfg.Instruments {
		if cfg.Instruments[i].Symbol == "ACME" {
			cfg.Instruments[i].VolatilityBandTicks = 100
			cfg.Instruments[i].VolatilityAuction.Duration = time.Second
		}
	}
	s = startServer(t, cfg, Options{Now: now, FIXWallClock: now})
	waitReady(t, s)
	waitStatus(t, s, "ACME", "Closed", readWait)
	return set, s
}

// TestScheduledOpeningCallExtended: the opening call's book would uncross
// at 101.50, outside ACME's dynamic band around the reference 100.00
// (99.00 to 101.00). At the scheduled open the call is extended instead:
// FIX clients hear why (340=4, Text naming the uncross and the band), the
// instrument is in a volatility auction, nothing trades, and an order at
// the opening (59=2) is still taken. When the extension's second is up,
// the control plane's timer ends it with the opening uncross (625=2, the
// price the book then gives), the order at the opening left over expires,
// and ACME opens.
func TestScheduledOpeningCallExtended(t *testing.T) {
	t.Parallel()
	set, s := extendedDayVenue(t, "")
	c := logon(t, s, "CLIENT1", true)
	set(1500 * time.Millisecond) // the opening call
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
	sendOrder(t, c, order{id: "buy", side: "1", qty: "10", px: "102.00"})
	sendOrder(t, c, order{id: "sell", side: "2", qty: "10", px: "101.50"})
	expectER(t, c, map[int]string{11: "buy", 150: "0"})
	expectER(t, c, map[int]string{11: "sell", 150: "0"})
	set(2500 * time.Millisecond) // the open: extended
	h, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: "4"})
	if err != nil {
		t.Fatalf("no TradingSessionStatus for the extension: %v (received %v)", err, c.Received)
	}
	if text := h.Get(58); !strings.Contains(text, "volatility interruption: the uncross at 101.50 would be outside 99.00 to 101.00 around 100.00") {
		t.Fatalf("Text %q does not say why the call is extended", text)
	}
	waitStatus(t, s, "ACME", "VolatilityAuction", readWait)
	sendOrder(t, c, order{id: "at-open", side: "1", qty: "1", px: "99.00", tif: "2"})
	expectER(t, c, map[int]string{11: "at-open", 150: "0", 59: "2"})
	if st := instrumentsOf(t, s)["ACME"]; st.Status != "VolatilityAuction" || st.Trades != 0 {
		t.Fatalf("the extension traded or ended before its time: %+v", st)
	}
	expectAuction(t, s, "opening call extension")
	set(3500 * time.Millisecond) // the extension's end (the open's time, 2 s, and one second)
	expectExtensionUncrossed(t, c, "101.50", "10", "2", "at-open", "2")
	waitStatus(t, s, "ACME", "Open", readWait)
}

// expectAuction checks that GET /v1/instruments names ACME's volatility
// auction as kind, with its end.
func expectAuction(t *testing.T, s *Server, kind string) {
	t.Helper()
	st := instrumentsOf(t, s)["ACME"]
	if _, err := time.Parse(time.RFC3339Nano, st.AuctionEnd); st.Auction != kind || err != nil {
		t.Fatalf("ACME's auction in /v1/instruments: %q until %q (%v), want %q with its end", st.Auction, st.AuctionEnd, err, kind)
	}
}

// expectExtensionUncrossed waits for the uncross that ends a call's
// extension: the orders "buy" and "sell" filled whole at px with
// TradingSessionSubID subID (the call's auction), the order left over (at
// the opening or the close) expired, and ACME's TradingSessionStatus
// tradSes.
func expectExtensionUncrossed(t *testing.T, c *fixclient.Client, px, qty, subID, leftover, tradSes string) {
	t.Helper()
	expectER(t, c, map[int]string{11: "buy", 150: "F", 39: "2", 31: px, 32: qty, 625: subID})
	expectER(t, c, map[int]string{11: "sell", 150: "F", 39: "2", 31: px, 32: qty, 625: subID})
	expectER(t, c, map[int]string{11: leftover, 150: "C", 39: "C"})
	if _, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: tradSes}); err != nil {
		t.Fatalf("no TradingSessionStatus %s after the uncross: %v", tradSes, err)
	}
}

// TestClosingCallExtensionEndedByOperator: ACME opens at 100.00 (inside the
// band); in the closing call its book would uncross at 102.00, so the
// scheduled close extends the call, which FIX tells as the pre-close (340=5,
// unsolicited and when asked). An operator's resume of ACME (the console's
// Uncross) ends the extension at once with the closing uncross (625=4), and
// ACME closes, as the scheduled close would have left it, rather than
// opening again; the order at the close left over expires.
func TestClosingCallExtensionEndedByOperator(t *testing.T) {
	t.Parallel()
	set, s := extendedDayVenue(t, "")
	c := logon(t, s, "CLIENT1", true)
	set(2500 * time.Millisecond) // open, through an empty opening call
	waitStatus(t, s, "ACME", "Open", readWait)
	set(6500 * time.Millisecond) // the closing call
	waitStatus(t, s, "ACME", "ClosingCall", readWait)
	sendOrder(t, c, order{id: "buy", side: "1", qty: "4", px: "102.00", tif: "7"})
	sendOrder(t, c, order{id: "sell", side: "2", qty: "4", px: "102.00"})
	sendOrder(t, c, order{id: "at-close", side: "1", qty: "1", px: "98.00", tif: "7"})
	expectER(t, c, map[int]string{11: "buy", 150: "0", 59: "7"})
	expectER(t, c, map[int]string{11: "sell", 150: "0"})
	expectER(t, c, map[int]string{11: "at-close", 150: "0", 59: "7"})
	set(8500 * time.Millisecond) // the close: extended
	if _, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: "5", 325: "Y"}); err != nil {
		t.Fatalf("no TradingSessionStatus for the extension: %v (received %v)", err, c.Received)
	}
	waitStatus(t, s, "ACME", "VolatilityAuction", readWait)
	expectAuction(t, s, "closing call extension")
	if err := c.Send("g", fixclient.F(335, "ext"), fixclient.F(263, "0"), fixclient.F(336, "ACME")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(readWait, "h", map[int]string{335: "ext", 336: "ACME", 340: "5"}); err != nil {
		t.Fatalf("ACME's status in the closing call's extension: %v (received %v)", err, c.Received)
	}
	var res struct{ Count int }
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/resume", aliceToken, `{"reason":"close now"}`, &res); code != 200 || res.Count != 1 {
		t.Fatalf("resume in the extension: %d %+v", code, res)
	}
	expectExtensionUncrossed(t, c, "102.00", "4", "4", "at-close", "3")
	waitStatus(t, s, "ACME", "Closed", readWait)
}
