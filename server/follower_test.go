package server

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixwire"
	"github.com/fixvenue/fixvenue/internal/testcert"
	"github.com/fixvenue/fixvenue/internal/tlsserver"
)

// TestFollowerGateSpeaksTLS: on a venue whose FIX port takes TLS, a
// follower's port does too: a TLS client's Logon is answered with the
// Logout that names the leader (its handshake failed), and a plain one
// gets nothing (it was answered in plain text, naming the leader to anyone).
func TestFollowerGateSpeaksTLS(t *testing.T) {
	dir := t.TempDir()
	ca := testcert.NewCA(t, "venue CA")
	certFile, keyFile := ca.Issue(t, "venue", true).WriteFiles(t, dir, "venue")
	caFile := ca.WriteFile(t, dir, "ca")
	tlsConfig, err := tlsserver.Config(certFile, keyFile, caFile)
	if err != nil {
		t.Fatal(err)
	}
	g, err := startFollowerGate("127.0.0.1:0", nil, tlsConfig, func() string { return "127.0.0.1:19999" }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	logon := fixwire.AppendMessage(nil, "FIX.4.4", []byte("35=A\x0149=CLIENT1\x0156=VENUE\x0134=1\x0152=20261203-10:00:00.000\x0198=0\x01108=30\x01"))

	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	client := ca.Issue(t, "CLIENT1", false)
	c, err := tls.Dial("tcp", g.Addr(), &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{client.TLS}, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(logon); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	answer, _ := io.ReadAll(c)
	if !strings.Contains(string(answer), "58=not the leader; leader FIX address 127.0.0.1:19999") {
		t.Fatalf("a TLS client's Logon on a follower: %q", answer)
	}

	plain, err := net.Dial("tcp", g.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Write(logon); err != nil {
		t.Fatal(err)
	}
	plain.SetReadDeadline(time.Now().Add(5 * time.Second))
	if answer, _ := io.ReadAll(plain); strings.Contains(string(answer), "leader") {
		t.Fatalf("a plain client's Logon on a TLS venue's follower was answered: %q", answer)
	}
}

// TestFollowerGateBoundsOneAddress: one address holding connections open
// is refused past followerConnsPerSourceMax, and another address's Logon
// still hears of the leader (one address could hold all the gate's
// connections).
func TestFollowerGateBoundsOneAddress(t *testing.T) {
	g, err := startFollowerGate("127.0.0.1:0", nil, nil, func() string { return "127.0.0.1:19999" }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", g.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	for range followerConnsMax {
		dial("127.0.0.1") // held open, sending nothing
	}
	c := dial("127.0.0.2")
	logon := fixwire.AppendMessage(nil, "FIX.4.4", []byte("35=A\x0149=CLIENT1\x0156=VENUE\x0134=1\x0152=20261203-10:00:00.000\x0198=0\x01108=30\x01"))
	if _, err := c.Write(logon); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if answer, _ := io.ReadAll(c); !strings.Contains(string(answer), "not the leader") {
		t.Fatalf("another address's Logon: %q", answer)
	}
}
