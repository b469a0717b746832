package journal

import (
	"errors"
	"log/slog"
	"os"
	"testing"
)

// TestFailStopOnWriteError makes the segment's pwrite fail (its descriptor
// is closed underneath the writer, which is what an I/O error looks like
// from here): the writer fails, keeps failing, and never advances Durable.
func TestFailStopOnWriteError(t *testing.T) {
	w, err := Open(t.TempDir(), Config{SegmentBytes: 1 << 16, PayloadBytesMax: 256, BufferBytes: 4096,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(0, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.seg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(1, []byte("lost")); err != nil {
		t.Fatal(err) // buffered only: nothing fails yet
	}
	err = w.Flush()
	var fe *FailedError
	if !errors.As(err, &fe) || fe.Op != "write" || !errors.Is(err, os.ErrClosed) || !errors.Is(err, ErrFailed) {
		t.Fatalf("flush: %v", err)
	}
	if w.Durable() != 0 || w.Stats().Failures.Load() != 1 {
		t.Fatalf("durable %d failures %d", w.Durable(), w.Stats().Failures.Load())
	}
	// A spill (buffer full) fails the same way, from Append.
	if err := w.Append(2, make([]byte, 200)); !errors.Is(err, ErrFailed) {
		t.Fatalf("append after failure: %v", err)
	}
	w.seg = nil // already closed above
	if err := w.Close(); !errors.Is(err, ErrFailed) {
		t.Fatalf("close: %v", err)
	}
}
