package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/internal/testcert"
	"github.com/fixvenue/fixvenue/ops"
)

// TestAdminTLSWithClientCertificates: with [admin] TLS and a client CA, the
// CLI reaches the API only over TLS with a client certificate the CA signed,
// and still needs its token.
func TestAdminTLSWithClientCertificates(t *testing.T) {
	dir := t.TempDir()
	ca := testcert.NewCA(t, "admin CA")
	ca.WriteFile(t, dir, "ca")
	ca.Issue(t, "venue", true).WriteFiles(t, dir, "server")
	ca.Issue(t, "operator", false).WriteFiles(t, dir, "client")
	testcert.NewCA(t, "stranger CA").Issue(t, "stranger", false).WriteFiles(t, dir, "stranger")
	const token = "tls-test-token-0123456789abcdef"
	f := func(name string) string { return filepath.Join(dir, name) }
	_, addr := startAdminVenue(t, dir, `tls_cert_file = %q
tls_key_file = %q
tls_client_ca_file = %q
[[admin.token]]
operator = "dave"
sha256 = %q
`, f("server.crt"), f("server.key"), f("ca.crt"), ops.HashToken(token))
	runAt := func(at string, args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(binPath, append([]string{"admin"}, append(args, "--addr", at, "--token", token, "--timeout", "10s")...)...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	run := func(args ...string) (int, string) { t.Helper(); return runAt(addr, args...) }
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"halt", "ACME", "--reason", "tls", "--tls", "--ca-file", f("ca.crt"), "--cert-file", f("client.crt"), "--key-file", f("client.key")}, 0, "done by dave"},
		{[]string{"status", "--tls", "--ca-file", f("ca.crt")}, 1, "certificate"},
		{[]string{"status", "--tls", "--ca-file", f("ca.crt"), "--cert-file", f("stranger.crt"), "--key-file", f("stranger.key")}, 1, "certificate"},
		{[]string{"status"}, 1, ""}, // plain HTTP to a TLS listener
	} {
		code, out := run(c.args...)
		if code != c.code || !strings.Contains(out, c.out) {
			t.Errorf("admin %v: exit %d: %s; want exit %d with %q", c.args, code, out, c.code, c.out)
		}
	}
	// An https:// --addr is https as --tls is: the CA and the client
	// certificate given are used, where without --tls they were left out
	// and the call failed on the venue's certificate. Over http they are
	// refused, where they were ignored.
	if code, out := runAt("https://"+addr, "resume", "ACME", "--reason", "url", "--ca-file", f("ca.crt"), "--cert-file", f("client.crt"),
		"--key-file", f("client.key")); code != 0 || !strings.Contains(out, "done by dave") {
		t.Errorf("admin resume to an https:// --addr with its CA and client certificate: exit %d: %s", code, out)
	}
	want := "--ca-file, --cert-file and --key-file are for https: give --tls, or an https:// --addr"
	for _, at := range []string{addr, "http://" + addr} {
		if code, out := runAt(at, "status", "--ca-file", f("ca.crt")); code != 2 || !strings.Contains(out, want) {
			t.Errorf("admin status --ca-file to %s: exit %d: %s; want exit 2 with %q", at, code, out, want)
		}
	}
}
