package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/console"
	"github.com/fixvenue/fixvenue/internal/browsertest"
	"github.com/fixvenue/fixvenue/internal/fixcheck"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
	"github.com/fixvenue/fixvenue/ops"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The console's tests in a real browser: headless Chromium (Debian's
// chromium package; .ci/run installs it) driven by chromedp
// (internal/browsertest), against a venue on loopback with FIX clients over
// TCP. The tests share one browser, each in a tab of its own.

func TestMain(m *testing.M) {
	// Every message a test reads from the venue with fixclient is one a
	// validating FIX client accepts (internal/fixcheck).
	fixclient.Check = fixcheck.Check
	if err := selectUnracedOnly(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	browsertest.Close()
	os.Exit(code)
}

// confirmAction types a token and a reason on the Operations page, clicks
// an action's button and confirms. The button is found and clicked in one
// step inside the page: the tables are rebuilt at every update, so a node
// found by one call could be gone by the next.
func confirmAction(t *testing.T, ctx context.Context, token, reason, button string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, browsertest.Wait)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.SetValue(chromedp.CSS("#token"), token), chromedp.SetValue(chromedp.CSS("#reason"), reason)); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "click "+button, fmt.Sprintf(`(() => { const b = document.querySelector(%q); if (!b) return false; b.click(); return true; })()`, button))
	browsertest.WaitFor(t, ctx, "confirm", `(() => { if (document.getElementById("confirm").hidden) return false; document.getElementById("confirm-yes").click(); return true; })()`)
}

// consoleVenue starts a venue with market data, the console and two
// operators' tokens on OS-chosen loopback ports.
func consoleVenue(t *testing.T, extraConsole string) (*Server, string) {
	t.Helper()
	s, base, _ := consoleVenueFeed(t, extraConsole)
	return s, base
}

// consoleVenueFeed is consoleVenue and the socket the market data feed is
// sent to (read it, or leave it: nobody needs to).
func consoleVenueFeed(t *testing.T, extraConsole string) (*Server, string, *net.UDPConn) {
	t.Helper()
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	cfg := testConfig(t, t.TempDir(), adminConfig()+"[admin.console]\nenabled = true\n"+extraConsole)
	cfg.MarketData.Enabled = true
	cfg.MarketData.FeedAddr = udp.LocalAddr().String()
	cfg.MarketData.RecoveryAddr = "127.0.0.1:0"
	s := startServer(t, cfg, Options{})
	return s, "http://" + s.AdminAddr(), udp
}

// TestConsoleBookLive: orders entered over FIX appear in the ladder, a
// trade in the trades list and the chart, and the market page shows the
// instrument's last trade, each through the page's event stream.
func TestConsoleBookLive(t *testing.T) {
	s, base := consoleVenue(t, "")
	ctx := browsertest.New(t)
	if code := browsertest.Open(t, ctx, base+"/market/ACME"); code != 200 {
		t.Fatalf("/market/ACME: HTTP %d", code)
	}
	browsertest.WaitFor(t, ctx, "the stream connects", `document.getElementById("live").textContent === "live"`)
	if got := browsertest.Eval[string](t, ctx, browsertest.Text("#ladder tbody")); strings.TrimSpace(got) != "" {
		t.Fatalf("empty book shows levels: %q", got)
	}
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "b1", side: "1", qty: "10", px: "99.00"})
	sendOrder(t, c, order{id: "b2", side: "1", qty: "4", px: "98.50"})
	sendOrder(t, c, order{id: "s1", side: "2", qty: "6", px: "101.25"})
	for _, id := range []string{"b1", "b2", "s1"} {
		expectER(t, c, map[int]string{11: id, 150: "0"})
	}
	browsertest.WaitFor(t, ctx, "the ladder shows both bids and the ask",
		`(() => { const t = `+browsertest.Text("#ladder tbody")+`; return t.includes("99.00") && t.includes("98.50") && t.includes("101.25"); })()`)
	rows := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll("#ladder tbody tr")].map(r => [...r.cells].map(c => c.innerText).join("|"))`)
	if len(rows) != 2 || rows[0] != "1|10|99.00|101.25|6|1" || rows[1] != "1|4|98.50|||" {
		t.Fatalf("ladder rows %q", rows)
	}
	// A sell that crosses: one trade of 10 at 99.00.
	d := logon(t, s, "CLIENT2", true)
	sendOrder(t, d, order{id: "x1", side: "2", qty: "10", px: "99.00", tif: "3"})
	expectER(t, d, map[int]string{11: "x1", 150: "F", 31: "99.00", 32: "10"})
	filled := time.Now()
	browsertest.WaitFor(t, ctx, "the trade is listed", `document.querySelectorAll("#trades tbody tr").length === 1`)
	// Logged, not asserted (speed is not what tests check; the page updates 4 times a second).
	t.Logf("the trade showed in the browser %s after its ExecutionReport", time.Since(filled).Round(time.Millisecond))
	if got := browsertest.Eval[string](t, ctx, browsertest.Text("#trades tbody tr")); !strings.Contains(got, "99.00\t10\tsell") {
		t.Fatalf("trade row %q", got)
	}
	browsertest.WaitFor(t, ctx, "the ladder loses the traded level", `!`+browsertest.Text("#ladder tbody")+`.includes("99.00")`)
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll("#chart path.line").length`); n != 1 {
		t.Fatalf("chart has %d lines", n)
	}
	if st := browsertest.Eval[string](t, ctx, browsertest.Text("#summary")); !strings.Contains(st, "10 @ 99.00") && !strings.Contains(st, "99.00 × 10") {
		t.Fatalf("summary %q", st)
	}
	// The market page shows the last trade and the change from the reference price (100.00).
	browsertest.Open(t, ctx, base+"/market")
	browsertest.WaitFor(t, ctx, "the market row shows the trade", `(() => { const r = document.querySelector('#market tr[data-symbol="ACME"]');
		return r && r.innerText.includes("99.00") && r.innerText.includes("-1.00") && r.innerText.includes("-1.00%"); })()`)
	// An unknown instrument is a 404 page.
	if code := browsertest.Open(t, ctx, base+"/market/NOPE"); code != 404 {
		t.Fatalf("/market/NOPE: HTTP %d", code)
	}
	if got := browsertest.Eval[string](t, ctx, browsertest.Text("main")); !strings.Contains(got, `no instrument "NOPE"`) {
		t.Fatalf("404 page says %q", got)
	}
}

// TestConsoleHaltReachesFIX: a halt confirmed on the Operations page with
// an operator token is journaled; a market data client sees the status
// change, a FIX client's next order is rejected as halted, and the page
// shows the status and the journal's record. A forged token changes
// nothing.
func TestConsoleHaltReachesFIX(t *testing.T) {
	s, base, udp := consoleVenueFeed(t, "")
	// A market data client on the feed: it sees the instrument's status change.
	halted := make(chan struct{})
	var once sync.Once
	runFeedClient(t, s, feedclient.Config{Callbacks: feedclient.Callbacks{
		OnBook: func(b *feedclient.Book) {
			if b.InstrumentID == 1 && b.Status == mdsbe.TradingStatusHalted {
				once.Do(func() { close(halted) })
			}
		}}}, udp)
	ctx := browsertest.New(t)
	c := logon(t, s, "CLIENT1", true)
	browsertest.Open(t, ctx, base+"/operations")
	browsertest.WaitFor(t, ctx, "the instruments are listed", `document.querySelector('#ops-instruments tr[data-symbol="ACME"] button') !== null`)
	halt := func(token string) {
		t.Helper()
		confirmAction(t, ctx, token, "console test", `#ops-instruments tr[data-symbol="ACME"] button[data-action="halt"]`)
	}
	before := durableSeq(t, s)
	halt("forged-token")
	browsertest.WaitFor(t, ctx, "the forged token is refused", browsertest.Text("#result")+`.includes("HTTP 401")`)
	if after := durableSeq(t, s); after != before {
		t.Fatalf("a forged token journaled %d commands", after-before)
	}
	halt(aliceToken)
	browsertest.WaitFor(t, ctx, "the halt is done", browsertest.Text("#result")+`.includes("SetTradingStatus: done by alice")`)
	browsertest.WaitFor(t, ctx, "the page shows ACME halted", browsertest.Text(`#ops-instruments tr[data-symbol="ACME"]`)+`.includes("Halted")`)
	browsertest.WaitFor(t, ctx, "the journal lists the halt", `(() => { const t = `+browsertest.Text("#journal tbody")+`; return t.includes("SetTradingStatus") && t.includes("ACME") && t.includes("alice"); })()`)
	// The market data client sees the status change.
	select {
	case <-halted:
	case <-time.After(browsertest.Wait):
		t.Fatal("the feed client did not see ACME halted")
	}
	// The FIX client hears of it: an unsolicited TradingSessionStatus (35=h,
	// 325=Y) for ACME, halted (340=1); then its order is rejected.
	if _, err := c.Expect(readWait, "h", map[int]string{336: "ACME", 340: "1", 325: "Y"}); err != nil {
		t.Fatalf("the FIX client heard no halt: %v", err)
	}
	sendOrder(t, c, order{id: "h1", side: "1", qty: "1", px: "99.00"})
	er := expectER(t, c, map[int]string{11: "h1", 150: "8"})
	if !strings.Contains(er.Get(58), "halted") {
		t.Fatalf("reject text %q", er.Get(58))
	}
	// The market page shows it too; then resume from the page.
	browsertest.Open(t, ctx, base+"/market")
	browsertest.WaitFor(t, ctx, "market shows Halted", browsertest.Text(`#market tr[data-symbol="ACME"]`)+`.includes("Halted")`)
	browsertest.Open(t, ctx, base+"/operations")
	browsertest.WaitFor(t, ctx, "resume button", `document.querySelector('#ops-instruments tr[data-symbol="ACME"] button[data-action="resume"]') !== null`)
	confirmAction(t, ctx, aliceToken, "resume", `#ops-instruments tr[data-symbol="ACME"] button[data-action="resume"]`)
	browsertest.WaitFor(t, ctx, "ACME open again", browsertest.Text(`#ops-instruments tr[data-symbol="ACME"]`)+`.includes("Open")`)
	// A closed instrument is offered a resume, which opens it, as well as a
	// halt; it was offered the halt alone.
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/close", aliceToken, `{"reason":"closed early"}`, nil); code != 200 {
		t.Fatalf("close ACME: %d", code)
	}
	browsertest.WaitFor(t, ctx, "a closed ACME offers resume and halt", `(() => { const r = document.querySelector('#ops-instruments tr[data-symbol="ACME"]');
		return r !== null && r.textContent.includes("Closed") && r.querySelector('button[data-action="resume"]') !== null && r.querySelector('button[data-action="halt"]') !== null; })()`)
	confirmAction(t, ctx, aliceToken, "reopen", `#ops-instruments tr[data-symbol="ACME"] button[data-action="resume"]`)
	browsertest.WaitFor(t, ctx, "ACME open after its close", browsertest.Text(`#ops-instruments tr[data-symbol="ACME"]`)+`.includes("Open")`)
	sendOrder(t, c, order{id: "h2", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "h2", 150: "0"})
	// Cancel the session's orders, then log it out, from the page.
	act := func(comp, action, reason string) {
		t.Helper()
		confirmAction(t, ctx, aliceToken, reason, fmt.Sprintf(`#ops-sessions tr[data-comp=%q] button[data-action=%q]`, comp, action))
	}
	// The kill switch from the page: the FIX client sees its order cancelled
	// and its next one refused, until the reset.
	act("CLIENT1", "kill", "runaway algo")
	expectER(t, c, map[int]string{11: "h2", 150: "4", 58: "cancelled by the kill switch"})
	browsertest.WaitFor(t, ctx, "the kill is done", browsertest.Text("#result")+`.includes("Kill: Applied by alice") && `+browsertest.Text("#result")+`.includes("count 1")`)
	sendOrder(t, c, order{id: "h3", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "h3", 150: "8", 103: "3", 58: "kill switch on for session:CLIENT1"})
	// The row says the switch is on and offers Reset, not Kill; after the
	// reset it offers Kill again.
	client1 := `#ops-sessions tr[data-comp="CLIENT1"]`
	offers := func(action string) string {
		return fmt.Sprintf(`document.querySelector('%s button[data-action=%q]') !== null`, client1, action)
	}
	browsertest.WaitFor(t, ctx, "CLIENT1 shown killed, with Reset only", browsertest.Text(client1)+`.includes("kill switch on") && `+offers("reset")+` && !(`+offers("kill")+`)`)
	act("CLIENT1", "reset", "fixed")
	browsertest.WaitFor(t, ctx, "the reset is done", browsertest.Text("#result")+`.includes("Reset: Applied by alice")`)
	browsertest.WaitFor(t, ctx, "CLIENT1 shown with Kill only", `!`+browsertest.Text(client1)+`.includes("kill switch") && `+offers("kill")+` && !(`+offers("reset")+`)`)
	sendOrder(t, c, order{id: "h4", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "h4", 150: "0"})
	act("CLIENT1", "cancel orders", "risk check")
	expectER(t, c, map[int]string{11: "h4", 150: "4"})
	browsertest.WaitFor(t, ctx, "the cancel is done", browsertest.Text("#result")+`.includes("MassCancel: done by alice") && `+browsertest.Text("#result")+`.includes("count 1")`)
	act("CLIENT1", "logout", "end of test")
	if !c.Closed(readWait) {
		t.Fatal("CLIENT1 still connected after the console's logout")
	}
	browsertest.WaitFor(t, ctx, "CLIENT1 logged off", browsertest.Text(`#ops-sessions tr[data-comp="CLIENT1"]`)+`.includes("logged off")`)
	browsertest.WaitFor(t, ctx, "the journal lists the cancel and the logout", `(() => { const t = `+browsertest.Text("#journal tbody")+`;
		return t.includes("MassCancel") && t.includes("session CLIENT1") && t.includes("SessionLogout"); })()`)
	// The page never shows a token.
	if html := browsertest.Eval[string](t, ctx, `document.documentElement.outerHTML`); strings.Contains(html, aliceToken) {
		t.Fatal("the page holds the token")
	}
}

// TestConsoleUncrossesACall: an instrument in a call is offered Uncross
// on the Operations page, the admin API's resume, which uncrosses a call
// now; confirmed, the call's crossed orders trade and the instrument
// opens. It was offered a halt alone, so a volatility auction could not be
// ended early from the console.
func TestConsoleUncrossesACall(t *testing.T) {
	s, base := consoleVenue(t, "[[instrument]]\nid = 3\nsymbol = \"CALL\"\ntick_size = \"0.01\"\nlot_size = 1\nmin_qty = 1\nmax_qty = 100\n"+
		"ref_price = \"10.00\"\nband_percent = 10\nstatus = \"opening-call\"\n")
	buy, sell := logon(t, s, "CLIENT1", true), logon(t, s, "CLIENT2", true)
	sendOrder(t, buy, order{id: "b", sym: "CALL", side: "1", qty: "5", px: "10.00"})
	sendOrder(t, sell, order{id: "s", sym: "CALL", side: "2", qty: "5", px: "10.00"})
	expectER(t, buy, map[int]string{11: "b", 150: "0"})
	expectER(t, sell, map[int]string{11: "s", 150: "0"})
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/operations")
	uncross := `#ops-instruments tr[data-symbol="CALL"] button[data-action="uncross"]`
	browsertest.WaitFor(t, ctx, "CALL offers an uncross", fmt.Sprintf(`document.querySelector('%s') !== null`, uncross))
	browsertest.WaitFor(t, ctx, "the confirmation says it uncrosses now", fmt.Sprintf(`(() => { document.querySelector('%s').click();
		const t = document.getElementById("confirm-text").textContent; document.getElementById("confirm-no").click();
		return t.startsWith("Uncross CALL now (ends its OpeningCall"); })()`, uncross))
	confirmAction(t, ctx, aliceToken, "end the call", uncross)
	browsertest.WaitFor(t, ctx, "the uncross is done", browsertest.Text("#result")+`.includes("SetTradingStatus: done by alice")`)
	expectER(t, buy, map[int]string{11: "b", 150: "F", 31: "10.00", 32: "5"})
	browsertest.WaitFor(t, ctx, "CALL open, offered no uncross", `(() => { const r = document.querySelector('#ops-instruments tr[data-symbol="CALL"]');
		return r !== null && r.textContent.includes("Open") && r.querySelector('button[data-action="uncross"]') === null; })()`)
}

// TestConsoleUncrossesAClosingCallExtension: ACME's closing call, whose
// uncross would print outside its dynamic band, is extended at the
// scheduled close. /operations names the extension and its end beside the
// status, and its Uncross says it ends the extension and ACME closes (the
// admin API's resume of it); confirmed, the closing uncross trades (625=4)
// and the row shows ACME closed.
func TestConsoleUncrossesAClosingCallExtension(t *testing.T) {
	set, s := extendedDayVenue(t, "[admin.console]\nenabled = true\n")
	c := logon(t, s, "CLIENT1", true)
	set(2500 * time.Millisecond) // open
	waitStatus(t, s, "ACME", "Open", readWait)
	set(6500 * time.Millisecond) // the closing call
	waitStatus(t, s, "ACME", "ClosingCall", readWait)
	sendOrder(t, c, order{id: "buy", side: "1", qty: "4", px: "102.00", tif: "7"})
	sendOrder(t, c, order{id: "sell", side: "2", qty: "4", px: "102.00"})
	expectER(t, c, map[int]string{11: "buy", 150: "0"})
	expectER(t, c, map[int]string{11: "sell", 150: "0"})
	set(8500 * time.Millisecond) // the close: extended
	waitStatus(t, s, "ACME", "VolatilityAuction", readWait)
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, "http://"+s.AdminAddr()+"/operations")
	row := `#ops-instruments tr[data-symbol="ACME"]`
	browsertest.WaitFor(t, ctx, "ACME's row names the extension", browsertest.Text(row)+`.includes("closing call extension until")`)
	uncross := row + ` button[data-action="uncross"]`
	browsertest.WaitFor(t, ctx, "the confirmation says ACME closes", fmt.Sprintf(`(() => { document.querySelector('%s').click();
		const t = document.getElementById("confirm-text").textContent; document.getElementById("confirm-no").click();
		return t.startsWith("Uncross ACME now (ends its closing call extension") && t.includes("then it is Closed)"); })()`, uncross))
	confirmAction(t, ctx, aliceToken, "end the extension", uncross)
	expectER(t, c, map[int]string{11: "buy", 150: "F", 31: "102.00", 32: "4", 625: "4"})
	browsertest.WaitFor(t, ctx, "ACME closed, offered no uncross", `(() => { const r = document.querySelector('`+row+`');
		return r !== null && r.textContent.includes("Closed") && r.querySelector('button[data-action="uncross"]') === null; })()`)
}

// TestConsoleOffersNoKillSwitchOnADropCopySession: a drop-copy session
// enters no orders and has no kill switch (the API refuses a kill or a
// reset naming it), so /operations offers its session actions but not
// Kill or Reset; it offers an order session whose switch is off Kill.
func TestConsoleOffersNoKillSwitchOnADropCopySession(t *testing.T) {
	_, base := consoleVenue(t, "[[session]]\ncomp_id = \"DC1\"\nkind = \"dropcopy\"\ncopy_sessions = [\"CLIENT1\"]\n")
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/operations")
	buttons := func(comp string) string {
		return `Array.from(document.querySelectorAll('#ops-sessions tr[data-comp="` + comp + `"] button')).map((b) => b.dataset.action).join(",")`
	}
	browsertest.WaitFor(t, ctx, "the sessions are listed", buttons("DC1")+` !== "" && `+buttons("CLIENT1")+` !== ""`)
	if got := browsertest.Eval[string](t, ctx, buttons("DC1")); strings.Contains(got, "kill") || strings.Contains(got, "reset") || !strings.Contains(got, "disable") {
		t.Errorf("the drop-copy session DC1 offers %q", got)
	}
	// Its switch is off: Kill, not Reset.
	if got := browsertest.Eval[string](t, ctx, buttons("CLIENT1")); !strings.Contains(got, "kill") || strings.Contains(got, "reset") {
		t.Errorf("the order session CLIENT1 offers %q", got)
	}
}

// TestConsoleSessionsLogOnOff: the sessions page shows a client logging
// on (with its address and sequence numbers) and off, and each session's
// open orders against its bound (open_orders_max: a quarter of
// engine.orders_max by default, "off" for a session with none, none for a
// drop-copy session), as the session's own page does; an unknown session
// is a 404 page.
func TestConsoleSessionsLogOnOff(t *testing.T) {
	s, base := consoleVenue(t, "[[session]]\ncomp_id = \"NOBOUND\"\nopen_orders_max = 0\n"+
		"[[session]]\ncomp_id = \"DC1\"\nkind = \"dropcopy\"\ncopy_sessions = [\"CLIENT3\"]\n")
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/sessions")
	rowOf := func(comp string) string { return `document.querySelector('#sessions tr[data-comp="` + comp + `"]')` }
	row := rowOf("CLIENT3")
	browsertest.WaitFor(t, ctx, "CLIENT3 logged off", row+` && `+row+`.dataset.state === "logged off"`)
	browsertest.WaitFor(t, ctx, "CLIENT3 with no open order of its 1024", row+`.cells[11].innerText === "0 / 1024"`)
	browsertest.WaitFor(t, ctx, "NOBOUND with no bound", rowOf("NOBOUND")+` && `+rowOf("NOBOUND")+`.cells[11].innerText === "0 / off"`)
	browsertest.WaitFor(t, ctx, "DC1 with no orders", rowOf("DC1")+` && `+rowOf("DC1")+`.cells[11].innerText === "–"`)
	c := logon(t, s, "CLIENT3", true)
	browsertest.WaitFor(t, ctx, "CLIENT3 logged on", row+`.dataset.state === "logged on" && `+row+`.innerText.includes("127.0.0.1:")`)
	sendOrder(t, c, order{id: "o1", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "o1", 150: "0"})
	browsertest.WaitFor(t, ctx, "one open order of 1024", row+`.cells[11].innerText === "1 / 1024"`)
	browsertest.Open(t, ctx, base+"/sessions/CLIENT3")
	browsertest.WaitFor(t, ctx, "CLIENT3's page: one open order of 1024", row+` && `+row+`.cells[11].innerText === "1 / 1024"`)
	c.Logout()
	browsertest.WaitFor(t, ctx, "CLIENT3 logged off again", row+`.dataset.state === "logged off"`)
	if code := browsertest.Open(t, ctx, base+"/sessions/NOBODY"); code != 404 {
		t.Fatalf("/sessions/NOBODY: HTTP %d", code)
	}
}

// TestConsoleShowsVenueFailure: when the journal's fdatasync fails, an open
// page shows the halt and its cause through its event stream, and a page
// loaded afterwards shows it at once.
func TestConsoleShowsVenueFailure(t *testing.T) {
	var fail atomic.Bool
	sync := failingSync(&fail)
	cfg := testConfig(t, t.TempDir(), adminConfig()+"[admin.console]\nenabled = true\n")
	s := startServer(t, cfg, Options{JournalSync: sync})
	base := "http://" + s.AdminAddr()
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/market")
	browsertest.WaitFor(t, ctx, "the stream connects", `document.getElementById("live").textContent === "live"`)
	if !browsertest.Eval[bool](t, ctx, `document.getElementById("halted").hidden`) {
		t.Fatal("a trading venue's page shows the halt banner")
	}
	c := logon(t, s, "CLIENT1", true)
	fail.Store(true)
	sendOrder(t, c, order{id: "lost1", side: "1", qty: "1", px: "99.00"})
	shown := `(() => { const b = document.getElementById("halted"); return !b.hidden && b.innerText.includes("input/output error"); })()`
	browsertest.WaitFor(t, ctx, "the open page shows the halt and its cause", shown)
	browsertest.Open(t, ctx, base+"/sessions")
	if !browsertest.Eval[bool](t, ctx, shown) {
		t.Fatalf("a page loaded after the halt does not show it: %q", browsertest.Eval[string](t, ctx, browsertest.Text("body")))
	}
}

// TestConsoleLatencyPlot: after orders over FIX, the latency page draws
// percentile curves from the venue's HdrHistograms.
func TestConsoleLatencyPlot(t *testing.T) {
	s, base := consoleVenue(t, "")
	ctx := browsertest.New(t)
	c := logon(t, s, "CLIENT1", true)
	for i := range 20 {
		sendOrder(t, c, order{id: fmt.Sprintf("l%d", i), side: "1", qty: "1", px: "99.00"})
	}
	for i := range 20 {
		expectER(t, c, map[int]string{11: fmt.Sprintf("l%d", i), 150: "0"})
	}
	browsertest.Open(t, ctx, base+"/latency")
	// The histograms rotate once a second; the page follows.
	browsertest.WaitFor(t, ctx, "four curves drawn", `document.getElementById("plot").dataset.curves === "4"`)
	// The feed may flush the last command's packet after a rotation: wait for all 20.
	browsertest.WaitFor(t, ctx, "every order counted", `[...document.querySelectorAll("#latency tbody tr")].every(r => r.cells[2].innerText === "20")`)
	rows := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll("#latency tbody tr")].map(r => r.innerText)`)
	if len(rows) != 4 {
		t.Fatalf("latency rows %q", rows)
	}
	for _, r := range rows {
		if !strings.Contains(r, "\t20\t") || !strings.Contains(r, "µs") {
			t.Errorf("latency row %q: want 20 values with percentiles", r)
		}
	}
	if n := browsertest.Eval[int](t, ctx, `Number(document.querySelector("#plot path.curve").dataset.points)`); n < 5 {
		t.Fatalf("curve has %d points", n)
	}
}

// TestConsoleScreenshots writes a screenshot of each page into
// $FIXVENUE_SCREENSHOTS (make console-screenshots: docs/img), after a
// little trading so that the pages have something to show.
func TestConsoleScreenshots(t *testing.T) {
	dir := os.Getenv("FIXVENUE_SCREENSHOTS")
	if dir == "" {
		t.Skip("set FIXVENUE_SCREENSHOTS to a folder (make console-screenshots)")
	}
	s, base := consoleVenue(t, "")
	ctx := browsertest.New(t)
	a, b := logon(t, s, "CLIENT1", true), logon(t, s, "CLIENT2", true)
	n := 0
	send := func(c *fixclient.Client, side, qty, px, tif string) {
		n++
		id := fmt.Sprintf("o%d", n)
		sendOrder(t, c, order{id: id, side: side, qty: qty, px: px, tif: tif})
		if _, err := c.Expect(readWait, "8", map[int]string{11: id}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 12 {
		send(a, "1", fmt.Sprint(10+i*5), fmt.Sprintf("%d.%02d", 99-i/4, 75-(i%4)*25), "0")
		send(b, "2", fmt.Sprint(8+i*3), fmt.Sprintf("%d.%02d", 100+i/4, 25+(i%4)*25), "0")
	}
	for i := range 30 {
		px := fmt.Sprintf("99.%02d", 50+(i*7)%25)
		send(b, "2", "3", px, "3")
		send(a, "1", "2", fmt.Sprintf("100.%02d", (i*11)%25), "3")
	}
	for _, call := range []string{"/v1/instruments/LOTS/halt", "/v1/instruments/LOTS/resume"} {
		if code := adminCall(t, s, "POST", call, aliceToken, `{"reason":"screenshot"}`, nil); code != 200 {
			t.Fatalf("%s: HTTP %d", call, code)
		}
	}
	time.Sleep(2500 * time.Millisecond) // two latency rotations
	shot := func(path, name, ready string) {
		t.Helper()
		browsertest.Open(t, ctx, base+path)
		browsertest.WaitFor(t, ctx, name, ready)
		sctx, cancel := context.WithTimeout(ctx, browsertest.Wait)
		defer cancel()
		img, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "console-"+name+".png"), img, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shot("/market", "market", `document.body.dataset.updates >= 1`)
	shot("/market/ACME", "book", `document.querySelectorAll("#trades tbody tr").length > 0`)
	shot("/sessions", "sessions", `document.body.dataset.updates >= 1`)
	shot("/latency", "latency", `document.getElementById("plot").dataset.curves === "4"`)
	shot("/operations", "operations", `document.body.dataset.updates >= 1`)
}

// TestConsoleStreamRefusedIsRetried: a page whose stream the venue refuses
// (503 at streams_max) says so and why, and goes live once a stream is
// free; the browser itself never retries a refused stream.
func TestConsoleStreamRefusedIsRetried(t *testing.T) {
	_, base := consoleVenue(t, "streams_max = 1\n")
	first := browsertest.New(t)
	browsertest.Open(t, first, base+"/market")
	browsertest.WaitFor(t, first, "the first page's stream connects", `document.getElementById("live").textContent === "live"`)
	second := browsertest.New(t)
	browsertest.Open(t, second, base+"/sessions")
	browsertest.WaitFor(t, second, "the second page says why it is not live",
		browsertest.Text("#live")+`.includes("not live: HTTP 503: too many console streams open (admin.console.streams_max)")`)
	if err := chromedp.Do(first, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, second, "the second page goes live once the first left", `document.getElementById("live").textContent === "live"`)
}

// TestConsoleHaltBannerGoesWithARestart: a page open while the venue halts
// shows the halt; once the venue is restarted on the same data and admin
// address, the page's stream reconnects and the banner goes, as the
// venue trades again.
func TestConsoleHaltBannerGoesWithARestart(t *testing.T) {
	var fail atomic.Bool
	dir := t.TempDir()
	cfg := testConfig(t, dir, adminConfig()+"[admin.console]\nenabled = true\n")
	s := startServer(t, cfg, Options{JournalSync: failingSync(&fail)})
	base := "http://" + s.AdminAddr()
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/market")
	browsertest.WaitFor(t, ctx, "the stream connects", `document.getElementById("live").textContent === "live"`)
	c := logon(t, s, "CLIENT1", true)
	fail.Store(true)
	sendOrder(t, c, order{id: "lost1", side: "1", qty: "1", px: "99.00"})
	browsertest.WaitFor(t, ctx, "the page shows the halt", `!document.getElementById("halted").hidden`)
	c.Close()
	s.Close()
	consoleVenueAt(t, s.AdminAddr(), dir, nil)
	browsertest.WaitFor(t, ctx, "the page is live again without the banner",
		`document.getElementById("live").textContent === "live" && document.getElementById("halted").hidden`)
}

// TestConsoleActionWithoutAnAnswer: an action the admin API does not
// answer in JSON (here the HTTP server's own 431 for a token too long for
// a header) shows its HTTP status and text, and one the venue does not
// answer at all (stopped) says so and where to look, rather than a
// browser's parse or network error alone.
func TestConsoleActionWithoutAnAnswer(t *testing.T) {
	s, base := consoleVenue(t, "")
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/operations")
	browsertest.WaitFor(t, ctx, "the instruments are listed", `document.querySelector('#ops-instruments tr[data-symbol="ACME"] button') !== null`)
	result := browsertest.Text("#result")
	confirmAction(t, ctx, strings.Repeat("x", 20<<10), "a long token", `#ops-instruments tr[data-symbol="ACME"] button`)
	browsertest.WaitFor(t, ctx, "the page shows the HTTP server's refusal", result+`.startsWith("HTTP 431: 431 Request Header Fields Too Large")`)
	s.Close()
	browsertest.WaitFor(t, ctx, "the page sees the venue stop", `document.getElementById("live").textContent !== "live"`)
	confirmAction(t, ctx, aliceToken, "the venue stopped", `#ops-instruments tr[data-symbol="ACME"] button`)
	browsertest.WaitFor(t, ctx, "the page says the venue did not answer", result+`.startsWith("no answer from the venue") && `+result+`.includes("journal list")`)
}

// TestConsoleClickWhileOrdersFlow: an operator's click (press, then
// release a moment later) on an Operations button is not lost while
// orders flow and the page updates several times a second: a row whose
// figures did not change keeps its button between updates.
func TestConsoleClickWhileOrdersFlow(t *testing.T) {
	s, base := consoleVenue(t, "")
	c := logon(t, s, "CLIENT1", true)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // resting orders, each a change of CLIENT1's open orders (bounded: 600 at most)
		defer close(done)
		for i := 0; i < 600; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if c.Send("D", fixclient.F(11, fmt.Sprintf("flow%d", i)), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
				fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"), fixclient.F(44, "95.00"),
				fixclient.F(59, "0")) != nil {
				return
			}
			c.Read(time.Second)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	defer func() { close(stop); <-done }()
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/operations")
	const halt = `document.querySelector('#ops-instruments tr[data-symbol="LOTS"] button')`
	browsertest.WaitFor(t, ctx, "the page updates with the orders", halt+` !== null && Number(document.body.dataset.updates || 0) >= 3`)
	for i := 0; i < 6; i++ {
		xy := browsertest.Eval[[]float64](t, ctx, `(() => { const r = `+halt+`.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
		if err := chromedp.Do(ctx, chromedp.MouseEvent(chromedp.MousePressed, xy[0], xy[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
			chromedp.Sleep(150*time.Millisecond),
			chromedp.MouseEvent(chromedp.MouseReleased, xy[0], xy[1], chromedp.ButtonLeft, chromedp.ClickCount(1))); err != nil {
			t.Fatal(err)
		}
		if browsertest.Eval[bool](t, ctx, `document.getElementById("confirm").hidden`) {
			t.Fatalf("click %d on Halt LOTS was lost (%s updates so far)", i+1, browsertest.Eval[string](t, ctx, `document.body.dataset.updates`))
		}
		browsertest.Eval[bool](t, ctx, `(() => { document.getElementById("confirm-no").click(); return true; })()`)
	}
}

// TestConsoleTokenAHeaderCannotCarry: a token typed with a character an
// HTTP header cannot carry is named as the problem, and nothing is sent,
// rather than reported as a venue that did not answer.
func TestConsoleTokenAHeaderCannotCarry(t *testing.T) {
	s, base := consoleVenue(t, "")
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/operations")
	before := durableSeq(t, s)
	confirmAction(t, ctx, aliceToken+"✓", "a pasted token", `#ops-instruments tr[data-symbol="ACME"] button`)
	browsertest.WaitFor(t, ctx, "the page names the token as the problem",
		browsertest.Text("#result")+`.startsWith("the operator token holds a character an HTTP header cannot carry (nothing was sent)")`)
	if after := durableSeq(t, s); after != before {
		t.Fatalf("%d commands journaled", after-before)
	}
}

// listInstrument lists symbol through the admin API as alice.
func listInstrument(t *testing.T, s *Server, symbol string) {
	t.Helper()
	add := fmt.Sprintf(`{"reason": %q, "symbol": %q, "tick_size": "0.05", "lot_size": 10, "min_qty": 10,
		"max_qty": 10000, "ref_price": "20.00", "band_percent": 10}`, "listing "+symbol, symbol)
	if status := adminCall(t, s, "POST", "/v1/instruments", aliceToken, add, nil); status != 200 {
		t.Fatalf("POST /v1/instruments %s: HTTP %d", symbol, status)
	}
}

// TestConsoleJournalListsAddedInstruments: an instrument an operator lists
// through the admin API (README "Adding an instrument") is one of the
// operator commands the Operations page's journal list shows, with its
// symbol, result and operator, as a halt of it is.
func TestConsoleJournalListsAddedInstruments(t *testing.T) {
	s, base := consoleVenue(t, "")
	listInstrument(t, s, "NEWCO")
	if status := adminCall(t, s, "POST", "/v1/instruments/NEWCO/halt", bobToken, `{"reason": "news"}`, nil); status != 200 {
		t.Fatalf("POST /v1/instruments/NEWCO/halt: HTTP %d", status)
	}
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/operations")
	// Each row as action|target|result|count|operator, newest first.
	rows := `[...document.querySelectorAll("#journal tbody tr")].map((r) => [...r.cells].slice(2).map((c) => c.innerText).join("|"))`
	browsertest.WaitFor(t, ctx, "the journal lists the halt", rows+`.includes("SetTradingStatus|NEWCO → Halted|done|1|bob")`)
	if got := browsertest.Eval[[]string](t, ctx, rows); len(got) != 2 || got[1] != "AddInstrument|NEWCO|done|1|alice" {
		t.Fatalf("the journal list shows %q; want the halt, then the listing of NEWCO by alice", got)
	}
}

// TestConsoleJournalShowsEachCommandsDate: the journal list gives each
// operator command its date with its time (UTC): it showed the time
// alone, so a halt of the day before read as one of today. The venue's
// clock is set to a minute's either side of a midnight.
func TestConsoleJournalShowsEachCommandsDate(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 3, 14, 23, 59, 30, 0, time.UTC).UnixNano())
	cfg := testConfig(t, t.TempDir(), adminConfig()+"[admin.console]\nenabled = true\n")
	s := startServer(t, cfg, Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	if status := adminCall(t, s, "POST", "/v1/instruments/ACME/halt", aliceToken, `{"reason": "late news"}`, nil); status != 200 {
		t.Fatalf("POST /v1/instruments/ACME/halt: HTTP %d", status)
	}
	clock.Store(time.Date(2026, 3, 15, 0, 0, 30, 0, time.UTC).UnixNano())
	if status := adminCall(t, s, "POST", "/v1/instruments/ACME/resume", aliceToken, `{"reason": "news out"}`, nil); status != 200 {
		t.Fatalf("POST /v1/instruments/ACME/resume: HTTP %d", status)
	}
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, "http://"+s.AdminAddr()+"/operations")
	// Each row as time|action, newest first.
	rows := `[...document.querySelectorAll("#journal tbody tr")].map((r) => [...r.cells].slice(1, 3).map((c) => c.innerText).join("|"))`
	browsertest.WaitFor(t, ctx, "the journal lists the resume", rows+`.length === 2`)
	if got, want := browsertest.Eval[[]string](t, ctx, rows), []string{"2026-03-15 00:00:30|SetTradingStatus", "2026-03-14 23:59:30|SetTradingStatus"}; !slices.Equal(got, want) {
		t.Fatalf("the journal list shows %q, want %q", got, want)
	}
}

// TestConsoleJournalListsRiskChanges: a kill switch turned on from the
// Operations page and off through the admin API, and limits set and
// removed, are operator commands of the journal like a halt, and the
// journal list shows each: whom it addressed, the limit and its new
// value, "none" for one removed, the orders a kill cancelled, and the
// operator, whom the command names (its result does not). A restart from
// the journal alone (no snapshot) lists them alike.
func TestConsoleJournalListsRiskChanges(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir, adminConfig()+"[admin.console]\nenabled = true\n"+riskExtra)
	cfg.Journal.SnapshotInterval.Duration = 0 // the restart replays every command
	s := startServer(t, cfg, Options{})
	base := "http://" + s.AdminAddr()
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "r1", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "r1", 150: "0"})
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/operations")
	kill := `#ops-sessions tr[data-comp="CLIENT1"] button[data-action="kill"]`
	browsertest.WaitFor(t, ctx, "CLIENT1 offers Kill", `document.querySelector('`+kill+`') !== null`)
	confirmAction(t, ctx, bobToken, "runaway algo", kill)
	expectER(t, c, map[int]string{11: "r1", 150: "4"})
	for _, call := range []struct{ path, body string }{
		{"/v1/risk/reset", `{"reason": "algo fixed", "session": "CLIENT1"}`},
		{"/v1/risk/limit", `{"reason": "more room", "account": "FUND", "limit": "max_position", "instrument": "ACME", "value": 20}`},
		{"/v1/risk/limit", `{"reason": "no cap", "session": "CLIENT1", "limit": "max_order_qty", "value": "none"}`},
	} {
		if status := adminCall(t, s, "POST", call.path, aliceToken, call.body, nil); status != 200 {
			t.Fatalf("POST %s %s: HTTP %d", call.path, call.body, status)
		}
	}
	// Each row as action|target|result|count|operator, newest first.
	rows := `[...document.querySelectorAll("#journal tbody tr")].map((r) => [...r.cells].slice(2).map((c) => c.innerText).join("|"))`
	browsertest.WaitFor(t, ctx, "the journal lists the last limit change", rows+`.length === 4`)
	want := []string{
		"SetLimit|session CLIENT1: max_order_qty = none|done|0|alice",
		"SetLimit|account FUND: max_position in ACME = 20|done|0|alice",
		"Reset|session CLIENT1|done|0|alice",
		"Kill|session CLIENT1|done|1|bob",
	}
	if got := browsertest.Eval[[]string](t, ctx, rows); !reflect.DeepEqual(got, want) {
		t.Fatalf("the journal list shows\n%q\nwant\n%q", got, want)
	}
	c.Close()
	s.Close()
	again := testConfig(t, dir, adminConfig()+"[admin.console]\nenabled = true\n"+riskExtra)
	again.Journal.SnapshotInterval.Duration = 0
	s = startServer(t, again, Options{})
	browsertest.Open(t, ctx, "http://"+s.AdminAddr()+"/operations")
	browsertest.WaitFor(t, ctx, "the journal lists the four again", rows+`.length === 4`)
	if got := browsertest.Eval[[]string](t, ctx, rows); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a restart the journal list shows\n%q\nwant\n%q", got, want)
	}
}

// TestConsoleJournalNamesTheBandSet: a band change through the admin API
// is listed with the reference price it set, as a price of the
// instrument's tick, and the band in percent, and one the matcher refused
// (an order rests outside it) with what it asked: the row named the
// instrument alone, so the list did not say what an operator set.
func TestConsoleJournalNamesTheBandSet(t *testing.T) {
	s, base := consoleVenue(t, "")
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "b1", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "b1", 150: "0"})
	for _, call := range []struct {
		body string
		code int
	}{
		{`{"reason": "new reference", "ref_price": "101.5", "band_percent": 5}`, 200},
		{`{"reason": "too far", "ref_price": "150.00", "band_percent": 5}`, 409},
	} {
		if code := adminCall(t, s, "POST", "/v1/instruments/ACME/band", aliceToken, call.body, nil); code != call.code {
			t.Fatalf("POST /v1/instruments/ACME/band %s: HTTP %d, want %d", call.body, code, call.code)
		}
	}
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/operations")
	// Each row as action|target|result|count|operator, newest first.
	rows := `[...document.querySelectorAll("#journal tbody tr")].map((r) => [...r.cells].slice(2).map((c) => c.innerText).join("|"))`
	browsertest.WaitFor(t, ctx, "the journal lists the refused band change", rows+`.length === 2`)
	want := []string{
		"SetPriceBand|ACME → reference price 150.00, band 5%|refused: OrdersOutsideBand|0|alice",
		"SetPriceBand|ACME → reference price 101.50, band 5%|done|1|alice",
	}
	if got := browsertest.Eval[[]string](t, ctx, rows); !reflect.DeepEqual(got, want) {
		t.Fatalf("the journal list shows\n%q\nwant\n%q", got, want)
	}
}

// TestConsoleJournalListsAnAutomaticKill: a kill switch tripped by a
// session's breach count over FIX is listed on the Operations page as the
// venue's own command, naming the session and the rule and with
// "automatic" for its operator, every cell of the row filled; a reset
// through the admin API then comes into the list live, as an operator's.
func TestConsoleJournalListsAnAutomaticKill(t *testing.T) {
	s, base := consoleVenue(t, `
[risk]
[[risk.session]]
comp_id = "CLIENT3"
max_order_qty = 100
kill_after_breaches = 2
`)
	c := logon(t, s, "CLIENT3", true)
	sendOrder(t, c, order{id: "r1", side: "1", qty: "5", px: "90.00"})
	expectER(t, c, map[int]string{11: "r1", 150: "0"})
	sendOrder(t, c, order{id: "q1", side: "1", qty: "101", px: "90.00"})
	expectER(t, c, map[int]string{11: "q1", 150: "8", 103: "3"})
	sendOrder(t, c, order{id: "q2", side: "1", qty: "102", px: "90.00"})
	expectER(t, c, map[int]string{11: "q2", 150: "8", 103: "3"})
	expectER(t, c, map[int]string{11: "r1", 150: "4", 58: "cancelled by the kill switch"})
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/operations")
	// Each row as action|target|result|count|operator, newest first.
	rows := `[...document.querySelectorAll("#journal tbody tr")].map((r) => [...r.cells].slice(2).map((c) => c.innerText).join("|"))`
	autoKill := "AutoKill|session CLIENT3: kill_after_breaches reached|done|1|automatic"
	browsertest.WaitFor(t, ctx, "the journal lists the automatic kill", rows+`.length === 1`)
	if got := browsertest.Eval[[]string](t, ctx, rows); !reflect.DeepEqual(got, []string{autoKill}) {
		t.Fatalf("the journal list shows %q, want %q", got, autoKill)
	}
	// Every cell of the row as the page shows it: none empty, none the
	// rendering of a field the row lacks.
	cells := browsertest.Eval[[]string](t, ctx, `[...document.querySelector("#journal tbody tr").cells].map((c) => c.innerText)`)
	if len(cells) != 7 {
		t.Fatalf("the automatic kill's row has %d cells: %q", len(cells), cells)
	}
	for i, cell := range cells {
		if strings.TrimSpace(cell) == "" || strings.Contains(cell, "undefined") || strings.Contains(cell, "null") || strings.Contains(cell, "NaN") ||
			strings.Contains(cell, "[object") {
			t.Errorf("cell %d of the automatic kill's row reads %q: %q", i, cell, cells)
		}
	}
	if seq, err := strconv.ParseInt(cells[0], 10, 64); err != nil || seq <= 0 {
		t.Errorf("the automatic kill's seq reads %q", cells[0])
	}
	if _, err := time.Parse("2006-01-02 15:04:05", cells[1]); err != nil {
		t.Errorf("the automatic kill's time reads %q: %v", cells[1], err)
	}

	if status := adminCall(t, s, "POST", "/v1/risk/reset", aliceToken, `{"reason": "algo fixed", "session": "CLIENT3"}`, nil); status != 200 {
		t.Fatalf("POST /v1/risk/reset: HTTP %d", status)
	}
	browsertest.WaitFor(t, ctx, "the journal lists the reset", rows+`.length === 2`)
	want := []string{"Reset|session CLIENT3|done|0|alice", autoKill}
	if got := browsertest.Eval[[]string](t, ctx, rows); !reflect.DeepEqual(got, want) {
		t.Fatalf("the journal list shows\n%q\nwant\n%q", got, want)
	}
}

// TestConsoleJournalNamesMassCancelFilters: an operator's mass cancel by
// account, alone or with a session and an instrument, is listed with each
// filter it was given (its result names no account: the command does),
// not as a cancel of everything; after a restart from the journal alone
// (no snapshot) and from a snapshot's console state alike.
func TestConsoleJournalNamesMassCancelFilters(t *testing.T) {
	dir := t.TempDir()
	start := func(snapshots bool) *Server {
		cfg := testConfig(t, dir, adminConfig()+"[admin.console]\nenabled = true\n"+riskExtra)
		cfg.Journal.SnapshotInterval.Duration = 0
		if snapshots {
			cfg.Journal.SnapshotInterval.Duration = time.Second // as TestRestartFromSnapshot, for the tape's lag
		}
		return startServer(t, cfg, Options{})
	}
	s := start(false)
	c := logon(t, s, "CLIENT1", true)
	fund := []fixclient.Field{fixclient.F(1, "FUND")}
	sendOrder(t, c, order{id: "f1", side: "1", qty: "1", px: "99.00", extra: fund})
	expectER(t, c, map[int]string{11: "f1", 150: "0"})
	sendOrder(t, c, order{id: "f2", side: "1", qty: "1", px: "98.00", extra: fund})
	expectER(t, c, map[int]string{11: "f2", 150: "0"})
	for _, body := range []string{
		`{"reason": "fund closed", "account": "FUND"}`,
		`{"reason": "one book", "session": "CLIENT1", "instrument": "ACME", "account": "FUND"}`,
		`{"reason": "all of it", "instrument": "all"}`,
	} {
		if status := adminCall(t, s, "POST", "/v1/cancel", aliceToken, body, nil); status != 200 {
			t.Fatalf("POST /v1/cancel %s: HTTP %d", body, status)
		}
	}
	want := []string{
		"MassCancel|all|done|0|alice",
		"MassCancel|session CLIENT1 ACME account FUND|done|0|alice",
		"MassCancel|account FUND|done|2|alice",
	}
	rows := `[...document.querySelectorAll("#journal tbody tr")].map((r) => [...r.cells].slice(2).map((c) => c.innerText).join("|"))`
	ctx := browsertest.New(t)
	check := func(when string) {
		t.Helper()
		browsertest.Open(t, ctx, "http://"+s.AdminAddr()+"/operations")
		browsertest.WaitFor(t, ctx, when+": the journal lists the cancels", rows+`.length === 3`)
		if got := browsertest.Eval[[]string](t, ctx, rows); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the journal list shows\n%q\nwant\n%q", when, got, want)
		}
	}
	check("live")
	c.Close()
	s.Close()
	s = start(true)
	check("after a restart from the journal")
	// A snapshot after the cancels, with the tape's state beside it: the
	// next start restores the list from that state.
	c = logon(t, s, "CLIENT1", true)
	total := restAroundASnapshot(t, s, c)
	s.Close()
	s = start(true)
	if s.Replayed() >= total {
		t.Fatalf("replayed %d of %d commands: no snapshot was used", s.Replayed(), total)
	}
	check("after a restart from a snapshot")
}

// TestConsoleJournalSaysWhatAnOlderStateLacks: the console's state saved
// beside a snapshot by an older build (version 3) kept no kill switch's
// operator and no mass cancel's account. A start from that snapshot lists
// both commands saying so, where the kill's operator read "—" and the
// cancel "all", a cancel of every order.
func TestConsoleJournalSaysWhatAnOlderStateLacks(t *testing.T) {
	dir := t.TempDir()
	start := func() *Server {
		cfg := testConfig(t, dir, adminConfig()+"[admin.console]\nenabled = true\n")
		cfg.Journal.SnapshotInterval.Duration = time.Second // as TestRestartFromSnapshot, for the tape's lag
		return startServer(t, cfg, Options{})
	}
	s := start()
	c := logon(t, s, "CLIENT1", true)
	total := restAroundASnapshot(t, s, c)
	var client1 uint16
	for _, sess := range s.ops.Sessions() {
		if sess.CompID == "CLIENT1" {
			client1 = sess.Idx
		}
	}
	s.Close()
	// The state an older build saved: a kill of CLIENT1 (its operator not
	// kept) and alice's cancel (its account not kept), oldest first.
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, 0x54435646) // "FVCT"
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = binary.LittleEndian.AppendUint64(b, 0) // no end of day
	b = binary.LittleEndian.AppendUint32(b, 0) // no instrument: each starts empty
	b = binary.LittleEndian.AppendUint64(b, 2) // operator commands
	b = binary.LittleEndian.AppendUint32(b, 2) // kept
	record := func(seq uint64, action byte, session uint16, count uint32, operator string) {
		b = binary.LittleEndian.AppendUint64(b, seq)
		b = binary.LittleEndian.AppendUint64(b, uint64(time.Now().UnixNano()))
		b = append(b, action, byte(venue.RejectReasonNone))
		b = binary.LittleEndian.AppendUint16(b, session)
		b = binary.LittleEndian.AppendUint32(b, 0) // instrument
		b = binary.LittleEndian.AppendUint32(b, count)
		b = append(b, byte(len(operator)))
		b = append(b, operator...)
	}
	record(0, byte(console.ActionRisk), client1, 1, "")
	b = append(b, byte(venue.RiskActionKill), byte(venue.RiskScopeSession), byte(venue.RiskLimitNone), byte(venue.RiskResultApplied))
	b = binary.LittleEndian.AppendUint64(b, 0) // value
	b = append(b, 0)                           // account
	record(1, byte(venue.OperatorActionTypeMassCancel), ops.AnySession, 2, "alice")
	states, err := journal.ListSnapshots(filepath.Join(dir, "consolestate"))
	if err != nil || len(states) == 0 {
		t.Fatalf("console states: %v %v", states, err)
	}
	for _, st := range states {
		if _, err := journal.WriteSnapshot(filepath.Join(dir, "consolestate"), st.Seq, func(w io.Writer) error {
			_, err := w.Write(b)
			return err
		}, nil); err != nil {
			t.Fatal(err)
		}
	}
	s = start()
	if s.Replayed() >= total {
		t.Fatalf("replayed %d of %d commands: no snapshot was used", s.Replayed(), total)
	}
	want := []string{
		"MassCancel|account filter unknown|done|2|alice",
		"Kill|session CLIENT1|done|1|(unknown)",
	}
	rows := `[...document.querySelectorAll("#journal tbody tr")].map((r) => [...r.cells].slice(2).map((c) => c.innerText).join("|"))`
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, "http://"+s.AdminAddr()+"/operations")
	browsertest.WaitFor(t, ctx, "the journal lists the state's commands", rows+`.length === 2`)
	if got := browsertest.Eval[[]string](t, ctx, rows); !reflect.DeepEqual(got, want) {
		t.Fatalf("the journal list shows\n%q\nwant\n%q", got, want)
	}
}

// TestConsoleJournalKeepsTheFiltersOfManyCallsInFlight: more operator
// calls awaiting their results at once than the 32 the console's tape kept
// a note of (here 40 mass cancels, each of its own account, held by the
// journal's sync) are each listed with their account filter: the tape
// keeps notes of as many commands as the admin API can have calls in
// flight. The 8 oldest read "MassCancel all", a cancel of every order.
func TestConsoleJournalKeepsTheFiltersOfManyCallsInFlight(t *testing.T) {
	const calls = 40
	hold := newSyncHold(t)
	cfg := testConfig(t, t.TempDir(), adminConfig()+"[admin.console]\nenabled = true\n")
	// Each call is answered 504 once its command is published and not yet
	// durable: when every call is answered, every command awaits its result.
	cfg.Admin.CallTimeout.Duration = 300 * time.Millisecond
	s := startServer(t, cfg, Options{JournalSync: hold.sync})
	t.Cleanup(hold.release) // before the venue's Close, which waits for the journal
	hold.on.Store(true)
	answers := make(chan string, calls)
	for i := range calls {
		go func() {
			body := fmt.Sprintf(`{"reason": "fund closed", "account": "A%02d"}`, i)
			req, err := http.NewRequest(http.MethodPost, "http://"+s.AdminAddr()+"/v1/cancel", strings.NewReader(body))
			if err != nil {
				answers <- err.Error()
				return
			}
			req.Header.Set("Authorization", "Bearer "+aliceToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers <- err.Error()
				return
			}
			resp.Body.Close()
			answers <- resp.Status
		}()
	}
	for range calls {
		select {
		case a := <-answers:
			if !strings.HasPrefix(a, "504") {
				t.Fatalf("a cancel held by the journal's sync answered %q, want 504 (journaled, not yet durable)", a)
			}
		case <-time.After(readWait):
			t.Fatal("the cancels were not answered")
		}
	}
	hold.release()
	var want []string
	for i := range calls {
		want = append(want, fmt.Sprintf("MassCancel|account A%02d|done|0|alice", i))
	}
	rows := `[...document.querySelectorAll("#journal tbody tr")].map((r) => [...r.cells].slice(2).map((c) => c.innerText).join("|"))`
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, "http://"+s.AdminAddr()+"/operations")
	browsertest.WaitFor(t, ctx, "the journal lists the cancels", fmt.Sprintf("%s.length === %d", rows, calls))
	got := browsertest.Eval[[]string](t, ctx, rows)
	slices.Sort(got) // listed in the order of their seqs, which the calls took in any order
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the journal list shows\n%q\nwant\n%q", got, want)
	}
}

// TestConsoleManyTabs: a browser keeps at most six HTTP/1.1 connections
// to a host, and an event stream holds its connection for as long as it
// is open. Eight tabs of one browser (one user's) all load, go live and
// follow their updates over the browser's one stream (console/doc.go).
func TestConsoleManyTabs(t *testing.T) {
	s, base := consoleVenue(t, "")
	first := browsertest.New(t)
	pages := []string{"/market", "/market/ACME", "/market/LOTS", "/sessions", "/sessions/CLIENT1", "/latency", "/operations", "/market/ACME"}
	tabs := []context.Context{first}
	for range pages[1:] {
		tabs = append(tabs, browsertest.Tab(t, first))
	}
	for i, ctx := range tabs {
		if code := browsertest.Open(t, ctx, base+pages[i]); code != 200 {
			t.Fatalf("tab %d, %s: HTTP %d", i+1, pages[i], code)
		}
		browsertest.WaitFor(t, ctx, fmt.Sprintf("tab %d, %s, goes live", i+1, pages[i]), `document.getElementById("live").textContent === "live"`)
	}
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "t1", side: "1", qty: "7", px: "98.75"})
	expectER(t, c, map[int]string{11: "t1", 150: "0"})
	for i, ctx := range tabs {
		switch pages[i] {
		case "/market", "/market/ACME":
			browsertest.WaitFor(t, ctx, fmt.Sprintf("tab %d, %s, shows the bid", i+1, pages[i]), browsertest.Text("main")+`.includes("98.75")`)
		case "/sessions", "/operations":
			row := `document.querySelector('tr[data-comp="CLIENT1"]')`
			browsertest.WaitFor(t, ctx, fmt.Sprintf("tab %d, %s, shows CLIENT1 logged on", i+1, pages[i]), row+` !== null && `+row+`.innerText.includes("logged on")`)
		}
	}
}

// TestConsoleCountsWaitingStops: a stop order waiting for its trigger is an
// open order of its session, as a FIX client's OrderMassStatusRequest lists
// it: the Sessions and Operations pages and GET /v1/sessions count it, and
// the Operations page offers to cancel it, which cancels it.
func TestConsoleCountsWaitingStops(t *testing.T) {
	s, base := consoleVenue(t, "")
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "stop1", side: "1", qty: "3", typ: "3", extra: []fixclient.Field{fixclient.F(99, "105.00")}})
	expectER(t, c, map[int]string{11: "stop1", 150: "0"})
	if err := c.Send("AF", fixclient.F(584, "ms-1"), fixclient.F(585, "7")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(readWait, "8", map[int]string{584: "ms-1", 11: "stop1", 150: "I", 911: "1"}); err != nil {
		t.Fatalf("the mass status does not list the stop: %v", err)
	}
	// The admin API counts from the monitor, an event-ring consumer apart
	// from the gateway that answered: it may see the stop a little later.
	var sessions []ops.SessionInfo
	waitUntil(t, "GET /v1/sessions lists CLIENT1 with its stop, one open order", func() bool {
		adminCall(t, s, "GET", "/v1/sessions", "", "", &sessions)
		return len(sessions) > 0 && sessions[0].CompID == "CLIENT1" && sessions[0].OpenOrders == 1
	})
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/sessions")
	browsertest.WaitFor(t, ctx, "the sessions page counts the stop",
		`document.querySelector('#sessions tr[data-comp="CLIENT1"]') !== null && document.querySelector('#sessions tr[data-comp="CLIENT1"]').lastElementChild.innerText === "1 / 1024"`)
	browsertest.Open(t, ctx, base+"/operations")
	browsertest.WaitFor(t, ctx, "the operations page counts the stop against the bound",
		`document.querySelector('#ops-sessions tr[data-comp="CLIENT1"]') !== null && document.querySelector('#ops-sessions tr[data-comp="CLIENT1"]').cells[2].innerText === "1 / 1024"`)
	confirmAction(t, ctx, aliceToken, "stops too", `#ops-sessions tr[data-comp="CLIENT1"] button[data-action="cancel orders"]`)
	expectER(t, c, map[int]string{11: "stop1", 150: "4"})
	browsertest.WaitFor(t, ctx, "the cancel is done", browsertest.Text("#result")+`.includes("MassCancel: done by alice") && `+browsertest.Text("#result")+`.includes("count 1")`)
	browsertest.WaitFor(t, ctx, "CLIENT1 has no open order", browsertest.Text(`#ops-sessions tr[data-comp="CLIENT1"]`)+`.includes("logged on\t0")`)
}

// streamPaths is a reverse proxy to the admin address that the browser
// opens the pages through, recording the path of each stream opened.
type streamPaths struct {
	mu    sync.Mutex
	paths []string
}

func (p *streamPaths) opened() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.paths)
}

// proxyStreams starts the proxy to admin and returns its base URL.
func proxyStreams(t *testing.T, admin string) (*streamPaths, string) {
	t.Helper()
	target := &url.URL{Scheme: "http", Host: admin}
	p := &streamPaths{}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, FlushInterval: -1}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/stream/") {
			p.mu.Lock()
			p.paths = append(p.paths, r.URL.EscapedPath())
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// TestConsoleCrashedTabIsNotFollowed: a tab that crashes says no bye to
// the browser's shared worker; the worker finds it gone (it answers no
// ping) and opens the browser's one stream again without its topic, while
// the tab left keeps its page live.
func TestConsoleCrashedTabIsNotFollowed(t *testing.T) {
	s, _ := consoleVenue(t, "")
	streams, base := proxyStreams(t, s.AdminAddr())
	first := browsertest.New(t)
	browsertest.Open(t, first, base+"/market")
	browsertest.WaitFor(t, first, "the market page goes live", `document.getElementById("live").textContent === "live"`)
	second := browsertest.Tab(t, first)
	browsertest.Open(t, second, base+"/sessions")
	browsertest.WaitFor(t, second, "the sessions page goes live", `document.getElementById("live").textContent === "live"`)
	if got := streams.opened(); got[len(got)-1] != "/stream/market,sessions" {
		t.Fatalf("streams opened %q; want the last of both pages' topics", got)
	}
	n := len(streams.opened())
	// A renderer crash, as chromedp's own tests make one.
	_ = chromedp.Do(second, chromedp.Navigate("chrome://crash"))
	deadline := time.Now().Add(browsertest.Wait)
	for !slices.Contains(streams.opened()[n:], "/stream/market") {
		if time.Now().After(deadline) {
			t.Fatalf("the worker still follows the crashed tab's topic: streams opened %q", streams.opened())
		}
		time.Sleep(50 * time.Millisecond)
	}
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "alive", side: "1", qty: "7", px: "98.75"})
	expectER(t, c, map[int]string{11: "alive", 150: "0"})
	browsertest.WaitFor(t, first, "the market page still follows its updates", browsertest.Text("main")+`.includes("98.75")`)
}

// TestConsoleTabOfAnInstrumentGoneLeavesTheOthersLive: the venue restarts
// on a new journal (another day's configuration) without an instrument a
// tab still shows. That tab says the venue has it no more, and the
// browser's other tabs, whose stream it shares, go live again and follow
// their updates.
func TestConsoleTabOfAnInstrumentGoneLeavesTheOthersLive(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), adminConfig()+"[admin.console]\nenabled = true\n")
	s := startServer(t, cfg, Options{})
	listInstrument(t, s, "NEWCO")
	base := "http://" + s.AdminAddr()
	market := browsertest.New(t)
	browsertest.Open(t, market, base+"/market")
	book := browsertest.Tab(t, market)
	browsertest.Open(t, book, base+"/market/NEWCO")
	for _, ctx := range []context.Context{market, book} {
		browsertest.WaitFor(t, ctx, "the page goes live", `document.getElementById("live").textContent === "live"`)
	}
	s.Close()
	browsertest.WaitFor(t, market, "the market's tab sees the venue stop", `document.getElementById("live").textContent !== "live"`)
	s = consoleVenueAt(t, s.AdminAddr(), t.TempDir(), nil)
	browsertest.WaitFor(t, market, "the market's tab is live again", `document.getElementById("live").textContent === "live"`)
	browsertest.WaitFor(t, book, "the book's tab says NEWCO is gone",
		browsertest.Text("#live")+` === "not live: the venue has no instrument NEWCO now; reload the page"`)
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "after", side: "1", qty: "7", px: "98.75"})
	expectER(t, c, map[int]string{11: "after", 150: "0"})
	browsertest.WaitFor(t, market, "the market's tab follows its updates", browsertest.Text("main")+`.includes("98.75")`)
}

// TestConsoleSessionPageOfASessionGone: a session's page left open while
// the venue restarts on a new journal whose configuration has the session
// no more says so, rather than showing an empty table.
func TestConsoleSessionPageOfASessionGone(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), adminConfig()+"[admin.console]\nenabled = true\n")
	s := startServer(t, cfg, Options{})
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, "http://"+s.AdminAddr()+"/sessions/SLOW")
	browsertest.WaitFor(t, ctx, "the page shows SLOW", `document.querySelector('#sessions tr[data-comp="SLOW"]') !== null && `+browsertest.Text("#gone")+` === ""`)
	s.Close()
	browsertest.WaitFor(t, ctx, "the page sees the venue stop", `document.getElementById("live").textContent !== "live"`)
	consoleVenueAt(t, s.AdminAddr(), t.TempDir(), func(c *config.Config) {
		c.Sessions = slices.DeleteFunc(c.Sessions, func(s config.Session) bool { return s.CompID == "SLOW" })
	})
	browsertest.WaitFor(t, ctx, "the page says SLOW is gone", `document.getElementById("live").textContent === "live" && `+
		browsertest.Text("#gone")+` === "The venue lists no session SLOW now." && document.querySelector("#sessions tbody tr") === null`)
}

// consoleVenueAt starts a venue with the console on, its data in dir, on
// the admin address addr of the venue a test stopped: the pages' stream
// reconnects to the address it knows. mutate, when not nil, changes the
// configuration first.
func consoleVenueAt(t *testing.T, addr, dir string, mutate func(*config.Config)) *Server {
	t.Helper()
	cfg := testConfig(t, dir, adminConfig()+"[admin.console]\nenabled = true\n")
	if mutate != nil {
		mutate(cfg)
	}
	cfg.Admin.Addr = addr
	return startServer(t, cfg, Options{})
}

// restAroundASnapshot rests g1 on c's session, waits for a snapshot, rests
// g2, closes c and waits for a snapshot a start can use (with the states
// saved beside it); it returns the commands durable then, all of which a
// start from the journal alone replays.
func restAroundASnapshot(t *testing.T, s *Server, c *fixclient.Client) int64 {
	t.Helper()
	sendOrder(t, c, order{id: "g1", side: "1", qty: "1", px: "97.00"})
	expectER(t, c, map[int]string{11: "g1", 150: "0"})
	waitUntil(t, "a snapshot", func() bool { return s.snaps.Stats().Taken.Load() > 0 })
	sendOrder(t, c, order{id: "g2", side: "1", qty: "1", px: "97.00"})
	expectER(t, c, map[int]string{11: "g2", 150: "0"})
	c.Close()
	waitUsableSnapshot(t, s)
	return s.Pipeline().Durable().Load() + 1
}

// TestConsoleSignInFromAnotherOriginIsRefused: a page of another origin
// whose form posts a token to the console's sign-in (a page elsewhere
// signing the browser in with a token of its choosing) is refused, 403,
// signing nothing in; the console's own sign-in form signs in. The
// sign-in needed nothing a cross-site form cannot send, and signed in.
func TestConsoleSignInFromAnotherOriginIsRefused(t *testing.T) {
	_, base := consoleVenue(t, "")
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/signin"><input name="token" value="%s"><input name="next" value="/sessions"></form>`+
			`<script>document.forms[0].submit()</script>`, base, aliceToken)
	}))
	t.Cleanup(elsewhere.Close)
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, elsewhere.URL)
	if at, got := navigatedTo(t, ctx, base+"/"); at != base+"/signin" || !strings.Contains(got, `"cross_origin"`) {
		t.Fatalf("the sign-in posted from another origin led to %s, showing %.300q; want the 403 cross_origin refusal", at, got)
	}
	// The console's own form, in the same browser.
	browsertest.Open(t, ctx, base+"/signin?next=/sessions")
	tctx, cancel := context.WithTimeout(ctx, browsertest.Wait)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.SetValue(chromedp.CSS(`input[name="token"]`), aliceToken), chromedp.Submit(chromedp.CSS(`form.auth`))); err != nil {
		t.Fatal(err)
	}
	if at, _ := navigatedTo(t, ctx, base+"/sessions"); at != base+"/sessions" {
		t.Fatalf("the console's own sign-in led to %s, want the page asked, /sessions", at)
	}
}

// navigatedTo waits, within browsertest.Wait, for the tab of ctx, which a
// form's post navigates, to show a loaded page whose URL starts with
// prefix, and returns its URL and text. A poll that meets the navigation
// (its page's context gone) is tried again.
func navigatedTo(t *testing.T, ctx context.Context, prefix string) (url, text string) {
	t.Helper()
	deadline := time.Now().Add(browsertest.Wait)
	for {
		tctx, cancel := context.WithTimeout(ctx, time.Second)
		at, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`document.readyState === "complete" ? [location.href, document.body.innerText] : []`))
		cancel()
		if err == nil && len(at) == 2 && strings.HasPrefix(at[0], prefix) {
			return at[0], at[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no page at %s within %s: %v %q", prefix, browsertest.Wait, err, at)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConsoleShowsMarkupInAnInstrumentsSymbolAsText: a symbol may hold any
// printable character but a space and '=' (an instrument an operator
// lists, or the configuration's): one holding markup is shown as text on
// every page that names it (the server's templates, and the script's
// tables, summary, links and journal list), its book is reached through
// its link and its stream, and nothing of it becomes an element.
func TestConsoleShowsMarkupInAnInstrumentsSymbolAsText(t *testing.T) {
	s, base := consoleVenue(t, "")
	const symbol = `<i>X&"'</i>`
	listInstrument(t, s, symbol)
	ctx := browsertest.New(t)
	noMarkup := `document.querySelectorAll("main i, header i, title i").length === 0`
	browsertest.Open(t, ctx, base+"/market")
	browsertest.WaitFor(t, ctx, "the market lists the symbol as text", fmt.Sprintf(
		`[...document.querySelectorAll("#market tbody tr td:first-child")].some((c) => c.innerText === %q) && `+noMarkup, symbol))
	// Its link leads to its book, whose stream goes live.
	browsertest.WaitFor(t, ctx, "follow the symbol's link", fmt.Sprintf(
		`(() => { const a = [...document.querySelectorAll("#market tbody a")].find((a) => a.innerText === %q); if (!a) return false; a.click(); return true; })()`, symbol))
	at, _ := navigatedTo(t, ctx, base+"/market/")
	if p, err := url.PathUnescape(strings.TrimPrefix(at, base+"/market/")); err != nil || p != symbol {
		t.Fatalf("the symbol's link led to %s", at)
	}
	browsertest.WaitFor(t, ctx, "the book's stream goes live", `document.getElementById("live").textContent === "live"`)
	browsertest.WaitFor(t, ctx, "the book names the symbol as text", fmt.Sprintf(
		`document.getElementById("sym").innerText === %q && document.title.startsWith(%q) && `+noMarkup, symbol, symbol))
	browsertest.Open(t, ctx, base+"/operations")
	browsertest.WaitFor(t, ctx, "Operations lists the symbol and its listing as text", fmt.Sprintf(
		`[...document.querySelectorAll("#ops-instruments tbody tr td:first-child")].some((c) => c.innerText === %q) && `+
			`[...document.querySelectorAll("#journal tbody tr")].some((r) => r.cells[3].innerText === %q) && `+noMarkup, symbol, symbol))
	// The 404 page of an unknown symbol holding markup names it as text.
	browsertest.Open(t, ctx, base+"/market/"+url.PathEscape(`<i>Y</i>`))
	browsertest.WaitFor(t, ctx, "the 404 page names the symbol as text", `document.querySelector("main").innerText.includes('no instrument "<i>Y</i>"') && `+noMarkup)
}

// TestConsoleSignOut: a browser signed in by the sign-in page signs out
// with the header's button: its cookie is gone, and the pages ask for a
// token again. The cookie is HttpOnly, so nothing in the page could drop
// it: an operator leaving a shared workstation left the console readable
// until the browser ended. A page read anonymously (by a loopback name)
// offers no sign-out.
func TestConsoleSignOut(t *testing.T) {
	s, base := consoleVenue(t, "")
	_, port, err := net.SplitHostPort(s.AdminAddr())
	if err != nil {
		t.Fatal(err)
	}
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/market")
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll("form.signout").length`); n != 0 {
		t.Fatalf("a page read anonymously offers %d sign-outs", n)
	}
	// Called by a name beyond loopback, the pages need a token.
	far := "http://" + net.JoinHostPort(browsertest.Host, port)
	if code := browsertest.Open(t, ctx, far+"/sessions"); code != http.StatusUnauthorized {
		t.Fatalf("/sessions by %s before the sign-in: %d, want 401", browsertest.Host, code)
	}
	tctx, cancel := context.WithTimeout(ctx, browsertest.Wait)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.SetValue(chromedp.CSS(`input[name="token"]`), bobToken), chromedp.Submit(chromedp.CSS(`form.auth`))); err != nil {
		t.Fatal(err)
	}
	if at, _ := navigatedTo(t, ctx, far+"/sessions"); at != far+"/sessions" {
		t.Fatalf("the sign-in led to %s, want %s/sessions", at, far)
	}
	if got := cookieNames(t, ctx, far); !slices.Contains(got, ops.TokenCookie) {
		t.Fatalf("after the sign-in the browser holds cookies %v, not the token's %s", got, ops.TokenCookie)
	}
	browsertest.WaitFor(t, ctx, "the sign-out button", `(() => { const b = document.querySelector("form.signout button"); if (!b) return false; b.click(); return true; })()`)
	if at, text := navigatedTo(t, ctx, far+"/signin"); !strings.Contains(text, "Sign in") {
		t.Fatalf("the sign-out led to %s, showing %.200q; want the sign-in page", at, text)
	}
	if got := cookieNames(t, ctx, far); slices.Contains(got, ops.TokenCookie) {
		t.Fatalf("after the sign-out the browser still holds the token's cookie (%v)", got)
	}
	if code := browsertest.Open(t, ctx, far+"/sessions"); code != http.StatusUnauthorized {
		t.Fatalf("/sessions after the sign-out: %d, want 401", code)
	}
}

// cookieNames lists the cookies the tab's browser holds for url.
func cookieNames(t *testing.T, ctx context.Context, url string) []string {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, browsertest.Wait)
	defer cancel()
	res, err := chromedp.Call(tctx, network.GetCookies, network.GetCookiesParams{URLs: []string{url}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range res.Cookies {
		names = append(names, c.Name)
	}
	return names
}

// TestConsoleCancelsOneOrder: /operations cancels one order by a session's
// ClOrdID, as the admin API's POST /v1/orders/cancel does: the client hears
// of it, the result names the order and the journal list shows it; it
// lists a session's orders, each with a Cancel, read again after one; an
// unknown OrderID is refused with the API's words, and a form naming the
// order twice sends nothing.
func TestConsoleCancelsOneOrder(t *testing.T) {
	s, base := consoleVenue(t, "")
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "o1", side: "1", qty: "2", px: "99.00"})
	o1 := expectER(t, c, map[int]string{11: "o1", 150: "0"})
	sendOrder(t, c, order{id: "o2", side: "2", qty: "3", px: "101.00"})
	o2 := expectER(t, c, map[int]string{11: "o2", 150: "0"})
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, base+"/operations")
	fillForm := func(session, clOrdID, orderID string) {
		t.Helper()
		browsertest.WaitFor(t, ctx, "the form filled", fmt.Sprintf(`(() => { document.getElementById("co-session").value = %q;
			document.getElementById("co-clordid").value = %q; document.getElementById("co-orderid").value = %q; return true; })()`,
			session, clOrdID, orderID))
	}
	fillForm("CLIENT1", "o1", "12")
	browsertest.WaitFor(t, ctx, "a form naming the order twice is refused before anything is sent", `(() => { document.getElementById("co-go").click();
		return document.getElementById("confirm").hidden && document.getElementById("result").textContent.includes("not both (nothing was sent)"); })()`)
	fillForm("CLIENT1", "o1", "")
	confirmAction(t, ctx, aliceToken, "client asked by phone", "#co-go")
	expectER(t, c, map[int]string{11: "o1", 150: "4", 39: "4", 58: "cancelled by the venue's operator"})
	named := "order " + o1.Get(37) + " of CLIENT1 in ACME"
	browsertest.WaitFor(t, ctx, "the result names the order", browsertest.Text("#result")+`.includes("CancelOrder: done by alice") && `+
		browsertest.Text("#result")+fmt.Sprintf(`.includes(%q)`, named))
	browsertest.WaitFor(t, ctx, "the journal list shows it", browsertest.Text("#journal")+fmt.Sprintf(`.includes(%q)`, "order "+o1.Get(37)+" of session CLIENT1 in ACME"))
	// The session's orders, listed on demand, each with a Cancel of its own;
	// the list is read again after the cancel.
	browsertest.WaitFor(t, ctx, "the list asked for", `(() => { document.getElementById("co-list").click(); return true; })()`)
	o2row := `#co-orders tr[data-order="` + o2.Get(37) + `"]`
	browsertest.WaitFor(t, ctx, "o2 listed", browsertest.Text(o2row)+`.includes("ACME") && `+browsertest.Text(o2row)+`.includes("sell") && `+
		browsertest.Text(o2row+" td:nth-child(2)")+`.trim() === "o2" && `+
		browsertest.Text(o2row)+`.includes("101.00") && `+browsertest.Text("#co-listed")+`.startsWith("CLIENT1: 1 open order (")`)
	confirmAction(t, ctx, aliceToken, "pulled from the list", o2row+" button")
	expectER(t, c, map[int]string{11: "o2", 150: "4", 58: "cancelled by the venue's operator"})
	browsertest.WaitFor(t, ctx, "the list read again", browsertest.Text("#co-listed")+`.startsWith("CLIENT1: 0 open orders") && document.getElementById("co-orders").hidden && `+
		browsertest.Text("#result")+fmt.Sprintf(`.includes(%q)`, "order "+o2.Get(37)+" of CLIENT1 in ACME"))
	fillForm("", "", "999999")
	confirmAction(t, ctx, aliceToken, "no such order", "#co-go")
	browsertest.WaitFor(t, ctx, "an unknown order is refused", browsertest.Text("#result")+`.includes("HTTP 404: no such order")`)
}
