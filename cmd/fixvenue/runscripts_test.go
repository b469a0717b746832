package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// runScript runs scripts/NAME with args, the binary under test as the venue
// and the load generator, and env added; it returns the script's exit status
// and its output.
func runScript(t *testing.T, name string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", name))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, args...)
	cmd.Env = append(append(os.Environ(), "VBIN="+binPath, "LBIN="+binPath, "DUR=300ms", "WARMUP=0s"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return code, out.String(), errb.String()
}

// TestEchoRunScript: scripts/echo-run.sh (the floor of make bench-fix) runs
// its echo venue on a port the OS chooses, so two runs at once each measure
// their own (on its fixed port the second echo could not listen, and the
// script failed on a /proc file of the process that had exited, its reason
// removed with the log); and a load generator that cannot run fails the
// script, where its status was ignored and the script exited 0 with no
// figures.
func TestEchoRunScript(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, errs := runScript(t, "echo-run.sh", nil, "50", "1")
			if code != 0 || !strings.Contains(out, "echo CPU") || !strings.Contains(out, "lost: 0 orders, 0 cancels") {
				t.Errorf("echo-run.sh 50 1 beside another: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
		}()
	}
	wg.Wait()
	code, out, errs := runScript(t, "echo-run.sh", nil, "0", "1")
	if code != 1 || !strings.Contains(errs, "echo-run.sh: the load generator failed (status 2)") {
		t.Errorf("echo-run.sh with a rate no run takes: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}

// TestFixRunScriptFailsWhenTheLoadCannotRun: scripts/fix-run.sh (a cell of
// make bench-fix and bench-matcher-thread) fails when the load generator
// cannot run; it ignored the status and exited 0, an empty JSON result
// left for the tables.
func TestFixRunScriptFailsWhenTheLoadCannotRun(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("fix-run.sh scrapes the venue's metrics with curl")
	}
	code, out, errs := runScript(t, "fix-run.sh", []string{"JSON=" + filepath.Join(t.TempDir(), "run.json")}, "auto", "batch", "0", "1")
	if code != 1 || !strings.Contains(errs, "fix-run.sh: the load generator failed (status 2)") {
		t.Errorf("fix-run.sh with a rate no run takes: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}

// TestBenchFixFloorStopsOnCtrlC: Ctrl-C (SIGINT to the process group, as a
// terminal sends it) stops scripts/bench-fix-floor.sh (make bench-fix)
// with status 130, its venue stopped. The load generator handles the
// signal and exits normally, and so did the run's script: the bench went
// on to its next run, one Ctrl-C needed per run.
func TestBenchFixFloorStopsOnCtrlC(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("fix-run.sh scrapes the venue's metrics with curl")
	}
	if signal.Ignored(syscall.SIGINT) {
		t.Skip("SIGINT is ignored (a background job of a shell): the script could not trap it")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "bench-fix-floor.sh"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// One cell, the venue first and the floor after it, each long enough
	// that only the signal ends the venue's within the test.
	cmd := exec.Command(script)
	cmd.Env = append(os.Environ(), "CELLS=50/1", "ROUNDS=1", "DUR=20s", "WARMUP=0s", "OUT="+out, "VENUES=venue="+binPath, "LBIN="+binPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The venue's run prints its first line as the load starts.
	runLog := filepath.Join(out, "venue-50-1-r1.txt")
	for i := 0; ; i++ {
		if b, _ := os.ReadFile(runLog); bytes.Contains(b, []byte("== wait=")) {
			break
		}
		if i == 600 {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("the venue's run did not start within a minute\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the load under way
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || strings.Contains(stderr.String(), "floor-50-1-r1") {
		b, _ := os.ReadFile(runLog)
		t.Fatalf("bench-fix-floor.sh after Ctrl-C: %v, want exit 130 before the floor's run\n%s\nthe venue's run:\n%s", err, stderr.String(), b)
	}
}
