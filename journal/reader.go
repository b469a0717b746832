package journal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
)

// progressStepBytes is how much of the journal a Reader scans between two
// progress callbacks.
const progressStepBytes = 4 << 20

// Record is one journal record as a Reader returns it.
type Record struct {
	Seq     uint64
	Payload []byte // valid until the next call to Next; copy it to keep it
	// Segment is the segment file's path in the journal directory: its
	// name for a live one, archive/ and its file name for an archived one
	// (archive/journal-<seq>.seg.gz: Offset then counts in its
	// decompressed content), where an operator finds it.
	Segment string
	Offset  int64 // byte offset of the frame in that file
	// Entry is a Raft entry mark (Entry.Index > 0, Payload nil, Seq the seq
	// its first command carries); only a Reader with ReaderOptions.Entries
	// returns marks.
	Entry EntryMark
}

// Progress reports how far a scan has come, for progress bars.
type Progress struct {
	BytesDone  int64 // segment bytes examined so far
	BytesTotal int64 // segment bytes the scan will examine in all
	Records    int64 // records returned so far
}

// TailDamage describes a torn tail found at the end of the last segment:
// bytes after the last complete record that are not the zeros of
// preallocation and not a valid record.
type TailDamage struct {
	Segment string // path of the segment file
	Offset  int64  // where the last good record ends: the journal is cut here
	Bytes   int64  // how many bytes from Offset held damage (non-zero or a broken frame)
	Reason  string
}

// ReaderOptions configures a Reader.
type ReaderOptions struct {
	// FromSeq is the first record returned. Records before it in the same
	// segment are still checked; earlier segments are not opened.
	FromSeq uint64
	// Progress, when set, is called every few megabytes and at the end.
	Progress func(Progress)
	// Logger receives the torn-tail warning; nil means slog.Default().
	Logger *slog.Logger
	// LiveOnly leaves out the archived segments (archive.go): the reader
	// starts at the first segment of the journal directory itself.
	LiveOnly bool
	// ArchivedOnly reads the archived segments alone (those before the
	// journal directory's first segment): a reader of records the live
	// journal no longer holds, which never opens a file the writer appends to.
	ArchivedOnly bool
	// Entries makes Next return the Raft entry marks of a replicated
	// journal as well as its records (doc.go, "Raft entry marks").
	Entries bool
}

// EntryStats sums up the Raft entry marks a Reader has passed.
type EntryStats struct {
	Marks     int64     // marks read
	Last      EntryMark // the last mark read
	LastOff   int64     // its offset in LastSeg
	LastSeg   string    // base name of its segment
	Remaining int64     // commands of the last mark not read yet (-1 before any mark)
}

// Reader returns the records of a journal directory in sequence order,
// checking every frame CRC, the sequence continuity inside and across
// segments, and the zeros after the end of data. It never modifies the
// files: a torn tail ends the scan (reported by Tail) and Open is what
// truncates it. A Reader is used by one goroutine.
type Reader struct {
	segs    []segmentFile
	idx     int
	cur     *segmentScan
	buf     []byte
	opts    ReaderOptions
	logger  *slog.Logger
	nextSeq uint64 // expected first seq of the next segment
	dataEnd int64  // where the data of the last finished segment ended
	lastSeq int64
	records int64
	tail    *TailDamage
	entries EntryStats
	err     error // sticky: io.EOF or the first error
	// progress accounting
	bytesTotal  int64
	bytesBefore int64 // sizes of the segments already finished
	reportedAt  int64
}

// NewReader opens a reader over dir. A directory with no segments reads as
// empty.
func NewReader(dir string, opts ReaderOptions) (*Reader, error) {
	segs, err := listSegments(dir)
	if err != nil {
		return nil, err
	}
	if !opts.LiveOnly && (len(segs) == 0 || opts.FromSeq < segs[0].firstSeq) {
		var firstLive uint64
		if len(segs) > 0 {
			firstLive = segs[0].firstSeq
		}
		archived, err := listArchived(dir, firstLive, len(segs) > 0)
		if err != nil {
			return nil, err
		}
		segs = append(archived, segs...)
	}
	if opts.ArchivedOnly {
		segs = slices.DeleteFunc(segs, func(s segmentFile) bool { return !s.archived })
	}
	// Skip segments that lie wholly before FromSeq: the last segment that
	// starts at or before it holds it.
	first := 0
	for i, s := range segs {
		if s.firstSeq <= opts.FromSeq {
			first = i
		}
	}
	segs = segs[first:]
	r := &Reader{segs: segs, opts: opts, logger: opts.Logger, lastSeq: -1, buf: make([]byte, readBufferBytes),
		entries: EntryStats{Remaining: -1}}
	if r.logger == nil {
		r.logger = slog.Default()
	}
	for _, s := range segs {
		if sz, err := fileSize(s.path); err == nil {
			r.bytesTotal += sz
		}
	}
	return r, nil
}

// LastSeq is the seq of the last good record seen so far (-1 before any).
func (r *Reader) LastSeq() int64 { return r.lastSeq }

// NextSeq is the seq the record after the last good one would carry. Once
// Next returned io.EOF it is where a writer continues.
func (r *Reader) NextSeq() uint64 {
	if r.cur != nil {
		return r.cur.nextSeq
	}
	return r.nextSeq
}

// Tail returns the torn tail found at the end of the last segment, or nil.
// It is meaningful after Next returned io.EOF.
func (r *Reader) Tail() *TailDamage { return r.tail }

// Segments is the number of segment files the reader covers.
func (r *Reader) Segments() int { return len(r.segs) }

// All returns the records from here on for a range loop, each as Next
// returns it: the loop ends after the last good record (io.EOF is not
// yielded) or after yielding an error.
//
//	for rec, err := range r.All() {
//		if err != nil {
//			return err
//		}
//		...
//	}
func (r *Reader) All() iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) || !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

// Records opens the journal in dir and returns its records for a range
// loop, as All does, closing the reader when the loop ends; an error from
// opening it is the only value. It is for a caller that needs nothing of the
// reader after the loop (its tail, its last seq, its entry counts).
func Records(dir string, opts ReaderOptions) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		r, err := NewReader(dir, opts)
		if err != nil {
			yield(Record{}, err)
			return
		}
		defer r.Close()
		for rec, err := range r.All() {
			if !yield(rec, err) {
				return
			}
		}
	}
}

// Next returns the next record, io.EOF after the last good one, or an error
// (a *CorruptionError for damage that is not a torn tail).
func (r *Reader) Next() (Record, error) {
	for r.err == nil {
		if r.cur == nil {
			if r.idx == len(r.segs) {
				r.finish(io.EOF)
				break
			}
			if err := r.open(); err != nil {
				r.finish(err)
				break
			}
		}
		st, err := r.cur.next()
		if err != nil {
			r.finish(err)
			break
		}
		if st == frameMark {
			if err := r.checkMark(); err != nil {
				r.finish(err)
				break
			}
			if r.opts.Entries && r.cur.nextSeq >= r.opts.FromSeq {
				return Record{Seq: r.cur.nextSeq, Segment: r.segs[r.idx].label(), Offset: r.cur.frameOff, Entry: r.cur.mark}, nil
			}
			continue
		}
		if st == frameOK {
			if err := r.countCommand(); err != nil {
				r.finish(err)
				break
			}
			r.lastSeq = int64(r.cur.seq)
			r.maybeReport()
			if r.cur.seq < r.opts.FromSeq {
				continue
			}
			r.records++
			return Record{Seq: r.cur.seq, Payload: r.cur.payload, Segment: r.segs[r.idx].label(), Offset: r.cur.frameOff}, nil
		}
		if err := r.endSegment(st); err != nil {
			r.finish(err)
		}
	}
	return Record{}, r.err
}

// Entries sums up the Raft entry marks read so far. After io.EOF,
// Remaining > 0 means the last entry's commands end early: the tail of an
// entry whose write never completed (never acknowledged).
func (r *Reader) Entries() EntryStats { return r.entries }

// checkMark checks a mark against the previous one: indexes follow each
// other, terms never decrease, and the previous entry got all its commands.
func (r *Reader) checkMark() error {
	m, e := r.cur.mark, &r.entries
	bad := ""
	switch {
	case e.Remaining > 0:
		bad = fmt.Sprintf("entry %d ends after %d of its %d commands, entry %d follows",
			e.Last.Index, int64(e.Last.Commands)-e.Remaining, e.Last.Commands, m.Index)
	case e.Marks > 0 && m.Index != e.Last.Index+1:
		bad = fmt.Sprintf("entry %d follows entry %d", m.Index, e.Last.Index)
	case e.Marks > 0 && m.Term < e.Last.Term:
		bad = fmt.Sprintf("entry %d has term %d, below the previous entry's %d", m.Index, m.Term, e.Last.Term)
	}
	if bad != "" {
		return &CorruptionError{Segment: r.cur.path, Offset: r.cur.frameOff, Reason: bad}
	}
	e.Marks++
	e.Last, e.LastOff, e.LastSeg, e.Remaining = m, r.cur.frameOff, r.segs[r.idx].name, int64(m.Commands)
	return nil
}

// countCommand counts a record against its entry's mark: once a journal
// has marks, every record belongs to one.
func (r *Reader) countCommand() error {
	e := &r.entries
	if e.Remaining == 0 {
		return &CorruptionError{Segment: r.cur.path, Offset: r.cur.frameOff,
			Reason: fmt.Sprintf("record seq %d after the %d commands of entry %d, without a mark", r.cur.seq, e.Last.Commands, e.Last.Index)}
	}
	if e.Remaining > 0 {
		e.Remaining--
	}
	return nil
}

// open starts the segment at r.idx and checks that it continues the previous one.
func (r *Reader) open() error {
	seg := r.segs[r.idx]
	s, err := openSegmentScan(seg, r.buf)
	if err != nil && !seg.archived && errors.Is(err, fs.ErrNotExist) {
		// An end of day archived it since the reader listed it (a tool
		// reading beside the running venue, a drop-copy replay): the
		// archive holds it once the live file is gone (ArchiveSegments
		// renames the archived copy into place before it removes the
		// live one; MoveToArchive renames the segment itself there).
		archive := filepath.Join(filepath.Dir(seg.path), ArchiveDirName)
		for _, moved := range []segmentFile{
			{path: filepath.Join(archive, seg.name+archivedSuffix), name: seg.name, firstSeq: seg.firstSeq, archived: true},
			{path: filepath.Join(archive, seg.name), name: seg.name, firstSeq: seg.firstSeq, archived: true, plain: true},
		} {
			if _, statErr := os.Stat(moved.path); statErr == nil {
				r.segs[r.idx] = moved
				seg = moved
				s, err = openSegmentScan(seg, r.buf)
				break
			}
		}
	}
	if err != nil {
		return err
	}
	if r.idx > 0 && s.hdr.firstSeq != r.nextSeq {
		_ = s.close()
		prev := r.segs[r.idx-1]
		return &CorruptionError{Segment: prev.path, Offset: r.dataEnd,
			Reason: fmt.Sprintf("data ends before sequence %d but the next segment %s starts at %d",
				r.nextSeq, seg.name, s.hdr.firstSeq)}
	}
	r.cur = s
	return nil
}

// endSegment handles the end of the current segment's data: a sealed
// segment must end cleanly; the last one may end in a torn tail.
func (r *Reader) endSegment(st frameStatus) error {
	s := r.cur
	end := s.off
	last := r.idx == len(r.segs)-1
	if st == frameGap {
		return &CorruptionError{Segment: s.path, Offset: end, Reason: s.badReason}
	}
	rep, err := s.inspectTail(end)
	if err != nil {
		return err
	}
	damaged := st == frameBad || rep.dirtyEnd > end
	if damaged {
		reason := s.badReason
		if st != frameBad {
			reason = fmt.Sprintf("non-zero bytes up to offset %d after the end-of-data marker", rep.dirtyEnd)
		}
		if !last {
			return &CorruptionError{Segment: s.path, Offset: end, Reason: "sealed segment: " + reason}
		}
		if rep.validOff >= 0 {
			return &CorruptionError{Segment: s.path, Offset: end,
				Reason: fmt.Sprintf("%s, followed by a valid record (seq %d) at offset %d", reason, rep.validSeq, rep.validOff)}
		}
		r.tail = &TailDamage{Segment: s.path, Offset: end, Bytes: rep.dirtyEnd - end, Reason: reason}
	}
	r.nextSeq = s.nextSeq
	r.dataEnd = end
	r.bytesBefore += s.win.size
	_ = s.close()
	r.cur = nil
	r.idx++
	return nil
}

// finish makes err sticky, closes the open segment and reports progress.
func (r *Reader) finish(err error) {
	if r.cur != nil {
		r.nextSeq = r.cur.nextSeq
		_ = r.cur.close()
		r.cur = nil
	}
	r.err = err
	if err == io.EOF {
		if r.tail != nil {
			r.logger.Warn("journal: torn tail after the last complete record",
				"segment", filepath.Base(r.tail.Segment), "offset", r.tail.Offset,
				"bytes", r.tail.Bytes, "reason", r.tail.Reason, "last_seq", r.lastSeq)
		}
		if r.opts.Progress != nil {
			r.opts.Progress(Progress{BytesDone: r.bytesTotal, BytesTotal: r.bytesTotal, Records: r.records})
		}
	}
}

func (r *Reader) maybeReport() {
	if r.opts.Progress == nil {
		return
	}
	done := r.bytesBefore + r.cur.off
	if done-r.reportedAt >= progressStepBytes {
		r.reportedAt = done
		r.opts.Progress(Progress{BytesDone: done, BytesTotal: r.bytesTotal, Records: r.records})
	}
}

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// Close releases the open segment, if any.
func (r *Reader) Close() error {
	if r.cur != nil {
		err := r.cur.close()
		r.cur = nil
		return err
	}
	return nil
}
