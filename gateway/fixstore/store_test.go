package fixstore

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/quickfixgo/quickfix"
)

var sid = quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "CLIENT1"}

func open(t *testing.T, dir string, max int) *Store {
	t.Helper()
	f, err := NewFactory(Options{Dir: dir, MessagesMax: max})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := f.Create(sid)
	if err != nil {
		t.Fatal(err)
	}
	return ms.(*Store)
}

func msg(n int) []byte {
	return []byte(fmt.Sprintf("8=FIX.4.4\x019=5\x0135=8\x0134=%d\x0110=000\x01", n))
}

func TestSurvivesReopenWithoutClose(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 100)
	for i := 1; i <= 10; i++ {
		if err := s.SaveMessageAndIncrNextSenderMsgSeqNum(i, msg(i)); err != nil {
			t.Fatal(err)
		}
		if err := s.IncrNextTargetMsgSeqNum(); err != nil {
			t.Fatal(err)
		}
	}
	// No Close: the process "dies"; the page cache keeps what write(2) returned.
	r := open(t, dir, 100)
	if r.NextSenderMsgSeqNum() != 11 || r.NextTargetMsgSeqNum() != 11 {
		t.Fatalf("after reopen next = %d/%d, want 11/11", r.NextSenderMsgSeqNum(), r.NextTargetMsgSeqNum())
	}
	got, err := r.GetMessages(3, 5)
	if err != nil || len(got) != 3 || string(got[0]) != string(msg(3)) || string(got[2]) != string(msg(5)) {
		t.Fatalf("GetMessages(3,5) = %q, %v", got, err)
	}
	if !s.CreationTime().Equal(r.CreationTime()) {
		t.Fatalf("creation time changed: %v vs %v", s.CreationTime(), r.CreationTime())
	}
}

func TestTornTailIsCut(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 100)
	for i := 1; i <= 5; i++ {
		if err := s.SaveMessageAndIncrNextSenderMsgSeqNum(i, msg(i)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, fileName(sid))
	full, _ := os.ReadFile(path)
	// Cut the file at every offset inside the last two records: state must be the last complete one.
	last2 := 2 * (recordHeaderBytes + len(msg(5)))
	for cut := len(full) - 1; cut >= len(full)-last2; cut-- {
		d2 := t.TempDir()
		if err := os.WriteFile(filepath.Join(d2, fileName(sid)), full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		r := open(t, d2, 100)
		if n := r.NextSenderMsgSeqNum(); n != 5 && n != 6 && n != 4 {
			t.Fatalf("cut at %d: next sender %d", cut, n)
		}
		msgs, _ := r.GetMessages(1, 100)
		if len(msgs) < r.NextSenderMsgSeqNum()-2 {
			t.Fatalf("cut at %d: %d messages for next %d", cut, len(msgs), r.NextSenderMsgSeqNum())
		}
		// The store keeps working after the cut.
		if err := r.SaveMessageAndIncrNextSenderMsgSeqNum(r.NextSenderMsgSeqNum(), msg(99)); err != nil {
			t.Fatal(err)
		}
		again := open(t, d2, 100)
		if again.NextSenderMsgSeqNum() != r.NextSenderMsgSeqNum() {
			t.Fatalf("cut at %d: write after cut lost", cut)
		}
	}
}

func TestResetAndWindow(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 4)
	for i := 1; i <= 10; i++ {
		if err := s.SaveMessageAndIncrNextSenderMsgSeqNum(i, msg(i)); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := s.GetMessages(1, 10)
	if len(got) != 4 || string(got[0]) != string(msg(7)) {
		t.Fatalf("window of 4 kept %d messages starting %q", len(got), got[0])
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if s.NextSenderMsgSeqNum() != 1 || s.NextTargetMsgSeqNum() != 1 {
		t.Fatal("reset did not go back to 1")
	}
	if got, _ := s.GetMessages(1, 10); len(got) != 0 {
		t.Fatalf("reset kept %d messages", len(got))
	}
	if err := s.SaveMessageAndIncrNextSenderMsgSeqNum(1, msg(1)); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir, 4)
	if r.NextSenderMsgSeqNum() != 2 {
		t.Fatalf("after reset+1 reopen next = %d", r.NextSenderMsgSeqNum())
	}
}

func TestCompaction(t *testing.T) {
	dir := t.TempDir()
	f, err := NewFactory(Options{Dir: dir, MessagesMax: 8, FileBytesMax: 4096})
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := f.Create(sid)
	s := ms.(*Store)
	for i := 1; i <= 500; i++ {
		if err := s.SaveMessageAndIncrNextSenderMsgSeqNum(i, msg(i)); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := os.Stat(filepath.Join(dir, fileName(sid)))
	if st.Size() > 4096+1024 {
		t.Fatalf("file grew to %d bytes despite compaction", st.Size())
	}
	r := open(t, dir, 8)
	got, _ := r.GetMessages(1, 1000)
	if r.NextSenderMsgSeqNum() != 501 || len(got) == 0 || string(got[len(got)-1]) != string(msg(500)) {
		t.Fatalf("after compaction next=%d msgs=%d", r.NextSenderMsgSeqNum(), len(got))
	}
}

func TestSyncDirty(t *testing.T) {
	f, err := NewFactory(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.Create(sid)
	b, _ := f.Create(quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "CLIENT2"})
	f.SyncDirty()
	if n, err := f.SyncDirty(); n != 0 || err != nil {
		t.Fatalf("clean stores synced: %d %v", n, err)
	}
	a.IncrNextTargetMsgSeqNum()
	b.IncrNextTargetMsgSeqNum()
	a.IncrNextTargetMsgSeqNum()
	if n, err := f.SyncDirty(); n != 2 || err != nil {
		t.Fatalf("SyncDirty = %d, %v; want one fsync per written file", n, err)
	}
}
