package eventstream

import (
	"errors"
	"fmt"
	"io"

	"github.com/fixvenue/fixvenue/journal"
)

// catchUpSource gives a catch-up the journal's records from its first
// one: those the end of day moved to the archive (read from there, all of
// them durable), then the live journal's as the tailer follows it. A
// catch-up may start before the live journal: a stream re-exported from
// the journal's start, or continued from a snapshot whose next command is
// archived. Records neither live nor archived are an error, never skipped.
type catchUpSource struct {
	archived *journal.Reader // nil once the live journal is reached
	want     uint64          // the seq the archive must give next
	live     uint64          // the live journal's first seq
	tail     *journal.Tailer
	dir      string
}

func newCatchUpSource(dir string, from uint64) (*catchUpSource, error) {
	live, ok, err := journal.FirstLiveSeq(dir)
	if err != nil {
		return nil, err
	}
	s := &catchUpSource{want: from, live: live, dir: dir}
	if ok && from < live {
		if s.archived, err = journal.NewReader(dir, journal.ReaderOptions{FromSeq: from, ArchivedOnly: true}); err != nil {
			return nil, err
		}
		from = live
	}
	if s.tail, err = journal.NewTailer(dir, from); err != nil {
		return nil, err
	}
	return s, nil
}

// Next returns the next record if its seq is at most upTo (Tailer.Next).
func (s *catchUpSource) Next(upTo int64) (journal.Record, bool, error) {
	if s.archived != nil {
		if int64(s.want) > upTo {
			return journal.Record{}, false, nil
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
			return journal.Record{}, false, fmt.Errorf("the archive gives command %d where %d was due", rec.Seq, s.want)
		case errors.Is(err, io.EOF):
			return journal.Record{}, false, fmt.Errorf("commands %d to %d are neither in the journal nor in its archive (%s): a catch-up from %d needs them",
				s.want, s.live-1, journal.ArchiveDirName, s.want)
		default:
			return journal.Record{}, false, fmt.Errorf("archive: %w", err)
		}
	}
	rec, ok, err := s.tail.Next(upTo)
	if ok || err != nil {
		return rec, ok, err
	}
	// An end of day may have archived segments the tailer had not reached
	// (a catch-up far behind): it would wait for them in the directory for
	// ever. Read them from the archive instead.
	next := s.tail.NextSeq()
	if int64(next) > upTo {
		return rec, false, nil
	}
	live, found, err := journal.FirstLiveSeq(s.dir)
	if err != nil || !found || next >= live {
		return rec, false, err
	}
	if s.archived, err = journal.NewReader(s.dir, journal.ReaderOptions{FromSeq: next, ArchivedOnly: true}); err != nil {
		return rec, false, err
	}
	_ = s.tail.Close()
	if s.tail, err = journal.NewTailer(s.dir, live); err != nil {
		return rec, false, err
	}
	s.want, s.live = next, live
	return s.Next(upTo)
}

// Close releases the tailer's segment.
func (s *catchUpSource) Close() error { return s.tail.Close() }
