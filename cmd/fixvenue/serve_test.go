package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/internal/testcert"
)

// TestReadyFile runs `fixvenue serve --ready-file` on OS-chosen ports and
// checks that the file appears, names the process and the addresses it
// really serves on, and is gone after a clean stop.
func TestReadyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close() // the feed's destination; nobody needs to read it
	readyPath := filepath.Join(dir, "ready.json")
	cmd := exec.Command(binPath, "serve", "--data", filepath.Join(dir, "data"), "--log-level", "warn",
		"--fix-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
		"--md-addr", udp.LocalAddr().String(), "--md-recovery-addr", "127.0.0.1:0", "--ready-file", readyPath)
	logPath := filepath.Join(dir, "serve.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
	})
	log := func() string { b, _ := os.ReadFile(logPath); return string(b) }

	var ready readyInfo
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := os.ReadFile(readyPath)
		if err == nil {
			if err := json.Unmarshal(b, &ready); err != nil {
				t.Fatalf("ready file is not the JSON expected: %v\n%s", err, b)
			}
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("fixvenue exited (%v) before writing the ready file:\n%s", err, log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ready file after 60 s:\n%s", log())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ready.PID != cmd.Process.Pid {
		t.Errorf("pid %d, want %d", ready.PID, cmd.Process.Pid)
	}
	if ready.FeedAddr != udp.LocalAddr().String() {
		t.Errorf("feed_addr %q, want %q", ready.FeedAddr, udp.LocalAddr())
	}
	// The FIX and recovery addresses accept connections, the metrics address serves metrics.
	for name, addr := range map[string]string{"fix_addr": ready.FIXAddr, "recovery_addr": ready.RecoveryAddr} {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Errorf("%s %q: %v", name, addr, err)
			continue
		}
		c.Close()
	}
	if _, port, err := net.SplitHostPort(ready.FIXAddr); err != nil || port == "0" {
		t.Errorf("fix_addr %q is not a bound address", ready.FIXAddr)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(fmt.Sprintf("http://%s/metrics", ready.MetricsAddr))
	if err != nil {
		t.Fatalf("metrics_addr %q: %v", ready.MetricsAddr, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("metrics_addr %q: status %d", ready.MetricsAddr, resp.StatusCode)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".ready.json.tmp*")); len(left) > 0 {
		t.Errorf("temporary files left beside the ready file: %v", left)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("fixvenue stopped with %v:\n%s", err, log())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("fixvenue did not stop in 30 s after SIGTERM:\n%s", log())
	}
	if _, err := os.Stat(readyPath); !os.IsNotExist(err) {
		t.Errorf("ready file still there after a clean stop: %v", err)
	}
}

// TestReadyFileUnwritable: a ready file that cannot be written stops the
// venue with a clear error rather than leaving a script waiting, before it
// serves or writes anything (a missing directory is checked first).
func TestReadyFileUnwritable(t *testing.T) {
	dir := t.TempDir()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	cmd := exec.Command(binPath, "serve", "--data", filepath.Join(dir, "data"), "--log-level", "warn",
		"--fix-addr", "127.0.0.1:0", "--metrics-addr", "off", "--admin-addr", "off", "--md-addr", udp.LocalAddr().String(),
		"--md-recovery-addr", "127.0.0.1:0", "--ready-file", filepath.Join(dir, "missing", "ready.json"))
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("exit %v, want status 2:\n%s", err, out)
	}
	if !strings.Contains(string(out), "--ready-file") || !strings.Contains(string(out), "missing") {
		t.Fatalf("the error does not name the flag and the path:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the data directory was made before the ready file's was checked: %v", err)
	}
}

// TestReadyFileThatIsADirectory: a --ready-file naming a directory is
// refused before the data directory is made. The venue served, FIX open,
// and then stopped, exit 1, when the rename onto the directory failed.
func TestReadyFileThatIsADirectory(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	if err := os.Mkdir(ready, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := writeVenueConfig(t, dir, "%s", offlineTOML)
	serveRefusedFirst(t, "--ready-file DIR", dir, cfg, 2, "--ready-file: "+ready+" is a directory", "--ready-file", ready)
}

// TestServeRefusesExportSettingsThatCannotWork: export settings the
// connection to NATS would drop or fail on for ever are refused at the
// start, naming the key (README, "Event stream"): two kinds of
// credentials (one was dropped), a password without a user, credentials
// or TLS for the embedded server (TLS failed every connection), an
// nats_url of no URL (the client dialled nats://127.0.0.1:4222) or of
// another scheme, and TLS or credentials files that cannot be read, as
// the listeners' are.
func TestServeRefusesExportSettingsThatCannotWork(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	// An external NATS nothing listens on: a venue that started would
	// only pause its export.
	external := "enabled = true\nnats_url = \"nats://127.0.0.1:1\"\n"
	for _, c := range []struct{ export, want string }{
		{external + "user = \"u\"\ntoken = \"t\"\n", "export.user, export.token: give a creds file, or user and password, or a token, not several"},
		{external + "password = \"p\"\n", "export.password: needs export.user"},
		{"enabled = true\nembedded_addr = \"127.0.0.1:0\"\ntls_ca_file = \"ca.pem\"\n", "export.tls_ca_file: credentials and TLS are for an external NATS"},
		{"enabled = true\nembedded_addr = \"127.0.0.1:0\"\ntoken = \"t\"\n", "export.token: credentials and TLS are for an external NATS"},
		{"enabled = true\nnats_url = \" , \"\n", `export.nats_url: " , " holds no URL`},
		{"enabled = true\nnats_url = \"http://127.0.0.1:1\"\n", `scheme "http" is not one of nats, tls, ws, wss`},
		{external + fmt.Sprintf("tls_ca_file = %q\n", missing), "export.tls_ca_file: open " + missing},
		{external + fmt.Sprintf("tls_ca_file = %q\n", notPEM), "export.tls_ca_file: " + notPEM + " holds no PEM certificate"},
		{external + fmt.Sprintf("tls_cert_file = %q\ntls_key_file = %q\n", notPEM, notPEM), "export.tls_cert_file, export.tls_key_file:"},
		{external + fmt.Sprintf("creds_file = %q\n", missing), "export.creds_file: open " + missing},
	} {
		cfg := writeVenueConfig(t, t.TempDir(), "[metrics]\naddr = \"\"\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n[export]\n%s", c.export)
		code, _, errs := runCLI(t, dir, nil, "serve", "--config", cfg)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("[export] %q: exit %d, want an error saying %q\nstderr: %s", c.export, code, c.want, errs)
		}
	}
}

// TestServeRefusesARiskReportIntervalBelowItsMinimum: each report is a
// journaled command, so risk.report_interval = "1us" journaled about 13 MB
// a second on an idle venue; below 10 ms the start is refused naming the
// key (README "Risk limits").
func TestServeRefusesARiskReportIntervalBelowItsMinimum(t *testing.T) {
	dir := t.TempDir()
	for _, interval := range []string{"1us", "9ms"} {
		cfg := writeVenueConfig(t, t.TempDir(), "[metrics]\naddr = \"\"\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n"+
			"[risk]\nreport_interval = %q\n[risk.sessions]\nmax_order_qty = 100\n", interval)
		code, _, errs := runCLI(t, dir, nil, "serve", "--config", cfg)
		if code == 0 || !strings.Contains(errs, "risk.report_interval: ") || !strings.Contains(errs, " is below 10ms") {
			t.Errorf("report_interval %s: exit %d, want the start refused naming the key\nstderr: %s", interval, code, errs)
		}
	}
}

// TestServeRefusesAMatcherCPUItCannotRunOn: an engine.matcher_cpu the
// process may not run on refuses the start, naming the key and the CPUs it
// may run on. The venue started, warned that the pin failed, and its
// start-up line and fixvenue_matcher_thread_info said "pinned to CPU 1023"
// (README, "The matcher's thread").
func TestServeRefusesAMatcherCPUItCannotRunOn(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.NumCPU() >= 1024 {
		t.Skip("needs Linux with fewer than 1,024 CPUs")
	}
	cfg := writeVenueConfig(t, t.TempDir(), "[metrics]\naddr = \"\"\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n[engine]\nmatcher_cpu = 1023\n")
	code, _, errs := runCLI(t, "", nil, "serve", "--config", cfg)
	if code != 1 || !strings.Contains(errs, "engine.matcher_cpu: CPU 1023 is not one this process may run on (CPUs ") {
		t.Errorf("matcher_cpu = 1023: exit %d, want 1 naming the key\nstderr: %s", code, errs)
	}
}

// TestServeRefusesIntervalsBelowTheirMinimum: an interval that paces
// periodic work has a lower bound, and a start below it is refused naming
// the key (journal.snapshot_interval = "1us" wrote a full snapshot after
// every command, hundreds a second).
func TestServeRefusesIntervalsBelowTheirMinimum(t *testing.T) {
	dir := t.TempDir()
	const base = "[metrics]\naddr = \"\"\n[admin]\naddr = \"\"\n"
	for _, tc := range []struct{ toml, want string }{
		{"[marketdata]\nenabled = false\n[journal]\nsnapshot_interval = \"1us\"\n", "journal.snapshot_interval: 1µs is below 50ms"},
		{"[marketdata]\nenabled = false\n[journal]\nsnapshot_interval = \"49ms\"\n", "journal.snapshot_interval: 49ms is below 50ms"},
		{"[marketdata]\nenabled = false\n[journal]\nfix_store_sync = \"1us\"\n", "journal.fix_store_sync: 1µs is outside [10ms, 10s]"},
		{"[marketdata]\nenabled = false\n[export]\nbatch_interval = \"1us\"\n", "export.batch_interval: 1µs is outside [1ms, 1s]"},
		{"[marketdata]\nfeed_addr = \"127.0.0.1:0\"\nrecovery_addr = \"127.0.0.1:0\"\nheartbeat_interval = \"1us\"\n",
			"marketdata.heartbeat_interval: 1µs is below 1ms"},
	} {
		cfg := writeVenueConfig(t, t.TempDir(), "%s", base+tc.toml)
		code, _, errs := runCLI(t, dir, nil, "serve", "--config", cfg)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, want the start refused with %q\nstderr: %s", tc.toml, code, tc.want, errs)
		}
	}
}

// TestServeEmbeddedNATSAddrTaken: an export.embedded_addr another process
// listens on fails the start at once, saying the address is in use (the
// start waited 30 s for the embedded server, then said it was not ready).
func TestServeEmbeddedNATSAddrTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, "[metrics]\naddr = \"\"\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n[export]\nenabled = true\nembedded_addr = %q\n",
		l.Addr().String())
	start := time.Now()
	code, _, errs := runCLI(t, dir, nil, "serve", "--config", cfg)
	if took := time.Since(start); code == 0 || !strings.Contains(errs, "export.embedded_addr") ||
		!strings.Contains(errs, "address already in use") || took > 10*time.Second {
		t.Fatalf("after %s: exit %d, want at once an error naming export.embedded_addr and the address in use\nstderr: %s", took, code, errs)
	}
}

// TestServeRefusesQuickFIXValuesItCannotParse: a QuickFIX/Go setting's
// value that QuickFIX/Go cannot parse, or one of a pair given alone, is
// refused when the configuration is loaded, naming the key, before the
// data directory is made. QuickFIX/Go read them only when the acceptor was
// built, after the journal's replay: the start failed there with exit 1
// and its words alone (`quickfix acceptor: "maybe" is invalid for
// ResetOnLogon`), having made the data directory (config/doc.go).
func TestServeRefusesQuickFIXValuesItCannotParse(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"[session_defaults.quickfix]\nResetOnLogon = \"maybe\"\n", `session_defaults.quickfix.ResetOnLogon: "maybe" is not Y or N`},
		{"[session_defaults.quickfix]\nTimeStampPrecision = \"FOO\"\n", `session_defaults.quickfix.TimeStampPrecision: "FOO" is not SECONDS, MILLIS, MICROS or NANOS`},
		{"[[session]]\ncomp_id = \"A\"\nquickfix = { MaxLatency = 0 }\n", `session[0].quickfix.MaxLatency: "0" is not a whole number of at least 1`},
		{"[[session]]\ncomp_id = \"A\"\nquickfix = { StartTime = \"08:00\", EndTime = \"17:00:00\" }\n", `session[0].quickfix.StartTime: "08:00" is not a time of day HH:MM:SS`},
		{"[[session]]\ncomp_id = \"A\"\nquickfix = { StartTime = \"08:00:00\" }\n", "session[0].quickfix: StartTime and EndTime are given together or not at all"},
		{"[[session]]\ncomp_id = \"A\"\nquickfix = { HeartBtIntOverride = true, HeartBtInt = \"abc\" }\n", `session[0].quickfix.HeartBtInt: "abc" is not a whole number of at least 1`},
	} {
		dir := t.TempDir()
		cfg := writeVenueConfig(t, dir, "%s", offlineTOML+c.toml)
		serveRefusedFirst(t, c.toml, dir, cfg, 2, c.want)
	}
}

// serveRefusedFirst runs `fixvenue serve --config cfg flags...` and checks
// that it exits code saying want without having made dir's data directory:
// a configuration refused before anything is touched (config/doc.go).
func serveRefusedFirst(t *testing.T, what, dir, cfg string, code int, want string, flags ...string) {
	t.Helper()
	got, _, errs := runCLI(t, "", nil, append([]string{"serve", "--config", cfg}, flags...)...)
	if got != code || !strings.Contains(errs, want) {
		t.Errorf("%s: exit %d, want %d saying %q\nstderr: %s", what, got, code, want, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: the refused start made the data directory: %v", what, err)
	}
}

// TestServeRefusesTwoListenersAtOneAddress: two listeners configured (or
// given by flags) at one address are refused before the data directory is
// made, naming both keys. The start went as far as the journal's replay
// and then said "address already in use", as if another process held the
// port (config/doc.go).
func TestServeRefusesTwoListenersAtOneAddress(t *testing.T) {
	// A port nothing listens at: were the start not refused, it would fail
	// on the second bind, not hang.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	l.Close()
	for _, c := range []struct {
		toml  string
		flags []string
		want  string
	}{
		{fmt.Sprintf("[fix]\naddr = %q\n[metrics]\naddr = %q\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n", addr, "localhost:"+port), nil,
			`metrics.addr: "localhost:` + port + `" is also fix.addr: two listeners cannot share an address`},
		{fmt.Sprintf("[fix]\naddr = %q\n[metrics]\naddr = \"\"\n[admin]\naddr = %q\n[marketdata]\nenabled = false\n", "0.0.0.0:"+port, addr), nil,
			`admin.addr: "` + addr + `" is also fix.addr`},
		// A port written with a leading zero is the same port.
		{fmt.Sprintf("[fix]\naddr = %q\n[metrics]\naddr = %q\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n", addr, "127.0.0.1:0"+port), nil,
			`metrics.addr: "127.0.0.1:0` + port + `" is also fix.addr`},
		{offlineTOML, []string{"--fix-addr", addr, "--admin-addr", addr},
			`admin.addr: "` + addr + `" is also fix.addr: two listeners cannot share an address (after the address flags)`},
	} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "venue.toml")
		text := fmt.Sprintf("[venue]\ndata_dir = %q\n", filepath.Join(dir, "data")) + c.toml
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		serveRefusedFirst(t, fmt.Sprintf("%s %q", c.toml, c.flags), dir, cfg, 2, c.want, c.flags...)
	}
}

// TestServeMarketDataAddressesNamedByTheirKeys: a feed destination the
// feed would refuse (neither loopback nor multicast, or no host) is refused
// before the data directory is made, naming the key or the flag; the feed
// refused it after the data directory was made, asking to "set
// AllowNonLoopback", which no key sets. A recovery address another process
// holds fails the start naming marketdata.recovery_addr, as fix.addr and
// metrics.addr are named.
func TestServeMarketDataAddressesNamedByTheirKeys(t *testing.T) {
	const base = "[metrics]\naddr = \"\"\n[admin]\naddr = \"\"\n"
	for _, c := range []struct {
		toml  string
		flags []string
		want  string
	}{
		{"[marketdata]\nfeed_addr = \"10.1.2.3:9500\"\nrecovery_addr = \"127.0.0.1:0\"\n", nil,
			"marketdata.feed_addr: 10.1.2.3:9500 is neither a loopback address nor a multicast group"},
		{"[marketdata]\nfeed_addr = \":9500\"\nrecovery_addr = \"127.0.0.1:0\"\n", nil, `marketdata.feed_addr: ":9500" names no host`},
		{"[marketdata]\nrecovery_addr = \"127.0.0.1:0\"\n", []string{"--md-addr", "0.0.0.0:9500"},
			"--md-addr: 0.0.0.0:9500 is neither a loopback address nor a multicast group"},
	} {
		dir := t.TempDir()
		cfg := writeVenueConfig(t, dir, "%s", base+c.toml)
		serveRefusedFirst(t, c.want, dir, cfg, 2, c.want, c.flags...)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := writeVenueConfig(t, t.TempDir(), base+"[marketdata]\nfeed_addr = \"127.0.0.1:0\"\nrecovery_addr = %q\n", l.Addr().String())
	code, _, errs := runCLI(t, "", nil, "serve", "--config", cfg)
	if want := "marketdata.recovery_addr: marketdata: recovery listener: listen tcp " + l.Addr().String(); code != 1 || !strings.Contains(errs, want) {
		t.Errorf("recovery_addr in use: exit %d, want 1 saying %q\nstderr: %s", code, want, errs)
	}
}

// TestServeRefusesAClientCAFileOfNoCertificate: a tls_client_ca_file that
// holds no certificate (a key given for it, say) is refused before the
// data directory is made, naming the key, on the FIX and admin listeners of
// a venue and on a cluster node. A venue took it until the listener was
// made, after the replay ("fix.addr: edge: TLS client CA … no
// certificate"), and a cluster node checked none of its TLS files before
// its replica was open (config/doc.go).
func TestServeRefusesAClientCAFileOfNoCertificate(t *testing.T) {
	certs := t.TempDir()
	testcert.NewCA(t, "venue CA").Issue(t, "venue", true).WriteFiles(t, certs, "server")
	crt, key := filepath.Join(certs, "server.crt"), filepath.Join(certs, "server.key")
	tlsKeys := fmt.Sprintf("tls_cert_file = %q\ntls_key_file = %q\ntls_client_ca_file = %q\n", crt, key, key)
	var peers strings.Builder
	for id := 1; id <= 3; id++ {
		fmt.Fprintf(&peers, "[[cluster.peer]]\nid = %d\nraft_addr = \"127.0.0.1:0\"\nfix_addr = \"127.0.0.1:0\"\nstatus_addr = \"127.0.0.1:0\"\n", id)
	}
	for _, c := range []struct{ name, toml, want string }{
		{"fix", "[metrics]\naddr = \"\"\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n[fix]\n" + tlsKeys,
			"fix.tls_client_ca_file: " + key + " holds no PEM certificate"},
		{"admin", "[metrics]\naddr = \"\"\n[marketdata]\nenabled = false\n[fix]\naddr = \"127.0.0.1:0\"\n[admin]\naddr = \"127.0.0.1:0\"\n" + tlsKeys,
			"admin.tls_client_ca_file: " + key + " holds no PEM certificate"},
		{"cluster node", "[metrics]\naddr = \"\"\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n[fix]\n" + tlsKeys +
			"[cluster]\ncluster_id = 7\nnode_id = 1\n" + peers.String(),
			"fix.tls_client_ca_file: " + key + " holds no PEM certificate"},
	} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "venue.toml")
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[venue]\ndata_dir = %q\n", filepath.Join(dir, "data"))+c.toml), 0o600); err != nil {
			t.Fatal(err)
		}
		serveRefusedFirst(t, c.name, dir, cfg, 1, c.want)
	}
}

// TestServeRefusesABadDefaultSourceAddress: an entry of
// session_defaults.allowed_source_addresses that is not an IP or a CIDR
// network is refused when the configuration is loaded, naming that key, as
// a session's own are. It was not checked there: the start failed after
// the replay, the data directory made, naming session[0] under fix.addr
// (config/doc.go).
func TestServeRefusesABadDefaultSourceAddress(t *testing.T) {
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, "%s", offlineTOML+"[session_defaults]\nallowed_source_addresses = [\"10.0.0.0/8\", \"bogus\"]\n")
	serveRefusedFirst(t, "allowed_source_addresses", dir, cfg, 2, `session_defaults.allowed_source_addresses: "bogus" is not an IP or CIDR`)
}

// TestServeRefusesWhatTheMatcherAndTheFIXStoresWouldRefuse: a price band
// wider in ticks than a book side holds, and a venue CompID too long to
// name a FIX store file, are refused when the configuration is loaded,
// naming the key, before the data directory is made. The matcher refused
// the band, and the FIX store its file name, after the data directory was
// made and locked (and the journal replayed, for the store), exit 1, in
// words that named neither the key nor the file ("core: invalid config:
// the band spans 4000001 ticks, more than LevelsPerSideMax 1048576").
func TestServeRefusesWhatTheMatcherAndTheFIXStoresWouldRefuse(t *testing.T) {
	for _, c := range []struct{ venue, toml, want string }{
		{"", "[[instrument]]\nid = 1\nsymbol = \"BIG\"\ntick_size = \"0.0001\"\nlot_size = 1\nmin_qty = 1\nmax_qty = 1000\nref_price = \"1000.00\"\nband_percent = 20\n",
			"instrument[0].band_percent: 20% around ref_price 1000.00 spans 4000001 ticks of tick_size 0.0001"},
		// export.venue set: the CompID is not the export's stream name, which
		// has a bound of its own.
		{"sender_comp_id = \"" + strings.Repeat("V", 300) + "\"\n", "[export]\nvenue = \"V\"\n", `venue.sender_comp_id: "VVVV`},
	} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "venue.toml")
		text := fmt.Sprintf("[venue]\ndata_dir = %q\n%s[fix]\naddr = \"127.0.0.1:0\"\n%s%s", filepath.Join(dir, "data"), c.venue, offlineTOML, c.toml)
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		serveRefusedFirst(t, c.want, dir, cfg, 2, c.want)
	}
}

// TestServeRefusesAConfigThatIsNotARegularFile: --config naming a device,
// a named pipe or a directory, or a file beyond config.ConfigBytesMax, is
// refused at once naming it. /dev/zero grew the process until it ran out
// of memory, and a named pipe no one wrote to hung the start without a
// word (config/doc.go).
func TestServeRefusesAConfigThatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "venue.toml")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, []byte("[venue]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, config.ConfigBytesMax+1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "/dev/zero is a device, not a regular file"},
		{pipe, pipe + " is a named pipe (FIFO), not a regular file"},
		{dir, dir + " is a directory, not a regular file"},
		{big, fmt.Sprintf("%s: %d bytes, more than a configuration file may hold", big, config.ConfigBytesMax+1)},
	} {
		code, _, errs := runCLI(t, dir, nil, "serve", "--config", c.path)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("--config %s: exit %d, want 2 saying %q\nstderr: %s", c.path, code, c.want, errs)
		}
	}
}

// TestServeRefusesAnEmbeddedNATSBeyondLoopback: the embedded NATS server
// takes neither TLS nor users, so an export.embedded_addr that is not a
// loopback address is refused naming the key (config/export.go, Export).
// The venue served the whole event stream on 0.0.0.0 to anyone, who could
// publish into it too.
func TestServeRefusesAnEmbeddedNATSBeyondLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		dir := t.TempDir()
		cfg := writeVenueConfig(t, dir, "%s[export]\nenabled = true\nembedded_addr = %q\n", offlineTOML, addr)
		serveRefusedFirst(t, "embedded_addr "+addr, dir, cfg, 2, fmt.Sprintf("export.embedded_addr: %q is not a loopback address", addr))
	}
}

// TestClusterNodeRefusesABadSecretFileFirst: a cluster.secret_file that is
// missing, too short, too large or not a regular file stops a node before
// its data directory is made,
// naming the key; the node made its FIX stores and journal directory
// first (cluster/doc.go names the secret).
func TestClusterNodeRefusesABadSecretFileFirst(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.secret")
	if err := os.WriteFile(short, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var peers strings.Builder
	for id := 1; id <= 3; id++ {
		fmt.Fprintf(&peers, "[[cluster.peer]]\nid = %d\nraft_addr = \"127.0.0.1:0\"\nfix_addr = \"127.0.0.1:0\"\nstatus_addr = \"127.0.0.1:0\"\n", id)
	}
	// A named pipe no one writes to hung the start, and a large file (or
	// /dev/zero, which grew the node until it ran out of memory) was read
	// whole.
	pipe := filepath.Join(dir, "pipe.secret")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.secret")
	if err := os.WriteFile(big, bytes.Repeat([]byte("0123456789abcdef"), config.ClusterSecretFileBytesMax/16+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{filepath.Join(dir, "missing"), "cluster.secret_file: stat " + filepath.Join(dir, "missing") + ": no such file"},
		{short, "cluster.secret_file: " + short + " holds 5 bytes, at least 16 needed"},
		{pipe, "cluster.secret_file: " + pipe + " is a named pipe (FIFO), not a regular file"},
		{dir, "cluster.secret_file: " + dir + " is a directory, not a regular file"},
		{big, fmt.Sprintf("cluster.secret_file: %s holds more than %d bytes", big, config.ClusterSecretFileBytesMax)},
	} {
		node := t.TempDir()
		cfg := writeVenueConfig(t, node, "%s[cluster]\ncluster_id = 7\nnode_id = 1\nsecret_file = %q\n%s", offlineTOML, c.file, peers.String())
		serveRefusedFirst(t, c.file, node, cfg, 1, c.want)
	}
}

// TestServeRefusesATLSFileThatIsNotARegularFile: a certificate, key or CA
// file the configuration names that is a device or a named pipe is refused
// before the data directory is made, naming the key, as the configuration
// file is: each was read whole, so /dev/zero grew the process until it ran
// out of memory, and a named pipe no one wrote to hung the start
// (config/doc.go).
func TestServeRefusesATLSFileThatIsNotARegularFile(t *testing.T) {
	certs := t.TempDir()
	testcert.NewCA(t, "venue CA").Issue(t, "venue", true).WriteFiles(t, certs, "server")
	crt, key := filepath.Join(certs, "server.crt"), filepath.Join(certs, "server.key")
	pipe := filepath.Join(certs, "ca.pem")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, toml, want string }{
		{"fix CA", fmt.Sprintf("[fix]\ntls_cert_file = %q\ntls_key_file = %q\ntls_client_ca_file = %q\n", crt, key, pipe),
			"fix.tls_client_ca_file: " + pipe + " is a named pipe (FIFO), not a regular file"},
		{"admin key", fmt.Sprintf("[fix]\naddr = \"127.0.0.1:0\"\n[admin]\naddr = \"127.0.0.1:0\"\ntls_cert_file = %q\ntls_key_file = %q\n", crt, pipe),
			"admin.tls_key_file: " + pipe + " is a named pipe (FIFO), not a regular file"},
	} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "venue.toml")
		text := fmt.Sprintf("[venue]\ndata_dir = %q\n[metrics]\naddr = \"\"\n[marketdata]\nenabled = false\n", filepath.Join(dir, "data")) + c.toml
		if !strings.Contains(c.toml, "[admin]") {
			text += "[admin]\naddr = \"\"\n"
		}
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCLI(t, "", nil, "serve", "--config", cfg)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, want 1 saying %q\nstderr: %s", c.name, code, c.want, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, "data")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the refused start made the data directory: %v", c.name, err)
		}
	}
}

// TestServeRefusesAPerInstrumentRiskLimitOutOfBounds: a per-instrument
// risk limit above the largest limit (or 0) is refused as the subject's
// limits are, naming the table and the key (README "Risk limits"); one
// above it passed the configuration's checks and failed the start with
// the matcher's words ("instrument 1: limit … is outside [0, …]").
func TestServeRefusesAPerInstrumentRiskLimitOutOfBounds(t *testing.T) {
	dir := t.TempDir()
	const base = "[metrics]\naddr = \"\"\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n"
	for _, tc := range []struct{ toml, want string }{
		{"[[risk.account]]\nname = \"FUND\"\n[[risk.account.instrument]]\nsymbol = \"ACME\"\nmax_position = 9223372036854775807\n",
			"risk.account[0].instrument[0].max_position: 9223372036854775807 is outside [1, 4611686018427387902]"},
		{"[risk.sessions]\n[[risk.sessions.instrument]]\nsymbol = \"ACME\"\nmax_order_qty = 0\n",
			"risk.sessions.instrument[0].max_order_qty: 0 is outside [1, 4611686018427387902]"},
	} {
		cfg := writeVenueConfig(t, t.TempDir(), "%s", base+tc.toml)
		code, _, errs := runCLI(t, dir, nil, "serve", "--config", cfg)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, want the start refused with %q\nstderr: %s", tc.toml, code, tc.want, errs)
		}
	}
}

// TestAutoWaitCountsCPUsNotPs: "auto" chooses the matcher's wait by the CPUs
// the process may run on, not by GOMAXPROCS alone. With GOMAXPROCS=8 and
// the process held to two CPUs, the matcher parks; it spun, a spinning
// thread on one of two cores, and 5,000 orders/s waited 10 ms at the median
// (README, "The matcher's thread").
func TestAutoWaitCountsCPUsNotPs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux to hold the process to two CPUs")
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var two unix.CPUSet
	for cpu := 0; cpu < len(set)*64 && two.Count() < 2; cpu++ {
		if set.IsSet(cpu) {
			two.Set(cpu)
		}
	}
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, "[metrics]\naddr = \"\"\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n")
	readyPath := filepath.Join(dir, "ready.json")
	cmd := exec.Command(binPath, "serve", "--config", cfg, "--log-level", "info", "--ready-file", readyPath)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=8")
	var stderr lockedbuf.Buffer
	cmd.Stderr = &stderr
	// A child starts with the CPUs of the thread that forks it: hold this
	// thread to two while it does.
	runtime.LockOSThread()
	if err := unix.SchedSetaffinity(0, &two); err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &set); rerr != nil {
		t.Fatal(rerr) // the thread stays locked, and goes with the test's goroutine
	}
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr.String(), `msg="fixvenue serving"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no serving line in 60 s:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := fmt.Sprintf(`wait=park matcher_thread_locked=true matcher_thread="auto: %d CPUs (below 4`, two.Count())
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("GOMAXPROCS=8 on %d CPUs: want the serving line to say %s\n%s", two.Count(), want, stderr.String())
	}
}

// TestHeapGoalBoundedAtStart: with the default bounds the venue's live
// heap, its pools, is over a gigabyte, and the collector's goal is set to
// it plus engine.gc_headroom_bytes: GOGC below the runtime's 100. GOGC set
// in the environment is left as it is.
func TestHeapGoalBoundedAtStart(t *testing.T) {
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, "[marketdata]\nenabled = false\n")
	t.Setenv("GOGC", "") // restored when the test ends
	os.Unsetenv("GOGC")
	gogc := func(v *venueProc) float64 {
		return metricstest.Float(t, metricstest.Scrape(t, v.ready.MetricsAddr), "go_gc_gogc_percent")
	}

	v := startVenue(t, cfg, "--metrics-addr", "127.0.0.1:0")
	if got := gogc(v); got < 1 || got >= 100 {
		t.Errorf("GOGC %v with the default headroom, want below 100:\n%s", got, v.logs())
	}
	if !strings.Contains(v.logs(), `msg="heap goal bounded"`) {
		t.Errorf("no log line of the heap goal:\n%s", v.logs())
	}
	v.stop(t)

	os.Setenv("GOGC", "150")
	v = startVenue(t, cfg, "--metrics-addr", "127.0.0.1:0")
	if got := gogc(v); got != 150 {
		t.Errorf("GOGC %v with GOGC=150 in the environment, want 150", got)
	}
	if !strings.Contains(v.logs(), "engine.gc_headroom_bytes not applied: GOGC is set in the environment") {
		t.Errorf("no log line saying the environment's GOGC was kept:\n%s", v.logs())
	}
	v.stop(t)
}

// TestServeRefusesTestHooksBeyondLoopback: metrics.test_hooks (POST
// /test/seqnums, which sets any session's sequence numbers without a
// token) on a metrics address beyond loopback, configured or given by
// --metrics-addr, is refused before the data directory is made; it was
// served to anyone reaching the listener.
func TestServeRefusesTestHooksBeyondLoopback(t *testing.T) {
	for _, c := range []struct {
		toml  string
		flags []string
		want  string
	}{
		{"[metrics]\naddr = \"0.0.0.0:0\"\ntest_hooks = true\n", nil, `metrics.test_hooks: POST /test/seqnums sets any session's sequence numbers without a token: it is served on a loopback metrics.addr only, not "0.0.0.0:0"`},
		{"[metrics]\naddr = \"127.0.0.1:0\"\ntest_hooks = true\n", []string{"--metrics-addr", "0.0.0.0:0"}, `not "0.0.0.0:0" (after --metrics-addr)`},
	} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "venue.toml")
		text := fmt.Sprintf("[venue]\ndata_dir = %q\n[fix]\naddr = \"127.0.0.1:0\"\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n", filepath.Join(dir, "data")) + c.toml
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		serveRefusedFirst(t, fmt.Sprintf("%s %q", c.toml, c.flags), dir, cfg, 2, c.want, c.flags...)
	}
}

// TestServeAddressInUseNamesTheFlag: a listener whose address, given by a
// flag, another process holds fails the start naming the flag; it was
// named by the configuration key (fix.addr), which the file may not hold.
// An address from the file is still named by its key.
func TestServeAddressInUseNamesTheFlag(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	held := l.Addr().String()
	for _, c := range []struct {
		toml  string
		flags []string
		want  string
	}{
		{offlineTOML, []string{"--fix-addr", held}, "fixvenue serve: --fix-addr: edge: listen tcp " + held},
		{offlineTOML, []string{"--metrics-addr", held}, "fixvenue serve: --metrics-addr: listen tcp " + held},
		{fmt.Sprintf("[metrics]\naddr = %q\n[admin]\naddr = \"\"\n[marketdata]\nenabled = false\n", held), []string{"--fix-addr", "127.0.0.1:0"},
			"fixvenue serve: metrics.addr: listen tcp " + held},
	} {
		cfg := writeVenueConfig(t, t.TempDir(), "%s", c.toml)
		code, _, errs := runCLI(t, "", nil, append([]string{"serve", "--config", cfg}, c.flags...)...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, want 1 saying %q\nstderr: %s", c.flags, code, c.want, errs)
		}
	}
}
