package cluster

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/fixvenue/fixvenue/journal"
)

// EntriesInMemoryMax bounds how many Raft entries a replica keeps in memory
// behind its applied index, to serve followers that lag. A follower further
// behind than that cannot catch up from this leader (doc.go, "Limits").
const EntriesInMemoryMax = 1 << 16

// EntriesInMemoryBytesMax bounds the bytes of those entries (large batches
// make few entries hold much memory); the older half goes first.
const EntriesInMemoryBytesMax = 256 << 20

// ErrCorrupt is wrapped by errors about damaged replica files.
var ErrCorrupt = errors.New("cluster: replica files are damaged")

// Log is a replica's Raft log on disk. The commands of every entry are the
// journal's records, written by a journal.Writer into the venue's own
// segment files (so `fixvenue journal verify` reads a replica's journal like
// any other), each entry's commands behind a mark naming its index and term
// (journal/doc.go, "Raft entry marks"); raft.hardstate holds term, vote and
// commit.
// It implements raft.Storage over the entries it keeps in memory. One
// goroutine (the node's) uses it.
type Log struct {
	dir   string
	jcfg  journal.Config
	w     *journal.Writer
	hs    *hardStateStore
	state hardState
	mem   *raft.MemoryStorage
	metas []entryMeta // the entries in mem: metas[k].index == metaBase+k
	// memBytes is the data held in mem (the sum of metas' bytes).
	memBytes int64
	// entriesMax and bytesMax are EntriesInMemoryMax and
	// EntriesInMemoryBytesMax (tests lower them).
	entriesMax int
	bytesMax   int64
	voters     []uint64
	logger     *slog.Logger
	// base is the Raft snapshot the log starts after (nil: the log starts
	// at index 1), built the newest snapshot this node made for followers
	// (at Open, until the node first ticks, the checkpoint it restores),
	// newState makes the fresh state a build replays into (nil: none built),
	// and spare is the state the last build used, which the next reloads
	// when it can (buildFrom): a replica that builds keeps one replica state
	// beside its own from its first build on.
	base, built *raftpb.Snapshot
	newState    func() (State, error)
	spare       State
	// archived is where the live log starts when the segments before it
	// moved to the journal's archive (archive.go; nil: none did).
	archived *archivedPoint
	// received hands over the file a snapshot was received into
	// (LogConfig.ReceivedSnapshot); snapshotBytesMax bounds a snapshot built.
	received         func(index, term uint64) string
	snapshotBytesMax int64
	building         bool
	buildDone        chan builtSnapshot
	// buildStop makes a build in flight give up (stopBuilding).
	buildStop atomic.Bool
	// checkpoints: the newest checkpoint's index, and the builds or writes
	// that failed (CheckpointStats).
	checkpoints CheckpointStats
	// archiveRunning moves segments to the archive after each checkpoint
	// while the replica runs, not only at a start (tests turn it off).
	archiveRunning bool
	// checkpointEvery is the least time between two builds a compaction
	// starts (CheckpointIntervalMin; tests lower it); lastBuild is when
	// the last build started.
	checkpointEvery time.Duration
	lastBuild       time.Time
	// truncations counts uncommitted tails cut because a leader replaced them.
	truncations uint64
}

// LogConfig configures OpenLog beyond the directory and the identity.
type LogConfig struct {
	Journal journal.Config
	// EntriesInMemoryMax defaults to EntriesInMemoryMax.
	EntriesInMemoryMax int
	// NewState, when set, lets this node build Raft snapshots for followers
	// behind its compaction point (snapshot.go).
	NewState func() (State, error)
	// ReceivedSnapshot, when set, hands over the file a snapshot of (index,
	// term) was received into (Transport.ReceivedSnapshot), which an install
	// renames into place instead of writing the data again.
	ReceivedSnapshot func(index, term uint64) string
	// SnapshotBytesMax bounds a snapshot this node builds (default
	// DefaultSnapshotBytesMax).
	SnapshotBytesMax int64
	// DropCheckpoints removes the checkpoints at Open instead of restoring
	// one (NodeConfig.DropCheckpoints).
	DropCheckpoints bool
	// CheckpointInterval is the least time between two builds compactions
	// start (default CheckpointIntervalMin).
	CheckpointInterval time.Duration
	Logger             *slog.Logger
}

// OpenLog opens (or creates) the replica files in dir for node nodeID of
// cluster clusterID with the given voters.
func OpenLog(dir string, clusterID, nodeID uint64, voters []uint64, cfg LogConfig) (*Log, error) {
	jcfg, logger := cfg.Journal, cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "journal-*.seg"))
	if err := checkIdentity(dir, clusterID, nodeID, len(segs) > 0); err != nil {
		return nil, err
	}
	if err := checkVoters(dir, voters); err != nil {
		return nil, err
	}
	jcfg.FirstSeq = 0
	jcfg.Logger = logger
	l := &Log{dir: dir, jcfg: jcfg, mem: raft.NewMemoryStorage(), voters: voters, logger: logger,
		entriesMax: EntriesInMemoryMax, bytesMax: EntriesInMemoryBytesMax, newState: cfg.NewState, checkpointEvery: CheckpointIntervalMin, archiveRunning: true,
		received: cfg.ReceivedSnapshot, snapshotBytesMax: cfg.SnapshotBytesMax, buildDone: make(chan builtSnapshot, 1)}
	if l.snapshotBytesMax <= 0 {
		l.snapshotBytesMax = DefaultSnapshotBytesMax
	}
	if cfg.EntriesInMemoryMax > 0 {
		l.entriesMax = cfg.EntriesInMemoryMax
	}
	if cfg.CheckpointInterval > 0 {
		l.checkpointEvery = cfg.CheckpointInterval
	}
	ok := false
	defer func() {
		if !ok {
			l.Close()
		}
	}()
	var err error
	if l.hs, l.state, err = openHardState(dir); err != nil {
		return nil, err
	}
	if l.jcfg.FirstSeq, err = l.loadBase(); err != nil {
		return nil, err
	}
	if l.archived, err = readArchivedPoint(dir); err != nil {
		return nil, err
	}
	if l.archived != nil && l.archived.index > l.baseIndex() {
		l.jcfg.FirstSeq = l.archived.next
	}
	if l.w, err = journal.Open(dir, l.jcfg); err != nil {
		return nil, err
	}
	all, err := l.readEntries()
	if err != nil {
		return nil, err
	}
	// A crash between installing a snapshot and saving the hard state that
	// goes with it leaves the older commit index: the snapshot is committed.
	l.state.commit = max(l.state.commit, l.startIndex())
	if end := l.startIndex() + uint64(len(all)); l.state.commit > end {
		return nil, fmt.Errorf("%w: hard state commits index %d but the log ends at %d", ErrCorrupt, l.state.commit, end)
	}
	archiveAt, err := l.openCheckpoint(all, cfg.DropCheckpoints)
	if err != nil {
		return nil, err
	}
	if archiveAt != nil {
		from := l.startIndex()
		if err := l.archiveBefore(archiveAt); err != nil {
			return nil, err
		}
		all = all[l.startIndex()-from:]
	}
	if err := l.load(all); err != nil {
		return nil, err
	}
	ok = true
	return l, nil
}

// readEntries reads the Raft entry marks of the journal (doc.go, "Files").
// The last entry's commands may end early: its write never completed, so it
// was never acknowledged, and it is cut.
func (l *Log) readEntries() ([]entryMeta, error) {
	// The live segments from the first: FromSeq would start at the segment
	// holding the start's next seq, and pass over the mark of its entry at
	// the end of the segment before.
	r, err := journal.NewReader(l.dir, journal.ReaderOptions{Entries: true, LiveOnly: true,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var all []entryMeta
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		e := rec.Entry
		switch {
		case e.Index == 0 && rec.Seq < l.jcfg.FirstSeq, e.Index != 0 && e.Index <= l.startIndex():
			continue // before the live log's start: in a segment beside the archived ones
		case e.Index == 0 && len(all) == 0:
			return nil, fmt.Errorf("%w: %s@%d: command seq %d before any Raft entry mark", ErrCorrupt, rec.Segment, rec.Offset, rec.Seq)
		case e.Index == 0:
			continue
		case e.Index != l.startIndex()+uint64(len(all))+1:
			return nil, fmt.Errorf("%w: %s@%d: the first Raft entry is %d, not %d", ErrCorrupt, rec.Segment, rec.Offset, e.Index, l.startIndex()+1)
		}
		all = append(all, entryMeta{index: e.Index, term: e.Term, firstSeq: rec.Seq, count: e.Commands})
	}
	if st := r.Entries(); st.Remaining > 0 {
		if len(all) == 0 { // an entry before the start, committed, cannot be cut short
			return nil, fmt.Errorf("%w: entry %d, before the live log's start %d, ends early", ErrCorrupt, st.Last.Index, l.startIndex())
		}
		last := all[len(all)-1]
		l.logger.Warn("cluster: cutting an entry whose commands end early (its write never completed)",
			"index", last.index, "missing_commands", st.Remaining)
		all = all[:len(all)-1]
		if err := l.truncateEntries(last.index, last.firstSeq); err != nil {
			return nil, err
		}
	}
	want := l.jcfg.FirstSeq
	if len(all) > 0 {
		want = all[len(all)-1].nextSeq()
	}
	if got := l.w.NextSeq(); got != want {
		return nil, fmt.Errorf("%w: the entries hold commands up to seq %d but the journal continues at %d", ErrCorrupt, int64(want)-1, got)
	}
	return all, nil
}

// applyJournal hands apply the journal's records in dir from seq from
// through last, in order (none when last < from; from the archive as
// well when it holds them, "Archive" in doc.go), reading while a writer
// may append: every record up to last is complete on disk, and it reads no
// further. A journal that ends before last, or a damaged record, is
// ErrCorrupt.
func applyJournal(dir string, from uint64, last int64, logger *slog.Logger, apply func(seq uint64, cmd []byte) error) error {
	if last < int64(from) {
		return nil
	}
	for rec, err := range journal.Records(dir, journal.ReaderOptions{FromSeq: from, Logger: logger}) {
		if err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		if err := apply(rec.Seq, rec.Payload); err != nil {
			return fmt.Errorf("applying seq %d: %w", rec.Seq, err)
		}
		if int64(rec.Seq) >= last {
			return nil
		}
	}
	return fmt.Errorf("%w: the journal ends before seq %d", ErrCorrupt, last)
}

// truncateEntries removes entry from and every later one from the journal;
// the next command appended must then carry nextSeq. A build in flight
// gives up first: the journal's reopening reads every live segment, which
// the build's archiving would move under it.
func (l *Log) truncateEntries(from, nextSeq uint64) error {
	l.stopBuilding()
	if err := l.w.Close(); err != nil {
		return err
	}
	l.w = nil
	if err := journal.TruncateEntries(l.dir, from, l.logger); err != nil {
		return err
	}
	w, err := journal.Open(l.dir, l.jcfg)
	if err != nil {
		return err
	}
	l.w = w
	if w.NextSeq() != nextSeq {
		return fmt.Errorf("%w: journal continues at %d after cutting entry %d, expected %d", ErrCorrupt, w.NextSeq(), from, nextSeq)
	}
	return nil
}

// baseIndex is the index of the snapshot the log starts after (0: none).
func (l *Log) baseIndex() uint64 { return l.base.GetMetadata().GetIndex() }

// load puts the entries from the commit index (or the last entriesMax,
// whichever is earlier) into memory, after the live log's start if any.
func (l *Log) load(all []entryMeta) error {
	switch {
	case l.startIndex() > l.baseIndex():
		snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: new(l.archived.index), Term: new(l.archived.term),
			ConfState: &raftpb.ConfState{Voters: l.voters}}}
		if err := l.mem.ApplySnapshot(snap); err != nil {
			return err
		}
	case l.base != nil:
		if err := l.mem.ApplySnapshot(metaOnly(l.base)); err != nil {
			return err
		}
	}
	skip := 0
	if len(all) > l.entriesMax {
		skip = min(int(l.state.commit-l.startIndex()), len(all)-l.entriesMax)
	}
	if skip > 0 {
		prev := all[skip-1]
		snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: new(prev.index), Term: new(prev.term),
			ConfState: &raftpb.ConfState{Voters: l.voters}}}
		if err := l.mem.ApplySnapshot(snap); err != nil {
			return err
		}
	}
	l.metas = append(l.metas[:0], all[skip:]...)
	ents := make([]*raftpb.Entry, 0, len(l.metas))
	if len(l.metas) > 0 {
		r, err := journal.NewReader(l.dir, journal.ReaderOptions{FromSeq: l.metas[0].firstSeq, Logger: l.logger, LiveOnly: true})
		if err != nil {
			return err
		}
		defer r.Close()
		for k := range l.metas {
			m := &l.metas[k]
			var data []byte
			for range m.count {
				rec, err := r.Next()
				if err != nil {
					return fmt.Errorf("%w: reading the commands of entry %d: %v", ErrCorrupt, m.index, err)
				}
				data = journal.AppendFrame(data, rec.Seq, rec.Payload)
			}
			m.bytes = int64(len(data))
			l.memBytes += m.bytes
			ents = append(ents, &raftpb.Entry{Index: new(m.index), Term: new(m.term), Type: new(raftpb.EntryNormal), Data: data})
		}
	}
	if err := l.mem.Append(ents); err != nil {
		return err
	}
	return l.mem.SetHardState(l.raftHardState())
}

func (l *Log) raftHardState() *raftpb.HardState {
	return &raftpb.HardState{Term: new(l.state.term), Vote: new(l.state.vote), Commit: new(l.state.commit)}
}

// metaOf returns the metadata of entry index, which must be in memory.
func (l *Log) metaOf(index uint64) (entryMeta, bool) {
	if len(l.metas) == 0 || index < l.metas[0].index || index > l.metas[len(l.metas)-1].index {
		return entryMeta{}, false
	}
	return l.metas[index-l.metas[0].index], true
}

// NextSeq is the seq the first command after the whole log must carry.
func (l *Log) NextSeq() uint64 { return l.w.NextSeq() }

// SeqEnd returns the seq of the last command in entries up to index
// (-1 if none), for an index in memory or the one before them.
func (l *Log) SeqEnd(index uint64) (int64, bool) {
	if m, ok := l.metaOf(index + 1); ok {
		return int64(m.firstSeq) - 1, true
	}
	if m, ok := l.metaOf(index); ok {
		return int64(m.nextSeq()) - 1, true
	}
	if index == l.startIndex() {
		return int64(l.jcfg.FirstSeq) - 1, true
	}
	return 0, false
}

// Append persists entries (a MsgStorageAppend): conflicting entries from
// the first new index on are cut from the index and the journal first, the
// commands are appended and fdatasynced, then the index records are
// written and fdatasynced. Only then may the node answer for them.
func (l *Log) Append(ents []*raftpb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	first := ents[0].GetIndex()
	last, _ := l.mem.LastIndex()
	if first <= last {
		if err := l.truncateFrom(first); err != nil {
			return err
		}
	} else if first != last+1 {
		return fmt.Errorf("cluster: append at index %d after log end %d", first, last)
	}
	metas := make([]entryMeta, 0, len(ents))
	for _, e := range ents {
		if e.GetType() != raftpb.EntryNormal {
			return fmt.Errorf("cluster: entry %d has type %v; membership changes are not supported", e.GetIndex(), e.GetType())
		}
		m := entryMeta{index: e.GetIndex(), term: e.GetTerm(), firstSeq: l.w.NextSeq(), bytes: int64(len(e.GetData()))}
		if err := l.appendEntry(&m, e.GetData()); err != nil {
			return err
		}
		metas = append(metas, m)
	}
	if err := l.w.Flush(); err != nil {
		return err
	}
	l.metas = append(l.metas, metas...)
	for _, m := range metas {
		l.memBytes += m.bytes
	}
	return l.mem.Append(ents)
}

// appendEntry buffers the entry's mark and its command frames in the
// journal, checking each frame's CRC and seq first; m.count is set.
func (l *Log) appendEntry(m *entryMeta, data []byte) error {
	if _, _, isCheck, _ := decodeCheck(data); isCheck {
		data = nil // no commands: only the mark keeps the entry's place
	}
	for rest := data; len(rest) > 0; m.count++ {
		_, _, n, err := journal.NextFrame(rest)
		if err != nil {
			return fmt.Errorf("cluster: entry %d: %w", m.index, err)
		}
		rest = rest[n:]
	}
	if err := l.w.AppendEntryMark(journal.EntryMark{Index: m.index, Term: m.term, Commands: m.count}); err != nil {
		return fmt.Errorf("cluster: entry %d: %w", m.index, err)
	}
	for len(data) > 0 {
		seq, payload, n, _ := journal.NextFrame(data)
		if err := l.w.Append(seq, payload); err != nil {
			return fmt.Errorf("cluster: entry %d, command seq %d: %w", m.index, seq, err)
		}
		data = data[n:]
	}
	return nil
}

// truncateFrom removes entries first.. (an uncommitted tail that the
// leader replaces) from the index and from the journal.
func (l *Log) truncateFrom(first uint64) error {
	m, ok := l.metaOf(first)
	if !ok || first <= l.state.commit {
		return fmt.Errorf("cluster: cannot truncate the log at index %d (commit %d)", first, l.state.commit)
	}
	l.truncations++
	l.logger.Warn("cluster: truncating uncommitted tail", "from_index", first, "from_seq", m.firstSeq)
	for _, cut := range l.metas[first-l.metas[0].index:] {
		l.memBytes -= cut.bytes
	}
	l.metas = l.metas[:first-l.metas[0].index]
	return l.truncateEntries(first, m.firstSeq)
}

// SetHardState persists term, vote and commit when they changed.
func (l *Log) SetHardState(term, vote, commit uint64) error {
	hs := hardState{term: term, vote: vote, commit: commit}
	if hs == l.state {
		return nil
	}
	if err := l.hs.save(hs); err != nil {
		return err
	}
	l.state = hs
	return l.mem.SetHardState(l.raftHardState())
}

// Compact drops entries from memory (never from disk) once more than
// EntriesInMemoryMax entries or EntriesInMemoryBytesMax bytes are held,
// down to half of each bound, keeping every entry after applied. The
// hysteresis keeps the copying MemoryStorage.Compact does rare. Each
// compaction starts a build of the snapshot at its point.
func (l *Log) Compact(applied uint64) error {
	if len(l.metas) <= l.entriesMax && l.memBytes <= l.bytesMax {
		return nil
	}
	drop, bytes := 0, l.memBytes
	for drop < len(l.metas) && l.metas[drop].index < applied &&
		(len(l.metas)-drop > l.entriesMax/2 || bytes > l.bytesMax/2) {
		bytes -= l.metas[drop].bytes
		drop++
	}
	if drop == 0 {
		return nil
	}
	need := l.metas[drop-1].index
	if err := l.mem.Compact(need); err != nil {
		return err
	}
	l.metas = l.metas[drop:]
	l.memBytes = bytes
	// The snapshot of the compaction point is what a follower behind it
	// needs, and it is the next checkpoint (doc.go, "Checkpoints").
	l.pollBuild()
	if time.Since(l.lastBuild) < l.checkpointEvery {
		return nil
	}
	if err := l.startBuild(need); err != nil {
		// Not this replica's failure: the next compaction, or a follower's
		// need, starts one again.
		l.logger.Warn("cluster: a checkpoint build did not start", "index", need, "err", err)
	}
	return nil
}

// Close closes the files, once a build in flight has given up.
func (l *Log) Close() error {
	l.stopBuilding()
	var errs []error
	if l.w != nil {
		errs = append(errs, l.w.Close())
		l.w = nil
	}
	if l.hs != nil {
		errs = append(errs, l.hs.close())
		l.hs = nil
	}
	return errors.Join(errs...)
}

// Dir is the replica's directory.
func (l *Log) Dir() string { return l.dir }

// raft.Storage, over the entries in memory.

// InitialState returns the persisted hard state and the static membership.
func (l *Log) InitialState() (*raftpb.HardState, *raftpb.ConfState, error) {
	return l.raftHardState(), &raftpb.ConfState{Voters: l.voters}, nil
}

// Entries returns entries [lo, hi) up to maxSize bytes.
func (l *Log) Entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	return l.mem.Entries(lo, hi, maxSize)
}

// Term returns the term of entry i.
func (l *Log) Term(i uint64) (uint64, error) { return l.mem.Term(i) }

// LastIndex is the index of the last entry.
func (l *Log) LastIndex() (uint64, error) { return l.mem.LastIndex() }

// FirstIndex is the first entry held in memory.
func (l *Log) FirstIndex() (uint64, error) { return l.mem.FirstIndex() }
