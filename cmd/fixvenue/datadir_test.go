package main

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serveAgain runs a second `fixvenue serve --config cfgPath` (every
// listener on an OS-chosen port) and returns its exit code and output.
func serveAgain(t *testing.T, cfgPath string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binPath, "serve", "--config", cfgPath, "--metrics-addr", "off", "--admin-addr", "127.0.0.1:0",
		"--md-addr", "127.0.0.1:0", "--md-recovery-addr", "127.0.0.1:0").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("second venue: %v (it should exit at once)\n%s", err, out)
	}
	return exit.ExitCode(), string(out)
}

// TestSecondProcessOnADataDirIsRefused: a venue, and a cluster node, hold
// their data directory; a second process started on it (a double start by an
// operator or a supervisor) exits 1 saying who holds it, and the first goes
// on serving.
func TestSecondProcessOnADataDirIsRefused(t *testing.T) {
	t.Parallel()
	t.Run("venue", func(t *testing.T) {
		dir := t.TempDir()
		cfg := writeVenueConfig(t, dir, "[marketdata]\nenabled = false\n")
		v := startVenue(t, cfg)
		code, out := serveAgain(t, cfg)
		want := "is in use by fixvenue pid " + strconv.Itoa(v.ready.PID)
		if code != 1 || !strings.Contains(out, want) {
			t.Fatalf("second venue: exit %d, want 1 and %q in:\n%s", code, want, out)
		}
		c := logonClient(t, v, "CLIENT1")
		defer c.Close()
		sendLimit(t, c, "dd1", "1", "100.00", 1, "0")
		if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "dd1", 150: "0"}); err != nil {
			t.Fatalf("the first venue after the refused one: %v", err)
		}
	})
	t.Run("cluster node", func(t *testing.T) {
		h := writeClusterConfigs(t, nil, false)
		h.start(0)
		code, out := serveAgain(t, h.cfgs[0])
		want := "is in use by fixvenue pid " + strconv.Itoa(h.procs[0].ready.PID)
		if code != 1 || !strings.Contains(out, want) {
			t.Fatalf("second node: exit %d, want 1 and %q in:\n%s", code, want, out)
		}
		if _, err := h.nodeStatus(0); err != nil {
			t.Fatalf("the first node after the refused one: %v", err)
		}
	})
}
