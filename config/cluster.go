package config

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/fixvenue/fixvenue/internal/regularfile"
)

// Cluster defaults and bounds (cluster/doc.go, "Raft settings").
const (
	DefaultClusterHeartbeat = 50 * time.Millisecond
	// ClusterHeartbeatMin bounds cluster.heartbeat from below.
	ClusterHeartbeatMin    = time.Millisecond
	DefaultClusterElection = 500 * time.Millisecond
	ClusterNodesMax        = 7
	ClusterNodesMin        = 3
)

// Cluster is [cluster]: replication of the journal over Raft. node_id 0
// (the default) runs a single node, as without the table.
type Cluster struct {
	ClusterID uint64 `toml:"cluster_id"`
	NodeID    uint64 `toml:"node_id"`
	// Heartbeat is Raft's tick (default 50 ms); Election a whole multiple of
	// it (default 500 ms; Raft randomises each timeout up to twice that).
	Heartbeat Duration `toml:"heartbeat"`
	Election  Duration `toml:"election"`
	// EntriesInMemory bounds the Raft log a node keeps in memory to serve
	// followers (0: the default, 65,536 entries); a follower further behind
	// catches up from a Raft snapshot (cluster/doc.go, "Raft snapshots").
	EntriesInMemory int `toml:"entries_in_memory"`
	// SnapshotBytesMax bounds a Raft snapshot (the matcher's, the feed's
	// and the console tape's state), sent in chunks on a stream of its own
	// (0: the default, 1 GiB; at least 1 MiB). A follower whose snapshot
	// would exceed it cannot catch up, with a clear error on both sides.
	SnapshotBytesMax int64 `toml:"snapshot_bytes_max"`
	// CheckpointInterval is the least time between two checkpoints the
	// compactions of that log start (0: the default, a minute; at least a
	// second): a node's start restores its newest and replays the commands
	// after it (cluster/doc.go, "Checkpoints").
	CheckpointInterval Duration `toml:"checkpoint_interval"`
	// SecretFile names a file whose contents (at least
	// ClusterSecretBytesMin bytes, surrounding white space ignored) are the
	// secret every node's Raft hello is authenticated with; the same file on
	// every node. It is a regular file of at most ClusterSecretFileBytesMax
	// bytes. Unset: the Raft ports take any peer that knows the cluster
	// id and the terms (the server warns).
	SecretFile string        `toml:"secret_file"`
	Peers      []ClusterPeer `toml:"peer"`
}

// ClusterSecretBytesMin bounds a cluster secret from below.
const ClusterSecretBytesMin = 16

// ClusterSecretFileBytesMax bounds the secret file from above: a secret is
// a few dozen bytes (openssl rand -hex 32); a larger file is not one.
const ClusterSecretFileBytesMax = 64 << 10

// Secret reads the secret of SecretFile; nil when none is configured. The
// file must be a regular file of at most ClusterSecretFileBytesMax bytes,
// as the configuration file must (config/doc.go): read as it was,
// secret_file = "/dev/zero" grew the node until it ran out of memory, and
// a named pipe no one wrote to hung its start without a word.
func (c Cluster) Secret() ([]byte, error) {
	if c.SecretFile == "" {
		return nil, nil
	}
	b, err := regularfile.ReadMax(c.SecretFile, ClusterSecretFileBytesMax)
	if big := (*regularfile.TooLargeError)(nil); errors.As(err, &big) {
		return nil, fmt.Errorf("cluster.secret_file: %w, more than a secret (e.g. openssl rand -hex 32 > %s)", err, c.SecretFile)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster.secret_file: %w", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) < ClusterSecretBytesMin {
		return nil, fmt.Errorf("cluster.secret_file: %s holds %d bytes, at least %d needed (e.g. openssl rand -hex 32 > %s)",
			c.SecretFile, len(b), ClusterSecretBytesMin, c.SecretFile)
	}
	return b, nil
}

// ClusterPeer is one node of the cluster, this one included.
type ClusterPeer struct {
	ID       uint64 `toml:"id"`
	RaftAddr string `toml:"raft_addr"`
	// FIXAddr is where the node takes FIX sessions when it leads; followers
	// name the leader's in the Logout that refuses a logon.
	FIXAddr string `toml:"fix_addr"`
	// StatusAddr is the node's metrics address, which serves /cluster/status:
	// over TLS with the admin API's certificate when [admin] has one.
	StatusAddr string `toml:"status_addr"`
	// AdminAddr, optional, is the node's admin API as operators reach it:
	// a follower's 503 not_leader names the leader's (README "Cluster:
	// three replicas"). A host of 0.0.0.0, :: or none is a listening
	// address, which no browser reaches the node at: AdminReachedAt puts
	// another host there.
	AdminAddr string `toml:"admin_addr"`
}

// AdminReachedAt is the address operators reach the node's admin API at,
// as a follower names and links to it ("" when admin_addr is not given).
// An admin_addr whose host is 0.0.0.0, :: or empty (copied from the
// [admin] addr a node listens on) takes the host of the node's
// status_addr, else of its fix_addr, the first that names one: operators'
// `cluster status` and the clients reach the node there. With neither it
// is given as configured, and each node warns of that peer at start (a
// browser's page then takes the host the browser reached the follower at:
// ops, "answerNotLeader").
func (p ClusterPeer) AdminReachedAt() string {
	host, port, err := net.SplitHostPort(p.AdminAddr)
	if err != nil || !UnspecifiedHost(host) {
		return p.AdminAddr
	}
	for _, other := range []string{p.StatusAddr, p.FIXAddr} {
		if h, _, err := net.SplitHostPort(other); err == nil && !UnspecifiedHost(h) {
			return net.JoinHostPort(h, port)
		}
	}
	return p.AdminAddr
}

// UnspecifiedHost reports whether host is none, 0.0.0.0 or :: (any
// interface): a host to listen at, not one to reach a node at.
func UnspecifiedHost(host string) bool {
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// Enabled reports whether the venue runs as a cluster node.
func (c Cluster) Enabled() bool { return c.NodeID != 0 }

// Self is this node's peer entry.
func (c Cluster) Self() ClusterPeer {
	for _, p := range c.Peers {
		if p.ID == c.NodeID {
			return p
		}
	}
	return ClusterPeer{}
}

// HeartbeatInterval is the Raft tick.
func (c Cluster) HeartbeatInterval() time.Duration {
	if c.Heartbeat.Duration == 0 {
		return DefaultClusterHeartbeat
	}
	return c.Heartbeat.Duration
}

// ElectionTicks is the election timeout in ticks.
func (c Cluster) ElectionTicks() int {
	e := c.Election.Duration
	if e == 0 {
		e = DefaultClusterElection
	}
	return int(e / c.HeartbeatInterval())
}

func (c *Config) validateCluster() []error {
	cl := c.Cluster
	if !cl.Enabled() {
		return nil
	}
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if cl.ClusterID == 0 {
		add("cluster.cluster_id: must be set (any number other than 0, the same on every node)")
	}
	// Only the leader exports, and an embedded server runs in the leader's
	// process with the stream in its data directory: each failover would
	// move the stream to another server, at another address, that
	// consumers do not read (and three nodes on one machine would contend
	// for the one embedded_addr).
	if c.Export.Embedded() {
		add("export: a cluster node exports to an external NATS (export.nats_url, the same on every node): " +
			"an embedded server runs on the leader alone, so its stream would move to another server at each failover")
	}
	// Fewer than three nodes survive no loss, and a node listing only
	// itself (or one other) would be a quorum of its own on a fresh data
	// directory, leading beside the cluster it was meant to join.
	if n := len(cl.Peers); n < ClusterNodesMin || n > ClusterNodesMax {
		add("cluster.peer: %d listed, want %d..%d nodes, this node included, the same list on every node (without [cluster] the venue runs alone)",
			n, ClusterNodesMin, ClusterNodesMax)
	}
	seen := map[uint64]bool{}
	// Each node binds its raft, FIX and status addresses and its peers dial
	// them: one address given twice (a copied line not edited) sends one
	// node's Raft messages to another node, which refuses the hello, or to
	// a FIX or status port, which closes the stream, and that link never
	// carries a message ("Cluster: three replicas" in README).
	given := map[string]string{}
	for i, p := range cl.Peers {
		for _, a := range [][2]string{{"raft_addr", p.RaftAddr}, {"fix_addr", p.FIXAddr}, {"status_addr", p.StatusAddr}} {
			key := fmt.Sprintf("cluster.peer[%d].%s", i, a[0])
			if _, port, err := net.SplitHostPort(a[1]); err != nil || port == "0" {
				continue
			}
			if other, ok := given[a[1]]; ok {
				add("%s: %s is %s too: every node's raft, FIX and status addresses must differ", key, a[1], other)
				continue
			}
			given[a[1]] = key
		}
	}
	for i, p := range cl.Peers {
		if p.ID == 0 || seen[p.ID] {
			add("cluster.peer[%d].id: %d is zero or repeated", i, p.ID)
		}
		seen[p.ID] = true
		for key, addr := range map[string]string{"raft_addr": p.RaftAddr, "fix_addr": p.FIXAddr, "status_addr": p.StatusAddr} {
			if err := checkAddr(fmt.Sprintf("cluster.peer[%d].%s", i, key), addr); err != nil {
				errs = append(errs, err)
			}
		}
		if p.AdminAddr != "" {
			if err := checkAddr(fmt.Sprintf("cluster.peer[%d].admin_addr", i), p.AdminAddr); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if !seen[cl.NodeID] {
		add("cluster.node_id: %d is not one of cluster.peer", cl.NodeID)
	}
	// The node's status listener takes an operator token for a leadership
	// transfer (README "Cluster: three replicas").
	for i, p := range cl.Peers {
		if p.ID == cl.NodeID {
			errs = append(errs, c.Admin.publicTokenErrors(fmt.Sprintf("cluster.peer[%d].status_addr", i), p.StatusAddr)...)
			break
		}
	}
	if cl.EntriesInMemory < 0 || (cl.EntriesInMemory > 0 && cl.EntriesInMemory < 8) {
		add("cluster.entries_in_memory: %d; 0 for the default, else at least 8", cl.EntriesInMemory)
	}
	if d := cl.CheckpointInterval.Duration; d < 0 || (d > 0 && d < time.Second) {
		add("cluster.checkpoint_interval: %s; unset for the default (1m), else at least 1s", d)
	}
	if cl.SnapshotBytesMax < 0 || (cl.SnapshotBytesMax > 0 && cl.SnapshotBytesMax < 1<<20) {
		add("cluster.snapshot_bytes_max: %d; 0 for the default (1 GiB), else at least 1 MiB (1048576)", cl.SnapshotBytesMax)
	}
	if cl.Heartbeat.Duration < 0 || cl.Election.Duration < 0 {
		add("cluster.heartbeat, cluster.election: must not be negative")
	} else if cl.Heartbeat.Duration != 0 && cl.Heartbeat.Duration < ClusterHeartbeatMin {
		add("cluster.heartbeat: %s is below %s (each tick runs Raft on every node)", cl.Heartbeat.Duration, ClusterHeartbeatMin)
	} else if t := cl.ElectionTicks(); t < 3 || (cl.Election.Duration != 0 && cl.Election.Duration%cl.HeartbeatInterval() != 0) {
		add("cluster.election: must be a whole multiple of cluster.heartbeat and at least 3 of them")
	}
	return errs
}
