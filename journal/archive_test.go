package journal_test

import (
	"bytes"
	"os"
	"path/filepath"
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
