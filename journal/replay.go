package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/cespare/xxhash/v2"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// StateMachine is what Replay feeds: core.Matcher.
type StateMachine interface {
	Apply(cmd []byte, sink core.EventSink) error
}

// SnapshotLoader is a StateMachine that can load a snapshot (core.Matcher).
type SnapshotLoader interface {
	ReadSnapshot(r io.Reader) error
}

// ReplayOptions configures Replay.
type ReplayOptions struct {
	// UseSnapshot loads the newest valid snapshot that the journal can
	// continue, and replays only the records after it. The state machine
	// must then implement SnapshotLoader and be fresh.
	UseSnapshot bool
	// SnapshotUsable, if set, passes over the snapshots it refuses (a
	// snapshot whose companion state, such as the market-data feed's, is
	// missing).
	SnapshotUsable func(seq uint64) bool
	// RefuseSnapshotAhead makes a valid snapshot ahead of the journal an
	// error (ErrJournalBehindSnapshot) instead of passing it over: for the
	// venue's start, which holds the directory, where a published
	// snapshot's command was durable, so a journal that ends before it lost
	// records. A tool reading the journal of a running venue may read it
	// while it is being written, and passes such a snapshot over.
	RefuseSnapshotAhead bool
	// SnapshotLoaded, if set, is called after the snapshot is loaded and
	// before the first record after it is applied (to load the companion
	// state); its error stops the replay.
	SnapshotLoaded func(SnapshotFile) error
	// FromSeq, without UseSnapshot, is the first record to apply: the state
	// machine holds the state after FromSeq-1, restored elsewhere (a
	// cluster replica's Raft snapshot). The journal must hold that record.
	FromSeq uint64
	// Progress is called every few megabytes of journal and at the end.
	Progress func(Progress)
	// Logger receives snapshot and tail reports; nil means slog.Default().
	Logger *slog.Logger
}

// ReplayResult says what Replay did.
type ReplayResult struct {
	Records  int64         // records applied
	FirstSeq int64         // seq of the first record applied, -1 if none
	LastSeq  int64         // seq of the last record applied (or the snapshot's), -1 if none
	Snapshot *SnapshotFile // the snapshot loaded, or nil
	Tail     *TailDamage   // a torn tail the read-only scan stopped at (Open cuts it)
	Entries  EntryStats    // the Raft entry marks passed (a replicated journal)
}

// replayScratchEvents sizes the default sink: enough for the events of one
// command (a market order sweeping many levels emits many Fills); the sink
// grows (and then keeps its memory) beyond it.
const replayScratchEvents = 256

// ErrSegmentsMissing is Replay's error for a journal whose first record
// is after the seq the replay starts from: segments before it, archived
// ones moved away or lost, are missing.
var ErrSegmentsMissing = errors.New("earlier segments are missing")

// Replay applies the journal in dir to m, in order, sending every event to
// sink (nil: events are discarded). Call it after Open, which has cut any
// torn tail; Replay itself never writes. With UseSnapshot, the newest
// valid snapshot whose seq lies within the journal is loaded first and only
// later records are applied. A record the state machine refuses stops the
// replay with an error naming its seq, segment and offset.
func Replay(dir string, m StateMachine, sink core.EventSink, opts ReplayOptions) (ReplayResult, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	res := ReplayResult{FirstSeq: -1, LastSeq: -1}
	var bufSink *core.BufferSink
	if sink == nil {
		bufSink = core.NewBufferSink(replayScratchEvents)
		sink = bufSink
	}
	from := opts.FromSeq
	res.LastSeq = int64(from) - 1
	if opts.UseSnapshot {
		loader, ok := m.(SnapshotLoader)
		if !ok {
			return res, errors.New("journal: replay from a snapshot needs a state machine that loads snapshots")
		}
		sf, found, err := snapshotForJournal(dir, opts.SnapshotUsable, opts.RefuseSnapshotAhead, opts.Logger)
		if err != nil {
			return res, err
		}
		if found {
			if _, err := ReadSnapshot(sf.Path, loader.ReadSnapshot); err != nil {
				return res, err
			}
			if opts.SnapshotLoaded != nil {
				if err := opts.SnapshotLoaded(sf); err != nil {
					return res, err
				}
			}
			res.Snapshot = &sf
			res.LastSeq = int64(sf.Seq)
			from = sf.Seq + 1
			opts.Logger.Info("journal: snapshot loaded", "snapshot", sf.Path, "seq", sf.Seq, "bytes", sf.PayloadBytes)
		}
	}
	r, err := NewReader(dir, ReaderOptions{FromSeq: from, Progress: opts.Progress, Logger: opts.Logger})
	if err != nil {
		return res, err
	}
	defer r.Close()
	for rec, err := range r.All() {
		if err != nil {
			return res, err
		}
		if res.FirstSeq < 0 && rec.Seq != from {
			// Segments before this one are gone: applying from here would
			// give a state that never existed.
			return res, fmt.Errorf("journal: the first record is seq %d but replay needs seq %d: %w (archived segments belong in %s)",
				rec.Seq, from, ErrSegmentsMissing, filepath.Join(dir, ArchiveDirName))
		}
		if bufSink != nil {
			bufSink.Reset()
		}
		if err := m.Apply(rec.Payload, sink); err != nil {
			return res, fmt.Errorf("journal: replay of seq %d (%s offset %d): %w", rec.Seq, rec.Segment, rec.Offset, err)
		}
		if res.FirstSeq < 0 {
			res.FirstSeq = int64(rec.Seq)
		}
		res.LastSeq = int64(rec.Seq)
		res.Records++
	}
	res.Tail = r.Tail()
	res.Entries = r.Entries()
	return res, nil
}

// snapshotForJournal finds the newest valid snapshot that the journal can
// continue: its seq must be at most the journal's last seq (a snapshot
// ahead of the journal holds commands that never became durable) and at
// least the first segment's first seq minus one, archived segments
// included (the records after it must all be present).
func snapshotForJournal(dir string, usable func(uint64) bool, refuseAhead bool, logger *slog.Logger) (SnapshotFile, bool, error) {
	segs, err := listSegments(dir)
	if err != nil {
		return SnapshotFile{}, false, err
	}
	if len(segs) == 0 {
		// No journal: any valid snapshot is ahead of it (an error).
		return latestSnapshot(dir, -1, -1, usable, refuseAhead, logger)
	}
	last, err := lastSeqOf(dir, segs[len(segs)-1].firstSeq)
	if err != nil {
		return SnapshotFile{}, false, err
	}
	// The reader reads archived segments when asked for their records, so
	// a snapshot older than the live segments is usable too (one whose
	// companion state the newest snapshot lacks, say).
	first := segs[0].firstSeq
	archived, err := listArchived(dir, first, true)
	if err != nil {
		return SnapshotFile{}, false, err
	}
	if len(archived) > 0 {
		first = archived[0].firstSeq
	}
	return latestSnapshot(dir, int64(first)-1, last, usable, refuseAhead, logger)
}

// lastSeqOf scans only the last segment (the one starting at from) for the
// journal's last seq.
func lastSeqOf(dir string, from uint64) (int64, error) {
	r, err := NewReader(dir, ReaderOptions{FromSeq: from, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return 0, err
	}
	defer r.Close()
	for _, err := range r.All() {
		if err != nil {
			return 0, err
		}
	}
	return int64(r.NextSeq()) - 1, nil
}

// VerifyResult is the outcome of Verify. String gives the one-line form
// `fixvenue journal verify` prints.
type VerifyResult struct {
	Records    int64
	LastSeq    int64
	Events     int64
	EventBytes int64
	EventsHash uint64 // xxhash64 of every event byte, in order
	Tail       *TailDamage
	Entries    EntryStats // Raft entry marks, for a replicated journal
	// LastExecID is the matcher's last ExecID after the replay (0 when the
	// state machine keeps none): a FIX store holding a higher one heard of
	// commands the journal lacks.
	LastExecID uint64
}

func (v VerifyResult) String() string {
	return fmt.Sprintf("records=%d last_seq=%d events_hash=%016x", v.Records, v.LastSeq, v.EventsHash)
}

// RaftLine is the second line `fixvenue journal verify` prints for a
// replicated journal (empty for a single node's): how many Raft entry marks
// it holds, the last one's index and term, and, when the last entry's
// commands end early, how many are missing (a write never completed, which
// the replica cuts when it opens). It is apart from String because replicas
// agree on the commands while their logs may end at different entries.
func (v VerifyResult) RaftLine() string {
	e := v.Entries
	if e.Marks == 0 {
		return ""
	}
	line := fmt.Sprintf("raft_entries=%d last_index=%d last_term=%d", e.Marks, e.Last.Index, e.Last.Term)
	if e.Remaining > 0 {
		line += fmt.Sprintf(" last_entry_missing_commands=%d", e.Remaining)
	}
	return line
}

// Verify replays the whole journal in dir (every record, no snapshot) into
// a fresh matcher built from cfg and hashes every event byte. Two runs over
// the same journal, by the same or another build, must give the same
// result; a difference means the matcher is not deterministic. progress
// may be nil.
func Verify(dir string, cfg core.Config, progress func(Progress)) (VerifyResult, error) {
	m, err := core.NewMatcher(cfg)
	if err != nil {
		return VerifyResult{}, err
	}
	return VerifyFrom(dir, m, NewHashSink(), 0, progress)
}

// VerifyFrom is Verify onto a state restored elsewhere: m and sink hold the
// matcher and the events hash after command from-1 (a cluster replica's Raft
// snapshot), and the records from seq from on are replayed. Records counts
// the commands before from as well, so the result reads as Verify's over
// the whole history.
func VerifyFrom(dir string, m StateMachine, sink *HashSink, from uint64, progress func(Progress)) (VerifyResult, error) {
	res, err := Replay(dir, m, sink, ReplayOptions{Progress: progress, FromSeq: from})
	if err != nil {
		return VerifyResult{}, err
	}
	out := VerifyResult{Records: int64(from) + res.Records, LastSeq: res.LastSeq, Events: sink.Events(), EventBytes: sink.Bytes(),
		EventsHash: sink.Sum64(), Tail: res.Tail, Entries: res.Entries}
	if x, ok := m.(interface{ LastExecID() uint64 }); ok {
		out.LastExecID = x.LastExecID()
	}
	return out, nil
}

// HashSink is a core.EventSink that hashes every event byte (xxhash64) and
// keeps nothing else. It does not allocate per event.
type HashSink struct {
	slot   [core.EventSlotMin]byte
	digest *xxhash.Digest
	events int64
	bytes  int64
}

// NewHashSink returns an empty hashing sink.
func NewHashSink() *HashSink { return &HashSink{digest: xxhash.New()} }

// Claim returns the sink's one scratch slot.
func (h *HashSink) Claim() []byte {
	clear(h.slot[:venue.MessageHeaderSize])
	return h.slot[:]
}

// Commit hashes the event in the slot (header plus blockLength bytes).
func (h *HashSink) Commit() {
	n := venue.MessageHeaderSize + int(binary.LittleEndian.Uint16(h.slot[:]))
	if n > len(h.slot) {
		panic("journal: event longer than its slot")
	}
	_, _ = h.digest.Write(h.slot[:n])
	h.events++
	h.bytes += int64(n)
}

// Sum64 is the hash of every event committed so far.
func (h *HashSink) Sum64() uint64 { return h.digest.Sum64() }

// Events is the number of events committed.
func (h *HashSink) Events() int64 { return h.events }

// Bytes is the number of event bytes hashed.
func (h *HashSink) Bytes() int64 { return h.bytes }

// hashStateMagic opens HashSink's saved state.
const hashStateMagic = "FVHASH01"

// MarshalBinary saves the hash's state (the running digest and the counts),
// so that a replica restored from a snapshot continues the same running
// hash as if it had applied every command itself.
func (h *HashSink) MarshalBinary() ([]byte, error) {
	d, err := h.digest.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b := append([]byte(hashStateMagic), make([]byte, 16)...)
	binary.LittleEndian.PutUint64(b[8:], uint64(h.events))
	binary.LittleEndian.PutUint64(b[16:], uint64(h.bytes))
	return append(b, d...), nil
}

// UnmarshalBinary restores a state MarshalBinary saved.
func (h *HashSink) UnmarshalBinary(b []byte) error {
	if len(b) < 24 || string(b[:8]) != hashStateMagic {
		return errors.New("journal: not a saved events hash")
	}
	if err := h.digest.UnmarshalBinary(b[24:]); err != nil {
		return fmt.Errorf("journal: saved events hash: %w", err)
	}
	h.events = int64(binary.LittleEndian.Uint64(b[8:]))
	h.bytes = int64(binary.LittleEndian.Uint64(b[16:]))
	return nil
}
