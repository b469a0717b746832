package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadyFile runs `fixvenue serve --ready-file` on OS-chosen ports and
// checks that the file appears, names the process and the addresses it
// really serves on, and is gone after a clean stop.
func TestReadyFile(t *testing.T) {
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
