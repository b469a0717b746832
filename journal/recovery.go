package journal

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/fixvenue/fixvenue/core/ring"
)

// RecoveryInfo is what Open found in the directory.
type RecoveryInfo struct {
	Segments int         // segment files scanned
	Records  int64       // complete records found
	FirstSeq int64       // seq of the first record, -1 if none
	LastSeq  int64       // seq of the last complete record, -1 if none
	Tail     *TailDamage // the torn tail that was cut, or nil
}

// Open recovers the journal in dir (creating dir if needed) and returns a
// writer positioned after the last good record. Recovery reads every
// segment, checks every CRC and the sequence continuity, cuts a torn tail
// of the last segment (zeroing the damaged bytes, syncing, and logging
// what was cut and where), and fsyncs the last segment so that everything
// it kept is durable before Durable reports it. Damage anywhere else
// returns a *CorruptionError naming the segment and offset, and nothing is
// opened for writing.
func Open(dir string, cfg Config) (*Writer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := removeTempFiles(dir, ""); err != nil {
		return nil, err
	}
	dirFile, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	w := &Writer{
		dir:     dir,
		cfg:     cfg,
		dirFile: dirFile,
		buf:     make([]byte, 0, cfg.BufferBytes),
		nextSeq: cfg.FirstSeq,
		lastSeq: -1,
		durable: ring.NewSequence(-1),
	}
	if err := w.recover(); err != nil {
		_ = dirFile.Close()
		if w.seg != nil {
			_ = w.seg.Close()
		}
		return nil, err
	}
	return w, nil
}

// recover scans the directory and positions the writer.
func (w *Writer) recover() error {
	// The reader's own torn-tail warning is silenced: recovery logs the cut.
	r, err := NewReader(w.dir, ReaderOptions{Logger: slog.New(slog.DiscardHandler), LiveOnly: true})
	if err != nil {
		return err
	}
	defer r.Close()
	info := RecoveryInfo{Segments: r.Segments(), FirstSeq: -1, LastSeq: -1}
	for rec, err := range r.All() {
		if err != nil {
			return err
		}
		if info.FirstSeq < 0 {
			info.FirstSeq = int64(rec.Seq)
		}
		info.Records++
	}
	info.LastSeq = r.LastSeq()
	info.Tail = r.Tail()
	w.recovery = info
	if r.Segments() == 0 {
		return nil // an empty journal: the first Append creates a segment
	}
	if t := info.Tail; t != nil && r.NextSeq() < w.cfg.DurableBefore {
		// Cut, these bytes would be gone before the start refused the
		// journal for lacking the records the caller knows were durable.
		return &CorruptionError{Segment: t.Segment, Offset: t.Offset, Reason: fmt.Sprintf(
			"%s, where the journal ends before seq %d, but every record before seq %d was durable (%s): "+
				"damage to acknowledged records, not a torn tail, so it is not cut: restore the segment from a copy; "+
				"to start without those records, move aside what shows them durable",
			t.Reason, r.NextSeq(), w.cfg.DurableBefore, w.cfg.DurableEvidence)}
	}
	last := r.segs[len(r.segs)-1]
	f, err := os.OpenFile(last.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("journal: open %s for append: %w", last.path, err)
	}
	w.seg, w.segPath = f, last.path
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	w.segBytes = st.Size()
	end := r.dataEnd
	if t := info.Tail; t != nil {
		if err := writeZeros(f, t.Offset, t.Bytes); err != nil {
			return fmt.Errorf("journal: cut torn tail of %s at %d: %w", t.Segment, t.Offset, err)
		}
		w.cfg.Logger.Warn("journal: torn tail cut", "segment", filepath.Base(t.Segment), "offset", t.Offset,
			"bytes", t.Bytes, "reason", t.Reason, "last_seq", info.LastSeq)
		end = t.Offset
	}
	// Whatever the previous process wrote may still sit in the page cache
	// only; sync it before calling it durable.
	if err := w.cfg.Sync(f, SyncData); err != nil {
		return fmt.Errorf("journal: sync %s after recovery: %w", last.path, err)
	}
	w.bufOff = end
	w.nextSeq = r.NextSeq()
	w.segRecords = int64(w.nextSeq - last.firstSeq)
	w.lastSeq = int64(w.nextSeq) - 1
	w.durable.Store(w.lastSeq)
	return nil
}
