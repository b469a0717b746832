package journal_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fixvenue/fixvenue/journal"
)

// FuzzArchivedSegment puts arbitrary bytes in the archive as the journal's
// one segment: gzip-compressed segment bytes (as FuzzSegment builds them),
// or with raw the archived file itself. A Reader reads the archive
// transparently (`journal verify`, a catch-up from the first command), so
// whatever the bytes it never panics, refuses only with ErrCorrupt, and
// reads a compressed segment as it reads the same segment live.
func FuzzArchivedSegment(f *testing.F) {
	valid := append(append(fuzzFrame(0, []byte("first")), fuzzFrame(1, []byte("second record"))...), fuzzFrame(2, []byte{9})...)
	f.Add(false, false, valid)
	f.Add(false, false, valid[:len(valid)-3])
	f.Add(false, true, append(fuzzHeader(journal.SegmentHeaderBytes+len(valid)), valid...))
	f.Add(true, false, []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Add(true, false, []byte("FVJOURNL"))
	f.Fuzz(func(t *testing.T, raw, rawSegment bool, body []byte) {
		if len(body) > 1<<20 {
			return
		}
		segment := fuzzSegmentBytes(rawSegment, body)
		file := body
		if !raw {
			var b bytes.Buffer
			zw, err := gzip.NewWriterLevel(&b, gzip.BestSpeed)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = zw.Write(segment)
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			file = b.Bytes()
		}
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, journal.ArchiveDirName), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, journal.ArchiveDirName, fuzzSegmentName+".gz"), file, 0o640); err != nil {
			t.Fatal(err)
		}
		archived, archivedTail, err := scanAll(dir)
		if err != nil && !errors.Is(err, journal.ErrCorrupt) {
			t.Fatalf("archive: reader error that is not corruption: %v", err)
		}
		if raw {
			return
		}
		live := t.TempDir()
		if err := os.WriteFile(filepath.Join(live, fuzzSegmentName), segment, 0o640); err != nil {
			t.Fatal(err)
		}
		records, tail, liveErr := scanAll(live)
		if liveErr != nil || tail != nil {
			return // a live segment's damage is judged as the end of the journal; an archived one's is not
		}
		if err != nil || archivedTail != nil || len(archived) != len(records) {
			t.Fatalf("archived: %d records, tail %+v, %v; live: %d records", len(archived), archivedTail, err, len(records))
		}
		for i := range records {
			if !bytes.Equal(archived[i], records[i]) {
				t.Fatalf("record %d differs between the archive and the live segment", i)
			}
		}
	})
}
