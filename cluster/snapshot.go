package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// State is a replica's applied state as a Raft snapshot carries it (doc.go,
// "Raft snapshots").
type State interface {
	// Apply applies one committed command.
	Apply(seq uint64, cmd []byte) error
	// Save returns the state after the last command applied.
	Save() ([]byte, error)
	// Load makes a fresh state the one Save returned.
	Load(data []byte) error
}

// StatePart is a consumer of the matcher's events whose own state a Raft
// snapshot carries beside the matcher's (the venue's market data feed and
// console tape), so that a replica restored from a snapshot continues it
// as if it had applied every command itself (doc.go, "Raft snapshots").
type StatePart interface {
	// Event takes one event of a command applied.
	Event(ev []byte) error
	// WriteState writes the part's state after the last command applied.
	WriteState(w io.Writer) error
	// Restore loads a state WriteState wrote into a part that has taken no
	// event yet.
	Restore(r io.Reader) error
}

// CommandPart is a StatePart that is also shown each command before its
// events (the console's tape: what an operator command's result does not
// say; the schedule's progress: which transition a command ran is in its
// reason).
type CommandPart interface {
	Command(cmd []byte)
}

// MatcherState is the venue's replica state: a matcher, the running hash of
// every event it wrote, so that a replica restored from a snapshot goes on
// comparing hashes with the leader, and the parts fed from the same events.
type MatcherState struct {
	Matcher *core.Matcher
	Hash    *journal.HashSink
	// Parts are saved and restored by name; Load lists in Missing those the
	// saved state does not hold (it was saved without them), and skips the
	// saved parts it has no consumer for.
	Parts   map[string]StatePart
	Missing []string
	// NewParts, when set, makes the parts again for Reload, so that a
	// build reuses the state of the build before it.
	NewParts func() (map[string]StatePart, error)
	sink     stateSink
}

// NewMatcherState returns an empty state over a new matcher, with parts.
func NewMatcherState(cfg core.Config, parts map[string]StatePart) (*MatcherState, error) {
	m, err := core.NewMatcher(cfg)
	if err != nil {
		return nil, err
	}
	return MatcherStateOf(m, parts), nil
}

// MatcherStateOf is a state over m, which it owns from here on, with a new
// hash and parts: Load replaces m's state (core's ReadSnapshot), so that a
// replica restores a snapshot into the matcher it has instead of
// allocating another (doc.go, "Checkpoints").
func MatcherStateOf(m *core.Matcher, parts map[string]StatePart) *MatcherState {
	s := &MatcherState{Matcher: m, Hash: journal.NewHashSink()}
	s.setParts(parts)
	return s
}

func (s *MatcherState) setParts(parts map[string]StatePart) {
	s.Parts = parts
	s.sink = stateSink{state: s}
	for _, name := range s.partNames() {
		s.sink.parts = append(s.sink.parts, parts[name])
	}
}

// reloadable says whether Reload can make this state another saved one.
func (s *MatcherState) reloadable() bool { return s.NewParts != nil }

// Reload makes a state that may have applied commands the one Save
// returned: the matcher keeps its memory (its ReadSnapshot empties it
// first), the hash starts again, and the parts are new ones (NewParts; a
// part restores into one that has taken no event). A build reuses the state
// of the build before it this way, instead of allocating a matcher each
// time (doc.go, "Checkpoints").
func (s *MatcherState) Reload(data []byte) error {
	if !s.reloadable() {
		return errors.New("cluster: a replica state without NewParts cannot be reloaded")
	}
	parts, err := s.NewParts()
	if err != nil {
		return err
	}
	s.setParts(parts)
	s.Hash = journal.NewHashSink()
	return s.Load(data)
}

// stateSink hashes each event and hands it to the parts; the matcher cannot
// take an error from a sink, so the first one is kept for Apply.
type stateSink struct {
	state *MatcherState
	parts []StatePart
	slot  [core.EventSlotMin]byte
	err   error
}

func (k *stateSink) Claim() []byte { return k.slot[:] }

func (k *stateSink) Commit() {
	n := venue.MessageHeaderSize + int(binary.LittleEndian.Uint16(k.slot[:]))
	copy(k.state.Hash.Claim(), k.slot[:n])
	k.state.Hash.Commit()
	for _, p := range k.parts {
		if err := p.Event(k.slot[:n]); err != nil && k.err == nil {
			k.err = err
		}
	}
}

// Apply applies cmd to the matcher; its events go to the hash and the parts
// (a CommandPart is shown cmd first).
func (s *MatcherState) Apply(seq uint64, cmd []byte) error {
	for _, p := range s.sink.parts {
		if c, ok := p.(CommandPart); ok {
			c.Command(cmd)
		}
	}
	if err := s.Matcher.Apply(cmd, &s.sink); err != nil {
		return err
	}
	if err := s.sink.err; err != nil {
		return fmt.Errorf("cluster: replica state after seq %d: %w", seq, err)
	}
	return nil
}

func (s *MatcherState) partNames() []string {
	names := make([]string, 0, len(s.Parts))
	for name := range s.Parts {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// A saved MatcherState (little-endian):
//
//	"FVRSTAT2" | hash state bytes u32 | hash state | parts u32 |
//	per part, by name: name bytes u8 | name | state bytes u64 | state |
//	matcher snapshot (core), to the end
//
// "FVRSTATE" (an earlier build) has no parts: hash state bytes u32 | hash
// state | matcher snapshot.
const (
	matcherStateMagic   = "FVRSTAT2"
	matcherStateMagicV1 = "FVRSTATE"
	// statePartsMax bounds the parts a saved state may list.
	statePartsMax = 16
)

// Save writes the hash state, the parts' states, then the matcher's snapshot.
func (s *MatcherState) Save() ([]byte, error) {
	h, err := s.Hash.MarshalBinary()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(matcherStateMagic)
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(h))))
	b.Write(h)
	names := s.partNames()
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(names))))
	var part bytes.Buffer
	for _, name := range names {
		part.Reset()
		if err := s.Parts[name].WriteState(&part); err != nil {
			return nil, fmt.Errorf("cluster: saving the state of %s: %w", name, err)
		}
		b.WriteByte(byte(len(name)))
		b.WriteString(name)
		b.Write(binary.LittleEndian.AppendUint64(nil, uint64(part.Len())))
		b.Write(part.Bytes())
	}
	if err := s.Matcher.WriteSnapshot(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Load restores what Save wrote into a fresh state.
func (s *MatcherState) Load(data []byte) error {
	if len(data) < 12 || (string(data[:8]) != matcherStateMagic && string(data[:8]) != matcherStateMagicV1) {
		return fmt.Errorf("%w: not a saved replica state", ErrCorrupt)
	}
	short := fmt.Errorf("%w: saved replica state cut short", ErrCorrupt)
	n := uint64(binary.LittleEndian.Uint32(data[8:]))
	if 12+n > uint64(len(data)) {
		return short
	}
	if err := s.Hash.UnmarshalBinary(data[12 : 12+n]); err != nil {
		return err
	}
	rest := data[12+n:]
	found := map[string]bool{}
	if string(data[:8]) == matcherStateMagic {
		if len(rest) < 4 || binary.LittleEndian.Uint32(rest) > statePartsMax {
			return short
		}
		parts := binary.LittleEndian.Uint32(rest)
		rest = rest[4:]
		for range parts {
			if len(rest) < 1 || len(rest) < 1+int(rest[0])+8 {
				return short
			}
			name := string(rest[1 : 1+rest[0]])
			rest = rest[1+len(name):]
			size := binary.LittleEndian.Uint64(rest)
			if size > uint64(len(rest)-8) {
				return short
			}
			if p := s.Parts[name]; p != nil {
				if err := p.Restore(bytes.NewReader(rest[8 : 8+size])); err != nil {
					return fmt.Errorf("cluster: restoring the state of %s: %w", name, err)
				}
				found[name] = true
			}
			rest = rest[8+size:]
		}
	}
	s.Missing = s.Missing[:0]
	for _, name := range s.partNames() {
		if !found[name] {
			s.Missing = append(s.Missing, name)
		}
	}
	return s.Matcher.ReadSnapshot(bytes.NewReader(rest))
}

// Raft snapshot files and bounds (doc.go, "Raft snapshots").
const (
	snapshotFile  = "raft.snapshot"
	snapshotMagic = "FVRSNAPF"
	// snapshotHeaderBytes: magic 8 | index u64 | term u64 | next seq u64 |
	// data bytes u64 | crc32c u32 of bytes 0..40 and the data | reserved u32.
	snapshotHeaderBytes = 48
	// replacedDirPrefix names the directory that keeps a replica's segments
	// once a snapshot replaced them: replaced-<snapshot index>.
	replacedDirPrefix = "replaced-"
)

// snapshotNext returns the seq of the first command after the snapshot and
// the saved state (a Raft snapshot's data is next seq u64 | state).
func snapshotNext(s *raftpb.Snapshot) (uint64, []byte, error) {
	d := s.GetData()
	if len(d) < 8 {
		return 0, nil, fmt.Errorf("%w: Raft snapshot of %d bytes", ErrCorrupt, len(d))
	}
	return binary.LittleEndian.Uint64(d), d[8:], nil
}

func snapshotData(next uint64, state []byte) []byte {
	d := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(state)), next)
	return append(d, state...)
}

// snapshotFileHeader is the header of s's snapshot file: magic, index,
// term, next seq (the data's first 8 bytes; 0 when it has fewer), data
// bytes and the CRC of all that and the data.
func snapshotFileHeader(s *raftpb.Snapshot) []byte {
	md, data := s.GetMetadata(), s.GetData()
	h := make([]byte, snapshotHeaderBytes)
	copy(h, snapshotMagic)
	binary.LittleEndian.PutUint64(h[8:], md.GetIndex())
	binary.LittleEndian.PutUint64(h[16:], md.GetTerm())
	if len(data) >= 8 {
		copy(h[24:32], data)
	}
	binary.LittleEndian.PutUint64(h[32:], uint64(len(data)))
	binary.LittleEndian.PutUint32(h[40:], crc32.Update(crc32.Checksum(h[:40], castagnoli), castagnoli, data))
	return h
}

// writeSnapshotFile writes s to path (synced), as snapshotHeaderBytes of
// header and the data.
func writeSnapshotFile(path string, s *raftpb.Snapshot) error {
	if _, _, err := snapshotNext(s); err != nil {
		return err
	}
	return writeSynced(path, append(snapshotFileHeader(s), s.GetData()...))
}

// placeSnapshotFile makes path hold s, synced: by renaming the file the
// transport received s into (it is one already), or else by writing it.
func (l *Log) placeSnapshotFile(path string, s *raftpb.Snapshot) error {
	md := s.GetMetadata()
	if l.received != nil {
		if got := l.received(md.GetIndex(), md.GetTerm()); got != "" {
			if sameSnapshotFile(got, s) && os.Rename(got, path) == nil {
				return nil
			}
			os.Remove(got)
		}
	}
	return writeSnapshotFile(path, s)
}

// sameSnapshotFile reports whether the file at path has the header of s
// (whose CRC covers the data) and its size.
func sameSnapshotFile(path string, s *raftpb.Snapshot) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	h := make([]byte, snapshotHeaderBytes)
	st, err := f.Stat()
	if _, rerr := io.ReadFull(f, h); err != nil || rerr != nil {
		return false
	}
	return bytes.Equal(h, snapshotFileHeader(s)) && st.Size() == int64(snapshotHeaderBytes+len(s.GetData()))
}

// readSnapshotFile reads a snapshot file; nil, nil when there is none.
func readSnapshotFile(path string, voters []uint64) (*raftpb.Snapshot, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if len(b) < snapshotHeaderBytes || string(b[:8]) != snapshotMagic ||
		binary.LittleEndian.Uint64(b[32:]) != uint64(len(b)-snapshotHeaderBytes) ||
		binary.LittleEndian.Uint32(b[40:]) != crc32.Update(crc32.Checksum(b[:40], castagnoli), castagnoli, b[snapshotHeaderBytes:]) {
		return nil, fmt.Errorf("%w: %s is damaged", ErrCorrupt, path)
	}
	return &raftpb.Snapshot{Data: b[snapshotHeaderBytes:], Metadata: &raftpb.SnapshotMetadata{
		Index: new(binary.LittleEndian.Uint64(b[8:])), Term: new(binary.LittleEndian.Uint64(b[16:])),
		ConfState: &raftpb.ConfState{Voters: voters}}}, nil
}

// metaOnly is s without its data, for raft.MemoryStorage (which only needs
// index and term; Log.Snapshot serves the data).
func metaOnly(s *raftpb.Snapshot) *raftpb.Snapshot {
	return &raftpb.Snapshot{Metadata: s.GetMetadata()}
}

// loadBase reads the snapshot this replica's log starts after, finishing an
// install that a crash interrupted (raft.snapshot.tmp written, segments
// not all moved yet), and returns the seq its journal continues at.
func (l *Log) loadBase() (uint64, error) {
	path := filepath.Join(l.dir, snapshotFile)
	if tmp, err := readSnapshotFile(path+".tmp", l.voters); err == nil && tmp != nil {
		l.logger.Warn("cluster: finishing a snapshot install a crash interrupted", "index", tmp.GetMetadata().GetIndex())
		if err := l.finishInstall(tmp); err != nil {
			return 0, err
		}
	}
	base, err := readSnapshotFile(path, l.voters)
	if err != nil || base == nil {
		return 0, err
	}
	next, _, err := snapshotNext(base)
	if err != nil {
		return 0, err
	}
	l.base = base
	return next, nil
}

// finishInstall moves every live segment of the journal to
// replaced-<index>/ (they hold commands the snapshot covers, or a tail the
// leader replaced), the archive and raft.archived, and the journal
// snapshots and the checkpoints with them (each taken at a command the
// journal no longer holds: a reader starting from one would find no
// command after it), then renames raft.snapshot.tmp into place. No writer
// is open.
func (l *Log) finishInstall(s *raftpb.Snapshot) error {
	segs, _ := filepath.Glob(filepath.Join(l.dir, "journal-*.seg"))
	snaps, _ := filepath.Glob(filepath.Join(l.dir, "snapshot-*.snap"))
	checkpoints, _ := filepath.Glob(filepath.Join(l.dir, checkpointPrefix+"*"))
	segs = append(append(segs, snaps...), checkpoints...)
	// The archive holds commands the snapshot covers, and raft.archived
	// names a point before it.
	for _, name := range []string{journal.ArchiveDirName, archivedFile} {
		if _, err := os.Stat(filepath.Join(l.dir, name)); err == nil {
			segs = append(segs, filepath.Join(l.dir, name))
		}
	}
	if len(segs) > 0 {
		to := filepath.Join(l.dir, fmt.Sprintf("%s%020d", replacedDirPrefix, s.GetMetadata().GetIndex()))
		if err := os.MkdirAll(to, 0o755); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		for _, p := range segs {
			if err := os.Rename(p, filepath.Join(to, filepath.Base(p))); err != nil {
				return fmt.Errorf("cluster: %w", err)
			}
		}
		if err := syncDir(to); err != nil {
			return err
		}
	}
	path := filepath.Join(l.dir, snapshotFile)
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return syncDir(l.dir)
}

// installSnapshot makes s this replica's base (a follower too far behind):
// the snapshot file is written, the journal's segments move aside, and the
// journal starts empty at the snapshot's next seq. It returns the state to
// restore and that seq.
func (l *Log) installSnapshot(s *raftpb.Snapshot) ([]byte, uint64, error) {
	next, state, err := snapshotNext(s)
	if err != nil {
		return nil, 0, err
	}
	md := s.GetMetadata()
	if md.GetIndex() <= l.state.commit {
		return nil, 0, fmt.Errorf("cluster: snapshot at index %d is not ahead of the commit index %d", md.GetIndex(), l.state.commit)
	}
	l.logger.Warn("cluster: installing a Raft snapshot from the leader", "index", md.GetIndex(), "term", md.GetTerm(),
		"next_seq", next, "bytes", len(s.GetData()))
	s = &raftpb.Snapshot{Data: s.GetData(), Metadata: &raftpb.SnapshotMetadata{Index: new(md.GetIndex()),
		Term: new(md.GetTerm()), ConfState: &raftpb.ConfState{Voters: l.voters}}}
	if err := l.placeSnapshotFile(filepath.Join(l.dir, snapshotFile+".tmp"), s); err != nil {
		return nil, 0, err
	}
	l.stopBuilding()
	if err := l.w.Close(); err != nil {
		return nil, 0, err
	}
	l.w = nil
	if err := l.finishInstall(s); err != nil {
		return nil, 0, err
	}
	l.jcfg.FirstSeq = next
	if l.w, err = journal.Open(l.dir, l.jcfg); err != nil {
		return nil, 0, err
	}
	l.base, l.built, l.archived = s, nil, nil
	l.checkpoints.Index.Store(0) // moved aside with the segments
	l.mem = raft.NewMemoryStorage()
	if err := l.mem.ApplySnapshot(metaOnly(s)); err != nil {
		return nil, 0, err
	}
	l.metas, l.memBytes = l.metas[:0], 0
	return state, next, nil
}

// builtSnapshot is what the background builder hands back: the snapshot,
// and the state it built, for the next build to reuse.
type builtSnapshot struct {
	snap  *raftpb.Snapshot
	state State
	err   error
}

// Snapshot serves a follower too far behind (raft.Storage): the newest
// snapshot at or after the compaction point. When there is none, one is
// built on a background goroutine (startBuild), and Raft is told to retry
// (it does, on the next heartbeat response).
func (l *Log) Snapshot() (*raftpb.Snapshot, error) {
	first, _ := l.mem.FirstIndex()
	need := first - 1
	l.pollBuild()
	if s := l.heldFrom(need); s != nil {
		return s, nil
	}
	if err := l.startBuild(need); err != nil {
		return nil, err
	}
	return nil, raft.ErrSnapshotTemporarilyUnavailable
}

// snapshotFrom is a snapshot at or after index need (applied, in memory or
// the one before them) for a follower that lost entries it had
// acknowledged (Node.checkLostLog); nil while one is being built.
func (l *Log) snapshotFrom(need uint64) (*raftpb.Snapshot, error) {
	if l.newState == nil {
		return nil, errors.New("cluster: this node builds no Raft snapshots (NodeConfig.NewState)")
	}
	l.pollBuild()
	if s := l.heldFrom(need); s != nil {
		return s, nil
	}
	return nil, l.startBuild(need)
}

// heldFrom is the snapshot this node holds (the last built, or the base)
// at or after index need, nil when neither is.
func (l *Log) heldFrom(need uint64) *raftpb.Snapshot {
	for _, s := range []*raftpb.Snapshot{l.built, l.base} {
		if s != nil && s.GetMetadata().GetIndex() >= need {
			return s
		}
	}
	return nil
}

// pollBuild takes the background build's result once it is ready. A build
// that finished after a Raft snapshot replaced the log is dropped.
func (l *Log) pollBuild() {
	select {
	case b := <-l.buildDone:
		l.building, l.spare = false, b.state
		switch {
		case b.err != nil && b.snap == nil:
			l.logger.Error("cluster: building a Raft snapshot failed", "err", b.err)
		case b.snap.GetMetadata().GetIndex() <= l.baseIndex():
		default:
			if b.err != nil {
				l.logger.Error("cluster: a snapshot was built but not kept as a checkpoint; the next start replays from an older one",
					"index", b.snap.GetMetadata().GetIndex(), "err", b.err)
			}
			l.built = b.snap
		}
	default:
	}
}

// startBuild starts building the snapshot of entry need (applied, in
// memory or the one before them) on a background goroutine, unless one is
// being built, one held is at or after need, or this node cannot build
// any. The build replays the journal from the newest snapshot this node
// holds (the last one built, or the base, or the start) up to need's last
// command into a fresh State, keeps the result as a checkpoint
// (checkpoint.go) and moves the segments before the one it started from
// to the journal's archive (archive.go) before it hands it back.
func (l *Log) startBuild(need uint64) error {
	if l.building || l.newState == nil || need == 0 {
		return nil
	}
	if l.heldFrom(need) != nil {
		// It serves a follower behind need (Raft takes any snapshot from
		// there on), and a build from it cannot go back to need: a start
		// restored it, and the window it read holds entries before it
		// (entries_in_memory raised, or a compaction by bytes).
		return nil
	}
	term, err := l.mem.Term(need)
	if err != nil {
		return err
	}
	end, ok := l.SeqEnd(need)
	if !ok {
		return raft.ErrSnapshotTemporarilyUnavailable
	}
	from := l.base
	if l.built != nil && l.built.GetMetadata().GetIndex() > l.baseIndex() {
		from = l.built
	}
	l.building, l.lastBuild = true, time.Now()
	l.buildStop.Store(false)
	archive, sync, logger, baseIndex, spare := l.archiveRunning, l.jcfg.Sync, l.logger, l.baseIndex(), l.spare
	l.spare = nil // the build's own until it hands it back
	go func() {
		began := time.Now()
		s, st, err := buildSnapshot(l.dir, from, l.newState, spare, l.voters, need, term, end, l.snapshotBytesMax, &l.buildStop)
		if err == nil {
			err = writeCheckpoint(l.dir, s)
		}
		if err == nil {
			l.checkpoints.LastBuildNanos.Store(int64(time.Since(began)))
			l.checkpoints.Built.Add(1)
		}
		if err == nil && archive && from != nil && from.GetMetadata().GetIndex() > baseIndex {
			// Through the checkpoint this one was built from: the two
			// kept stay restorable, the newer a fallback for the older.
			_, err = archiveThrough(l.dir, from, sync, logger)
		}
		switch {
		case err == nil:
			l.checkpoints.Index.Store(need)
		case !errors.Is(err, errBuildStopped):
			l.checkpoints.Failures.Add(1)
		}
		l.buildDone <- builtSnapshot{snap: s, state: st, err: err}
	}()
	return nil
}

// errBuildStopped ends a build stopBuilding stopped.
var errBuildStopped = errors.New("cluster: snapshot build stopped")

// stopBuilding makes a build in flight give up and waits for it: before
// the files it reads move (a snapshot install) or close.
func (l *Log) stopBuilding() {
	if !l.building {
		return
	}
	l.buildStop.Store(true)
	b := <-l.buildDone
	l.building, l.spare = false, b.state
}

// buildSnapshot replays the committed commands up to lastSeq onto base
// (a snapshot before them, or nil: an empty state) and saves the result as
// the snapshot of entry index. It loads base into spare, the state of the
// build before, when that can be reloaded, and else into a new state; it
// returns the state it used, whatever the outcome. It reads the journal
// while the writer appends: every record up to lastSeq is complete on disk,
// and it reads no further.
func buildSnapshot(dir string, base *raftpb.Snapshot, newState func() (State, error), spare State, voters []uint64,
	index, term uint64, lastSeq int64, bytesMax int64, stop *atomic.Bool) (*raftpb.Snapshot, State, error) {
	st, from, err := buildFrom(base, newState, spare)
	if err != nil {
		return nil, st, err
	}
	s, err := buildOnto(dir, st, from, voters, index, term, lastSeq, bytesMax, stop)
	return s, st, err
}

// buildFrom is the state a build starts from and the seq of its first
// command: base loaded into spare when spare can be reloaded (an empty
// state is always a new one: a reloaded matcher is empty of orders, not
// as configured), else into a state newState makes.
func buildFrom(base *raftpb.Snapshot, newState func() (State, error), spare State) (State, uint64, error) {
	if base == nil {
		st, err := newState()
		return st, 0, err
	}
	next, data, err := snapshotNext(base)
	if err != nil {
		return spare, 0, err
	}
	if ms, ok := spare.(*MatcherState); ok && ms.reloadable() {
		return ms, next, ms.Reload(data)
	}
	st, err := newState()
	if err == nil {
		err = st.Load(data)
	}
	return st, next, err
}

// buildOnto applies the commands from seq from through lastSeq to st and
// saves the result as the snapshot of entry index.
func buildOnto(dir string, st State, from uint64, voters []uint64, index, term uint64, lastSeq int64, bytesMax int64,
	stop *atomic.Bool) (*raftpb.Snapshot, error) {
	if lastSeq < int64(from)-1 {
		return nil, fmt.Errorf("cluster: building the snapshot of index %d (commands to seq %d) from one after it (next seq %d)", index, lastSeq, from)
	}
	apply := func(seq uint64, cmd []byte) error {
		if stop.Load() {
			return errBuildStopped
		}
		return st.Apply(seq, cmd)
	}
	if err := applyJournal(dir, from, lastSeq, slog.New(slog.DiscardHandler), apply); err != nil {
		return nil, fmt.Errorf("cluster: building a snapshot: %w", err)
	}
	data, err := st.Save()
	if err != nil {
		return nil, err
	}
	if int64(len(data)+8) > bytesMax {
		return nil, fmt.Errorf("%w: the state after seq %d takes %d bytes, the bound is %d; a follower behind index %d cannot catch up until it is raised",
			ErrSnapshotTooLarge, lastSeq, len(data)+8, bytesMax, index)
	}
	return &raftpb.Snapshot{Data: snapshotData(uint64(lastSeq+1), data), Metadata: &raftpb.SnapshotMetadata{
		Index: new(index), Term: new(term), ConfState: &raftpb.ConfState{Voters: voters}}}, nil
}
