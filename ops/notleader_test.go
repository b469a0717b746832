package ops

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A cluster node's 503 not_leader says where to call: a follower's and a
// deposed leader's name the node that leads and its admin address when
// known; a deposed node that knows none says so, and GET /healthz is
// answered alive by both.
func TestNotLeaderNamesTheLeader(t *testing.T) {
	known := func() (string, string) {
		return "node 2 leads: its admin API at 127.0.0.1:9502 takes the call", "127.0.0.1:9502"
	}
	unknown := func() (string, string) { return "no leader is known yet", "" }
	for _, tc := range []struct {
		name     string
		h        http.Handler
		wantText string
		wantAddr string
	}{
		{"follower", Follower(known), "node 2 leads", "127.0.0.1:9502"},
		{"deposed", Deposed(known), "node 2 leads", "127.0.0.1:9502"},
		{"deposed, no leader known", Deposed(unknown), "no leader is known yet", ""},
		{"deposed, not told", Deposed(nil), NotLeaderDeposed, ""},
	} {
		srv := httptest.NewServer(tc.h)
		resp, err := http.Post(srv.URL+"/v1/instruments/ACME/halt", "application/json", strings.NewReader(`{"reason":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error, Code     string
			LeaderAdminAddr string `json:"leader_admin_addr"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusServiceUnavailable || body.Code != "not_leader" ||
			!strings.Contains(body.Error, tc.wantText) || body.LeaderAdminAddr != tc.wantAddr {
			t.Errorf("%s: %d %+v (%v), want 503 not_leader saying %q, leader_admin_addr %q", tc.name, resp.StatusCode, body, err, tc.wantText, tc.wantAddr)
		}
		if resp, err := http.Get(srv.URL + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("%s: healthz %v %v", tc.name, resp, err)
		} else {
			resp.Body.Close()
		}
		srv.Close()
	}
}

// A browser opening the console on a node that does not lead gets a page
// saying so, with a link to the leader's console when its address is
// known, the words escaped; the API's callers (a /v1/ path, a method other
// than GET, no HTML accepted) keep the JSON answer.
func TestNotLeaderPageForBrowsers(t *testing.T) {
	known := func() (string, string) { return "node 2 leads <b>now</b>", "127.0.0.1:9502" }
	unknown := func() (string, string) { return "no leader is known yet", "" }
	everywhere := func() (string, string) { return "node 2 leads", "0.0.0.0:9502" }
	everywhereV6 := func() (string, string) { return "node 2 leads", "[::]:9502" }
	const browser = "text/html,application/xhtml+xml,*/*;q=0.8"
	for _, tc := range []struct {
		name, method, path, accept string
		h                          http.Handler
		html                       bool
		want                       []string
		host                       string // the Host the browser sends, when set
	}{
		{"follower, console page", http.MethodGet, "/operations", browser, Follower(known), true,
			[]string{"node 2 leads &lt;b&gt;now&lt;/b&gt;", `href="http://127.0.0.1:9502/operations"`, `http-equiv="refresh"`}, ""},
		{"deposed, console root", http.MethodGet, "/", browser, Deposed(known), true,
			[]string{NotLeaderDeposed, `href="http://127.0.0.1:9502/"`}, ""},
		{"follower, no leader known", http.MethodGet, "/", browser, Follower(unknown), true,
			[]string{"no leader is known yet"}, ""},
		// A leader whose admin address names no host (it listens on every
		// interface) is linked at the host the browser reached this node
		// at: a link to 0.0.0.0 leads nowhere.
		{"follower, leader listening everywhere", http.MethodGet, "/operations", browser, Follower(everywhere), true,
			[]string{`href="http://venue-b.example:9502/operations"`}, "venue-b.example:9481"},
		{"follower, leader listening everywhere, IPv6", http.MethodGet, "/", browser, Follower(everywhereV6), true,
			[]string{`href="http://[fd00::2]:9502/"`}, "[fd00::2]:9481"},
		{"follower, API path", http.MethodGet, "/v1/instruments", browser, Follower(known), false, []string{`"not_leader"`}, ""},
		{"follower, POST", http.MethodPost, "/", browser, Follower(known), false, []string{`"not_leader"`}, ""},
		{"follower, no HTML accepted", http.MethodGet, "/", "application/json", Follower(known), false, []string{`"not_leader"`}, ""},
	} {
		srv := httptest.NewServer(tc.h)
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", tc.accept)
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		isHTML := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html")
		if resp.StatusCode != http.StatusServiceUnavailable || isHTML != tc.html {
			t.Errorf("%s: %d %s, want 503 and HTML %v", tc.name, resp.StatusCode, resp.Header.Get("Content-Type"), tc.html)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("%s: the answer lacks %q:\n%s", tc.name, w, body)
			}
		}
		if tc.html && strings.Contains(string(body), "<b>") {
			t.Errorf("%s: the leader's words not escaped:\n%s", tc.name, body)
		}
		if !tc.html && strings.Contains(string(body), "href") {
			t.Errorf("%s: JSON answer with a link:\n%s", tc.name, body)
		}
	}
}

// A node that does not lead is alive and not ready: /healthz 200, /readyz
// 503 not_leader naming the leader, as JSON even to a browser (a probe
// reads a status, no page), so that a load balancer checking /readyz sends
// calls to the leader alone; another method on either is 405, as on the
// venue.
func TestNotLeaderProbes(t *testing.T) {
	known := func() (string, string) { return "node 2 leads", "127.0.0.1:9502" }
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{{"follower", Follower(known)}, {"deposed", Deposed(known)}} {
		srv := httptest.NewServer(tc.h)
		call := func(method, path string) (int, string, string) {
			req, err := http.NewRequest(method, srv.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", "text/html,*/*;q=0.8")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
		}
		if code, _, body := call(http.MethodGet, "/healthz"); code != http.StatusOK || !strings.Contains(body, `"alive"`) {
			t.Errorf("%s: healthz %d %s", tc.name, code, body)
		}
		var ready struct {
			Code            string
			LeaderAdminAddr string `json:"leader_admin_addr"`
		}
		code, ctype, body := call(http.MethodGet, "/readyz")
		if code != http.StatusServiceUnavailable || !strings.HasPrefix(ctype, "application/json") ||
			json.Unmarshal([]byte(body), &ready) != nil || ready.Code != "not_leader" || ready.LeaderAdminAddr != "127.0.0.1:9502" {
			t.Errorf("%s: readyz %d %s %s, want 503 not_leader as JSON naming the leader", tc.name, code, ctype, body)
		}
		for _, p := range []string{"/healthz", "/readyz"} {
			if code, _, body := call(http.MethodPost, p); code != http.StatusMethodNotAllowed || !strings.Contains(body, "method_not_allowed") {
				t.Errorf("%s: POST %s %d %s, want 405", tc.name, p, code, body)
			}
		}
		srv.Close()
	}
}
