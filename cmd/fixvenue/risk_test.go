package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/admintest"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/natstest"
	"github.com/fixvenue/fixvenue/ops"
)

// riskToken is the admin token of operator rita on the venues the risk
// tests start.
const riskToken = "risk-test-token-0123456789abcdef"

// fundTOML configures the account FUND with a credit limit of 1,000,000.
const fundTOML = "[[risk.account]]\nname = \"FUND\"\ncredit_limit = 1000000\n"

// quietJournalTOML takes no snapshots: with no reports or schedule, only
// the calls a test makes are journaled, so it can tell their seqs.
const quietJournalTOML = "[journal]\nsnapshot_interval = \"0s\"\n"

// startRiskVenue starts a venue without market data whose admin API, on a
// loopback port, takes riskToken for operator rita, with sessions CLIENT1
// and CLIENT2 of max_order_qty 100. risk is more keys of its [risk] table
// (report_interval) and more the tables after it (an account, another
// token). It returns the venue and its admin API's address.
func startRiskVenue(t *testing.T, risk, more string) (*venueProc, string) {
	t.Helper()
	v := startVenue(t, writeVenueConfig(t, t.TempDir(), "[marketdata]\nenabled = false\n[admin]\naddr = \"127.0.0.1:0\"\n%s"+
		"[[session]]\ncomp_id = \"CLIENT%%d\"\nrange = [1, 2]\n[risk]\n%s[risk.sessions]\nmax_order_qty = 100\n%s",
		adminTokenTOML("rita", "", riskToken), risk, more))
	if v.ready.AdminAddr == "" {
		t.Fatalf("no admin API address in the ready file:\n%s", v.logs())
	}
	return v, v.ready.AdminAddr
}

// runWithAdmin runs `fixvenue args…` against the admin API at addr with
// token tok (FIXVENUE_ADMIN_ADDR and FIXVENUE_ADMIN_TOKEN) and returns its
// combined output and exit code.
func runWithAdmin(t *testing.T, addr, tok string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), "FIXVENUE_ADMIN_ADDR="+addr, "FIXVENUE_ADMIN_TOKEN="+tok)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// TestAdminRiskDrivesARunningVenue runs `fixvenue admin risk` (and its
// older name `fixvenue risk`) as separate processes against a running
// `fixvenue serve`: a kill cancels the FIX client's resting order and its
// next order is refused, bad input gets a 4xx JSON reason and changes
// nothing, a read token may look but not kill, a reset lets the session
// trade again and a changed limit is enforced and shown.
func TestAdminRiskDrivesARunningVenue(t *testing.T) {
	t.Parallel()
	const token, readToken = riskToken, "risk-read-token-0123456789abcdef"
	v, addr := startRiskVenue(t, "report_interval = \"200ms\"\n", fundTOML+adminTokenTOML("viewer", "read", readToken))
	c := logOn(t, v.fixAddr, "CLIENT1")
	order := func(id string) {
		t.Helper()
		sendLimit(t, c, id, "1", "99.00", 5, "0")
	}
	run := func(name, tok string, args ...string) (string, int) {
		t.Helper()
		return runWithAdmin(t, addr, tok, append([]string{name}, args...)...)
	}
	admin := func(tok string, args ...string) (string, int) {
		t.Helper()
		return run("admin", tok, append([]string{"risk"}, args...)...)
	}

	order("o1")
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o1", 150: "0"}); err != nil {
		t.Fatal(err)
	}
	if out, code := admin(token, "kill", "--session", "CLIENT1", "--limit", "credit_limit", "--value", "5", "--reason", "k"); code != 2 ||
		!strings.Contains(out, "not --limit, --value or --instrument") {
		t.Fatalf("kill with a limit's options: exit %d: %s", code, out)
	}
	if out, code := admin(readToken, "kill", "--session", "CLIENT1", "--reason", "look only"); code != 1 || !strings.Contains(out, "403") {
		t.Fatalf("kill with a read token: exit %d: %s", code, out)
	}
	if out, code := admin(token, "kill", "--session", "CLIENT1", "--reason", "runaway algo"); code != 0 ||
		!strings.Contains(out, "Kill: Applied by rita") || !strings.Contains(out, "(journal seq ") || !strings.Contains(out, ", 1 order cancelled)") {
		t.Fatalf("kill: exit %d: %s", code, out)
	}
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o1", 150: "4"}); err != nil {
		t.Fatal(err)
	}
	order("o2")
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o2", 150: "8", 103: "3", 58: "kill switch on for session:CLIENT1"}); err != nil {
		t.Fatal(err)
	}

	// Bad input over HTTP: a 4xx with a JSON reason, and nothing journaled.
	post := func(path, tok, body string) (int, map[string]any) {
		t.Helper()
		a := admintest.Call(t, http.MethodPost, "http://"+addr+path, tok, body)
		var out map[string]any
		if err := json.Unmarshal(a.Body, &out); err != nil {
			t.Fatalf("%s: not JSON: %s", path, a.Body)
		}
		return a.Status, out
	}
	for _, tc := range []struct {
		path, body string
		status     int
		code       string
	}{
		{"/v1/risk/limit", `{"reason":"r","account":"NOBODY","limit":"credit_limit","value":5}`, 404, "unknown_account"},
		{"/v1/risk/limit", `{"reason":"r","account":"FUND","limit":"credit_limit","value":-5}`, 400, "bad_value"},
		{"/v1/risk/limit", `{"reason":"r","account":"FUND","limit":"credit_limit","value":0}`, 400, "bad_value"},
		{"/v1/risk/limit", `{"reason":"r","account":"FUND","limit":"credit_limit","value":4611686018427387903}`, 400, "bad_json"},
		{"/v1/risk/limit", `{"reason":"r","account":"FUND","limit":"nope","value":5}`, 400, "unknown_limit"},
		{"/v1/risk/limit", `{"reason":"r","account":"FUND","limit":"max_position","value":5,"instrument":"NOPE"}`, 404, "unknown_instrument"},
		{"/v1/risk/kill", `{"reason":"r","session":"NOBODY"}`, 404, "unknown_session"},
		{"/v1/risk/kill", `{"reason":"r","session":"CLIENT1","account":"FUND"}`, 400, "bad_subject"},
		{"/v1/risk/kill", `{"session":"CLIENT1"}`, 400, "no_reason"},
		{"/v1/risk/kill", `{"reason":"r","session":"CLIENT1","extra":1}`, 400, "bad_json"},
		{"/v1/risk/explode", `{"reason":"r","session":"CLIENT1"}`, 404, "unknown_action"},
	} {
		status, body := post(tc.path, token, tc.body)
		if status != tc.status || body["code"] != tc.code || body["error"] == "" {
			t.Errorf("POST %s %s: %d %v, want %d %s", tc.path, tc.body, status, body, tc.status, tc.code)
		}
	}

	if out, code := run("risk", token, "reset", "--session", "CLIENT1", "--reason", "fixed"); code != 0 || !strings.Contains(out, "Reset: Applied") {
		t.Fatalf("reset (fixvenue risk): exit %d: %s", code, out)
	}
	// Under its older name the command names itself in its errors, those
	// the API sends and its own, not "fixvenue admin".
	for _, args := range [][]string{{"reset", "--session", "CLIENT1", "--reason", "again"},
		{"kill", "--session", "CLIENT1", "--limit", "credit_limit", "--value", "5", "--reason", "k"}} {
		if out, code := run("risk", token, args...); code == 0 || !strings.HasPrefix(out, "fixvenue risk") || strings.Contains(out, "fixvenue admin") {
			t.Errorf("fixvenue risk %v: exit %d: %s", args, code, out)
		}
	}
	if out, code := admin(token, "limits", "--session", "CLIENT1", "--limit", "max_order_qty", "--value", "4", "--reason", "tighter"); code != 0 {
		t.Fatalf("limit: exit %d: %s", code, out)
	}
	order("o3")
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o3", 150: "8", 103: "3",
		58: "order exceeds limit: max order quantity of session:CLIENT1 in ACME: 5 > 4"}); err != nil {
		t.Fatal(err)
	}
	// The view: anyone on loopback may read it; the changed limit and the
	// reset kill switch show, and figures arrive with the reports (for the
	// subjects the matcher reports: credit, position or open-order limits,
	// open orders, or a kill switch on).
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, code := run("admin", "", "risk", "show", "--json")
		var list []ops.RiskSubject
		if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 3 {
			t.Fatalf("show: exit %d: %s", code, out)
		}
		s := list[0]
		if s.Name == "CLIENT1" && !s.Killed && s.Limits["max_order_qty"] == 4 && list[1].Limits["max_order_qty"] == 100 &&
			list[2].Name == "FUND" && list[2].Limits["credit_limit"] == 1000000 && list[2].Figures != nil && list[2].Figures.CreditLimit == 1000000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("show never gave the changed limit and figures: %s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The table lists each subject's limits as sorted name=value pairs.
	out, code := run("risk", "", "show")
	if code != 0 || strings.Contains(out, "map[") || !strings.Contains(out, " max_order_qty=4\n") ||
		!strings.Contains(out, " credit_limit=1000000\n") {
		t.Fatalf("show: exit %d: %s", code, out)
	}
	// --value none removes the limit: the next order is not held to it.
	if out, code := admin(token, "limits", "--session", "CLIENT1", "--limit", "max_order_qty", "--value", "lots", "--reason", "r"); code != 2 ||
		!strings.Contains(out, `"lots" is not an integer or none`) {
		t.Fatalf("limit lots: exit %d: %s", code, out)
	}
	if out, code := admin(token, "limits", "--session", "CLIENT1", "--limit", "max_order_qty", "--value", "none", "--reason", "lifted"); code != 0 ||
		!strings.Contains(out, "SetLimit: Applied by rita") || !strings.Contains(out, "max_order_qty = none") {
		t.Fatalf("limit none: exit %d: %s", code, out)
	}
	order("o4")
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o4", 150: "0"}); err != nil {
		t.Fatal(err)
	}
	if out, code := admin(token, "limits", "--session", "CLIENT1", "--limit", "max_order_qty", "--value", "none", "--reason", "again"); code != 1 ||
		!strings.Contains(out, "max_order_qty of session:CLIENT1 is none (nothing changed)") {
		t.Fatalf("limit none again: exit %d: %s", code, out)
	}
}

// TestRiskShowDropsFiguresNoLongerReported: a report leaves out a subject
// with nothing open, no limit of its figures and its kill switch off, so
// the figures `risk show` had for it from an earlier report (an order
// since cancelled) must go, not stay for good beside a sessions view
// saying it has no open order (README, "Risk limits").
func TestRiskShowDropsFiguresNoLongerReported(t *testing.T) {
	t.Parallel()
	v, addr := startRiskVenue(t, "report_interval = \"100ms\"\n", "")
	c := logOn(t, v.fixAddr, "CLIENT1")
	sendLimit(t, c, "o1", "1", "99.00", 5, "0")
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o1", 150: "0"}); err != nil {
		t.Fatal(err)
	}
	// The open orders CLIENT1's figures show, as GET /v1/risk has them.
	openOrders := func() (int64, bool) {
		t.Helper()
		var list []ops.RiskSubject
		if err := json.Unmarshal(admintest.Call(t, http.MethodGet, "http://"+addr+"/v1/risk", "", "").Body, &list); err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.Scope == "session" && s.Name == "CLIENT1" && s.Figures != nil {
				return s.Figures.OpenOrders, true
			}
		}
		return 0, false
	}
	until := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !done(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 5 s\n%s", what, v.logs())
			}
		}
	}
	until("the resting order in CLIENT1's figures", func() bool { n, ok := openOrders(); return ok && n == 1 })
	if a := admintest.Call(t, http.MethodPost, "http://"+addr+"/v1/cancel", riskToken, `{"reason":"clean","session":"CLIENT1"}`); a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o1", 150: "4"}); err != nil {
		t.Fatal(err)
	}
	until("CLIENT1's figures without the cancelled order", func() bool { n, ok := openOrders(); return !ok || n == 0 })
}

// TestRiskKillAndResetThatChangeNothingAreRefused: a kill of a session or
// account whose kill switch is on, or a reset of one whose switch is off,
// is answered 409 naming the state, and nothing is journaled: the next
// call that does change something takes the next journal seq (README,
// "Risk limits"; a session disabled twice is answered the same way).
func TestRiskKillAndResetThatChangeNothingAreRefused(t *testing.T) {
	_, addr := startRiskVenue(t, "report_interval = \"1h\"\n", fundTOML+quietJournalTOML)
	call := func(action, subject string, want int) (seq uint64, body string) {
		t.Helper()
		a := admintest.Call(t, http.MethodPost, "http://"+addr+"/v1/risk/"+action, riskToken, `{"reason":"r",`+subject+`}`)
		var out struct {
			Seq  uint64
			Code string
		}
		if a.Status != want || json.Unmarshal(a.Body, &out) != nil {
			t.Fatalf("%s %s: %d %s, want %d", action, subject, a.Status, a.Body, want)
		}
		return out.Seq, string(a.Body)
	}
	for _, subj := range []struct{ json, name string }{{`"session":"CLIENT1"`, "session:CLIENT1"}, {`"account":"FUND"`, "account:FUND"}} {
		_, body := call("reset", subj.json, http.StatusConflict)
		if want := "the kill switch of " + subj.name + " is off (nothing changed)"; !strings.Contains(body, want) ||
			!strings.Contains(body, `"invalid_transition"`) {
			t.Fatalf("reset of a switch that is off: %s, want %q", body, want)
		}
		kill, _ := call("kill", subj.json, http.StatusOK)
		_, body = call("kill", subj.json, http.StatusConflict)
		if want := "the kill switch of " + subj.name + " is already on (nothing changed)"; !strings.Contains(body, want) ||
			!strings.Contains(body, `"invalid_transition"`) {
			t.Fatalf("kill of a killed subject: %s, want %q", body, want)
		}
		if reset, _ := call("reset", subj.json, http.StatusOK); reset != kill+1 {
			t.Fatalf("reset after a refused kill journaled as seq %d, the kill as %d: the refused kill was journaled", reset, kill)
		}
	}
	// The CLI says the same, with the HTTP status.
	out, code := runWithAdmin(t, addr, riskToken, "admin", "risk", "reset", "--session", "CLIENT1", "--reason", "again")
	if code == 0 || !strings.Contains(out, "the kill switch of session:CLIENT1 is off (nothing changed) (HTTP 409 invalid_transition)") {
		t.Fatalf("risk reset twice: exit %d: %s", code, out)
	}
}

// TestRiskLimitTheFiguresPassNamesThem: a limit the subject's figures
// already pass is refused with the figure and the limit asked, in the
// error, in JSON (current, value) and from the CLI (README "Risk limits"),
// so the operator sees how far the figures are from it.
func TestRiskLimitTheFiguresPassNamesThem(t *testing.T) {
	t.Parallel()
	v, addr := startRiskVenue(t, "", fundTOML)
	c := logOn(t, v.fixAddr, "CLIENT1")
	for _, id := range []string{"b1", "b2"} {
		if err := c.Send("D", fixclient.F(11, id), fixclient.F(1, "FUND"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "10"), fixclient.F(40, "2"), fixclient.F(44, "99.00"),
			fixclient.F(59, "0")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Expect(5*time.Second, "8", map[int]string{11: id, 150: "0"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		body, want     string
		current, value int64
	}{
		{`"limit":"credit_limit","value":5`, "account:FUND credit used (net bought today + open buys, price ticks × quantity) is 198000, " +
			"so a credit_limit of 5 would be breached at once (nothing changed)", 198000, 5},
		{`"limit":"max_position","value":15,"instrument":"ACME"`, "account:FUND worst-case position in ACME is 20, " +
			"so a max_position of 15 would be breached at once (nothing changed)", 20, 15},
		{`"limit":"max_open_orders","value":1`, "account:FUND open orders is 2, so a max_open_orders of 1", 2, 1},
	} {
		a := admintest.Call(t, http.MethodPost, "http://"+addr+"/v1/risk/limit", riskToken, `{"reason":"r","account":"FUND",`+tc.body+`}`)
		var out struct {
			Error, Code    string
			Current, Value int64
		}
		if a.Status != http.StatusConflict || json.Unmarshal(a.Body, &out) != nil || !strings.Contains(out.Error, tc.want) ||
			out.Current != tc.current || out.Value != tc.value {
			t.Errorf("limit %s: %d %s, want 409 with %q, current %d, value %d", tc.body, a.Status, a.Body, tc.want, tc.current, tc.value)
		}
	}
	if out, code := runWithAdmin(t, addr, riskToken, "admin", "risk", "limits", "--account", "FUND", "--limit", "credit_limit", "--value", "5",
		"--reason", "r"); code == 0 || !strings.Contains(out, "is 198000, so a credit_limit of 5 would be breached") {
		t.Fatalf("risk limits the figures pass: exit %d: %s", code, out)
	}
}

// TestRiskCLIShowOneSubjectAndLimitsArguments: `risk show --account A`
// shows that subject only (it showed every subject, the option ignored),
// an unknown one is an error naming those listed, options show does not
// take are refused as kill's are, `risk limits` without --value is a
// usage error (the API called it "value 0") while --value 0 is sent for
// the venue to refuse, and a limit change says what
// it set rather than "0 orders cancelled".
func TestRiskCLIShowOneSubjectAndLimitsArguments(t *testing.T) {
	_, addr := startRiskVenue(t, "", fundTOML)
	run := func(args ...string) (string, int) {
		t.Helper()
		return runWithAdmin(t, addr, riskToken, append([]string{"admin", "risk"}, args...)...)
	}
	if out, code := run("show", "--account", "FUND"); code != 0 || !strings.Contains(out, "account:FUND ") || strings.Contains(out, "CLIENT") {
		t.Fatalf("show --account FUND: exit %d:\n%s", code, out)
	}
	out, code := run("show", "--session", "CLIENT2", "--json")
	var one ops.RiskSubject
	if code != 0 || json.Unmarshal([]byte(out), &one) != nil || one.Name != "CLIENT2" || one.Limits["max_order_qty"] != 100 {
		t.Fatalf("show --session CLIENT2 --json: exit %d:\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"show", "--account", "NOPE"}, 1, `no account "NOPE": the venue lists FUND`},
		{[]string{"show", "--limit", "credit_limit"}, 2, "not --limit, --value, --instrument or --reason"},
		{[]string{"show", "--session", "CLIENT1", "--account", "FUND"}, 2, "not both"},
		{[]string{"limits", "--account", "FUND", "--limit", "credit_limit", "--reason", "r"}, 2, "takes --limit NAME and --value N"},
		// A value given, 0 included, is the venue's to judge (README,
		// "Operating the venue"): 0 was taken for --value left out.
		{[]string{"limits", "--account", "FUND", "--limit", "credit_limit", "--value", "0", "--reason", "r"}, 1, "value 0 must be a positive integer"},
		{[]string{"kill", "--account", "FUND", "--value", "0", "--reason", "r"}, 2, "not --limit, --value or --instrument"},
		{[]string{"show", "--value", "0"}, 2, "not --limit, --value, --instrument or --reason"},
		{[]string{"limits", "--account", "FUND", "--limit", "credit_limit", "--value", "500", "--reason", "r"}, 0,
			"SetLimit: Applied by rita (journal seq 0): credit_limit = 500\n"},
		{[]string{"limits", "--account", "FUND", "--limit", "max_position", "--value", "7", "--instrument", "ACME", "--reason", "r"}, 0,
			"): max_position in ACME = 7\n"},
	} {
		if out, code := run(tc.args...); code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("risk %v: exit %d: %s, want exit %d with %q", tc.args, code, out, tc.code, tc.want)
		}
	}
}

// TestRiskLimitSetToItsValueIsRefused: a limit set to the value it has
// changes nothing, so it is answered 409 invalid_transition naming the
// value and not journaled, as a kill of a killed subject is (README,
// "Risk limits"): it was answered Applied and journaled again.
func TestRiskLimitSetToItsValueIsRefused(t *testing.T) {
	_, addr := startRiskVenue(t, "report_interval = \"1h\"\n", fundTOML+quietJournalTOML)
	var last uint64 // the seq of the last change made
	call := func(body string, want int) (seq uint64, text string) {
		t.Helper()
		a := admintest.Call(t, http.MethodPost, "http://"+addr+"/v1/risk/limit", riskToken, body)
		var out struct{ Seq uint64 }
		if a.Status != want || json.Unmarshal(a.Body, &out) != nil {
			t.Fatalf("limit %s: %d %s, want %d", body, a.Status, a.Body, want)
		}
		return out.Seq, string(a.Body)
	}
	for _, tc := range []struct{ body, again, want string }{
		// The configured value, unchanged since the start.
		{"", `{"reason":"r","session":"CLIENT1","limit":"max_order_qty","value":100}`, "max_order_qty of session:CLIENT1 is already 100 (nothing changed)"},
		// A value an earlier call set, per instrument.
		{`{"reason":"r","account":"FUND","limit":"max_position","value":50,"instrument":"ACME"}`,
			`{"reason":"r","account":"FUND","limit":"max_position","value":50,"instrument":"ACME"}`, "max_position in ACME of account:FUND is already 50 (nothing changed)"},
	} {
		if tc.body != "" {
			last, _ = call(tc.body, http.StatusOK)
		}
		if _, body := call(tc.again, http.StatusConflict); !strings.Contains(body, tc.want) || !strings.Contains(body, `"invalid_transition"`) {
			t.Fatalf("limit set to its value: %s, want %q", body, tc.want)
		}
	}
	// Nothing was journaled for the refused calls: the next change takes
	// the seq after the last change made.
	if next, _ := call(`{"reason":"r","session":"CLIENT2","limit":"max_order_qty","value":7}`, http.StatusOK); next != last+1 {
		t.Fatalf("a change after refused ones journaled as seq %d, the change before as %d: a refused call was journaled", next, last)
	}
	if _, body := call(`{"reason":"r","session":"CLIENT1","limit":"max_order_qty","value":100}`, http.StatusConflict); !strings.Contains(body, "already 100") {
		t.Fatalf("CLIENT1's limit after CLIENT2's changed: %s", body)
	}
}

// TestRiskShowOfADropCopySession: `risk show --session` naming a drop-copy
// session says it is one, with no risk limits, as kill, reset and limits
// refuse it; it said the venue had no such session.
func TestRiskShowOfADropCopySession(t *testing.T) {
	_, addr := startRiskVenue(t, "", "[[session]]\ncomp_id = \"DC1\"\nkind = \"dropcopy\"\ncopy_all = true\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "--session", "DC1"}, "session DC1 is a drop-copy session: it enters no orders, so it has no risk limits"},
		{[]string{"show", "--session", "DC1", "--json"}, "session DC1 is a drop-copy session"},
		{[]string{"show", "--session", "NOPE"}, `no session "NOPE": the venue lists CLIENT1, CLIENT2`},
	} {
		if out, code := runWithAdmin(t, addr, riskToken, append([]string{"admin", "risk"}, tc.args...)...); code != 1 || !strings.Contains(out, tc.want) {
			t.Errorf("risk %s: exit %d, want 1 and %q:\n%s", strings.Join(tc.args, " "), code, tc.want, out)
		}
	}
}

// TestRiskLimitRemovalReadsNone: a limit removed (--value none) reads
// value=none, as the admin API writes it, in `fixvenue journal dump` (the
// RiskSetLimit command), in `fixvenue events tail` and in the export's
// JSON text (its RiskControlResult); they printed the matcher's stand-in
// for none, 4611686018427387903.
func TestRiskLimitRemovalReadsNone(t *testing.T) {
	const standIn = "4611686018427387903"
	cfgPath := writeVenueConfig(t, t.TempDir(), "%s", exportTOML+"format = \"json\"\n"+quietJournalTOML+"[admin]\naddr = \"127.0.0.1:0\"\n"+
		adminTokenTOML("rita", "", riskToken)+"[[session]]\ncomp_id = \"CLIENT1\"\n[risk]\nreport_interval = \"1h\"\n[risk.sessions]\nmax_order_qty = 100\n")
	v := startVenue(t, cfgPath)
	if out, code := runWithAdmin(t, v.ready.AdminAddr, riskToken, "admin", "risk", "limits", "--session", "CLIENT1", "--limit", "max_order_qty",
		"--value", "none", "--reason", "lifted"); code != 0 || !strings.Contains(out, "max_order_qty = none") {
		t.Fatalf("limit none: exit %d: %s", code, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tail, err := exec.CommandContext(ctx, binPath, "events", "tail", "--config", cfgPath, "--nats", v.ready.NATSURL, "--count", "1").Output()
	if err != nil || !strings.Contains(string(tail), "RiskControlResult") || !strings.Contains(string(tail), " value=none ") ||
		strings.Contains(string(tail), standIn) {
		t.Fatalf("events tail: %v\n%s", err, tail)
	}
	st, err := natstest.JetStream(t, v.ready.NATSURL).Stream(ctx, "FIXVENUE_VENUE")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := st.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if data := string(raw.Data); !strings.Contains(data, "RiskControlResult") || !strings.Contains(data, " value=none ") || strings.Contains(data, standIn) {
		t.Fatalf("the export's JSON: %s", data)
	}
	v.stop(t)
	dump, err := exec.Command(binPath, "journal", "dump", "--config", cfgPath).CombinedOutput()
	if err != nil || !strings.Contains(string(dump), " limit=MaxOrderQty instrumentId=0 value=none account=") || strings.Contains(string(dump), standIn) {
		t.Fatalf("journal dump: %v\n%s", err, dump)
	}
}

// TestRiskAnswerNamesTheLimitAsTheCallDid: the answer to a limit change
// names the limit by the key the call gave (README "Risk limits": the
// configuration's, as GET /v1/risk lists it), and a kill's or a reset's
// names none. It named it by the matcher's enum ("MaxOrderQty"), and a
// kill's as "None".
func TestRiskAnswerNamesTheLimitAsTheCallDid(t *testing.T) {
	t.Parallel()
	_, addr := startRiskVenue(t, "report_interval = \"1h\"\n", fundTOML+quietJournalTOML)
	for _, tc := range []struct{ path, body, limit string }{
		{"/v1/risk/limit", `{"reason":"r","session":"CLIENT1","limit":"max_order_qty","value":50}`, "max_order_qty"},
		{"/v1/risk/limit", `{"reason":"r","account":"FUND","limit":"max_position","value":9,"instrument":"ACME"}`, "max_position"},
		{"/v1/risk/kill", `{"reason":"r","session":"CLIENT2"}`, ""},
		{"/v1/risk/reset", `{"reason":"r","session":"CLIENT2"}`, ""},
	} {
		a := admintest.Call(t, http.MethodPost, "http://"+addr+tc.path, riskToken, tc.body)
		var ans map[string]any
		if a.Status != http.StatusOK || json.Unmarshal(a.Body, &ans) != nil || ans["result"] != "Applied" {
			t.Fatalf("%s %s: %d %s", tc.path, tc.body, a.Status, a.Body)
		}
		if got, ok := ans["limit"]; tc.limit == "" && ok || tc.limit != "" && got != tc.limit {
			t.Errorf("%s %s: the answer's limit is %v, want %q: %s", tc.path, tc.body, got, tc.limit, a.Body)
		}
	}
	// The CLI's --json prints the API's answer.
	out, code := runWithAdmin(t, addr, riskToken, "admin", "risk", "limits", "--account", "FUND", "--limit", "credit_limit",
		"--value", "2000000", "--reason", "r", "--json")
	if code != 0 || !strings.Contains(out, `"limit": "credit_limit"`) {
		t.Fatalf("risk limits --json: exit %d:\n%s", code, out)
	}
}

// TestRiskShowSaysWhyAnAutomaticKillTripped: `risk show` follows its table
// with the cause of each switch an automatic kill turned on (the admin
// API's auto_kill), which the table's KILLED column alone does not say.
func TestRiskShowSaysWhyAnAutomaticKillTripped(t *testing.T) {
	var out bytes.Buffer
	c := &adminClient{prog: "fixvenue admin", out: &out}
	c.printRisk([]ops.RiskSubject{
		{Scope: "session", Name: "CLIENT3", Killed: true, AutoKill: &ops.RiskAutoKill{Rule: "kill_after_breaches", Limit: 2, Breaches: 2,
			TrippedBy: "session:CLIENT3 ClOrdID q2: order exceeds limit", Seq: 41, Time: "2026-12-08T09:30:00Z", Cancelled: 1}},
		{Scope: "account", Name: "FUND", Killed: true, AutoKill: &ops.RiskAutoKill{Rule: "kill_at_loss", Seq: 52, Time: "2026-12-08T10:00:00Z"}},
		{Scope: "session", Name: "CLIENT1", Killed: true},
	})
	for _, want := range []string{
		"session:CLIENT3 killed automatically at 2026-12-08T09:30:00Z (journal seq 41): kill_after_breaches reached (limit 2), tripped by session:CLIENT3 ClOrdID q2: order exceeds limit, 1 order cancelled\n",
		"account:FUND killed automatically at 2026-12-08T10:00:00Z (journal seq 52): kill_at_loss reached (limit unknown), 0 orders cancelled\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("risk show lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "CLIENT1 killed automatically") {
		t.Errorf("an operator's kill said to be automatic:\n%s", out.String())
	}
}

// TestRiskShowNoLimitIsNotZero: a subject's figures without a credit or
// position limit (a report's 0) show "-" for the limit, not a limit of 0
// that its position already passes.
func TestRiskShowNoLimitIsNotZero(t *testing.T) {
	var out bytes.Buffer
	c := &adminClient{prog: "fixvenue admin", out: &out}
	c.printRisk([]ops.RiskSubject{
		{Scope: "session", Name: "CLIENT1", Limits: map[string]int64{"max_open_orders": 3},
			Figures: &ops.RiskFigures{ReportSeq: 9, PositionUsed: 4, OpenOrders: 1}},
		{Scope: "account", Name: "FUND", Limits: map[string]int64{"credit_limit": 200000, "max_position": 15},
			Figures: &ops.RiskFigures{ReportSeq: 9, CreditUsed: 9825, CreditLimit: 200000, PositionUsed: 1, PositionLimit: 15}},
	})
	if !regexp.MustCompile(`(?m)^session:CLIENT1 +false +0/- +4/- +1 `).MatchString(out.String()) ||
		!regexp.MustCompile(`(?m)^account:FUND +false +9825/200000 +1/15 `).MatchString(out.String()) {
		t.Errorf("risk show:\n%s", out.String())
	}
}
