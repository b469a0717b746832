package journal

import (
	"errors"
	"fmt"
	"io"
)

// ChainTailer is a Tailer over archive + live as one chain: from its first
// record it returns those the end of day moved to the archive (read from
// there, all of them durable: ArchiveSegments), then the live journal's as
// a Tailer follows it, also when ArchiveSegments moves segments it has not
// reached yet (a plain Tailer would wait for them in the directory for
// ever). Records neither live nor archived are an error, never skipped.
// Its readers: the event export's catch-up and the drop-copy replay, which
// may start before the live journal. A ChainTailer is used by one goroutine.
type ChainTailer struct {
	archived *Reader // nil once the live journal is reached
	want     uint64  // the seq the archive must give next
	live     uint64  // the live journal's first seq
	tail     *Tailer
	dir      string
}

// NewChainTailer opens a chain tailer whose first record is from.
func NewChainTailer(dir string, from uint64) (*ChainTailer, error) {
	s := &ChainTailer{dir: dir}
	if err := s.start(from); err != nil {
		return nil, err
	}
	return s, nil
}

// start reads from seq from on: from the archive up to the live journal's
// first record when from lies before it, and a new tailer from there.
func (s *ChainTailer) start(from uint64) error {
	live, ok, err := FirstLiveSeq(s.dir)
	if err != nil {
		return err
	}
	s.want, s.live, s.archived = from, live, nil
	if ok && from < live {
		if s.archived, err = NewReader(s.dir, ReaderOptions{FromSeq: from, ArchivedOnly: true}); err != nil {
			return err
		}
		from = live
	}
	s.tail, err = NewTailer(s.dir, from)
	return err
}

// Next returns the next record if its seq is at most upTo (Tailer.Next).
// Payload is valid until the next call.
func (s *ChainTailer) Next(upTo int64) (Record, bool, error) {
	if s.archived != nil {
		if int64(s.want) > upTo {
			return Record{}, false, nil
		}
		rec, err := s.archived.Next()
		switch {
		case err == nil && rec.Seq == s.want:
			s.want++
			if s.want == s.live {
				s.archived = nil
			}
			return rec, true, nil
		case err == nil:
			return Record{}, false, fmt.Errorf("the archive gives command %d where %d was due", rec.Seq, s.want)
		case errors.Is(err, io.EOF):
			return Record{}, false, fmt.Errorf("commands %d to %d are neither in the journal nor in its archive (%s): reading from %d needs them",
				s.want, s.live-1, ArchiveDirName, s.want)
		default:
			return Record{}, false, fmt.Errorf("archive: %w", err)
		}
	}
	rec, ok, err := s.tail.Next(upTo)
	if ok || err != nil {
		return rec, ok, err
	}
	// ArchiveSegments may have moved segments the tailer had not reached:
	// read them from the archive.
	next := s.tail.NextSeq()
	if int64(next) > upTo {
		return rec, false, nil
	}
	live, found, err := FirstLiveSeq(s.dir)
	if err != nil || !found || next >= live {
		return rec, false, err
	}
	_ = s.tail.Close()
	if err := s.start(next); err != nil {
		return rec, false, err
	}
	return s.Next(upTo)
}

// Close releases the tailer's segment.
func (s *ChainTailer) Close() error { return s.tail.Close() }
