package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/journal"
)

// The hard state survives a torn write of its newest slot: the other slot
// still holds the state before it.
func TestHardStateTornSlotFallsBack(t *testing.T) {
	dir := t.TempDir()
	s, hs, err := openHardState(dir)
	if err != nil || hs != (hardState{}) {
		t.Fatalf("fresh: %+v %v", hs, err)
	}
	if err := s.save(hardState{term: 3, vote: 2, commit: 10}); err != nil {
		t.Fatal(err)
	}
	if err := s.save(hardState{term: 4, vote: 1, commit: 12}); err != nil {
		t.Fatal(err)
	}
	slot := int64(s.version%2) * hardStateSlot
	s.close()
	if _, hs, _ = openHardState(dir); hs != (hardState{term: 4, vote: 1, commit: 12}) {
		t.Fatalf("reopened: %+v", hs)
	}
	f, err := os.OpenFile(filepath.Join(dir, hardStateFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xFF, 0xFF}, slot+20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, hs, _ = openHardState(dir); hs != (hardState{term: 3, vote: 2, commit: 10}) {
		t.Fatalf("after a torn newest slot: %+v, want the previous state", hs)
	}
}

// A crash in the middle of an entry's write leaves its mark with fewer
// commands than it names: Open cuts the entry, and the replica goes on from
// the entry before it.
func TestOpenCutsPartialEntry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	hash := journal.NewHashSink()
	n := openSingle(t, dir, hash)
	flow := newOrderFlow(2)
	for range 20 {
		commitBatch(t, n, flow, 2)
	}
	next := n.log.NextSeq()
	lastIndex, _ := n.log.LastIndex()
	lastTerm, _ := n.log.Term(lastIndex)
	n.Close()
	// The mark of an entry of 3 commands, and only 2 of them.
	w, err := journal.Open(dir, journal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendEntryMark(journal.EntryMark{Index: lastIndex + 1, Term: lastTerm, Commands: 3}); err != nil {
		t.Fatal(err)
	}
	for i := range uint64(2) {
		if err := w.Append(next+i, flow.next(t, next+i)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	res, err := journal.Verify(dir, testMatcherConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.RaftLine(), "last_entry_missing_commands=1") {
		t.Fatalf("verify's raft line %q does not name the missing command", res.RaftLine())
	}

	n = openSingle(t, dir, journal.NewHashSink())
	defer n.Close()
	if got := n.log.NextSeq(); got != next {
		t.Fatalf("journal continues at %d, want %d (the partial entry cut)", got, next)
	}
	if li, _ := n.log.LastIndex(); li < lastIndex {
		t.Fatalf("last index %d, was %d", li, lastIndex)
	}
	commitBatch(t, n, flow, 2)
	if n.Committed().Load() != int64(next)+1 {
		t.Fatalf("committed %d after one more batch, want %d", n.Committed().Load(), next+1)
	}
}

// A directory in the earlier layout (raft.index beside the journal) is
// refused with a clear error rather than read as something else.
func TestOpenRefusesLegacyIndexFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, legacyIndexFile), make([]byte, 32), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenLog(dir, 5, 1, []uint64{1}, LogConfig{Logger: quietLogger()})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), legacyIndexFile) {
		t.Fatalf("open with %s: %v", legacyIndexFile, err)
	}
}
