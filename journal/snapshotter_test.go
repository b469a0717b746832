package journal

import (
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
