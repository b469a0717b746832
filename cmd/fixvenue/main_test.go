package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/browsertest"
	"github.com/fixvenue/fixvenue/internal/fixcheck"
	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// binPath is the fixvenue binary built once for the tests that run it as a child process.
var binPath string

// The tests of one venue and its tools run in parallel (t.Parallel): they
// spend their time waiting (for a start, a feed, a stream), and each runs
// its own processes on its own directories, on ports of the system's
// choosing or reserved for it alone (internal/testports). The cluster and crash
// tests stay sequential: their kills, elections and loads are timed
// against a machine they have to themselves.

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fixvenue-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "fixvenue")
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building fixvenue:", err)
		os.Exit(1)
	}
	// Every message a test reads from the venue with fixclient is one a
	// validating FIX client accepts (internal/fixcheck).
	fixclient.Check = fixcheck.Check
	code := m.Run()
	browsertest.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// writeVenueConfig writes dir/venue.toml and returns its path: a venue with
// its data in dir/data and its FIX acceptor on an OS-chosen loopback port,
// then body (more TOML tables, formatted with args).
func writeVenueConfig(t *testing.T, dir, body string, args ...any) string {
	t.Helper()
	text := fmt.Sprintf("[venue]\ndata_dir = %q\n[fix]\naddr = \"127.0.0.1:0\"\n", filepath.Join(dir, "data")) + fmt.Sprintf(body, args...)
	path := filepath.Join(dir, "venue.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// feedTOML is the [marketdata] and [session_defaults] of a venue a test
// restarts while reading its feed: the feed and recovery addresses, a
// heartbeat fast enough for a test, and resting orders that outlive their
// session's connection.
func feedTOML(feedAddr, recoveryAddr string) string {
	return fmt.Sprintf(`[marketdata]
feed_addr = %q
recovery_addr = %q
heartbeat_interval = "100ms"
[session_defaults]
cancel_on_disconnect = false
`, feedAddr, recoveryAddr)
}

// logOn connects to the FIX address as sender (target VENUE) and logs on
// with a sequence reset; the client is closed when the test ends (a caller
// may close it sooner).
func logOn(t *testing.T, addr, sender string) *fixclient.Client {
	t.Helper()
	c, err := fixclient.Dial(addr, sender, "VENUE")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Logon(true); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c
}

// skipUnderRace skips, in the race detector's pass, a test whose subject
// runs only in child processes: three cluster nodes, a kill loop. The
// detector instruments this test process, not the venues (TestMain builds
// them without it), so that pass re-ran minutes of such tests and checked
// only their harness, which the plain pass runs as well.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("its venues are child processes, which the race detector does not instrument: the pass without it runs this test")
	}
}

// cyclesAndSeed gives a crash test its count of kill cycles (20, 3 with
// -short, or $PREFIX_CYCLES) and its random seed (the clock, or
// $PREFIX_SEED to replay a run), and logs both.
func cyclesAndSeed(t *testing.T, prefix string) (cycles int, seed int64) {
	t.Helper()
	cycles = 20
	if testing.Short() {
		cycles = 3
	}
	if v := os.Getenv(prefix + "_CYCLES"); v != "" {
		cycles, _ = strconv.Atoi(v)
	}
	seed = time.Now().UnixNano()
	if v := os.Getenv(prefix + "_SEED"); v != "" {
		seed, _ = strconv.ParseInt(v, 10, 64)
	}
	t.Logf("seed %d, %d cycles (%s_SEED, %s_CYCLES)", seed, cycles, prefix, prefix)
	return cycles, seed
}

// venueProc is a running `fixvenue serve` child process.
type venueProc struct {
	cmd     *exec.Cmd
	ready   readyInfo // what its --ready-file said
	fixAddr string
	logMu   sync.Mutex
	log     strings.Builder
	exited  chan struct{}
}

// startVenue runs `fixvenue serve --config cfgPath` and waits until its
// --ready-file says it serves.
func startVenue(t *testing.T, cfgPath string, extra ...string) *venueProc {
	t.Helper()
	readyPath := filepath.Join(t.TempDir(), "ready.json")
	args := append([]string{"serve", "--config", cfgPath, "--metrics-addr", "off", "--admin-addr", "127.0.0.1:0", "--log-level", "debug",
		"--ready-file", readyPath}, extra...)
	cmd := exec.Command(binPath, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	v := &venueProc{cmd: cmd, exited: make(chan struct{})}
	// Read the log to its end before Wait, which closes the pipe (os/exec):
	// the lines a process writes as it exits are the ones a test reads.
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			v.logMu.Lock()
			v.log.WriteString(sc.Text() + "\n")
			v.logMu.Unlock()
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait()
		close(v.exited)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(readyPath); err == nil {
			if err := json.Unmarshal(b, &v.ready); err != nil {
				v.kill()
				t.Fatalf("ready file: %v\n%s", err, b)
			}
			break
		}
		select {
		case <-v.exited:
			t.Fatalf("fixvenue exited before serving:\n%s", v.logs())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			v.kill()
			t.Fatalf("fixvenue did not start in 60 s:\n%s", v.logs())
		}
	}
	// The ready file is written after the line that says the venue serves,
	// and the log reaches the test through a pipe: once that line is read,
	// so is everything the start logged (loaded snapshots, warnings).
	for !strings.Contains(v.logs(), "fixvenue: FIX 4.4 on ") && !strings.Contains(v.logs(), "fixvenue: cluster node ") {
		if time.Now().After(deadline) {
			v.kill()
			t.Fatalf("fixvenue wrote its ready file, but its log never said it serves:\n%s", v.logs())
		}
		time.Sleep(5 * time.Millisecond)
	}
	v.fixAddr = v.ready.FIXAddr
	t.Cleanup(v.kill)
	return v
}

func (v *venueProc) logs() string {
	v.logMu.Lock()
	defer v.logMu.Unlock()
	return v.log.String()
}

// waitLogLine waits until a line of the log matches: the log reaches the
// test through a pipe a goroutine reads, so a line the venue wrote before
// a metric or an answer the test saw may still be on its way.
func (v *venueProc) waitLogLine(t *testing.T, what string, match func(line string) bool) {
	t.Helper()
	eventually(t, what, func() error {
		for _, line := range strings.Split(v.logs(), "\n") {
			if match(line) {
				return nil
			}
		}
		return fmt.Errorf("no such line in:\n%s", lastLines(v.logs(), 20))
	})
}

// stop sends SIGTERM and waits up to 30 s for the venue to exit.
func (v *venueProc) stop(t *testing.T) {
	t.Helper()
	if err := v.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-v.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("the venue did not stop on SIGTERM:\n%s", v.logs())
	}
}

// loadedSnapshot reports whether the venue started from a snapshot.
func (v *venueProc) loadedSnapshot() bool { return strings.Contains(v.logs(), `msg="snapshot loaded"`) }

// removeSnapshots removes the snapshot files (*.snap) of each directory.
func removeSnapshots(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".snap") {
				if err := os.Remove(filepath.Join(d, e.Name())); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// statusRequestsUntil asks c for the status of an order of symbol (35=H,
// each answered) every 100 ms until done reports true, for at most 15 s;
// false when the time ran out. A snapshot is taken only when commands came
// since the last one, so a test waiting for one keeps commands coming.
func statusRequestsUntil(t *testing.T, c *fixclient.Client, symbol string, done func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for n := 0; !done(); n++ {
		if time.Now().After(deadline) {
			return false
		}
		if _, err := orderStatus(c, symbol, fmt.Sprintf("w%d", n)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// orderStatus asks cl for the status of order id, a buy of symbol (35=H),
// and waits up to 10 s for the ExecutionReport that answers (11=id, 150=I).
func orderStatus(cl *fixclient.Client, symbol, id string) (*fixclient.Message, error) {
	if err := cl.Send("H", fixclient.F(11, id), fixclient.F(55, symbol), fixclient.F(54, "1")); err != nil {
		return nil, err
	}
	return cl.Expect(10*time.Second, "8", map[int]string{11: id, 150: "I"})
}

// readUntilClosed reads cl's messages in a goroutine, handing each to seen,
// until the connection ends (or stays silent for 20 s); done is closed then.
func readUntilClosed(cl *fixclient.Client, seen func(m *fixclient.Message)) (done <-chan struct{}) {
	d := make(chan struct{})
	go func() {
		defer close(d)
		for {
			m, err := cl.Read(20 * time.Second)
			if err != nil {
				return
			}
			seen(m)
		}
	}()
	return d
}

// tradingOrder is the n-th order of a trading loop: a limit buy of 1 ACME
// at a price that varies with n, GTC.
func tradingOrder(id string, n int) []fixclient.Field {
	return []fixclient.Field{fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"),
		fixclient.F(44, fmt.Sprintf("%d.%02d", 91+n%8, n%100)), fixclient.F(59, "1")}
}

// dayBuy is a DAY limit buy of 1 ACME at 95.00, below every sell the tests
// send, so it rests.
func dayBuy(id string) []fixclient.Field {
	return []fixclient.Field{fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"),
		fixclient.F(44, "95.00"), fixclient.F(59, "0")}
}

// restDayBuy sends dayBuy(id) on c and waits up to 10 s for its
// acceptance (150=0).
func restDayBuy(t *testing.T, c *fixclient.Client, id string) {
	t.Helper()
	if err := c.Send("D", dayBuy(id)...); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(10*time.Second, "8", map[int]string{11: id, 150: "0"}); err != nil {
		t.Fatal(err)
	}
}

// sendPacedOrder sends tradingOrder(id, n), then sleeps 2 ms: about 500
// orders/s per session, enough to have many commands in flight, bounded
// so that a test's cost does not depend on how fast the machine is.
func sendPacedOrder(cl *fixclient.Client, id string, n int) error {
	err := cl.Send("D", tradingOrder(id, n)...)
	if err == nil {
		time.Sleep(2 * time.Millisecond)
	}
	return err
}

// kill sends SIGKILL and waits for the process to be gone.
func (v *venueProc) kill() {
	if v.cmd.Process != nil {
		v.cmd.Process.Kill()
	}
	<-v.exited
}

// TestHelpAndUnknownCommand: asking for help prints the commands on standard
// output and exits 0; an unknown command or none prints them on standard
// error and exits 2.
func TestHelpAndUnknownCommand(t *testing.T) {
	cases := []struct {
		args     []string
		code     int
		inStdout bool
		extra    string
	}{
		{[]string{"help"}, 0, true, ""},
		{[]string{"-h"}, 0, true, ""},
		{[]string{"--help"}, 0, true, ""},
		{[]string{"-help"}, 0, true, ""},
		{nil, 2, false, ""},
		{[]string{"helpme"}, 2, false, `unknown command "helpme"`},
		{[]string{"help", "nope"}, 2, false, `fixvenue help: unknown command "nope"`},
	}
	for _, c := range cases {
		cmd := exec.Command(binPath, c.args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code {
			t.Errorf("%q: exit %d, want %d", c.args, code, c.code)
		}
		out, other := stdout.String(), stderr.String()
		if !c.inStdout {
			out, other = other, out
		}
		if !strings.Contains(out, "usage: fixvenue <command>") || !strings.Contains(out, "serve") || other != "" {
			t.Errorf("%q: usage on the wrong stream or missing: stdout %q, stderr %q", c.args, stdout.String(), stderr.String())
		}
		if c.extra != "" && !strings.Contains(stderr.String(), c.extra) {
			t.Errorf("%q: stderr %q lacks %q", c.args, stderr.String(), c.extra)
		}
	}
}
