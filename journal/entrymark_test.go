package journal_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/journal"
)

// markedEntry is one Raft entry as the test wrote it.
type markedEntry struct {
	mark     journal.EntryMark
	firstSeq uint64
}

// writeMarked copies the records of plain into a new journal in dir as
// Raft entries of 0 to 3 commands (a mark before each), flushing each
// entry, with small segments so that marks and their commands straddle
// segment ends.
func writeMarked(t *testing.T, plain, dir string) []markedEntry {
	t.Helper()
	var recs [][]byte
	eachRecord(t, plain, journal.ReaderOptions{}, func(rec journal.Record) {
		recs = append(recs, bytes.Clone(rec.Payload))
	})
	w := openWriter(t, dir, journal.Config{SegmentBytes: 8192})
	defer w.Close()
	var entries []markedEntry
	for next, index := 0, uint64(1); next < len(recs); index++ {
		count := min(int(index%4), len(recs)-next)
		m := journal.EntryMark{Index: index, Term: 1 + index/10, Commands: uint32(count)}
		if err := w.AppendEntryMark(m); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, markedEntry{mark: m, firstSeq: uint64(next)})
		for range count {
			if err := w.Append(uint64(next), recs[next]); err != nil {
				t.Fatal(err)
			}
			next++
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return entries
}

// A replicated journal's entry marks sit between the unchanged command
// frames: replay and verify see the same commands as a single node's
// journal, the Reader returns the marks on request, dump prints them.
func TestEntryMarksAroundUnchangedCommands(t *testing.T) {
	plain, marked := t.TempDir(), t.TempDir()
	writeWorkload(t, plain, journal.Config{}, 1, 600)
	entries := writeMarked(t, plain, marked)
	if n := len(segmentPaths(t, marked)); n < 3 {
		t.Fatalf("%d segments: the marks never met a segment end", n)
	}
	want := mustVerify(t, plain)
	got := mustVerify(t, marked)
	if got.String() != want.String() {
		t.Fatalf("verify with marks %q, without %q", got, want)
	}
	last := entries[len(entries)-1].mark
	wantLine := fmt.Sprintf("raft_entries=%d last_index=%d last_term=%d", len(entries), last.Index, last.Term)
	if got.RaftLine() != wantLine || want.RaftLine() != "" {
		t.Fatalf("raft lines %q and %q, want %q and none", got.RaftLine(), want.RaftLine(), wantLine)
	}

	k, seq := 0, uint64(0)
	eachRecord(t, marked, journal.ReaderOptions{Entries: true}, func(rec journal.Record) {
		if rec.Entry.Index == 0 {
			if rec.Seq != seq {
				t.Fatalf("record seq %d, want %d", rec.Seq, seq)
			}
			seq++
			return
		}
		if k >= len(entries) || rec.Entry != entries[k].mark || rec.Seq != entries[k].firstSeq {
			t.Fatalf("mark %d: %+v first seq %d, wrote %+v", k, rec.Entry, rec.Seq, entries[min(k, len(entries)-1)])
		}
		k++
	})
	if k != len(entries) || seq != 600 {
		t.Fatalf("read %d marks and %d records, wrote %d and 600", k, seq, len(entries))
	}

	var out strings.Builder
	if err := journal.Dump(marked, &out, journal.DumpOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "raft_entry index=2 term=1 commands=2 first_seq=1\n") ||
		!strings.Contains(out.String(), wantLine) {
		t.Fatalf("dump does not show the marks:\n%.600s", out.String())
	}
}

// Cutting entries from an index removes their marks and commands; the
// journal continues at the cut entry's first seq.
func TestTruncateEntries(t *testing.T) {
	plain, marked := t.TempDir(), t.TempDir()
	writeWorkload(t, plain, journal.Config{}, 2, 400)
	entries := writeMarked(t, plain, marked)
	for _, k := range []int{len(entries) - 1, len(entries) * 2 / 3, len(entries) / 3} {
		cut := entries[k]
		if err := journal.TruncateEntries(marked, cut.mark.Index, quietLogger()); err != nil {
			t.Fatal(err)
		}
		res := mustVerify(t, marked)
		if res.LastSeq != int64(cut.firstSeq)-1 || res.Entries.Last.Index != cut.mark.Index-1 || res.Entries.Remaining != 0 {
			t.Fatalf("after cutting entry %d: last seq %d, last entry %d (%d missing), want %d and %d",
				cut.mark.Index, res.LastSeq, res.Entries.Last.Index, res.Entries.Remaining, int64(cut.firstSeq)-1, cut.mark.Index-1)
		}
		w := openWriter(t, marked, journal.Config{SegmentBytes: 8192})
		if w.NextSeq() != cut.firstSeq {
			t.Fatalf("writer continues at %d, want %d", w.NextSeq(), cut.firstSeq)
		}
		w.Close()
	}
}

// Marks out of order, and records no mark covers, are corruption.
func TestEntryMarkDamageIsCorruption(t *testing.T) {
	cases := map[string]func(w *journal.Writer) error{
		"index gap": func(w *journal.Writer) error {
			if err := w.AppendEntryMark(journal.EntryMark{Index: 1, Term: 1}); err != nil {
				return err
			}
			return w.AppendEntryMark(journal.EntryMark{Index: 3, Term: 1})
		},
		"term goes back": func(w *journal.Writer) error {
			if err := w.AppendEntryMark(journal.EntryMark{Index: 1, Term: 2}); err != nil {
				return err
			}
			return w.AppendEntryMark(journal.EntryMark{Index: 2, Term: 1})
		},
		"record outside its entry": func(w *journal.Writer) error {
			if err := w.AppendEntryMark(journal.EntryMark{Index: 1, Term: 1, Commands: 1}); err != nil {
				return err
			}
			if err := w.Append(0, payloadFor(0)); err != nil {
				return err
			}
			return w.Append(1, payloadFor(1))
		},
		"entry cut short by the next": func(w *journal.Writer) error {
			if err := w.AppendEntryMark(journal.EntryMark{Index: 1, Term: 1, Commands: 2}); err != nil {
				return err
			}
			if err := w.Append(0, payloadFor(0)); err != nil {
				return err
			}
			return w.AppendEntryMark(journal.EntryMark{Index: 2, Term: 1})
		},
	}
	for name, write := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "j")
			w := openWriter(t, dir, journal.Config{})
			if err := write(w); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, err := journal.Open(dir, journal.Config{})
			if !errors.Is(err, journal.ErrCorrupt) {
				t.Fatalf("open: %v, want corruption", err)
			}
		})
	}
}
