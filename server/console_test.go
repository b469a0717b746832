package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/admintest"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/ops"
)

// These tests of the console need no browser: access, bounds, and a
// browser that stops reading its stream.

// consoleGet fetches a console page or stream head with an optional token.
func consoleGet(t *testing.T, url, token string) (int, string) {
	t.Helper()
	a := admintest.Call(t, http.MethodGet, url, token, "")
	return a.Status, string(a.Body)
}

// TestConsoleDefaultsWithoutTokens: with no [[admin.token]] the admin
// listener still serves the console and the read-only API on loopback,
// and refuses every change with a clear 403, journaling nothing.
func TestConsoleDefaultsWithoutTokens(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	base := "http://" + s.AdminAddr()
	if s.AdminAddr() == "" || s.Console() == nil {
		t.Fatal("the admin listener and the console are off by default")
	}
	for _, p := range []string{"/market", "/market/ACME", "/sessions", "/sessions/CLIENT1", "/latency", "/operations", "/static/console.js", "/healthz"} {
		if code, _ := consoleGet(t, base+p, ""); code != 200 {
			t.Errorf("GET %s: HTTP %d", p, code)
		}
	}
	// Without a token, only a call to a loopback name reads: a web page
	// elsewhere reaches loopback under its own name (DNS rebinding).
	for _, host := range []string{"localhost", "LOCALHOST:" + strings.Split(s.AdminAddr(), ":")[1], "127.0.0.1", "attacker.example", "attacker.example:80"} {
		for _, p := range []string{"/market", "/v1/sessions", "/stream/market"} {
			req, err := http.NewRequest(http.MethodGet, base+p, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			resp, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			b := make([]byte, 4096)
			n, _ := io.ReadAtLeast(resp.Body, b, 1)
			resp.Body.Close()
			cancel()
			want := 200
			if strings.HasPrefix(host, "attacker") {
				want = 401
			}
			if resp.StatusCode != want || (want == 401 && !strings.Contains(string(b[:n]), "loopback name")) {
				t.Errorf("GET %s with Host %s: HTTP %d, want %d: %.300s", p, host, resp.StatusCode, want, b[:n])
			}
		}
	}
	// An HTTP/1.0 request without a Host (a health check, nc) names no
	// web page: it reads as a loopback name does.
	conn, err := net.Dial("tcp", s.AdminAddr())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /v1/sessions HTTP/1.0\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(readWait))
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.Contains(line, " 200 ") {
		t.Errorf("GET /v1/sessions over HTTP/1.0 without a Host: %q %v, want 200", line, err)
	}
	conn.Close()
	for _, p := range []string{"/market/NOPE", "/sessions/NOBODY", "/nothing", "/static/", "/static/nothing.js"} {
		if code, body := consoleGet(t, base+p, ""); code != 404 || !strings.Contains(body, "<h1>Not found</h1>") {
			t.Errorf("GET %s: HTTP %d, want the 404 page", p, code)
		}
	}
	// A page called with another method is 405 with Allow, as the API's
	// endpoints are; only a path the console does not serve is 404.
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodPost, "/market", "GET"}, {http.MethodDelete, "/market/ACME", "GET"}, {http.MethodPut, "/sessions/CLIENT1", "GET"},
		{http.MethodPost, "/stream/market", "GET"}, {http.MethodPut, "/signin", "GET, POST"},
	} {
		if a := admintest.Call(t, c.method, base+c.path, "", ""); a.Status != 405 || a.Allow != c.allow ||
			!strings.Contains(string(a.Body), c.method+" "+c.path+" is not allowed: "+c.allow) {
			t.Errorf("%s %s: HTTP %d, Allow %q, want 405 and %q: %.300s", c.method, c.path, a.Status, a.Allow, c.allow, a.Body)
		}
	}
	if a := admintest.Call(t, http.MethodPost, base+"/nothing", "", ""); a.Status != 404 || !strings.Contains(string(a.Body), "no such page: /nothing") {
		t.Errorf("POST /nothing: HTTP %d, want the 404 page", a.Status)
	}
	if code, _ := consoleGet(t, base+"/v1/nothing", ""); code != 404 {
		t.Errorf("GET /v1/nothing: HTTP %d", code)
	}
	var list []ops.InstrumentInfo
	if code := adminCall(t, s, "GET", "/v1/instruments", "", "", &list); code != 200 || len(list) != 2 {
		t.Fatalf("instruments without a token on loopback: %d %v", code, list)
	}
	before := s.Pipeline().Durable().Load()
	var e map[string]string
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/halt", "", `{"reason":"x"}`, &e); code != 403 || e["code"] != "no_operator_token" ||
		!strings.Contains(e["error"], "no operator token is configured") {
		t.Fatalf("a change without operator tokens: %d %v", code, e)
	}
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/halt", "some-token", `{"reason":"x"}`, nil); code != 403 {
		t.Fatalf("a change with a token while none is configured: %d", code)
	}
	if after := s.Pipeline().Durable().Load(); after != before {
		t.Fatalf("refused changes journaled %d commands", after-before)
	}
	if _, page := consoleGet(t, base+"/operations", ""); !strings.Contains(page, "No operator token is configured") {
		t.Fatal("the Operations page does not say that changes are refused")
	}
}

// TestConsoleReadToken: a read token may read but not change (403, nothing
// journaled); a forged token is 401 on the API and on the pages.
func TestConsoleReadToken(t *testing.T) {
	t.Parallel()
	const reader = "reader-token-0123456789"
	extra := adminConfig() + fmt.Sprintf("[[admin.token]]\noperator = \"carol\"\nsha256 = %q\nrole = \"read\"\n", ops.HashToken(reader))
	s := startServer(t, testConfig(t, t.TempDir(), extra), Options{})
	base := "http://" + s.AdminAddr()
	if code, _ := consoleGet(t, base+"/market", reader); code != 200 {
		t.Fatalf("read token on a page: %d", code)
	}
	if code := adminCall(t, s, "GET", "/v1/sessions", reader, "", nil); code != 200 {
		t.Fatalf("read token on GET /v1/sessions: %d", code)
	}
	before := durableSeq(t, s)
	var e map[string]string
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/halt", reader, `{"reason":"x"}`, &e); code != 403 || e["code"] != "read_only_token" {
		t.Fatalf("read token on a change: %d %v", code, e)
	}
	if code, _ := consoleGet(t, base+"/market", "forged"); code != 401 {
		t.Fatalf("forged token on a page: %d", code)
	}
	if after := durableSeq(t, s); after != before {
		t.Fatalf("refused changes journaled %d commands", after-before)
	}
	if st := instrumentsOf(t, s)["ACME"]; st.Status != "Open" {
		t.Fatalf("ACME %s after refused calls", st.Status)
	}
}

// TestConsoleStreamBounds: unknown streams are 404, streams beyond
// streams_max are refused (and counted), and a browser that stops reading is dropped
// once a write waits write_timeout: the stream ends and nothing of it is
// kept.
func TestConsoleStreamBounds(t *testing.T) {
	t.Parallel()
	s, base := consoleVenue(t, "updates_per_second = 50\nstreams_max = 2\nwrite_timeout = \"300ms\"\n")
	// A stream of no known topic, or of more unknown topics than a
	// browser's stale tabs make, is refused.
	many := "market"
	for i := range 17 {
		many += fmt.Sprintf(",book-NOPE%d", i)
	}
	for _, topics := range []string{"book-NOPE", "book-NOPE,book-NOPE2", many} {
		if code, _ := consoleGet(t, base+"/stream/"+topics, ""); code != 404 {
			t.Fatalf("unknown stream %s: %d", topics, code)
		}
	}
	// A client that reads nothing, with a small receive buffer.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
		if err != nil {
			return err
		}
		return serr
	}}
	stalled, err := d.Dial("tcp", s.AdminAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	fmt.Fprintf(stalled, "GET /stream/book-ACME HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	// A second stream that reads: the bound is two.
	reader, err := net.Dial("tcp", s.AdminAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	fmt.Fprintf(reader, "GET /stream/market HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	br := bufio.NewReader(reader)
	reader.SetReadDeadline(time.Now().Add(readWait))
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, "200") {
		t.Fatalf("second stream: %q %v", line, err)
	}
	go io.Copy(io.Discard, br)
	waitUntil(t, "two streams open", func() bool { open, _ := s.Console().Streams(); return open == 2 })
	if code, body := consoleGet(t, base+"/stream/market", ""); code != 503 || !strings.Contains(body, "streams_max") {
		t.Fatalf("third stream: %d %s", code, body)
	}
	// The operator sees the refusal, which only the browser saw.
	if v := metricstest.Float(t, scrape(t, s), "fixvenue_console_streams_refused_total"); v != 1 {
		t.Fatalf("fixvenue_console_streams_refused_total = %v after a stream refused at streams_max, want 1", v)
	}
	// Trades make every update of the stalled stream larger (the chart and
	// the tape) until its socket buffers are full and a write times out.
	a, b := logon(t, s, "CLIENT1", true), logon(t, s, "CLIENT2", true)
	for i := 0; i < 3000; i++ {
		if _, dropped := s.Console().Streams(); dropped > 0 {
			break
		}
		sendOrder(t, a, order{id: fmt.Sprintf("b%d", i), side: "1", qty: "1", px: "99.00"})
		expectER(t, a, map[int]string{11: fmt.Sprintf("b%d", i), 150: "0"})
		sendOrder(t, b, order{id: fmt.Sprintf("s%d", i), side: "2", qty: "1", px: "99.00", tif: "3"})
		expectER(t, b, map[int]string{11: fmt.Sprintf("s%d", i), 150: "F"})
	}
	waitUntil(t, "the stalled stream dropped", func() bool { open, dropped := s.Console().Streams(); return dropped == 1 && open == 1 })
	m := scrape(t, s)
	if open, dropped := metricstest.Float(t, m, "fixvenue_console_streams"), metricstest.Float(t, m, "fixvenue_console_streams_dropped_total"); open != 1 || dropped != 1 {
		t.Errorf("metrics: %v streams open, %v dropped; want 1 and 1", open, dropped)
	}
	// The reading stream lives on and the bound admits a new one.
	if code, _ := consoleGet(t, base+"/market/ACME", ""); code != 200 {
		t.Fatalf("page after the drop: %d", code)
	}
}

// TestConsoleStreamOfSeveralTopics: one stream follows several topics (a
// browser's tabs share one, console/doc.go), each update an event named
// by its topic, a topic named twice followed once; a comma in a symbol
// (which may hold one) is sent as %2C. A topic the venue does not have is
// named in an "unknown" event first, and the others are followed.
func TestConsoleStreamOfSeveralTopics(t *testing.T) {
	s, _ := consoleVenue(t, "")
	listInstrument(t, s, "X,Y")
	conn, err := net.Dial("tcp", s.AdminAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /stream/market,book-NOPE,book-X%%2CY,market,book-NOPE HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(readWait))
	br := bufio.NewReader(conn)
	seen := map[string]int{}
	var order []string
	for seen["market"] == 0 || seen["book-X,Y"] == 0 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("events seen %v: %v", seen, err)
		}
		if topic, ok := strings.CutPrefix(strings.TrimSpace(line), "event: "); ok {
			seen[topic]++
			order = append(order, topic)
			data, err := br.ReadString('\n')
			if topic == "unknown" && data != "data: [\"book-NOPE\"]\n" || topic != "unknown" && !strings.HasPrefix(data, "data: {") {
				t.Fatalf("event %s: data %q %v", topic, data, err)
			}
		}
	}
	if len(seen) != 3 || seen["market"] != 1 || order[0] != "unknown" {
		t.Fatalf("events %v: want the unknown topic named first, then the market's once and X,Y's book", order)
	}
}

// waitUntil polls cond for readWait.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, what, readWait, cond)
}

// waitWithin polls cond for within: a wait on a whole run of work (tens of
// commands, each journaled and synced), which the race detector on a
// loaded machine makes several times as long.
func waitWithin(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConsoleSignIn: the sign-in form keeps a valid token in an HttpOnly,
// SameSite cookie and redirects on this site only; a forged token gets 401
// and no cookie; the cookie admits pages, a forged cookie is 401, and the
// cookie alone changes nothing. No page or log shows the token.
func TestConsoleSignIn(t *testing.T) {
	t.Parallel()
	var logs lockedbuf.Buffer
	cfg := testConfig(t, t.TempDir(), adminConfig())
	s := startServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	base := "http://" + s.AdminAddr()
	noRedirect := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	signIn := func(token, next string) (*http.Response, string) {
		t.Helper()
		resp, err := noRedirect.PostForm(base+"/signin", url.Values{"token": {token}, "next": {next}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp, string(b)
	}
	// A form over the sign-in's bound is named as such.
	resp, body := signIn(strings.Repeat("t", 8<<10), "/sessions")
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "the form is over 4096 bytes") || len(resp.Cookies()) != 0 {
		t.Fatalf("an oversized form: HTTP %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	resp, body = signIn("forged-token", "/sessions")
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 || strings.Contains(body, "forged-token") {
		t.Fatalf("forged token: HTTP %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	resp, body = signIn(aliceToken, "//elsewhere.example/")
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/market" || len(cookies) != 1 {
		t.Fatalf("sign-in: HTTP %d to %q, cookies %v", resp.StatusCode, resp.Header.Get("Location"), cookies)
	}
	// A browser drops tabs and line breaks from a Location before it reads
	// it: "/\t/elsewhere.example/" would take it to elsewhere.example.
	for _, next := range []string{"/\t/elsewhere.example/", "/\r\n/elsewhere.example/", "/\x00/elsewhere.example/"} {
		if resp, _ := signIn(aliceToken, next); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/market" {
			t.Errorf("sign-in with next %q: HTTP %d to %q", next, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if c := cookies[0]; c.Name != ops.TokenCookie || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Value != aliceToken ||
		strings.Contains(body, aliceToken) {
		t.Fatalf("cookie %+v", c)
	}
	withCookie := func(method, path, value string) int {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(`{"reason":"cookie"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.AddCookie(&http.Cookie{Name: ops.TokenCookie, Value: value})
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := withCookie("GET", "/market", aliceToken); code != 200 {
		t.Fatalf("page with the cookie: HTTP %d", code)
	}
	if code := withCookie("GET", "/market", "forged"); code != 401 {
		t.Fatalf("page with a forged cookie: HTTP %d", code)
	}
	before := durableSeq(t, s)
	if code := withCookie("POST", "/v1/instruments/ACME/halt", aliceToken); code != 401 {
		t.Fatalf("a change with the cookie alone: HTTP %d", code)
	}
	if after := durableSeq(t, s); after != before {
		t.Fatalf("a refused change journaled %d commands", after-before)
	}
	if text := logs.String(); strings.Contains(text, aliceToken) || strings.Contains(text, "forged-token") {
		t.Fatal("a token is in the log")
	}
}

// TestConsoleSignInTrimsAPastedToken: a token pasted into the sign-in
// form with spaces, a tab or a line end around it (as a copy from a
// terminal or a file brings) signs in, its cookie holding the token
// without them: no token has a space at either end (hash-token refuses
// one), and the form refused it as unknown.
func TestConsoleSignInTrimsAPastedToken(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()), Options{})
	base := "http://" + s.AdminAddr()
	noRedirect := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, pasted := range []string{" " + aliceToken, aliceToken + " ", "\t" + aliceToken + "\r\n", "  " + aliceToken + "\n"} {
		resp, err := noRedirect.PostForm(base+"/signin", url.Values{"token": {pasted}, "next": {"/sessions"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		cookies := resp.Cookies()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/sessions" || len(cookies) != 1 || cookies[0].Value != aliceToken {
			t.Fatalf("sign-in with %q: HTTP %d to %q, cookies %v", pasted, resp.StatusCode, resp.Header.Get("Location"), cookies)
		}
		req, err := http.NewRequest(http.MethodGet, base+"/sessions", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "venue.example" // not a loopback name: the page needs the cookie
		req.AddCookie(cookies[0])
		page, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page.Body.Close()
		if page.StatusCode != http.StatusOK {
			t.Fatalf("a page with the cookie of the sign-in with %q: HTTP %d", pasted, page.StatusCode)
		}
	}
	// Only the ends: a token with a space inside is another token.
	resp, err := noRedirect.PostForm(base+"/signin", url.Values{"token": {aliceToken[:5] + " " + aliceToken[5:]}, "next": {"/sessions"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Fatalf("a token with a space inside: HTTP %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
}

// TestAdminAnswersHeaders: what a browser may do with each answer of the
// admin listener and the metrics listener, from its headers. The
// console's pages load their own script and style only, are never framed
// and never kept; the admin API's JSON, which echoes what a caller gave (a
// path, a Host) and holds state some tokens only may read, is read as
// JSON only and never kept (it was neither); so is the sign-in's answer,
// which carries the token in its cookie; /metrics is read as what it is.
func TestAdminAnswersHeaders(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()), Options{})
	base := "http://" + s.AdminAddr()
	get := func(url, host string) admintest.Answer {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		return admintest.Do(t, req)
	}
	check := func(what string, a admintest.Answer, status int, want map[string]string) {
		t.Helper()
		if a.Status != status {
			t.Errorf("%s: HTTP %d, want %d", what, a.Status, status)
		}
		for k, v := range want {
			if got := a.Header.Get(k); !strings.Contains(got, v) {
				t.Errorf("%s: %s %q, want %q", what, k, got, v)
			}
		}
	}
	page := map[string]string{"Content-Type": "text/html", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'", "Referrer-Policy": "same-origin"}
	for _, p := range []string{"/market", "/market/ACME", "/sessions", "/sessions/CLIENT1", "/latency", "/operations"} {
		check("GET "+p, get(base+p, ""), 200, page)
		check("GET "+p+" by a name that is not loopback's", get(base+p, "venue.example"), 401, page)
	}
	check("GET /signin", get(base+"/signin", "venue.example"), 200, page)
	check("GET /nothing", get(base+"/nothing", ""), 404, page)
	if a := get(base+"/market", ""); !strings.Contains(a.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("GET /market: Content-Security-Policy %q lets another page frame it", a.Header.Get("Content-Security-Policy"))
	}
	check("GET /static/console.js", get(base+"/static/console.js", ""), 200, map[string]string{"Content-Type": "javascript", "X-Content-Type-Options": "nosniff"})
	api := map[string]string{"Content-Type": "application/json", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}
	check("GET /v1/status", get(base+"/v1/status", ""), 200, api)
	check("GET /v1/status by a name that is not loopback's", get(base+"/v1/status", "venue.example"), 401, api)
	check("GET /v1/nothing", get(base+"/v1/nothing", ""), 404, api)
	check("GET /healthz", get(base+"/healthz", ""), 200, api)
	check("POST /v1/eod without a token", admintest.Call(t, http.MethodPost, base+"/v1/eod", "", `{"reason":"x"}`), 401, api)
	check("POST /v1/eod with a body that is not JSON", admintest.Call(t, http.MethodPost, base+"/v1/eod", aliceToken, `{"reason":`), 400, api)

	noRedirect := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(base+"/signin", url.Values{"token": {aliceToken}, "next": {"/market"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("sign-in: HTTP %d, cookies %v, Cache-Control %q, want 303, the cookie and no-store", resp.StatusCode, resp.Cookies(), resp.Header.Get("Cache-Control"))
	}
	check("GET /metrics", get("http://"+s.MetricsAddr()+"/metrics", ""), 200, map[string]string{"Content-Type": "text/plain", "X-Content-Type-Options": "nosniff"})
}

// TestAdminListenerBoundsSilentConnections: connections to the admin
// listener that send no request (anyone who can reach it may open them by
// the thousand) are held at most admin.console.streams_max + 64 at once:
// each one more closes the one that has waited longest, counted in
// fixvenue_admin_connections_closed_total, and calls are answered while
// they are held (README, "Operating the venue").
func TestAdminListenerBoundsSilentConnections(t *testing.T) {
	s, base := consoleVenue(t, "streams_max = 1\n")
	for range 1 + ops.AdminConnsBeyondStreams + 3 {
		c, err := net.Dial("tcp", s.AdminAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	waitUntil(t, "three silent connections closed for newer ones", func() bool {
		return metricstest.Float(t, scrape(t, s), `fixvenue_admin_connections_closed_total{why="evicted"}`) >= 3
	})
	if code, body := consoleGet(t, base+"/v1/status", ""); code != http.StatusOK {
		t.Fatalf("a call past the silent connections: HTTP %d %s", code, body)
	}
	if refused := metricstest.Float(t, scrape(t, s), `fixvenue_admin_connections_closed_total{why="refused"}`); refused != 0 {
		t.Fatalf("%v connections refused: none served a request", refused)
	}
}

// TestConsoleSignInRefusesATokenNoCookieCarries: a valid token holding a
// character a cookie cannot carry is refused at the sign-in, saying so,
// with no cookie set: http.SetCookie dropped the character, so the cookie
// held another token and every page after the sign-in refused it.
func TestConsoleSignInRefusesATokenNoCookieCarries(t *testing.T) {
	const token = `semi;colon"token`
	cfg := testConfig(t, t.TempDir(), fmt.Sprintf("[admin]\naddr = \"127.0.0.1:0\"\n[[admin.token]]\noperator = \"carol\"\nsha256 = %q\n",
		ops.HashToken(token)))
	s := startServer(t, cfg, Options{})
	noRedirect := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm("http://"+s.AdminAddr()+"/signin", url.Values{"token": {token}, "next": {"/sessions"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusBadRequest || len(resp.Cookies()) != 0 || !strings.Contains(string(body), "a cookie cannot carry") {
		t.Fatalf("sign-in with %q: HTTP %d, cookies %v", token, resp.StatusCode, resp.Cookies())
	}
	// The token itself reads, in the header.
	if code, _ := consoleGet(t, "http://"+s.AdminAddr()+"/market", token); code != http.StatusOK {
		t.Fatalf("the token in the header: HTTP %d", code)
	}
}

// TestConsoleSignInReturnsToThePageAsked: a page that asks for a sign-in
// sends the browser back, once signed in, to the page it asked for, its
// path as the browser sent it: the book of EUR/USD is
// /market/EUR%2FUSD, and the path decoded (/market/EUR/USD) is no page.
func TestConsoleSignInReturnsToThePageAsked(t *testing.T) {
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()), Options{})
	base := "http://" + s.AdminAddr()
	listInstrument(t, s, "EUR/USD")
	noRedirect := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// Called by a name that is not loopback's, the page asks for a token.
	req, err := http.NewRequest(http.MethodGet, base+"/market/EUR%2FUSD", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "venue.example"
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	m := regexp.MustCompile(`name="next" value="([^"]*)"`).FindSubmatch(page)
	if resp.StatusCode != http.StatusUnauthorized || m == nil {
		t.Fatalf("GET /market/EUR%%2FUSD without a token: HTTP %d: %.500s", resp.StatusCode, page)
	}
	next := html.UnescapeString(string(m[1]))
	resp, err = noRedirect.PostForm(base+"/signin", url.Values{"token": {aliceToken}, "next": {next}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	to := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || to != "/market/EUR%2FUSD" {
		t.Fatalf("sign-in with next %q: HTTP %d to %q, want /market/EUR%%2FUSD", next, resp.StatusCode, to)
	}
	if code, body := consoleGet(t, base+to, aliceToken); code != 200 || !strings.Contains(body, "<title>EUR/USD") {
		t.Fatalf("GET %s after the sign-in: HTTP %d: %.300s", to, code, body)
	}
}

// latencyCount reads the Latency page's first update from its stream and
// returns how many values its series (the histogram named so) holds since
// start.
func latencyCount(t *testing.T, base, series string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/stream/latency", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var v struct {
			Series []struct {
				Name       string `json:"name"`
				SinceStart struct {
					Count int64 `json:"count"`
				} `json:"sinceStart"`
			} `json:"series"`
		}
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Fatal(err)
		}
		for _, s := range v.Series {
			if s.Name == series {
				return s.SinceStart.Count
			}
		}
		t.Fatalf("no series %q in %s", series, data)
	}
	t.Fatalf("the latency stream ended without an update: %v", sc.Err())
	return 0
}

// TestConsoleOrderToFeedCountsOrdersOnly: the Latency page's order to
// market data feed is measured from a FIX message's arrival, so an
// operator's halt, resume and cancel, which no FIX message caused, are not
// in it: their commands carry the time the admin API (or the schedule,
// for a transition due while the venue was down: hours before) stamped.
func TestConsoleOrderToFeedCountsOrdersOnly(t *testing.T) {
	s, base := consoleVenue(t, "")
	c := logon(t, s, "CLIENT1", true)
	for i := range 3 {
		sendOrder(t, c, order{id: fmt.Sprintf("o%d", i), side: "1", qty: "1", px: "99.00"})
		expectER(t, c, map[int]string{11: fmt.Sprintf("o%d", i), 150: "0"})
	}
	for _, call := range []struct{ path, body string }{
		{"/v1/instruments/ACME/halt", `{"reason":"news"}`},
		{"/v1/instruments/ACME/resume", `{"reason":"news out"}`},
		{"/v1/cancel", `{"reason":"clean up","session":"CLIENT1"}`},
	} {
		if code := adminCall(t, s, "POST", call.path, bobToken, call.body, nil); code != 200 {
			t.Fatalf("POST %s: HTTP %d", call.path, code)
		}
	}
	for i := range 3 {
		expectER(t, c, map[int]string{11: fmt.Sprintf("o%d", i), 150: "4"})
	}
	// One more order: once the histogram holds it, it holds whatever the
	// feed recorded for the commands before it.
	sendOrder(t, c, order{id: "o3", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "o3", 150: "0"})
	var n int64
	waitUntil(t, "the last order is in the order-to-feed histogram", func() bool {
		n = latencyCount(t, base, "order to market data feed")
		return n >= 4
	})
	if n != 4 {
		t.Fatalf("order to market data feed counts %d commands; want the 4 orders", n)
	}
}

// TestOrderRoundTripCountsFIXAnswersOnly: the order round trip
// (fixvenue_order_round_trip_seconds and the Latency page's order to
// ExecutionReport) is measured from a FIX message's arrival, so it holds
// the answers of the commands FIX messages caused (orders, the fills of the
// orders they trade with, a cancel, a mass cancel and its cancels, a status
// request) and none of the reports no message caused: an operator's phase
// change and its uncross, mass cancel, halt and resume, and end of day.
// Their commands carry the time the admin API or the schedule stamped (a
// transition due while the venue was down: hours before).
func TestOrderRoundTripCountsFIXAnswersOnly(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()+"[admin.console]\nenabled = true\n"+idleSchedule()), Options{})
	waitReady(t, s)
	base := "http://" + s.AdminAddr()
	admin := func(path, body string) {
		t.Helper()
		if code := adminCall(t, s, "POST", path, bobToken, body, nil); code != 200 {
			t.Fatalf("POST %s %s: HTTP %d", path, body, code)
		}
	}
	c := logon(t, s, "CLIENT1", true)
	answers := 0 // reports and answers of FIX messages the client has had
	accept := func(o order) {
		t.Helper()
		sendOrder(t, c, o)
		expectER(t, c, map[int]string{11: o.id, 150: "0"})
		answers++
	}
	cancelled := func(id, execType string) {
		t.Helper()
		expectER(t, c, map[int]string{11: id, 150: execType})
	}

	// Orders in the opening call, and the operator's open: its uncross
	// trades b1 and s1, two reports no message caused.
	admin("/v1/phase", `{"reason":"early","group":"acme","phase":"pre_open"}`)
	accept(order{id: "b1", side: "1", qty: "5", px: "100.00"})
	accept(order{id: "s1", side: "2", qty: "5", px: "100.00"})
	accept(order{id: "b2", side: "1", qty: "3", px: "99.00"})
	accept(order{id: "b3", side: "1", qty: "2", px: "98.00"})
	admin("/v1/phase", `{"reason":"open now","group":"acme","phase":"open"}`)
	expectER(t, c, map[int]string{11: "b1", 150: "F", 39: "2"})
	expectER(t, c, map[int]string{11: "s1", 150: "F", 39: "2"})

	// An order that trades (its fill and the resting order's are its
	// answers), a cancel, and a mass cancel by the client.
	accept(order{id: "s2", side: "2", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "s2", 150: "F", 39: "2"})
	expectER(t, c, map[int]string{11: "b2", 150: "F", 39: "1"})
	answers += 2
	if err := c.Send("F", fixclient.F(11, "x3"), fixclient.F(41, "b3"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	cancelled("x3", "4")
	answers++
	accept(order{id: "b4", side: "1", qty: "1", px: "97.00"})
	if err := c.Send("q", fixclient.F(11, "mc"), fixclient.F(530, "7"), fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(readWait, "r", map[int]string{11: "mc", 533: "2"}); err != nil {
		t.Fatal(err)
	}
	answers += 3 // b2's and b4's cancels, then the report

	// The operator's mass cancel, a halt and a resume, and the end of day
	// that expires the DAY orders left: no FIX message's.
	accept(order{id: "b5", side: "1", qty: "1", px: "97.00"})
	accept(order{id: "b6", side: "1", qty: "1", px: "96.00"})
	admin("/v1/cancel", `{"reason":"clean up","session":"CLIENT1"}`)
	cancelled("b5", "4")
	cancelled("b6", "4")
	admin("/v1/instruments/ACME/halt", `{"reason":"news"}`)
	admin("/v1/instruments/ACME/resume", `{"reason":"news out"}`)
	accept(order{id: "b7", side: "1", qty: "1", px: "97.00"})
	accept(order{id: "b8", side: "1", qty: "1", px: "96.00"})
	admin("/v1/eod", `{"reason":"day done"}`)
	cancelled("b7", "C")
	cancelled("b8", "C")

	// A status request last (the day's ClOrdIDs are gone: b1 is an unknown
	// order now): once the Latency page's histogram holds its answer, it
	// holds whatever was recorded before it. The metric is recorded before
	// each report is sent, so it holds them all already.
	if err := c.Send("H", fixclient.F(11, "b1"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "b1", 150: "I"})
	answers++
	if got := metricstest.Value(t, scrape(t, s), "fixvenue_order_round_trip_seconds_count"); got != strconv.Itoa(answers) {
		t.Errorf("fixvenue_order_round_trip_seconds_count = %s; want the %d answers to FIX messages", got, answers)
	}
	var n int64
	waitUntil(t, "the status request's answer is in the order-to-ExecutionReport histogram", func() bool {
		n = latencyCount(t, base, "order to ExecutionReport")
		return n >= int64(answers)
	})
	if n != int64(answers) {
		t.Errorf("order to ExecutionReport counts %d reports; want the %d answers to FIX messages", n, answers)
	}
}
