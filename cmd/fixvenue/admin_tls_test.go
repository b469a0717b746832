package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/ops"
)

// pemPair writes a certificate for tmpl, signed by parent (self-signed when
// parent is nil), and its key, as dir/name.crt and dir/name.key.
func pemPair(t *testing.T, dir, name string, tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for file, block := range map[string]*pem.Block{name + ".crt": {Type: "CERTIFICATE", Bytes: der},
		name + ".key": {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(filepath.Join(dir, file), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// TestAdminTLSWithClientCertificates: with [admin] TLS and a client CA, the
// CLI reaches the API only over TLS with a client certificate the CA signed,
// and still needs its token.
func TestAdminTLSWithClientCertificates(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := pemPair(t, dir, "ca", &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "admin CA"},
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}, nil, nil)
	pemPair(t, dir, "server", &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "venue"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}, ca, caKey)
	pemPair(t, dir, "client", &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "operator"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, ca, caKey)
	pemPair(t, dir, "stranger", &x509.Certificate{SerialNumber: big.NewInt(4), Subject: pkix.Name{CommonName: "stranger"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, nil, nil)
	const token = "tls-test-token-0123456789abcdef"
	f := func(name string) string { return filepath.Join(dir, name) }
	_, addr := startAdminVenue(t, dir, `tls_cert_file = %q
tls_key_file = %q
tls_client_ca_file = %q
[[admin.token]]
operator = "dave"
sha256 = %q
`, f("server.crt"), f("server.key"), f("ca.crt"), ops.HashToken(token))
	run := func(args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(binPath, append([]string{"admin"}, append(args, "--addr", addr, "--token", token, "--timeout", "10s")...)...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
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
}
