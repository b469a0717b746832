package journal

import (
	"fmt"
	"os"
	"path/filepath"
)

// Tailer reads the records of a journal that a Writer in another goroutine
// or process is still appending to, up to a sequence the caller knows to be
// durable. It is the way for a consumer downstream of durability (the event
// export) to follow the journal without being a part of the pipeline: it
// never waits on the writer and the writer never waits on it.
//
// Records are read through the page cache, which the writer's pwrites
// update before it syncs, so a record at or below the durable sequence is
// always complete. The Tailer still never reads beyond the limit it is
// given: a frame past it may be half written. Every frame's CRC and
// sequence are checked as by Reader. When the current segment ends, the
// Tailer moves to the segment that starts at the next sequence as soon as
// that file exists. A Tailer is used by one goroutine.
type Tailer struct {
	dir  string
	buf  []byte
	cur  *segmentScan
	next uint64 // seq of the next record to return
}

// NewTailer opens a tailer whose first record is from (or the journal's
// first record, when from lies before it).
func NewTailer(dir string, from uint64) (*Tailer, error) {
	t := &Tailer{dir: dir, buf: make([]byte, tailBufferBytes), next: from}
	return t, nil
}

// NextSeq is the seq of the record the next call returns.
func (t *Tailer) NextSeq() uint64 { return t.next }

// Next returns the next record if its seq is at most upTo, and ok=false
// when it lies beyond upTo or is not in the files yet. Payload is valid
// until the next call. Damage in the data up to upTo is an error.
func (t *Tailer) Next(upTo int64) (rec Record, ok bool, err error) {
	for int64(t.next) <= upTo {
		if t.cur == nil {
			found, err := t.open()
			if err != nil || !found {
				return Record{}, false, err
			}
		}
		st, err := t.cur.next()
		if err != nil {
			return Record{}, false, err
		}
		if st != frameOK {
			// The read window may hold bytes read before the writer
			// wrote them: read again once before deciding.
			t.cur.win.n = 0
			if st, err = t.cur.next(); err != nil {
				return Record{}, false, err
			}
		}
		switch st {
		case frameMark:
			continue // a Raft entry's mark: the tailer follows commands only
		case frameOK:
			if t.cur.seq < t.next {
				continue // before from, in the segment that holds it
			}
			t.next = t.cur.seq + 1
			return Record{Seq: t.cur.seq, Payload: t.cur.payload, Segment: filepath.Base(t.cur.path), Offset: t.cur.frameOff}, true, nil
		case frameEnd:
			moved, err := t.nextSegment()
			if err != nil || !moved {
				return Record{}, false, err
			}
		default:
			return Record{}, false, &CorruptionError{Segment: t.cur.path, Offset: t.cur.off,
				Reason: fmt.Sprintf("tailing at seq %d (durable up to %d): %s", t.next, upTo, t.cur.badReason)}
		}
	}
	return Record{}, false, nil
}

// open starts the segment that holds t.next (or the first segment when
// t.next lies before the journal), reporting false when there is none yet.
func (t *Tailer) open() (bool, error) {
	segs, err := listSegments(t.dir)
	if err != nil || len(segs) == 0 {
		return false, err
	}
	pick := 0
	for i, s := range segs {
		if s.firstSeq <= t.next {
			pick = i
		}
	}
	if segs[pick].firstSeq > t.next {
		t.next = segs[pick].firstSeq
	}
	s, err := openSegmentScan(segs[pick], t.buf)
	if err != nil {
		return false, err
	}
	t.cur = s
	return true, nil
}

// nextSegment moves to the segment that starts at t.next, if it exists.
func (t *Tailer) nextSegment() (bool, error) {
	seg := segmentFile{name: segmentName(t.next)}
	seg.path = filepath.Join(t.dir, seg.name)
	seg.firstSeq = t.next
	if _, err := os.Stat(seg.path); err != nil {
		return false, nil
	}
	s, err := openSegmentScan(seg, t.buf)
	if err != nil {
		return false, err
	}
	_ = t.cur.close()
	t.cur = s
	return true, nil
}

// Close releases the open segment.
func (t *Tailer) Close() error {
	if t.cur == nil {
		return nil
	}
	err := t.cur.close()
	t.cur = nil
	return err
}

// tailBufferBytes is the tailer's read window: room for the largest frame
// twice over. It is re-read after each durable batch, so it is kept much
// smaller than a Reader's.
const tailBufferBytes = 2 * (FrameHeaderBytes + PayloadBytesLimit)
