package journal

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fixvenue/fixvenue/core/ring"
)

// Defaults and bounds of Config.
const (
	DefaultSegmentBytes    = 64 << 20
	DefaultBufferBytes     = 4 << 20
	DefaultPayloadBytesMax = 4096
)

// Config configures a Writer. The zero value is the production default
// except for the directory, which Open takes separately.
type Config struct {
	// SegmentBytes is the size of every new segment file (default 64 MiB).
	// Existing segments keep the size written in their header.
	SegmentBytes int64
	// Policy is PolicyBatch (default) or PolicyNone.
	Policy Policy
	// BufferBytes bounds the in-memory write buffer (default 4 MiB). When a
	// batch outgrows it, Append writes the buffer out early (a spill) and
	// carries on; durability still waits for Flush.
	BufferBytes int
	// PayloadBytesMax bounds one record's payload (default 4096, at most
	// PayloadBytesLimit). A larger Append is refused.
	PayloadBytesMax int
	// FirstSeq is the seq the first record of an empty journal must carry.
	FirstSeq uint64
	// ZeroFill preallocates segments by writing zeros instead of
	// fallocate. It makes rolls slower and first fdatasyncs on each block
	// cheaper; it is also the automatic fallback where fallocate fails.
	ZeroFill bool
	// Sync replaces DefaultSync (tests inject slow or failing syncs).
	Sync SyncFunc
	// OnFlush, when set, is called on the writer goroutine after every
	// flush that made records durable (metrics hook; keep it short).
	OnFlush func(FlushInfo)
	// Logger receives recovery and failure reports; nil means slog.Default().
	Logger *slog.Logger
	// DurableBefore is a seq every record before which is known to have
	// been durable, and DurableEvidence says how it is known (a published
	// snapshot, the journal's end at the venue's last start or clean
	// stop). A bad frame at the end of the last segment that leaves the
	// journal short of it is damage to acknowledged records, not a torn
	// tail: Open refuses it
	// as a *CorruptionError and cuts nothing, so that the bytes are still
	// there for whoever repairs or restores them ("Recovery and the torn
	// tail" in doc.go). Zero: no such knowledge.
	DurableBefore   uint64
	DurableEvidence string
}

func (c Config) withDefaults() Config {
	c.SegmentBytes = cmp.Or(c.SegmentBytes, DefaultSegmentBytes)
	c.BufferBytes = cmp.Or(c.BufferBytes, DefaultBufferBytes)
	c.PayloadBytesMax = cmp.Or(c.PayloadBytesMax, DefaultPayloadBytesMax)
	if c.Sync == nil {
		c.Sync = DefaultSync
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Policy != PolicyBatch && c.Policy != PolicyNone:
		return fmt.Errorf("journal: unknown policy %d", c.Policy)
	case c.PayloadBytesMax < 1 || c.PayloadBytesMax > PayloadBytesLimit:
		return fmt.Errorf("journal: PayloadBytesMax %d outside 1..%d", c.PayloadBytesMax, PayloadBytesLimit)
	case c.SegmentBytes < minSegmentBytes(c.PayloadBytesMax) || c.SegmentBytes > SegmentBytesLimit:
		return fmt.Errorf("journal: SegmentBytes %d outside %d..%d", c.SegmentBytes, minSegmentBytes(c.PayloadBytesMax), SegmentBytesLimit)
	case c.BufferBytes < FrameHeaderBytes+c.PayloadBytesMax:
		return fmt.Errorf("journal: BufferBytes %d cannot hold one record of %d bytes", c.BufferBytes, c.PayloadBytesMax)
	case c.FirstSeq > maxSeq:
		return fmt.Errorf("journal: FirstSeq %d too large", c.FirstSeq)
	}
	return nil
}

// Errors returned by Append and Flush.
var (
	// ErrFailed is wrapped by every error of a writer in the failed
	// state (see FailedError).
	ErrFailed = errors.New("journal failed")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("journal closed")
	// ErrSequence is returned by Append for a seq that does not follow
	// the previous record; nothing is written.
	ErrSequence = errors.New("journal: sequence out of order")
	// ErrPayloadSize is returned by Append for an empty or oversized
	// payload; nothing is written.
	ErrPayloadSize = errors.New("journal: payload size")
	// ErrSegmentRemoved is the cause of the failed state when the segment
	// being written no longer has a name in the file system (it, or the
	// journal directory, was removed while the venue ran): a sync of it
	// still succeeds, but its records go with the process, so nothing
	// written to it is durable.
	ErrSegmentRemoved = errors.New("the segment file was removed from the journal directory: its records would be lost when the process ends")
)

// FailedError is the fail-stop state: a write or sync failed, so the
// writer cannot know what reached the disk. It never advances the durable
// sequence again and returns this error from every later call; the process
// must stop acknowledging and restart, letting recovery settle the tail.
// Retrying an fsync is wrong on Linux: a failed fsync may have dropped the
// dirty pages, and the next one would report success for lost data.
type FailedError struct {
	Op         string // what failed: "write", "fdatasync", "roll", ...
	Segment    string // the segment file involved
	DurableSeq int64  // the durable sequence when it failed (final)
	Err        error  // the cause, e.g. syscall.ENOSPC or syscall.EIO
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("journal failed (fail-stop) during %s of %s, durable up to %d: %v",
		e.Op, filepath.Base(e.Segment), e.DurableSeq, e.Err)
}

// Unwrap exposes the cause, so errors.Is(err, syscall.ENOSPC) works.
func (e *FailedError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrFailed) true.
func (e *FailedError) Is(target error) bool { return target == ErrFailed }

// Writer appends records to a journal directory and makes them durable in
// batches. Append, Flush, Close and Run belong to one goroutine (the
// journal goroutine); Durable, DurableSequence, Err and Stats may be called
// from any goroutine.
type Writer struct {
	dir     string
	cfg     Config
	dirFile *os.File

	seg        *os.File // current segment, nil before the first record of an empty journal
	segPath    string
	segBytes   int64  // size of the current segment
	bufOff     int64  // file offset where buf[0] goes
	buf        []byte // frames appended but not yet written; cap is cfg.BufferBytes
	nextSeq    uint64 // the seq the next Append must carry
	lastSeq    int64  // seq of the last appended record, -1 if none
	batchRecs  int    // records since the last flush
	batchMarks int    // Raft entry marks since the last flush
	segRecords int64  // records in the current segment
	batchBytes int    // their payload bytes
	closed     bool

	segStat  syscall.Stat_t // linked's, kept so that its check does not allocate
	durable  *ring.Sequence // highest seq known durable (-1 none)
	failure  atomic.Pointer[FailedError]
	stats    Stats
	recovery RecoveryInfo
}

// Durable returns the highest sequence that is durable under the policy:
// every record up to it survives a crash (PolicyBatch) or a process kill
// (PolicyNone). -1 means none.
func (w *Writer) Durable() int64 { return w.durable.Load() }

// DurableSequence is the same value as a padded ring sequence, so that a
// consumer can gate on it (a ring.Barrier dependency, or a direct Load).
// Only the writer stores to it.
func (w *Writer) DurableSequence() *ring.Sequence { return w.durable }

// LastSeq is the seq of the last appended record (-1 if none).
func (w *Writer) LastSeq() int64 { return w.lastSeq }

// NextSeq is the seq the next Append must carry. After a restart the
// pipeline numbers new commands from here.
func (w *Writer) NextSeq() uint64 { return w.nextSeq }

// Err returns the FailedError once the writer has failed, else nil. The
// gateway checks it to reject new orders with a clear reason.
func (w *Writer) Err() error {
	if f := w.failure.Load(); f != nil {
		return f
	}
	return nil
}

// Stats returns the live counters (read them with atomic loads or Snapshot).
func (w *Writer) Stats() *Stats { return &w.stats }

// Recovery describes what Open found.
func (w *Writer) Recovery() RecoveryInfo { return w.recovery }

// Dir is the journal directory.
func (w *Writer) Dir() string { return w.dir }

// Append adds one record to the write buffer. It copies payload, so the
// caller may reuse it at once. seq must be NextSeq(). Append does not make
// the record durable; Flush does. It does not allocate.
func (w *Writer) Append(seq uint64, payload []byte) error {
	if f := w.failure.Load(); f != nil {
		return f
	}
	if w.closed {
		return ErrClosed
	}
	n := len(payload)
	if n == 0 || n > w.cfg.PayloadBytesMax {
		return ErrPayloadSize
	}
	if seq != w.nextSeq {
		return ErrSequence
	}
	frame, err := w.reserve(FrameHeaderBytes+n, false)
	if err != nil {
		return err
	}
	putFrame(frame, seq, payload)
	w.nextSeq = seq + 1
	w.lastSeq = int64(seq)
	w.segRecords++
	w.batchRecs++
	w.batchBytes += n
	w.stats.Records.Add(1)
	w.stats.PayloadBytes.Add(int64(n))
	return nil
}

// AppendEntryMark adds the mark of a Raft entry whose m.Commands records
// the caller appends next (doc.go, "Raft entry marks"); a replicated
// journal writes one before each entry. Like Append it only buffers; Flush
// makes it durable with the batch. It does not allocate.
func (w *Writer) AppendEntryMark(m EntryMark) error {
	if f := w.failure.Load(); f != nil {
		return f
	}
	if w.closed {
		return ErrClosed
	}
	if m.Index == 0 {
		return errors.New("journal: entry mark with index 0")
	}
	mark, err := w.reserve(EntryMarkBytes, true)
	if err != nil {
		return err
	}
	putEntryMark(mark, m)
	w.batchMarks++
	return nil
}

// reserve makes room in the write buffer for the size bytes of the next
// record (seq NextSeq) or of an entry mark before it, and returns them: it
// starts the first segment, rolls to a new one when the bytes would pass
// the segment size, and writes the buffer out (a spill) when they would
// pass its capacity.
func (w *Writer) reserve(size int, entryMark bool) ([]byte, error) {
	switch {
	case w.seg == nil:
		if err := w.startSegment(w.nextSeq); err != nil {
			return nil, err
		}
	case w.bufOff+int64(len(w.buf)+size) > w.segBytes:
		if entryMark && w.segRecords == 0 {
			// The next segment would take this one's name (segments are
			// named by their first record's seq).
			return nil, w.fail("roll", fmt.Errorf("segment of %d bytes filled with entry marks alone", w.segBytes))
		}
		if err := w.roll(w.nextSeq); err != nil {
			return nil, err
		}
	}
	if len(w.buf)+size > cap(w.buf) {
		if err := w.writeBuffered(); err != nil {
			return nil, err
		}
		w.stats.Spills.Add(1)
	}
	start := len(w.buf)
	w.buf = w.buf[:start+size]
	return w.buf[start:], nil
}

// Flush writes everything appended since the last flush with one write
// and makes it durable with one fdatasync (PolicyBatch), then advances the
// durable sequence to the last appended seq. With nothing new it does
// nothing. Any failure puts the writer in the failed state.
func (w *Writer) Flush() error {
	if f := w.failure.Load(); f != nil {
		return f
	}
	if w.closed {
		return ErrClosed
	}
	if w.batchRecs == 0 && w.batchMarks == 0 {
		return nil
	}
	if err := w.writeBuffered(); err != nil {
		return err
	}
	var syncNs int64
	if w.cfg.Policy == PolicyBatch {
		t0 := time.Now()
		if err := w.cfg.Sync(w.seg, SyncData); err != nil {
			return w.fail("fdatasync", err)
		}
		syncNs = time.Since(t0).Nanoseconds()
		w.stats.Fsyncs.Add(1)
		w.stats.FsyncNsTotal.Add(syncNs)
		w.stats.FsyncNsLast.Store(syncNs)
		storeMax(&w.stats.FsyncNsMax, syncNs)
	}
	if err := w.linked(); err != nil {
		return w.fail("link check", err)
	}
	// The store comes after the sync returned: a reader that sees the new
	// value may tell the world, and the data is on disk by then.
	w.durable.Store(w.lastSeq)
	w.stats.Flushes.Add(1)
	storeMax(&w.stats.BatchRecordsMax, int64(w.batchRecs))
	if w.cfg.OnFlush != nil {
		w.cfg.OnFlush(FlushInfo{Records: w.batchRecs, PayloadBytes: w.batchBytes, FsyncNs: syncNs, DurableSeq: w.lastSeq})
	}
	w.batchRecs, w.batchBytes, w.batchMarks = 0, 0, 0
	return nil
}

// Close flushes what is pending and closes the files. After a failure it
// only closes and returns the failure.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	err := w.Flush()
	w.closed = true
	if w.seg != nil {
		if cerr := w.seg.Close(); err == nil && cerr != nil {
			err = cerr
		}
		w.seg = nil
	}
	if cerr := w.dirFile.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

// writeBuffered writes the buffer to the current segment with one pwrite.
func (w *Writer) writeBuffered() error {
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.seg.WriteAt(w.buf, w.bufOff)
	if err != nil {
		// A short write may have left part of a frame in the file. It lies
		// after the last complete record, so recovery cuts it as a torn tail.
		return w.fail("write", err)
	}
	w.bufOff += int64(n)
	w.buf = w.buf[:0]
	return nil
}

// startSegment creates the first segment of an empty journal.
func (w *Writer) startSegment(firstSeq uint64) error {
	f, path, err := createSegment(w.dir, w.dirFile, firstSeq, w.cfg.SegmentBytes, w.cfg.ZeroFill, w.cfg.Sync)
	if err != nil {
		w.segPath = filepath.Join(w.dir, segmentName(firstSeq)) // the segment it could not create
		return w.fail("create segment", err)
	}
	w.seg, w.segPath, w.segBytes = f, path, w.cfg.SegmentBytes
	w.bufOff = SegmentHeaderBytes
	w.segRecords = 0
	w.stats.SegmentsCreated.Add(1)
	return nil
}

// roll seals the current segment and starts a new one at firstSeq. The
// sealed segment is synced under either policy before the new one exists,
// so a sealed segment is always complete on disk and any damage found in
// one later is real corruption, never a torn write.
func (w *Writer) roll(firstSeq uint64) error {
	if err := w.writeBuffered(); err != nil {
		return err
	}
	if err := w.cfg.Sync(w.seg, SyncData); err != nil {
		return w.fail("sync before roll", err)
	}
	// The batch's records written to this segment are made durable by the
	// next Flush, which checks only the new segment.
	if err := w.linked(); err != nil {
		return w.fail("link check before roll", err)
	}
	if err := w.seg.Close(); err != nil {
		return w.fail("close before roll", err)
	}
	w.seg = nil
	return w.startSegment(firstSeq)
}

// linked checks that the current segment still has a name in the file
// system. A segment removed while it is open (an rm -r of the data
// directory, a volume replaced under the venue) takes every write and sync
// without an error, and its records would be acknowledged and then lost at
// the next start: one fstat per flush, against an fdatasync, makes that a
// failure instead.
func (w *Writer) linked() error {
	if err := syscall.Fstat(int(w.seg.Fd()), &w.segStat); err != nil {
		return err
	}
	if w.segStat.Nlink == 0 {
		return ErrSegmentRemoved
	}
	return nil
}

// fail enters the failed state (once) and returns the FailedError.
func (w *Writer) fail(op string, cause error) error {
	fe := &FailedError{Op: op, Segment: w.segPath, DurableSeq: w.durable.Load(), Err: cause}
	if w.failure.CompareAndSwap(nil, fe) {
		w.stats.Failures.Add(1)
		w.cfg.Logger.Error("journal: fail-stop", "op", op, "segment", filepath.Base(w.segPath),
			"durable_seq", fe.DurableSeq, "last_appended_seq", w.lastSeq, "err", cause)
	}
	return w.failure.Load()
}
