package tlsserver

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/internal/testcert"
)

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	ca := testcert.NewCA(t, "test CA")
	certFile, keyFile := ca.Issue(t, "venue", true).WriteFiles(t, dir, "venue")
	caFile := ca.WriteFile(t, dir, "ca")

	c, err := Config(certFile, keyFile, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Certificates) != 1 || c.MinVersion != tls.VersionTLS12 || c.ClientAuth != tls.NoClientCert {
		t.Fatalf("without a client CA: %d certificates, min version %#x, client auth %v", len(c.Certificates), c.MinVersion, c.ClientAuth)
	}
	c, err = Config(certFile, keyFile, caFile)
	if err != nil {
		t.Fatal(err)
	}
	if c.ClientCAs == nil || c.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Fatalf("with a client CA: client auth %v", c.ClientAuth)
	}

	notPEM := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(notPEM, []byte("no certificate here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ cert, key, ca, want string }{
		{filepath.Join(dir, "missing.pem"), keyFile, "", "key pair: "},
		{certFile, keyFile, filepath.Join(dir, "missing-ca.pem"), "client CA: "},
		{certFile, keyFile, notPEM, "client CA " + notPEM + ": no certificate"},
	} {
		if _, err := Config(bad.cert, bad.key, bad.ca); err == nil || !strings.HasPrefix(err.Error(), bad.want) {
			t.Errorf("Config(%s, %s, %s) = %v, want an error starting %q", bad.cert, bad.key, bad.ca, err, bad.want)
		}
	}
}
