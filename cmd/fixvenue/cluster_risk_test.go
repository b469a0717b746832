package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/admintest"
)

// startClusterWithAdminAddrs starts three nodes whose [[cluster.peer]]
// tables give each node's admin address (admin_addr), each node's admin API
// on its own; extra(i) is appended to node i's file. It returns the
// harness and the admin addresses.
func startClusterWithAdminAddrs(t *testing.T, extra func(i int) string) (*clusterHarness, [3]string) {
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
// the CLI's answer, so that an operator knows where to call (README
// "Cluster: three replicas").
func TestClusterFollowerNamesTheLeadersAdminAddr(t *testing.T) {
	h, admin := startClusterWithAdminAddrs(t, nil)
	l := h.leader(30 * time.Second)
	h.converge(10 * time.Second)
	f := (l + 1) % 3
	var refusal struct {
		Error, Code     string
		LeaderAdminAddr string `json:"leader_admin_addr"`
	}
	eventually(t, "the follower's answer naming the leader's admin address", func() error {
		a := admintest.Call(t, http.MethodPost, "http://"+admin[f]+"/v1/risk/kill", clusterToken, `{"reason":"r","session":"CLIENT1"}`)
		if a.Status != http.StatusServiceUnavailable || json.Unmarshal(a.Body, &refusal) != nil || refusal.Code != "not_leader" ||
			refusal.LeaderAdminAddr != admin[l] || !strings.Contains(refusal.Error, fmt.Sprintf("node %d leads", l+1)) ||
			!strings.Contains(refusal.Error, "its admin API at "+admin[l]) {
			return fmt.Errorf("%d %s", a.Status, a.Body)
		}
		return nil
	})
	cmd := exec.Command(binPath, "admin", "risk", "show", "--addr", admin[f])
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "call the leader: --addr "+admin[l]) {
		t.Fatalf("the CLI against a follower: %v: %s", err, out)
	}
	a := admintest.Call(t, http.MethodGet, "http://"+admin[l]+"/v1/risk", "", "")
	if a.Status != http.StatusNotFound && a.Status != http.StatusOK {
		t.Fatalf("the leader's admin API at its admin_addr: %d %s", a.Status, a.Body)
	}
}
