package journal_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/journal"
)

// TestArchiveKeepsTheChain: after the sealed segments before a snapshot
// move to the archive, verify (archive + live) gives exactly the line it
// gave before, a replay from the snapshot needs no archive at all, the
// writer reopens and appends after the live tail, and a damaged archive
// is reported, not skipped.
func TestArchiveKeepsTheChain(t *testing.T) {
	dir := t.TempDir()
	cfg := journal.Config{SegmentBytes: 64 << 10}
	const n, snapSeq = 6000, 4000
	m := newMatcher(t)
	journalWithSnapshots(t, dir, cfg, m, 11, n, snapSeq)
	before := mustVerify(t, dir)
	segsBefore := segmentPaths(t, dir)

	res, err := journal.ArchiveSegments(dir, snapSeq, nil)
	if err != nil {
		t.Fatal(err)
	}
	archived, _ := filepath.Glob(filepath.Join(dir, journal.ArchiveDirName, "journal-*.seg.gz"))
	live := segmentPaths(t, dir)
	if res.Segments < 3 || len(archived) != res.Segments || len(live)+res.Segments != len(segsBefore) {
		t.Fatalf("archived %+v: %d files in the archive, %d live of %d", res, len(archived), len(live), len(segsBefore))
	}
	t.Logf("archived %d segments: %d bytes → %d bytes gzip", res.Segments, res.RawBytes, res.CompressedBytes)
	if res.CompressedBytes >= res.RawBytes/4 {
		t.Fatalf("archive %d bytes for %d raw: not compressed", res.CompressedBytes, res.RawBytes)
	}
	// The first live segment holds the record after the snapshot.
	r, err := journal.NewReader(dir, journal.ReaderOptions{FromSeq: snapSeq + 1, LiveOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Next()
	r.Close()
	if err != nil || rec.Seq != snapSeq+1 {
		t.Fatalf("live segments do not start by the snapshot: %+v %v", rec, err)
	}
	// Archiving again moves nothing.
	if again, err := journal.ArchiveSegments(dir, snapSeq, nil); err != nil || again.Segments != 0 {
		t.Fatalf("second archive: %+v %v", again, err)
	}
	after, err := journal.Verify(dir, matcherConfig(), nil)
	if err != nil || after != before {
		t.Fatalf("verify over archive + live: %v (%v), before archiving %v", after, err, before)
	}

	// Without the archive, a replay from the snapshot still rebuilds the state.
	noArchive := t.TempDir()
	for _, p := range live {
		copyFile(t, p, filepath.Join(noArchive, filepath.Base(p)))
	}
	snap := filepath.Join(dir, journal.SnapshotName(snapSeq))
	copyFile(t, snap, filepath.Join(noArchive, filepath.Base(snap)))
	fromSnap := newMatcher(t)
	rr, err := journal.Replay(noArchive, fromSnap, nil, journal.ReplayOptions{UseSnapshot: true})
	if err != nil || rr.Snapshot == nil || rr.Records != n-snapSeq-1 {
		t.Fatalf("replay from the snapshot without the archive: %+v %v", rr, err)
	}
	var want, got bytes.Buffer
	if err := m.WriteSnapshot(&want); err != nil {
		t.Fatal(err)
	}
	if err := fromSnap.WriteSnapshot(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want.Bytes(), got.Bytes()) {
		t.Fatal("state replayed from the snapshot differs from the live state")
	}

	// The writer reopens on the live segments and continues the sequence.
	w := openWriter(t, dir, cfg)
	if w.NextSeq() != n {
		t.Fatalf("reopened writer continues at %d, want %d", w.NextSeq(), n)
	}
	w.Close()

	// A damaged archived segment stops verify with an error naming it.
	if err := os.WriteFile(archived[1], []byte("not gzip"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := journal.Verify(dir, matcherConfig(), nil); err == nil || !bytes.Contains([]byte(err.Error()), []byte(filepath.Base(archived[1]))) {
		t.Fatalf("verify over a damaged archive: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o640); err != nil {
		t.Fatal(err)
	}
}

// TestReplayRefusesAMissingArchive: without its archived segments a journal
// no longer starts at seq 0, and a replay from the start says so instead of
// building a state that never existed.
func TestReplayRefusesAMissingArchive(t *testing.T) {
	dir := t.TempDir()
	writeWorkload(t, dir, journal.Config{SegmentBytes: 64 << 10}, 5, 3000)
	if _, err := journal.ArchiveSegments(dir, 2000, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := journal.Verify(dir, matcherConfig(), nil); err != nil {
		t.Fatalf("verify with the archive: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(dir, journal.ArchiveDirName)); err != nil {
		t.Fatal(err)
	}
	if _, err := journal.Verify(dir, matcherConfig(), nil); err == nil || !bytes.Contains([]byte(err.Error()), []byte("earlier segments are missing")) {
		t.Fatalf("verify without the archive: %v", err)
	}
}

// TestReaderFollowsASegmentArchivedWhileItReads: an end of day archives
// segments while `fixvenue journal verify` or dump reads the journal of the
// running venue. A segment the reader listed as live and that moved to the
// archive before the reader reached it is read from the archive, not
// reported as a missing file of a sound journal.
func TestReaderFollowsASegmentArchivedWhileItReads(t *testing.T) {
	const n = 400
	for name, archive := range map[string]func(dir string) (int, error){
		"compressed": func(dir string) (int, error) {
			res, err := journal.ArchiveSegments(dir, n-1, nil)
			return res.Segments, err
		},
		"moved": func(dir string) (int, error) { return journal.MoveToArchive(dir, n, nil) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			w := openWriter(t, dir, smallConfig())
			appendRange(t, w, 0, n, 16)
			w.Close()
			if segs := segmentPaths(t, dir); len(segs) < 4 {
				t.Fatalf("%d segments, want at least 4", len(segs))
			}
			r, err := journal.NewReader(dir, journal.ReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			rec, err := r.Next()
			if err != nil || rec.Seq != 0 {
				t.Fatalf("first record: %+v %v", rec, err)
			}
			// Everything but the last segment moves while the reader is in the first.
			if moved, err := archive(dir); err != nil || moved < 3 {
				t.Fatalf("archive: %d %v", moved, err)
			}
			want := uint64(1)
			for rec, err := range r.All() {
				if err != nil {
					t.Fatalf("after seq %d, with the segments archived meanwhile: %v", want-1, err)
				}
				if rec.Seq != want || !bytes.Equal(rec.Payload, payloadFor(rec.Seq)) {
					t.Fatalf("seq %d read, want %d (or its payload differs)", rec.Seq, want)
				}
				want++
			}
			if want != n {
				t.Fatalf("read up to seq %d, want %d", want-1, n-1)
			}
		})
	}
}

// TestArchiveReadsADecompressedSegment: an archived segment decompressed in
// place (gunzip, to read it, or restored so from other storage) is the
// segment byte for byte: verify reads it as it reads the compressed one,
// instead of passing it over and calling the records it holds missing from
// the archive directory that holds them. Beside its compressed copy, one of
// the two is read.
func TestArchiveReadsADecompressedSegment(t *testing.T) {
	dir := t.TempDir()
	writeWorkload(t, dir, journal.Config{SegmentBytes: 64 << 10}, 5, 3000)
	if res, err := journal.ArchiveSegments(dir, 2000, nil); err != nil || res.Segments < 2 {
		t.Fatalf("archive: %+v %v", res, err)
	}
	want := mustVerify(t, dir)
	archived, _ := filepath.Glob(filepath.Join(dir, journal.ArchiveDirName, "journal-*.seg.gz"))
	gunzip := func(path string, keep bool) {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(strings.TrimSuffix(path, ".gz"), raw, 0o640); err != nil {
			t.Fatal(err)
		}
		if !keep {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}
	}
	gunzip(archived[0], true)
	if got, err := journal.Verify(dir, matcherConfig(), nil); err != nil || got != want {
		t.Fatalf("verify with a segment both compressed and not: %v (%v), want %v", got, err, want)
	}
	for _, p := range archived {
		gunzip(p, false)
	}
	if got, err := journal.Verify(dir, matcherConfig(), nil); err != nil || got != want {
		t.Fatalf("verify with the archived segments decompressed: %v (%v), want %v", got, err, want)
	}
	// Read as a segment is, a damaged one is named.
	plain := strings.TrimSuffix(archived[1], ".gz")
	f, err := os.OpenFile(plain, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, 200); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := journal.Verify(dir, matcherConfig(), nil); err == nil || !strings.Contains(err.Error(), plain) {
		t.Fatalf("verify over a damaged decompressed segment: %v", err)
	}
}

// TestArchivedRecordsNameTheArchive: a record read from an archived
// segment names the file as it lies in the journal directory
// (archive/journal-<seq>.seg.gz), as `journal dump` prints it, where it
// named a file of that name in the live directory, which holds none.
func TestArchivedRecordsNameTheArchive(t *testing.T) {
	dir := t.TempDir()
	cfg := journal.Config{SegmentBytes: 64 << 10}
	const n, snapSeq = 3000, 2000
	journalWithSnapshots(t, dir, cfg, newMatcher(t), 11, n, snapSeq)
	if res, err := journal.ArchiveSegments(dir, snapSeq, nil); err != nil || res.Segments == 0 {
		t.Fatalf("archive: %+v %v", res, err)
	}
	archived := map[string]bool{}
	paths, _ := filepath.Glob(filepath.Join(dir, journal.ArchiveDirName, "journal-*.seg.gz"))
	for _, p := range paths {
		archived[journal.ArchiveDirName+"/"+filepath.Base(p)] = true
	}
	seen := map[string]bool{}
	for rec, err := range journal.Records(dir, journal.ReaderOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, rec.Segment)); err != nil {
			t.Fatalf("record %d names %s, no file of the journal directory: %v", rec.Seq, rec.Segment, err)
		}
		seen[rec.Segment] = true
	}
	for name := range archived {
		if !seen[name] {
			t.Fatalf("no record named the archived segment %s (records named %v)", name, seen)
		}
	}
}

// TestMoveToArchiveLeavesTheSegmentBefore: MoveToArchive renames the sealed
// segments that a segment starting before its seq follows, uncompressed,
// and no other: the segment whose successor starts at the seq (whose end
// may hold a Raft entry mark of the command there) stays live. verify over
// archive and live gives the line it gave before, and moving again moves
// nothing.
func TestMoveToArchiveLeavesTheSegmentBefore(t *testing.T) {
	dir := t.TempDir()
	m := newMatcher(t)
	journalWithSnapshots(t, dir, journal.Config{SegmentBytes: 64 << 10}, m, 12, 6000, 4000)
	before := mustVerify(t, dir)
	segs := segmentPaths(t, dir)
	if len(segs) < 4 {
		t.Fatalf("%d segments", len(segs))
	}
	first := func(path string) uint64 {
		var seq uint64
		if _, err := fmt.Sscanf(filepath.Base(path), "journal-%d.seg", &seq); err != nil {
			t.Fatal(err)
		}
		return seq
	}
	// At the third segment's first seq: the first moves, the second (its
	// successor starts at that seq) stays.
	at := first(segs[2])
	moved, err := journal.MoveToArchive(dir, at, nil)
	if err != nil || moved != 1 {
		t.Fatalf("moved %d (%v), want 1", moved, err)
	}
	if _, err := os.Stat(filepath.Join(dir, journal.ArchiveDirName, filepath.Base(segs[0]))); err != nil {
		t.Fatalf("the first segment is not in the archive: %v", err)
	}
	if live := segmentPaths(t, dir); len(live) != len(segs)-1 || live[0] != segs[1] {
		t.Fatalf("live segments %v, want all but the first", live)
	}
	// One seq later the second moves too.
	if moved, err = journal.MoveToArchive(dir, at+1, nil); err != nil || moved != 1 {
		t.Fatalf("moved %d (%v), want 1", moved, err)
	}
	if again, err := journal.MoveToArchive(dir, at+1, nil); err != nil || again != 0 {
		t.Fatalf("moved again %d (%v)", again, err)
	}
	// The last segment, the writer's, never moves.
	if moved, err = journal.MoveToArchive(dir, ^uint64(0), nil); err != nil || moved != len(segs)-3 {
		t.Fatalf("moved %d (%v), want %d", moved, err, len(segs)-3)
	}
	if live := segmentPaths(t, dir); len(live) != 1 || live[0] != segs[len(segs)-1] {
		t.Fatalf("live segments %v, want the last", live)
	}
	if after := mustVerify(t, dir); after != before {
		t.Fatalf("verify over archive + live %+v, before %+v", after, before)
	}
}
