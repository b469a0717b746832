package journal_test

import (
	"testing"

	"github.com/fixvenue/fixvenue/journal"
)

// TruncateAfter cuts inside a segment and drops whole later segments; the
// result opens, reads and takes new records from the cut on.
func TestTruncateAfterCutsAcrossSegments(t *testing.T) {
	for _, keep := range []int64{-1, 0, 37, 150, 299} {
		dir := t.TempDir()
		w := openWriter(t, dir, smallConfig())
		appendRange(t, w, 0, 300, 7)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := journal.TruncateAfter(dir, keep, nil); err != nil {
			t.Fatalf("keep %d: %v", keep, err)
		}
		seqs, tail := readAll(t, dir)
		if int64(len(seqs)) != keep+1 || tail != nil {
			t.Fatalf("keep %d: read %d records, tail %v", keep, len(seqs), tail)
		}
		w = openWriter(t, dir, smallConfig())
		if w.NextSeq() != uint64(keep+1) {
			t.Fatalf("keep %d: next seq %d", keep, w.NextSeq())
		}
		appendRange(t, w, uint64(keep+1), 320, 5)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if seqs, _ := readAll(t, dir); len(seqs) != 320 {
			t.Fatalf("keep %d: %d records after appending again", keep, len(seqs))
		}
	}
}

// AppendFrame writes what NextFrame reads, and NextFrame refuses a flipped bit.
func TestFrameRoundTrip(t *testing.T) {
	b := journal.AppendFrame(nil, 42, []byte("command"))
	b = journal.AppendFrame(b, 43, []byte("next"))
	seq, p, n, err := journal.NextFrame(b)
	if err != nil || seq != 42 || string(p) != "command" {
		t.Fatalf("got %d %q %v", seq, p, err)
	}
	if seq, p, _, err := journal.NextFrame(b[n:]); err != nil || seq != 43 || string(p) != "next" {
		t.Fatalf("got %d %q %v", seq, p, err)
	}
	b[20] ^= 1
	if _, _, _, err := journal.NextFrame(b); err == nil {
		t.Fatal("a damaged frame was accepted")
	}
}
