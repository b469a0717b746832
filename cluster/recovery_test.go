package cluster

import (
	"os"
	"path/filepath"
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

// A crash between writing an entry's commands and its index record leaves
// journal records no index names, and maybe part of an index record: Open
// cuts both, and the replica goes on from the last indexed entry.
func TestOpenCutsUnindexedTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	hash := journal.NewHashSink()
	n := openSingle(t, dir, hash)
	flow := newOrderFlow(2)
	for range 20 {
		if err := n.Propose(flow.batch(t, n.ProposeNext(), 2)); err != nil {
			t.Fatal(err)
		}
		if err := n.Process(); err != nil {
			t.Fatal(err)
		}
	}
	next := n.log.NextSeq()
	lastIndex, _ := n.log.LastIndex()
	n.Close()
	// The commands of an entry that never got its index record...
	w, err := journal.Open(dir, journal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range uint64(3) {
		if err := w.Append(next+i, flow.next(t, next+i)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	// ...and half of its index record.
	f, err := os.OpenFile(filepath.Join(dir, indexFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, indexRecordLen/2))
	f.Close()

	n = openSingle(t, dir, journal.NewHashSink())
	defer n.Close()
	if got := n.log.NextSeq(); got != next {
		t.Fatalf("journal continues at %d, want %d (the unindexed records cut)", got, next)
	}
	if st, _ := os.Stat(filepath.Join(dir, indexFile)); st.Size()%indexRecordLen != 0 {
		t.Fatalf("index of %d bytes: the torn record was not cut", st.Size())
	}
	if li, _ := n.log.LastIndex(); li < lastIndex {
		t.Fatalf("last index %d, was %d", li, lastIndex)
	}
	if err := n.Propose(flow.batch(t, n.ProposeNext(), 2)); err != nil {
		t.Fatal(err)
	}
	if err := n.Process(); err != nil {
		t.Fatal(err)
	}
	if n.Committed().Load() != int64(next)+1 {
		t.Fatalf("committed %d after one more batch, want %d", n.Committed().Load(), next+1)
	}
}
