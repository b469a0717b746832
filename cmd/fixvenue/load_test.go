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
	v := startVenue(t, writeVenueConfig(t, t.TempDir(), "[marketdata]\nenabled = false\n"))
	out, err := exec.Command(binPath, "load", "--addr", v.fixAddr, "--sessions", "1", "--rate", "50", "--symbol", "NOPE",
		"--duration", "400ms", "--warmup", "0s", "--p99-max", "1m", "--quiet").Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitNotHeld || !strings.Contains(string(out), "verdict  NOT HELD") ||
		!strings.Contains(string(out), "orders refused") {
		t.Fatalf("load with every order refused: %v\n%s", err, out)
	}
}
