package journal_test

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/fixvenue/fixvenue/journal"
)

// TestSegmentCopyEnd: a copy of a segment read while written ends after
// its last whole record in sequence; in the journal's last segment a
// record cut or damaged ends the copy there, in a sealed one it is
// corruption, as is any byte after a sealed segment's last record.
func TestSegmentCopyEnd(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, smallConfig())
	appendRange(t, w, 0, 120, 7) // several segments of 4 KiB
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	paths := segmentPaths(t, dir)
	if len(paths) < 3 {
		t.Fatalf("%d segments, want several", len(paths))
	}
	listed, err := journal.ListSegments(dir)
	if err != nil || !slices.Equal(listed, paths) {
		t.Fatalf("ListSegments: %v %v, want %v", listed, err, paths)
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Whole segments: each ends where the next begins.
	var ends []int64
	next := uint64(0)
	for i, p := range paths {
		end, n, err := journal.SegmentCopyEnd(p, read(p), i < len(paths)-1)
		if err != nil || n <= next || end <= journal.SegmentHeaderBytes {
			t.Fatalf("%s: end %d, next %d, %v (previous next %d)", p, end, n, err, next)
		}
		ends, next = append(ends, end), n
	}
	if next != 120 {
		t.Fatalf("the last segment ends before seq %d, want 120", next)
	}
	last, sealed := paths[len(paths)-1], paths[0]
	// The last record's bytes half written: the copy ends before it.
	data := read(last)
	full, _, _ := journal.SegmentCopyEnd(last, data, false)
	cut := slices.Clone(data)
	cut[full-3] ^= 0xFF
	end, n, err := journal.SegmentCopyEnd(last, cut, false)
	if err != nil || end >= full || n != 119 {
		t.Fatalf("last segment with its last record torn: end %d (whole %d), next %d, %v; want it ending before seq 119", end, full, n, err)
	}
	// The same in a sealed segment is corruption.
	data = read(sealed)
	bad := slices.Clone(data)
	bad[ends[0]-3] ^= 0xFF
	if _, _, err := journal.SegmentCopyEnd(sealed, bad, true); !errors.Is(err, journal.ErrCorrupt) {
		t.Fatalf("sealed segment with a torn record: %v, want ErrCorrupt", err)
	}
	if len(data) > int(ends[0]) {
		after := slices.Clone(data)
		after[len(after)-1] = 1
		if _, _, err := journal.SegmentCopyEnd(sealed, after, true); !errors.Is(err, journal.ErrCorrupt) {
			t.Fatalf("sealed segment with bytes after its last record: %v, want ErrCorrupt", err)
		}
	}
	if _, _, err := journal.SegmentCopyEnd(dir+"/not-a-segment", data, true); err == nil {
		t.Fatal("a file not named as a segment was scanned")
	}
}
