package edge

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/testcert"
)

// tlsSetup is a CA, a server key pair in files, and the client pool.
type tlsSetup struct {
	ca                        *testcert.CA
	certFile, keyFile, caFile string
	roots                     *x509.CertPool
}

func newTLSSetup(t testing.TB) *tlsSetup {
	t.Helper()
	ca := testcert.NewCA(t, "fixvenue test CA")
	dir := t.TempDir()
	s := &tlsSetup{ca: ca, caFile: ca.WriteFile(t, dir, "ca")}
	s.certFile, s.keyFile = ca.Issue(t, "venue", true).WriteFiles(t, dir, "venue")
	s.roots = x509.NewCertPool()
	s.roots.AddCert(ca.Cert)
	return s
}

// dialTLS connects with TLS; it returns the handshake error, if any.
func (v *venue) dialTLS(t testing.TB, compID string, cfg *tls.Config) (*fixClient, *tls.Conn, error) {
	t.Helper()
	raw, err := net.DialTimeout("tcp", v.addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	cfg = cfg.Clone()
	cfg.ServerName = "127.0.0.1"
	conn := tls.Client(raw, cfg)
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if err := conn.Handshake(); err != nil {
		return nil, conn, err
	}
	// A TLS 1.3 server reports a bad client certificate after the client's
	// handshake is done: the first read fails instead.
	_ = conn.SetDeadline(time.Time{})
	return v.client(conn, compID), conn, nil
}

func TestTLS(t *testing.T) {
	t.Parallel()
	s := newTLSSetup(t)
	var logMu sync.Mutex
	var log bytes.Buffer
	v := startVenueWith(t, Config{TLSCertFile: s.certFile, TLSKeyFile: s.keyFile,
		Logger: slog.New(slog.NewTextHandler(lockedBuffer{&logMu, &log}, nil))}, noDictionary, "CLIENT1", "CLIENT2")

	c, conn, err := v.dialTLS(t, "CLIENT1", &tls.Config{RootCAs: s.roots})
	if err != nil {
		t.Fatal(err)
	}
	if got := conn.ConnectionState().Version; got != tls.VersionTLS13 {
		t.Fatalf("negotiated %s, want TLS 1.3", tls.VersionName(got))
	}
	c.sendMsg("A", logonBody(testPassword("CLIENT1"))...)
	c.expect("A")
	c.trade("tls-1")

	c2, conn2, err := v.dialTLS(t, "CLIENT2", &tls.Config{RootCAs: s.roots, MaxVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS 1.2 refused: %v", err)
	}
	if got := conn2.ConnectionState().Version; got != tls.VersionTLS12 {
		t.Fatalf("negotiated %s, want TLS 1.2", tls.VersionName(got))
	}
	c2.sendMsg("A", logonBody(testPassword("CLIENT2"))...)
	c2.expect("A")
	c2.trade("tls-2")

	if _, _, err := v.dialTLS(t, "CLIENT2", &tls.Config{RootCAs: s.roots, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}); err == nil {
		t.Fatal("TLS 1.1 handshake succeeded")
	}
	// Plain FIX to the TLS port is not a handshake; the operator is told
	// what the client did.
	plain := v.dial("CLIENT2")
	plain.sendMsg("A", logonBody(testPassword("CLIENT2"))...)
	plain.expectClosed(5 * time.Second)
	waitStat(t, "TLS handshake failures", func() int64 { return int64(v.l.Stats().Count(ReasonTLSHandshake)) }, 2)
	logMu.Lock()
	logged := log.String()
	logMu.Unlock()
	if strings.Count(logged, "plain FIX on the TLS listener") != 1 {
		t.Fatalf("the plain FIX connection logged %d times, want once (the TLS 1.1 refusal is no plain FIX):\n%s",
			strings.Count(logged, "plain FIX on the TLS listener"), logged)
	}
	c.trade("tls-3")
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	s := newTLSSetup(t)
	v := startVenueWith(t, Config{TLSCertFile: s.certFile, TLSKeyFile: s.keyFile, TLSClientCAFile: s.caFile}, noDictionary, "CLIENT1", "CLIENT2")
	client1 := s.ca.Issue(t, "CLIENT1", false).TLS
	client2 := s.ca.Issue(t, "CLIENT2", false).TLS
	stranger := testcert.NewCA(t, "another CA").Issue(t, "CLIENT1", false).TLS

	// logOnAs connects with a client certificate and sends comp's Logon.
	logOnAs := func(comp string, cert tls.Certificate) *fixClient {
		t.Helper()
		c, _, err := v.dialTLS(t, comp, &tls.Config{RootCAs: s.roots, Certificates: []tls.Certificate{cert}})
		if err != nil {
			t.Fatal(err)
		}
		c.sendMsg("A", logonBody(testPassword(comp))...)
		return c
	}
	c := logOnAs("CLIENT1", client1)
	c.expect("A")
	c.trade("mtls-1")
	if conn, ok := v.l.Session(SessionKey{"FIX.4.4", "CLIENT1", v.venueID}); !ok || conn.Certificate() == nil || conn.Certificate().Subject.CommonName != "CLIENT1" {
		t.Fatalf("session's certificate not recorded")
	}

	// CLIENT2's certificate (and password) cannot log on as someone else.
	impostor := logOnAs("CLIENT2", client1)
	expectRefused(t, impostor, "Logon refused")
	if v.l.Stats().Count(ReasonLogonRefused) != 1 {
		t.Fatal("certificate mismatch not counted as a refused logon")
	}

	c2 := logOnAs("CLIENT2", client2)
	c2.expect("A")
	c2.trade("mtls-2")

	// No certificate, or one from another CA: the handshake fails (with TLS
	// 1.3 the client learns it on its first read).
	for name, cfg := range map[string]*tls.Config{
		"no certificate":      {RootCAs: s.roots},
		"another CA's client": {RootCAs: s.roots, Certificates: []tls.Certificate{stranger}},
	} {
		cc, _, err := v.dialTLS(t, "CLIENT1", cfg)
		if err != nil {
			continue
		}
		cc.send(cc.msgAt(1, "A", logonBody(testPassword("CLIENT1"))...))
		if got := cc.expectClosed(5 * time.Second); len(got) != 0 {
			t.Fatalf("%s: got %v", name, got)
		}
	}
	waitStat(t, "TLS handshake failures", func() int64 { return int64(v.l.Stats().Count(ReasonTLSHandshake)) }, 2)
	c.trade("mtls-3")
}

func TestCertificateBinding(t *testing.T) {
	ca := testcert.NewCA(t, "binding CA")
	pemCN := ca.Issue(t, "CLIENT1", false).CertPEM
	block, _ := pem.Decode(pemCN)
	cert, _ := x509.ParseCertificate(block.Bytes)
	creds := Credentials{
		"CLIENT1": {},
		"ALIAS":   {CertificateNames: []string{"CLIENT1"}},
		"OTHER":   {},
		"STRICT":  {RequireCertificate: true},
	}
	for _, tc := range []struct {
		compID string
		cert   *x509.Certificate
		want   error
	}{
		{"CLIENT1", cert, nil},
		{"ALIAS", cert, nil},
		{"OTHER", cert, ErrCertificateMismatch},
		{"STRICT", nil, ErrCertificateRequired},
		{"CLIENT1", nil, nil},
	} {
		got := creds.Authenticate(&LogonRequest{Key: SessionKey{ClientCompID: tc.compID}, Certificate: tc.cert})
		if got != tc.want {
			t.Errorf("%s with cert %v: %v, want %v", tc.compID, tc.cert != nil, got, tc.want)
		}
	}
}

// TestProbeOfTheTLSListener: a client that connects to the TLS listener and
// closes without sending a byte (a port probe, a load balancer's health
// check) is counted as closed_before_logon, as on a plain listener, not as
// a failed TLS handshake, which says a client could not speak TLS to the
// venue.
func TestProbeOfTheTLSListener(t *testing.T) {
	t.Parallel()
	s := newTLSSetup(t)
	v := startVenueWith(t, Config{TLSCertFile: s.certFile, TLSKeyFile: s.keyFile}, noDictionary, "CLIENT1")
	stats := v.l.Stats()
	for range 2 {
		probe := dialFrom(t, "127.0.0.1", v.addr())
		_ = probe.Close()
	}
	waitStat(t, "closed_before_logon", func() int64 { return int64(stats.Count(ReasonClosedBeforeLogon)) }, 2)
	if got := stats.Count(ReasonTLSHandshake); got != 0 {
		t.Fatalf("tls_handshake %d after two probes, want 0", got)
	}
	c, _, err := v.dialTLS(t, "CLIENT1", &tls.Config{RootCAs: s.roots})
	if err != nil {
		t.Fatal(err)
	}
	c.sendMsg("A", logonBody(testPassword("CLIENT1"))...)
	c.expect("A")
}
