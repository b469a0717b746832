package main

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/testcert"
)

// TestFIXClientCertificatesAreOptionalUnlessRequired: with fix.tls_client_ca_file
// a client certificate, when presented, must be the CA's and name the
// CompID, and a client without one logs on unless
// session_defaults.require_client_certificates is true
// (config/default.toml, gateway/edge "What a connection goes through"). The
// handshake refused every client without a certificate, with a TLS alert
// and no Logout, whatever require_client_certificates said.
func TestFIXClientCertificatesAreOptionalUnlessRequired(t *testing.T) {
	t.Parallel()
	certs := t.TempDir()
	ca := testcert.NewCA(t, "FIX CA")
	caFile := ca.WriteFile(t, certs, "ca")
	crt, key := ca.Issue(t, "venue", true).WriteFiles(t, certs, "server")
	client1 := ca.Issue(t, "CLIENT1", false).TLS
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	tlsKeys := "tls_cert_file = %q\ntls_key_file = %q\ntls_client_ca_file = %q\n[marketdata]\nenabled = false\n" +
		"[[session]]\ncomp_id = \"CLIENT%%d\"\nrange = [1, 3]\n"

	dial := func(t *testing.T, addr, sender string, certs ...tls.Certificate) *fixclient.Client {
		t.Helper()
		nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
			&tls.Config{RootCAs: roots, Certificates: certs, ServerName: "127.0.0.1"})
		if err != nil {
			t.Fatalf("%s: TLS dial: %v", sender, err)
		}
		c := fixclient.New(nc, sender, "VENUE")
		t.Cleanup(func() { c.Close() })
		return c
	}

	t.Run("optional", func(t *testing.T) {
		dir := t.TempDir()
		v := startVenue(t, writeVenueConfig(t, dir, tlsKeys, crt, key, caFile))
		if _, err := dial(t, v.fixAddr, "CLIENT2").Logon(true); err != nil {
			t.Fatalf("a client without a certificate did not log on: %v\n%s", err, v.logs())
		}
		if _, err := dial(t, v.fixAddr, "CLIENT1", client1).Logon(true); err != nil {
			t.Fatalf("CLIENT1 with its certificate did not log on: %v", err)
		}
		// CLIENT1's certificate does not log on as another CompID.
		c := dial(t, v.fixAddr, "CLIENT3", client1)
		if _, err := c.Logon(true); err == nil {
			t.Fatal("CLIENT1's certificate logged on as CLIENT3")
		}
	})

	t.Run("required", func(t *testing.T) {
		dir := t.TempDir()
		v := startVenue(t, writeVenueConfig(t, dir, tlsKeys+"[session_defaults]\nrequire_client_certificates = true\n", crt, key, caFile))
		// With TLS 1.3 the client learns of the refused handshake on its
		// first read: the Logon gets no answer.
		nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", v.fixAddr,
			&tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
		if err == nil {
			c := fixclient.New(nc, "CLIENT2", "VENUE")
			defer c.Close()
			if _, err := c.Logon(true); err == nil {
				t.Fatal("a client without a certificate logged on with require_client_certificates = true")
			}
		}
		if _, err := dial(t, v.fixAddr, "CLIENT1", client1).Logon(true); err != nil {
			t.Fatalf("CLIENT1 with its certificate did not log on: %v", err)
		}
	})
}
