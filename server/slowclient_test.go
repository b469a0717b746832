package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/internal/admintest"
	"github.com/fixvenue/fixvenue/ops"
)

// Whoever reaches the metrics listener, or a cluster node's status
// listener, may call them without a token. Each holds at most
// ops.AdminConnsBeyondStreams connections (internal/httpbound), and a
// connection serving a request counts until its answer is written: a
// request whose body never comes must not hold one for good.

// stalledWithin is how long a test waits for the server to close the
// connections of requests whose body never comes (its ReadTimeout is 10 s).
const stalledWithin = 2 * time.Minute

// stallRequests opens the listener's worth of connections at addr, each
// sending the headers of a request that promises a body it never sends
// (the server reads it before answering), and returns them.
func stallRequests(t *testing.T, addr, path string) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range ops.AdminConnsBeyondStreams {
		c, err := net.DialTimeout("tcp", addr, readWait)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n", path); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	return conns
}

// waitServed polls GET url until it is answered 200, within stalledWithin.
// (Not before the stalled requests are closed: a connection the server
// has not yet read a request from waits, and a new one closes it.)
func waitServed(t *testing.T, url string) {
	t.Helper()
	client := &http.Client{Timeout: readWait}
	deadline := time.Now().Add(stalledWithin)
	for {
		resp, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: not answered within %s: %v", url, stalledWithin, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// expectClosed reads each connection until the server closes it, within
// stalledWithin.
func expectClosed(t *testing.T, conns []net.Conn) {
	t.Helper()
	deadline := time.Now().Add(stalledWithin)
	for i, c := range conns {
		_ = c.SetReadDeadline(deadline)
		_, err := io.Copy(io.Discard, bufio.NewReader(c))
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("connection %d, whose request's body never came, still open after %s", i, stalledWithin)
		}
	}
}

// TestMetricsListenerClosesStalledRequests: requests to the metrics
// listener whose body never comes are closed once they outlive the
// server's read timeout, so that a scrape is answered again. They held
// their connections for good (the server had a timeout for the headers
// alone), and that many took every connection the listener holds: no
// scrape was answered for as long as they stayed.
func TestMetricsListenerClosesStalledRequests(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	conns := stallRequests(t, s.MetricsAddr(), "/metrics")
	expectClosed(t, conns)
	waitServed(t, "http://"+s.MetricsAddr()+"/metrics")
}

// byHost GETs url with the request's Host set to host, and returns the
// answer's status.
func byHost(t *testing.T, url, host string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	return admintest.Do(t, req).Status
}

// TestLoopbackListenersAnswerLoopbackNames: the metrics listener on
// loopback answers a request by a loopback name (127.0.0.1, localhost),
// and refuses (403) one by another name: a page elsewhere that has its own
// name resolve to 127.0.0.1 read every per-session metric from a browser
// on the venue's machine (DNS rebinding), where the admin API's reads were
// refused.
func TestLoopbackListenersAnswerLoopbackNames(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	_, port, _ := net.SplitHostPort(s.MetricsAddr())
	url := "http://" + s.MetricsAddr() + "/metrics"
	for host, want := range map[string]int{s.MetricsAddr(): 200, "localhost:" + port: 200, "[::1]:" + port: 200,
		"venue.example:" + port: 403, "127.0.0.1.nip.example:" + port: 403} {
		if got := byHost(t, url, host); got != want {
			t.Errorf("GET /metrics with Host %s: HTTP %d, want %d", host, got, want)
		}
	}
}

// TestClusterStatusListenerAgainstHostileCallers: a cluster node's status
// listener (its /cluster/status and /metrics, which read without a token)
// closes requests whose body never comes as the metrics listener does;
// and a leadership transfer a browser posts from a page of another origin
// is refused (403 cross_origin), even with an operator token, as the
// admin API's changes are.
func TestClusterStatusListenerAgainstHostileCallers(t *testing.T) {
	t.Parallel()
	nodes := startInProcessCluster(t, newPromotionPause("(no pause in this test)"), func(_ int, cfg *config.Config) {
		cfg.Admin.Tokens = append(cfg.Admin.Tokens, config.AdminToken{Operator: "alice", SHA256: ops.HashToken(aliceToken)})
	})
	addr := nodes[0].StatusAddr()
	conns := stallRequests(t, addr, "/cluster/status")
	expectClosed(t, conns)
	waitServed(t, "http://"+addr+"/cluster/status")

	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/cluster/transfer?to=2", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = http.Header{"Authorization": {"Bearer " + aliceToken}, "Sec-Fetch-Site": {"cross-site"}, "Origin": {"http://elsewhere.example"}}
	a := admintest.Do(t, req)
	if a.Status != http.StatusForbidden || !strings.Contains(string(a.Body), `"cross_origin"`) {
		t.Fatalf("a transfer posted from another origin: HTTP %d %s, want 403 cross_origin", a.Status, a.Body)
	}

	// What a browser may do with the answers: the status and the metrics
	// are read as what they are, the status never kept; a follower's page
	// for a browser (its console is the leader's) runs nothing and is
	// never framed, as the console's pages.
	a = admintest.Call(t, http.MethodGet, "http://"+addr+"/cluster/status", "", "")
	if a.Status != 200 || a.Header.Get("X-Content-Type-Options") != "nosniff" || a.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("GET /cluster/status: HTTP %d, headers %v, want nosniff and no-store", a.Status, a.Header)
	}
	a = admintest.Call(t, http.MethodGet, "http://"+addr+"/metrics", "", "")
	if a.Status != 200 || a.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET /metrics: HTTP %d, headers %v, want nosniff", a.Status, a.Header)
	}
	// On loopback, by a loopback name only (DNS rebinding), as the
	// metrics listener.
	_, port, _ := net.SplitHostPort(addr)
	for _, p := range []string{"/cluster/status", "/metrics"} {
		if got := byHost(t, "http://"+addr+p, "venue.example:"+port); got != http.StatusForbidden {
			t.Errorf("GET %s by a name that is not loopback's: HTTP %d, want 403", p, got)
		}
	}
	follower := -1
	deadline := time.Now().Add(stalledWithin)
	for follower < 0 {
		for i, n := range nodes {
			if n.Server() != nil {
				follower = (i + 1) % len(nodes) // a leader was elected: the next node follows
			}
		}
		if follower < 0 && time.Now().After(deadline) {
			t.Fatalf("no leader within %s", stalledWithin)
		}
		time.Sleep(50 * time.Millisecond)
	}
	req, err = http.NewRequest(http.MethodGet, "http://"+nodes[follower].adminL.Addr().String()+"/market", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	a = admintest.Do(t, req)
	if csp := a.Header.Get("Content-Security-Policy"); a.Status != http.StatusServiceUnavailable || !strings.Contains(string(a.Body), "does not lead") ||
		!strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") || a.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("a follower's console page: HTTP %d, headers %v: %.300s", a.Status, a.Header, a.Body)
	}
	a = admintest.Call(t, http.MethodGet, "http://"+nodes[follower].adminL.Addr().String()+"/v1/status", "", "")
	if a.Status != http.StatusServiceUnavailable || a.Header.Get("X-Content-Type-Options") != "nosniff" || a.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("a follower's GET /v1/status: HTTP %d, headers %v, want 503 with nosniff and no-store", a.Status, a.Header)
	}
}
