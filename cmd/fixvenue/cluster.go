package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/fixvenue/fixvenue/cluster"
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/server"
)

// serveCluster runs `fixvenue serve` as a node of [cluster]. When the node
// loses the leadership it served with, its matcher may hold commands that
// never committed: the process replaces itself (exec of the same binary
// with the same arguments), which rebuilds it from the committed log as a
// follower, the same path as a restart after kill -9.
func serveCluster(cfg *config.Config, log *slog.Logger, readyFile string, flagOf map[string]string) int {
	node, err := server.StartCluster(cfg, server.Options{Logger: log, Inherited: inheritedSockets(log)})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue serve: %s\n", flagNamed(err, flagOf))
		return 1
	}
	boundHeapGoal(cfg.Engine.GCHeadroomBytes, log)
	scheme := "http"
	if node.StatusTLS() {
		scheme = "https"
	}
	fmt.Fprintf(os.Stderr, "fixvenue: cluster node %d; FIX on %s when leading; status on %s://%s/cluster/status\n",
		cfg.Cluster.NodeID, node.FIXAddr(), scheme, node.StatusAddr())
	if readyFile != "" {
		// The node's own listeners; the venue's (metrics, admin API, feed)
		// are bound when it leads, at their configured addresses.
		ready := readyInfo{PID: os.Getpid(), FIXAddr: node.FIXAddr(), StatusAddr: node.StatusAddr(), MetricsAddr: cfg.Metrics.Addr,
			AdminAddr: cfg.Admin.Addr}
		if cfg.MarketData.Enabled {
			ready.FeedAddr, ready.RecoveryAddr = cfg.MarketData.FeedAddr, cfg.MarketData.RecoveryAddr
		}
		if err := writeReadyFile(readyFile, ready); err != nil {
			fmt.Fprintf(os.Stderr, "fixvenue serve: --ready-file: %v\n", err)
			node.Close()
			return 1
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	// shutDown stops the node for the signal got, as an operator's stop.
	shutDown := func(got os.Signal) int {
		log.Info("shutting down", "signal", got.String())
		if readyFile != "" {
			os.Remove(readyFile)
		}
		if err := node.Close(); err != nil {
			log.Error("shutdown", "err", err)
			return 1
		}
		return 0
	}
	select {
	case got := <-sig:
		return shutDown(got)
	case err := <-node.Failed():
		log.Error("cluster node failed (fail-stop)", "err", err)
		if !errors.Is(err, cluster.ErrDiverged) {
			return 1
		}
		// A diverged replica stays up, stopped, so that its alert (status,
		// metric) can be seen; it takes no part in the cluster any more.
		got := <-sig
		log.Info("shutting down", "signal", got.String())
		node.Close()
		return 1
	case <-node.Deposed():
		// The answers in flight are written, and the admin and status
		// sockets go to the next process, so no call is reset or refused
		// (docs/ARCHITECTURE.md, "Losing leadership").
		fds := node.PrepareRestart(2 * time.Second)
		// A SIGINT or SIGTERM that came while the node prepared its
		// restart waits in sig, which exec would discard: the process it
		// starts would follow on, its stop lost. Obey it instead; and give
		// the signals back their default action first, so that one coming
		// between this check and the exec stops the process rather than
		// waiting in sig.
		signal.Reset(syscall.SIGINT, syscall.SIGTERM)
		select {
		case got := <-sig:
			return shutDown(got)
		default:
		}
		exe, err := os.Executable()
		if err == nil {
			log.Warn("restarting to rebuild from the committed log", "exe", exe, "sockets", fds)
			err = syscall.Exec(exe, os.Args, append(os.Environ(), inheritEnv+"="+encodeSockets(fds)))
		}
		log.Error("restart after losing leadership failed", "err", err)
		return 1
	}
}

// inheritEnv names the sockets a deposed node hands to the process that
// replaces it by exec: "pid=PID,admin=FD,status=FD"
// (server.ClusterNode.PrepareRestart). The pid is the node's own, which
// exec keeps: a value seen by any other process (a node started by hand
// from an environment that kept the variable) is not its own to take, and
// is ignored.
const inheritEnv = "FIXVENUE_CLUSTER_SOCKETS"

func encodeSockets(fds map[string]uintptr) string {
	var parts []string
	for name, fd := range fds {
		parts = append(parts, name+"="+strconv.FormatUint(uint64(fd), 10))
	}
	sort.Strings(parts)
	return strings.Join(append([]string{"pid=" + strconv.Itoa(os.Getpid())}, parts...), ",")
}

// inheritedSockets takes the sockets the process before this exec handed
// over (inheritEnv), and removes the variable so that nothing started
// from here sees it. One that cannot be used is logged and left alone (a
// descriptor it names may be one this process opened: server.InheritedListener
// refuses it): the node binds its address anew.
func inheritedSockets(log *slog.Logger) map[string]net.Listener {
	v, ok := os.LookupEnv(inheritEnv)
	if !ok {
		return nil
	}
	os.Unsetenv(inheritEnv)
	parts := strings.Split(v, ",")
	if pid, ok := strings.CutPrefix(parts[0], "pid="); !ok || pid != strconv.Itoa(os.Getpid()) {
		log.Warn("ignoring "+inheritEnv+": it names no socket this process handed itself across its restart (it is set by a cluster node for its own re-execution only)",
			"value", v)
		return nil
	}
	got := map[string]net.Listener{}
	for _, part := range parts[1:] {
		name, num, _ := strings.Cut(part, "=")
		fd, err := strconv.ParseUint(num, 10, 31)
		if err != nil || fd < 3 || (name != server.InheritedAdmin && name != server.InheritedStatus && name != server.InheritedFIX) || got[name] != nil {
			log.Warn("ignoring a socket handed over across the restart", "env", inheritEnv, "value", part)
			continue
		}
		l, err := server.InheritedListener(uintptr(fd), name)
		if err != nil {
			log.Warn("a socket handed over across the restart is unusable; binding anew", "name", name, "err", err)
			continue
		}
		got[name] = l
	}
	return got
}

func cmdCluster(args []string) int {
	sub, fs, exit, ok := subcommand("cluster", args, `usage: fixvenue cluster status --config FILE [--json] [TLS options]
       fixvenue cluster transfer --config FILE --to NODE_ID [--token T] [TLS options]

status asks every node of [cluster] for its view (leader, term, commit and
applied index, lag); transfer asks the leader to hand leadership to a node
(planned maintenance), with an operator token of the nodes' [[admin.token]]
(without --token: $`+adminTokenEnv+`).

The nodes' status listeners serve https when the configuration has
admin.tls_cert_file (or with --tls): --ca-file F names the CA that signed
their certificates, and --cert-file F --key-file F the client certificate
they require with admin.tls_client_ca_file.
`, "status", "transfer")
	if !ok {
		return exit
	}
	cfgPath := fs.String("config", "", "a node's configuration file (any node: [cluster] lists them all)")
	useTLS := fs.Bool("tls", false, "use https (without it, https when the configuration has admin.tls_cert_file)")
	caFile := fs.String("ca-file", "", "with https: CA certificate that signed the nodes' admin.tls_cert_file (default: the system's)")
	certFile := fs.String("cert-file", "", "with https: client certificate (when the nodes have admin.tls_client_ca_file)")
	keyFile := fs.String("key-file", "", "with https: client key")
	var to uint64
	var asJSON bool
	var tokenArg *string
	if sub == "transfer" {
		fs.Uint64Var(&to, "to", 0, "the id of the node that should lead (an id of [[cluster.peer]])")
		tokenArg = tokenFlag(fs)
	} else {
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	}
	cfg, exit := parseWithConfig("cluster", fs, args[1:], cfgPath)
	if cfg == nil {
		return exit
	}
	if *cfgPath == "" {
		// Without --config the embedded demo configuration was read: it has
		// no [cluster], and saying so would not tell what is missing.
		fmt.Fprintf(os.Stderr, "fixvenue cluster %s: --config FILE is required: a node's configuration (its [cluster] lists every node)\n", sub)
		return 2
	}
	if !cfg.Cluster.Enabled() {
		fmt.Fprintln(os.Stderr, "fixvenue cluster: the configuration has no [cluster] node_id")
		return 2
	}
	client, exit := statusClient(cfg, *useTLS, *caFile, *certFile, *keyFile, "fixvenue cluster "+sub)
	if client == nil {
		return exit
	}
	if sub == "transfer" {
		token, ok := adminToken(fs, *tokenArg, "fixvenue cluster transfer", os.Stderr)
		if !ok {
			return 2
		}
		return clusterTransfer(client, cfg, to, token)
	}
	return clusterStatus(client, cfg, asJSON, os.Stdout)
}

// nodeClient calls the nodes' status listeners, over https when the
// configuration gives the admin API a certificate, which the status
// listeners serve too, or with --tls (docs/ARCHITECTURE.md, "The status
// listener"); else over http. It never falls back to http: a token for a
// listener that serves TLS is never sent in clear.
type nodeClient struct {
	http   *http.Client
	scheme string
}

// statusClient is the client of `cluster status` and `cluster transfer`;
// nil with the exit code when the TLS options cannot be used (said on
// standard error under name).
func statusClient(cfg *config.Config, useTLS bool, caFile, certFile, keyFile, name string) (*nodeClient, int) {
	c := &nodeClient{http: &http.Client{Timeout: 2 * time.Second}, scheme: "http"}
	// A status listener answers; it never redirects. One that did would
	// take the token elsewhere, to http too (net/http keeps the header
	// for the same host).
	c.http.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if !useTLS && cfg.Admin.TLSCertFile == "" {
		if caFile != "" || certFile != "" || keyFile != "" {
			fmt.Fprintf(os.Stderr, "%s: --ca-file, --cert-file and --key-file are for https: the configuration has no admin.tls_cert_file, "+
				"so its nodes' status listeners serve http (--tls if they serve https)\n", name)
			return nil, 2
		}
		return c, 0
	}
	tc, err := adminClientTLS(caFile, certFile, keyFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return nil, 2
	}
	c.scheme, c.http.Transport = "https", &http.Transport{TLSClientConfig: tc}
	return c, 0
}

func (c *nodeClient) url(addr, path string) string { return c.scheme + "://" + addr + path }

func (c *nodeClient) fetchStatus(addr string) (server.ClusterStatus, error) {
	var st server.ClusterStatus
	resp, err := c.http.Get(c.url(addr, "/cluster/status"))
	if err != nil {
		return st, c.explain(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if c.scheme == "http" && resp.StatusCode == http.StatusBadRequest && bytes.Contains(b, []byte("HTTPS server")) {
			// Go's https server answers a plain http request so: nothing
			// but this GET, which carries no token, was sent.
			return st, tlsSettingError{errors.New("it serves https, with its admin.tls_cert_file: give --tls and --ca-file F, " +
				"or a configuration with the nodes' admin.tls_cert_file")}
		}
		return st, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(b))
	}
	return st, json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st)
}

// tlsSettingError is a node's status that the CLI's TLS settings (the
// scheme, --ca-file, --cert-file) cannot read: waiting would not change it.
type tlsSettingError struct{ error }

func (e tlsSettingError) Unwrap() error { return e.error }

// explain adds to a failed call's error what to change when TLS is why.
func (c *nodeClient) explain(err error) error {
	var untrusted *tls.CertificateVerificationError
	switch msg := err.Error(); {
	case errors.As(err, &untrusted):
		return tlsSettingError{fmt.Errorf("%w (its certificate is not trusted: --ca-file F names the CA that signed the nodes' admin.tls_cert_file)", err)}
	case strings.Contains(msg, "certificate required") || strings.Contains(msg, "bad certificate") || strings.Contains(msg, "unknown certificate authority"):
		return tlsSettingError{fmt.Errorf("%w (it requires a client certificate its admin.tls_client_ca_file signed: --cert-file F --key-file F)", err)}
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return tlsSettingError{fmt.Errorf("%w (it serves http: its configuration has no admin.tls_cert_file; leave out --tls)", err)}
	}
	return err
}

func clusterStatus(client *nodeClient, cfg *config.Config, asJSON bool, out io.Writer) int {
	peers := cfg.Cluster.Peers
	sort.Slice(peers, func(i, j int) bool { return peers[i].ID < peers[j].ID })
	all := map[uint64]server.ClusterStatus{}
	failed := map[uint64]unreachableNode{}
	var leaderCommit uint64
	var leaderMatch map[uint64]uint64
	var catchingUp []uint64
	for _, p := range peers {
		st, err := client.fetchStatus(p.StatusAddr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "node %d (%s): %v\n", p.ID, p.StatusAddr, err)
			failed[p.ID] = unreachableNode{ID: p.ID, State: "unreachable", Error: err.Error(), FIXAddr: p.FIXAddr}
			continue
		}
		all[p.ID] = st
		if st.State == "StateLeader" {
			leaderCommit, leaderMatch, catchingUp = st.Commit, st.Match, st.CatchingUp
		}
	}
	if asJSON {
		// Every configured node is listed, as in the table: one whose
		// status could not be read is "unreachable", with why, not left
		// out (a script counting the nodes saw a cluster of two).
		// Each node carries the facts of its table row that come from
		// the others: the leader's MATCH for it and its lag behind the
		// leader's commit.
		nodes := map[uint64]any{}
		for id, st := range all {
			nodes[id] = nodeJSON{ClusterStatus: st, LeaderMatch: matchOf(leaderMatch, id), Lag: lagOf(leaderCommit, st.Applied),
				LeaderCatchingUp: slices.Contains(catchingUp, id)}
		}
		for id, u := range failed {
			u.LeaderMatch = matchOf(leaderMatch, id)
			nodes[id] = u
		}
		_ = json.NewEncoder(out).Encode(nodes)
	} else {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		// MATCH is the leader's: the last index it knows the node has on
		// disk. A node that answers and follows, but whose answers do not
		// reach the leader (a wrong raft_addr of the leader in its
		// configuration), shows there as counted out of the quorum.
		fmt.Fprintln(tw, "NODE\tSTATE\tLEADER\tTERM\tCOMMIT\tAPPLIED\tMATCH\tCOMMITTED_SEQ\tLAG\tSERVING\tFIX")
		for _, p := range peers {
			match := "-"
			if m := matchOf(leaderMatch, p.ID); m != nil {
				match = fmt.Sprint(*m)
			}
			st, ok := all[p.ID]
			if !ok {
				fmt.Fprintf(tw, "%d\tunreachable\t\t\t\t\t%s\t\t\t\t%s\n", p.ID, match, p.FIXAddr)
				continue
			}
			lag := "-"
			if l := lagOf(leaderCommit, st.Applied); l != nil {
				lag = fmt.Sprint(*l)
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%s\t%d\t%s\t%v\t%s\n", p.ID, st.State, st.Lead, st.Term, st.Commit,
				st.Applied, match, st.CommittedSeq, lag, st.Serving, st.FIXAddr)
		}
		tw.Flush()
		// Below the table, so that its columns stay as scripts read them.
		for _, id := range catchingUp {
			fmt.Fprintf(out, "node %d is catching up from a Raft snapshot after losing its log: its MATCH is what it had acknowledged, and a transfer to it is refused until it holds that again\n", id)
		}
	}
	if len(all) == 0 {
		return 1
	}
	return 0
}

// matchOf is the leader's match index for node id (MATCH), nil when no
// leader was read or it has none for the node.
func matchOf(leaderMatch map[uint64]uint64, id uint64) *uint64 {
	if m, ok := leaderMatch[id]; ok {
		return &m
	}
	return nil
}

// lagOf is how many entries a node that applied applied is behind the
// leader's commit (LAG), nil when no leader was read. Nodes are read one
// after another: one read after the leader may have applied more than the
// leader's commit then, which is no lag.
func lagOf(leaderCommit, applied uint64) *uint64 {
	if leaderCommit == 0 {
		return nil
	}
	lag := uint64(max(int64(leaderCommit)-int64(applied), 0))
	return &lag
}

// nodeJSON is what `cluster status --json` says of a node whose status was
// read: its status (applied_index among it) and, as the table has them,
// the leader's match index for it and its lag behind the leader's commit,
// both left out when no leader was read.
type nodeJSON struct {
	server.ClusterStatus
	LeaderMatch *uint64 `json:"leader_match,omitempty"`
	Lag         *uint64 `json:"lag,omitempty"`
	// LeaderCatchingUp: the leader says the node is catching up from a
	// Raft snapshot after losing its log (its "catching_up").
	LeaderCatchingUp bool `json:"leader_catching_up,omitempty"`
}

// unreachableNode is what `cluster status --json` says of a node whose
// status could not be read.
type unreachableNode struct {
	ID          uint64  `json:"id"`
	State       string  `json:"state"`
	Error       string  `json:"error"`
	FIXAddr     string  `json:"fix_addr"`
	LeaderMatch *uint64 `json:"leader_match,omitempty"`
}

// clusterTransfer asks the leader to hand the leadership to node to,
// presenting token (an operator's: the leader's FIX sessions end with it).
// The token goes only to a node whose status was read just before with
// the same client, so over the scheme that node serves.
func clusterTransfer(client *nodeClient, cfg *config.Config, to uint64, token string) int {
	if to == 0 {
		fmt.Fprintln(os.Stderr, "fixvenue cluster transfer: --to NODE_ID is required: the id of the [[cluster.peer]] that should lead (ids start at 1)")
		return 2
	}
	// Between a leader's loss and the next election no node leads: the
	// transfer waits for one, a few election timeouts at most, as an
	// operator would retry.
	election := cfg.Cluster.HeartbeatInterval() * time.Duration(cfg.Cluster.ElectionTicks())
	wait := transferLeaderWaits * election
	deadline := time.Now().Add(wait)
	for said := false; ; said = true {
		var unanswered []string
		settings := false
		for _, p := range cfg.Cluster.Peers {
			st, err := client.fetchStatus(p.StatusAddr)
			if err != nil {
				unanswered = append(unanswered, fmt.Sprintf("node %d (%s): %v", p.ID, p.StatusAddr, err))
				settings = settings || errors.As(err, new(tlsSettingError))
				continue
			}
			if st.State != "StateLeader" {
				continue
			}
			req, err := http.NewRequest(http.MethodPost, client.url(p.StatusAddr, fmt.Sprintf("/cluster/transfer?to=%d", to)), nil)
			if err != nil {
				fmt.Fprintf(os.Stderr, "fixvenue cluster transfer: %v\n", err)
				return 1
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := client.http.Do(req)
			if err != nil {
				fmt.Fprintf(os.Stderr, "fixvenue cluster transfer: %v\n", client.explain(err))
				return 1
			}
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				// A refusal is an error: on standard error, as the others are.
				fmt.Fprintf(os.Stderr, "fixvenue cluster transfer: node %d: %s", p.ID, b)
				if resp.StatusCode == http.StatusUnauthorized && token == "" {
					fmt.Fprintf(os.Stderr, "fixvenue cluster transfer: no token was given: --token T or $%s, an operator token of the nodes' [[admin.token]]\n",
						adminTokenEnv)
				}
				return 1
			}
			fmt.Printf("node %d: %s", p.ID, b)
			return 0
		}
		if settings {
			// The nodes are configured alike: a node these TLS settings
			// cannot read is not one in an election, and waiting for a
			// leader would not change that.
			for _, u := range unanswered {
				fmt.Fprintln(os.Stderr, u)
			}
			fmt.Fprintln(os.Stderr, "fixvenue cluster transfer: the nodes' status cannot be read with these TLS settings; no transfer was asked, and no node was sent the token")
			return 1
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "fixvenue cluster transfer: no leader answered within %v (a quorum of the nodes must be up: `fixvenue cluster status` shows them)\n", wait)
			return 1
		}
		if !said {
			// Why a node did not answer (down, or a TLS setting to
			// change), as `cluster status` says it.
			for _, u := range unanswered {
				fmt.Fprintln(os.Stderr, u)
			}
			fmt.Fprintf(os.Stderr, "fixvenue cluster transfer: no node leads now (an election?); waiting up to %v for a leader\n", wait)
		}
		time.Sleep(cfg.Cluster.HeartbeatInterval())
	}
}

// transferLeaderWaits is how many election timeouts a transfer waits for a
// leader: an election that splits its votes takes a second one.
const transferLeaderWaits = 4
