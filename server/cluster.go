package server

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fixvenue/fixvenue/cluster"
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/console"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/pipeline"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/gateway/fixmd"
	"github.com/fixvenue/fixvenue/internal/tlsserver"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/latency"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// venueJournal is the journal as the server uses it: a local
// journal.Writer, or a cluster leader's replicated cluster.Journal.
type venueJournal interface {
	Append(seq uint64, payload []byte) error
	Flush() error
	DurableSequence() *ring.Sequence
	NextSeq() uint64
	Close() error
}

// Replica is a cluster node's state when it starts to lead: a matcher that
// has applied every committed command, and the replicated journal that
// numbers the next commands.
type Replica struct {
	Matcher *core.Matcher
	Journal *cluster.Journal
	// Hash, when set, receives a copy of every event the pipeline's matcher
	// writes (the leader's events hash, continuing the follower's).
	Hash *journal.HashSink
	// OnSnapshot is called on the matcher goroutine after a Snapshot command.
	OnSnapshot func(seq uint64)
	// Snaps, when set, is the journal snapshotter the follower wrote its
	// snapshots with (ClusterNode.snapshot), which the venue writes its own
	// with: one writer per directory, so that a snapshot the follower has
	// in flight is neither removed as a crash's leftover by a new
	// snapshotter's start nor waited for by the promotion. Its durable
	// sequence follows Journal's once the node leads.
	Snaps *journal.Snapshotter
	// SnapshotsFrom is the first seq whose journal snapshots fit the
	// configured terms (termsRecord.SnapshotsFrom): the event export's
	// catch-up passes over those before it.
	SnapshotsFrom uint64
	// Tape is the console's tape the follower kept (clustertape.go); nil
	// when the admin API is off.
	Tape *console.Tape
	// Feed and FixMD, when set, are the hot standby's market data: a feed
	// that has been handed the events of every committed command in replay
	// mode (nothing sent), so that the new leader's feed continues the
	// sequence (marketdata/doc.go, "Restarts"). OrderToFeed is its histogram.
	Feed        *marketdata.Feed
	FixMD       *fixmd.Handler
	OrderToFeed *latency.Recorder
	// FIX is the QuickFIX/Go acceptor the follower started (clusterfix.go).
	FIX *standbyFIX
	// Open and Resting, when both set, are the gateway's open-order view
	// and the control plane's resting orders, kept by the follower from the
	// events of every committed command (standbyViews), so that the new
	// leader does not walk its books (docs/benchmarks.md, "failover").
	Open    *gateway.OpenView
	Resting *ops.StandbyResting
	// OnHalt, when set, is called once the venue halts (after the gateway
	// was told), with the pipeline's error.
	OnHalt func(error)
	// Admin, when set, is where the venue's admin API accepts: a view of
	// the node's admin socket (ops.Config.Listener).
	Admin net.Listener
	// FIXSocket, when set, is the FIX listening socket the follower's gate
	// answered on (followerGate.HandOver): the edge accepts on it rather
	// than bind the address again (edge.Config.Socket).
	FIXSocket *net.TCPListener
	// Leader says which node leads once this one is deposed, and its admin
	// address (ops.Config.Leader).
	Leader func() (text, adminAddr string)
	// StoppingText is the Text of the Logout the FIX sessions get when the
	// node stops (gateway.Config.StoppingText).
	StoppingText string
	// Phases is each schedule group's phase as last set, as the follower
	// saw the commands (ops.Config.Phases).
	Phases map[string]venue.TradingStatus
	// EndOfDayNs is the command time of the last end of day the follower
	// applied (0: none): the new leader's gateway takes the trading day as
	// begun then (gateway.Gateway.SetDayStart).
	EndOfDayNs int64
	// EndOfDay is the report of that end of day, as the follower saw it
	// (ops.Config.ReplicatedEndOfDay); nil when none.
	EndOfDay *ops.EndOfDayReport
}

// pipelineMatcher is the matcher as the pipeline runs it: on a cluster
// leader it also hashes every event, for the checks at snapshot points.
func (s *Server) pipelineMatcher() pipeline.Applier {
	if r := s.opts.Replica; r != nil && r.Hash != nil {
		return &hashingMatcher{Matcher: s.matcher, tee: teeSink{hash: r.Hash}}
	}
	return s.matcher
}

// hashingMatcher applies commands with core.Matcher and passes every event
// both to the pipeline's sink and to a hash. Prefetch is core.Matcher's.
type hashingMatcher struct {
	*core.Matcher
	tee teeSink
}

func (h *hashingMatcher) Apply(cmd []byte, sink core.EventSink) error {
	h.tee.inner = sink
	return h.Matcher.Apply(cmd, &h.tee)
}

type teeSink struct {
	inner core.EventSink
	hash  *journal.HashSink
	slot  []byte
}

func (t *teeSink) Claim() []byte {
	t.slot = t.inner.Claim()
	return t.slot
}

// Commit hashes the event exactly as journal.HashSink hashes it (header and
// block), then commits it to the pipeline.
func (t *teeSink) Commit() {
	n := venue.MessageHeaderSize + int(binary.LittleEndian.Uint16(t.slot))
	copy(t.hash.Claim(), t.slot[:n])
	t.hash.Commit()
	t.inner.Commit()
}

// newOnReplica builds the server of a new leader on the replica's state.
// Nothing is replayed: the matcher is the hot standby's.
func (s *Server) newOnReplica(r *Replica) (*Server, error) {
	s.matcher, s.journal, s.tape = r.Matcher, r.Journal, r.Tape
	s.snapshotsFrom = r.SnapshotsFrom
	if r.Feed != nil {
		s.feed, s.fixmd, s.orderToFeed = r.Feed, r.FixMD, r.OrderToFeed
		if err := s.feed.EndReplay(); err != nil {
			return nil, fmt.Errorf("market data: %w", err)
		}
		// The standby's feed is the leader's: its counters reach the
		// leader's /metrics as a single venue's do (buildFeed), which a
		// leader's, built on the replica, never called.
		s.registerFeedMetrics()
	}
	if err := s.buildServing(); err != nil {
		return nil, err
	}
	return s, nil
}

// ClusterNode is `fixvenue serve` with [cluster]: a Raft replica whose
// matcher applies every committed command (hot standby) while it follows,
// and which becomes a full venue (Server) when it leads. A node that loses
// leadership after serving has applied commands that may never commit; it
// stops taking orders at once (its pipeline fails) and reports Deposed, and
// its owner restarts it, so it rebuilds from the committed log.
type ClusterNode struct {
	// dirLock holds the node's data directory until Close.
	dirLock *dataDirLock

	// terms is the record of the configured terms to write once a leader
	// is known (recordTerms); nil or not dirty when it holds them already.
	terms     *termsUpdate
	termsOnce sync.Once

	cfg     *config.Config
	opts    Options
	log     *slog.Logger
	matcher *core.Matcher
	hash    *journal.HashSink
	// stateUsed is set once the standby state (matcher, feed, tape) has
	// applied a command or been restored (runner goroutine, or Open).
	stateUsed bool
	tape      *console.Tape // kept while following (clustertape.go); nil when the admin API is off
	// disabled are the sessions an operator disabled, kept from the events
	// while following (disabled.go), so that this node refuses them if it leads.
	disabled *disabledSessions
	// schedule is the trading day's progress, kept from the events while
	// following and saved when this node starts to lead (scheduleprogress.go).
	schedule *scheduleProgress
	check    *cluster.HashCheck
	leading  atomic.Bool
	node     *cluster.Node
	tr       *cluster.Transport
	runner   *cluster.Runner
	gate     *followerGate
	// followerAdmin answers the admin address while this node follows
	// (ops.Follower), deposedAdmin once it lost the leadership, until it
	// restarts; nil when the admin API is off. adminL is the address's
	// socket, which the follower's, the venue's and the deposed node's
	// servers take turns at, and statusL the status listener's: both are
	// kept across the restart (handoff.go).
	followerAdmin *viewServer
	deposedAdmin  *viewServer
	adminL        *sharedListener
	// venueView is the view of adminL the venue's admin API accepts on.
	venueView *listenerView
	fix       *standbyFIX // the sessions, started while following (clusterfix.go)
	status    *viewServer
	statusL   *sharedListener
	reg       *prometheus.Registry

	mu      sync.Mutex
	srv     *Server
	served  chan struct{} // closed when serve returns (the venue started, or failed to, or Close came first)
	deposed chan struct{}
	// leaderChanged receives (without blocking: one pending is enough)
	// each time the node learns of a leader (onLeader).
	leaderChanged chan struct{}
	failed        chan error
	once          sync.Once
	runDone       chan struct{}

	stop chan struct{} // closed by Close

	// feed and fixmd are the standby market data (Replica.Feed), fed on the
	// runner goroutine by standbySink while following; nil when market data
	// is off or the feed failed.
	feed        *marketdata.Feed
	feedRefusal func() // stops the standby feed's refusal of recovery connections (standbyFeed)
	// sendingB is set, with feed_b_from = "followers", once Open has
	// replayed the committed journal: from then on the standby feed sends
	// the B line (appliedBatch); lineBSent counts its packets.
	sendingB    bool
	lineBSent   atomic.Uint64
	lineBStale  atomic.Uint64
	fixmd       *fixmd.Handler
	orderToFeed *latency.Recorder
	sink        standbySink

	diverged      atomic.Bool
	mismatches    atomic.Int64
	commitSeconds prometheus.Histogram

	// snaps writes the journal snapshots (nil when the configuration takes
	// none: takesSnapshots): the follower's at each Snapshot command it
	// applies, the venue's once it leads (Replica.Snaps). snapDurable is
	// its durable sequence: the last Snapshot command applied while
	// following (committed, so on this node's disk), then the leader's
	// Journal's.
	snaps       *journal.Snapshotter
	snapDurable *ring.Sequence
}

// StartCluster opens the replica in the data directory, binds the Raft,
// status and FIX addresses of this node and starts following.
func StartCluster(cfg *config.Config, opts Options) (*ClusterNode, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	cl := cfg.Cluster
	self := cl.Self()
	cfg.FIX.Addr = self.FIXAddr
	// What the configuration names outside it is checked before the data
	// directory is touched, as a single venue's start does (New): a bad
	// certificate or CA file stopped a node only after its replica opened.
	if err := checkTLSFiles(cfg); err != nil {
		return nil, err
	}
	// The secret file too: read only once the FIX stores and the journal
	// were made, a missing one left them behind.
	if _, err := cl.Secret(); err != nil {
		return nil, err
	}
	if err := checkMatcherCPU(cfg); err != nil {
		return nil, err
	}
	// The sockets handed over go to the addresses they listen at, whatever
	// they served before, and the others are closed before anything binds:
	// with the addresses changed across the restart (status and admin
	// swapped, say), one would hold a port this node binds.
	adminAddr := ""
	if cfg.Admin.Enabled() {
		adminAddr = cfg.Admin.Addr
	}
	inherited := sortInherited(opts.Inherited, map[string]string{InheritedStatus: self.StatusAddr, InheritedAdmin: adminAddr,
		InheritedFIX: self.FIXAddr})
	lock, err := lockDataDir(cfg.Venue.DataDir)
	if err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			lock.release()
		}
	}()
	if err := checkDataDirFiles(cfg.Venue.DataDir); err != nil {
		return nil, err
	}
	// A node's own replay runs as it follows. Its record is written once
	// it knows a leader (recordTerms): its peers refuse a node whose terms
	// differ from theirs, and such a node started again with the terms it
	// had must not be refused for those it was refused with.
	terms0, err := checkTermsRecord(cfg, false, false)
	if err != nil {
		return nil, err
	}
	terms, err := termsHash(cfg)
	if err != nil {
		return nil, err
	}
	m, err := core.NewMatcher(MatcherConfig(cfg))
	if err != nil {
		return nil, err
	}
	c := &ClusterNode{cfg: cfg, opts: opts, log: opts.Logger.With("node", cl.NodeID), matcher: m,
		hash: journal.NewHashSink(), check: cluster.NewHashCheck(), reg: prometheus.NewRegistry(), deposed: make(chan struct{}), leaderChanged: make(chan struct{}, 1), terms: terms0,
		failed: make(chan error, 1), runDone: make(chan struct{}), stop: make(chan struct{}), served: make(chan struct{})}
	c.tape = followerTape(cfg)
	if c.disabled, err = newDisabledSessions(cfg, false); err != nil {
		return nil, err
	}
	c.schedule = newScheduleProgress(cfg)
	// The FIX sessions start first, so that the wait for them to run
	// (standbyFIX.waitLive) overlaps the replay of the journal.
	if c.fix, err = startStandbyFIX(cfg, self.FIXAddr, c.log); err != nil {
		return nil, err
	}
	defer func() {
		if !started {
			c.fix.close()
		}
	}()
	raftL, err := net.Listen("tcp", self.RaftAddr)
	if err != nil {
		return nil, fmt.Errorf("cluster raft_addr: %w", err)
	}
	peers, voters := map[uint64]string{}, []uint64{}
	for _, p := range cl.Peers {
		voters = append(voters, p.ID)
		if p.ID != cl.NodeID {
			peers[p.ID] = p.RaftAddr
		}
	}
	dir := filepath.Join(cfg.Venue.DataDir, "journal")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		raftL.Close()
		return nil, err
	}
	secret, err := cl.Secret()
	if err != nil {
		raftL.Close()
		return nil, err
	}
	if secret == nil {
		c.log.Warn("cluster.secret_file is not set: the Raft port takes any peer that knows the cluster id and the terms, "+
			"and one forged message can depose the leader; give every node the same secret file", "raft_addr", self.RaftAddr)
	}
	c.warnUnreachableAdmin()
	c.tr = cluster.NewTransport(cluster.TransportConfig{ClusterID: cl.ClusterID, NodeID: cl.NodeID, Terms: terms, Listener: raftL,
		Peers: peers, SnapshotDir: dir, SnapshotBytesMax: cl.SnapshotBytesMax, Logger: c.log, Secret: secret})
	if cfg.MarketData.Enabled {
		c.orderToFeed = latency.New("order to feed")
		if c.fixmd, c.feed, err = newFeed(cfg, c.orderToFeed, nil, true); err != nil {
			raftL.Close()
			return nil, err
		}
		c.feedRefusal = c.feed.RefuseRecovery()
	}
	c.sink = standbySink{hash: c.hash, disabled: c.disabled, schedule: c.schedule, feed: c.feed, tape: c.tape, log: c.log,
		configured: configuredInstruments(c.cfg), added: addedInstruments(cfg, terms0.newInstruments)}
	c.sink.open, c.sink.rest = standbyViews(cfg, m)
	jc := JournalConfig(cfg)
	jc.Sync = opts.JournalSync
	c.node, err = cluster.Open(cluster.NodeConfig{ClusterID: cl.ClusterID, NodeID: cl.NodeID, Voters: voters,
		Dir: dir, Journal: jc, ElectionTicks: cl.ElectionTicks(),
		Apply: c.applyCommitted, Applied: c.appliedBatch, OnCheck: c.leaderHash, Send: c.tr.Send, Logger: c.log,
		EntriesInMemoryMax: cl.EntriesInMemory, NewState: c.newState, Restore: c.restore,
		ReceivedSnapshot: c.tr.ReceivedSnapshot, SnapshotBytesMax: cl.SnapshotBytesMax,
		// A checkpoint's matcher state lists the instruments and sessions of
		// its day: one taken before some were configured does not fit
		// (cluster/doc.go, "Checkpoints").
		DropCheckpoints:    terms0 != nil && terms0.snapshotsPredate(),
		CheckpointInterval: cl.CheckpointInterval.Duration})
	if err != nil {
		c.tr.Close()
		c.closeFeed()
		return nil, err
	}
	if terms0 != nil && terms0.snapshotsPredate() {
		// The journal snapshots in the directory were taken under the
		// terms before the sessions or instruments added: they do not fit
		// the configuration (a single venue's start records the same,
		// Server.replay), for the export's catch-up on this node once it
		// leads, nor for `journal book`. Those of the commands it applies
		// from here on are taken under the configured terms.
		terms0.record.SnapshotsFrom = uint64(c.node.Committed().Load() + 1)
	}
	// Every packet of the commands Open replayed went out before; those
	// committed from here on go out on the B line, when this node sends it.
	c.sendingB = cfg.MarketData.FeedBFrom == config.FeedBFromFollowers
	if c.sendingB && c.feed != nil {
		c.feed.SendStandbyB()
		c.log.Info("market data: this node sends the feed's B line while it follows", "line_b", c.feed.FeedBAddr().String())
	}
	// The refusal is the start's, as a single venue's: Open replayed the
	// commands committed before it. Those applied from here on come from a
	// leader configured as this node is (peers with other terms are
	// refused), whose own start replayed the journal it had, and a halt or
	// close of all among them changes the new instruments rightly.
	c.sink.added = nil
	if takesSnapshots(cfg) {
		// Made once Open has replayed the committed journal, whose
		// snapshots were taken when its commands were first applied.
		c.snapDurable = ring.NewSequence(c.node.Committed().Load())
		if c.snaps, err = journal.NewSnapshotter(journal.SnapshotterConfig{Dir: dir, Durable: c.snapDurable,
			Logger: c.log, Sync: opts.JournalSync}); err != nil {
			c.tr.Close()
			c.node.Close()
			c.closeFeed()
			return nil, err
		}
		defer func() {
			if !started {
				c.snaps.Close()
			}
		}()
	}
	c.runner = cluster.NewRunner(cluster.RunnerConfig{Node: c.node, Transport: c.tr,
		TickInterval: cl.HeartbeatInterval(), OnRole: c.onRole, OnLeader: c.onLeader, Logger: c.log})
	var gateTLS *tls.Config
	if cfg.FIX.TLSCertFile != "" {
		if gateTLS, err = tlsserver.Config(cfg.FIX.TLSCertFile, cfg.FIX.TLSKeyFile, cfg.FIX.TLSClientCAFile); err != nil {
			c.tr.Close()
			c.node.Close()
			return nil, fmt.Errorf("fix TLS: %w", err)
		}
		if gateTLS.ClientCAs != nil && !cfg.SessionDefaults.RequireClientCertificates {
			// As the leader's edge (EdgeConfig): a client without a
			// certificate is told where the leader is.
			gateTLS.ClientAuth = tls.VerifyClientCertIfGiven
		}
	}
	if c.gate, err = startFollowerGate(self.FIXAddr, inherited[InheritedFIX], gateTLS, c.leaderFIX, c.log); err != nil {
		c.tr.Close()
		c.node.Close()
		return nil, fmt.Errorf("cluster fix_addr: %w", err)
	}
	if err := c.startStatus(self.StatusAddr, inherited[InheritedStatus]); err != nil {
		c.gate.Close()
		c.tr.Close()
		c.node.Close()
		return nil, err
	}
	if cfg.Admin.Enabled() {
		c.adminL, err = listenShared(cfg.Admin.Addr, inherited[InheritedAdmin])
		if err == nil {
			c.followerAdmin, err = c.adminL.serve(adminServer(ops.Follower(c.leaderText)), c.adminTLS)
		}
		if err != nil {
			if c.adminL != nil {
				c.adminL.close()
			}
			c.ShutdownStatus(time.Second)
			c.statusL.close()
			c.gate.Close()
			c.tr.Close()
			c.node.Close()
			return nil, fmt.Errorf("admin.addr: %w", err)
		}
		c.log.Info("admin API answering as a follower", "addr", c.adminL.Addr().String())
	}
	go func() {
		defer close(c.runDone)
		if err := c.runner.Run(); err != nil {
			if errors.Is(err, cluster.ErrDiverged) {
				c.diverged.Store(true)
				c.mismatches.Add(1)
				c.log.Error("cluster: ALERT: this replica diverged from the leader and stopped applying; inspect it, then replace its journal with a copy of a healthy replica's", "err", err)
			}
			c.fail(err)
		}
	}()
	c.fix.waitLive()
	started = true
	c.dirLock = lock
	c.log.Info("cluster node following", "raft", self.RaftAddr, "fix", self.FIXAddr, "status", c.StatusAddr(), "status_tls", c.StatusTLS(),
		"committed_seq", c.node.Committed().Load())
	return c, nil
}

// applyCommitted is the hot standby: while following, every committed
// command goes through this node's own matcher, and its events are hashed.
// Once leading, the pipeline's matcher has applied them already.
func (c *ClusterNode) applyCommitted(seq uint64, cmd []byte) error {
	if c.leading.Load() {
		return nil
	}
	c.stateUsed = true
	if c.sink.tape != nil {
		c.sink.tape.Command(cmd) // what an operator command's result does not say, as the leader's tape keeps it
	}
	c.schedule.Command(cmd)
	if err := c.matcher.Apply(cmd, &c.sink); err != nil {
		return err
	}
	if c.sink.conflict != nil {
		return c.sink.conflict
	}
	if c.sink.err != nil {
		c.log.Error("cluster: ALERT: the standby market data feed failed; this node will not publish market data if it leads", "err", c.sink.err)
		c.closeFeed()
	}
	if binary.LittleEndian.Uint16(cmd[2:]) == venue.SnapshotTemplateID {
		if err := c.check.Own(seq, c.hash.Sum64()); err != nil {
			return err
		}
		c.snapshot(seq)
	}
	return nil
}

// appliedBatch completes the packets of a batch of committed commands the
// standby feed applied (runner goroutine): with marketdata.feed_b_from =
// "followers" they go out on the B line, so that a failover of the leader,
// which sends the A line, leaves a line sending from another machine
// (docs/ARCHITECTURE.md, "Cluster"). Once leading, the server owns the feed.
func (c *ClusterNode) appliedBatch() {
	if !c.sendingB || c.leading.Load() || c.feed == nil || c.sink.err != nil {
		return
	}
	n, stale, err := c.feed.EndStandbyCommand()
	if err != nil {
		c.log.Error("cluster: ALERT: the standby market data feed failed; this node will not publish market data if it leads", "err", err)
		c.closeFeed()
		return
	}
	c.lineBSent.Add(n)
	c.lineBStale.Add(stale)
}

// snapshotsFrom is the first seq whose journal snapshots fit this node's
// configured terms (termsRecord.SnapshotsFrom).
func (c *ClusterNode) snapshotsFrom() uint64 {
	if c.terms == nil {
		return 0
	}
	return c.terms.record.SnapshotsFrom
}

// snapshot writes the journal snapshot of Snapshot command seq, as the
// leader's venue writes it at the same command (Server.captureSnapshot):
// the matcher's state is copied on the runner goroutine, between two
// commands, and written, synced and published by the snapshotter's. So a
// node that comes to lead, and anything reading its journal from a
// snapshot (the event export's catch-up, `journal book`), starts from its
// newest one, not from the first command. The command is committed, so
// it is on this node's disk already: the snapshotter waits for nothing.
// Only the matcher's state: a leader's venue, whose feed and tape are the
// follower's, saves none beside its snapshots either, a cluster node's
// start replaying its committed journal (cluster/doc.go, "Limits").
func (c *ClusterNode) snapshot(seq uint64) {
	if c.snaps == nil {
		return
	}
	c.snapDurable.Store(int64(seq))
	if err := c.snaps.Capture(seq, c.matcher.WriteSnapshot); err != nil {
		c.log.Warn("snapshot not taken", "seq", seq, "err", err)
	}
}

// The parts of a cluster's replica state beside the matcher (Raft
// snapshots carry them; cluster/doc.go, "Raft snapshots").
const (
	partMarketData  = "marketdata"
	partConsoleTape = "console"
)

// feedPart is the standby feed as a part of the replica state: it takes
// events in replay mode.
type feedPart struct{ *marketdata.Feed }

func (p feedPart) Event(ev []byte) error { return p.Replay(ev) }

// tapePart is the console's tape as a part of the replica state.
type tapePart struct{ *console.Tape }

func (p tapePart) Event(ev []byte) error {
	p.Replay(ev)
	return nil
}

// newState is a fresh replica state, into which the node replays its
// journal to build a checkpoint or a Raft snapshot for a follower too far
// behind: the matcher, the events hash, and (when configured) the feed's
// state, derived without a socket, and the console's tape. The next build
// reloads it (cluster.MatcherState.Reload) with new parts.
func (c *ClusterNode) newState() (cluster.State, error) {
	parts, err := c.newStateParts()
	if err != nil {
		return nil, err
	}
	st, err := cluster.NewMatcherState(MatcherConfig(c.cfg), parts)
	if err != nil {
		return nil, err
	}
	st.NewParts = c.newStateParts
	return st, nil
}

// newStateParts are a build's parts of the replica state beside the
// matcher, none of which has taken an event.
func (c *ClusterNode) newStateParts() (map[string]cluster.StatePart, error) {
	parts := map[string]cluster.StatePart{}
	if c.cfg.MarketData.Enabled {
		tc, err := trackerConfig(c.cfg)
		if err != nil {
			return nil, err
		}
		fs, err := marketdata.NewFeedState(tc)
		if err != nil {
			return nil, err
		}
		parts[partMarketData] = fs
	}
	if tape := followerTape(c.cfg); tape != nil {
		parts[partConsoleTape] = tapePart{tape}
	}
	disabled, err := newDisabledSessions(c.cfg, true)
	if err != nil {
		return nil, err
	}
	parts[partDisabledSessions] = disabled
	parts[partScheduleProgress] = newScheduleProgress(c.cfg)
	return parts, nil
}

// restore makes a Raft snapshot's or a checkpoint's state this follower's
// hot standby (runner goroutine, or Open): the snapshot's matcher state
// replaces its own matcher's (a failure leaves that empty, and the node
// stops), its running events hash, a standby feed restored from the
// snapshot's feed state (so it continues the sequence), and a console tape
// restored from the snapshot's. The feed and the tape are those the node
// started with while it has applied nothing (a start from a checkpoint),
// else new ones.
func (c *ClusterNode) restore(state []byte, next uint64) error {
	fresh := !c.stateUsed
	c.stateUsed = true
	parts := map[string]cluster.StatePart{}
	md, feed, tape := c.fixmd, c.feed, c.tape
	if !fresh {
		c.closeFeed() // its recovery address is the new feed's
		md, feed = nil, nil
		if c.cfg.MarketData.Enabled {
			var err error
			if md, feed, err = newFeed(c.cfg, c.orderToFeed, nil, true); err != nil {
				return fmt.Errorf("cluster: a standby feed for the Raft snapshot: %w", err)
			}
		}
		tape = followerTape(c.cfg)
	}
	if feed != nil {
		parts[partMarketData] = feedPart{feed}
	}
	if tape != nil {
		parts[partConsoleTape] = tapePart{tape}
	}
	parts[partDisabledSessions] = c.disabled
	parts[partScheduleProgress] = c.schedule
	st := cluster.MatcherStateOf(c.matcher, parts)
	if err := st.Load(state); err != nil {
		if feed != nil && feed != c.feed {
			feed.Close()
		}
		if errors.Is(err, core.ErrSnapshot) {
			// The snapshot holds the state of the sessions and instruments
			// its leader's configuration had, and this node's journal
			// starts from it: no replay can give it those added since
			// (docs/ARCHITECTURE.md, "Cluster", Not yet).
			err = fmt.Errorf("%w (this node's journal starts from a Raft snapshot taken before sessions or instruments were "+
				"added to its configuration: move its data directory aside and start it again, and it catches up from the leader "+
				"as a new node does)", err)
		}
		return err
	}
	if !fresh && feed != nil {
		c.feedRefusal = feed.RefuseRecovery()
		if c.sendingB {
			feed.SendStandbyB()
		}
	}
	c.hash, c.tape, c.feed, c.fixmd = st.Hash, tape, feed, md
	c.sink = standbySink{hash: st.Hash, disabled: c.disabled, schedule: c.schedule, feed: feed, tape: tape, log: c.log,
		configured: configuredInstruments(c.cfg)}
	c.sink.open, c.sink.rest = standbyViews(c.cfg, st.Matcher)
	if slices.Contains(st.Missing, partMarketData) && feed != nil {
		c.log.Error("cluster: ALERT: restored from a Raft snapshot without market data state (built by a node without market data); this node will not publish market data if it leads")
		c.closeFeed()
	}
	if slices.Contains(st.Missing, partScheduleProgress) {
		c.log.Warn("cluster: restored from a Raft snapshot without the schedule's progress (built by an older node); this node keeps its own")
	}
	if slices.Contains(st.Missing, partDisabledSessions) {
		c.log.Warn("cluster: restored from a Raft snapshot without the disabled sessions (built by an older node); this node keeps its own list")
	}
	if slices.Contains(st.Missing, partConsoleTape) {
		c.log.Warn("cluster: restored from a Raft snapshot without the console tape's state; the console shows the trades from here on only")
	}
	c.log.Info("cluster: state restored from a Raft snapshot", "next_seq", next, "events_hash", fmt.Sprintf("%016x", c.hash.Sum64()),
		"parts", len(parts)-len(st.Missing))
	return nil
}

// serveFeed ends the standby feed's refusal of recovery connections: the
// feed is closed, or serves as the leader's.
func (c *ClusterNode) serveFeed() {
	if c.feedRefusal != nil {
		c.feedRefusal()
		c.feedRefusal = nil
	}
}

// closeFeed drops the standby feed (runner goroutine, or before it runs).
func (c *ClusterNode) closeFeed() {
	c.serveFeed()
	if c.feed != nil {
		c.feed.Close()
		c.feed, c.fixmd, c.sink.feed, c.sink.err = nil, nil, nil, nil
	}
}

// standbySink passes every event of a committed command applied while
// following to the running hash and, in replay mode (nothing is sent), to
// the standby feed. The matcher cannot take an error from a sink: the first
// one is kept and the feed dropped by applyCommitted.
type standbySink struct {
	hash     *journal.HashSink
	disabled *disabledSessions
	schedule *scheduleProgress
	open     *gateway.OpenView
	rest     *ops.StandbyResting
	feed     *marketdata.Feed
	tape     *console.Tape
	log      *slog.Logger
	// configured and conflict: a configured instrument the journal adds
	// stops the node (addedAgain). added are the instruments new to the
	// configuration at this start, while Open replays the committed
	// journal: a status change of one refuses the start
	// (changedBeforeConfigured).
	configured, added map[uint32]string
	conflict          error
	slot              [core.EventSlotMin]byte
	err               error
}

func (k *standbySink) Claim() []byte { return k.slot[:] }

func (k *standbySink) Commit() {
	n := venue.MessageHeaderSize + int(binary.LittleEndian.Uint16(k.slot[:]))
	copy(k.hash.Claim(), k.slot[:n])
	k.hash.Commit()
	if k.open != nil {
		k.open.Event(k.slot[:n])
		k.rest.Event(k.slot[:n])
	}
	if k.feed != nil && k.err == nil {
		k.err = k.feed.Replay(k.slot[:n])
	}
	if k.tape != nil {
		k.tape.Replay(k.slot[:n])
	}
	if err := k.disabled.Event(k.slot[:n]); err != nil {
		k.log.Error("cluster: session control", "err", err)
	}
	_ = k.schedule.Event(k.slot[:n]) // never fails
	if k.conflict == nil {
		k.conflict = addedAgain(k.configured, k.slot[:n])
	}
	if k.conflict == nil {
		k.conflict = changedBeforeConfigured(k.added, k.slot[:n])
	}
}

// standbyViews starts the open-order view and the control plane's resting
// orders a follower keeps from the events it applies (Replica.Open,
// Replica.Resting) from the books of a matcher that is not running (new,
// or restored from a Raft snapshot): the one walk of the books, while
// following. The open-order view has the gateway's bounds
// (engine.orders_max and engine.clordids_max, as buildSessions gives them).
func standbyViews(cfg *config.Config, m *core.Matcher) (*gateway.OpenView, *ops.StandbyResting) {
	instruments := listedInstruments(cfg, m)
	resting := openOrdersOf(m, instruments)
	open := gateway.NewOpenView(len(cfg.Sessions), cfg.Engine.OrdersMax, cfg.Engine.ClOrdIDsMax)
	open.Seed(resting)
	open.SeedSuperseded(m.SupersededClOrdIDs(nil))
	open.SeedEnded(m.EndedClOrdIDs(nil))
	return open, ops.NewStandbyResting(m, instruments, resting)
}

// leaderHash receives the leader's events hash at a snapshot point.
func (c *ClusterNode) leaderHash(seq, hash uint64) error {
	if c.leading.Load() {
		return nil
	}
	return c.check.Leader(seq, hash)
}

// onRole runs on the runner goroutine.
func (c *ClusterNode) onRole(role cluster.Role) {
	switch role {
	case cluster.RoleServing:
		// A process serves one leadership: elected again once deposed
		// (before its re-execution) or once it handed the leadership over
		// at its stop, as Raft may elect it when the node it handed to
		// loses its election, it holds the leadership without a venue
		// until it restarts or stops, and the others then elect.
		if c.leading.Swap(true) {
			c.log.Warn("cluster: elected again before this process restarts or stops: taking no orders")
			return
		}
		// From here on the runner never touches the matcher: the server owns it.
		next := c.node.ProposeNext()
		go c.serve(next)
	case cluster.RoleDeposed:
		select {
		case <-c.stop: // handed over as the node stops (handOverAtStop)
		default:
			c.log.Error("cluster: leadership lost: taking no more orders; restart to rebuild from the committed log")
		}
		c.once.Do(func() { close(c.deposed) })
	}
}

// onLeader runs on the runner goroutine when the node learns of a leader:
// it records the terms (recordTerms) and wakes a deposed node waiting to
// name the new leader to its FIX clients (logOutFIX).
func (c *ClusterNode) onLeader(id uint64) {
	c.recordTerms(id)
	// An operator reading one node's log learns which node its clients
	// are sent to, each time that changes.
	if id != c.cfg.Cluster.NodeID {
		fix := ""
		for _, p := range c.cfg.Cluster.Peers {
			if p.ID == id {
				fix = p.FIXAddr
			}
		}
		c.log.Info("cluster: another node leads", "leader", id, "leader_fix", fix)
	}
	select {
	case c.leaderChanged <- struct{}{}:
	default: // one wake-up pending is enough: the waiter reads the leader anew
	}
}

// recordTerms writes the data directory's record of the configured terms
// when they changed (checkTermsRecord), once the node knows a leader: the
// cluster runs under its terms, its peers having taken its streams. A
// node refused by its peers for other terms records nothing, so started
// again with the cluster's terms it is not refused for those it was
// refused with (docs/ARCHITECTURE.md, "The configured terms and the
// journal"). Off the runner goroutine: the write syncs a file.
func (c *ClusterNode) recordTerms(uint64) {
	c.termsOnce.Do(func() {
		u := c.terms
		if u == nil || !u.dirty {
			return
		}
		go func() {
			if err := u.write(); err != nil {
				c.log.Error("cluster: the configured terms could not be recorded; the next start compares the configuration with the record as it was",
					"err", err)
				return
			}
			c.log.Info("cluster: configured terms recorded", "changes", u.changes, "new_sessions", u.newSessions,
				"new_instruments", u.newInstruments, "replaced", u.replaced)
		}()
	})
}

// serve turns this node into the venue.
func (c *ClusterNode) serve(next uint64) {
	defer close(c.served)
	select {
	case <-c.stop:
		// Led only once Close began: a venue started now would be left
		// serving. The follower's parts, which no venue took, are Close's.
		return
	default:
	}
	// The gate stops answering as a follower; its socket stays open, its
	// queued connections with it, for the venue's edge (Replica.FIXSocket).
	sock := c.gate.HandOver()
	closeSock := func() {
		if sock != nil {
			sock.Close() // the venue's edge, if it took it, closed it already
		}
	}
	// The runner no longer applies commands: the progress is final. Saved
	// before the schedule reads it (ops.Start), so that it runs only the
	// transitions after the old leader's last one.
	if c.cfg.Schedule.Enabled {
		if err := c.schedule.save(c.cfg.Venue.DataDir, c.cfg.Schedule); err != nil {
			closeSock()
			c.fail(fmt.Errorf("cluster: the schedule's progress: %w", err))
			return
		}
	}
	opts := c.opts
	c.serveFeed() // the leader's feed serves recovery on the same listener
	// The venue's snapshots wait for its own commands to commit: the
	// journal advances the snapshotter's durable sequence (never the
	// node's committed seq, which a deposed leader sees pass its lost
	// commands' seqs).
	j := cluster.NewJournal(c.runner, c.node, next, c.snapDurable)
	j.OnCommit = func(_ int, took time.Duration) { c.commitSeconds.Observe(took.Seconds()) }
	opts.Replica = &Replica{Matcher: c.matcher, Journal: j, Hash: c.hash, Snaps: c.snaps, SnapshotsFrom: c.snapshotsFrom(),
		OnSnapshot: func(seq uint64) { c.runner.ProposeCheck(seq, c.hash.Sum64()) },
		Feed:       c.feed, Tape: c.tape, FixMD: c.fixmd, OrderToFeed: c.orderToFeed, FIX: c.fix,
		Open: c.sink.open, Resting: c.sink.rest, OnHalt: c.leaderHalted, Leader: c.leaderText, Phases: c.schedule.Phases(),
		EndOfDayNs: c.schedule.endOfDayNs, EndOfDay: c.schedule.endOfDayReport(), FIXSocket: sock, StoppingText: c.stoppingText()}
	if c.adminL != nil {
		c.venueView = c.adminL.view()
		opts.Replica.Admin = c.venueView
	}
	if c.cfg.MarketData.Enabled && c.feed == nil {
		// Serve without the feed rather than publish a sequence a receiver
		// could not reconcile.
		cfg := *c.cfg
		cfg.MarketData.Enabled = false
		c.cfg = &cfg
	}
	// The matcher does not run before srv.Start, and the runner no longer
	// touches it: reading it here is safe.
	resting := c.matcher.RestingOrders()
	began := time.Now()
	srv, err := New(c.cfg, opts)
	built := time.Now()
	if err == nil {
		err = srv.Start()
	}
	if err != nil {
		closeSock()
		c.fail(fmt.Errorf("cluster: starting to lead: %w", err))
		return
	}
	// Where a promotion's time goes (docs/benchmarks.md, "failover"): the
	// build takes the views the follower kept (standbyViews), so it no
	// longer grows with the resting orders, logged to show it.
	c.log.Info("cluster: venue built on the hot standby", "build", built.Sub(began).String(),
		"start", time.Since(built).String(), "resting_orders", resting)
	c.mu.Lock()
	c.srv = srv
	c.mu.Unlock()
	// The venue's admin API takes the calls from here on; the follower's
	// answers those it took (503 not_leader) and stops accepting.
	c.shutdownFollowerAdmin(2 * time.Second)
}

// statusServer is the HTTP server of the metrics listener and of a
// cluster node's status listener around h. Their calls need no body and
// are answered at once (a scrape, the cluster's status, a transfer), and
// whoever reaches the listener may call them, so each is bounded in time
// as the admin API's are: a request's headers within ReadHeaderTimeout,
// the whole request within ReadTimeout (the server reads a body it was
// promised before it answers: a request whose body never came held its
// connection for good, and AdminConnsBeyondStreams of them every
// connection the listener holds, so that no scrape was answered), the
// answer within WriteTimeout (a client that stops reading a /metrics
// larger than the socket buffers), and a connection between requests,
// kept for the scraper's next, within IdleTimeout.
//
// Every answer is marked nosniff: a browser reads /metrics, /cluster/status
// and their refusals as what their Content-Type says, never as a page.
func statusServer(h http.Handler) *http.Server {
	nosniff := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
	return &http.Server{Handler: nosniff, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 16 << 10}
}

// adminServer is a cluster node's admin API server around h (one
// connection per call: sharedListener.serve, ops.Config.Listener).
func adminServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second}
}

// adminTLS serves TLS on l as [admin] says.
func (c *ClusterNode) adminTLS(l net.Listener) (net.Listener, error) {
	return ops.WithTLS(l, c.cfg.Admin)
}

// leaderHalted is told that the venue halted while this node led. A lost
// leadership has its own path (Deposed). Any other failure (the disk
// refused the journal or a FIX store, the matcher failed) would leave a
// leader that refuses every order while the followers are healthy: the
// node fails (Failed), its process exits, and the others elect a leader
// (docs/ARCHITECTURE.md, "Cluster").
func (c *ClusterNode) leaderHalted(err error) {
	if errors.Is(err, cluster.ErrLostLeadership) {
		return
	}
	c.fail(fmt.Errorf("cluster: the venue halted while this node led, so it leaves the cluster to the others: %w", err))
}

// fail reports a fail-stop error (Failed) without blocking: the first one
// is what the owner acts on (its process exits), a later one is only
// logged. A blocked report would hold its goroutine for good, the
// promotion's (serve) among them, while nobody may read Failed; Close
// waits for that one (awaitPromotion).
func (c *ClusterNode) fail(err error) {
	select {
	case c.failed <- err:
	default:
		c.log.Error("cluster: a further failure while the first is reported", "err", err)
	}
}

// closeFollowerAdmin stops answering the admin address as a follower.
func (c *ClusterNode) closeFollowerAdmin() {
	if c.followerAdmin != nil {
		_ = c.followerAdmin.srv.Close()
	}
}

// shutdownFollowerAdmin stops the follower's admin server once the calls
// it took are answered, waiting at most timeout; the socket stays open.
func (c *ClusterNode) shutdownFollowerAdmin(timeout time.Duration) {
	if c.followerAdmin != nil {
		c.followerAdmin.stop(time.Now().Add(timeout))
	}
}

// leaderPeer is the peer this node knows to lead (ok false: none, or
// this node).
func (c *ClusterNode) leaderPeer() (config.ClusterPeer, bool) {
	lead := c.runner.Lead()
	for _, p := range c.cfg.Cluster.Peers {
		if p.ID == lead && lead != c.cfg.Cluster.NodeID {
			return p, true
		}
	}
	return config.ClusterPeer{}, false
}

// leaderText says which node leads, for the follower's admin answers, and
// its admin address when its [[cluster.peer]] gives one, as operators
// reach it (config.ClusterPeer.AdminReachedAt: an admin_addr of 0.0.0.0
// takes the host of the leader's status_addr).
func (c *ClusterNode) leaderText() (text, adminAddr string) {
	p, ok := c.leaderPeer()
	switch {
	case !ok:
		return "no leader is known yet", ""
	case p.AdminAddr != "":
		addr := p.AdminReachedAt()
		return fmt.Sprintf("node %d leads (FIX %s, cluster status %s): its admin API at %s takes the call", p.ID, p.FIXAddr, p.StatusAddr, addr), addr
	}
	return fmt.Sprintf("node %d leads (FIX %s, cluster status %s): its admin API takes the call (its address is not in the configuration: "+
		"admin_addr of its [[cluster.peer]])", p.ID, p.FIXAddr, p.StatusAddr), ""
}

// warnUnreachableAdmin warns of each peer whose admin_addr, once
// AdminReachedAt put the host of its status_addr or fix_addr there, still
// names no host (0.0.0.0, :: or none: every address of that peer listens
// on all interfaces): followers name it as it is when that peer leads, in
// their not_leader answers' leader_admin_addr and the words
// `fixvenue admin` prints, where no client reaches it (only a browser's
// page puts the host it reached the follower at there).
func (c *ClusterNode) warnUnreachableAdmin() {
	for _, p := range c.cfg.Cluster.Peers {
		if p.AdminAddr == "" {
			continue
		}
		if host, _, err := net.SplitHostPort(p.AdminReachedAt()); err == nil && config.UnspecifiedHost(host) {
			c.log.Warn("cluster: a peer's admin_addr names no host a client reaches, nor do its status_addr and fix_addr: "+
				"when it leads, the followers' not_leader answers name it as it is; give admin_addr the host operators reach that node at",
				"peer", p.ID, "admin_addr", p.AdminAddr, "status_addr", p.StatusAddr, "fix_addr", p.FIXAddr)
		}
	}
}

// leaderFIX is the leader's FIX address as this node knows it.
func (c *ClusterNode) leaderFIX() string {
	p, _ := c.leaderPeer()
	return p.FIXAddr
}

// Deposed is closed when this node lost the leadership it served with.
func (c *ClusterNode) Deposed() <-chan struct{} { return c.deposed }

// Failed delivers a fail-stop error (disk, divergence, start-up as leader).
func (c *ClusterNode) Failed() <-chan error { return c.failed }

// StatusAddr is the bound status address.
func (c *ClusterNode) StatusAddr() string { return c.statusL.Addr().String() }

// StatusTLS reports whether the status listener serves TLS (with the
// admin API's certificate: admin.tls_cert_file).
func (c *ClusterNode) StatusTLS() bool { return c.cfg.Admin.TLSCertFile != "" }

// FIXAddr is this node's FIX address.
func (c *ClusterNode) FIXAddr() string { return c.cfg.FIX.Addr }

// Server is the venue while this node leads, else nil.
func (c *ClusterNode) Server() *Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.srv
}

// serving reports whether this node's venue takes orders: it leads, and
// was not deposed (a deposed node keeps its venue, which takes nothing,
// until its process restarts: PrepareRestart).
func (c *ClusterNode) serving() bool {
	select {
	case <-c.deposed:
		return false
	default:
		return c.Server() != nil
	}
}

// ClusterStatus is what /cluster/status answers.
type ClusterStatus struct {
	cluster.NodeStatus
	Serving    bool   `json:"serving"`
	FIXAddr    string `json:"fix_addr"`
	EventsHash string `json:"events_hash,omitempty"` // of the commands applied as follower
	// FeedNextSeq and FeedStateHash are the standby feed's next sequence
	// number and the xxhash of its state (books, statistics, sequence), and
	// TapeHash that of the console tape's state, as of the commands applied
	// as follower; empty when off.
	FeedNextSeq   uint64 `json:"feed_next_seq,omitempty"`
	FeedStateHash string `json:"feed_state_hash,omitempty"`
	TapeHash      string `json:"tape_hash,omitempty"`
}

// followerDigests fills the follower's feed and tape digests (runner
// goroutine, between commands).
func (c *ClusterNode) followerDigests(out *ClusterStatus) {
	var b bytes.Buffer
	if c.feed != nil && c.feed.WriteState(&b) == nil {
		out.FeedStateHash = fmt.Sprintf("%016x", xxhash.Sum64(b.Bytes()))
		c.feed.View(func(_ *marketdata.Tracker, next uint64) { out.FeedNextSeq = next })
	}
	b.Reset()
	if c.tape != nil && c.tape.WriteState(&b) == nil {
		out.TapeHash = fmt.Sprintf("%016x", xxhash.Sum64(b.Bytes()))
	}
}

func (c *ClusterNode) startStatus(addr string, inherited net.Listener) error {
	sl, err := listenShared(addr, inherited)
	if err != nil {
		return fmt.Errorf("cluster status_addr: %w", err)
	}
	c.statusL = sl
	c.registerMetrics()
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(c.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/cluster/status", func(w http.ResponseWriter, _ *http.Request) {
		if c.diverged.Load() {
			http.Error(w, "diverged: this replica's events hash differs from the leader's; it stopped", http.StatusServiceUnavailable)
			return
		}
		st, err := c.runner.Status()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		out := ClusterStatus{NodeStatus: st, Serving: c.serving(), FIXAddr: c.cfg.FIX.Addr}
		if !c.leading.Load() {
			// The hash is read on the runner goroutine, which owns it while following.
			_ = c.runner.Do(func(*cluster.Node) {
				out.EventsHash = fmt.Sprintf("%016x", c.hash.Sum64())
				c.followerDigests(&out)
			})
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("/cluster/transfer", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST /cluster/transfer?to=<node id>", http.StatusMethodNotAllowed)
			return
		}
		// A transfer deposes the leader, whose FIX sessions all end: an
		// operator's change, checked as the admin API checks its own
		// (README, "Operating the venue").
		operator, status, code, reason := ops.AuthorizeChange(&c.cfg.Admin, r)
		if status != 0 {
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="fixvenue"`)
			}
			http.Error(w, fmt.Sprintf("leadership transfer refused (%s): %s; a transfer needs an operator token of the node's [[admin.token]]", code, reason), status)
			return
		}
		to, err := strconv.ParseUint(r.URL.Query().Get("to"), 10, 64)
		if err != nil {
			http.Error(w, fmt.Sprintf("to: want the id of a node of [[cluster.peer]] (a positive number), got %q", r.URL.Query().Get("to")),
				http.StatusBadRequest)
			return
		}
		var refused string
		if err := c.runner.Do(func(n *cluster.Node) { refused = transferRefusal(n, c.cfg.Cluster.NodeID, to) }); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		if refused != "" {
			http.Error(w, refused, http.StatusConflict)
			return
		}
		c.log.Info("cluster: leadership transfer requested", "to", to, "operator", operator, "remote", r.RemoteAddr)
		fmt.Fprintf(w, "leadership transfer to node %d requested\n", to)
	})
	if c.cfg.Admin.OperatorTokens() == 0 {
		c.log.Warn("cluster status_addr: no operator token configured; POST /cluster/transfer is refused (add an [[admin.token]])")
	}
	if c.cfg.Admin.InClear(addr) {
		// Not refused, as the admin API's address is: nodes on a private
		// network served it so before it could serve TLS, and it reads
		// without a token.
		c.log.Warn("cluster status_addr: plain HTTP beyond loopback: an operator token sent to POST /cluster/transfer crosses the network in clear "+
			"(admin.tls_cert_file and tls_key_file serve TLS here too)", "addr", addr)
	}
	// A connection per call, as the admin API's (adminServer); over TLS
	// with the admin API's certificate and client CA when it has them
	// (docs/ARCHITECTURE.md, "The status listener").
	if c.status, err = sl.serve(statusServer(ops.CrossOrigin(ops.LoopbackNames(sl.ln, mux))), c.adminTLS); err != nil {
		sl.close()
		return fmt.Errorf("cluster status_addr: %w", err)
	}
	return nil
}

// transferRefusal starts a transfer of the leadership to node to on the
// runner goroutine, or says why not: only the leader hands it over, to
// another member heard from within the election timeout
// (raft.Progress.RecentActive; one behind is brought up to date by Raft
// first), and not one catching up from a Raft snapshot after losing its
// log (cluster.Node.CatchingUp: Raft would count it caught up and hand it
// a leadership it cannot win, cluster/doc.go, "Fresh directories"); Raft
// itself would take a transfer to a node that is down, park proposals
// while it waits (Runner) and then give up.
func transferRefusal(n *cluster.Node, self, to uint64) string {
	st := n.Status()
	switch pr, member := st.Progress[to]; {
	case !n.IsLeader():
		return fmt.Sprintf("node %d is not the leader (the leader is node %d): ask it", self, st.Lead)
	case to == self:
		return fmt.Sprintf("node %d already leads", self)
	case !member:
		return fmt.Sprintf("node %d is not a member of the cluster", to)
	case !pr.RecentActive:
		return fmt.Sprintf("node %d has not been heard from within the election timeout: it would not take the leadership", to)
	}
	if err := n.TransferLeader(to); err != nil {
		return err.Error()
	}
	return ""
}

func (c *ClusterNode) registerMetrics() {
	st := func(f func(cluster.NodeStatus) float64) func() float64 {
		return func() float64 {
			s, err := c.runner.Status()
			if err != nil {
				return 0
			}
			return f(s)
		}
	}
	ts := c.tr.Stats()
	id := float64(c.cfg.Cluster.NodeID) // read here: serve replaces c.cfg
	c.commitSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fixvenue_cluster_commit_seconds",
		Help:    "Leader: time from proposing a batch to a quorum having it on disk.",
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16)})
	c.reg.MustRegister(c.commitSeconds,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_cluster_follower_lag_entries", Help: "Leader: entries the slowest follower has not yet on disk."},
			st(func(s cluster.NodeStatus) float64 {
				lag := uint64(0)
				for _, m := range s.Match {
					if s.Commit > m {
						lag = max(lag, s.Commit-m)
					}
				}
				return float64(lag)
			})),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_cluster_followers_catching_up",
			Help: "Leader: followers catching up from a Raft snapshot after losing their log (cluster/doc.go, \"Fresh directories\"); a transfer to one is refused."},
			st(func(s cluster.NodeStatus) float64 { return float64(len(s.CatchingUp)) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_cluster_proposals_refused_total", Help: "Batches Raft refused (no longer leader, leadership transfer, uncommitted bound): the pipeline fails and the node restarts."},
			func() float64 { return float64(c.runner.ProposalsRefused()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_cluster_term", Help: "Raft term."},
			st(func(s cluster.NodeStatus) float64 { return float64(s.Term) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_cluster_leader", Help: "Id of the leader this node knows (0: none)."},
			st(func(s cluster.NodeStatus) float64 { return float64(s.Lead) })),
		// The node's own id and role, so that a scrape of one node says
		// whether it leads without the mapping of scrape targets to ids.
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_cluster_node_id", Help: "This node's id (cluster.node_id)."},
			func() float64 { return id }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_cluster_serving",
			Help: "1 while this node leads and its venue takes orders (/cluster/status \"serving\"), else 0."},
			func() float64 {
				if c.serving() {
					return 1
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_cluster_commit_index", Help: "Raft commit index."},
			st(func(s cluster.NodeStatus) float64 { return float64(s.Commit) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_cluster_applied_index", Help: "Raft index applied on this node."},
			st(func(s cluster.NodeStatus) float64 { return float64(s.Applied) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_cluster_leader_changes_total", Help: "Changes of the leader this node knows (to none included)."},
			func() float64 { return float64(c.runner.LeaderChanges()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_cluster_hash_mismatches_total", Help: "Snapshot points where this replica's events hash differed from the leader's (it stops)."},
			func() float64 { return float64(c.mismatches.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_cluster_hash_checks_total", Help: "Snapshot points where this replica's events hash equalled the leader's."},
			func() float64 { return float64(c.check.Checked.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_cluster_checkpoint_index",
			Help: "Raft index of the newest checkpoint this node kept, which its next start restores (0: none; cluster/doc.go, \"Checkpoints\")."},
			func() float64 { return float64(c.node.Checkpoints().Index.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_cluster_checkpoint_failures_total",
			Help: "Snapshot builds or checkpoint writes that failed since start (the log says why): the next start replays from an older checkpoint."},
			func() float64 { return float64(c.node.Checkpoints().Failures.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_cluster_checkpoints_built_total",
			Help: "Checkpoints this node built and kept since start (cluster/doc.go, \"Checkpoints\")."},
			func() float64 { return float64(c.node.Checkpoints().Built.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_cluster_checkpoint_build_seconds",
			Help: "The last checkpoint's build, from its start to its file on disk: a background goroutine's load, replay and save of the replica state (0: none yet)."},
			func() float64 { return time.Duration(c.node.Checkpoints().LastBuildNanos.Load()).Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_cluster_line_b_packets_sent_total",
			Help: "Feed packets this node's standby feed sent on the B line while following (marketdata.feed_b_from = \"followers\"; the leader's venue counts its lines in fixvenue_md_*)."},
			func() float64 { return float64(c.lineBSent.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_cluster_line_b_packets_stale_total",
			Help: "Feed packets this node's standby feed kept off the B line as older than " + marketdata.StandbyBLineAgeMax.String() + " (a follower catching up: receivers have them from the A line)."},
			func() float64 { return float64(c.lineBStale.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_cluster_peer_conns_rejected_total", Help: "Peer connections refused (garbage, other cluster)."},
			func() float64 { return float64(ts.ConnsRejected.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_cluster_peer_frames_bad_total", Help: "Peer frames with a bad length, CRC or message."},
			func() float64 { return float64(ts.FramesBad.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_cluster_messages_dropped_total", Help: "Raft messages dropped at a full queue."},
			func() float64 { return float64(ts.DroppedOut.Load() + ts.DroppedIn.Load()) }),
	)
	// A follower has no venue metrics: its failing journal snapshots
	// showed in its log alone. One snapshotter as follower and as leader
	// (Replica.Snaps), so the figures go on across a promotion.
	c.reg.MustRegister(snapshotMetrics("fixvenue_cluster_", " by this node, as follower and as leader", func() []*journal.Snapshotter { return []*journal.Snapshotter{c.snaps} })...)
}

// promotionWait bounds how long Close waits for a promotion in progress
// (serve) to finish: the venue is built and started in milliseconds; a
// start that hangs must not hold the process's exit for ever.
const promotionWait = 30 * time.Second

// Close stops the venue (if leading), the node and its listeners. A node
// closed while it starts to lead waits for the venue it is starting
// (awaitPromotion) and closes it too, where it returned first and left
// that venue serving (its FIX listener, pipeline and admin API); the wait
// comes before the runner stops, as the venue's start and close may
// propose through it.
func (c *ClusterNode) Close() error {
	var errs []error
	close(c.stop) // from here on a promotion starts nothing (serve)
	settled := c.awaitPromotion()
	if srv := c.Server(); srv != nil {
		errs = append(errs, srv.Close())
		if c.leading.Load() {
			c.handOverAtStop()
		}
	}
	c.runner.Stop()
	// The runner may have promoted the node between the wait and its
	// stop: that serve found c.stop closed and returned at once.
	settled = settled && c.awaitPromotion()
	if settled && c.Server() == nil {
		// A follower's standby feed and FIX sessions, or those of a
		// promotion that started no venue; a leader's server closed them,
		// and a promotion still running holds them.
		c.closeFeed()
		errs = append(errs, c.fix.close())
	}
	if settled && c.snaps != nil {
		// After the runner, which captures; a venue that took it closed it
		// already.
		c.snaps.Close()
	}
	c.gate.Close()
	c.closeFollowerAdmin()
	if c.deposedAdmin != nil {
		_ = c.deposedAdmin.srv.Close()
	}
	if c.adminL != nil {
		c.adminL.close()
	}
	errs = append(errs, c.tr.Close())
	c.ShutdownStatus(2 * time.Second)
	c.statusL.close()
	errs = append(errs, c.node.Close())
	c.dirLock.release()
	return errors.Join(errs...)
}

// awaitPromotion waits, when the node has started to lead, until serve
// returned, at most promotionWait; false when it did not.
func (c *ClusterNode) awaitPromotion() bool {
	if !c.leading.Load() {
		return true
	}
	t := time.NewTimer(promotionWait)
	defer t.Stop()
	select {
	case <-c.served:
		return true
	case <-t.C:
		c.log.Error("cluster: closed while starting to lead, and the promotion did not return within the wait: "+
			"the venue it starts is left running (its FIX listener and sessions, pipeline, admin API and market data feed)",
			"wait", promotionWait.String())
		return false
	}
}

// The sockets a node hands to the process that replaces it
// (PrepareRestart), by name, and takes back (Options.Inherited).
const (
	InheritedAdmin  = "admin"
	InheritedStatus = "status"
	InheritedFIX    = "fix"
)

// PrepareRestart is what a node deposed by a leadership transfer does
// before it replaces itself (exec), so that every operator's call gets an
// answer, never a reset or refused connection (docs/ARCHITECTURE.md,
// "Losing leadership"): the admin address answers 503 not_leader from now
// on; the venue's admin API answers the calls it took (a command applied
// but not committed: 503 unconfirmed, as the journal stage stopped) and
// stops accepting, and its FIX sessions are logged out naming the new
// leader (logOutFIX), each waiting at most timeout; then the admin
// and status sockets stop accepting, the calls accepted are answered, and
// the sockets are returned, no longer closed on exec, by name, for the next
// process (Options.Inherited): the calls the kernel queued meanwhile wait
// there, and the follower it starts as answers them.
func (c *ClusterNode) PrepareRestart(timeout time.Duration) map[string]uintptr {
	if c.adminL != nil {
		var err error
		if c.deposedAdmin, err = c.adminL.serve(adminServer(ops.Deposed(c.leaderText)), c.adminTLS); err != nil {
			c.log.Warn("the admin API cannot answer as a deposed node", "err", err)
		}
	}
	if c.leading.Load() {
		// Deposed while the venue started: its admin API may be taking
		// calls already.
		select {
		case <-c.served:
		case <-time.After(timeout):
		}
	}
	var wg sync.WaitGroup
	if srv := c.Server(); srv != nil {
		wg.Go(func() {
			deadline := time.Now().Add(timeout)
			c.venueView.settle(deadline) // listenerView.shutdown
			srv.ShutdownAdmin(time.Until(deadline))
		})
		wg.Go(func() { c.logOutFIX(srv, timeout) })
	}
	// A node deposed while it started to lead may still have its
	// follower's server.
	wg.Go(func() { c.shutdownFollowerAdmin(timeout) })
	wg.Wait()
	fds := map[string]uintptr{}
	if c.adminL != nil {
		c.adminL.stop(timeout)
		if c.deposedAdmin != nil {
			c.deposedAdmin.stop(time.Now().Add(timeout))
		}
		if fd, err := c.adminL.execFile(); err == nil {
			fds[InheritedAdmin] = fd
		} else {
			c.log.Warn("the admin socket is not handed to the restarted process", "err", err)
		}
	}
	c.statusL.stop(timeout)
	c.status.stop(time.Now().Add(timeout))
	if fd, err := c.statusL.execFile(); err == nil {
		fds[InheritedStatus] = fd
	} else {
		c.log.Warn("the status socket is not handed to the restarted process", "err", err)
	}
	// The FIX socket likewise, once its sessions are logged out: the
	// venue's edge (or, deposed while it started to lead, the follower's
	// gate) stops accepting and leaves it open, and the logons the kernel
	// queues meanwhile are answered by the follower's gate, naming the
	// leader.
	var fix *net.TCPListener
	if srv := c.Server(); srv != nil {
		fix = srv.releaseFIXSocket()
	}
	if fix == nil {
		fix = c.gate.HandOver()
	}
	if fix != nil {
		if fd, err := execFile(fix); err == nil {
			fds[InheritedFIX] = fd
		} else {
			c.log.Warn("the FIX socket is not handed to the restarted process", "err", err)
		}
	}
	return fds
}

// deposedLeaderWait bounds how long a deposed node waits to learn the new
// leader before it logs its FIX sessions out: after a transfer the new
// leader's first append follows within a heartbeat or two, and a node cut
// off from the others may not hear of one for an election or more, when
// its clients are better told to try the other nodes than held.
const deposedLeaderWait = time.Second

// logOutFIX tells each logged-on FIX session of the deposed venue that the
// leadership moved, with a Logout naming the new leader's FIX address as a
// follower's refusal does (followerGate.refuse), so that its client logs on
// there rather than guessing from a dropped connection (README, "Cluster:
// three replicas"). The gateway is halted first: from here on it takes no
// order (one taken would be applied to a state the restart discards) and
// journals no disconnect (the new leader cancels those of sessions that do
// not log on to it: fix.cancel_grace); and the FIX edge refuses every
// Logon with the same Text. A Logout carries no business
// content, so sending it changes nothing a replica holds; the wait for the
// leader and for the Logouts to be written is bounded by timeout, as the
// other steps of the restart, and runs beside them, so that a client that
// does not read keeps no node from rebuilding as a follower.
func (c *ClusterNode) logOutFIX(srv *Server, timeout time.Duration) {
	bound := time.NewTimer(timeout)
	defer bound.Stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A client that logs on from here on is refused, told what the
		// logged-on ones are told: taken, its session would end without a
		// word when the process restarts. Before the halt, which may wait
		// on a full queue.
		srv.RefuseLogons(c.deposedText)
		// Halt and the Logouts queue behind what each sender holds: a full
		// queue may hold them up, never the restart (bound).
		srv.gw.Halt(haltReason(cluster.ErrLostLeadership))
		known := time.NewTimer(min(deposedLeaderWait, timeout))
		defer known.Stop()
	wait:
		for c.leaderFIX() == "" {
			select {
			case <-c.leaderChanged:
			case <-known.C:
				break wait
			}
		}
		text := c.deposedText()
		c.log.Info("cluster: logging the FIX sessions out", "text", text)
		<-srv.gw.LogOutAll(text)
	}()
	select {
	case <-done:
	case <-bound.C:
		c.log.Warn("cluster: FIX sessions still connected as the node restarts: their connections close without a Logout written")
	}
}

// deposedText is the Text of the Logout a deposed leader's FIX clients get
// (logOutFIX), naming the leader it knows.
func (c *ClusterNode) deposedText() string {
	if p, ok := c.leaderPeer(); ok {
		return fmt.Sprintf("leadership moved to node %d; leader FIX address %s", p.ID, p.FIXAddr)
	}
	return "this node lost the cluster's leadership; no leader elected yet, try the other nodes"
}

// handOverAtStop hands the leadership of a node that stops, once its venue
// has stopped (every command it took committed), to the follower holding
// the most of the log among those heard from within the election timeout,
// and waits, at most two election timeouts, until that node leads. Stopped
// without it, the others would elect a leader only once the election
// timeout passed with no heartbeat, a randomised 1 to 2 election timeouts
// of no venue on every planned restart of a leader (docs/ARCHITECTURE.md,
// "Losing leadership"). Refused or not done in time, the stop goes on, and
// the others elect as before.
func (c *ClusterNode) handOverAtStop() {
	self := c.cfg.Cluster.NodeID
	var to uint64
	refused := "no other node heard from within the election timeout (one catching up after losing its log is passed over)"
	if err := c.runner.Do(func(n *cluster.Node) {
		if to = handOverTarget(n, self); to != 0 {
			refused = transferRefusal(n, self, to)
		}
	}); err != nil {
		refused = err.Error()
	}
	if refused != "" {
		c.log.Warn("cluster: leadership not handed over at stop; the others elect a leader once the election timeout passes", "reason", refused)
		return
	}
	c.log.Info("cluster: handing the leadership over at stop", "to", to)
	wait := time.Duration(2*c.cfg.Cluster.ElectionTicks()) * c.cfg.Cluster.HeartbeatInterval()
	for deadline := time.Now().Add(wait); c.runner.Lead() != to; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			c.log.Warn("cluster: leadership not taken over at stop within two election timeouts; the others elect a leader", "to", to)
			return
		}
	}
	c.log.Info("cluster: leadership handed over at stop", "leader", to)
}

// handOverTarget is the follower a stopping leader hands over to: the one
// whose log the leader knows to reach furthest (Progress.Match) among those
// heard from within the election timeout, the lowest id on a tie; 0 for
// none. A follower catching up after losing its log is passed over: its
// Match is what it had acknowledged, not what it holds
// (cluster.Node.CatchingUp).
func handOverTarget(n *cluster.Node, self uint64) uint64 {
	var to, match uint64
	for id, pr := range n.Status().Progress {
		if id == self || !pr.RecentActive || n.CatchingUp(id) {
			continue
		}
		if to == 0 || pr.Match > match || (pr.Match == match && id < to) {
			to, match = id, pr.Match
		}
	}
	return to
}

// stoppingText is the Text of the Logout this node's FIX clients get when
// it stops while leading: another node leads once the election timeout
// passes, so a client told to wait until this one is back would wait for
// nothing. It names the other nodes' FIX addresses.
func (c *ClusterNode) stoppingText() string {
	var others []string
	for _, p := range c.cfg.Cluster.Peers {
		if p.ID != c.cfg.Cluster.NodeID {
			others = append(others, p.FIXAddr)
		}
	}
	return fmt.Sprintf("cluster node %d stopping: another node leads once elected; log on at %s",
		c.cfg.Cluster.NodeID, strings.Join(others, " or "))
}

// ShutdownStatus stops the status server once the answers in flight are
// written, waiting at most timeout; its socket stays open (PrepareRestart
// hands it over, Close closes it).
func (c *ClusterNode) ShutdownStatus(timeout time.Duration) {
	c.status.stop(time.Now().Add(timeout))
}
