package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/journal"
)

var durableEchoLine = regexp.MustCompile(`durable echo venue on (\S+)`)

// TestBenchEchoJournal runs `fixvenue bench echo --journal DIR`, drives it
// with `fixvenue load` (no latency verdict: it runs beside other tests), and checks that every order and cancel answered is
// a record of the journal it leaves behind.
func TestBenchEchoJournal(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "journal")
	echo := exec.Command(binPath, "bench", "echo", "--addr", "127.0.0.1:0", "--journal", dir)
	stderr, err := echo.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := echo.Start(); err != nil {
		t.Fatal(err)
	}
	defer echo.Process.Kill()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := durableEchoLine.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	var a string
	select {
	case a = <-addr:
	case <-time.After(30 * time.Second):
		t.Fatal("the durable echo did not say where it listens")
	}
	out, err := exec.Command(binPath, "load", "--addr", a, "--sessions", "2", "--rate", "1000",
		"--duration", "400ms", "--warmup", "0s", "--p99-max", "1m", "--json", "--quiet").Output()
	if err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	var res struct {
		Orders  int64 `json:"orders_sent"`
		Cancels int64 `json:"cancels_sent"`
		ERs     int64 `json:"execution_reports"`
		Lost    int64 `json:"lost_orders"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Orders == 0 || res.Lost != 0 || res.ERs != res.Orders+res.Cancels {
		t.Fatalf("load: %+v", res)
	}
	if err := echo.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := echo.Wait(); err != nil {
		t.Fatalf("bench echo exited with %v", err)
	}
	r, err := journal.NewReader(dir, journal.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs int64
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs++
	}
	if recs != res.Orders+res.Cancels {
		t.Fatalf("the journal holds %d records, want %d orders + cancels", recs, res.Orders+res.Cancels)
	}
}

// TestBenchPipelineOutputFilesCheckedBeforeTheRun: an --hgrm or --svg path
// that cannot be written is refused before the run, naming the flag (exit
// 2), where it was found after the run's figures were measured.
func TestBenchPipelineOutputFilesCheckedBeforeTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-dir", "p.svg")
	code, out, errs := runCLI(t, "", nil, "bench", "pipeline", "--rate", "1000", "--duration", "2s", "--warmup", "0s", "--quiet",
		"--hgrm", filepath.Join(dir, "p.hgrm"), "--svg", missing)
	if code != 2 || out != "" || !strings.Contains(errs, "--svg "+missing+" cannot be written: no such file or directory") {
		t.Fatalf("bench pipeline with an --svg it cannot write: exit %d, want 2 before the run\nstdout: %s\nstderr: %s", code, out, errs)
	}
}
