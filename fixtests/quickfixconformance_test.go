package fixtests_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/fixtests"
)

// longEnv, like -long, makes the tests include the slow heartbeat scripts.
const longEnv = "FIXTESTS_LONG"

var long = flag.Bool("long", false, "also run the slow heartbeat scripts (about 46 s more); or set "+longEnv+"=1")

// slowQuickFIXScripts wait for real heartbeat intervals (12 s and 34 s).
var slowQuickFIXScripts = []string{"4a_NoDataSentDuringHeartBtInt", "6_SendTestRequest"}

func runLong() bool { return *long || os.Getenv(longEnv) != "" }

// quickfixDefs returns the QuickFIX scripts' folder or skips the test,
// saying plainly that the scripts are missing.
func quickfixDefs(t *testing.T) string {
	t.Helper()
	dir, err := fixtests.QuickFIXDefsDir()
	if err != nil {
		t.Skipf("QuickFIX scripts: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the QuickFIX scripts are missing (%v); set %s to run these tests", err, fixtests.QuickFIXDefsEnv)
	}
	return dir
}

// TestQuickFIXSessionScriptsAgainstQuickFIXGo runs the 45 session-layer
// QuickFIX scripts, unchanged, against a plain QuickFIX/Go acceptor with the
// settings they assume. They must all pass: that proves the runner reads,
// sends and compares the way the scripts were written for.
func TestQuickFIXSessionScriptsAgainstQuickFIXGo(t *testing.T) {
	dir := quickfixDefs(t)
	addr := startAcceptor(t, "ResetOnLogon=Y", "").addr
	var out bytes.Buffer
	skipEcho := fixtests.SkipQuickFIXEcho(dir)
	o := fixtests.Options{
		Addr: addr,
		Dirs: []string{dir},
		Out:  &out,
		Skip: func(path string) string {
			if r := skipEcho(path); r != "" {
				return r
			}
			stem := strings.TrimSuffix(filepath.Base(path), ".def")
			if !runLong() && slices.Contains(slowQuickFIXScripts, stem) {
				return "slow heartbeat script; run with -long or " + longEnv + "=1"
			}
			return ""
		},
	}
	sum, err := fixtests.RunDir(context.Background(), o)
	t.Logf("report:\n%s", out.String())
	if err != nil {
		t.Fatalf("RunDir: %v", err)
	}
	wantPassed := 45
	if !runLong() {
		wantPassed -= len(slowQuickFIXScripts)
	}
	if sum.Failed != 0 || sum.Passed != wantPassed {
		t.Errorf("%d passed, %d failed; want %d passed, 0 failed", sum.Passed, sum.Failed, wantPassed)
	}
	if !strings.HasSuffix(out.String(), fmt.Sprintf("\n%d passed, 0 failed\n", sum.Passed)) {
		t.Errorf("report does not end with the summary line")
	}
}
