package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// interopEnv set to "1" makes a missing QuickFIX/C++ a test failure instead
// of a skip; CI sets it after installing the library.
const interopEnv = "FIXVENUE_INTEROP"

const (
	// quickfixCompileTimeout bounds compiling the initiator (about 4 s on an
	// idle machine; the 2 cores here are shared).
	quickfixCompileTimeout = 3 * time.Minute
	// quickfixRunTimeout bounds the initiator's run; it has its own 30 s deadline.
	quickfixRunTimeout = 90 * time.Second
	// venueLogWait bounds the wait for the venue to log the logout.
	venueLogWait = 10 * time.Second
)

// quickfixCppMissing reports why QuickFIX/C++ cannot be compiled against
// here, or "" when g++ finds its headers.
func quickfixCppMissing() string {
	if _, err := exec.LookPath("g++"); err != nil {
		return "g++ is not installed"
	}
	// Preprocessing only: it finds the headers wherever g++ looks for them
	// (a source build under /usr/local too) and costs a tenth of a second.
	probe := exec.Command("g++", "-std=gnu++14", "-E", "-x", "c++", "-o", os.DevNull, "-")
	probe.Stdin = strings.NewReader("#include <quickfix/Application.h>\n")
	if out, err := probe.CombinedOutput(); err != nil {
		line, _, _ := strings.Cut(string(out), "\n")
		return "the QuickFIX/C++ headers are not installed (" + strings.TrimSpace(line) + ")"
	}
	return ""
}

// TestInteropQuickFIXCpp runs an initiator built on QuickFIX/C++, a FIX engine
// independent of the QuickFIX/Go the venue uses, against `fixvenue serve`:
// logon, a resting order, a cross with both fills checked, an order and its
// cancel, a cancel of an unknown order (OrderCancelReject), orders refused
// for an off-tick price, a price outside the band, a quantity above the
// maximum and an unknown symbol (ExecutionReport 150=8 with OrdRejReason 99,
// 99, 13, 1), an OrderMassStatusRequest, a TradingSessionStatusRequest and a
// SecurityListRequest, the cancel of the rest of the partly filled order, a
// replace (150=5), a stop elected by a trade (150=D, then its fill), a mass
// cancel (35=r), a type the venue does not take (35=j with 379), market data
// (W, X, Y), logout. QuickFIX/C++ validates every message from the venue against the
// FIX 4.4 data dictionary (UseDataDictionary=Y), so a malformed report or a
// value outside the dictionary fails the run with the engine's own words.
func TestInteropQuickFIXCpp(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the QuickFIX/C++ compile and run")
	}
	if why := quickfixCppMissing(); why != "" {
		if os.Getenv(interopEnv) == "1" {
			t.Fatalf("%s, and %s=1 requires this test: install it with `apt-get install libquickfix-dev g++`", why, interopEnv)
		}
		t.Skipf("%s: install it with `apt-get install libquickfix-dev g++` (set %s=1 to make this a failure)", why, interopEnv)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "fixvenue-qfcpp")
	ctx, cancel := context.WithTimeout(context.Background(), quickfixCompileTimeout)
	defer cancel()
	compile := exec.CommandContext(ctx, "g++", "-std=gnu++14", "-O1", "-Wall", "-Wno-deprecated", "-o", exe,
		filepath.Join(root, "interop", "quickfixcpp", "initiator.cpp"), "-lquickfix", "-lpthread")
	if out, err := compile.CombinedOutput(); err != nil {
		t.Fatalf("compiling the QuickFIX/C++ initiator: %v\n%s", err, out)
	}

	v := startVenue(t, filepath.Join(root, "interop", "quickfixcpp", "venue.toml"), "--data", filepath.Join(dir, "data"))

	ctx, cancel = context.WithTimeout(context.Background(), quickfixRunTimeout)
	defer cancel()
	run := exec.CommandContext(ctx, exe, filepath.Join(root, "interop", "quickfixcpp", "initiator.cfg"),
		"--connect", v.fixAddr, "--dictionary", filepath.Join(root, "gateway", "spec", "FIX44.xml"))
	out, err := run.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		t.Fatalf("the QuickFIX/C++ initiator failed (exit status %d):\n%s\nvenue log:\n%s", exit.ExitCode(), out, v.logs())
	case err != nil:
		t.Fatalf("running the QuickFIX/C++ initiator: %v\n%s", err, out)
	case !strings.Contains(string(out), "PASS:"):
		t.Fatalf("the QuickFIX/C++ initiator exited 0 without saying PASS:\n%s", out)
	}

	// The venue's side of the same story: CLIENT7 logged on and out once. The
	// venue may log the logout a moment after the initiator has exited.
	wants := []string{`msg="session logged on" session=FIX.4.4:VENUE->CLIENT7`, `msg="session logged out" session=FIX.4.4:VENUE->CLIENT7`}
	deadline := time.Now().Add(venueLogWait)
	for !strings.Contains(v.logs(), wants[1]) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	logs := v.logs()
	for _, want := range wants {
		if n := strings.Count(logs, want); n != 1 {
			t.Errorf("venue log has %q %d times, want once:\n%s", want, n, logs)
		}
	}
	if testing.Verbose() {
		t.Logf("QuickFIX/C++ initiator:\n%s", out)
	}
}
