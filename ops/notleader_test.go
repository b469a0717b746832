package ops

import (
	"encoding/json"
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
