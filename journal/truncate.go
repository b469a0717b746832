package journal

import (
	"fmt"
	"log/slog"
	"os"
)

// TruncateAfter removes every record whose seq is greater than lastKeep
// from the journal in dir, so that the next record appended is lastKeep+1
// (lastKeep -1 empties the journal). A replicated journal needs it: a
// replica may hold a tail that its cluster never committed and that the
// leader replaces (docs/ARCHITECTURE.md, "Cluster"). No Writer may be open
// on dir. Segments that start after lastKeep are deleted; in the segment
// that holds lastKeep+1 the bytes from that record to the end of the file
// are zeroed, which is exactly what preallocation left there, so the result
// is an ordinary journal that Open, Reader and Verify accept. The zeroed
// segment and the directory are fsynced before it returns. Snapshots after
// lastKeep are deleted too: they describe commands that are gone.
func TruncateAfter(dir string, lastKeep int64, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.Default()
	}
	segs, err := listSegments(dir)
	if err != nil {
		return err
	}
	cut, err := findRecord(dir, lastKeep+1)
	if err != nil {
		return err
	}
	for i := len(segs) - 1; i >= 0; i-- {
		seg := segs[i]
		if int64(seg.firstSeq) > lastKeep {
			if err := os.Remove(seg.path); err != nil {
				return fmt.Errorf("journal: truncate: %w", err)
			}
			logger.Warn("journal: truncated segment", "segment", seg.name, "after_seq", lastKeep)
			continue
		}
		if cut != nil && cut.Segment == seg.name {
			if err := zeroFrom(seg.path, cut.Offset); err != nil {
				return fmt.Errorf("journal: truncate %s at %d: %w", seg.name, cut.Offset, err)
			}
			logger.Warn("journal: truncated records", "segment", seg.name, "offset", cut.Offset, "after_seq", lastKeep)
		}
		break
	}
	if err := removeSnapshotsAfter(dir, lastKeep); err != nil {
		return err
	}
	return SyncDirectory(dir, DefaultSync)
}

// TruncateEntries removes the Raft entry fromIndex and every entry after it
// (their marks and their records) from the replicated journal in dir, as a
// replica does when its leader replaces an uncommitted tail. No Writer may
// be open on dir. Like TruncateAfter it zeroes the segment holding the
// mark from the mark on, deletes the segments after it and the snapshots
// after the last record kept, and syncs. A journal that holds no mark for
// fromIndex is left as it is.
func TruncateEntries(dir string, fromIndex uint64, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.Default()
	}
	cut, err := findEntry(dir, fromIndex)
	if err != nil || cut == nil {
		return err
	}
	segs, err := listSegments(dir)
	if err != nil {
		return err
	}
	at := -1
	for i, seg := range segs {
		if seg.name == cut.Segment {
			at = i
		}
	}
	if at < 0 {
		return fmt.Errorf("journal: truncate: entry %d is in %s, which is not a live segment", fromIndex, cut.Segment)
	}
	for i := len(segs) - 1; i > at; i-- {
		if err := os.Remove(segs[i].path); err != nil {
			return fmt.Errorf("journal: truncate: %w", err)
		}
		logger.Warn("journal: truncated segment", "segment", segs[i].name, "from_entry", fromIndex)
	}
	if err := zeroFrom(segs[at].path, cut.Offset); err != nil {
		return fmt.Errorf("journal: truncate %s at %d: %w", cut.Segment, cut.Offset, err)
	}
	logger.Warn("journal: truncated entries", "segment", cut.Segment, "offset", cut.Offset,
		"from_entry", fromIndex, "from_seq", cut.Seq)
	if err := removeSnapshotsAfter(dir, int64(cut.Seq)-1); err != nil {
		return err
	}
	return SyncDirectory(dir, DefaultSync)
}

// findEntry returns the mark of Raft entry index (its segment, offset and
// the seq of its first command), or nil when the journal has none.
func findEntry(dir string, index uint64) (*Record, error) {
	for rec, err := range Records(dir, ReaderOptions{Entries: true, LiveOnly: true, Logger: slog.New(slog.DiscardHandler)}) {
		if err != nil {
			return nil, err
		}
		if rec.Entry.Index == index {
			return &Record{Seq: rec.Seq, Segment: rec.Segment, Offset: rec.Offset, Entry: rec.Entry}, nil
		}
	}
	return nil, nil
}

// findRecord returns the record with seq (its segment and offset), or nil
// when the journal ends before it.
func findRecord(dir string, seq int64) (*Record, error) {
	if seq < 0 {
		return nil, nil
	}
	for rec, err := range Records(dir, ReaderOptions{FromSeq: uint64(seq)}) {
		if err != nil || int64(rec.Seq) != seq {
			return nil, err
		}
		return &Record{Seq: rec.Seq, Segment: rec.Segment, Offset: rec.Offset}, nil
	}
	return nil, nil // the journal ends before seq
}

// zeroFrom zeroes path from off to its end and fsyncs it.
func zeroFrom(path string, off int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := writeZeros(f, off, st.Size()-off); err != nil {
		return err
	}
	return f.Sync()
}

// removeSnapshotsAfter deletes snapshot files whose seq is after lastKeep.
func removeSnapshotsAfter(dir string, lastKeep int64) error {
	snaps, err := ListSnapshots(dir)
	if err != nil {
		return err
	}
	for _, s := range snaps {
		if int64(s.Seq) > lastKeep {
			if err := os.Remove(s.Path); err != nil {
				return fmt.Errorf("journal: truncate: %w", err)
			}
		}
	}
	return nil
}
