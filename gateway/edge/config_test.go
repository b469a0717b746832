package edge

import (
	"crypto/tls"
	"strings"
	"testing"
)

func TestConfigDefaults(t *testing.T) {
	c, err := Config{Authenticator: Credentials{}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.MessageBytesMax != DefaultMessageBytesMax || c.LogonTimeout != DefaultLogonTimeout ||
		c.ConnectionsMax != DefaultConnectionsMax || c.OutboundBytesMax != DefaultOutboundBytesMax ||
		c.Accepts != DefaultAccepts || c.LogonsPerCompID != DefaultLogonsPerCompID ||
		len(c.BeginStrings) != 1 || c.BeginStrings[0] != "FIX.4.4" || c.TLS != nil || c.Logger == nil {
		t.Fatalf("defaults not applied: %+v", c)
	}
}

func TestConfigErrors(t *testing.T) {
	auth := Credentials{}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "Authenticator is required"},
		{Config{Authenticator: auth, BeginStrings: []string{"FIX.4.4\x019=1"}}, "BeginString"},
		{Config{Authenticator: auth, BeginStrings: []string{"HTTP/1.1"}}, "BeginString"},
		{Config{Authenticator: auth, MessageBytesMax: 1 << 30}, "MessageBytesMax"},
		{Config{Authenticator: auth, Accepts: Rate{PerSecond: 1}}, "Burst"},
		{Config{Authenticator: auth, ConnectionsMax: -1}, "negative"},
		{Config{Authenticator: auth, TLSClientCAFile: "ca.pem"}, "TLSClientCAFile needs"},
		{Config{Authenticator: auth, TLSCertFile: "/nonexistent/cert.pem", TLSKeyFile: "/nonexistent/key.pem"}, "key pair"},
	} {
		if _, err := tc.cfg.withDefaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestConfigTLSMinimum(t *testing.T) {
	c, err := Config{Authenticator: Credentials{}, TLS: &tls.Config{MinVersion: tls.VersionTLS10}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.TLS.MinVersion != tls.VersionTLS12 {
		t.Fatalf("MinVersion %x, want TLS 1.2", c.TLS.MinVersion)
	}
}

func TestNewListenerCallback(t *testing.T) {
	l, err := Listen(Config{Address: "127.0.0.1:0", Authenticator: Credentials{}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cb := l.NewListenerCallback()
	if _, err := cb("127.0.0.1:1", &tls.Config{}); err == nil {
		t.Fatal("accepted QuickFIX/Go's own TLS settings")
	}
	got, err := cb("127.0.0.1:1", nil)
	if err != nil || got != l {
		t.Fatalf("callback: %v %v", got, err)
	}
	if _, err := cb("127.0.0.1:2", nil); err == nil {
		t.Fatal("listener given twice")
	}
	if l.Port() == 0 {
		t.Fatal("no port")
	}
	_ = l.Close()
	if _, err := l.Accept(); err == nil {
		t.Fatal("Accept after Close")
	}
}
