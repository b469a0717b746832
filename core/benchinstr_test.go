//go:build !race

package core

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestBenchInstrScript runs scripts/bench-instr.sh (make bench-instr) on a
// short place+cancel run, as a developer would: it must report the matcher's
// instructions per iteration, its parts must add up to that figure, the
// report must land in the directory asked for, and a malformed SPEC must be
// refused before anything runs. (Not under the race detector: callgrind
// would count the detector's own instructions.)
func TestBenchInstrScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the core benchmarks and runs them under valgrind")
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		t.Skip("valgrind is not installed (.ci/run installs it)")
	}
	script, err := filepath.Abs("../scripts/bench-instr.sh")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(dir string, args ...string) (stdout, stderr string, code int) {
		cmd := exec.CommandContext(ctx, script, args...)
		cmd.Env = append(os.Environ(), "BENCH_INSTR_DIR="+dir)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit):
			code = exit.ExitCode()
		default:
			t.Fatalf("bench-instr.sh %v: %v", args, err)
		}
		return out.String(), errb.String(), code
	}

	dir := t.TempDir()
	out, stderr, code := run(dir, "PassivePlaceCancel/depth=10:5000:15000")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	head := regexp.MustCompile(`(?m)^PassivePlaceCancel/depth=10: (\d+) instructions per iteration in the matcher \((\d+) with the harness\)$`).
		FindStringSubmatch(out)
	if head == nil {
		t.Fatalf("no headline in the report:\n%s", out)
	}
	// A place and a cancel cost about 1,800 instructions at this writing; the
	// bounds only catch a broken count (zero, setup leaking in, a wrong
	// divisor). The harness's figure is not checked: the runtime's background
	// work in it grows with wall time, which valgrind stretches on a busy
	// machine.
	matcher, _ := strconv.Atoi(head[1])
	if matcher < 500 || matcher > 10_000 {
		t.Fatalf("matcher %d instructions per iteration: not a place+cancel", matcher)
	}
	parts := map[string]int{}
	sum := 0
	for _, m := range regexp.MustCompile(`(?m)^ +(\d+) +[\d.]+%  (.+)$`).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[1])
		parts[m[2]] = n
		sum += n
	}
	for _, p := range []string{"ClOrdID keys, table and records", "events", "book and matching", "command decode"} {
		if parts[p] <= 0 {
			t.Errorf("part %q missing or zero in %v", p, parts)
		}
	}
	if d := sum - matcher; d < -len(parts) || d > len(parts) { // each part is rounded
		t.Errorf("parts add up to %d, the matcher's figure is %d", sum, matcher)
	}
	latest, err := os.ReadFile(filepath.Join(dir, "latest.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(latest, []byte(head[0])) {
		t.Errorf("latest.txt lacks the headline %q:\n%s", head[0], latest)
	}
	if reports, _ := filepath.Glob(filepath.Join(dir, "instr-*.txt")); len(reports) != 1 {
		t.Errorf("want one dated report in %s, found %v", dir, reports)
	}

	bad := t.TempDir()
	for _, spec := range []string{"PassivePlaceCancel", "PassivePlaceCancel/depth=10:900:300", "Bad Name:1:2"} {
		_, stderr, code := run(bad, spec)
		if code != 2 || !bytes.Contains([]byte(stderr), []byte("bad SPEC")) {
			t.Errorf("SPEC %q: exit %d, stderr %q; want exit 2 and a bad SPEC message", spec, code, stderr)
		}
	}
	if entries, _ := os.ReadDir(bad); len(entries) != 0 {
		t.Errorf("a refused SPEC wrote %d files", len(entries))
	}
}
