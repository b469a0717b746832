package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/admintest"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/ops"
)

// startClusterWithAdminAddrs starts three nodes whose [[cluster.peer]]
// tables give each node's admin address (admin_addr), each node's admin API
// on its own; extra(i) is appended to node i's file. It returns the
// harness and the admin addresses.
func startClusterWithAdminAddrs(t *testing.T, extra func(i int) string) (*clusterHarness, [3]string) {
	t.Helper()
	return startClusterWithAdminAddrsEdited(t, extra, nil)
}

// startClusterWithAdminAddrsEdited is startClusterWithAdminAddrs with
// edit, when set, applied to each node's file, its admin_addr lines
// written.
func startClusterWithAdminAddrsEdited(t *testing.T, extra func(i int) string, edit func(string) string) (*clusterHarness, [3]string) {
	t.Helper()
	h := writeClusterConfigs(t, extra, false)
	list, release := freeAddrs(t, 3)
	var admin [3]string
	copy(admin[:], list)
	for i := range 3 {
		b, err := os.ReadFile(h.cfgs[i])
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for j := range 3 {
			line := fmt.Sprintf("status_addr = %q\n", h.status[j])
			if !strings.Contains(text, line) {
				t.Fatalf("no %q in node %d's configuration", line, i+1)
			}
			text = strings.Replace(text, line, line+fmt.Sprintf("admin_addr = %q\n", admin[j]), 1)
		}
		if edit != nil {
			text = edit(text)
		}
		if err := os.WriteFile(h.cfgs[i], []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	release()
	for i := range 3 {
		h.procs[i] = startVenue(t, h.cfgs[i], "--admin-addr", admin[i])
	}
	return h, admin
}

// TestClusterFollowerNamesTheLeadersAdminAddr: a follower's 503 not_leader
// names the leader's admin address when the configuration gives it (its
// [[cluster.peer]] admin_addr), in the error, as leader_admin_addr and in
// the CLI's answer, so that an operator knows where to call; every node
// answers /healthz, the leader alone /readyz (README "Cluster: three
// replicas").
func TestClusterFollowerNamesTheLeadersAdminAddr(t *testing.T) {
	h, admin := startClusterWithAdminAddrs(t, nil)
	l := h.leader(30 * time.Second)
	h.converge(10 * time.Second)
	f := (l + 1) % 3
	followerNamesLeader(t, admin[f], admin[l], http.MethodPost, "/v1/risk/kill", `{"reason":"r","session":"CLIENT1"}`,
		fmt.Sprintf("node %d leads", l+1))
	a := admintest.Call(t, http.MethodGet, "http://"+admin[l]+"/v1/risk", "", "")
	if a.Status != http.StatusNotFound && a.Status != http.StatusOK {
		t.Fatalf("the leader's admin API at its admin_addr: %d %s", a.Status, a.Body)
	}
	// A load balancer's checks: every node is alive (/healthz), the leader
	// alone ready (/readyz), so that the calls go to it.
	for i := range 3 {
		if a := admintest.Call(t, http.MethodGet, "http://"+admin[i]+"/healthz", "", ""); a.Status != http.StatusOK {
			t.Errorf("node %d's /healthz: %d %s", i+1, a.Status, a.Body)
		}
		if i == l {
			eventually(t, "the leader ready", func() error {
				if a := admintest.Call(t, http.MethodGet, "http://"+admin[i]+"/readyz", "", ""); a.Status != http.StatusOK {
					return fmt.Errorf("%d %s", a.Status, a.Body)
				}
				return nil
			})
			continue
		}
		var ready struct{ Code string }
		if a := admintest.Call(t, http.MethodGet, "http://"+admin[i]+"/readyz", "", ""); a.Status != http.StatusServiceUnavailable ||
			json.Unmarshal(a.Body, &ready) != nil || ready.Code != "not_leader" {
			t.Errorf("follower %d's /readyz: %d %s, want 503 not_leader", i+1, a.Status, a.Body)
		}
	}
}

// TestClusterFollowerNamesALeaderListeningEverywhere: a [[cluster.peer]]
// admin_addr of 0.0.0.0 (the address the node listens at, copied from
// its [admin] addr) names no host anyone reaches it at; a follower names
// the leader's admin API at the host of its status_addr instead, in the
// error, as leader_admin_addr, in the CLI's answer and in its console
// page's link (README "Cluster: three replicas"). It named 0.0.0.0, and
// the page linked there, which leads nowhere.
func TestClusterFollowerNamesALeaderListeningEverywhere(t *testing.T) {
	h, admin := startClusterWithAdminAddrsEdited(t, nil, func(text string) string {
		const listed = "admin_addr = \"127.0.0.1:"
		if strings.Count(text, listed) != 3 {
			t.Fatalf("not 3 %q in a node's configuration:\n%s", listed, text)
		}
		return strings.ReplaceAll(text, listed, "admin_addr = \"0.0.0.0:")
	})
	l := h.leader(30 * time.Second)
	h.converge(10 * time.Second)
	followerNamesLeader(t, admin[(l+1)%3], admin[l], http.MethodGet, "/v1/risk", "")
}

// followerNamesLeader calls the admin API of the follower at admin (method,
// path, body) until it refuses with 503 not_leader naming the leader's
// admin API at leaderAdmin (leader_admin_addr, and in the error with each
// of inError); then the follower's console page links to the leader's, and
// the CLI against the follower says to call the leader.
func followerNamesLeader(t *testing.T, admin, leaderAdmin, method, path, body string, inError ...string) {
	t.Helper()
	var refusal struct {
		Error, Code     string
		LeaderAdminAddr string `json:"leader_admin_addr"`
	}
	eventually(t, "the follower's answer naming the leader's admin address", func() error {
		a := admintest.Call(t, method, "http://"+admin+path, clusterToken, body)
		if a.Status != http.StatusServiceUnavailable || json.Unmarshal(a.Body, &refusal) != nil || refusal.Code != "not_leader" ||
			refusal.LeaderAdminAddr != leaderAdmin || !strings.Contains(refusal.Error, "its admin API at "+leaderAdmin) {
			return fmt.Errorf("%d %s", a.Status, a.Body)
		}
		for _, want := range inError {
			if !strings.Contains(refusal.Error, want) {
				return fmt.Errorf("%d %s: no %q", a.Status, a.Body, want)
			}
		}
		return nil
	})
	// A browser opening the follower's console is shown where it is.
	followerPageLinks(t, admin, leaderAdmin)
	out, err := exec.Command(binPath, "admin", "risk", "show", "--addr", admin).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "call the leader: --addr "+leaderAdmin) {
		t.Fatalf("the CLI against a follower: %v: %s", err, out)
	}
}

// followerPageLinks opens the console of the follower at admin as a
// browser does: a 503 HTML page that links to the leader's console at
// leaderAdmin.
func followerPageLinks(t *testing.T, admin, leaderAdmin string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+admin+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(page), fmt.Sprintf(`href="http://%s/"`, leaderAdmin)) {
		t.Fatalf("the follower's console page: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
}

// TestClusterNewLeaderShowsRiskFiguresAtOnce: after a failover the new
// leader's GET /v1/risk gives each subject's figures from the replica's
// state at once, not after its first utilisation report (an hour here):
// `risk show` was blank for a report interval after every failover and
// start (README "Risk limits"). Snapshots are off and the session stays
// logged on, so the order is the journal's only command, seq 0: figures as of seq 0 were taken for none
// (a new leader whose predecessor had journaled no Snapshot command yet
// showed none).
func TestClusterNewLeaderShowsRiskFiguresAtOnce(t *testing.T) {
	h, admin := startClusterWithAdminAddrsEdited(t, func(int) string {
		return "[risk]\nreport_interval = \"1h\"\n[[risk.account]]\nname = \"FUND\"\ncredit_limit = 1000000\n"
	}, func(text string) string {
		const snapshots = "snapshot_interval = \"500ms\"\n"
		if !strings.Contains(text, snapshots) {
			t.Fatalf("no %q in a node's configuration", snapshots)
		}
		return strings.Replace(text, snapshots, "snapshot_interval = \"0s\"\n", 1)
	})
	l := h.leader(30 * time.Second)
	c := logOn(t, h.fix[l], "CLIENT1")
	if err := c.Send("D", fixclient.F(11, "f1"), fixclient.F(1, "FUND"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "10"), fixclient.F(40, "2"), fixclient.F(44, "99.00"),
		fixclient.F(59, "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(10*time.Second, "8", map[int]string{11: "f1", 150: "0"}); err != nil {
		t.Fatal(err)
	}
	// The session stays logged on until the kill: its end would be a
	// command too (SessionDisconnected).
	defer c.Close()
	h.converge(10 * time.Second)
	st, err := h.nodeStatus(l)
	if err != nil {
		t.Fatal(err)
	}
	if st.CommittedSeq != 0 {
		t.Fatalf("the leader committed up to seq %d, want the order alone (seq 0)", st.CommittedSeq)
	}
	h.kill(l)
	n := h.leader(30 * time.Second)
	if n == l {
		t.Fatalf("node %d still leads after its kill", l+1)
	}
	var list []ops.RiskSubject
	eventually(t, "the new leader's risk view", func() error {
		a := admintest.Call(t, http.MethodGet, "http://"+admin[n]+"/v1/risk", "", "")
		if a.Status != http.StatusOK || json.Unmarshal(a.Body, &list) != nil {
			return fmt.Errorf("%d %s", a.Status, a.Body)
		}
		return nil
	})
	for _, s := range list {
		if s.Scope == "account" && s.Name == "FUND" {
			if f := s.Figures; f == nil || f.OpenOrders != 1 || f.CreditUsed != 99000 || f.CreditLimit != 1000000 || f.ReportSeq != 0 {
				t.Fatalf("FUND on the new leader: %+v (figures %+v), want its resting buy of 10 at 99.00 as of seq 0", s, f)
			}
			return
		}
	}
	t.Fatalf("no FUND in the new leader's risk view: %+v", list)
}

// TestClusterWarnsOfAnAdminAddrNoClientReaches: a node warns at start of
// each [[cluster.peer]] whose admin_addr names no host (0.0.0.0) when its
// status_addr and fix_addr name none either, so that nothing puts a host
// there: when that peer leads, the followers' not_leader answers and
// `fixvenue admin` name 0.0.0.0 to the client (README "Cluster: three
// replicas"). A peer whose status_addr names a host gets none: the
// followers name its admin API at that host.
func TestClusterWarnsOfAnAdminAddrNoClientReaches(t *testing.T) {
	h := writeClusterConfigs(t, nil, false)
	b, err := os.ReadFile(h.cfgs[0])
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	_, fixPort, _ := net.SplitHostPort(h.fix[2])
	_, statusPort, _ := net.SplitHostPort(h.status[2])
	for _, e := range [][2]string{
		{fmt.Sprintf("status_addr = %q\n", h.status[1]), fmt.Sprintf("status_addr = %q\nadmin_addr = \"0.0.0.0:9465\"\n", h.status[1])},
		{fmt.Sprintf("fix_addr = %q\n", h.fix[2]), fmt.Sprintf("fix_addr = \"0.0.0.0:%s\"\n", fixPort)},
		{fmt.Sprintf("status_addr = %q\n", h.status[2]), fmt.Sprintf("status_addr = \"[::]:%s\"\nadmin_addr = \"0.0.0.0:9465\"\n", statusPort)},
	} {
		if !strings.Contains(text, e[0]) {
			t.Fatalf("no %q in node 1's configuration", e[0])
		}
		text = strings.Replace(text, e[0], e[1], 1)
	}
	if err := os.WriteFile(h.cfgs[0], []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	h.start(0)
	const warning = `msg="cluster: a peer's admin_addr names no host a client reaches, nor do its status_addr and fix_addr: `
	eventually(t, "the warning of peer 3's admin_addr", func() error {
		if !strings.Contains(h.procs[0].logs(), warning) || !strings.Contains(h.procs[0].logs(), " peer=3 admin_addr=0.0.0.0:9465 ") {
			return errors.New("not logged")
		}
		return nil
	})
	// Peers are warned of in order: peer 2's line would be in by now.
	if n := strings.Count(h.procs[0].logs(), warning); n != 1 {
		t.Fatalf("%d warnings, want peer 3's alone:\n%s", n, h.procs[0].logs())
	}
}
