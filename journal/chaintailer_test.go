package journal_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/fixvenue/fixvenue/journal"
)

// TestChainTailerReadsTheArchive: a chain tailer gives every record in order
// from its first one, whether it lies in the live journal or in the
// archive: from the start of a journal whose first segments are archived,
// and when ArchiveSegments moves segments the tailer has not reached
// yet (its tailer would otherwise wait for them in the directory for ever).
// Records neither live nor archived are an error.
func TestChainTailerReadsTheArchive(t *testing.T) {
	const n = 3000
	dir := t.TempDir()
	w, err := journal.Open(dir, journal.Config{SegmentBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 64)
	for seq := range uint64(n) {
		binary.LittleEndian.PutUint64(payload, seq)
		if err := w.Append(seq, payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	readAll := func(s *journal.ChainTailer, from uint64, archiveAt uint64) {
		t.Helper()
		defer s.Close()
		for want := from; want < n; want++ {
			if want == archiveAt {
				if res, err := journal.ArchiveSegments(dir, 2*n/3, nil); err != nil || res.Segments == 0 {
					t.Fatalf("archive at %d: %+v %v", want, res, err)
				}
			}
			rec, ok, err := s.Next(n - 1)
			if err != nil || !ok || rec.Seq != want || binary.LittleEndian.Uint64(rec.Payload) != want {
				t.Fatalf("record %d: got seq %d ok %v err %v", want, rec.Seq, ok, err)
			}
		}
		if _, ok, err := s.Next(n - 1); ok || err != nil {
			t.Fatalf("past the end: ok %v err %v", ok, err)
		}
	}
	// Archived while the catch-up reads the live journal.
	s, err := journal.NewChainTailer(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	readAll(s, 0, 100)
	// From the start, with the first segments archived; and from the middle.
	for _, from := range []uint64{0, n / 3} {
		s, err := journal.NewChainTailer(dir, from)
		if err != nil {
			t.Fatal(err)
		}
		readAll(s, from, n)
	}
	// Neither live nor archived.
	if err := os.RemoveAll(filepath.Join(dir, journal.ArchiveDirName)); err != nil {
		t.Fatal(err)
	}
	s, err = journal.NewChainTailer(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Next(n - 1); err == nil {
		t.Fatal("a chain tailer over missing records went on")
	}
}
