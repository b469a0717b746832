package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/ops"
)

// adminVenueTOML is a small venue without market data and with its admin
// API on an OS-chosen loopback port; what follows it adds keys to [admin].
const adminVenueTOML = `[engine]
orders_max = 1024
clordids_max = 4096
command_ring_slots = 1024
event_ring_slots = 4096
[marketdata]
enabled = false
[admin]
addr = "127.0.0.1:0"
`

// startAdminVenue runs a venue of adminVenueTOML followed by adminTOML
// (formatted with args) in dir and returns it with its admin API's address.
func startAdminVenue(t *testing.T, dir, adminTOML string, args ...any) (*venueProc, string) {
	t.Helper()
	v := startVenue(t, writeVenueConfig(t, dir, adminVenueTOML+adminTOML, args...))
	if v.ready.AdminAddr == "" {
		t.Fatalf("the ready file names no admin address: %+v\n%s", v.ready, v.logs())
	}
	return v, v.ready.AdminAddr
}

// adminTokenTOML is an [[admin.token]] table giving operator the token
// (its SHA-256), with role when role is not empty.
func adminTokenTOML(operator, role, token string) string {
	text := fmt.Sprintf("[[admin.token]]\noperator = %q\n", operator)
	if role != "" {
		text += fmt.Sprintf("role = %q\n", role)
	}
	return text + fmt.Sprintf("sha256 = %q\n", ops.HashToken(token))
}

// cliToken is operator carol's admin token on the venues the admin CLI
// tests start (startCarolVenue).
const cliToken = "cli-test-token-0123456789abcdef"

// startCarolVenue runs startAdminVenue in dir with carol's token
// (cliToken) followed by more TOML, and returns the venue and its admin
// API's address.
func startCarolVenue(t *testing.T, dir, more string) (*venueProc, string) {
	t.Helper()
	return startAdminVenue(t, dir, "%s%s", adminTokenTOML("carol", "", cliToken), more)
}

// runAdminCLI runs `fixvenue admin args…` against the admin API at addr
// with token, and returns its exit code, stdout and stderr.
func runAdminCLI(t *testing.T, addr, token string, args ...string) (int, string, string) {
	t.Helper()
	return runCLI(t, "", []string{"FIXVENUE_ADMIN_ADDR=" + addr, "FIXVENUE_ADMIN_TOKEN=" + token}, append([]string{"admin"}, args...)...)
}

// TestAdminCLI runs `fixvenue admin` against a `fixvenue serve` process:
// every command works, refusals exit 1 with the API's reason, and every
// change is in the journal with its operator and reason.
func TestAdminCLI(t *testing.T) {
	t.Parallel()
	const token = cliToken
	dir := t.TempDir()
	v, addr := startCarolVenue(t, dir, "")
	admin := func(env string, args ...string) (int, string, string) {
		t.Helper()
		return runAdminCLI(t, addr, env, args...)
	}
	for _, c := range []struct {
		args      []string
		code      int
		out, errs string
	}{
		{[]string{"status"}, 0, "ready", ""},
		{[]string{"status"}, 0, "capacity orders_max    0 of 1024 (0.0%)", ""}, // nothing resting yet
		{[]string{"instruments"}, 0, "ACME   1    Open", ""},
		{[]string{"sessions"}, 0, "CLIENT1", ""},
		{[]string{"halt", "ACME", "--reason", "cli halt"}, 0, "SetTradingStatus: done by carol", ""},
		{[]string{"halt", "--reason", "again", "ACME"}, 1, "", "invalid_transition"},
		{[]string{"halt", "NOPE", "--reason", "x"}, 1, "", "unknown instrument"},
		{[]string{"halt", "ACME"}, 2, "", "fixvenue admin halt: option --reason is required"},
		{[]string{"resume", "all", "--reason", "cli resume"}, 0, "done by carol", ""},
		{[]string{"close", "GLOBEX", "--reason", "cli close"}, 0, "done by carol", ""},
		{[]string{"cancel", "--session", "CLIENT1", "--instrument", "ACME", "--reason", "cli cancel"}, 0, "MassCancel: done by carol", ""},
		{[]string{"cancel", "--account", "ACC1", "--reason", "cli cancel account"}, 0, "MassCancel: done", ""},
		{[]string{"cancel", "--reason", "no filter"}, 2, "", "one of the options --session, --account, --instrument is required"},
		{[]string{"cancel-order", "--session", "CLIENT1", "--reason", "x"}, 2, "", "one of the options --order-id, --cl-ord-id is required"},
		{[]string{"cancel-order", "--cl-ord-id", "a", "--reason", "x"}, 2, "", "option --session is required"},
		{[]string{"cancel-order", "--order-id", "1", "--session", "CLIENT1", "--cl-ord-id", "a", "--reason", "x"}, 2, "", "not both"},
		{[]string{"disable", "CLIENT2", "--reason", "cli disable"}, 0, "SessionDisable: done by carol", ""},
		{[]string{"sessions"}, 0, "CLIENT2   false      true", ""},
		{[]string{"enable", "CLIENT2", "--reason", "cli enable"}, 0, "SessionEnable: done by carol", ""},
		{[]string{"logout", "CLIENT3", "--reason", "not on"}, 1, "", "not logged on"},
		{[]string{"band", "ACME", "--ref-price", "101.00", "--band-percent", "5", "--reason", "cli band"}, 0, "SetPriceBand: done by carol", ""},
		{[]string{"instruments"}, 0, "95.95..106.05", ""},
		{[]string{"band", "ACME", "--ref-price", "101.001", "--band-percent", "5", "--reason", "x"}, 1, "", "bad_price"},
		// The first end of day's snapshot has no console state beside it
		// yet: said, not "no snapshot" beside the snapshot it wrote.
		{[]string{"eod", "--reason", "cli eod"}, 0, " orders expired (DAY, at the opening, at the close), snapshot seq 10, nothing archived: snapshot 10 is not one a start would load until", ""},
		{[]string{"phase", "equities", "open", "--reason", "no schedule here"}, 1, "", "unknown_group"},
		{[]string{"cancel-order", "--order-id", "999999", "--reason", "cli no such order"}, 1, "", "unknown_order"},
		{[]string{"explode"}, 2, "", "unknown command"},
	} {
		code, out, errs := admin(token, c.args...)
		if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errs, c.errs) {
			t.Errorf("admin %v: exit %d\nstdout: %s\nstderr: %s\nwant exit %d, stdout with %q, stderr with %q", c.args, code, out, errs, c.code, c.out, c.errs)
		}
	}
	// Cancel one order of a client's: the client hears of it.
	oc := logOn(t, v.fixAddr, "CLIENT1")
	defer oc.Close()
	if err := oc.Send("D", fixclient.F(11, "cli-o1"), fixclient.F(55, "ACME"), fixclient.F(54, "1"), fixclient.F(38, "1"),
		fixclient.F(40, "2"), fixclient.F(44, "96.00"), fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	if _, err := oc.Expect(10*time.Second, "8", map[int]string{11: "cli-o1", 150: "0"}); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := admin(token, "orders", "CLIENT1"); code != 0 || !regexp.MustCompile(`(?m)^\d+ +cli-o1 +ACME +buy +96\.00 +1 +-$`).MatchString(out) ||
		!strings.Contains(out, "CLIENT1: 1 order open") {
		t.Fatalf("orders CLIENT1: %d\n%s%s", code, out, errs)
	}
	for _, bad := range []struct {
		args []string
		code int
		errs string
	}{
		{[]string{"orders", "NOPE"}, 1, "unknown session"},
		{[]string{"orders", "CLIENT1", "--limit", "0"}, 2, "--limit must be from 1 to 1000"},
		{[]string{"orders"}, 2, "one COMPID"},
	} {
		if code, _, errs := admin(token, bad.args...); code != bad.code || !strings.Contains(errs, bad.errs) {
			t.Errorf("admin %v: exit %d %s, want %d with %q", bad.args, code, errs, bad.code, bad.errs)
		}
	}
	if code, out, errs := admin(token, "cancel-order", "--session", "CLIENT1", "--cl-ord-id", "cli-o1", "--reason", "cli cancel order"); code != 0 ||
		!strings.Contains(out, "CancelOrder: done by carol") || !strings.Contains(out, "of CLIENT1 in ACME cancelled") {
		t.Fatalf("cancel-order: %d %s %s", code, out, errs)
	}
	if _, err := oc.Expect(10*time.Second, "8", map[int]string{11: "cli-o1", 150: "4", 58: "cancelled by the venue's operator"}); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := admin(token, "orders", "CLIENT1"); code != 0 || !strings.Contains(out, "CLIENT1: 0 orders open") {
		t.Fatalf("orders CLIENT1 after the cancel: %d\n%s%s", code, out, errs)
	}
	// Log a session out: its client sees the connection close.
	fc := logOn(t, v.fixAddr, "CLIENT3")
	defer fc.Close()
	if code, out, errs := admin(token, "logout", "CLIENT3", "--reason", "cli logout"); code != 0 || !strings.Contains(out, "SessionLogout: done by carol") || strings.Contains(out, "affected") {
		t.Fatalf("logout: %d %s %s", code, out, errs)
	}
	for {
		if _, err := fc.ReadAny(10 * time.Second); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("after logout the connection is not closed: %v", err)
			}
			break
		}
	}
	// The address may be given as a URL.
	if code, out, errs := runAdminCLI(t, "http://"+addr+"/", token, "status"); code != 0 || !strings.Contains(out, "ready") {
		t.Fatalf("--addr as a URL: %d %s %s", code, out, errs)
	}
	// --json prints the API's JSON.
	code, out, _ := admin(token, "instruments", "--json")
	var list []ops.InstrumentInfo
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 3 || list[1].Status != "Closed" {
		t.Fatalf("instruments --json: %d %s", code, out)
	}
	// Without the right token nothing is done.
	for _, tok := range []string{"", "not-the-token-at-all"} {
		if code, _, errs := admin(tok, "halt", "ACME", "--reason", "intruder"); code != 1 || !strings.Contains(errs, "HTTP 401") {
			t.Errorf("token %q: exit %d %s", tok, code, errs)
		}
	}
	code, out, _ = admin("", "hash-token", token)
	if code != 0 || !strings.Contains(out, ops.HashToken(token)) {
		t.Fatalf("hash-token: %d %s", code, out)
	}
	v.kill()

	dump, err := exec.Command(binPath, "journal", "dump", "--config", filepath.Join(dir, "venue.toml")).CombinedOutput()
	if err != nil {
		t.Fatalf("journal dump: %v\n%s", err, dump)
	}
	for _, reason := range []string{"cli halt", "again", "cli resume", "cli close", "cli cancel", "cli cancel account",
		"cli disable", "cli enable", "cli band", "cli logout", "cli eod", "cli no such order", "cli cancel order"} {
		if !strings.Contains(string(dump), fmt.Sprintf(`operator="carol" reason=%q`, reason)) {
			t.Errorf("journal lacks the action %q", reason)
		}
	}
	if strings.Contains(string(dump), "intruder") || strings.Contains(string(dump), "no filter") {
		t.Error("a refused call reached the journal")
	}
}

// TestServeRefusesBadOperationsConfig: a malformed schedule or an admin API
// beyond loopback without TLS stops `fixvenue serve` at start with the key.
func TestServeRefusesBadOperationsConfig(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []struct{ text, want string }{
		{"[schedule]\nenabled = true\ntime_zone = \"Atlantis/Capital\"\nend_of_day = \"17h\"\n[[schedule.group]]\nname = \"g\"\npre_open = \"7h\"\nopen = \"8h\"\nclose = \"16h\"\n", "schedule.time_zone"},
		{"[schedule]\nenabled = true\ntime_zone = \"UTC\"\nend_of_day = \"15h\"\n[[schedule.group]]\nname = \"g\"\npre_open = \"7h\"\nopen = \"8h\"\nclose = \"16h\"\n", "schedule.group[0].close"},
		{"[schedule]\nenabled = true\ntime_zone = \"UTC\"\nend_of_day = \"17h\"\n[[schedule.group]]\nname = \"g\"\npre_open = \"9h\"\nopen = \"8h\"\nclose = \"16h\"\n", "phases overlap"},
		{"[admin]\naddr = \"0.0.0.0:0\"\n", "admin.addr"},
	} {
		path := filepath.Join(dir, fmt.Sprintf("bad%d.toml", i))
		if err := os.WriteFile(path, []byte(fmt.Sprintf("[venue]\ndata_dir = %q\n", dir)+c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(binPath, "serve", "--config", path).CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: %v\n%s\nwant exit 2 naming %q", c.want, err, out, c.want)
		}
	}
}

// TestDisabledSessionIsToldOnceItsCredentialsPass: a client of a session
// an operator disabled is told so in the Logout once its password passed;
// a Logon with a wrong password still hears only "Logon refused", so that
// whoever names a CompID learns nothing of it (gateway/edge/doc.go, "What
// a connection goes through").
func TestDisabledSessionIsToldOnceItsCredentialsPass(t *testing.T) {
	v, addr := startCarolVenue(t, t.TempDir(), `[[session]]
comp_id = "FIRM1"
password = "firm1-secret"
`)
	if code, out, errs := runAdminCLI(t, addr, cliToken, "disable", "FIRM1", "--reason", "off for the day"); code != 0 {
		t.Fatalf("disable: %d %s %s", code, out, errs)
	}
	for _, tc := range []struct{ password, want string }{
		{"firm1-secret", "Session disabled by the venue's operator"},
		{"a-guess", "Logon refused"},
	} {
		c, err := fixclient.Dial(v.fixAddr, "FIRM1", "VENUE")
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.Logon(true, fixclient.F(554, tc.password))
		c.Close()
		if m == nil || m.Type() != "5" || m.Get(58) != tc.want {
			t.Errorf("logon with password %q: %v (%v), want a Logout saying %q", tc.password, m, err, tc.want)
		}
	}
}

// TestAdminCLINamesWhatItCalled: a call no admin API answers (nothing
// listening, another server's page) says which address was called and
// where it came from (--addr, $FIXVENUE_ADMIN_ADDR, the default), and an
// empty --addr, or an empty, "." or ".." name (which the URL's path would
// turn into another endpoint) is a usage error naming it (README,
// "Operating the venue": the CLI speaks the same API). They were "connection
// refused" or "404 page not found (HTTP 404 )" with no address, "http: no
// Host in request URL", and "no such endpoint: POST /v1/instruments/halt".
func TestAdminCLINamesWhatItCalled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Started before the port is closed, which it could otherwise be
	// given: "closed" then answered 404.
	other := httptest.NewServer(http.NotFoundHandler()) // as the metrics listener answers
	defer other.Close()
	otherAddr := strings.TrimPrefix(other.URL, "http://")
	closed := ln.Addr().String()
	ln.Close()
	for _, c := range []struct {
		env  string // FIXVENUE_ADMIN_ADDR
		args []string
		code int
		want string
	}{
		{"", []string{"status", "--addr", closed}, 1, "no admin API answered at " + closed + " (--addr): is the venue running"},
		{closed, []string{"status"}, 1, "no admin API answered at " + closed + " ($FIXVENUE_ADMIN_ADDR)"},
		{"", []string{"status", "--addr", closed, "--tls"}, 1, "over https (without tls_cert_file it serves http: leave out --tls)"},
		{"", []string{"status", "--addr", otherAddr}, 1, otherAddr + ` answered HTTP 404, not as the admin API ("404 page not found")`},
		{otherAddr, []string{"halt", "ACME", "--reason", "r"}, 1, otherAddr + ` answered HTTP 404, not as the admin API`},
		{"", []string{"status", "--addr", ""}, 2, "fixvenue admin status: --addr is empty"},
		{closed, []string{"halt", "", "--reason", "r"}, 2, `fixvenue admin halt: want one SYMBOL (or all), got "", which names none`},
		{closed, []string{"resume", "..", "--reason", "r"}, 2, `got "..", which names none`},
		{closed, []string{"band", ".", "--ref-price", "1", "--band-percent", "5", "--reason", "r"}, 2, `got ".", which names none`},
		{closed, []string{"disable", "", "--reason", "r"}, 2, `want one session CompID, got "", which names none`},
		{closed, []string{"phase", "", "open", "--reason", "r"}, 2, `got "", which names none`},
		{closed, []string{"instrument", "add", "", "--reason", "r"}, 2, "fixvenue admin instrument add: the SYMBOL is empty"},
	} {
		code, out, errs := runCLI(t, "", []string{"FIXVENUE_ADMIN_ADDR=" + c.env}, append([]string{"admin"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("FIXVENUE_ADMIN_ADDR=%s admin %q: exit %d, want %d saying %q\nstdout: %s\nstderr: %s", c.env, c.args, code, c.code, c.want, out, errs)
		}
	}
}

// TestAdminStatusSaysWhatTheStartRefused: `admin status` says what a start
// without terms.json refused on replay (the count by instrument and the
// first orders), as the admin API's status does, and says nothing of it
// after a start that refused nothing.
func TestAdminStatusSaysWhatTheStartRefused(t *testing.T) {
	status := func(body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		code, out, errs := runCLI(t, "", nil, "admin", "status", "--addr", strings.TrimPrefix(srv.URL, "http://"))
		if code != 0 {
			t.Fatalf("admin status: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
		}
		return out
	}
	want := "3 recorded orders under the configured terms (ACME 2, LOTS 1); first: seq 1 CLIENT1 ClOrdID low " +
		"ACME PriceOutOfBand; seq 2 CLIENT1 ClOrdID high ACME PriceOutOfBand"
	if out := status(`{"ready":true,"refused_at_start":{"orders":3,"by_instrument":{"LOTS":1,"ACME":2},` +
		`"first":["seq 1 CLIENT1 ClOrdID low ACME PriceOutOfBand","seq 2 CLIENT1 ClOrdID high ACME PriceOutOfBand"]}}`); !strings.Contains(out, "REFUSED AT START") ||
		!strings.Contains(out, want) {
		t.Fatalf("admin status:\n%s\nwant %q", out, want)
	}
	if out := status(`{"ready":true}`); strings.Contains(out, "REFUSED") {
		t.Fatalf("admin status after a start that refused nothing:\n%s", out)
	}
}

// TestAdminCLIRefusesAnAddrThatIsNotHostPort: an --addr (or
// $FIXVENUE_ADMIN_ADDR) no call could use is a usage error naming it, with
// nothing sent: one with a path or a query was called as part of the
// endpoint (HTTP 404 of /v1/v1/status), one without a port dialled port
// 80, one of another scheme looked its scheme up as a host, and a port out
// of range, each said only that no admin API answered (exit 1). A URL
// without a port is its scheme's, as anywhere.
func TestAdminCLIRefusesAnAddrThatIsNotHostPort(t *testing.T) {
	var calls sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Store(r.URL.String(), true)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, c := range []struct {
		env  string // FIXVENUE_ADMIN_ADDR
		args []string
		want string
	}{
		{"", []string{"status", "--addr", addr + "/v1"}, `--addr "` + addr + `/v1" is not a host:port`},
		{"", []string{"halt", "ACME", "--reason", "r", "--addr", "http://" + addr + "/x"}, `--addr "http://` + addr + `/x" is not a host:port`},
		{"", []string{"status", "--addr", addr + "?q"}, "is not a host:port"},
		{"", []string{"status", "--addr", "localhost"}, `--addr "localhost" is not a host:port, nor http:// or https:// and a host[:port]: missing port in address`},
		{"", []string{"status", "--addr", "127.0.0.1:99999"}, `port "99999" is not a port number`},
		{"", []string{"status", "--addr", "ftp://" + addr}, `--addr "ftp://` + addr + `" is not a host:port`},
		{"127.0.0.1", []string{"sessions"}, `$FIXVENUE_ADMIN_ADDR "127.0.0.1" is not a host:port`},
		{"", []string{"risk", "show", "--addr", addr + "/"}, ""}, // a trailing slash is taken: reaches the server
	} {
		code, out, errs := runCLI(t, "", []string{"FIXVENUE_ADMIN_ADDR=" + c.env}, append([]string{"admin"}, c.args...)...)
		if c.want == "" {
			if code != 1 || !strings.Contains(errs, "answered HTTP 404") {
				t.Errorf("admin %q: exit %d, want 1 from the server's 404\nstdout: %s\nstderr: %s", c.args, code, out, errs)
			}
			continue
		}
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("FIXVENUE_ADMIN_ADDR=%s admin %q: exit %d, want 2 saying %q in one line\nstdout: %s\nstderr: %s", c.env, c.args, code, c.want, out, errs)
		}
	}
	calls.Range(func(k, _ any) bool {
		if k != "/v1/risk" {
			t.Errorf("the server was called at %v, by an address refused as a usage error", k)
		}
		return true
	})
}

// TestAdminRequiredOptionsAreAUsageError: an option a command cannot do
// without (a band's reference price and percent, a new instrument's terms,
// the reason of every change, a cancel's filter, a risk call's subject),
// left out or given blank, is a usage error naming it: exit 2 with the
// command's usage, and nothing sent (README, "Operating the venue"). They
// were sent, and the venue's refusal (or no venue) exited 1. A number
// given, 0 included, is sent: the venue judges the values.
func TestAdminRequiredOptionsAreAUsageError(t *testing.T) {
	var mu sync.Mutex
	var called []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		called = append(called, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error": "refused by the test", "code": "test"}`)
	}))
	defer api.Close()
	addr := strings.TrimPrefix(api.URL, "http://")
	add := []string{"instrument", "add", "NEWCO", "--tick-size", "0.05", "--lot-size", "10", "--min-qty", "10", "--max-qty", "100",
		"--ref-price", "20", "--band-percent", "10", "--reason", "listing"}
	without := func(args []string, names ...string) []string {
		var out []string
		for i := 0; i < len(args); i++ {
			if slices.Contains(names, args[i]) {
				i++
				continue
			}
			out = append(out, args[i])
		}
		return out
	}
	for _, c := range []struct {
		args []string
		want string // stderr's first line
	}{
		{[]string{"admin", "band", "ACME", "--reason", "r"}, "fixvenue admin band: options --ref-price, --band-percent are required: nothing was sent"},
		{[]string{"admin", "band", "ACME", "--ref-price", "101", "--reason", "r"}, "fixvenue admin band: option --band-percent is required: nothing was sent"},
		{[]string{"admin", "band", "ACME", "--band-percent", "5", "--ref-price", "", "--reason", "r"}, "fixvenue admin band: option --ref-price is required"},
		{[]string{"admin", "band", "ACME", "--ref-price", "101", "--band-percent", "5"}, "fixvenue admin band: option --reason is required"},
		{append([]string{"admin"}, without(add, "--tick-size")...), "fixvenue admin instrument add: option --tick-size is required"},
		{append([]string{"admin"}, without(add, "--lot-size", "--max-qty", "--band-percent")...),
			"fixvenue admin instrument add: options --lot-size, --max-qty, --band-percent are required"},
		{append([]string{"admin"}, without(add, "--min-qty", "--ref-price")...), "fixvenue admin instrument add: options --min-qty, --ref-price are required"},
		{[]string{"admin", "instrument", "add", "NEWCO"}, "fixvenue admin instrument add: options --tick-size, --lot-size, --min-qty, --max-qty, --ref-price, --band-percent, --reason are required"},
		{[]string{"admin", "halt", "ACME", "--reason", "  "}, "fixvenue admin halt: option --reason is required"},
		{[]string{"admin", "eod"}, "fixvenue admin eod: option --reason is required"},
		{[]string{"admin", "phase", "equities", "open"}, "fixvenue admin phase: option --reason is required"},
		{[]string{"admin", "disable", "CLIENT1"}, "fixvenue admin disable: option --reason is required"},
		{[]string{"admin", "cancel", "--reason", "r"}, "fixvenue admin cancel: one of the options --session, --account, --instrument is required"},
		{[]string{"admin", "cancel", "--session", "CLIENT1"}, "fixvenue admin cancel: option --reason is required"},
		{[]string{"admin", "risk", "kill", "--reason", "r"}, "fixvenue admin risk kill: one of the options --session, --account is required"},
		{[]string{"risk", "reset", "--account", "A"}, "fixvenue risk reset: option --reason is required"},
		{[]string{"risk", "limits", "--limit", "max_order_qty", "--value", "5", "--reason", "r"}, "fixvenue risk limits: one of the options --session, --account is required"},
	} {
		code, out, errs := runCLI(t, "", []string{"FIXVENUE_ADMIN_ADDR=" + addr}, c.args...)
		first, rest, _ := strings.Cut(errs, "\n")
		if code != 2 || !strings.HasPrefix(first, c.want) || !strings.HasPrefix(rest, "usage: fixvenue ") {
			t.Errorf("%q: exit %d, want 2 with %q and the usage\nstdout: %s\nstderr: %s", c.args, code, c.want, out, errs)
		}
	}
	mu.Lock()
	if len(called) > 0 {
		t.Errorf("a usage error called the admin API: %q", called)
	}
	called = nil
	mu.Unlock()
	// Every option given: the call is made, 0 values and all, and the
	// venue's refusal exits 1.
	for _, args := range [][]string{
		{"admin", "band", "ACME", "--ref-price", "101", "--band-percent", "0", "--reason", "r"},
		append([]string{"admin"}, append(without(add, "--lot-size"), "--lot-size", "0")...),
		{"admin", "cancel", "--instrument", "all", "--reason", "r"},
		{"risk", "kill", "--session", "CLIENT1", "--reason", "r"},
	} {
		if code, out, errs := runCLI(t, "", []string{"FIXVENUE_ADMIN_ADDR=" + addr}, args...); code != 1 || !strings.Contains(errs, "refused by the test") {
			t.Errorf("%q: exit %d, want 1 with the API's refusal\nstdout: %s\nstderr: %s", args, code, out, errs)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"POST /v1/instruments/ACME/band", "POST /v1/instruments", "POST /v1/cancel", "POST /v1/risk/kill"}; !slices.Equal(called, want) {
		t.Errorf("the calls made: %q, want %q", called, want)
	}
}

// TestAdminSessionsMarksDropCopySessions: `admin sessions` says which
// sessions are drop-copy sessions, in a KIND column after the others: one
// read as an order session that was idle (no open orders, no orders per
// second). --json is the API's, drop_copy on a drop-copy session only.
func TestAdminSessionsMarksDropCopySessions(t *testing.T) {
	t.Parallel()
	_, addr := startCarolVenue(t, t.TempDir(), "[[session]]\ncomp_id = \"CLIENT1\"\n[[session]]\ncomp_id = \"DC1\"\nkind = \"dropcopy\"\ncopy_all = true\n")
	code, out, errs := runAdminCLI(t, addr, cliToken, "sessions")
	if code != 0 {
		t.Fatalf("admin sessions: exit %d\n%s%s", code, out, errs)
	}
	kinds := map[string]string{}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if header := strings.Fields(lines[0]); header[len(header)-1] != "KIND" || header[0] != "COMPID" {
		t.Fatalf("admin sessions: header %q, want COMPID first and KIND last", lines[0])
	}
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		kinds[f[0]] = f[len(f)-1]
	}
	if want := map[string]string{"CLIENT1": "order", "DC1": "drop-copy"}; !maps.Equal(kinds, want) {
		t.Errorf("admin sessions: kinds %v, want %v\n%s", kinds, want, out)
	}
	code, out, errs = runAdminCLI(t, addr, cliToken, "sessions", "--json")
	var list []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 {
		t.Fatalf("admin sessions --json: exit %d\n%s%s", code, out, errs)
	}
	for _, s := range list {
		if dc, has := s["drop_copy"]; (s["comp_id"] == "DC1") != has || (has && dc != true) {
			t.Errorf("admin sessions --json: %v, want drop_copy true on DC1 alone", s)
		}
	}
}

// TestAdminSessionsShowOpenOrderBound: `admin sessions` gives each order
// session's open orders against its bound (open_orders_max), in the column
// where the open orders were, so that an operator sees a session near
// having its orders refused: the default bound, a quarter of
// engine.orders_max; "off" for a session with none; "-" for a drop-copy
// session, which enters no orders.
func TestAdminSessionsShowOpenOrderBound(t *testing.T) {
	t.Parallel()
	v, addr := startCarolVenue(t, t.TempDir(), `[session_defaults]
cancel_on_disconnect = false
[[session]]
comp_id = "CLIENT1"
[[session]]
comp_id = "CLIENT2"
open_orders_max = 0
[[session]]
comp_id = "DC1"
kind = "dropcopy"
copy_all = true
`)
	c := logOn(t, v.fixAddr, "CLIENT1")
	if err := c.Send("D", fixclient.F(11, "b1"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "10"), fixclient.F(40, "2"), fixclient.F(44, "99.00"),
		fixclient.F(59, "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(10*time.Second, "8", map[int]string{11: "b1", 150: "0"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"CLIENT1": "1/256", "CLIENT2": "0/off", "DC1": "-"}
	// The open orders are the admin API's monitor's, an event-ring
	// consumer apart from the gateway that answered: it may see the order
	// a little later.
	eventually(t, "admin sessions shows the open orders against their bound", func() error {
		code, out, errs := runAdminCLI(t, addr, cliToken, "sessions")
		if code != 0 {
			return fmt.Errorf("exit %d\n%s%s", code, out, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		col := strings.Index(lines[0], "OPEN/BOUND")
		if col < 0 {
			return fmt.Errorf("no OPEN/BOUND column:\n%s", out)
		}
		got := map[string]string{}
		for _, line := range lines[1:] {
			got[strings.Fields(line)[0]] = strings.Fields(line[col:])[0]
		}
		if !maps.Equal(got, want) {
			return fmt.Errorf("OPEN/BOUND %v, want %v\n%s", got, want, out)
		}
		return nil
	})
}

// TestAdminJSONIsJSONOrNothing: with --json, standard output carries the
// API's JSON (an answer, or a refusal's {"error", "code"}) or nothing: an
// answer that is not the API's (another server's "404 page not found") was
// copied there as if it were.
func TestAdminJSONIsJSONOrNothing(t *testing.T) {
	other := httptest.NewServer(http.NotFoundHandler()) // as the metrics listener answers
	defer other.Close()
	for _, args := range [][]string{{"status", "--json"}, {"halt", "ACME", "--reason", "r", "--json"}} {
		code, out, errs := runAdminCLI(t, strings.TrimPrefix(other.URL, "http://"), cliToken, args...)
		if code != 1 || out != "" || !strings.Contains(errs, "not as the admin API") {
			t.Errorf("admin %q against another server: exit %d, stdout %q, want 1 and nothing on stdout\nstderr: %s", args, code, out, errs)
		}
	}
}

// TestAdminRepeatedOptionsAreRefused: an admin or risk option given twice
// is a usage error naming it, before anything is called, as the API
// refuses a JSON name given twice (README, "Operating the venue"); the flag
// package kept the last value and dropped the first without a word (two
// --session to kill were one, two --reason one reason).
func TestAdminRepeatedOptionsAreRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String() // nothing is to be called
	ln.Close()
	for _, c := range []struct {
		args []string
		name string
	}{
		{[]string{"admin", "halt", "ACME", "--reason", "a", "--reason", "b"}, "admin halt: option --reason"},
		{[]string{"admin", "risk", "kill", "--session", "CLIENT1", "--session=CLIENT2", "--reason", "r"}, "admin risk: option --session"},
		{[]string{"risk", "limits", "-value", "5", "--limit", "max_order_qty", "--value", "6", "--session", "C", "--reason", "r"}, "risk: option --value"},
		{[]string{"admin", "cancel", "--account", "A", "--reason", "r", "--account", "B"}, "admin cancel: option --account"},
		{[]string{"admin", "status", "--json", "--json"}, "admin status: option --json"},
		{[]string{"admin", "status", "--addr", closed, "--addr", closed}, "admin status: option --addr"},
	} {
		code, out, errs := runCLI(t, "", []string{"FIXVENUE_ADMIN_ADDR=" + closed}, c.args...)
		if code != 2 || !strings.Contains(errs, "fixvenue "+c.name+" is given more than once") || strings.Contains(errs, "no admin API answered") {
			t.Errorf("%q: exit %d, want 2 saying %q\nstdout: %s\nstderr: %s", c.args, code, c.name, out, errs)
		}
	}
	// A value that begins with "-" is a value, not an option.
	code, _, errs := runCLI(t, "", []string{"FIXVENUE_ADMIN_ADDR=" + closed}, "admin", "band", "ACME", "--band-percent", "-5", "--ref-price", "1", "--reason", "--reason")
	if code != 1 || !strings.Contains(errs, "no admin API answered") {
		t.Errorf("admin band with --reason \"--reason\": exit %d, want 1 (no admin API)\n%s", code, errs)
	}
}

// TestAdminCLISaysWhatTLSWants: an admin API that serves https called over
// http says to give --tls, and one whose certificate the client does not
// trust says to give --ca-file: they were "Client sent an HTTP request to
// an HTTPS server. (HTTP 400 )", and the certificate error followed by "no
// admin API answered", when one had.
func TestAdminCLISaysWhatTLSWants(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler()) // its certificate is one no CA of the system signed
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "https://")
	for _, c := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"status"}, "it serves https (admin.tls_cert_file): give --tls (and --ca-file F), or an https:// --addr", ""},
		{[]string{"status", "--tls"}, "the certificate of " + addr + " ($FIXVENUE_ADMIN_ADDR) is not trusted: --ca-file F names the CA", "no admin API answered"},
	} {
		code, out, errs := runAdminCLI(t, addr, "", c.args...)
		if code != 1 || !strings.Contains(errs, c.want) || (c.not != "" && strings.Contains(errs, c.not)) {
			t.Errorf("admin %q against an https server: exit %d, want 1 saying %q\nstdout: %s\nstderr: %s", c.args, code, c.want, out, errs)
		}
	}
}

// TestAdminCLITimeoutSaysSo: a call the API does not answer within
// --timeout says so, and for a change that it may still be applied: the
// error said "no admin API answered … is the venue running", of a venue
// that was, and whose change may have been journaled.
func TestAdminCLITimeoutSaysSo(t *testing.T) {
	t.Parallel()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Answers nothing until the client gives up: the body read, so that
		// the server sees the connection close (and a bound besides).
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer slow.Close()
	addr := strings.TrimPrefix(slow.URL, "http://")
	for _, c := range []struct {
		args     []string
		want     string
		mayApply bool
	}{
		{[]string{"status", "--timeout", "300ms"}, "no answer from " + addr + " ($FIXVENUE_ADMIN_ADDR) within --timeout 300ms", false},
		{[]string{"halt", "ACME", "--reason", "r", "--timeout", "300ms"}, "no answer from " + addr + " ($FIXVENUE_ADMIN_ADDR) within --timeout 300ms", true},
	} {
		code, out, errs := runAdminCLI(t, addr, cliToken, c.args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Contains(errs, "no admin API answered") ||
			strings.Contains(errs, "the change may still be applied") != c.mayApply {
			t.Errorf("admin %q against an API that does not answer: exit %d, want 1 saying %q (change may apply: %v)\nstdout: %s\nstderr: %s",
				c.args, code, c.want, c.mayApply, out, errs)
		}
	}
}

// TestHashTokenRefusesATokenNoCallCarries: hash-token refuses a token with
// a space at either end or a character beyond printable ASCII, which no
// call presents as typed (an HTTP header loses the spaces at its ends; a
// browser sends a character beyond ASCII as another byte than the CLI
// does), rather than print a hash that refuses the token as unknown: a
// venue configured with the hash of a token with a leading space refuses
// that token.
func TestHashTokenRefusesATokenNoCallCarries(t *testing.T) {
	for _, token := range []string{" leading-space-0123456789", "trailing-space-0123456789 ", "tab\tinside-0123456789",
		"caf\u00e9-token-0123456789"} {
		code, out, errs := runCLI(t, "", nil, "admin", "hash-token", token)
		if code != 2 || out != "" || !strings.Contains(errs, "printable ASCII without a space at either end") {
			t.Errorf("hash-token %q: exit %d, stdout %q, stderr %q; want exit 2 naming what a token may hold", token, code, out, errs)
		}
	}
	const spaced = " spaced-token-0123456789"
	_, addr := startAdminVenue(t, t.TempDir(), "%s", adminTokenTOML("dave", "", spaced))
	if code, _, errs := runAdminCLI(t, addr, spaced, "halt", "ACME", "--reason", "spaced"); code != 1 || !strings.Contains(errs, "unknown token") {
		t.Fatalf("the token %q, configured by its hash: exit %d, %s; want it refused as unknown", spaced, code, errs)
	}
}

// TestAdminCLITokenAHeaderCannotCarry: a token holding a control character
// (the carriage return of a file written on Windows, a line end) is named
// as the problem, with where it came from, and nothing is sent; it was
// reported as a venue that did not answer, while the venue ran.
func TestAdminCLITokenAHeaderCannotCarry(t *testing.T) {
	_, addr := startCarolVenue(t, t.TempDir(), "")
	for _, c := range []struct {
		env, flag, from string
	}{
		{env: cliToken + "\r", from: "$FIXVENUE_ADMIN_TOKEN"},
		{flag: cliToken + "\n", from: "--token"},
	} {
		args := []string{"halt", "ACME", "--reason", "a token from a file"}
		if c.flag != "" {
			args = append(args, "--token", c.flag)
		}
		code, out, errs := runAdminCLI(t, addr, c.env, args...)
		if code != 2 || out != "" || !strings.Contains(errs, "the token ("+c.from+") holds a control character") ||
			!strings.Contains(errs, "nothing was sent") || strings.Contains(errs, "no admin API answered") {
			t.Errorf("token from %s: exit %d, stdout %q, stderr %q; want exit 2 naming the token", c.from, code, out, errs)
		}
	}
	if code, out, errs := runAdminCLI(t, addr, cliToken, "instruments"); code != 0 || !strings.Contains(out, "ACME") || !strings.Contains(out, "Open") {
		t.Fatalf("nothing was halted: exit %d, %s %s", code, out, errs)
	}
}

// TestBandSetSurvivesARestartInTheAPI: after a restart, GET /v1/instruments
// names the reference price and band percent an operator set, as before
// it and as the console's market row names that reference; it left both
// out as unknown, though the band in force is centred on that price.
func TestBandSetSurvivesARestartInTheAPI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v, addr := startCarolVenue(t, dir, "")
	if code, _, errs := runAdminCLI(t, addr, cliToken, "band", "ACME", "--ref-price", "95.00", "--band-percent", "5", "--reason", "news"); code != 0 {
		t.Fatalf("band: exit %d, %s", code, errs)
	}
	before := apiInstrument(t, "http://"+addr, "ACME")
	if before.RefPrice != "95.00" || before.BandPercent != 5 {
		t.Fatalf("GET /v1/instruments before the restart: %+v", before)
	}
	v.stop(t)
	v = startVenue(t, filepath.Join(dir, "venue.toml"))
	base := "http://" + v.ready.AdminAddr
	after := apiInstrument(t, base, "ACME")
	if after.RefPrice != before.RefPrice || after.BandPercent != before.BandPercent || after.BandLow != before.BandLow ||
		after.BandHigh != before.BandHigh {
		t.Errorf("GET /v1/instruments after the restart: %+v; before it: %+v", after, before)
	}
	if row := marketRowOf(t, base, "ACME"); row.Ref != "95.00" || row.RefLabel != "reference price" {
		t.Errorf("the console's market row: reference %q (%s)", row.Ref, row.RefLabel)
	}
}

// TestServeRefusesThePublicDemoTokenBeyondLoopback: the cluster demo's
// operator token is published (README), so a node whose admin API or
// status listener is reachable beyond loopback refuses to start with it,
// naming the token's entry and the listener, before it binds anything.
func TestServeRefusesThePublicDemoTokenBeyondLoopback(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	demo, err := os.ReadFile("../../deploy/cluster/node1.toml")
	if err != nil {
		t.Fatal(err)
	}
	// The demo's node 1 with its status listener on every interface; its
	// other ports are the system's, in case it starts.
	node1 := regexp.MustCompile(`127\.0\.0\.1:9[0-9]{3}`).ReplaceAllString(string(demo), "127.0.0.1:0")
	node1 = strings.Replace(node1, `data_dir = "./data/cluster/node1"`, fmt.Sprintf("data_dir = %q", filepath.Join(dir, "node1")), 1)
	node1 = strings.Replace(node1, "[[cluster.peer]]\nid = 1\nraft_addr = \"127.0.0.1:0\"\nfix_addr = \"127.0.0.1:0\"\nstatus_addr = \"127.0.0.1:0\"",
		"[[cluster.peer]]\nid = 1\nraft_addr = \"127.0.0.1:0\"\nfix_addr = \"127.0.0.1:0\"\nstatus_addr = \"0.0.0.0:0\"", 1)
	if !strings.Contains(node1, `status_addr = "0.0.0.0:0"`) {
		t.Fatal("node 1's status_addr is not where the test expects it in deploy/cluster/node1.toml")
	}
	// A single venue whose admin API listens beyond loopback (with TLS,
	// which the configuration asks for there) holding the demo token.
	single := fmt.Sprintf("[venue]\ndata_dir = %q\n[fix]\naddr = \"127.0.0.1:0\"\n[metrics]\naddr = \"\"\n[marketdata]\nenabled = false\n"+
		"[admin]\naddr = \"0.0.0.0:0\"\ntls_cert_file = \"admin.crt\"\ntls_key_file = \"admin.key\"\n"+
		"[[admin.token]]\noperator = \"demo\"\nsha256 = %q\n", filepath.Join(dir, "single"), ops.HashToken("cluster-demo-operator-token"))
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"cluster node", node1, []string{`admin.token[0].sha256: is the public demo token "cluster-demo-operator-token"`, `cluster.peer[0].status_addr "0.0.0.0:0"`}},
		{"single venue", single, []string{`admin.token[0].sha256: is the public demo token "cluster-demo-operator-token"`, `admin.addr "0.0.0.0:0"`}},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".toml")
		if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		// Bounded: a node that starts (it should not) waits for its peers.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := exec.CommandContext(ctx, binPath, "serve", "--config", path).CombinedOutput()
		cancel()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 {
			t.Errorf("%s: %v, want exit 2\n%s", c.name, err, out)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, w, out)
			}
		}
	}
}

// TestAdminCLIChangeWhoseConnectionIsLost: a change (POST) whose
// connection the venue closes or resets after taking the request, as a
// venue or a cluster's leader killed while it handles the call does, may
// have been applied: the CLI says so, rather than that no admin API
// answered, which tells the operator that nothing changed.
func TestAdminCLIChangeWhoseConnectionIsLost(t *testing.T) {
	for _, reset := range []bool{false, true} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err == nil {
					io.Copy(io.Discard, req.Body)
				}
				if reset {
					c.(*net.TCPConn).SetLinger(0)
				}
				c.Close()
			}
		}()
		code, out, errs := runCLI(t, "", []string{"FIXVENUE_ADMIN_TOKEN=t"}, "admin", "halt", "ACME", "--reason", "r", "--addr", ln.Addr().String())
		ln.Close()
		if code != 1 || !strings.Contains(errs, "closed the connection without an answer") ||
			!strings.Contains(errs, "the change may still be applied") || strings.Contains(errs, "no admin API answered") {
			t.Errorf("reset %v: admin halt: exit %d, want 1 saying the change may be applied\nstdout: %s\nstderr: %s", reset, code, out, errs)
		}
	}
}
