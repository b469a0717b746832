package fixstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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

// saveMsgs saves msg(from) … msg(to) in s as the session's sends, each
// under its own number.
func saveMsgs(t *testing.T, s *Store, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		if err := s.SaveMessageAndIncrNextSenderMsgSeqNum(i, msg(i)); err != nil {
			t.Fatal(err)
		}
	}
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
	saveMsgs(t, s, 1, 5)
	path := filepath.Join(dir, fileName(sid))
	full, _ := os.ReadFile(path)
	full = full[:s.size] // the records, without the space reserved after them
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

// TestDamageIsNotCut: a damaged record with good records after it (a
// flipped byte, a zeroed block) is damage, not a torn tail: the store is
// not opened (errors.Is ErrDamaged, naming both offsets), where it used to
// cut everything from the damage on and send those sequence numbers again.
func TestDamageIsNotCut(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 100)
	saveMsgs(t, s, 1, 20)
	path := filepath.Join(dir, fileName(sid))
	full, _ := os.ReadFile(path)
	full = full[:s.size]
	rec := recordHeaderBytes + len(msg(1))
	for _, damage := range []struct {
		name string
		at   int
		with []byte
	}{
		{"a flipped byte", 2, []byte{0xff}},
		{"a zeroed block", len(full) / 2, make([]byte, rec+5)},
	} {
		d2 := t.TempDir()
		b := append([]byte(nil), full...)
		copy(b[damage.at:], damage.with)
		if err := os.WriteFile(filepath.Join(d2, fileName(sid)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := NewFactory(Options{Dir: d2, MessagesMax: 100})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Create(sid)
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "a good record follows at offset") {
			t.Fatalf("%s: open gave %v, want ErrDamaged", damage.name, err)
		}
		if st, _ := os.Stat(filepath.Join(d2, fileName(sid))); st.Size() != int64(len(b)) {
			t.Fatalf("%s: the file was cut to %d bytes", damage.name, st.Size())
		}
	}
}

func TestResetAndWindow(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 4)
	saveMsgs(t, s, 1, 10)
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
	saveMsgs(t, s, 1, 1)
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
	saveMsgs(t, s, 1, 500)
	if s.size > 4096+1024 {
		t.Fatalf("records grew to %d bytes despite compaction", s.size)
	}
	if st, _ := os.Stat(filepath.Join(dir, fileName(sid))); st.Size() > mapBytesMin {
		t.Fatalf("file of %d bytes: compaction did not start a new, small reservation", st.Size())
	}
	r := open(t, dir, 8)
	got, _ := r.GetMessages(1, 1000)
	if r.NextSenderMsgSeqNum() != 501 || len(got) == 0 || string(got[len(got)-1]) != string(msg(500)) {
		t.Fatalf("after compaction next=%d msgs=%d", r.NextSenderMsgSeqNum(), len(got))
	}
}

// TestCompactionBelowTheWindow: a FileBytesMax below what the resend
// window holds does not compact after every message (each compaction keeps
// the window, so the file was over the bound again at once); it compacts
// once the file holds as much again as the window.
func TestCompactionBelowTheWindow(t *testing.T) {
	dir := t.TempDir()
	f, err := NewFactory(Options{Dir: dir, MessagesMax: 64, FileBytesMax: 512})
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := f.Create(sid)
	s := ms.(*Store)
	saveMsgs(t, s, 1, 2000)
	if s.compactions == 0 || s.compactions > 2000/64 {
		t.Fatalf("%d compactions for 2000 messages and a window of 64", s.compactions)
	}
	r := open(t, dir, 64)
	got, _ := r.GetMessages(1, 3000)
	if r.NextSenderMsgSeqNum() != 2001 || len(got) != 64 || string(got[63]) != string(msg(2000)) {
		t.Fatalf("after compactions next=%d msgs=%d", r.NextSenderMsgSeqNum(), len(got))
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

// TestReservedSpace follows the file's reservation: records go into space
// reserved ahead (the file is longer than its records while open), a store
// reopened after a crash reads up to the first zero and takes the space over,
// a mapping that fills is grown, and Close cuts the file to its records.
func TestReservedSpace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, fileName(sid))
	s := open(t, dir, 1<<16)
	saveMsgs(t, s, 1, 1)
	st, _ := os.Stat(path)
	if st.Size() != mapBytesMin || s.size >= st.Size() {
		t.Fatalf("file %d bytes for %d bytes of records, want %d reserved", st.Size(), s.size, mapBytesMin)
	}
	// The process dies: another store opens the file, zeros and all.
	r := open(t, dir, 1<<16)
	if r.NextSenderMsgSeqNum() != 2 || r.size != s.size {
		t.Fatalf("reopened: next %d, %d bytes; want 2, %d", r.NextSenderMsgSeqNum(), r.size, s.size)
	}
	// Past the first reservation: the mapping grows and nothing is lost.
	big := make([]byte, 64<<10)
	for i := range big {
		big[i] = 'x'
	}
	for i := 2; i <= 40; i++ {
		if err := r.SaveMessageAndIncrNextSenderMsgSeqNum(i, append(msg(i), big...)); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.mem) <= mapBytesMin {
		t.Fatalf("mapping of %d bytes after %d bytes of records", len(r.mem), r.size)
	}
	again := open(t, dir, 1<<16)
	got, err := again.GetMessages(1, 40)
	if err != nil || len(got) != 40 || string(got[39]) != string(append(msg(40), big...)) || again.NextSenderMsgSeqNum() != 41 {
		t.Fatalf("after growth: %d messages, next %d, %v", len(got), again.NextSenderMsgSeqNum(), err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Size() != again.size {
		t.Fatalf("closed file of %d bytes, records %d", st.Size(), again.size)
	}
}

// TestTornRecordBeforeReservedSpace: a record cut short by a crash, followed by
// reserved zeros, is cut; the store keeps working and a reopen sees the new
// records, not bytes of the torn one.
func TestTornRecordBeforeReservedSpace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, fileName(sid))
	s := open(t, dir, 100)
	saveMsgs(t, s, 1, 3)
	good := s.size
	saveMsgs(t, s, 4, 4)
	// Tear record 4: zero its last bytes in the file (as if the crash came mid-copy).
	data, _ := os.ReadFile(path)
	for i := s.size - 5; i < s.size; i++ {
		data[i] = 0
	}
	d2 := t.TempDir()
	if err := os.WriteFile(filepath.Join(d2, fileName(sid)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := open(t, d2, 100)
	if r.size != good || r.NextSenderMsgSeqNum() != 4 {
		t.Fatalf("torn record kept: %d bytes (want %d), next %d", r.size, good, r.NextSenderMsgSeqNum())
	}
	if err := r.SaveMessageAndIncrNextSenderMsgSeqNum(4, msg(44)); err != nil {
		t.Fatal(err)
	}
	again := open(t, d2, 100)
	got, _ := again.GetMessages(4, 4)
	if again.NextSenderMsgSeqNum() != 5 || len(got) != 1 || string(got[0]) != string(msg(44)) {
		t.Fatalf("after the cut: next %d, %q", again.NextSenderMsgSeqNum(), got)
	}
}

// BenchmarkSaveAndIncr is what QuickFIX/Go does for every message it sends and
// receives: save a 250-byte message with its sequence number, then count an
// inbound one.
func BenchmarkSaveAndIncr(b *testing.B) {
	f, err := NewFactory(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	ms, _ := f.Create(sid)
	s := ms.(*Store)
	m := make([]byte, 250)
	b.ReportAllocs()
	for i := 1; b.Loop(); i++ {
		if err := s.SaveMessageAndIncrNextSenderMsgSeqNum(i, m); err != nil {
			b.Fatal(err)
		}
		if err := s.IncrNextTargetMsgSeqNum(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFactoryClose: closing the factory cuts every store file to its records,
// and a closed store refuses writes with an error.
func TestFactoryClose(t *testing.T) {
	dir := t.TempDir()
	f, err := NewFactory(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ids := []quickfix.SessionID{sid, {BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "CLIENT2"}}
	var stores []*Store
	for _, id := range ids {
		ms, err := f.Create(id)
		if err != nil {
			t.Fatal(err)
		}
		s := ms.(*Store)
		if err := s.SaveMessageAndIncrNextSenderMsgSeqNum(1, msg(1)); err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		st, err := os.Stat(filepath.Join(dir, fileName(id)))
		if err != nil || st.Size() != stores[i].size {
			t.Fatalf("%s: file %v bytes (%v), records %d", id, st.Size(), err, stores[i].size)
		}
	}
	if err := stores[0].IncrNextTargetMsgSeqNum(); err == nil {
		t.Fatal("a closed store accepted a write")
	}
}

// A session goes on saving and counting messages while its file's
// fdatasync runs: the sync holds no store lock.
func TestSyncDoesNotHoldTheStore(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var held atomic.Bool
	f, err := NewFactory(Options{Dir: t.TempDir(), SyncData: func(file *os.File) error {
		if !held.Swap(true) {
			close(entered)
			<-release
		}
		return Fdatasync(file)
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := f.Create(sid)
	s.IncrNextTargetMsgSeqNum()
	synced := make(chan int)
	go func() {
		n, _ := f.SyncDirty()
		synced <- n
	}()
	<-entered
	done := make(chan error)
	go func() {
		if err := s.SaveMessageAndIncrNextSenderMsgSeqNum(1, []byte("8=FIX.4.4\x019=5\x0135=0\x0110=000\x01")); err != nil {
			done <- err
			return
		}
		done <- s.IncrNextTargetMsgSeqNum()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("saving a message waited for the fdatasync")
	}
	close(release)
	if n := <-synced; n != 1 {
		t.Fatalf("SyncDirty synced %d files, want 1", n)
	}
	// What was written during the sync is left for the next pass.
	if n, err := f.SyncDirty(); n != 1 || err != nil {
		t.Fatalf("next pass synced %d files (%v), want the one written during the sync", n, err)
	}
}

// A failed fdatasync is reported, unless the file was closed meanwhile (Close syncs it).
func TestSyncFailure(t *testing.T) {
	var s quickfix.MessageStore
	var closeFirst atomic.Bool
	f, err := NewFactory(Options{Dir: t.TempDir(), SyncData: func(*os.File) error {
		if closeFirst.Load() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		}
		return syscall.EIO
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ = f.Create(sid)
	s.IncrNextTargetMsgSeqNum()
	if _, err := f.SyncDirty(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("SyncDirty = %v, want EIO", err)
	}
	// The store is closed while its sync runs: Close synced it, no error.
	closeFirst.Store(true)
	s.IncrNextTargetMsgSeqNum()
	if n, err := f.SyncDirty(); n != 1 || err != nil {
		t.Fatalf("SyncDirty of a store closed during its sync = %d, %v; want 1, nil", n, err)
	}
}

// TestReservationWithoutFallocateTakesTheBlocks: on a file system without
// fallocate a store's reservation writes zeros, so that the blocks under
// its mapping are taken then (a full disk fails the reservation, an error
// the venue halts on) and a write into the mapping never meets a hole that
// a full disk cannot fill: that is a fault (SIGBUS), and it ended the
// process. The zeros never cover a record: the store reopens with every
// message.
func TestReservationWithoutFallocateTakesTheBlocks(t *testing.T) {
	unsupported := func(int, uint32, int64, int64) error { return syscall.EOPNOTSUPP }
	dir := t.TempDir()
	opts := Options{Dir: dir, Allocate: func(file *os.File, size int64) error { return allocate(file, size, unsupported) }}
	f, err := NewFactory(opts)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := f.Create(sid)
	if err != nil {
		t.Fatal(err)
	}
	s := ms.(*Store)
	// Messages of 1 KiB fill the first 1 MiB reservation and take a second.
	big := make([]byte, 1024)
	const saved = 1500
	for i := 1; i <= saved; i++ {
		if err := s.SaveMessageAndIncrNextSenderMsgSeqNum(i, big); err != nil {
			t.Fatal(err)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(s.path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Size <= mapBytesMin || st.Blocks*512 < st.Size {
		t.Fatalf("store of %d bytes holds %d bytes of blocks: its reservation left holes under the mapping", st.Size, st.Blocks*512)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f, err = NewFactory(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err = f.Create(sid)
	if err != nil {
		t.Fatal(err)
	}
	if got := ms.NextSenderMsgSeqNum(); got != saved+1 {
		t.Fatalf("reopened store: next sender %d, want %d", got, saved+1)
	}
	msgs, err := ms.GetMessages(1, saved)
	if err != nil || len(msgs) != saved {
		t.Fatalf("reopened store: %d messages, %v; want %d", len(msgs), err, saved)
	}
}

// TestNearlyFullDiskGrowsByTheLeast: a disk that refuses a store's next
// step of growth (1 MiB at first, doubling) but holds what its messages
// need grows the store by the least (64 KiB steps) until that too is
// refused: the store failed, and with it the venue, with room left on the
// disk. What was saved reopens whole.
func TestNearlyFullDiskGrowsByTheLeast(t *testing.T) {
	const room = 1<<20 + 256<<10 // the disk holds the first step and 256 KiB
	var refused atomic.Int64
	dir := t.TempDir()
	opts := Options{Dir: dir, Allocate: func(file *os.File, size int64) error {
		if size > room {
			refused.Add(1)
			return syscall.ENOSPC
		}
		return Fallocate(file, size)
	}}
	f, err := NewFactory(opts)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := f.Create(sid)
	if err != nil {
		t.Fatal(err)
	}
	s := ms.(*Store)
	big := make([]byte, 1024)
	saved := 0
	var saveErr error
	for i := 1; saveErr == nil && i <= 2048; i++ {
		if saveErr = s.SaveMessageAndIncrNextSenderMsgSeqNum(i, big); saveErr == nil {
			saved = i
		}
	}
	if !errors.Is(saveErr, ErrFailed) || !errors.Is(saveErr, syscall.ENOSPC) {
		t.Fatalf("saves up to a full disk ended with %v, want ErrFailed wrapping ENOSPC", saveErr)
	}
	// Each record is 1 KiB and a header: those the disk's room holds.
	perRecord := int64(8 + recordHeaderBytes - 8 + 1024)
	if want := int((room - 64<<10) / perRecord); saved < want || refused.Load() == 0 {
		t.Fatalf("%d messages saved before the store failed (%d growths refused), want at least %d: the room past the first step unused",
			saved, refused.Load(), want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f2, err := NewFactory(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ms2, err := f2.Create(sid)
	if err != nil {
		t.Fatal(err)
	}
	defer ms2.Close()
	msgs, err := ms2.GetMessages(1, saved)
	if err != nil || len(msgs) != saved || ms2.NextSenderMsgSeqNum() != saved+1 {
		t.Fatalf("reopened: %d messages, next sender %d, %v; want %d, %d", len(msgs), ms2.NextSenderMsgSeqNum(), err, saved, saved+1)
	}
}

// TestFailuresReachOnFail: a reservation or an fdatasync the file system
// refuses is returned wrapping ErrFailed and the cause, and reported to the
// factory's OnFail; a store used after Close is not such a failure.
func TestFailuresReachOnFail(t *testing.T) {
	var full, syncFails atomic.Bool
	f, err := NewFactory(Options{Dir: t.TempDir(),
		Allocate: func(file *os.File, size int64) error {
			if full.Load() {
				return syscall.ENOSPC
			}
			return Fallocate(file, size)
		},
		SyncData: func(file *os.File) error {
			if syncFails.Load() {
				return syscall.EIO
			}
			return Fdatasync(file)
		}})
	if err != nil {
		t.Fatal(err)
	}
	var reported []error
	f.OnFail(func(err error) { reported = append(reported, err) })
	ms, err := f.Create(sid)
	if err != nil {
		t.Fatal(err)
	}
	s := ms.(*Store)
	full.Store(true)
	// Messages of 1 KiB fill the first 1 MiB reservation; the next needs more.
	big := make([]byte, 1024)
	var saveErr error
	for i := 1; saveErr == nil && i <= 2048; i++ {
		saveErr = s.SaveMessageAndIncrNextSenderMsgSeqNum(i, big)
	}
	if !errors.Is(saveErr, ErrFailed) || !errors.Is(saveErr, syscall.ENOSPC) {
		t.Fatalf("save beyond the reservation: %v, want ErrFailed wrapping ENOSPC", saveErr)
	}
	syncFails.Store(true)
	if _, err := f.SyncDirty(); !errors.Is(err, ErrFailed) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("SyncDirty: %v, want ErrFailed wrapping EIO", err)
	}
	if len(reported) != 2 || !errors.Is(reported[0], syscall.ENOSPC) || !errors.Is(reported[1], syscall.EIO) {
		t.Fatalf("OnFail saw %v, want the ENOSPC then the EIO", reported)
	}
	syncFails.Store(false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveMessageAndIncrNextSenderMsgSeqNum(4000, big); err == nil || errors.Is(err, ErrFailed) || len(reported) != 2 {
		t.Fatalf("save after Close: %v (reported %d): want a plain error, not a failure", err, len(reported))
	}
}

// TestForeignFileIsNotCut: a file with no whole record at its start (not a
// store, or one damaged where it begins) is refused, not cut to nothing as
// a torn tail (its session's sequence numbers and messages would be gone);
// zeros alone (space reserved, nothing written) are still an empty store.
func TestForeignFileIsNotCut(t *testing.T) {
	for _, c := range []struct {
		name    string
		data    []byte
		refused bool
	}{
		{"garbage", []byte(strings.Repeat("\x7fnot a store\x01", 400)), true},
		{"zeros", make([]byte, 4096), false},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, fileName(sid)), c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := NewFactory(Options{Dir: dir, MessagesMax: 8})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Create(sid)
		if got := errors.Is(err, ErrDamaged); got != c.refused {
			t.Fatalf("%s: error %v, refused %v, want %v", c.name, err, got, c.refused)
		}
		if st, _ := os.Stat(filepath.Join(dir, fileName(sid))); c.refused && st.Size() != int64(len(c.data)) {
			t.Fatalf("%s: the refused file was changed to %d bytes", c.name, st.Size())
		}
	}
}

// TestResendStopsWhenItsConditionFails: IterateMessages hands over the next
// message only while the factory's ResendWhile holds for the store's
// session, and stops there without an error; another session's store is
// not stopped. AfterResend is called for the session as each returns;
// GetMessages, not a resend, has neither hook.
func TestResendStopsWhenItsConditionFails(t *testing.T) {
	f, err := NewFactory(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	other := quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "CLIENT2"}
	var going atomic.Bool
	going.Store(true)
	f.ResendWhile(func(id quickfix.SessionID) bool { return id != sid || going.Load() })
	var ended []quickfix.SessionID
	f.AfterResend(func(id quickfix.SessionID) { ended = append(ended, id) })
	for _, id := range []quickfix.SessionID{sid, other} {
		ms, err := f.Create(id)
		if err != nil {
			t.Fatal(err)
		}
		saveMsgs(t, ms.(*Store), 1, 10)
	}
	for _, id := range []quickfix.SessionID{sid, other} {
		ms, _ := f.Create(id)
		var got []string
		err := ms.IterateMessages(1, 10, func(m []byte) error {
			got = append(got, string(m))
			if len(got) == 3 {
				going.Store(false) // the session's connection goes
			}
			return nil
		})
		want := 3
		if id == other {
			want = 10
		}
		if err != nil || len(got) != want || got[len(got)-1] != string(msg(want)) {
			t.Fatalf("%s: resent %d messages, the last %q, err %v; want %d, the last %q", id, len(got), got[len(got)-1], err, want, msg(want))
		}
		if len(ended) != 1 || ended[0] != id {
			t.Fatalf("AfterResend after %s's resend: %v", id, ended)
		}
		ended = ended[:0]
	}
	ms, _ := f.Create(sid)
	if got, err := ms.GetMessages(1, 10); err != nil || len(got) != 10 || len(ended) != 0 {
		t.Fatalf("GetMessages: %d messages, err %v, AfterResend %v; want all 10 and no call", len(got), err, ended)
	}
}

// TestTargetSeqNumNowFollowsTheStore: the lock-free read of the next
// target MsgSeqNum gives what NextTargetMsgSeqNum gives after every change:
// an increment, a set, a reset, a reopen.
func TestTargetSeqNumNowFollowsTheStore(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 100)
	check := func(step string) {
		t.Helper()
		if now, locked := s.TargetSeqNumNow(), s.NextTargetMsgSeqNum(); now != locked {
			t.Fatalf("after %s: TargetSeqNumNow %d, NextTargetMsgSeqNum %d", step, now, locked)
		}
	}
	check("open")
	for range 3 {
		if err := s.IncrNextTargetMsgSeqNum(); err != nil {
			t.Fatal(err)
		}
	}
	check("increments")
	if err := s.SetNextTargetMsgSeqNum(40); err != nil {
		t.Fatal(err)
	}
	check("a set")
	s = open(t, dir, 100)
	check("a reopen")
	if s.TargetSeqNumNow() != 40 {
		t.Fatalf("reopened at %d, want 40", s.TargetSeqNumNow())
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	check("a reset")
}

// TestRemovedStoreFails: the store directory removed under a running venue
// leaves each store writing and syncing a file that no longer has a name,
// without an error, and the sessions' sequence numbers and messages would
// be gone at the next start. The sync of a store written since fails
// instead, wrapping ErrFailed and ErrRemoved, reported to OnFail once per
// store; a store compacted (its file renamed over the old one) is not
// taken for one removed.
func TestRemovedStoreFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fixstore")
	f, err := NewFactory(Options{Dir: dir, MessagesMax: 8, FileBytesMax: 4096})
	if err != nil {
		t.Fatal(err)
	}
	var reported []error
	f.OnFail(func(err error) { reported = append(reported, err) })
	ma, _ := f.Create(sid)
	mb, _ := f.Create(quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "CLIENT2"})
	a, b := ma.(*Store), mb.(*Store)
	saveMsgs(t, a, 1, 500)
	if a.compactions == 0 {
		t.Fatal("no compaction: the test does not reach what it checks")
	}
	if _, err := f.SyncDirty(); err != nil || len(reported) != 0 {
		t.Fatalf("sync after compactions: %v (reported %v)", err, reported)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	saveMsgs(t, a, 501, 501)
	n, err := f.SyncDirty()
	if n != 1 || !errors.Is(err, ErrFailed) || !errors.Is(err, ErrRemoved) || !strings.Contains(err.Error(), a.path) {
		t.Fatalf("sync of a store whose directory was removed: %d %v, want ErrFailed and ErrRemoved naming %s", n, err, a.path)
	}
	if len(reported) != 1 || !errors.Is(reported[0], ErrRemoved) {
		t.Fatalf("OnFail saw %v, want the removal once", reported)
	}
	saveMsgs(t, a, 502, 502)
	if _, err := f.SyncDirty(); err != nil || len(reported) != 1 {
		t.Fatalf("a second sync of the removed store: %v (reported %v), want it reported once", err, reported)
	}
	if err := b.IncrNextTargetMsgSeqNum(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.SyncDirty(); !errors.Is(err, ErrRemoved) || len(reported) != 2 || !strings.Contains(reported[1].Error(), b.path) {
		t.Fatalf("the other store written: %v (reported %v), want its removal", err, reported)
	}
}
