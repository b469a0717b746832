package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestRiskCommandDrivesARunningVenue runs `fixvenue risk` as a separate
// process against a running `fixvenue serve`: a kill cancels the session's
// order, a bad limit is refused with the reason and a non-zero exit, a wrong
// token is refused, and a reset lets the session trade again.
func TestRiskCommandDrivesARunningVenue(t *testing.T) {
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, "[marketdata]\nenabled = false\n"+
		"[[session]]\ncomp_id = \"CLIENT%%d\"\nrange = [1, 2]\n[risk]\ncontrol_token = \"tok\"\n[risk.sessions]\nmax_order_qty = 100\n")
	v := startVenue(t, cfg, "--metrics-addr", "127.0.0.1:0")
	c := logOn(t, v.fixAddr, "CLIENT1")
	defer c.Close()
	order := func(id string) {
		t.Helper()
		if err := c.Send("D", fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(54, "1"), fixclient.F(60, fixclient.Timestamp(time.Now())),
			fixclient.F(38, "5"), fixclient.F(40, "2"), fixclient.F(44, "99.00"), fixclient.F(59, "0")); err != nil {
			t.Fatal(err)
		}
	}
	risk := func(token string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(binPath, append([]string{"risk"}, append(args, "--addr", v.ready.MetricsAddr)...)...)
		cmd.Env = append(os.Environ(), "FIXVENUE_RISK_TOKEN="+token)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	order("o1")
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o1", 150: "0"}); err != nil {
		t.Fatal(err)
	}
	if out, code := risk("tok", "kill", "--session", "CLIENT1"); code != 0 || !strings.Contains(out, `"cancelled":1`) {
		t.Fatalf("kill: exit %d: %s", code, out)
	}
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o1", 150: "4"}); err != nil {
		t.Fatal(err)
	}
	order("o2")
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o2", 150: "8", 103: "3", 58: "kill switch on for session:CLIENT1"}); err != nil {
		t.Fatal(err)
	}
	if out, code := risk("tok", "limits", "--session", "CLIENT1", "--limit", "max_order_qty", "--value", "0"); code != 1 || !strings.Contains(out, "must be a positive integer") {
		t.Fatalf("bad limit: exit %d: %s", code, out)
	}
	if out, code := risk("wrong", "reset", "--session", "CLIENT1"); code != 1 || !strings.Contains(out, "401") {
		t.Fatalf("wrong token: exit %d: %s", code, out)
	}
	if out, code := risk("tok", "reset", "--session", "CLIENT1"); code != 0 || !strings.Contains(out, `"result":"Applied"`) {
		t.Fatalf("reset: exit %d: %s", code, out)
	}
	if out, code := risk("tok", "limits", "--session", "CLIENT1", "--limit", "max_order_qty", "--value", "4"); code != 0 {
		t.Fatalf("limit: exit %d: %s", code, out)
	}
	order("o3")
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "o3", 150: "8", 103: "3",
		58: "order exceeds limit: max order quantity of session:CLIENT1 in ACME: 5 > 4"}); err != nil {
		t.Fatal(err)
	}
}
