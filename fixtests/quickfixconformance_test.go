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

// skipEchoAndSlow skips what skipEcho skips (nil: nothing), and the slow
// heartbeat scripts unless the long run is asked for.
func skipEchoAndSlow(skipEcho func(string) string) func(string) string {
	return func(path string) string {
		if skipEcho != nil {
			if r := skipEcho(path); r != "" {
				return r
			}
		}
		stem := strings.TrimSuffix(filepath.Base(path), ".def")
		if !runLong() && slices.Contains(slowQuickFIXScripts, stem) {
			return "slow heartbeat script; run with -long or " + longEnv + "=1"
		}
		return ""
	}
}

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
		Skip: skipEchoAndSlow(skipEcho),
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

// TestQuickFIXExtraScriptsAgainstQuickFIXGo runs the extra QuickFIX suites
// (those that need other acceptor settings) against QuickFIX/Go v0.9.11 with
// the settings each was written for. nextexpectedseqnum, which also needs
// the sequence-number hook, runs in TestSetSession. resendreqchunksize is
// left out: both its scripts expect the echo application's copy of a
// NewOrderSingle, so against an acceptor that answers with an
// ExecutionReport they fail at the first order, as the main suite's 14
// echo scripts do.
func TestQuickFIXExtraScriptsAgainstQuickFIXGo(t *testing.T) {
	root := quickfixDefs(t)
	tests := []struct {
		folder, defaults, session string
		scripts                   int
	}{
		{folder: "lastseqnumprocessed", defaults: "ResetOnLogon=Y", session: "EnableLastMsgSeqNumProcessed=Y", scripts: 1},
		{
			// Two sessions: TW with default validation, and a client whose
			// session does not check that fields have values (a setting
			// QuickFIX/Go gained in v0.9.11). QuickFIX/Go v0.9.11 still
			// rejects an empty value while RejectInvalidMessage=Y (its
			// field validation checks emptiness on its own), so that
			// session also needs RejectInvalidMessage=N, which the
			// QuickFIX/C++ configuration the script comes from does not
			// set.
			folder: "validate", defaults: "ResetOnLogon=Y",
			session: "\n[SESSION]\nBeginString=FIX.4.4\nTargetCompID=NO_CHECK_FIELDS_HAVE_VALUES\n" +
				"ValidateFieldsHaveValues=N\nRejectInvalidMessage=N\nDataDictionary=" + fix44Dictionary(t) + "\n",
			scripts: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.folder, func(t *testing.T) {
			acc := startAcceptor(t, tt.defaults, tt.session)
			var out bytes.Buffer
			sum, err := fixtests.RunDir(context.Background(), fixtests.Options{
				Addr: acc.addr,
				Dirs: []string{filepath.Join(root, "extra", tt.folder)},
				Out:  &out,
			})
			t.Logf("report:\n%s", out.String())
			if err != nil {
				t.Fatalf("RunDir: %v", err)
			}
			if sum.Passed != tt.scripts || sum.Failed != 0 {
				t.Errorf("%d passed, %d failed; want %d passed, 0 failed", sum.Passed, sum.Failed, tt.scripts)
			}
		})
	}
}
