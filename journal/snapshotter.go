package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fixvenue/fixvenue/core/ring"
)

// Defaults of SnapshotterConfig.
const (
	DefaultSnapshotsKept       = 2
	DefaultSnapshotCaptureMax  = 1 << 30
	DefaultSnapshotDurableWait = 30 * time.Second
	// snapshotDurablePoll is how often the background writer checks the
	// durable sequence while it waits.
	snapshotDurablePoll = time.Millisecond
)

// Snapshotter errors.
var (
	// ErrSnapshotBusy: the previous snapshot is still being written; this
	// one is skipped (logged and counted). Snapshots only shorten replay,
	// the journal still holds every command, so skipping loses nothing.
	ErrSnapshotBusy = errors.New("journal: previous snapshot still being written; snapshot skipped")
	// ErrSnapshotTooLarge: the state outgrew CaptureBytesMax.
	ErrSnapshotTooLarge = errors.New("journal: snapshot larger than CaptureBytesMax")
)

// SnapshotterConfig configures a Snapshotter.
type SnapshotterConfig struct {
	Dir     string         // the journal directory
	Durable *ring.Sequence // the journal's durable sequence (Writer.DurableSequence)
	// Keep is how many snapshots stay on disk (default 2); older ones are
	// deleted after each new one.
	Keep int
	// CaptureBytesMax bounds the in-memory copy of the state (default 1 GiB).
	CaptureBytesMax int
	// DurableWait bounds the wait for the snapshot's command to become
	// durable (default 30 s); past it the snapshot is discarded.
	DurableWait time.Duration
	Sync        SyncFunc     // nil: DefaultSync
	Logger      *slog.Logger // nil: slog.Default()
}

// SnapshotterStats counts what a Snapshotter did; readable from any goroutine.
type SnapshotterStats struct {
	Taken         atomic.Int64 // snapshots published
	Skipped       atomic.Int64 // captures refused because one was in flight
	Failed        atomic.Int64 // captures or writes that failed
	LastSeq       atomic.Int64 // seq of the last published snapshot, -1 if none
	LastBytes     atomic.Int64 // its payload size
	LastCaptureNs atomic.Int64 // time the matcher goroutine spent capturing it
}

// Snapshotter takes snapshots with as little work as possible on the
// matcher goroutine: Capture copies the state into a reusable memory
// buffer (the matcher must be quiet while it is read, so this part cannot
// move), and a background goroutine writes the file, fsyncs it, waits until
// the snapshot's command is durable in the journal, and only then renames
// it into place. That wait matters because the matcher runs beside the
// journal: without it, a power cut could lose the command while its
// snapshot survives, and recovery could later pair that snapshot with
// different commands journaled under the same seqs.
//
// One snapshot is in flight at a time; a Capture while one is in flight is
// refused with ErrSnapshotBusy. The buffer grows to the largest state seen
// (bounded by CaptureBytesMax) and is reused.
type Snapshotter struct {
	cfg   SnapshotterConfig
	busy  atomic.Bool
	buf   bytes.Buffer
	jobs  chan uint64
	done  chan struct{}
	stats SnapshotterStats
	// closeOnce: a cluster node hands its snapshotter to the venue it
	// becomes, and either may be the one that closes it.
	closeOnce sync.Once
}

// NewSnapshotter starts the background writer.
func NewSnapshotter(cfg SnapshotterConfig) (*Snapshotter, error) {
	if cfg.Dir == "" || cfg.Durable == nil {
		return nil, errors.New("journal: snapshotter needs Dir and Durable")
	}
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultSnapshotsKept
	}
	if cfg.CaptureBytesMax <= 0 {
		cfg.CaptureBytesMax = DefaultSnapshotCaptureMax
	}
	if cfg.DurableWait <= 0 {
		cfg.DurableWait = DefaultSnapshotDurableWait
	}
	if cfg.Sync == nil {
		cfg.Sync = DefaultSync
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// The snapshot files a crash left unpublished in its directory (it is
	// their only writer, and it has not started): each can be as large as
	// a state.
	if err := removeTempFiles(cfg.Dir, snapshotPrefix); err != nil {
		return nil, err
	}
	s := &Snapshotter{cfg: cfg, jobs: make(chan uint64, 1), done: make(chan struct{})}
	s.stats.LastSeq.Store(-1)
	go s.run()
	return s, nil
}

// Stats returns the live counters.
func (s *Snapshotter) Stats() *SnapshotterStats { return &s.stats }

// Capture copies the state written by write (the matcher's WriteSnapshot)
// as the snapshot after command seq, and hands it to the background
// writer. Call it on the matcher goroutine, between two commands.
func (s *Snapshotter) Capture(seq uint64, write func(io.Writer) error) error {
	if !s.busy.CompareAndSwap(false, true) {
		s.stats.Skipped.Add(1)
		s.cfg.Logger.Warn("journal: snapshot skipped, the previous one is still being written", "seq", seq)
		return ErrSnapshotBusy
	}
	t0 := time.Now()
	s.buf.Reset()
	if err := write(&boundedWriter{buf: &s.buf, maxBytes: s.cfg.CaptureBytesMax}); err != nil {
		s.stats.Failed.Add(1)
		s.busy.Store(false)
		return fmt.Errorf("journal: capture snapshot %d: %w", seq, err)
	}
	s.stats.LastCaptureNs.Store(time.Since(t0).Nanoseconds())
	s.jobs <- seq // never blocks: busy guarantees the channel is empty
	return nil
}

// Close waits for the snapshot in flight, if any, and stops the writer;
// a second Close does nothing. Capture must not be called after Close.
func (s *Snapshotter) Close() {
	s.closeOnce.Do(func() { close(s.jobs) })
	<-s.done
}

func (s *Snapshotter) run() {
	defer close(s.done)
	for seq := range s.jobs {
		if err := s.persist(seq); err != nil {
			// Logged before counted: an alert on the count finds the line.
			s.cfg.Logger.Error("journal: snapshot not written", "seq", seq, "err", err)
			s.stats.Failed.Add(1)
		}
		s.busy.Store(false)
	}
}

// persist writes the captured state for seq and publishes it once seq is durable.
func (s *Snapshotter) persist(seq uint64) error {
	state := s.buf.Bytes()
	tmp, err := writeSnapshotTemp(s.cfg.Dir, seq, func(w io.Writer) error {
		_, err := w.Write(state)
		return err
	}, s.cfg.Sync)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(s.cfg.DurableWait)
	for s.cfg.Durable.Load() < int64(seq) {
		if time.Now().After(deadline) {
			_ = os.Remove(tmp.Path)
			return fmt.Errorf("command %d not durable after %v (journal failed or stalled)", seq, s.cfg.DurableWait)
		}
		time.Sleep(snapshotDurablePoll)
	}
	sf, err := publishSnapshot(s.cfg.Dir, tmp, s.cfg.Sync)
	if err != nil {
		return err
	}
	s.stats.Taken.Add(1)
	s.stats.LastSeq.Store(int64(seq))
	s.stats.LastBytes.Store(sf.PayloadBytes)
	s.cfg.Logger.Info("journal: snapshot written", "snapshot", filepath.Base(sf.Path), "bytes", sf.PayloadBytes)
	return PruneSnapshots(s.cfg.Dir, s.cfg.Keep)
}

// boundedWriter appends to buf up to maxBytes, then fails.
type boundedWriter struct {
	buf      *bytes.Buffer
	maxBytes int
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.maxBytes {
		return 0, ErrSnapshotTooLarge
	}
	return b.buf.Write(p)
}
