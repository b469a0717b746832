package cluster

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/journal"
)

// A follower that was down while the leader wrote past its compaction
// point (EntriesInMemoryMax) catches up from a Raft snapshot the leader
// builds from its journal, then from the log: same committed seq, same
// events hash as the others. Restarted, it starts from the snapshot kept
// on its disk and still agrees.
func TestFollowerBehindCompactionCatchesUpFromSnapshot(t *testing.T) {
	s := newSim(t, simSeed(t))
	s.dropPct = 0
	s.entriesMax = 32
	for _, r := range s.replicas { // reopen with the low bound
		if err := r.node.Close(); err != nil {
			t.Fatal(err)
		}
		s.start(r)
	}
	for range 200 {
		if s.step(false); s.leader() != nil {
			break
		}
	}
	l := s.leader()
	if l == nil {
		t.Fatal("no leader")
	}
	down := s.replicas[l.id%3] // a follower
	// It goes down holding the leader's first entry on disk, so that its
	// journal has segments the snapshot install must keep aside (a
	// follower stopped before any entry reached it has none).
	for i := 0; ; i++ {
		dl, _ := down.node.log.LastIndex()
		ll, _ := l.node.log.LastIndex()
		if dl > 0 && dl >= ll {
			break
		}
		if i == 200 {
			t.Fatalf("follower %d holds index %d, the leader %d: it did not catch up in 200 ticks", down.id, dl, ll)
		}
		s.step(false)
	}
	if err := down.node.Close(); err != nil {
		t.Fatal(err)
	}
	down.up = false
	// A journal snapshot it wrote of a command it holds (a follower writes
	// them as the leader does): the install moves it aside with the
	// segments, as the journal after the install holds no command after it.
	old, err := journal.WriteSnapshot(down.dir, 1, func(w io.Writer) error { _, err := w.Write([]byte("state")); return err }, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 400 {
		s.step(true)
	}
	l = s.leader()
	if l == nil {
		t.Fatal("no leader after the writes")
	}
	first, _ := l.node.log.FirstIndex()
	downLast, _ := down.node.log.LastIndex()
	if first <= downLast+1 {
		t.Fatalf("the leader still holds index %d onwards, the follower stopped at %d: nothing was compacted past it", first, downLast)
	}
	s.convergeWaiting()
	if down.node.log.base == nil {
		t.Fatal("the follower caught up without a snapshot")
	}
	s.sameHashes()
	replaced, _ := filepath.Glob(filepath.Join(down.dir, replacedDirPrefix+"*"))
	if len(replaced) != 1 {
		t.Fatalf("replaced segment directories %v, want one", replaced)
	}
	if segs, _ := filepath.Glob(filepath.Join(replaced[0], "journal-*.seg")); len(segs) == 0 {
		t.Fatal("the follower's earlier segments were not kept aside")
	}
	if _, err := os.Stat(old.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the journal snapshot of seq 1 is still in the journal after the install (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(replaced[0], filepath.Base(old.Path))); err != nil {
		t.Fatalf("the journal snapshot of seq 1 was not kept aside with the segments: %v", err)
	}

	// Restart it: Open restores the snapshot from raft.snapshot and replays the journal after it.
	if err := down.node.Close(); err != nil {
		t.Fatal(err)
	}
	down.up = false
	for range 100 {
		s.step(true)
	}
	if _, err := os.Stat(filepath.Join(down.dir, snapshotFile)); err != nil {
		t.Fatal(err)
	}
	s.convergeWaiting()
	s.sameHashes()
	t.Logf("follower %d installed the snapshot at index %d; leader %d holds entries from %d",
		down.id, down.node.log.baseIndex(), l.id, first)
}

// convergeWaiting is converge for a cluster that builds a snapshot on
// another goroutine: the ticks are paced (1 ms apart) so that the build
// can finish, within a bounded time.
func (s *sim) convergeWaiting() {
	s.t.Helper()
	for _, r := range s.replicas {
		if !r.up {
			s.start(r)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		s.step(false)
		if l := s.leader(); l != nil && s.same(l) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	s.converge() // reports each replica's position
}

// sameHashes checks that every replica applied the same commands with the
// same events.
func (s *sim) sameHashes() {
	s.t.Helper()
	want := s.replicas[0]
	for _, r := range s.replicas[1:] {
		if r.node.Committed().Load() != want.node.Committed().Load() || r.hash.Sum64() != want.hash.Sum64() ||
			r.hash.Events() != want.hash.Events() {
			s.t.Fatalf("node %d: committed %d, hash %016x (%d events); node %d: committed %d, hash %016x (%d events)",
				r.id, r.node.Committed().Load(), r.hash.Sum64(), r.hash.Events(),
				want.id, want.node.Committed().Load(), want.hash.Sum64(), want.hash.Events())
		}
	}
}
