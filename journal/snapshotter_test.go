package journal

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fixvenue/fixvenue/core/ring"
)

// TestSnapshotterRemovesLeftovers: a snapshot file a crash left under its
// temporary name is removed when a snapshotter starts on its directory;
// other files stay.
func TestSnapshotterRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	leftover := filepath.Join(dir, "snapshot-00000000000000049066.snap.tmp")
	other := filepath.Join(dir, "journal-00000000000000000000.seg.tmp") // a segment's: not the snapshotter's
	for _, p := range []string{leftover, other} {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var durable ring.Sequence
	s, err := NewSnapshotter(SnapshotterConfig{Dir: dir, Durable: &durable})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Fatalf("the leftover snapshot is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("another file was removed: %v", err)
	}
}

// TestSnapshotterCloseTwice: Close waits for the snapshot in flight, and a
// second Close (a cluster node and the venue it handed the snapshotter to
// both close it) returns at once instead of panicking.
func TestSnapshotterCloseTwice(t *testing.T) {
	dir := t.TempDir()
	durable := ring.NewSequence(7)
	s, err := NewSnapshotter(SnapshotterConfig{Dir: dir, Durable: durable})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Capture(7, func(w io.Writer) error { _, err := w.Write([]byte("state")); return err }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if _, err := CheckSnapshot(filepath.Join(dir, SnapshotName(7))); err != nil {
		t.Fatalf("the snapshot in flight at Close: %v", err)
	}
}
