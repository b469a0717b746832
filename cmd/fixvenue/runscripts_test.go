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

	"github.com/fixvenue/fixvenue/internal/lockedbuf"
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

// interruptScript starts scripts/NAME with args and env added, in a
// process group of its own; once started(its output so far) says so, it
// sends SIGINT to the group, as a terminal's Ctrl-C does, and returns how
// the script ended and its output.
func interruptScript(t *testing.T, name string, env []string, started func(output string) bool, args ...string) (output string, err error) {
	t.Helper()
	if signal.Ignored(syscall.SIGINT) {
		t.Skip("SIGINT is ignored (a background job of a shell): the script could not trap it")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", name))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out lockedbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for i := 0; !started(out.String()); i++ {
		if i == 600 {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Fatalf("%s: its run did not start within a minute\n%s", name, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the run under way
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	return out.String(), err
}

// processWith reports whether a process runs whose command line holds
// every one of words (Linux: /proc).
func processWith(t *testing.T, words ...string) bool {
	t.Helper()
	return processWhere(t, nil, words...)
}

// dialledProcessWith is processWith for a process that has opened a
// socket: a load generator that has dialled, its Ctrl-C handler set before
// (one interrupted before that ends at once, without its figures).
func dialledProcessWith(t *testing.T, words ...string) bool {
	t.Helper()
	return processWhere(t, func(proc string) bool {
		fds, _ := os.ReadDir(filepath.Join(proc, "fd"))
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join(proc, "fd", fd.Name())); err == nil && strings.HasPrefix(l, "socket:") {
				return true
			}
		}
		return false
	}, words...)
}

// processWhere reports whether a process runs whose command line holds
// every one of words and, when ok is given, of whose /proc directory ok
// says true.
func processWhere(t *testing.T, ok func(proc string) bool, words ...string) bool {
	t.Helper()
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		found := 0
		for _, w := range words {
			for _, a := range args {
				if strings.Contains(a, w) {
					found++
					break
				}
			}
		}
		if found == len(words) && (ok == nil || ok(filepath.Join("/proc", d.Name()))) {
			return true
		}
	}
	return false
}

// TestBenchFixFloorStopsOnCtrlC: Ctrl-C stops scripts/bench-fix-floor.sh
// (make bench-fix) with status 130, its venue stopped. The load generator
// handles the signal and exits normally, and so did the run's script: the
// bench went on to its next run, one Ctrl-C needed per run.
func TestBenchFixFloorStopsOnCtrlC(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("fix-run.sh scrapes the venue's metrics with curl")
	}
	out := t.TempDir()
	runLog := filepath.Join(out, "venue-50-1-r1.txt")
	// One cell, the venue first and the floor after it, each long enough
	// that only the signal ends the venue's within the test.
	output, err := interruptScript(t, "bench-fix-floor.sh",
		[]string{"CELLS=50/1", "ROUNDS=1", "DUR=20s", "WARMUP=0s", "OUT=" + out, "VENUES=venue=" + binPath, "LBIN=" + binPath},
		func(string) bool {
			// The venue's run prints its first line as the load starts.
			b, _ := os.ReadFile(runLog)
			return bytes.Contains(b, []byte("== wait="))
		})
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || strings.Contains(output, "floor-50-1-r1") {
		b, _ := os.ReadFile(runLog)
		t.Fatalf("bench-fix-floor.sh after Ctrl-C: %v, want exit 130 before the floor's run\n%s\nthe venue's run:\n%s", err, output, b)
	}
}

// TestBenchLatencyStopsOnCtrlC: Ctrl-C stops scripts/bench-latency.sh (make
// bench-latency). Each run went under timeout(1) in a process group of its
// own, which the terminal's signal never reached: the script ran every one
// of its runs (48 by default) to the end, Ctrl-C or not.
func TestBenchLatencyStopsOnCtrlC(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("bench-latency.sh bounds each run with timeout(1)")
	}
	output, err := interruptScript(t, "bench-latency.sh",
		[]string{"BIN=" + binPath, "RATES=1000", "WAITS=park", "JOURNALS=off", "PROCS=0", "DURATION=20s", "WARMUP=0s", "OUT=" + t.TempDir()},
		func(output string) bool {
			return strings.Contains(output, "bench-latency.sh: pipeline-park-journal-off-procs-default-1000")
		})
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || strings.Contains(output, "procs-default-max") {
		t.Fatalf("bench-latency.sh after Ctrl-C: %v, want exit 130 before its next run\n%s", err, output)
	}
}

// TestBenchFixStopsOnCtrlC: Ctrl-C reaches the load run of
// scripts/bench-fix.sh (make bench-fix-ladder), which stops it (its result
// says interrupted) and then the script (status 130). Under timeout(1), in a
// process group of its own, the run never saw the signal: it went on until
// the venue, which did, logged its sessions out, and its result read as a
// run that failed.
func TestBenchFixStopsOnCtrlC(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("bench-fix.sh bounds each run with timeout(1)")
	}
	out := t.TempDir()
	output, err := interruptScript(t, "bench-fix.sh",
		[]string{"BIN=" + binPath, "SESSIONS=1", "MIXES=passive", "RATES=50 100", "FSYNCS=batch", "DURATION=20s", "WARMUP=0s", "OUT=" + out},
		func(output string) bool {
			// The load under way: on a loaded machine its process may
			// start well after the script says where the venue is.
			return strings.Contains(output, "bench-fix.sh: fix-batch-1s-passive: venue on") && dialledProcessWith(t, "load", out)
		})
	result, _ := os.ReadFile(filepath.Join(out, "fix-batch-1s-passive-50.json"))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(string(result), `"interrupted": true`) {
		t.Fatalf("bench-fix.sh after Ctrl-C: %v, want exit 130, its run interrupted\n%s\nthe run's result:\n%s", err, output, result)
	}
}

// TestBenchInstrStopsOnCtrlC: Ctrl-C stops scripts/bench-instr.sh (make
// bench-instr) with status 130 and no report. Each count ran under
// timeout(1) in a process group of its own, which the terminal's signal
// never reached: valgrind counted to the end, and the script went on to
// the counts after it.
func TestBenchInstrStopsOnCtrlC(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"timeout", "valgrind", "callgrind_annotate"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("bench-instr.sh needs %s", tool)
		}
	}
	out := t.TempDir()
	// Two counts of a benchmark whose runs take valgrind well over the
	// half second interruptScript leaves them.
	output, err := interruptScript(t, "bench-instr.sh", []string{"BENCH_INSTR_DIR=" + out},
		func(output string) bool {
			return strings.Contains(output, "bench-instr.sh: MixedFlow (") && processWith(t, "callgrind", "^BenchmarkMixedFlow$")
		}, "MixedFlow:150000:190000")
	reports, _ := filepath.Glob(filepath.Join(out, "*.txt"))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || len(reports) > 0 {
		t.Fatalf("bench-instr.sh after Ctrl-C: %v, want exit 130 and no report (reports: %q)\n%s", err, reports, output)
	}
}
