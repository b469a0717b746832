package journal

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// DumpOptions configures Dump.
type DumpOptions struct {
	FromSeq  uint64         // first record printed
	Progress func(Progress) // progress bar hook; nil for none
	Logger   *slog.Logger   // tail warnings; nil means slog.Default()
	// Missing is called once, before the first record is printed, when
	// that record's seq is after FromSeq: the records from FromSeq to
	// first-1 are in no segment the journal directory or its archive
	// holds (archived segments moved away, a replica's commands before its
	// Raft snapshot). Nil logs a warning. Dump goes on from first.
	Missing func(from, first uint64)
}

// Dump prints the records of the journal in dir to out, one line each: the
// record's place and seq, then the command in the venue schema's text form
// (every field by its schema name, in schema order):
//
//	journal-00000000000000000000.seg@64 seq=0 NewOrder seq=0 timestampNs=2026-11-30T10:00:00.000000001Z sessionIdx=1 ...
//
// A replicated journal's Raft entry marks get a line of their own:
//
//	journal-00000000000000000000.seg@64 raft_entry index=2 term=1 commands=3 first_seq=0
//
// A payload that does not decode is printed in hex with the decoding
// error, so that a damaged or foreign record can still be examined. A last
// line starting with "#" sums up. Dump never writes to the journal;
// corruption ends it with the same error Open would give. Records from
// FromSeq on that come before every segment it has are not an error:
// Missing is told of them.
func Dump(dir string, out io.Writer, opts DumpOptions) error {
	r, err := NewReader(dir, ReaderOptions{FromSeq: opts.FromSeq, Progress: opts.Progress, Logger: opts.Logger, Entries: true})
	if err != nil {
		return err
	}
	defer r.Close()
	bw := bufio.NewWriterSize(out, 64<<10)
	var records int64
	var scratch []byte // one command's text, reused
	started := false
	for rec, err := range r.All() {
		if err != nil {
			_ = bw.Flush()
			return err
		}
		if !started && rec.Seq > opts.FromSeq {
			// The reader starts at the first segment it has: said, so that
			// a dump asked from a seq before it is not taken for all of
			// them.
			if opts.Missing != nil {
				opts.Missing(opts.FromSeq, rec.Seq)
			} else {
				r.logger.Warn("journal: the records before the first one read are in no segment", "from", opts.FromSeq, "first", rec.Seq,
					"archive", filepath.Join(dir, ArchiveDirName))
			}
		}
		started = true
		if rec.Entry.Index != 0 {
			fmt.Fprintf(bw, "%s@%d raft_entry index=%d term=%d commands=%d first_seq=%d\n",
				rec.Segment, rec.Offset, rec.Entry.Index, rec.Entry.Term, rec.Entry.Commands, rec.Seq)
			continue
		}
		fmt.Fprintf(bw, "%s@%d seq=%d ", rec.Segment, rec.Offset, rec.Seq)
		scratch = writeCommand(bw, rec.Payload, scratch)
		bw.WriteByte('\n')
		records++
	}
	fmt.Fprintf(bw, "# records=%d last_seq=%d segments=%d", records, r.LastSeq(), r.Segments())
	if e := r.Entries(); e.Marks > 0 {
		fmt.Fprintf(bw, " raft_entries=%d last_index=%d last_term=%d", e.Marks, e.Last.Index, e.Last.Term)
	}
	if t := r.Tail(); t != nil {
		fmt.Fprintf(bw, " torn_tail=%s@%d bytes=%d (%s)", t.Segment, t.Offset, t.Bytes, t.Reason)
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// writeCommand prints one command in its text form (core.AppendText: the
// generated venue.AppendText, every field with the schema's names, and a
// removed risk limit's value as none), or its bytes
// with the reason when it is not a command that decodes. scratch is reused
// for the text; the grown buffer is returned.
func writeCommand(w *bufio.Writer, p []byte, scratch []byte) []byte {
	text, err := commandText(scratch[:0], p)
	if err != nil {
		fmt.Fprintf(w, "undecodable (%v) len=%d hex=%x", err, len(p), p)
		return scratch
	}
	w.Write(text)
	return text
}

// commandText appends the text form of the command p.
func commandText(dst, p []byte) ([]byte, error) {
	id, err := venue.TemplateIDOf(p, 0)
	if err != nil {
		return dst, err
	}
	if !venue.IsCommand(id) {
		return dst, fmt.Errorf("template %d %s is not a command", id, venue.MessageName(id))
	}
	return core.AppendText(dst, p, 0)
}
