package cluster

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

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
// any other); raft.index holds one 32-byte record per entry naming its term
// and the seqs of its commands; raft.hardstate holds term, vote and commit.
// It implements raft.Storage over the entries it keeps in memory. One
// goroutine (the node's) uses it.
type Log struct {
	dir   string
	jcfg  journal.Config
	w     *journal.Writer
	idx   *os.File
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
	scratch    []byte
	// truncations counts uncommitted tails cut because a leader replaced them.
	truncations uint64
}

// OpenLog opens (or creates) the replica files in dir for node nodeID of
// cluster clusterID with the given voters.
func OpenLog(dir string, clusterID, nodeID uint64, voters []uint64, jcfg journal.Config, logger *slog.Logger) (*Log, error) {
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
	jcfg.FirstSeq = 0
	jcfg.Logger = logger
	l := &Log{dir: dir, jcfg: jcfg, mem: raft.NewMemoryStorage(), voters: voters, logger: logger,
		entriesMax: EntriesInMemoryMax, bytesMax: EntriesInMemoryBytesMax}
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
	all, err := l.readIndex()
	if err != nil {
		return nil, err
	}
	if err := l.openJournal(all); err != nil {
		return nil, err
	}
	if l.state.commit > uint64(len(all)) {
		return nil, fmt.Errorf("%w: hard state commits index %d but the log ends at %d", ErrCorrupt, l.state.commit, len(all))
	}
	if err := l.load(all); err != nil {
		return nil, err
	}
	ok = true
	return l, nil
}

// readIndex reads raft.index. A damaged record at the end with nothing
// valid after it is a torn write of an entry never acknowledged (the index
// record is synced before the node answers for the entry): it is cut.
func (l *Log) readIndex() ([]entryMeta, error) {
	f, err := os.OpenFile(filepath.Join(l.dir, indexFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	l.idx = f
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("cluster: read index: %w", err)
	}
	var all []entryMeta
	next := uint64(0)
	for off := 0; off+indexRecordLen <= len(b); off += indexRecordLen {
		m, valid := decodeMeta(b[off : off+indexRecordLen])
		good := valid && m.index == uint64(len(all))+1 && m.firstSeq == next &&
			(len(all) == 0 || m.term >= all[len(all)-1].term)
		if !good {
			for rest := off + indexRecordLen; rest+indexRecordLen <= len(b); rest += indexRecordLen {
				if _, v := decodeMeta(b[rest : rest+indexRecordLen]); v {
					return nil, fmt.Errorf("%w: %s: bad record at offset %d followed by valid ones", ErrCorrupt, indexFile, off)
				}
			}
			break
		}
		all = append(all, m)
		next = m.nextSeq()
	}
	if keep := int64(len(all)) * indexRecordLen; keep != int64(len(b)) {
		l.logger.Warn("cluster: cut torn tail of raft index", "offset", keep, "bytes", int64(len(b))-keep)
		if err := f.Truncate(keep); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		if err := fdatasync(f); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
	}
	return all, nil
}

// openJournal opens the journal and makes it end where the index ends:
// records after the last indexed entry belong to an entry whose index
// record never reached the disk, so it was never acknowledged.
func (l *Log) openJournal(all []entryMeta) error {
	want := uint64(0)
	if len(all) > 0 {
		want = all[len(all)-1].nextSeq()
	}
	w, err := journal.Open(l.dir, l.jcfg)
	if err != nil {
		return err
	}
	l.w = w
	switch got := w.NextSeq(); {
	case got < want:
		return fmt.Errorf("%w: the index names commands up to seq %d but the journal ends before %d", ErrCorrupt, want-1, got)
	case got > want:
		l.logger.Warn("cluster: cutting journal records of an entry never indexed", "from_seq", want, "to_seq", got-1)
		return l.truncateJournal(want)
	}
	return nil
}

// truncateJournal removes every record from seq next on.
func (l *Log) truncateJournal(next uint64) error {
	if err := l.w.Close(); err != nil {
		return err
	}
	l.w = nil
	if err := journal.TruncateAfter(l.dir, int64(next)-1, l.logger); err != nil {
		return err
	}
	w, err := journal.Open(l.dir, l.jcfg)
	if err != nil {
		return err
	}
	l.w = w
	if w.NextSeq() != next {
		return fmt.Errorf("%w: journal ends before %d after truncation at %d", ErrCorrupt, w.NextSeq(), next)
	}
	return nil
}

// load puts the entries from the commit index (or the last
// EntriesInMemoryMax, whichever is earlier) into memory.
func (l *Log) load(all []entryMeta) error {
	from := uint64(1)
	if n := uint64(len(all)); n > EntriesInMemoryMax {
		from = min(l.state.commit+1, n+1-EntriesInMemoryMax)
	}
	if from > 1 {
		prev := all[from-2]
		snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: new(prev.index), Term: new(prev.term),
			ConfState: &raftpb.ConfState{Voters: l.voters}}}
		if err := l.mem.ApplySnapshot(snap); err != nil {
			return err
		}
	}
	l.metas = append(l.metas[:0], all[from-1:]...)
	ents := make([]*raftpb.Entry, 0, len(l.metas))
	if len(l.metas) > 0 {
		r, err := journal.NewReader(l.dir, journal.ReaderOptions{FromSeq: l.metas[0].firstSeq, Logger: l.logger})
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
	if index == 0 {
		return -1, true
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
		if _, _, isCheck, _ := decodeCheck(e.GetData()); isCheck {
			metas = append(metas, m) // no commands: nothing for the journal
			continue
		}
		for data := e.GetData(); len(data) > 0; {
			seq, payload, n, err := journal.NextFrame(data)
			if err != nil {
				return fmt.Errorf("cluster: entry %d: %w", e.GetIndex(), err)
			}
			if err := l.w.Append(seq, payload); err != nil {
				return fmt.Errorf("cluster: entry %d, command seq %d: %w", e.GetIndex(), seq, err)
			}
			m.count++
			data = data[n:]
		}
		metas = append(metas, m)
	}
	if err := l.w.Flush(); err != nil {
		return err
	}
	l.scratch = l.scratch[:0]
	for _, m := range metas {
		var rec [indexRecordLen]byte
		encodeMeta(rec[:], m)
		l.scratch = append(l.scratch, rec[:]...)
	}
	if _, err := l.idx.WriteAt(l.scratch, int64(first-1)*indexRecordLen); err != nil {
		return fmt.Errorf("cluster: write index: %w", err)
	}
	if err := fdatasync(l.idx); err != nil {
		return fmt.Errorf("cluster: sync index: %w", err)
	}
	l.metas = append(l.metas, metas...)
	for _, m := range metas {
		l.memBytes += m.bytes
	}
	return l.mem.Append(ents)
}

// truncateFrom removes entries first.. (an uncommitted tail that the
// leader replaces) from the index and from the journal.
func (l *Log) truncateFrom(first uint64) error {
	m, ok := l.metaOf(first)
	if !ok || first <= l.state.commit {
		return fmt.Errorf("cluster: cannot truncate the log at index %d (commit %d)", first, l.state.commit)
	}
	l.truncations++
	l.truncations++
	l.logger.Warn("cluster: truncating uncommitted tail", "from_index", first, "from_seq", m.firstSeq)
	if err := l.idx.Truncate(int64(first-1) * indexRecordLen); err != nil {
		return fmt.Errorf("cluster: truncate index: %w", err)
	}
	if err := fdatasync(l.idx); err != nil {
		return fmt.Errorf("cluster: sync index: %w", err)
	}
	for _, cut := range l.metas[first-l.metas[0].index:] {
		l.memBytes -= cut.bytes
	}
	l.metas = l.metas[:first-l.metas[0].index]
	return l.truncateJournal(m.firstSeq)
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
// hysteresis keeps the copying MemoryStorage.Compact does rare.
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
	if err := l.mem.Compact(l.metas[drop-1].index); err != nil {
		return err
	}
	l.metas = l.metas[drop:]
	l.memBytes = bytes
	return nil
}

// Close closes the files.
func (l *Log) Close() error {
	var errs []error
	if l.w != nil {
		errs = append(errs, l.w.Close())
		l.w = nil
	}
	if l.idx != nil {
		errs = append(errs, l.idx.Close())
		l.idx = nil
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

// Snapshot is never available: a follower that needs entries no longer in
// memory cannot catch up from this node (doc.go, "Limits"). Raft retries
// later rather than sending an empty state.
func (l *Log) Snapshot() (*raftpb.Snapshot, error) {
	return nil, raft.ErrSnapshotTemporarilyUnavailable
}
