package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/testcert"
)

// TestClusterStatusListenerServesTLS: with [admin] TLS and a client CA, a
// node's status listener serves TLS with the admin API's certificate and
// requires its client certificates, across a leader's restart too.
// `cluster status` and `cluster transfer` know it from the configuration
// and reach it over https with the CLI's TLS options; given a
// configuration without TLS, transfer stops at the status read, which
// carries no token, saying the node serves https, and nothing moves.
func TestClusterStatusListenerServesTLS(t *testing.T) {
	dir := t.TempDir()
	ca := testcert.NewCA(t, "cluster CA")
	caFile := ca.WriteFile(t, dir, "ca")
	serverCert, serverKey := ca.Issue(t, "node", true).WriteFiles(t, dir, "server")
	clientCert, clientKey := ca.Issue(t, "operator", false).WriteFiles(t, dir, "client")
	h := writeClusterConfigs(t, nil, false)
	plain, err := os.ReadFile(h.cfgs[0])
	if err != nil {
		t.Fatal(err)
	}
	plainCfg := filepath.Join(dir, "plain.toml")
	if err := os.WriteFile(plainCfg, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	const admin = "[admin]\naddr = \"127.0.0.1:0\"\n"
	for _, cfg := range h.cfgs {
		text, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		withTLS := strings.Replace(string(text), admin, admin+fmt.Sprintf("tls_cert_file = %q\ntls_key_file = %q\ntls_client_ca_file = %q\n",
			serverCert, serverKey, caFile), 1)
		if withTLS == string(text) {
			t.Fatalf("no [admin] table in %s", cfg)
		}
		if err := os.WriteFile(cfg, []byte(withTLS), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	pair, err := tls.LoadX509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	h.statusTLS = &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}
	h.startAll()
	l := h.leader(30 * time.Second)
	h.converge(10 * time.Second)
	before, err := h.nodeStatus(l)
	if err != nil {
		t.Fatal(err)
	}

	// Plain HTTP is not served; https without a client certificate is refused.
	c := http.Client{Timeout: 5 * time.Second}
	if resp, err := c.Get("http://" + h.status[l] + "/cluster/status"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("GET /cluster/status over http: %s, want 400 from an https server", resp.Status)
		}
	}
	c.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	if resp, err := c.Get("https://" + h.status[l] + "/metrics"); err == nil {
		resp.Body.Close()
		t.Fatalf("GET /metrics over https without a client certificate: %s", resp.Status)
	}

	withCert := []string{"--ca-file", caFile, "--cert-file", clientCert, "--key-file", clientKey}
	code, out, errOut := runCLI(t, "", nil, append([]string{"cluster", "status", "--config", h.cfgs[0]}, withCert...)...)
	if code != 0 || strings.Count(out, "StateLeader") != 1 || strings.Count(out, "StateFollower") != 2 {
		t.Fatalf("cluster status over https: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", nil, "cluster", "status", "--config", h.cfgs[0], "--ca-file", caFile)
	if code != 1 || strings.Contains(out, "StateLeader") || !strings.Contains(errOut, "--cert-file F --key-file F") {
		t.Fatalf("cluster status without a client certificate: exit %d\n%s%s", code, out, errOut)
	}

	// TLS options with a configuration that names no TLS: refused, as
	// its nodes would be called over http.
	code, _, errOut = runCLI(t, "", nil, append([]string{"cluster", "status", "--config", plainCfg}, withCert...)...)
	if code != 2 || !strings.Contains(errOut, "are for https") {
		t.Fatalf("cluster status with TLS options and a configuration without TLS: exit %d\n%s", code, errOut)
	}

	// Every node answers, so no election is in progress: transfer says the
	// TLS settings are why at once, rather than waiting for a leader.
	to := (l + 1) % 3
	code, out, errOut = runCLI(t, "", nil, "cluster", "transfer", "--config", plainCfg, "--to", strconv.Itoa(to+1), "--token", clusterToken)
	if code != 1 || out != "" || !strings.Contains(errOut, "it serves https") || strings.Contains(errOut, "no node leads") ||
		!strings.Contains(errOut, "cannot be read with these TLS settings") {
		t.Fatalf("cluster transfer with a configuration without TLS: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", nil, "cluster", "transfer", "--config", h.cfgs[0], "--to", strconv.Itoa(to+1), "--token", clusterToken,
		"--ca-file", caFile)
	if code != 1 || out != "" || !strings.Contains(errOut, "--cert-file F --key-file F") || strings.Contains(errOut, "no node leads") {
		t.Fatalf("cluster transfer without a client certificate: exit %d\n%s%s", code, out, errOut)
	}
	if st, err := h.nodeStatus(l); err != nil || !st.Serving || st.Term != before.Term {
		t.Fatalf("node %d after the transfer over http: %+v %v, want it leading in term %d", l+1, st, err, before.Term)
	}

	if out, err := transferWith(h.cfgs[0], to, nil, append([]string{"--token", clusterToken}, withCert...)...); err != nil ||
		!strings.Contains(string(out), fmt.Sprintf("leadership transfer to node %d requested", to+1)) {
		t.Fatalf("cluster transfer over https: %v\n%s", err, out)
	}
	// The new leader serves, and the old one, restarted on the status
	// socket it handed itself, serves TLS there again.
	eventually(t, "the leadership moved", func() error {
		if st, err := h.nodeStatus(to); err != nil || !st.Serving {
			return fmt.Errorf("node %d: %+v %v", to+1, st, err)
		}
		if st, err := h.nodeStatus(l); err != nil || st.State != "StateFollower" {
			return fmt.Errorf("node %d: %+v %v", l+1, st, err)
		}
		return nil
	})
	if !strings.Contains(h.procs[l].logs(), "status_tls=true") || !strings.Contains(h.procs[l].logs(), "status on https://") {
		t.Errorf("the node did not say its status listener serves TLS:\n%s", lastLines(h.procs[l].logs(), 30))
	}
}
