package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
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

// TestAdminTokenIsNeverPrinted: the operator's token, from the environment,
// appears in no usage text (-h, a mistyped option), and it is still the
// token sent when --token is not given; --token replaces it.
func TestAdminTokenIsNeverPrinted(t *testing.T) {
	const secret = "env-secret-0123456789abcdef"
	env := []string{adminTokenEnv + "=" + secret}
	for _, args := range [][]string{{"admin", "halt", "ACME", "--reasn", "x"}, {"admin", "halt", "-h"}, {"admin", "-h"},
		{"risk", "-h"}, {"risk", "kill", "--nope"}, {"admin", "status", "--bogus"}} {
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
