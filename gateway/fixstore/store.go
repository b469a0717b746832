package fixstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/internal/periodic"
)

// Defaults for Options.
const (
	DefaultMessagesMax  = 1 << 16
	DefaultFileBytesMax = 256 << 20
	recordHeaderBytes   = 25
	recordPayloadMax    = 1 << 24

	// mapBytesMin is the first size of a store file's mapping; it doubles as
	// the file fills, by at most mapGrowthMax at a time. The space is
	// reserved on disk (fallocate) before it is mapped, so that a full disk is
	// an error from appendRecord, never a fault on a write to the mapping.
	mapBytesMin  = 1 << 20
	mapGrowthMax = 32 << 20
	// mapGrowthLeast is the step a store file grows by when the disk
	// refuses the doubling step (nearly full): the next record's end,
	// rounded up to it.
	mapGrowthLeast = 64 << 10
)

const (
	kindMessage byte = 1
	kindSeqNums byte = 2
	kindReset   byte = 3
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Options configure a Factory.
type Options struct {
	Dir          string
	MessagesMax  int   // sent messages kept for resend per session
	FileBytesMax int64 // compaction threshold per session file
	Logger       *slog.Logger
	// SyncData makes a store file's data durable (default Fdatasync); tests
	// replace it to hold or fail a sync.
	SyncData func(*os.File) error
	// Allocate reserves a store file's blocks up to size bytes (default
	// Fallocate); tests replace it to fail as a full disk would.
	Allocate func(f *os.File, size int64) error
	// onFail is the factory's hook (Factory.OnFail), shared by its stores.
	onFail *atomic.Pointer[func(error)]
	// resendWhile is the factory's hook (Factory.ResendWhile), shared by
	// its stores.
	resendWhile *atomic.Pointer[func(quickfix.SessionID) bool]
	// afterResend is the factory's hook (Factory.AfterResend), shared by
	// its stores.
	afterResend *atomic.Pointer[func(quickfix.SessionID)]
}

// ErrFailed is wrapped by the error of a store write or sync that the file
// system refused (a block reservation, a mapping, an fdatasync): the store
// cannot keep what its session sends, so the venue must halt
// (Factory.OnFail; docs/ARCHITECTURE.md, "A venue that failed").
var ErrFailed = errors.New("fixstore failed")

// ErrRemoved is the cause of a store's failure (wrapped with ErrFailed)
// when its file no longer has a name in the file system: it, or the store
// directory, was removed while the venue ran. Its mapping and syncs go on
// working, but what it keeps (the session's sequence numbers, the messages
// for resend) goes with the process, and the session starts again at
// sequence number 1 at the next start.
var ErrRemoved = errors.New("the store file was removed from the FIX store directory: the session's sequence numbers and messages for resend would be lost when the process ends")

// ErrDamaged: a store file holds a damaged record with good records after
// it (not a torn tail); the store is not opened.
var ErrDamaged = errors.New("fixstore damaged")

// failed reports err, which wraps ErrFailed, to the factory's hook.
func (o *Options) failed(err error) error {
	if o.onFail != nil {
		if fn := o.onFail.Load(); fn != nil {
			(*fn)(err)
		}
	}
	return err
}

// Fallocate reserves f's blocks up to size bytes, so that writes into the
// mapping cannot fail for lack of space. On a file system without
// fallocate (ext2, some network file systems) it writes zeros from the
// file's end to size instead, as the journal does for its segments: a
// full disk then fails that write, an error the venue halts on, where a
// sparse extension left the blocks to the first write into the mapping,
// a fault (SIGBUS) that ended the process.
func Fallocate(f *os.File, size int64) error {
	return allocate(f, size, syscall.Fallocate)
}

// allocate is Fallocate with the system call given (a test's stands for a
// file system without it).
func allocate(f *os.File, size int64, fallocate func(fd int, mode uint32, off, n int64) error) error {
	err := fallocate(int(f.Fd()), 0, 0, size)
	if !errors.Is(err, syscall.EOPNOTSUPP) && !errors.Is(err, syscall.ENOSYS) && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	// The file ends at the last reservation (or at its records, cut so
	// when it was opened): the zeros never cover a record.
	zeros := make([]byte, min(max(size-st.Size(), 0), zeroChunkBytes))
	for off := st.Size(); off < size; {
		n, err := f.WriteAt(zeros[:min(int64(len(zeros)), size-off)], off)
		if err != nil {
			return err
		}
		off += int64(n)
	}
	return nil
}

// zeroChunkBytes bounds one write of allocate's zeros.
const zeroChunkBytes = 1 << 20

// Factory creates one Store per session, all in one directory, and tracks them
// so that a Syncer can fsync the ones written since its last pass.
type Factory struct {
	opts   Options
	mu     sync.Mutex
	stores map[string]*Store
	syncs  atomic.Int64 // files fdatasynced by SyncDirty
}

// NewFactory creates the directory if needed.
func NewFactory(opts Options) (*Factory, error) {
	if opts.MessagesMax <= 0 {
		opts.MessagesMax = DefaultMessagesMax
	}
	if opts.FileBytesMax <= 0 {
		opts.FileBytesMax = DefaultFileBytesMax
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SyncData == nil {
		opts.SyncData = Fdatasync
	}
	if opts.Allocate == nil {
		opts.Allocate = Fallocate
	}
	opts.onFail = new(atomic.Pointer[func(error)])
	opts.resendWhile = new(atomic.Pointer[func(quickfix.SessionID) bool])
	opts.afterResend = new(atomic.Pointer[func(quickfix.SessionID)])
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	return &Factory{opts: opts, stores: map[string]*Store{}}, nil
}

// Create implements quickfix.MessageStoreFactory.
func (f *Factory) Create(id quickfix.SessionID) (quickfix.MessageStore, error) {
	name := fileName(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.stores[name]; ok && !s.closed() {
		return s, nil
	}
	s, err := openStore(filepath.Join(f.opts.Dir, name), f.opts)
	if err != nil {
		return nil, fmt.Errorf("fixstore %s: %w", name, err)
	}
	s.id = id
	f.stores[name] = s
	return s, nil
}

// Lookup returns the open store of a session, if any (for tests and admin hooks).
func (f *Factory) Lookup(id quickfix.SessionID) (*Store, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.stores[fileName(id)]
	return s, ok
}

// SyncDirty fdatasyncs every store written since the previous call and returns
// how many files it synced. It is the group commit of the store.
func (f *Factory) SyncDirty() (int, error) {
	list := f.openStores()
	n := 0
	var errs []error
	for _, s := range list {
		synced, err := s.syncIfDirty()
		if synced {
			n++
			f.syncs.Add(1)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// OnFail sets the function called with every error of the factory's stores
// that wraps ErrFailed, on the goroutine that met it (QuickFIX/Go's, the
// gateway's or the syncer's) and holding that store's lock, so fn must not
// write to a store: the venue halts on the first. QuickFIX/Go itself only
// logs such an error and drops the connection, or returns it from a send.
func (f *Factory) OnFail(fn func(error)) { f.opts.onFail.Store(&fn) }

// ResendWhile sets the condition a resend goes on under: IterateMessages,
// which QuickFIX/Go calls to answer a ResendRequest, hands it the next
// stored message only while fn holds for the store's session. The venue's
// fn fails once the session's connection is going (its outbound queue
// overflowed, it logged out, the venue stops): QuickFIX/Go holds the
// session's send lock for the whole resend, so the rest of a large one
// written to a connection that is gone held the session's sender, and
// every session's answers behind it (docs/ARCHITECTURE.md, "Drop copy").
// A resend that stops early is sound FIX: QuickFIX/Go sends no gap fill
// past a message it was not handed, and the client asks again for what it
// lacks once back.
func (f *Factory) ResendWhile(fn func(id quickfix.SessionID) bool) { f.opts.resendWhile.Store(&fn) }

// AfterResend sets the function IterateMessages calls for the store's
// session as it returns: QuickFIX/Go's resend has handed over its last
// message (it then only sends a gap fill, if one is due, and lets go of
// the session's send lock).
func (f *Factory) AfterResend(fn func(id quickfix.SessionID)) { f.opts.afterResend.Store(&fn) }

// Syncs returns how many store files SyncDirty has fdatasynced.
func (f *Factory) Syncs() int64 { return f.syncs.Load() }

// openStores returns the stores the factory has created, to work on them
// without holding its lock.
func (f *Factory) openStores() []*Store {
	f.mu.Lock()
	defer f.mu.Unlock()
	list := make([]*Store, 0, len(f.stores))
	for _, s := range f.stores {
		list = append(list, s)
	}
	return list
}

// Close closes every store the factory has open: each is cut to its records,
// synced and closed. QuickFIX/Go does not close its stores when an acceptor
// stops, so the venue calls this once its sessions are stopped.
func (f *Factory) Close() error {
	list := f.openStores()
	var errs []error
	for _, s := range list {
		if err := s.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RunSyncer calls SyncDirty every interval until stop is closed, then once more.
func (f *Factory) RunSyncer(interval time.Duration, stop <-chan struct{}) {
	syncLogged := func(time.Time) {
		if _, err := f.SyncDirty(); err != nil {
			f.opts.Logger.Error("fix store sync failed", "err", err)
		}
	}
	periodic.Run(stop, interval, syncLogged)
	syncLogged(time.Now())
}

func fileName(id quickfix.SessionID) string {
	s := id.BeginString + "-" + id.SenderCompID + "-" + id.TargetCompID
	if id.Qualifier != "" {
		s += "-" + id.Qualifier
	}
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, s) + ".fixstore"
}

type entry struct {
	seq    int
	offset int64
	length int32
}

// Store is one session's message store. It is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	path  string
	id    quickfix.SessionID // set by Factory.Create
	opts  Options
	f     *os.File
	mem   []byte // f mapped shared and writable; nil until the first append
	size  int64  // bytes of records; the file beyond is reserved zeros
	dirty bool
	// removed: a sync found the file removed (ErrRemoved), reported once.
	removed bool
	// leastGrowth: the last growth was by the least (the disk refused the
	// step); the warning is logged when it starts, not at every growth.
	leastGrowth bool
	nextSender  int
	nextTarget  int
	// targetNow mirrors nextTarget for readers that must not wait on mu
	// (TargetSeqNumNow).
	targetNow    atomic.Int64
	creationTime time.Time
	window       []entry // ring of the last MessagesMax sent messages
	windowHead   int     // index of the oldest entry
	windowLen    int
	windowBytes  int64 // the messages' bytes in the window
	compactions  int
	// lastExecID is the highest matcher ExecID of a report saved since the
	// last reset (LastReport); a compaction carries it in its reset record.
	lastExecID uint64
}

func openStore(path string, opts Options) (*Store, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || notRegular(path, st) != nil {
		f.Close()
		if err == nil {
			err = notRegular(path, st)
		}
		return nil, err
	}
	s := &Store{path: path, opts: opts, f: f, nextSender: 1, nextTarget: 1,
		window: make([]entry, opts.MessagesMax)}
	if err := s.load(); err != nil {
		f.Close()
		return nil, err
	}
	if s.size == 0 {
		s.creationTime = time.Now().UTC()
		if err := s.appendRecord(kindReset, uint64(s.creationTime.UnixNano()), 0, nil); err != nil {
			return nil, err
		}
		if err := s.appendSeqNums(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// load scans the file, rebuilds the state and cuts a torn tail.
func (s *Store) load() error {
	data, err := io.ReadAll(s.f)
	if err != nil {
		return err
	}
	var last LastReport
	off, err := walkRecords(data, func(kind byte, a, b uint64, off int64, n uint32, payload []byte) error {
		last.record(kind, a, b, payload)
		switch kind {
		case kindMessage:
			s.remember(int(a), off+recordHeaderBytes, int32(n-(recordHeaderBytes-8)))
			if b != 0 {
				// A message saved with its sender increment (b = next sender).
				s.nextSender = int(b)
			}
		case kindSeqNums:
			s.nextSender, s.nextTarget = int(a), int(b)
		case kindReset:
			s.creationTime = time.Unix(0, int64(a)).UTC()
			s.nextSender, s.nextTarget = 1, 1
			s.windowHead, s.windowLen, s.windowBytes = 0, 0, 0
		}
		return nil
	})
	s.lastExecID = last.ExecID
	s.targetNow.Store(int64(s.nextTarget))
	if err != nil {
		return err
	}
	if off < int64(len(data)) {
		// Zeros after the records are space reserved by a process that did
		// not close the store (a crash); anything else is a torn tail. Either
		// way the file is cut, so that what is appended next can never run
		// into the bytes of an older record.
		if tail := data[off:]; bytes.IndexFunc(tail, func(r rune) bool { return r != 0 }) >= 0 {
			if err := damaged(s.path, data, off); err != nil {
				return err
			}
			s.opts.Logger.Warn("fix store: cut a torn tail", "file", s.path, "offset", off, "bytes", len(tail))
		}
		if err := s.f.Truncate(off); err != nil {
			return err
		}
	}
	s.size = off
	return nil
}

// damaged is the ErrDamaged of a store whose records end at off with
// bytes other than zeros after them that are not a torn tail: a bad record
// with good ones after it, which cutting would turn into lost messages and
// sequence numbers used again, or no whole record at the start. It is nil
// for a torn tail, which a start cuts.
func damaged(path string, data []byte, off int64) error {
	if next := goodRecordAfter(data, off); next >= 0 {
		return fmt.Errorf("%w: %s: the record at offset %d is damaged and a good record follows at offset %d: "+
			"the store is not cut there (its session would lose every message after it and use their sequence "+
			"numbers again); restore the file, or truncate it to %d bytes to accept that loss",
			ErrDamaged, path, off, next, off)
	}
	if off == 0 {
		// A store starts with its reset record, written when it is
		// created: bytes with no record at all before them are not a torn
		// tail but another file, or damage at its start.
		return fmt.Errorf("%w: %s: no whole record at its start (%d bytes): not a FIX store, or damaged where it "+
			"begins; cutting it would lose the session's sequence numbers and messages: restore the file, or "+
			"remove it to start the session from sequence number 1", ErrDamaged, path, len(data))
	}
	return nil
}

// walkRecords calls fn with each whole record of data in order (kind, a, b,
// the record's offset and length, its payload) up to the first that is not
// whole or fails its checksum, and returns where that is.
func walkRecords(data []byte, fn func(kind byte, a, b uint64, off int64, n uint32, payload []byte) error) (int64, error) {
	off := int64(0)
	for {
		if int64(len(data))-off < recordHeaderBytes {
			return off, nil
		}
		n := binary.LittleEndian.Uint32(data[off:])
		sum := binary.LittleEndian.Uint32(data[off+4:])
		if n < recordHeaderBytes-8 || n > recordPayloadMax || off+8+int64(n) > int64(len(data)) {
			return off, nil
		}
		body := data[off+8 : off+8+int64(n)]
		if crc32.Checksum(body, castagnoli) != sum {
			return off, nil
		}
		if body[0] < kindMessage || body[0] > kindReset {
			return off, fmt.Errorf("record kind %d at offset %d", body[0], off)
		}
		if err := fn(body[0], binary.LittleEndian.Uint64(body[1:]), binary.LittleEndian.Uint64(body[9:]), off, n,
			body[recordHeaderBytes-8:]); err != nil {
			return off, err
		}
		off += 8 + int64(n)
	}
}

// goodRecordAfter is the offset of the first whole record with a good
// checksum after offset from, or -1.
func goodRecordAfter(data []byte, from int64) int64 {
	for o := from + 1; int64(len(data))-o >= recordHeaderBytes; o++ {
		n := binary.LittleEndian.Uint32(data[o:])
		if n < recordHeaderBytes-8 || n > recordPayloadMax || o+8+int64(n) > int64(len(data)) {
			continue
		}
		if crc32.Checksum(data[o+8:o+8+int64(n)], castagnoli) == binary.LittleEndian.Uint32(data[o+4:]) {
			return o
		}
	}
	return -1
}

// reserve makes the mapping hold at least need bytes: it reserves the
// file's blocks up to the new size, then maps the file again.
func (s *Store) reserve(need int64) error {
	if int64(len(s.mem)) >= need {
		return nil
	}
	size := int64(len(s.mem))
	for size < need {
		size += min(max(size, mapBytesMin), mapGrowthMax)
	}
	if err := s.opts.Allocate(s.f, size); err != nil {
		// A disk nearly full may still hold what this record needs, not
		// the whole step: the store then grows by the least (a failure
		// halts the venue, while the journal still had room).
		least := (need + mapGrowthLeast - 1) / mapGrowthLeast * mapGrowthLeast
		if least >= size || s.opts.Allocate(s.f, least) != nil {
			return s.opts.failed(fmt.Errorf("%w: reserve %d bytes for %s: %w", ErrFailed, size, s.path, err))
		}
		if !s.leastGrowth {
			s.opts.Logger.Warn("FIX store: the disk refused its next step of growth; growing by the least the messages need",
				"file", s.path, "step_bytes", size, "reserved_bytes", least, "err", err)
		}
		s.leastGrowth, size = true, least
	} else {
		s.leastGrowth = false
	}
	mem, err := syscall.Mmap(int(s.f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return s.opts.failed(fmt.Errorf("%w: map %s: %w", ErrFailed, s.path, err))
	}
	s.unmap()
	s.mem = mem
	return nil
}

func (s *Store) unmap() {
	if s.mem != nil {
		syscall.Munmap(s.mem)
		s.mem = nil
	}
}

func (s *Store) remember(seq int, offset int64, length int32) {
	// A message re-sent with the same sequence number (after a reset) replaces older ones
	// only by being newer in the window; lookups search from the newest.
	idx := (s.windowHead + s.windowLen) % len(s.window)
	if s.windowLen == len(s.window) {
		s.windowBytes -= int64(s.window[idx].length) // the oldest, replaced
		s.windowHead = (s.windowHead + 1) % len(s.window)
	} else {
		s.windowLen++
	}
	s.window[idx] = entry{seq: seq, offset: offset, length: length}
	s.windowBytes += int64(length)
}

func (s *Store) appendRecord(kind byte, a, b uint64, payload []byte) error {
	if len(payload) > recordPayloadMax-32 {
		return fmt.Errorf("fixstore: message of %d bytes is too large", len(payload))
	}
	if s.f == nil {
		return fmt.Errorf("fixstore: %s: store closed", s.path)
	}
	need := recordHeaderBytes + len(payload)
	if err := s.reserve(s.size + int64(need)); err != nil {
		return err
	}
	// Written straight into the shared mapping: in the page cache, and so
	// safe from the process dying, without a system call.
	buf := s.mem[s.size : s.size+int64(need)]
	binary.LittleEndian.PutUint32(buf[0:], uint32(need-8))
	buf[8] = kind
	binary.LittleEndian.PutUint64(buf[9:], a)
	binary.LittleEndian.PutUint64(buf[17:], b)
	copy(buf[25:], payload)
	binary.LittleEndian.PutUint32(buf[4:], crc32.Checksum(buf[8:], castagnoli))
	s.size += int64(need)
	s.dirty = true
	return nil
}

// appendSeqNums records the sequence numbers, after every change of them.
func (s *Store) appendSeqNums() error {
	s.targetNow.Store(int64(s.nextTarget))
	return s.appendRecord(kindSeqNums, uint64(s.nextSender), uint64(s.nextTarget), nil)
}

// syncIfDirty fdatasyncs the file if it was written since the last sync.
//
// The sync runs outside the store's lock: the session's messages go on
// being saved and counted while the disk flushes (with the lock held, every
// sync stalled its session's sends and receives for the length of an
// fdatasync, and the venue's latency with them). What was written before
// dirty was cleared is covered by this sync; what is written during it
// marks the store dirty again for the next pass.
func (s *Store) syncIfDirty() (bool, error) {
	s.mu.Lock()
	if !s.dirty || s.f == nil {
		s.mu.Unlock()
		return false, nil
	}
	s.dirty = false
	f := s.f
	s.mu.Unlock()
	if err := s.opts.SyncData(f); err != nil {
		s.mu.Lock()
		replaced := s.f != f
		s.mu.Unlock()
		if replaced {
			// Closed meanwhile (Close syncs the file), or compacted (the
			// records were copied into a new file, synced before it
			// took this one's place).
			return true, nil
		}
		return true, s.opts.failed(fmt.Errorf("%w: fdatasync %s: %w", ErrFailed, s.path, err))
	}
	// A file removed while it is open takes every write and sync without
	// an error: one fstat per sync, beside an fdatasync, makes that a
	// failure, as the journal does for its segments.
	if err := linked(f); err != nil {
		s.mu.Lock()
		// Closed or compacted meanwhile (a compaction renames its file
		// over this one) is no removal; one is reported once.
		quiet := s.f != f || s.removed
		if !quiet {
			s.removed = true
		}
		s.mu.Unlock()
		if quiet {
			return true, nil
		}
		return true, s.opts.failed(fmt.Errorf("%w: %s: %w", ErrFailed, s.path, err))
	}
	return true, nil
}

// linked says whether f still has a name in the file system (ErrRemoved
// when it has none). It holds f open for the call, as Fdatasync does.
func linked(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var st syscall.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Fstat(int(fd), &st) }); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	if st.Nlink == 0 {
		return ErrRemoved
	}
	return nil
}

// Fdatasync makes f's data durable. It holds f open for the call, so a
// concurrent Close waits for it rather than freeing the descriptor under it.
func Fdatasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Fdatasync(int(fd)) }); err != nil {
		return err
	}
	return serr
}

// NextSenderMsgSeqNum implements quickfix.MessageStore.
func (s *Store) NextSenderMsgSeqNum() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextSender
}

// NextTargetMsgSeqNum implements quickfix.MessageStore.
func (s *Store) NextTargetMsgSeqNum() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextTarget
}

// IncrNextSenderMsgSeqNum implements quickfix.MessageStore.
func (s *Store) IncrNextSenderMsgSeqNum() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextSender++
	return s.appendSeqNums()
}

// TargetSeqNumNow is NextTargetMsgSeqNum read without the store's lock,
// which a save holds while it writes: the FIX edge reads it for every
// message a client sends (its bound on messages ahead of a sequence gap)
// and must not wait behind the session's answers.
func (s *Store) TargetSeqNumNow() int { return int(s.targetNow.Load()) }

// IncrNextTargetMsgSeqNum implements quickfix.MessageStore.
func (s *Store) IncrNextTargetMsgSeqNum() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextTarget++
	return s.appendSeqNums()
}

// SetNextSenderMsgSeqNum implements quickfix.MessageStore.
func (s *Store) SetNextSenderMsgSeqNum(next int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextSender = next
	return s.appendSeqNums()
}

// SetNextTargetMsgSeqNum implements quickfix.MessageStore.
func (s *Store) SetNextTargetMsgSeqNum(next int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextTarget = next
	return s.appendSeqNums()
}

// CreationTime implements quickfix.MessageStore.
func (s *Store) CreationTime() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creationTime
}

// SetCreationTime implements quickfix.MessageStore (QuickFIX/Go uses it in tests only).
func (s *Store) SetCreationTime(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.creationTime = t
}

// SaveMessage implements quickfix.MessageStore.
func (s *Store) SaveMessage(seqNum int, msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked(seqNum, msg)
}

func (s *Store) saveLocked(seqNum int, msg []byte) error {
	return s.saveWithNextLocked(seqNum, 0, msg)
}

// saveWithNextLocked writes a message record; nextSender, when not 0, is the
// next sender sequence number after it, so that saving and incrementing is one write.
func (s *Store) saveWithNextLocked(seqNum, nextSender int, msg []byte) error {
	off := s.size
	if err := s.appendRecord(kindMessage, uint64(seqNum), uint64(nextSender), msg); err != nil {
		return err
	}
	s.remember(seqNum, off+recordHeaderBytes, int32(len(msg)))
	if id, ok := matcherExecID(msg); ok && id > s.lastExecID {
		s.lastExecID = id
	}
	return nil
}

// SaveMessageAndIncrNextSenderMsgSeqNum implements quickfix.MessageStore with
// one write: the message record carries the incremented sequence number.
func (s *Store) SaveMessageAndIncrNextSenderMsgSeqNum(seqNum int, msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.saveWithNextLocked(seqNum, s.nextSender+1, msg); err != nil {
		return err
	}
	s.nextSender++
	if s.compactDue() {
		s.compactions++
		return s.compactLocked()
	}
	return nil
}

// compactDue reports whether the file has passed FileBytesMax and holds
// at least as much besides the resend window as the window itself: a
// compaction keeps the window, so one with less to drop would come again
// within a few messages.
func (s *Store) compactDue() bool {
	return s.size > s.opts.FileBytesMax && s.size > 2*(s.windowBytes+int64(s.windowLen)*recordHeaderBytes)
}

// GetMessages implements quickfix.MessageStore: every stored message in
// [begin, end], without the factory's resend hooks (QuickFIX/Go resends
// through IterateMessages).
func (s *Store) GetMessages(begin, end int) ([][]byte, error) {
	var out [][]byte
	err := s.iterate(begin, end, nil, func(m []byte) error {
		out = append(out, m)
		return nil
	})
	return out, err
}

// IterateMessages implements quickfix.MessageStore, which QuickFIX/Go calls
// to resend: the stored messages with sequence numbers in [begin, end], in
// order. Numbers it no longer holds are skipped. It stops early, with no
// error, once the factory's ResendWhile condition fails for the session,
// and calls its AfterResend as it returns.
func (s *Store) IterateMessages(begin, end int, cb func([]byte) error) error {
	if fn := s.opts.afterResend.Load(); fn != nil {
		defer (*fn)(s.id)
	}
	var goOn func(quickfix.SessionID) bool
	if fn := s.opts.resendWhile.Load(); fn != nil {
		goOn = *fn
	}
	return s.iterate(begin, end, goOn, cb)
}

// iterate hands cb the stored messages in [begin, end], in order, while
// goOn (if not nil) holds for the session.
func (s *Store) iterate(begin, end int, goOn func(quickfix.SessionID) bool, cb func([]byte) error) error {
	s.mu.Lock()
	picked := make([]entry, 0, 16)
	for i := 0; i < s.windowLen; i++ {
		e := s.window[(s.windowHead+i)%len(s.window)]
		if e.seq >= begin && e.seq <= end {
			// A later entry with the same number (after a reset) wins.
			if n := len(picked); n > 0 && picked[n-1].seq >= e.seq {
				for n > 0 && picked[n-1].seq >= e.seq {
					n--
				}
				picked = picked[:n]
			}
			picked = append(picked, e)
		}
	}
	f := s.f
	s.mu.Unlock()
	for _, e := range picked {
		if goOn != nil && !goOn(s.id) {
			return nil
		}
		buf := make([]byte, e.length)
		if _, err := f.ReadAt(buf, e.offset); err != nil {
			return fmt.Errorf("fixstore: read message %d: %w", e.seq, err)
		}
		if err := cb(buf); err != nil {
			return err
		}
	}
	return nil
}

// Refresh implements quickfix.MessageStore: the in-memory state is authoritative.
func (s *Store) Refresh() error { return nil }

// Reset implements quickfix.MessageStore: sequence numbers back to 1, messages dropped.
func (s *Store) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unmap()
	if err := s.f.Truncate(0); err != nil {
		return err
	}
	s.size = 0
	s.nextSender, s.nextTarget = 1, 1
	s.windowHead, s.windowLen, s.windowBytes = 0, 0, 0
	s.lastExecID = 0
	s.creationTime = time.Now().UTC()
	if err := s.appendRecord(kindReset, uint64(s.creationTime.UnixNano()), 0, nil); err != nil {
		return err
	}
	return s.appendSeqNums()
}

// compactLocked rewrites the file with the current sequence numbers and the
// indexed window of messages, then renames it over the old file.
func (s *Store) compactLocked() error {
	tmp := s.path + ".compact"
	nf, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	old, oldSize, oldMem := s.f, s.size, s.mem
	oldHead, oldLen, oldBytes := s.windowHead, s.windowLen, s.windowBytes
	entries := make([]entry, 0, s.windowLen)
	for i := 0; i < s.windowLen; i++ {
		entries = append(entries, s.window[(s.windowHead+i)%len(s.window)])
	}
	s.f, s.size, s.mem = nf, 0, nil
	s.windowHead, s.windowLen, s.windowBytes = 0, 0, 0
	fail := func(err error) error {
		s.unmap()
		nf.Close()
		os.Remove(tmp)
		s.f, s.size, s.mem = old, oldSize, oldMem
		s.windowHead, s.windowLen, s.windowBytes = oldHead, oldLen, oldBytes
		for i, e := range entries {
			s.window[(oldHead+i)%len(s.window)] = e
		}
		return fmt.Errorf("fixstore compact: %w", err)
	}
	// The reset record of a compaction carries the last report's ExecID
	// (b), which the messages it drops may have held.
	if err := s.appendRecord(kindReset, uint64(s.creationTime.UnixNano()), s.lastExecID, nil); err != nil {
		return fail(err)
	}
	for _, e := range entries {
		buf := make([]byte, e.length)
		if _, err := old.ReadAt(buf, e.offset); err != nil {
			return fail(err)
		}
		if err := s.saveLocked(e.seq, buf); err != nil {
			return fail(err)
		}
	}
	if err := s.appendSeqNums(); err != nil {
		return fail(err)
	}
	if err := nf.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return fail(err)
	}
	if d, err := os.Open(filepath.Dir(s.path)); err == nil {
		d.Sync()
		d.Close()
	}
	if oldMem != nil {
		syscall.Munmap(oldMem)
	}
	old.Close()
	return nil
}

func (s *Store) closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f == nil
}

// Close implements quickfix.MessageStore. The file is cut to its records
// (the reserved space is given back) and synced before it is closed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	s.unmap()
	err := s.f.Truncate(s.size)
	if serr := s.f.Sync(); err == nil {
		err = serr
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.f = nil
	return err
}

// WholeRecordsEnd is where a store file's whole records end, from its
// start, as its open reads them: a copy made while the venue writes the
// file (fixvenue backup) keeps that much, so that a record read half
// written leaves no good records after a bad one, which an open refuses.
func WholeRecordsEnd(data []byte) int64 {
	end, _ := walkRecords(data, func(byte, uint64, uint64, int64, uint32, []byte) error { return nil })
	return end
}
