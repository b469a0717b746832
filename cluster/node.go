package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"google.golang.org/protobuf/proto"

	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/journal"
)

// Raft settings (doc.go, "Raft settings"). A tick is
// RunnerConfig.TickInterval (50 ms by default): heartbeats every tick,
// elections after 10 to 20 ticks.
const (
	DefaultHeartbeatTicks = 1
	DefaultElectionTicks  = 10
	// maxSizePerMsgBytes bounds the entries of one append message.
	maxSizePerMsgBytes = 1 << 20
	// maxInflightMsgs and maxInflightBytes bound the appends in flight to one
	// follower: batches are pipelined, not sent one round trip at a time.
	maxInflightMsgs  = 256
	maxInflightBytes = 32 << 20
	// maxUncommittedBytes bounds what a leader accepts before a quorum has
	// it; a proposal beyond it is refused (back-pressure, never a drop).
	maxUncommittedBytes = 64 << 20
)

// Errors of Propose.
var (
	// ErrNotLeader: only the leader takes proposals.
	ErrNotLeader = errors.New("cluster: not the leader")
	// ErrSequence: a proposal's first command must carry ProposeNext().
	ErrSequence = errors.New("cluster: proposal does not continue the log")
)

// NodeConfig configures a Node.
type NodeConfig struct {
	ClusterID uint64
	NodeID    uint64
	Voters    []uint64 // every voting node, this one included
	Dir       string   // the replica's journal directory
	Journal   journal.Config
	// HeartbeatTicks and ElectionTicks default to 1 and 10.
	HeartbeatTicks, ElectionTicks int
	// Apply receives every committed command once, in seq order: at Open the
	// committed part of the journal, then each command as it commits.
	// Returning an error stops the node (fail-stop).
	Apply func(seq uint64, cmd []byte) error
	// Applied, when set, is called after Apply has taken each batch of
	// entries that committed together (not at Open's replay): a follower's
	// point to hand on what its commands built (its standby feed's B-line
	// packets, one batch at a time). It runs on the caller of Process.
	Applied func()
	// OnCheck receives the leader's events hash from a committed check entry
	// (ProposeCheck); nil ignores them. An error stops the node.
	OnCheck func(seq, hash uint64) error
	// Send transmits a message to another node; it must not block (a
	// transport drops what it cannot queue: Raft retransmits).
	Send   func(m *raftpb.Message)
	Logger *slog.Logger
	// EntriesInMemoryMax bounds the Raft log a replica holds in memory
	// (default EntriesInMemoryMax); a follower behind what is left needs a
	// Raft snapshot.
	EntriesInMemoryMax int
	// NewState and Restore enable Raft snapshots (doc.go, "Raft
	// snapshots"). NewState returns a fresh state, into which this node
	// replays its journal to build a snapshot for a follower too far
	// behind. Restore replaces the state Apply builds with a snapshot's, at
	// Open when the log starts after a snapshot and when one arrives; Apply
	// then continues with command next. Without them a follower behind the
	// leader's compaction point cannot catch up.
	NewState func() (State, error)
	Restore  func(state []byte, next uint64) error
	// ReceivedSnapshot and SnapshotBytesMax: LogConfig's (the transport's
	// Transport.ReceivedSnapshot, cluster.snapshot_bytes_max).
	ReceivedSnapshot func(index, term uint64) string
	SnapshotBytesMax int64
	// DropCheckpoints removes the replica's checkpoints at Open, which then
	// replays the journal from its base: set when the configuration adds
	// sessions or instruments, which the checkpoints' matcher states lack
	// (doc.go, "Checkpoints").
	DropCheckpoints bool
	// CheckpointInterval is the least time between two checkpoints that
	// compactions build (default CheckpointIntervalMin).
	CheckpointInterval time.Duration
}

// Node is one replica: Raft (etcd's RawNode, with AsyncStorageWrites,
// CheckQuorum and PreVote) over a Log. Its methods belong to one goroutine;
// Committed and Failed may be read from any.
type Node struct {
	cfg NodeConfig
	log *Log
	rn  *raft.RawNode

	committed    *ring.Sequence // seq of the last committed command applied here
	appliedIndex uint64
	proposeNext  uint64 // seq the next proposal must start with (leader only)
	leaderTerm   uint64 // term in which this node last became leader, 0 if not leader
	lostTerms    uint64 // times this node stopped being leader
	// snapSent holds, per follower a snapshot was sent to, the ticks since:
	// one not acknowledged within snapshotReportTicks is reported failed, so
	// that the leader probes that follower again (etcd raft waits for it).
	// A transport that reports every snapshot's outcome (Transport, through
	// the Runner) sets snapshotsReported, and the ticks count nothing.
	snapSent          map[uint64]int
	snapshotsReported bool
	// fresh: this node opened a directory it had never used (a new node,
	// or one whose disk was replaced or wiped), "Fresh directories" in
	// doc.go. voteHoldTicks counts down the ticks it grants no vote for.
	fresh         bool
	voteHoldTicks int
	freshLogged   bool

	// lostLogs holds, per follower found refusing entries it had
	// acknowledged (checkLostLog), the snapshot this leader sent it of its
	// own; outbox holds such snapshots until Process sends them.
	lostLogs map[uint64]lostLog
	outbox   []*raftpb.Message
	// ticks counts Tick calls: how long a follower has refused
	// (lostLog.since).
	ticks uint64

	failed error
}

// Open opens the replica in cfg.Dir, applies its committed commands through
// cfg.Apply and returns a follower ready to be ticked.
func Open(cfg NodeConfig) (*Node, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.HeartbeatTicks == 0 {
		cfg.HeartbeatTicks = DefaultHeartbeatTicks
	}
	if cfg.ElectionTicks == 0 {
		cfg.ElectionTicks = DefaultElectionTicks
	}
	switch {
	case cfg.NodeID == 0 || !slices.Contains(cfg.Voters, cfg.NodeID):
		return nil, fmt.Errorf("cluster: node id %d is not one of the voters %v", cfg.NodeID, cfg.Voters)
	case cfg.ClusterID == 0:
		return nil, errors.New("cluster: cluster id 0")
	case cfg.Apply == nil || cfg.Send == nil:
		return nil, errors.New("cluster: Apply and Send are required")
	}
	if (cfg.NewState == nil) != (cfg.Restore == nil) {
		return nil, errors.New("cluster: NewState and Restore go together")
	}
	_, statErr := os.Stat(filepath.Join(cfg.Dir, identityFile))
	fresh := errors.Is(statErr, os.ErrNotExist)
	log, err := OpenLog(cfg.Dir, cfg.ClusterID, cfg.NodeID, cfg.Voters, LogConfig{Journal: cfg.Journal,
		EntriesInMemoryMax: cfg.EntriesInMemoryMax, NewState: cfg.NewState, Logger: cfg.Logger,
		ReceivedSnapshot: cfg.ReceivedSnapshot, SnapshotBytesMax: cfg.SnapshotBytesMax, DropCheckpoints: cfg.DropCheckpoints,
		CheckpointInterval: cfg.CheckpointInterval})
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, log: log, committed: ring.NewSequence(-1), snapSent: map[uint64]int{}, fresh: fresh,
		lostLogs: map[uint64]lostLog{}}
	if fresh {
		n.voteHoldTicks = freshVoteHoldElections * cfg.ElectionTicks
	}
	if err := n.replayCommitted(); err != nil {
		log.Close()
		return nil, err
	}
	rn, err := raft.NewRawNode(&raft.Config{
		ID: cfg.NodeID, ElectionTick: cfg.ElectionTicks, HeartbeatTick: cfg.HeartbeatTicks,
		Storage: log, Applied: n.appliedIndex,
		MaxSizePerMsg: maxSizePerMsgBytes, MaxInflightMsgs: maxInflightMsgs, MaxInflightBytes: maxInflightBytes,
		MaxUncommittedEntriesSize: maxUncommittedBytes,
		CheckQuorum:               true, PreVote: true, AsyncStorageWrites: true,
		// A proposal's commands carry seqs that continue the proposer's own
		// log (ProposeNext). A leader deposed by a message stepped since its
		// last Process still reports IsLeader, and Raft would forward its
		// proposal to the new leader, whose log may continue at another
		// seq: that leader would fail-stop appending it. Only the leader
		// takes proposals; a follower drops them (Propose: ErrNotLeader).
		DisableProposalForwarding: true,
		Logger:                    raftLogger{cfg.Logger.With("node", cfg.NodeID)},
	})
	if err != nil {
		log.Close()
		return nil, err
	}
	n.rn = rn
	return n, nil
}

// replayCommitted restores the newest checkpoint (or else the base) and
// applies the journal's records after it up to the last committed entry;
// the uncommitted tail waits for Raft to commit or replace it.
func (n *Node) replayCommitted() error {
	commit := n.log.state.commit
	end, ok := n.log.SeqEnd(commit)
	if !ok {
		return fmt.Errorf("%w: commit index %d not in the log", ErrCorrupt, commit)
	}
	from := uint64(0)
	// Open made the checkpoint it restores the one built.
	start, what, checkpoint := n.log.base, "the Raft snapshot", n.log.built != nil
	if checkpoint {
		start, what = n.log.built, "the checkpoint"
	}
	if start != nil {
		next, state, err := snapshotNext(start)
		if err != nil {
			return err
		}
		if n.cfg.Restore == nil {
			return fmt.Errorf("cluster: the log starts after a Raft snapshot but this node cannot restore one")
		}
		if err := n.cfg.Restore(state, next); err != nil {
			if checkpoint {
				return fmt.Errorf("cluster: restoring %s at index %d (%s; remove it, and the start replays from an older one or the journal's base): %w",
					what, start.GetMetadata().GetIndex(), checkpointPath(n.cfg.Dir, start.GetMetadata().GetIndex()), err)
			}
			return fmt.Errorf("cluster: restoring %s at index %d: %w", what, start.GetMetadata().GetIndex(), err)
		}
		n.committed.Store(int64(next) - 1)
		from = next
	}
	err := applyJournal(n.cfg.Dir, from, end, n.cfg.Logger, func(seq uint64, cmd []byte) error {
		if err := n.cfg.Apply(seq, cmd); err != nil {
			return err
		}
		n.committed.Store(int64(seq))
		return nil
	})
	if err != nil {
		return fmt.Errorf("cluster: replaying committed commands: %w", err)
	}
	if checkpoint {
		n.cfg.Logger.Info("cluster: started from a checkpoint", "index", start.GetMetadata().GetIndex(), "from_seq", from,
			"replayed_commands", max(0, end-int64(from)+1))
	}
	n.appliedIndex = commit
	return nil
}

// snapshotReportTicks is how long a sent snapshot may go unacknowledged
// before it is reported failed (then the leader probes again and, if
// needed, sends a new one).
const snapshotReportTicks = 40

// Tick advances Raft's logical clock by one tick.
func (n *Node) Tick() {
	n.ticks++
	if n.voteHoldTicks > 0 {
		n.voteHoldTicks--
	}
	n.rn.Tick()
	for to, l := range n.lostLogs {
		// With a transport that reports, the report ends the wait.
		if l.sent && !n.snapshotsReported {
			if l.ticks++; l.ticks >= snapshotReportTicks {
				l.sent = false
			}
			n.lostLogs[to] = l
		}
	}
	for to, ticks := range n.snapSent {
		if ticks+1 < snapshotReportTicks {
			n.snapSent[to] = ticks + 1
			continue
		}
		delete(n.snapSent, to)
		if pr, ok := n.rn.Status().Progress[to]; ok && pr.State == tracker.StateSnapshot {
			n.cfg.Logger.Warn("cluster: snapshot not acknowledged; probing the follower again", "to", to)
			n.rn.ReportSnapshot(to, raft.SnapshotFailure)
		}
	}
}

// ReportSnapshot tells Raft whether the snapshot sent to node to arrived
// (a transport's SnapshotReport): after a failure the leader probes that
// follower again, after a success it resumes appending.
func (n *Node) ReportSnapshot(to uint64, ok bool) {
	status := raft.SnapshotFinish
	if !ok {
		status = raft.SnapshotFailure
	}
	n.rn.ReportSnapshot(to, status)
	if l, found := n.lostLogs[to]; found && l.sent {
		// The next refusal, if the follower still lacks the entries,
		// sends it again (checkLostLog).
		l.sent = false
		n.lostLogs[to] = l
	}
}

// freshVoteHoldElections is how many election timeouts a node on a fresh
// directory grants no vote for (doc.go, "Fresh directories").
const freshVoteHoldElections = 2

// Step hands Raft a message from another node.
func (n *Node) Step(m *raftpb.Message) error {
	if !slices.Contains(n.cfg.Voters, m.GetFrom()) || m.GetTo() != n.cfg.NodeID {
		return fmt.Errorf("cluster: message from %d to %d is not for this node", m.GetFrom(), m.GetTo())
	}
	if m.GetType() == raftpb.MsgProp {
		// No node forwards proposals (DisableProposalForwarding): one from
		// a peer was numbered against another log than this one.
		return fmt.Errorf("cluster: proposal forwarded by node %d refused", m.GetFrom())
	}
	if m.GetType() == raftpb.MsgAppResp && n.IsLeader() {
		if m.GetReject() {
			n.checkLostLog(m)
		} else if l, found := n.lostLogs[m.GetFrom()]; found && m.GetIndex() >= l.match {
			// The follower holds again what it had acknowledged: no
			// longer catching up (CatchingUp), or, unconfirmed, its
			// refusal was a late one.
			delete(n.lostLogs, m.GetFrom())
			if l.confirmed {
				n.cfg.Logger.Info("cluster: a follower that lost its log caught up", "follower", m.GetFrom(), "index", m.GetIndex())
			}
		}
	}
	if n.fresh {
		switch t := m.GetType(); {
		case n.voteHoldTicks > 0 && (t == raftpb.MsgVote || t == raftpb.MsgPreVote):
			return nil // no answer: the candidate's election times out
		case t == raftpb.MsgHeartbeat:
			// A leader that knew this node before its directory was lost
			// sends the commit index it believes the node holds, and Raft
			// panics on an index beyond the log; committing less is safe,
			// and the appends (or a Raft snapshot) that follow bring the
			// log up.
			if last, _ := n.log.LastIndex(); m.GetCommit() > last {
				if !n.freshLogged {
					n.freshLogged = true
					n.cfg.Logger.Warn("cluster: the leader believes this node holds entries its fresh directory lacks; catching up",
						"leader_commit", m.GetCommit(), "last_index", last)
				}
				m.Commit = &last
			}
		}
	}
	return n.rn.Step(m)
}

// lostLog is a follower found refusing entries it had acknowledged
// (checkLostLog): at which index, since which tick, whether the refusals
// lasted lostLogConfirmElections (confirmed), whether a snapshot sent to
// it waits for its outcome, and for how many ticks.
type lostLog struct {
	match     uint64
	since     uint64
	confirmed bool
	sent      bool
	ticks     int
	warned    bool
}

// lostLogConfirmElections is how many election timeouts a follower must
// go on refusing entries it had acknowledged, with no acknowledgement at
// or past them, before this leader takes its log for lost: a refusal
// delayed or reordered behind a later acknowledgement looks the same once,
// and a snapshot installed for it would move a whole journal aside
// (doc.go, "Fresh directories").
const lostLogConfirmElections = 1

// checkLostLog looks at a follower's refused append: a follower whose log
// ends before the index this leader knows it acknowledged lost its
// directory (doc.go, "Fresh directories"). Raft never sends a follower
// entries at or below what it acknowledged, and sends a Raft snapshot only
// when the entry before those it would send is no longer held: with that
// entry in memory, it would probe the follower above its log for ever.
// This leader sends the follower a snapshot of its own, at or after that
// index (a committed state, which any follower may install), and goes on
// leading: the follower installs it, answers with its new last index, and
// Raft appends from there. It does so once the follower has gone on
// refusing for lostLogConfirmElections with no acknowledgement at or past
// that index (a late refusal is not a lost log). One is in flight at a
// time; the next refusal after a failed one sends another.
func (n *Node) checkLostLog(m *raftpb.Message) {
	st := n.rn.Status()
	from := m.GetFrom()
	pr, ok := st.Progress[from]
	if !ok || m.GetRejectHint() >= pr.Match {
		return
	}
	if first, err := n.log.FirstIndex(); err != nil || pr.Match+1 < first {
		return // Raft sends the snapshot itself.
	}
	l, found := n.lostLogs[from]
	if !found || l.match != pr.Match {
		l = lostLog{match: pr.Match, since: n.ticks}
	}
	defer func() { n.lostLogs[from] = l }()
	if !l.confirmed {
		if n.ticks-l.since < uint64(lostLogConfirmElections*n.cfg.ElectionTicks) {
			return
		}
		l.confirmed = true
		n.cfg.Logger.Warn("cluster: a follower lost entries it had acknowledged (a new directory): sending it a Raft snapshot",
			"follower", from, "acknowledged_index", pr.Match, "its_last_index", m.GetRejectHint())
	}
	if l.sent || pr.Match > n.appliedIndex {
		// A snapshot holds applied entries only: one of these comes at a
		// later refusal (a heartbeat's answer brings one).
		return
	}
	s, err := n.log.snapshotFrom(pr.Match)
	if err != nil {
		if !l.warned {
			l.warned = true
			n.cfg.Logger.Error("cluster: no Raft snapshot for a follower that lost entries it had acknowledged", "follower", from, "err", err)
		}
		return
	}
	if s == nil {
		return // being built
	}
	term := st.HardState.GetTerm()
	n.outbox = append(n.outbox, &raftpb.Message{Type: raftpb.MsgSnap.Enum(), From: proto.Uint64(n.cfg.NodeID),
		To: proto.Uint64(from), Term: &term, Snapshot: s})
	l.sent, l.ticks = true, 0
}

// ProposeNext is the seq the next proposal must start with.
func (n *Node) ProposeNext() uint64 { return n.proposeNext }

// Propose offers one batch of journal frames (journal.AppendFrame) as one
// Raft entry. Its first seq must be ProposeNext(). A refused proposal
// leaves nothing behind; an accepted one may still be lost if this node
// loses leadership before a quorum has it (LostLeadership counts that).
func (n *Node) Propose(frames []byte) error {
	if n.failed != nil {
		return n.failed
	}
	if !n.IsLeader() {
		return ErrNotLeader
	}
	count := uint64(0)
	for data := frames; len(data) > 0; count++ {
		seq, _, size, err := journal.NextFrame(data)
		if err != nil {
			return err
		}
		if seq != n.proposeNext+count {
			return fmt.Errorf("%w: command seq %d, expected %d", ErrSequence, seq, n.proposeNext+count)
		}
		data = data[size:]
	}
	if count == 0 {
		return errors.New("cluster: empty proposal")
	}
	if err := n.rn.Propose(frames); err != nil {
		if errors.Is(err, raft.ErrProposalDropped) && n.rn.BasicStatus().RaftState != raft.StateLeader {
			// Deposed since the last Process, which will notice it.
			return ErrNotLeader
		}
		return err
	}
	n.proposeNext += count
	return nil
}

// ProposeCheck offers the leader's events hash after Snapshot command seq
// as a check entry (hashcheck.go); followers compare it with their own.
func (n *Node) ProposeCheck(seq, hash uint64) error {
	if n.failed != nil {
		return n.failed
	}
	if !n.IsLeader() {
		return ErrNotLeader
	}
	return n.rn.Propose(EncodeCheck(seq, hash))
}

// Process does everything Raft asks for: sends messages to peers first, so
// that followers write a batch while this node syncs it; persists entries
// and hard state; applies committed entries; then delivers the responses
// that were waiting for those writes.
func (n *Node) Process() error {
	if n.failed != nil {
		return n.failed
	}
	for _, m := range n.outbox {
		if n.IsLeader() && m.GetTerm() == n.leaderTerm {
			n.cfg.Logger.Info("cluster: sending a Raft snapshot", "to", m.GetTo(),
				"index", m.GetSnapshot().GetMetadata().GetIndex(), "bytes", len(m.GetSnapshot().GetData()))
			n.cfg.Send(m)
		}
	}
	n.outbox = n.outbox[:0]
	for n.rn.HasReady() {
		rd := n.rn.Ready()
		var local []*raftpb.Message
		for _, m := range rd.Messages {
			if to := m.GetTo(); to == raft.LocalAppendThread || to == raft.LocalApplyThread {
				local = append(local, m)
				continue
			}
			if m.GetType() == raftpb.MsgSnap {
				if !n.snapshotsReported {
					n.snapSent[m.GetTo()] = 0
				}
				n.cfg.Logger.Info("cluster: sending a Raft snapshot", "to", m.GetTo(),
					"index", m.GetSnapshot().GetMetadata().GetIndex(), "bytes", len(m.GetSnapshot().GetData()))
			}
			n.cfg.Send(m)
		}
		for _, m := range local {
			var err error
			if m.GetTo() == raft.LocalAppendThread {
				err = n.persist(m)
			} else {
				err = n.apply(m.GetEntries())
			}
			if err != nil {
				n.failed = fmt.Errorf("cluster: node %d fail-stop: %w", n.cfg.NodeID, err)
				n.cfg.Logger.Error("cluster: fail-stop", "node", n.cfg.NodeID, "err", err)
				return n.failed
			}
			for _, r := range m.GetResponses() {
				n.deliver(r)
			}
		}
	}
	n.trackLeadership()
	return nil
}

func (n *Node) deliver(m *raftpb.Message) {
	if m.GetTo() == n.cfg.NodeID {
		// Responses to itself (append and apply acknowledgements, its own vote).
		if err := n.rn.Step(m); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) {
			n.cfg.Logger.Warn("cluster: local step", "err", err)
		}
		return
	}
	n.cfg.Send(m)
}

func (n *Node) persist(m *raftpb.Message) error {
	if s := m.GetSnapshot(); s != nil && s.GetMetadata().GetIndex() != 0 {
		if err := n.installSnapshot(s); err != nil {
			return err
		}
	}
	if err := n.log.Append(m.GetEntries()); err != nil {
		return err
	}
	if m.Term != nil {
		return n.log.SetHardState(m.GetTerm(), m.GetVote(), m.GetCommit())
	}
	return nil
}

// installSnapshot makes a leader's snapshot this follower's state: the log
// starts after it and the applied state is the snapshot's.
func (n *Node) installSnapshot(s *raftpb.Snapshot) error {
	if n.cfg.Restore == nil {
		return errors.New("received a Raft snapshot but this node cannot restore one (NodeConfig.Restore)")
	}
	state, next, err := n.log.installSnapshot(s)
	if err != nil {
		return err
	}
	if err := n.cfg.Restore(state, next); err != nil {
		return fmt.Errorf("restoring the Raft snapshot at index %d: %w", s.GetMetadata().GetIndex(), err)
	}
	n.committed.Store(int64(next) - 1)
	n.appliedIndex = s.GetMetadata().GetIndex()
	return nil
}

func (n *Node) apply(ents []*raftpb.Entry) error {
	for _, e := range ents {
		if seq, hash, ok, err := decodeCheck(e.GetData()); ok {
			if err == nil && n.cfg.OnCheck != nil {
				err = n.cfg.OnCheck(seq, hash)
			}
			if err != nil {
				return fmt.Errorf("committed entry %d: %w", e.GetIndex(), err)
			}
			n.appliedIndex = e.GetIndex()
			continue
		}
		for data := e.GetData(); len(data) > 0; {
			seq, payload, size, err := journal.NextFrame(data)
			if err != nil {
				return fmt.Errorf("committed entry %d: %w", e.GetIndex(), err)
			}
			if want := uint64(n.committed.Load() + 1); seq != want {
				return fmt.Errorf("committed entry %d carries seq %d, expected %d", e.GetIndex(), seq, want)
			}
			if err := n.cfg.Apply(seq, payload); err != nil {
				return fmt.Errorf("applying committed command seq %d: %w", seq, err)
			}
			n.committed.Store(int64(seq))
			data = data[size:]
		}
		n.appliedIndex = e.GetIndex()
	}
	if n.cfg.Applied != nil && len(ents) > 0 {
		n.cfg.Applied()
	}
	return n.log.Compact(n.appliedIndex)
}

// trackLeadership notices becoming leader (proposals continue the whole
// log, which Process has just persisted) and losing it.
func (n *Node) trackLeadership() {
	st := n.rn.BasicStatus()
	leader := st.RaftState == raft.StateLeader
	switch {
	case leader && n.leaderTerm != st.HardState.GetTerm():
		n.leaderTerm = st.HardState.GetTerm()
		n.proposeNext = n.log.NextSeq()
	case !leader && n.leaderTerm != 0:
		n.leaderTerm = 0
		n.lostTerms++
		clear(n.lostLogs)
	}
}

// IsLeader reports whether this node leads (as of the last Process).
func (n *Node) IsLeader() bool { return n.leaderTerm != 0 }

// Serving reports whether this node may take orders: it leads, and it has
// applied an entry of its own term, hence everything committed before it.
func (n *Node) Serving() bool {
	if !n.IsLeader() {
		return false
	}
	t, err := n.log.Term(n.appliedIndex)
	return err == nil && t == n.leaderTerm
}

// LostLeadership counts the times this node stopped being leader; a
// pipeline that applied commands speculatively must rebuild when it moves.
func (n *Node) LostLeadership() uint64 { return n.lostTerms }

// Committed is the seq of the last committed command applied on this node:
// the durable sequence of a replicated journal.
func (n *Node) Committed() *ring.Sequence { return n.committed }

// AppliedIndex is the Raft index of the last applied entry.
func (n *Node) AppliedIndex() uint64 { return n.appliedIndex }

// Status is Raft's view of this node.
func (n *Node) Status() raft.Status { return n.rn.Status() }

// Lead is the id of the leader this node knows of (0: none).
func (n *Node) Lead() uint64 { return n.rn.BasicStatus().Lead }

// TransferLeader asks the leader to hand leadership to node to. It refuses
// a follower that is catching up (CatchingUp): Raft still counts it at the
// index it had acknowledged, so it would send it MsgTimeoutNow at once, and
// that node, its log empty, would campaign, depose this leader and lose
// the election (doc.go, "Fresh directories").
func (n *Node) TransferLeader(to uint64) error {
	if n.CatchingUp(to) {
		return fmt.Errorf("node %d is catching up from a Raft snapshot after losing its log; try again when it has", to)
	}
	n.rn.TransferLeader(to)
	return nil
}

// CatchingUp reports, on the leader, that follower id lost entries it had
// acknowledged (a new directory) and has not yet confirmed holding them
// again: it is catching up from the Raft snapshot this leader sends it
// (checkLostLog), though Raft's Progress.Match still shows the index it
// had acknowledged.
func (n *Node) CatchingUp(id uint64) bool {
	_, found := n.lostLogs[id]
	return found && n.IsLeader()
}

// Transferring reports that this leader is handing its leadership over
// (Raft drops proposals meanwhile: Runner parks them).
func (n *Node) Transferring() bool { return n.rn.BasicStatus().LeadTransferee != 0 }

// ForgetLeader makes a follower leaderless (it then grants pre-votes at once).
func (n *Node) ForgetLeader() error { return n.rn.ForgetLeader() }

// Campaign starts an election (a pre-vote first).
func (n *Node) Campaign() error { return n.rn.Campaign() }

// rankWithout is this node's place (0 for the lowest id) among the voters
// other than id: the order in which they campaign when id is gone.
func (n *Node) rankWithout(id uint64) int {
	rank := 0
	for _, v := range n.cfg.Voters {
		if v != id && v < n.cfg.NodeID {
			rank++
		}
	}
	return rank
}

// ReportUnreachable tells Raft a message to id could not be sent.
func (n *Node) ReportUnreachable(id uint64) { n.rn.ReportUnreachable(id) }

// Truncations counts the uncommitted tails this node cut since it opened.
func (n *Node) Truncations() uint64 { return n.log.truncations }

// Checkpoints are the replica's checkpoint figures (doc.go, "Checkpoints"),
// read from any goroutine.
func (n *Node) Checkpoints() *CheckpointStats { return &n.log.checkpoints }

// Err is the fail-stop error, if any.
func (n *Node) Err() error { return n.failed }

// Close closes the replica's files.
func (n *Node) Close() error { return n.log.Close() }

// raftLogger sends etcd raft's log lines to slog.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) Debug(v ...any)              { r.l.Debug(fmt.Sprint(v...)) }
func (r raftLogger) Debugf(f string, v ...any)   { r.l.Debug(fmt.Sprintf(f, v...)) }
func (r raftLogger) Info(v ...any)               { r.l.Debug(fmt.Sprint(v...)) }
func (r raftLogger) Infof(f string, v ...any)    { r.l.Debug(fmt.Sprintf(f, v...)) }
func (r raftLogger) Warning(v ...any)            { r.l.Warn(fmt.Sprint(v...)) }
func (r raftLogger) Warningf(f string, v ...any) { r.l.Warn(fmt.Sprintf(f, v...)) }
func (r raftLogger) Error(v ...any)              { r.l.Error(fmt.Sprint(v...)) }
func (r raftLogger) Errorf(f string, v ...any)   { r.l.Error(fmt.Sprintf(f, v...)) }
func (r raftLogger) Fatal(v ...any)              { r.l.Error(fmt.Sprint(v...)); panic(fmt.Sprint(v...)) }
func (r raftLogger) Fatalf(f string, v ...any)   { r.Fatal(fmt.Sprintf(f, v...)) }
func (r raftLogger) Panic(v ...any)              { panic(fmt.Sprint(v...)) }
func (r raftLogger) Panicf(f string, v ...any)   { panic(fmt.Sprintf(f, v...)) }
