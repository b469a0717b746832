package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// Runner bounds and defaults.
const (
	DefaultTickInterval = 50 * time.Millisecond
	// proposalsQueuedMax bounds proposals waiting for the node goroutine.
	proposalsQueuedMax = 64
	// stepBurstMax bounds the messages stepped before Raft's output is processed.
	stepBurstMax = 256
	// leaderSilenceTicks: after the leader's stream to this node ended, this
	// many ticks without a message from it make the node forget it
	// (doc.go, "Fast failover").
	leaderSilenceTicks = 4
	// campaignAfterTicks, campaignEveryTicks and campaignsMax pace the
	// campaigns of the followers after their leader's stream ended. The
	// first campaigns one tick after leaderSilenceTicks: the others saw the
	// same stream end within a tick of it, so they have forgotten the
	// leader by then and grant the pre-vote, which they refuse while the
	// leader's lease runs (CheckQuorum). The others campaign in turn, one
	// tick apart, for when the first one's log is behind (a replica still
	// catching up after a restart cannot win a vote).
	campaignAfterTicks = leaderSilenceTicks + 1
	campaignEveryTicks = 2
	campaignsMax       = 5
)

// ErrLostLeadership is returned for a proposal whose fate is unknown
// because this node stopped leading: the commands may or may not commit.
var ErrLostLeadership = errors.New("cluster: lost leadership; commands not acknowledged")

// ErrStopped is returned once the runner has stopped.
var ErrStopped = errors.New("cluster: node stopped")

type proposal struct {
	frames []byte
	last   int64 // seq of the last command
	done   chan error
}

// Role is what a node is doing, as the runner reports it.
type Role int

// The roles a runner reports through OnRole.
const (
	RoleFollower Role = iota // not leading: apply committed commands, refuse clients
	RoleServing              // leading with everything committed applied: take orders
	RoleDeposed              // was serving and lost it: the speculative state must be rebuilt
)

// RunnerConfig configures a Runner.
type RunnerConfig struct {
	Node         *Node
	Transport    *Transport
	TickInterval time.Duration // default 50 ms
	// OnRole is called on the runner goroutine when the role changes. For
	// RoleServing it is called once Serving holds, so the caller can take
	// over the state Apply built and start taking orders from ProposeNext.
	OnRole func(Role)
	// OnLeader is called on the runner goroutine when the node learns of a
	// leader (itself or another) after none or another. Its messages or a
	// quorum's votes reached the node over streams whose hello carried
	// this node's configured terms (Transport), so the cluster runs under
	// them.
	OnLeader func(id uint64)
	Logger   *slog.Logger
}

// Runner drives a Node from one goroutine: ticks, messages from the
// transport, proposals, and requests from other goroutines (Do).
type Runner struct {
	cfg     RunnerConfig
	props   chan proposal
	checks  chan [2]uint64 // seq, events hash
	ctl     chan func(*Node)
	stop    chan struct{}
	done    chan struct{}
	waiting []proposal
	// parked are proposals made while a leadership transfer is pending,
	// which Raft would drop: offered again, in order, if the transfer is
	// abandoned, or finished with ErrLostLeadership once it completes (a
	// transfer is the leader stepping down, not a failure).
	parked []proposal
	// held are checks waiting for their Snapshot command to commit: a check
	// proposed earlier could commit while the command itself is replaced.
	held    [][2]uint64
	serving bool
	lost    uint64
	once    sync.Once

	// Fast failover (doc.go): the leader whose stream ended, the tick count
	// since, whether a message from it came since, and campaigns made.
	suspect      uint64
	suspectTicks int
	heardSuspect bool
	campaigns    int

	lead        atomic.Uint64 // the leader as of the last Process
	leadChanges atomic.Int64
	refused     atomic.Int64 // proposals Raft refused (not leader, transfer, uncommitted bound)
}

// NewRunner prepares a runner; Run starts it.
func NewRunner(cfg RunnerConfig) *Runner {
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = DefaultTickInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// The transport reports each snapshot's outcome (snapstream.go).
	cfg.Node.snapshotsReported = true
	return &Runner{cfg: cfg, props: make(chan proposal, proposalsQueuedMax), ctl: make(chan func(*Node), 16),
		checks: make(chan [2]uint64, checkPointsMax),
		stop:   make(chan struct{}), done: make(chan struct{})}
}

// Run drives the node until Stop or a fail-stop error.
func (r *Runner) Run() error {
	defer close(r.done)
	n, tr := r.cfg.Node, r.cfg.Transport
	ticker := time.NewTicker(r.cfg.TickInterval)
	defer ticker.Stop()
	r.lost = n.LostLeadership()
	for {
		select {
		case <-r.stop:
			r.finish(ErrStopped)
			return nil
		case <-ticker.C:
			n.Tick()
			r.tickSuspect()
		case m := <-tr.Inbound():
			r.step(m)
		burst:
			for range stepBurstMax {
				select {
				case m = <-tr.Inbound():
					r.step(m)
				default:
					break burst
				}
			}
		case id := <-tr.Ended():
			if id == n.Lead() && !n.IsLeader() && r.suspect == 0 {
				r.suspect, r.suspectTicks, r.heardSuspect, r.campaigns = id, 0, false, 0
			}
		case id := <-tr.Unreachable():
			n.ReportUnreachable(id)
		case rep := <-tr.SnapshotReports():
			n.ReportSnapshot(rep.To, rep.OK)
		case p := <-r.props:
			r.offer(p)
		case c := <-r.checks:
			if len(r.held) < checkPointsMax {
				r.held = append(r.held, c)
			}
		case f := <-r.ctl:
			f(n)
		}
		if err := n.Process(); err != nil {
			r.finish(err)
			return err
		}
		r.settle()
	}
}

func (r *Runner) step(m *raftpb.Message) {
	if m.GetFrom() == r.suspect {
		r.heardSuspect = true
	}
	_ = r.cfg.Node.Step(m)
}

// tickSuspect is the fast failover: a leader whose stream ended and that
// stays silent for leaderSilenceTicks is forgotten, which lets this node
// grant pre-votes at once, and the followers campaign in turn of their ids
// (PreVote keeps a campaign against a live leader harmless). Without it a
// follower waits out its randomised election timeout (10 to 20 ticks).
func (r *Runner) tickSuspect() {
	n := r.cfg.Node
	if r.suspect == 0 {
		return
	}
	lead := n.Lead()
	if r.heardSuspect || (lead != 0 && lead != r.suspect) || n.IsLeader() || r.campaigns >= campaignsMax {
		r.suspect = 0
		return
	}
	r.suspectTicks++
	if r.suspectTicks < leaderSilenceTicks {
		return
	}
	if lead == r.suspect {
		_ = n.ForgetLeader()
	}
	if at := campaignAfterTicks + n.rankWithout(r.suspect); r.suspectTicks >= at && (r.suspectTicks-at)%campaignEveryTicks == 0 {
		r.campaigns++
		r.cfg.Logger.Info("cluster: leader's stream ended and it is silent: campaigning", "leader", r.suspect)
		_ = n.Campaign()
	}
}

// offer proposes p, or parks it behind a pending leadership transfer (and
// behind proposals parked before it, which come first in seq).
func (r *Runner) offer(p proposal) {
	n := r.cfg.Node
	if len(r.parked) > 0 || (n.IsLeader() && n.Transferring()) {
		r.parked = append(r.parked, p)
		return
	}
	if err := n.Propose(p.frames); err != nil {
		r.refused.Add(1)
		if errors.Is(err, ErrNotLeader) {
			// Only a venue that served proposes: deposed since, its
			// commands were applied and will not be acknowledged, as
			// those finish fails, and it must see the same error, or it
			// takes the halt for a failure of its own and the node exits
			// instead of restarting (server.ClusterNode.leaderHalted).
			err = fmt.Errorf("%w (%w)", ErrLostLeadership, err)
		}
		p.done <- err
		return
	}
	r.waiting = append(r.waiting, p)
}

// unpark offers the parked proposals again once no transfer is pending
// and this node still leads; finish answers them if it no longer does.
func (r *Runner) unpark() {
	n := r.cfg.Node
	if len(r.parked) == 0 || (n.IsLeader() && n.Transferring()) {
		return
	}
	parked := r.parked
	r.parked = nil
	if !n.IsLeader() {
		for _, p := range parked {
			p.done <- ErrLostLeadership
		}
		return
	}
	for _, p := range parked {
		r.offer(p)
	}
}

// settle answers proposals that committed or whose fate became unknown, and
// reports role changes.
func (r *Runner) settle() {
	n := r.cfg.Node
	if lead := n.Lead(); r.lead.Swap(lead) != lead {
		r.leadChanges.Add(1)
		if lead != 0 && r.cfg.OnLeader != nil {
			r.cfg.OnLeader(lead)
		}
	}
	r.unpark()
	if lost := n.LostLeadership(); lost != r.lost {
		r.lost = lost
		r.held = r.held[:0]
		r.finish(ErrLostLeadership)
		if r.serving {
			r.serving = false
			r.cfg.Logger.Warn("cluster: lost leadership", "committed_seq", n.Committed().Load())
			r.role(RoleDeposed)
		}
	}
	committed := n.Committed().Load()
	for len(r.held) > 0 && int64(r.held[0][0]) <= committed {
		_ = n.ProposeCheck(r.held[0][0], r.held[0][1]) // best effort: a lost check compares nothing
		r.held = r.held[1:]
	}
	k := 0
	for ; k < len(r.waiting) && r.waiting[k].last <= committed; k++ {
		r.waiting[k].done <- nil
	}
	r.waiting = r.waiting[k:]
	if !r.serving && n.Serving() {
		r.serving = true
		r.cfg.Logger.Info("cluster: leading", "term", n.Status().HardState.GetTerm(),
			"committed_seq", committed, "next_seq", n.ProposeNext())
		r.role(RoleServing)
	}
}

func (r *Runner) role(role Role) {
	if r.cfg.OnRole != nil {
		r.cfg.OnRole(role)
	}
}

func (r *Runner) finish(err error) {
	for _, p := range r.waiting {
		p.done <- err
	}
	r.waiting = r.waiting[:0]
	for _, p := range r.parked {
		p.done <- err
	}
	r.parked = nil
}

// Propose offers frames (journal.AppendFrame; the first seq must be the
// node's ProposeNext) as one entry and waits until a quorum has them on
// disk, or until their fate is unknown (ErrLostLeadership). It copies
// frames. Safe from any goroutine.
func (r *Runner) Propose(frames []byte, last int64) error {
	p := proposal{frames: bytes.Clone(frames), last: last, done: make(chan error, 1)}
	select {
	case r.props <- p:
	case <-r.done:
		return ErrStopped
	}
	select {
	case err := <-p.done:
		return err
	case <-r.done:
		select {
		case err := <-p.done:
			return err
		default:
			return ErrStopped
		}
	}
}

// ProposeCheck queues the leader's events hash after Snapshot command seq
// without blocking; it is proposed once seq has committed, so that it always
// follows its command in the log. When the queue is full, or the leadership
// is lost first, the check is dropped.
func (r *Runner) ProposeCheck(seq, hash uint64) {
	select {
	case r.checks <- [2]uint64{seq, hash}:
	default:
	}
}

// Do runs f on the runner goroutine (status, leader transfer) and waits.
func (r *Runner) Do(f func(*Node)) error {
	done := make(chan struct{})
	select {
	case r.ctl <- func(n *Node) { f(n); close(done) }:
	case <-r.done:
		return ErrStopped
	}
	select {
	case <-done:
		return nil
	case <-r.done:
		return ErrStopped
	}
}

// Lead is the leader as of the last Process (0: none); safe from any goroutine.
func (r *Runner) Lead() uint64 { return r.lead.Load() }

// ProposalsRefused counts proposals Raft refused.
func (r *Runner) ProposalsRefused() int64 { return r.refused.Load() }

// LeaderChanges counts changes of the known leader (to none included).
func (r *Runner) LeaderChanges() int64 { return r.leadChanges.Load() }

// Stop ends Run and waits for it.
func (r *Runner) Stop() {
	r.once.Do(func() { close(r.stop) })
	<-r.done
}

// NodeStatus is one node's view for `fixvenue cluster status`.
type NodeStatus struct {
	ID           uint64 `json:"id"`
	Lead         uint64 `json:"lead"`
	Term         uint64 `json:"term"`
	State        string `json:"state"`
	Commit       uint64 `json:"commit_index"`
	Applied      uint64 `json:"applied_index"`
	CommittedSeq int64  `json:"committed_seq"`
	// CheckpointIndex is the index of the newest checkpoint this node
	// kept, which its next start restores (0: none; doc.go, "Checkpoints").
	CheckpointIndex uint64 `json:"checkpoint_index"`
	// Match is, on the leader, the last index each follower has on disk.
	Match map[uint64]uint64 `json:"match,omitempty"`
	// CatchingUp is, on the leader, the followers catching up from a Raft
	// snapshot after losing their log (Node.CatchingUp): their Match is
	// what they had acknowledged, not what they hold.
	CatchingUp []uint64 `json:"catching_up,omitempty"`
}

// Status reads the node's status on its goroutine.
func (r *Runner) Status() (NodeStatus, error) {
	var st NodeStatus
	err := r.Do(func(n *Node) {
		s := n.Status()
		st = NodeStatus{ID: s.ID, Lead: s.Lead, Term: s.HardState.GetTerm(), State: s.RaftState.String(),
			Commit: s.HardState.GetCommit(), Applied: n.AppliedIndex(), CommittedSeq: n.Committed().Load(),
			CheckpointIndex: n.Checkpoints().Index.Load()}
		if s.RaftState == raft.StateLeader {
			st.Match = map[uint64]uint64{}
			for id, pr := range s.Progress {
				st.Match[id] = pr.Match
				if n.CatchingUp(id) {
					st.CatchingUp = append(st.CatchingUp, id)
				}
			}
			slices.Sort(st.CatchingUp)
		}
	})
	return st, err
}
