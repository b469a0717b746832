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
	c, err = Parse([]byte(strings.Replace(clusterTOML, "node_id = 2", "node_id = 2\ncheckpoint_interval = \"5s\"", 1)), "cluster.toml")
	if err != nil || c.Cluster.CheckpointInterval.Duration != 5*time.Second {
		t.Fatalf("checkpoint_interval = \"5s\": %v, %v", c, err)
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
		"checkpoints too often":    {"node_id = 2", "node_id = 2\ncheckpoint_interval = \"100ms\""},
		"checkpoints negative":     {"node_id = 2", "node_id = 2\ncheckpoint_interval = \"-1m\""},
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

// TestClusterFeedBFromFollowers: a cluster node takes
// marketdata.feed_b_from = "followers" with a B line to send, and refuses
// it without one, naming the key it needs.
func TestClusterFeedBFromFollowers(t *testing.T) {
	md := "[marketdata]\nenabled = true\nfeed_b_from = \"followers\"\n"
	text := strings.Replace(clusterTOML, "[marketdata]\nenabled = false\n", md+"feed_b_addr = \"127.0.0.1:9502\"\n", 1)
	c, err := Parse([]byte(text), "cluster.toml")
	if err != nil || c.MarketData.FeedBFrom != FeedBFromFollowers {
		t.Fatalf("feed_b_from = \"followers\" with a B line: %v", err)
	}
	text = strings.Replace(clusterTOML, "[marketdata]\nenabled = false\n", md, 1)
	if _, err := Parse([]byte(text), "cluster.toml"); err == nil ||
		!strings.Contains(err.Error(), `marketdata.feed_b_from: "followers" needs marketdata.feed_b_addr`) {
		t.Fatalf("feed_b_from = \"followers\" without a B line: %v", err)
	}
}

// A peer's admin_addr is where a follower sends operators; one that listens
// everywhere (0.0.0.0, ::, no host) names no host a browser or the CLI can
// reach, so the host of the peer's status_addr, else its fix_addr, stands in.
func TestAdminReachedAt(t *testing.T) {
	for _, tc := range []struct {
		peer ClusterPeer
		want string
	}{
		{ClusterPeer{AdminAddr: "10.0.0.2:9481", StatusAddr: "10.0.0.9:9711"}, "10.0.0.2:9481"},
		{ClusterPeer{AdminAddr: "venue-b.example:9481", StatusAddr: "10.0.0.9:9711"}, "venue-b.example:9481"},
		{ClusterPeer{AdminAddr: "0.0.0.0:9481", StatusAddr: "10.0.0.2:9711", FIXAddr: "10.0.0.3:9881"}, "10.0.0.2:9481"},
		{ClusterPeer{AdminAddr: "[::]:9481", StatusAddr: "venue-b.example:9711"}, "venue-b.example:9481"},
		{ClusterPeer{AdminAddr: ":9481", StatusAddr: "0.0.0.0:9711", FIXAddr: "[fd00::2]:9881"}, "[fd00::2]:9481"},
		{ClusterPeer{AdminAddr: "0.0.0.0:9481", StatusAddr: ":9711", FIXAddr: "0.0.0.0:9881"}, "0.0.0.0:9481"},
		{ClusterPeer{StatusAddr: "10.0.0.2:9711"}, ""},
	} {
		if got := tc.peer.AdminReachedAt(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.peer, got, tc.want)
		}
	}
}

// TestClusterExportNeedsAnExternalNATS: a cluster node's export names an
// external NATS; an embedded server, which only the leader's process runs,
// is refused at load, saying why.
func TestClusterExportNeedsAnExternalNATS(t *testing.T) {
	_, err := Parse([]byte(clusterTOML+"[export]\nenabled = true\n"), "cluster.toml")
	if err == nil || !strings.Contains(err.Error(), "export: a cluster node exports to an external NATS (export.nats_url") {
		t.Fatalf("an embedded NATS on a cluster node: %v", err)
	}
	if _, err := Parse([]byte(clusterTOML+"[export]\nenabled = true\nnats_url = \"nats://nats1:4222\"\n"), "cluster.toml"); err != nil {
		t.Fatalf("an external NATS on a cluster node: %v", err)
	}
}
