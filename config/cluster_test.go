package config

import (
	"strings"
	"testing"
	"time"
)

const clusterTOML = `
[marketdata]
enabled = false
[cluster]
cluster_id = 9
node_id = 2
[[cluster.peer]]
id = 1
raft_addr = "127.0.0.1:9701"
fix_addr = "127.0.0.1:9881"
status_addr = "127.0.0.1:9711"
[[cluster.peer]]
id = 2
raft_addr = "127.0.0.1:9702"
fix_addr = "127.0.0.1:9882"
status_addr = "127.0.0.1:9712"
[[cluster.peer]]
id = 3
raft_addr = "127.0.0.1:9703"
fix_addr = "127.0.0.1:9883"
status_addr = "127.0.0.1:9713"
`

func TestClusterDefaultsAndSelf(t *testing.T) {
	def, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if def.Cluster.Enabled() {
		t.Fatal("the default configuration runs a cluster node")
	}
	c, err := Parse([]byte(clusterTOML), "cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Cluster.Enabled() || c.Cluster.Self().FIXAddr != "127.0.0.1:9882" {
		t.Fatalf("self: %+v", c.Cluster.Self())
	}
	if c.Cluster.HeartbeatInterval() != 50*time.Millisecond || c.Cluster.ElectionTicks() != 10 {
		t.Fatalf("defaults: heartbeat %s, election ticks %d", c.Cluster.HeartbeatInterval(), c.Cluster.ElectionTicks())
	}
}

func TestClusterRejectsBadValues(t *testing.T) {
	for name, tc := range map[string]struct{ edit, want string }{
		"node not a peer":          {"node_id = 2", "node_id = 5"},
		"no cluster id":            {"cluster_id = 9", "cluster_id = 0"},
		"repeated peer id":         {"id = 3", "id = 1"},
		"bad address":              {`raft_addr = "127.0.0.1:9703"`, `raft_addr = "nowhere"`},
		"bad admin address":        {`status_addr = "127.0.0.1:9713"`, "status_addr = \"127.0.0.1:9713\"\nadmin_addr = \"nowhere\""},
		"election too short":       {"node_id = 2", "node_id = 2\nelection = \"100ms\""},
		"entries too few":          {"node_id = 2", "node_id = 2\nentries_in_memory = 4"},
		"snapshot bound too small": {"node_id = 2", "node_id = 2\nsnapshot_bytes_max = 4096"},
		"snapshot bound negative":  {"node_id = 2", "node_id = 2\nsnapshot_bytes_max = -1"},
		"only two nodes":           {"[[cluster.peer]]\nid = 3\nraft_addr = \"127.0.0.1:9703\"\nfix_addr = \"127.0.0.1:9883\"\nstatus_addr = \"127.0.0.1:9713\"\n", ""},
	} {
		text := strings.Replace(clusterTOML, tc.edit, tc.want, 1)
		if text == clusterTOML {
			t.Fatalf("%s: the edit does not apply", name)
		}
		if _, err := Parse([]byte(text), "cluster.toml"); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
