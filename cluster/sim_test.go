package cluster

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/journal"
)

// The simulation runs three replicas in one goroutine over an in-memory
// network that drops, delays, reorders and partitions messages, and
// crashes and restarts replicas from their real journal directories. The
// faults come from the seed (FIXVENUE_SIM_SEED overrides it); the
// randomised election timeouts come from etcd raft itself, so a failing
// schedule is reproduced by the seed in most, not all, runs. Whatever the
// schedule, the checks at the end must hold.

type simReplica struct {
	id    uint64
	dir   string
	node  *Node
	m     *core.Matcher
	hash  *journal.HashSink
	check *HashCheck
	up    bool
	// checkedAt is the last seq this replica proposed a check for as leader.
	checkedAt int64
	hashAt    map[uint64]uint64 // this replica's hash at each check point
	// unhanded counts the commands applied since Open returned and not yet
	// followed by NodeConfig.Applied; batches counts its calls.
	unhanded, batches int
}

type simMsg struct {
	at   int
	to   uint64
	data []byte
}

type simLink struct{ from, to uint64 }

type sim struct {
	t         *testing.T
	rng       *rand.Rand
	tick      int
	replicas  []*simReplica
	inflight  []simMsg
	cut       map[simLink]int // link → tick it heals
	dropPct   int
	committed map[uint64][]byte // seq → command, as first applied anywhere
	flow      *orderFlow
	proposed  int
	crashes   int
	checks    int    // check entries applied, on any replica
	truncated uint64 // uncommitted tails cut, summed over replica lifetimes
	// entriesMax is each replica's EntriesInMemoryMax (0: the default).
	entriesMax int
}

func simSeed(t *testing.T) uint64 {
	if s := os.Getenv("FIXVENUE_SIM_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return 20261201
}

func newSim(t *testing.T, seed uint64) *sim {
	s := &sim{t: t, rng: rand.New(rand.NewPCG(seed, 1)), cut: map[simLink]int{}, dropPct: 3,
		committed: map[uint64][]byte{}, flow: newOrderFlow(seed)}
	root := t.TempDir()
	for id := uint64(1); id <= 3; id++ {
		r := &simReplica{id: id, dir: filepath.Join(root, "node"+strconv.Itoa(int(id)))}
		s.replicas = append(s.replicas, r)
		s.start(r)
	}
	return s
}

// start opens a replica from its directory with a fresh matcher: Open
// replays the committed part of its journal into it.
func (s *sim) start(r *simReplica) {
	m, err := core.NewMatcher(testMatcherConfig())
	if err != nil {
		s.t.Fatal(err)
	}
	r.m, r.hash, r.check, r.checkedAt, r.hashAt = m, journal.NewHashSink(), NewHashCheck(), -1, map[uint64]uint64{}
	r.node, err = Open(NodeConfig{ClusterID: 0xC1, NodeID: r.id, Voters: []uint64{1, 2, 3}, Dir: r.dir,
		Journal: journal.Config{SegmentBytes: 16 << 10, PayloadBytesMax: 512, BufferBytes: 64 << 10},
		Apply:   func(seq uint64, cmd []byte) error { return s.apply(r, seq, cmd) },
		Applied: func() {
			if !r.up {
				s.t.Errorf("node %d: Applied called during Open's replay", r.id)
			}
			r.unhanded, r.batches = 0, r.batches+1
		},
		OnCheck: func(seq, hash uint64) error { s.checks++; return r.check.Leader(seq, hash) },
		Send:    func(m *raftpb.Message) { s.send(r.id, m) },
		Logger:  debugLogger(), EntriesInMemoryMax: s.entriesMax,
		NewState: func() (State, error) { return NewMatcherState(testMatcherConfig(), nil) },
		Restore: func(state []byte, _ uint64) error {
			st, err := NewMatcherState(testMatcherConfig(), nil)
			if err == nil {
				err = st.Load(state)
			}
			r.m, r.hash = st.Matcher, st.Hash
			return err
		}})
	if err != nil {
		s.t.Fatalf("node %d open: %v", r.id, err)
	}
	r.up = true
}

func (s *sim) apply(r *simReplica, seq uint64, cmd []byte) error {
	if prev, ok := s.committed[seq]; ok {
		if !bytes.Equal(prev, cmd) {
			s.t.Errorf("node %d committed a different command at seq %d", r.id, seq)
		}
	} else {
		s.committed[seq] = bytes.Clone(cmd)
	}
	if err := r.m.Apply(cmd, r.hash); err != nil {
		return err
	}
	if r.up {
		r.unhanded++
	}
	if seq%simCheckEvery == simCheckEvery-1 {
		r.hashAt[seq] = r.hash.Sum64()
		return r.check.Own(seq, r.hash.Sum64())
	}
	return nil
}

// simCheckEvery spaces the simulation's check points (the venue checks at
// Snapshot commands).
const simCheckEvery = 8

// send puts a message on the wire: encoded as the TCP transport does, then
// dropped, cut or delayed up to 3 ticks (so also reordered).
func (s *sim) send(from uint64, m *raftpb.Message) {
	if _, cut := s.cut[simLink{from, m.GetTo()}]; cut || s.rng.IntN(100) < s.dropPct {
		return
	}
	data, err := proto.Marshal(m)
	if err != nil {
		s.t.Fatal(err)
	}
	s.inflight = append(s.inflight, simMsg{at: s.tick + s.rng.IntN(4), to: m.GetTo(), data: data})
}

func (s *sim) replica(id uint64) *simReplica { return s.replicas[id-1] }

func (s *sim) leader() *simReplica {
	for _, r := range s.replicas {
		if r.up && r.node.Serving() {
			return r
		}
	}
	return nil
}

// faults crashes, restarts, partitions and heals from the seed.
func (s *sim) faults() {
	for l, until := range s.cut {
		if s.tick >= until {
			delete(s.cut, l)
		}
	}
	r := s.replicas[s.rng.IntN(3)]
	switch k := s.rng.IntN(1000); {
	case k < 6 && r.up: // crash: everything Process returned for is on disk
		s.truncated += r.node.Truncations()
		if err := r.node.Close(); err != nil {
			s.t.Fatal(err)
		}
		r.up = false
		s.crashes++
	case k < 30 && !r.up:
		s.start(r)
	case k < 35: // isolate r both ways
		until := s.tick + 20 + s.rng.IntN(80)
		for _, o := range s.replicas {
			if o != r {
				s.cut[simLink{r.id, o.id}], s.cut[simLink{o.id, r.id}] = until, until
			}
		}
	case k < 40: // one-way loss on one link
		o := s.replicas[(int(r.id)+s.rng.IntN(2))%3]
		s.cut[simLink{r.id, o.id}] = s.tick + 20 + s.rng.IntN(80)
	}
}

func (s *sim) step(propose bool) {
	s.tick++
	for _, r := range s.replicas {
		if r.up {
			r.node.Tick()
		}
	}
	keep := s.inflight[:0]
	var due []simMsg
	for _, m := range s.inflight {
		if m.at <= s.tick {
			due = append(due, m)
		} else {
			keep = append(keep, m)
		}
	}
	s.inflight = keep
	for _, d := range due {
		r := s.replica(d.to)
		if !r.up {
			continue
		}
		m := &raftpb.Message{}
		if err := proto.Unmarshal(d.data, m); err != nil {
			s.t.Fatal(err)
		}
		_ = r.node.Step(m) // a stale message may be refused; Raft copes
	}
	if l := s.leader(); l != nil {
		// The leader sends its hash at its latest check point once committed.
		if c := l.node.Committed().Load(); c >= 0 {
			point := c - (c+1)%simCheckEvery
			if point >= 0 && point > l.checkedAt {
				if l.node.ProposeCheck(uint64(point), l.hashAt[uint64(point)]) == nil {
					l.checkedAt = point
				}
			}
		}
	}
	if l := s.leader(); propose && l != nil {
		count := 1 + s.rng.IntN(4)
		if err := l.node.Propose(s.flow.batch(s.t, l.node.ProposeNext(), count)); err == nil {
			s.proposed += count
		}
	}
	for _, r := range s.replicas {
		if r.up {
			if err := r.node.Process(); err != nil {
				s.t.Fatalf("tick %d: %v", s.tick, err)
			}
		}
	}
}

// converge heals everything and runs until every replica has committed
// and applied the same log.
func (s *sim) converge() {
	clear(s.cut)
	s.dropPct = 0
	for _, r := range s.replicas {
		if !r.up {
			s.start(r)
		}
	}
	for range 3000 {
		s.step(false)
		if l := s.leader(); l != nil && s.same(l) {
			return
		}
	}
	for _, r := range s.replicas {
		s.t.Logf("node %d: committed seq %d, applied index %d, journal next %d, lead %d",
			r.id, r.node.Committed().Load(), r.node.AppliedIndex(), r.node.log.NextSeq(), r.node.Lead())
	}
	s.t.Fatal("replicas did not converge")
}

func (s *sim) same(l *simReplica) bool {
	for _, r := range s.replicas {
		if r.node.AppliedIndex() != l.node.AppliedIndex() || r.node.log.NextSeq() != l.node.log.NextSeq() ||
			r.node.Committed().Load() != int64(l.node.log.NextSeq())-1 {
			return false
		}
	}
	return true
}

func TestSimulatedClusterKeepsEveryCommittedCommand(t *testing.T) {
	seed := simSeed(t)
	steps := 1500
	if testing.Short() {
		steps = 400
	}
	s := newSim(t, seed)
	for range steps {
		s.faults()
		s.step(true)
	}
	s.converge()
	t.Logf("seed %d: %d ticks, %d commands proposed, %d committed, %d crashes, %d check entries applied, %d uncommitted tails cut",
		seed, s.tick, s.proposed, len(s.committed), s.crashes, s.checks, s.truncated+s.replicas[0].node.Truncations()+
			s.replicas[1].node.Truncations()+s.replicas[2].node.Truncations())
	if s.checks == 0 {
		t.Fatal("no check entry was applied: the hash comparison was not exercised")
	}
	if len(s.committed) < steps/10 {
		t.Fatalf("only %d commands committed in %d ticks: the cluster made too little progress to prove anything", len(s.committed), steps)
	}
	want := int64(len(s.committed)) - 1
	var verify string
	for _, r := range s.replicas {
		if got := r.node.Committed().Load(); got != want {
			t.Errorf("node %d committed up to seq %d, commands up to %d were committed somewhere", r.id, got, want)
		}
		if r.hash.Sum64() != s.replicas[0].hash.Sum64() {
			t.Errorf("node %d events hash %016x, node 1 %016x", r.id, r.hash.Sum64(), s.replicas[0].hash.Sum64())
		}
		if r.unhanded != 0 || r.batches == 0 {
			t.Errorf("node %d: %d commands applied after the last of %d calls of Applied: want each batch followed by one", r.id, r.unhanded, r.batches)
		}
		s.checkJournal(r)
		if err := r.node.Close(); err != nil {
			t.Fatal(err)
		}
		v, err := journal.Verify(r.dir, testMatcherConfig(), nil)
		if err != nil {
			t.Fatalf("node %d: journal verify: %v", r.id, err)
		}
		if v.EventsHash != r.hash.Sum64() {
			t.Errorf("node %d: journal verify hash %016x, live events hash %016x", r.id, v.EventsHash, r.hash.Sum64())
		}
		if v.Entries.Marks == 0 || v.Entries.Remaining > 0 {
			t.Errorf("node %d: journal verify found %d entry marks, the last missing %d commands", r.id, v.Entries.Marks, v.Entries.Remaining)
		}
		if verify == "" {
			verify = v.String()
		} else if v.String() != verify {
			t.Errorf("node %d: journal verify %q, node 1 %q", r.id, v.String(), verify)
		}
	}
}

// checkJournal reads a replica's journal and compares every command with
// the one committed at its seq.
func (s *sim) checkJournal(r *simReplica) {
	rd, err := journal.NewReader(r.dir, journal.ReaderOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	defer rd.Close()
	n := 0
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.t.Fatalf("node %d journal: %v", r.id, err)
		}
		if !bytes.Equal(rec.Payload, s.committed[rec.Seq]) {
			s.t.Fatalf("node %d journal seq %d differs from the committed command", r.id, rec.Seq)
		}
		n++
	}
	if n != len(s.committed) {
		s.t.Errorf("node %d journal holds %d records, %d were committed", r.id, n, len(s.committed))
	}
}

// A directory holding another cluster's (or another node's) journal is
// refused, and one made among other voting nodes.
func TestForeignJournalIsRefused(t *testing.T) {
	dir := t.TempDir()
	openWith := func(clusterID, nodeID uint64, voters []uint64) error {
		n, err := Open(NodeConfig{ClusterID: clusterID, NodeID: nodeID, Voters: voters, Dir: dir,
			Apply: func(uint64, []byte) error { return nil }, Send: func(*raftpb.Message) {}, Logger: quietLogger()})
		if err == nil {
			n.Close()
		}
		return err
	}
	open := func(clusterID, nodeID uint64) error { return openWith(clusterID, nodeID, []uint64{1, 2, 3}) }
	if err := open(7, 1); err != nil {
		t.Fatal(err)
	}
	// The directory is bound to its voters: a node configured with only
	// itself would be a quorum alone. Their order does not matter.
	if err := openWith(7, 1, []uint64{1}); !errors.Is(err, ErrForeignJournal) || !strings.Contains(err.Error(), "voting nodes are [1 2 3], the configuration's peers are [1]") {
		t.Fatalf("other voters: %v", err)
	}
	if err := openWith(7, 1, []uint64{3, 1, 2}); err != nil {
		t.Fatalf("the same voters in another order: %v", err)
	}
	// The ids are named as configured (decimal), not in hex.
	if err := open(20261201, 1); !errors.Is(err, ErrForeignJournal) ||
		!strings.Contains(err.Error(), "says cluster_id 7 node_id 1, this node is configured with cluster_id 20261201 node_id 1") {
		t.Fatalf("another cluster id: %v", err)
	}
	if err := open(7, 2); !errors.Is(err, ErrForeignJournal) {
		t.Fatalf("another node id: %v", err)
	}
	single := t.TempDir()
	w, err := journal.Open(single, journal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	_, err = Open(NodeConfig{ClusterID: 7, NodeID: 1, Voters: []uint64{1}, Dir: single,
		Apply: func(uint64, []byte) error { return nil }, Send: func(*raftpb.Message) {}, Logger: quietLogger()})
	if !errors.Is(err, ErrForeignJournal) {
		t.Fatalf("single-node journal: %v", err)
	}
}
