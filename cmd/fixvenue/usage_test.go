package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fixvenue/fixvenue/bench/hdrplot"
)

// runCLI runs fixvenue with args in dir (a temporary directory when empty:
// a command that misread its arguments must not write beside the tests),
// with env added to the environment, and returns its exit code, stdout and
// stderr. A command still running after 30 s is killed: a fault that starts
// a venue or a long run then fails the test instead of hanging it.
func runCLI(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Errorf("%q still ran after 30 s", args)
	}
	return code, out.String(), errOut.String()
}

// TestHelpOfEveryCommand: -h on any command or subcommand prints its usage
// on standard output and exits 0, as the top-level -h does, and the usage
// lists what the command takes and nothing it ignores; the journal tools'
// and load's usage give their exit status, which scripts checking a
// journal or a rate act on.
func TestHelpOfEveryCommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args        []string
		has, hasNot []string
	}{
		{[]string{"serve", "-h"}, []string{"-ready-file"}, nil},
		{[]string{"journal", "-h"}, []string{"verify", "dump", "book", "--from", "--symbol", "Exit status: 0", "; 1 when", "; 2 for a usage error"}, nil},
		{[]string{"backup", "-h"}, []string{"-to", "-data", "-config", "Exit status: 0", "; 1 when", "; 2 for a"}, []string{"-from", "-symbol"}},
		{[]string{"journal", "verify", "-h"}, []string{"-data", "-config"}, []string{"-from", "-symbol"}},
		{[]string{"journal", "dump", "-h"}, []string{"-from"}, []string{"-symbol"}},
		{[]string{"journal", "book", "-h"}, []string{"-symbol"}, []string{"-from"}},
		{[]string{"md", "-h"}, []string{"watch", "book", "latency"}, nil},
		{[]string{"md", "watch", "-h"}, []string{"-symbol"}, []string{"the only format", "default true", "-timeout"}},
		{[]string{"md", "book", "-h"}, []string{"-symbol", "-timeout", "-json\n    \thas no effect"}, []string{"the only format", "default true"}},
		{[]string{"md", "latency", "-h"}, []string{"-duration"}, nil},
		{[]string{"admin", "-h"}, []string{"status", "band", "phase", "risk", "hash-token", "--tls", "--ca-file", "--cert-file", "--key-file"}, nil},
		{[]string{"admin", "halt", "-h"}, []string{"halt SYMBOL|all", "-reason", "-tls"}, []string{"-ref-price", "-session", "-limit"}},
		{[]string{"admin", "cancel", "-h"}, []string{"-session", "-account", "-instrument"}, []string{"-limit", "-ref-price"}},
		{[]string{"admin", "hash-token", "-h"}, []string{"[TOKEN]"}, nil},
		{[]string{"risk", "-h"}, []string{"usage: fixvenue risk show|kill|reset|limits", "-limit", "-value", "-session"},
			[]string{"admin risk", "cancel:", "-ref-price", "-tick-size"}},
		{[]string{"admin", "risk", "-h"}, []string{"usage: fixvenue admin risk show|kill|reset|limits"}, nil},
		{[]string{"load", "-h"}, []string{"-rate", "Exit status: 0 for a run that held", "; 3 for a run", "; 1 for", "; 2 for"}, nil},
		{[]string{"bench", "-h"}, []string{"pipeline", "plot", "echo", "table"}, []string{"unknown harness"}},
		{[]string{"bench", "pipeline", "-h"}, []string{"-rate", "spin | yield | park | spinpark"}, nil},
		{[]string{"bench", "plot", "-h"}, []string{"-out"}, nil},
		{[]string{"bench", "echo", "-h"}, []string{"-addr"}, nil},
		{[]string{"bench", "table", "-h"}, []string{"FILE.json"}, []string{"no such file"}},
		{[]string{"events", "-h"}, []string{"tail", "verify"}, nil},
		{[]string{"events", "tail", "-h"}, []string{"-subject", "-count"}, []string{"-data"}},
		{[]string{"events", "verify", "-h"}, []string{"-data"}, []string{"-subject", "-count"}},
		{[]string{"cluster", "-h"}, []string{"status", "transfer"}, nil},
		{[]string{"cluster", "status", "-h"}, []string{"-json"}, []string{"-to "}},
		{[]string{"cluster", "transfer", "-h"}, []string{"-to"}, []string{"-json"}},
		{[]string{"version", "-h"}, []string{"usage: fixvenue version"}, []string{"fixvenue dev"}},
		// "help COMMAND" is "COMMAND -h", where it printed the commands.
		{[]string{"help", "load"}, []string{"usage: fixvenue load [options]", "-rate"}, []string{"commands:"}},
		{[]string{"help", "journal", "dump"}, []string{"usage: fixvenue journal dump", "-from"}, []string{"-symbol"}},
		{[]string{"help", "admin", "instrument", "add"}, []string{"usage: fixvenue admin instrument add", "-tick-size"}, nil},
	} {
		code, out, errs := runCLI(t, "", nil, c.args...)
		if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: fixvenue ") {
			t.Errorf("%q: exit %d, want 0 with the usage on stdout\nstdout: %s\nstderr: %s", c.args, code, out, errs)
			continue
		}
		for _, s := range c.has {
			if !strings.Contains(out, s) {
				t.Errorf("%q: the usage lacks %q:\n%s", c.args, s, out)
			}
		}
		for _, s := range c.hasNot {
			if strings.Contains(out, s) {
				t.Errorf("%q: the usage has %q:\n%s", c.args, s, out)
			}
		}
	}
}

// TestPrintDefaultConfig: serve --print-default-config prints
// config/default.toml as it is, the commented starting point README names,
// so that an operator with the binary alone has it, and exits 0 starting
// nothing.
func TestPrintDefaultConfig(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile("../../config/default.toml")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", nil, "serve", "--print-default-config")
	if code != 0 || errs != "" || out != string(want) {
		t.Fatalf("serve --print-default-config: exit %d, stderr %q; stdout is config/default.toml: %v", code, errs, out == string(want))
	}
}

// TestAdminTokenIsNeverPrinted: the operator's token, from the environment,
// appears in no usage text (-h, a mistyped option), and it is still the
// token sent when --token is not given; --token replaces it.
func TestAdminTokenIsNeverPrinted(t *testing.T) {
	const secret = "env-secret-0123456789abcdef"
	env := []string{adminTokenEnv + "=" + secret}
	for _, args := range [][]string{{"admin", "halt", "ACME", "--reasn", "x"}, {"admin", "halt", "-h"}, {"admin", "-h"},
		{"risk", "-h"}, {"risk", "kill", "--nope"}, {"admin", "status", "--bogus"}, {"cluster", "transfer", "-h"},
		{"cluster", "transfer", "--bogus"}} {
		code, out, errs := runCLI(t, "", env, args...)
		if code == 1 || strings.Contains(out+errs, secret) {
			t.Errorf("%q: exit %d, and the token is printed:\nstdout: %s\nstderr: %s", args, code, out, errs)
		}
	}

	var mu sync.Mutex
	var auth []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte(`{"ready":true}`))
	}))
	defer api.Close()
	env = append(env, adminAddrEnv+"="+api.URL)
	for _, args := range [][]string{{"admin", "status"}, {"admin", "status", "--token", "flag-token-0123456789abcdef"}, {"admin", "status", "--token="}} {
		if code, out, errs := runCLI(t, "", env, args...); code != 0 {
			t.Fatalf("%q: exit %d\nstdout: %s\nstderr: %s", args, code, out, errs)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"Bearer " + secret, "Bearer flag-token-0123456789abcdef", ""}
	if strings.Join(auth, "|") != strings.Join(want, "|") {
		t.Fatalf("Authorization headers %q, want %q", auth, want)
	}
}

// TestAdminTokenNotSentInClearBeyondLoopback: the venue serves its admin
// API beyond loopback only over https, so a token for a plain http address
// that is not loopback is refused before anything is sent (exit 2), for the
// admin and risk commands alike; without a token, or over https, the call
// is made.
func TestAdminTokenNotSentInClearBeyondLoopback(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"admin", "status", "--addr", "192.0.2.10:9465", "--token", "secret-0123456789"},
		{"admin", "halt", "ACME", "--reason", "r", "--addr", "http://192.0.2.10:9465", "--token", "secret-0123456789"},
		{"risk", "show", "--addr", "[2001:db8::1]:9465", "--token", "secret-0123456789"},
	} {
		code, out, errs := runCLI(t, "", nil, args...)
		if code != 2 || out != "" || !strings.Contains(errs, "not sending the token in clear to") ||
			!strings.Contains(errs, "only over https (--tls, or an https:// --addr)") || strings.Contains(errs, "secret-0123456789") {
			t.Errorf("%q: exit %d, want 2 refusing to send the token in clear\nstdout: %s\nstderr: %s", args, code, out, errs)
		}
	}
	// On loopback the token goes over http, as make run serves it.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ready":true}`)) }))
	defer api.Close()
	for _, addr := range []string{api.URL, strings.Replace(api.URL, "127.0.0.1", "localhost", 1)} {
		if code, out, errs := runCLI(t, "", nil, "admin", "status", "--addr", addr, "--token", "secret-0123456789"); code != 0 {
			t.Errorf("status at %s with a token: exit %d\nstdout: %s\nstderr: %s", addr, code, out, errs)
		}
	}
}

// TestArgumentsAreNotIgnored: a word a command does not take is refused
// with a usage error naming it, instead of ending the flags there and
// running with every flag after it unread (serve then started on the demo
// configuration and its ports).
func TestArgumentsAreNotIgnored(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		word string
	}{
		{[]string{"serve", "extra", "--data", filepath.Join(dir, "elsewhere"), "--admin-addr", "off", "--metrics-addr", "off"}, "extra"},
		{[]string{"md", "book", "ACME", "--timeout", "1s"}, "ACME"},
		{[]string{"md", "latency", "extra", "--duration", "1ms"}, "extra"},
		{[]string{"cluster", "status", "FILE"}, "FILE"},
		{[]string{"events", "verify", "foo", "--data", dir}, "foo"},
		{[]string{"journal", "verify", "/path", "--data", dir}, "/path"},
		{[]string{"journal", "dump", "--data", dir, "extra"}, "extra"},
		{[]string{"load", "extra", "--duration", "1ms", "--warmup", "0s"}, "extra"},
		{[]string{"bench", "pipeline", "extra", "--duration", "1ms", "--warmup", "0s", "--quiet"}, "extra"},
		{[]string{"version", "extra"}, "extra"},
	} {
		code, out, errs := runCLI(t, dir, nil, c.args...)
		if code != 2 || !strings.Contains(errs, `unexpected argument "`+c.word+`"`) {
			t.Errorf("%q: exit %d, want 2 naming %q\nstdout: %s\nstderr: %s", c.args, code, c.word, out, errs)
		}
	}
	// The demo configuration's data directory is ./data.
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("serve with an unexpected argument ran on the demo configuration: %v", err)
	}
}

// TestOptionsBeforeTheCommand: a command line that gives an option before the
// command word of admin, journal, md, events, cluster or bench is told
// that the command comes first, with the command it names as the example,
// and exits 2 without acting or echoing the line (it may hold a token).
// (risk takes its options anywhere: its words are one command's arguments.)
func TestOptionsBeforeTheCommand(t *testing.T) {
	t.Parallel()
	const secret = "token-0123456789abcdef"
	for _, c := range []struct {
		args    []string
		example string
	}{
		{[]string{"admin", "--addr", "127.0.0.1:1", "--token", secret, "halt", "ACME", "--reason", "x"}, "fixvenue admin halt --addr …"},
		{[]string{"admin", "--json", "hash-token"}, "fixvenue admin hash-token --json …"},
		{[]string{"admin", "--json"}, "fixvenue admin COMMAND --json …"},
		{[]string{"journal", "--data", "d", "verify"}, "fixvenue journal verify --data …"},
		{[]string{"md", "--symbol", "ACME", "book"}, "fixvenue md book --symbol …"},
		{[]string{"md", "--duration", "1s", "latency"}, "fixvenue md latency --duration …"},
		{[]string{"events", "--nats", "nats://127.0.0.1:1", "tail"}, "fixvenue events tail --nats …"},
		{[]string{"cluster", "--config", "c.toml", "status"}, "fixvenue cluster status --config …"},
		{[]string{"bench", "--rate", "1", "pipeline"}, "fixvenue bench pipeline --rate …"},
	} {
		code, out, errs := runCLI(t, "", nil, c.args...)
		if code != 2 || out != "" || !strings.Contains(errs, "the command comes first, then its options ("+c.example+")") ||
			!strings.Contains(errs, "usage: fixvenue ") || strings.Contains(errs, secret) {
			t.Errorf("%q: exit %d, want 2 with the example %q and the usage, the token unprinted\nstdout: %s\nstderr: %s", c.args, code, c.example, out, errs)
		}
	}
}

// TestBenchOptionsAfterFiles: bench plot and table read their options
// after the file names as well (the flag package alone stops at the first
// file, and a mistyped option was opened as a file).
func TestBenchOptionsAfterFiles(t *testing.T) {
	dir := t.TempDir()
	h := hdrhistogram.New(1, 1_000_000, 3)
	for v := int64(1); v <= 1000; v++ {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := hdrplot.WriteHgrmFile(filepath.Join(dir, "a.hgrm"), h); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(dir, "a.svg")
	if code, out, errs := runCLI(t, dir, nil, "bench", "plot", "run=a.hgrm", "--out", svg, "--title", "T"); code != 0 {
		t.Fatalf("bench plot, --out after the file: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if _, err := os.Stat(svg); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI(t, dir, nil, "bench", "table", "a.json", "--bogus"); code != 2 || !strings.Contains(errs, "-bogus") ||
		strings.Contains(errs, "no such file") {
		t.Fatalf("bench table with a mistyped option: exit %d, want 2 naming it\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

// TestClusterNodeRefusesAFIXAddress: a cluster node listens for FIX on its
// [[cluster.peer]] fix_addr, where the other nodes send clients; a
// --fix-addr was silently ignored. It is refused before anything starts.
func TestClusterNodeRefusesAFIXAddress(t *testing.T) {
	dir := t.TempDir()
	node := filepath.Join("..", "..", "deploy", "cluster", "node1.toml")
	abs, err := filepath.Abs(node)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, nil, "serve", "--config", abs, "--data", filepath.Join(dir, "node1"), "--fix-addr", "127.0.0.1:0")
	if code != 2 || !strings.Contains(errs, "--fix-addr: a cluster node's FIX address is its [[cluster.peer]] fix_addr") {
		t.Fatalf("a cluster node given --fix-addr: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "node1")); !os.IsNotExist(err) {
		t.Fatalf("the refused node touched its data directory: %v", err)
	}
}

// TestClusterNeedsConfig: cluster status and transfer without --config say
// that --config is required (the usage's synopsis), not that "the
// configuration" (the embedded demo one, which nobody gave) has no
// [cluster].
func TestClusterNeedsConfig(t *testing.T) {
	for _, args := range [][]string{{"cluster", "status"}, {"cluster", "transfer", "--to", "2"}} {
		code, out, errs := runCLI(t, "", nil, args...)
		if code != 2 || !strings.Contains(errs, "--config FILE is required") {
			t.Errorf("%q: exit %d, want 2 saying --config is required\nstdout: %s\nstderr: %s", args, code, out, errs)
		}
	}
}

// TestClusterTransferTokenAHeaderCannotCarry: cluster transfer takes its
// token as fixvenue admin does (--token, else $FIXVENUE_ADMIN_TOKEN), and a
// token holding a control character is named as the problem, with where it
// came from, before any node is called.
func TestClusterTransferTokenAHeaderCannotCarry(t *testing.T) {
	cfg, err := filepath.Abs("../../deploy/cluster/node1.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env  []string
		args []string
		from string
	}{
		{env: []string{adminTokenEnv + "=cluster-demo-operator-token\r"}, from: "$" + adminTokenEnv},
		{args: []string{"--token", "cluster-demo-operator-token\n"}, from: "--token"},
	} {
		args := append([]string{"cluster", "transfer", "--config", cfg, "--to", "2"}, c.args...)
		code, out, errs := runCLI(t, "", c.env, args...)
		if code != 2 || out != "" || !strings.Contains(errs, "fixvenue cluster transfer: the token ("+c.from+") holds a control character") ||
			!strings.Contains(errs, "nothing was sent") {
			t.Errorf("token from %s: exit %d, stdout %q, stderr %q; want exit 2 naming the token", c.from, code, out, errs)
		}
	}
}

// TestToolsRefuseValuesThatCannotWork: a non-positive timeout or duration,
// an empty recovery address, a negative count and a subject NATS cannot
// take are usage errors naming the option; md book ended at once asking
// whether the venue ran, md latency printed a measurement of nothing,
// admin failed every call as timed out, events tail followed for ever
// with --count -1 and said "no responders" of a bad subject, and a --nats
// URL of another scheme was looked up as a host name.
func TestToolsRefuseValuesThatCannotWork(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"md", "book", "--timeout", "-1s"}, "--timeout must be positive, got -1s"},
		{[]string{"md", "book", "--timeout", "0s"}, "--timeout must be positive, got 0s"},
		{[]string{"md", "book", "--recovery-addr", ""}, "--recovery-addr is empty"},
		{[]string{"md", "watch", "--recovery-addr", " , "}, "--recovery-addr is empty"},
		{[]string{"md", "latency", "--duration", "0s"}, "--duration must be positive, got 0s"},
		{[]string{"admin", "status", "--timeout", "-1s"}, "--timeout must be positive, got -1s"},
		{[]string{"admin", "halt", "ACME", "--reason", "r", "--timeout", "0s"}, "--timeout must be positive, got 0s"},
		{[]string{"events", "tail", "--count", "-1"}, "--count must be 0 (follow) or more, got -1"},
		// Events are numbered from 1: it said event 0 had been removed from the stream.
		{[]string{"events", "tail", "--from", "0"}, "--from must be 1 or more (events are numbered from 1), got 0"},
		{[]string{"events", "tail", "--subject", "fixvenue..x"}, `--subject "fixvenue..x" is not a NATS subject`},
		{[]string{"events", "tail", "--subject", ""}, `--subject "" is not a NATS subject`},
		// Another scheme was dialled as a host name: exit 1, "no such host".
		{[]string{"events", "tail", "--nats", "bogus://x"}, `--nats: "bogus://x": scheme "bogus" is not one of nats, tls, ws, wss`},
		{[]string{"events", "verify", "--nats", " , "}, `--nats: " , " holds no URL`},
		// Each P costs memory and every stop of the world: 32768 took 17 s and
		// 900 MB for a 200 ms run.
		{[]string{"bench", "pipeline", "--procs", "100000", "--duration", "1ms", "--warmup", "0s", "--quiet"}, "procs 100000 is more than 1024"},
	} {
		code, out, errs := runCLI(t, dir, nil, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, want 2 saying %q\nstdout: %s\nstderr: %s", c.args, code, c.want, out, errs)
		}
	}
}

// TestLoadAndBenchRefuseNaN: a rate of NaN (which strconv parses) is
// refused like any rate outside the bounds, before a session is opened or a
// pipeline built, as is a --p99-max no run can stay under. A NaN rate passed
// the checks, since every comparison with NaN is false: load panicked sizing
// its tables, a ramp made no step and reported 0 orders/s held with exit 0,
// and bench pipeline ran as fast as possible, as for --rate 0.
func TestLoadAndBenchRefuseNaN(t *testing.T) {
	dir := t.TempDir()
	// Port 1 on loopback: nothing is to be dialled, and nothing would answer.
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"load", "--addr", "127.0.0.1:1", "--rate", "NaN", "--quiet"}, 2, "rate NaN outside (0, 1000000]"},
		{[]string{"load", "--addr", "127.0.0.1:1", "--ramp", "--rate", "NaN", "--quiet"}, 2, "a ramp needs a positive start rate"},
		{[]string{"load", "--addr", "127.0.0.1:1", "--ramp", "--rate", "10", "--ramp-max", "NaN", "--quiet"}, 2, "a ramp needs a positive start rate"},
		{[]string{"load", "--addr", "127.0.0.1:1", "--ramp", "--rate", "10", "--ramp-step", "NaN", "--quiet"}, 2, "a ramp needs a positive start rate"},
		{[]string{"load", "--addr", "127.0.0.1:1", "--p99-max", "0s", "--quiet"}, 2, "--p99-max must be positive, got 0s"},
		{[]string{"load", "--addr", "127.0.0.1:1", "--p99-max", "-1ms", "--quiet"}, 2, "--p99-max must be positive, got -1ms"},
		{[]string{"bench", "pipeline", "--rate", "NaN", "--duration", "1ms", "--warmup", "0s", "--quiet"}, 2, "rate NaN outside [0, 50000000]"},
	} {
		code, out, errs := runCLI(t, dir, nil, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) || strings.Contains(errs, "panic") {
			t.Errorf("%q: exit %d, want %d saying %q\nstdout: %s\nstderr: %s", c.args, code, c.code, c.want, out, errs)
		}
	}
}

// TestBenchTableAndEchoRefuseWhatTheyCannotUse: bench table refuses a JSON
// file that is not one run's result of load or bench pipeline (another
// object, a ramp's), naming it, where it printed a row of zeros and exited
// 0; bench echo refuses an empty --addr, which listened on every interface.
func TestBenchTableAndEchoRefuseWhatTheyCannotUse(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, f := range []string{write("other.json", `{"x":1}`), write("ramp.json", `{"steps":[],"held_rate_per_s":0,"p99_max_us":5000}`)} {
		code, out, errs := runCLI(t, dir, nil, "bench", "table", f)
		if code != 2 || out != "" || !strings.Contains(errs, f+": not the result of one run of load --json or bench pipeline --json") {
			t.Errorf("bench table %s: exit %d, want 2 naming it\nstdout: %s\nstderr: %s", f, code, out, errs)
		}
	}
	load := write("load.json", `{"sessions":4,"mix":"passive","rate_target_per_s":100}`)
	if code, out, errs := runCLI(t, dir, nil, "bench", "table", load); code != 0 || !strings.Contains(out, "| 4 | passive | 100 |") {
		t.Errorf("bench table of a load result: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if code, out, errs := runCLI(t, dir, nil, "bench", "echo", "--addr", ""); code != 2 || !strings.Contains(errs, "fixvenue bench echo: --addr is empty") {
		t.Errorf("bench echo --addr \"\": exit %d, want 2\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

// offlineTOML is a venue with no metrics, admin API or feed, for the tests
// of a start that is to be refused.
const offlineTOML = "[metrics]\naddr = \"\"\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n"

// serveRefusesFIFO checks that `fixvenue serve --config cfg` exits 1 naming
// path as a named pipe (what: which file it is), not hanging on it.
func serveRefusesFIFO(t *testing.T, cfg, path, what string) {
	t.Helper()
	code, _, stderr := runCLI(t, "", nil, "serve", "--config", cfg)
	if code != 1 || !strings.Contains(stderr, path+" is a named pipe (FIFO), not a regular file") {
		t.Errorf("serve with a named pipe for %s: exit %d, want 1 naming it\n%s", what, code, stderr)
	}
}

// TestJournalEntriesThatAreNotFiles: an entry of the journal directory
// named like a segment, an archived segment or a snapshot, or a terms.json,
// that is not a regular file is refused by the journal tools and the start,
// naming it. A named pipe hung them for ever (opening it to read waits for
// a writer), and a directory named like a snapshot was passed over without
// a word (journal/doc.go, "Segment files").
func TestJournalEntriesThatAreNotFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, offlineTOML)
	jdir := filepath.Join(dir, "data", "journal")
	if err := os.MkdirAll(filepath.Join(jdir, "archive"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, kind string
		make       func(string) error
	}{
		{"journal-00000000000000000000.seg", "a named pipe (FIFO)", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"archive/journal-00000000000000000000.seg.gz", "a named pipe (FIFO)", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"snapshot-00000000000000000007.snap", "a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"snapshot-00000000000000000007.snap", "a named pipe (FIFO)", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"../terms.json", "a named pipe (FIFO)", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
	} {
		path := filepath.Join(jdir, c.name)
		if err := c.make(path); err != nil {
			t.Fatal(err)
		}
		want := path + " is "
		for _, args := range [][]string{
			{"journal", "verify", "--config", cfg},
			{"journal", "dump", "--config", cfg},
			{"journal", "book", "--config", cfg},
			{"serve", "--config", cfg},
		} {
			code, _, stderr := runCLI(t, "", nil, args...)
			if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, c.kind) {
				t.Errorf("%q with %s %s: exit %d, want 1 naming it\n%s", args, c.kind, c.name, code, stderr)
			}
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServeRefusesAFIXStoreThatIsNotAFile: a session's FIX store that is a
// named pipe refuses the start, naming it (the start read it first and hung
// for ever without a word).
func TestServeRefusesAFIXStoreThatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, offlineTOML)
	stores := filepath.Join(dir, "data", "fixstore")
	if err := os.MkdirAll(stores, 0o755); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(stores, "FIX.4.4-VENUE-CLIENT1.fixstore")
	if err := syscall.Mkfifo(store, 0o644); err != nil {
		t.Fatal(err)
	}
	serveRefusesFIFO(t, cfg, store, "a FIX store")
}

// TestServeRefusesDataDirFilesThatAreNotFiles: a file of the data directory
// the start reads (the schedule's progress and phases, the end-of-day mark,
// the disabled sessions) that is a named pipe refuses the start, naming it;
// the start read it and hung for ever without a word.
func TestServeRefusesDataDirFilesThatAreNotFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, offlineTOML+`[schedule]
enabled = true
[[schedule.group]]
name = "all"
pre_open = "1h"
open = "2h"
close = "3h"
`)
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"schedule.state", "phases.json", "eod.pending", "sessions.disabled"} {
		path := filepath.Join(data, name)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
		serveRefusesFIFO(t, cfg, path, name)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// TestJournalToolsWithoutAJournalDirectory: the journal tools on a data
// directory whose journal is missing, or a file, say so, naming the path.
// (A file there was reported as a missing raft.snapshot, a cluster file.)
func TestJournalToolsWithoutAJournalDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"verify", "dump", "book"} {
		code, _, stderr := runCLI(t, "", nil, "journal", sub, "--data", dir)
		if code != 1 || !strings.Contains(stderr, "no journal at "+filepath.Join(dir, "journal")) {
			t.Errorf("journal %s without a journal: exit %d, %q", sub, code, stderr)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "journal"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"verify", "dump", "book"} {
		code, _, stderr := runCLI(t, "", nil, "journal", sub, "--data", dir)
		if code != 1 || !strings.Contains(stderr, "no journal at "+filepath.Join(dir, "journal")+": not a directory") {
			t.Errorf("journal %s with a file for its journal: exit %d, %q", sub, code, stderr)
		}
	}
}

// TestOutputThatCannotBeWritten: a command whose standard output cannot
// take what it prints (a full disk) exits 1 naming the write, as a journal
// it cannot read does. verify's line is what a script keeps and compares,
// and an exit 0 without it passed for a journal checked; serve
// --print-default-config and admin hash-token print what goes into a
// configuration file (> venue.toml, >> venue.toml), and exited 0 leaving
// the file partial or without the token's block.
func TestOutputThatCannotBeWritten(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"journal", "verify", "--data", dir},
		{"journal", "dump", "--data", dir},
		{"journal", "book", "--data", dir},
		{"serve", "--print-default-config"},
		{"admin", "hash-token", "0123456789abcdef0123"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, binPath, args...)
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = full, &stderr
		err := cmd.Run()
		cancel()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != 1 || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("%s with its output on a full disk: exit %d, %q", strings.Join(args[:2], " "), code, stderr.String())
		}
	}
}
