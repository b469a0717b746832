package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestLoadEveryOrderRefusedIsNotHeld: a load run whose every order the
// venue refuses (here, an unknown symbol) measured no order path: its
// verdict is NOT HELD and it exits 3, where it said "held".
func TestLoadEveryOrderRefusedIsNotHeld(t *testing.T) {
	t.Parallel()
	v := startVenue(t, writeVenueConfig(t, t.TempDir(), "[marketdata]\nenabled = false\n"))
	out, err := exec.Command(binPath, "load", "--addr", v.fixAddr, "--sessions", "1", "--rate", "50", "--symbol", "NOPE",
		"--duration", "400ms", "--warmup", "0s", "--p99-max", "1m", "--quiet").Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitNotHeld || !strings.Contains(string(out), "verdict  NOT HELD") ||
		!strings.Contains(string(out), "orders refused") {
		t.Fatalf("load with every order refused: %v\n%s", err, out)
	}
}

// TestLoadWithAnUnknownCompIDSaysWhatToCheck: the venue closes a Logon for
// a CompID it does not configure without an answer (it tells nothing to
// someone it cannot trust); the load generator says what to look at rather
// than only "waiting for Logon: EOF".
func TestLoadWithAnUnknownCompIDSaysWhatToCheck(t *testing.T) {
	t.Parallel()
	v := startVenue(t, writeVenueConfig(t, t.TempDir(), "[marketdata]\nenabled = false\n"))
	out, err := exec.Command(binPath, "load", "--addr", v.fixAddr, "--sessions", "1", "--first", "999", "--rate", "10",
		"--duration", "200ms", "--warmup", "0s", "--quiet").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "is CLIENT999 one of its sessions") {
		t.Fatalf("load as an unknown CompID: %v\n%s", err, out)
	}
}
