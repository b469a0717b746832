package journal_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/journal"
)

// frameSpan is where one record's frame lies in its segment file.
type frameSpan struct {
	seq        uint64
	segment    string
	start, end int64
}

// frameSpans lists the frames of dir in order.
func frameSpans(t testing.TB, dir string) []frameSpan {
	t.Helper()
	var spans []frameSpan
	eachRecord(t, dir, journal.ReaderOptions{}, func(rec journal.Record) {
		spans = append(spans, frameSpan{rec.Seq, rec.Segment, rec.Offset, rec.Offset + journal.FrameHeaderBytes + int64(len(rec.Payload))})
	})
	return spans
}

// writeJournal creates a journal of records [0, n) with smallConfig.
func writeJournal(t testing.TB, n uint64, flushEvery int) string {
	t.Helper()
	dir := t.TempDir()
	w := openWriter(t, dir, smallConfig())
	appendRange(t, w, 0, n, flushEvery)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// capturedLog returns a logger writing text into the returned buffer.
func capturedLog() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

// TestTornTailAtEveryOffset cuts the last records of the journal at every
// byte offset, once leaving zeros after the cut (the write never reached
// the disk) and once leaving garbage (a torn sector), and checks that
// recovery keeps exactly the complete records, logs the cut, and that the
// journal then carries on.
func TestTornTailAtEveryOffset(t *testing.T) {
	src := writeJournal(t, 60, 7)
	spans := frameSpans(t, src)
	segs := segmentPaths(t, src)
	lastSeg := segs[len(segs)-1]
	var tail []frameSpan // the last 4 records, all in the last segment
	for _, s := range spans[len(spans)-4:] {
		if !strings.HasSuffix(lastSeg, s.segment) {
			t.Fatalf("record %d is not in the last segment; adjust the record count", s.seq)
		}
		tail = append(tail, s)
	}
	from, to := tail[0].start, tail[len(tail)-1].end
	rng := rand.New(rand.NewPCG(1, 2))
	for cut := from; cut <= to; cut++ {
		for _, garbage := range []bool{false, true} {
			t.Run(fmt.Sprintf("cut=%d/garbage=%v", cut, garbage), func(t *testing.T) {
				dir := copyDir(t, src)
				path := segmentPaths(t, dir)[len(segs)-1]
				content, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				damageEnd := to
				if garbage {
					damageEnd = min(to+37, int64(len(content))) // a torn sector may run past the data
					for i := cut; i < damageEnd; i++ {
						content[i] = byte(rng.Uint32())
					}
				} else {
					clear(content[cut:to])
				}
				if err := os.WriteFile(path, content, 0o640); err != nil {
					t.Fatal(err)
				}
				// The records kept are those whose frame ends at or before the cut.
				want := int64(tail[0].seq) - 1
				keptEnd := from
				for _, s := range tail {
					if s.end <= cut {
						want, keptEnd = int64(s.seq), s.end
					}
				}
				cfg := smallConfig()
				cfg.Sync = skipSync
				logger, logs := capturedLog()
				cfg.Logger = logger
				w, err := journal.Open(dir, cfg)
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				info := w.Recovery()
				if info.LastSeq != want {
					t.Fatalf("recovered up to %d, want %d", info.LastSeq, want)
				}
				damaged := cut < damageEnd && (garbage || cut != keptEnd)
				if damaged != (info.Tail != nil) {
					t.Fatalf("tail report %+v, damage expected %v", info.Tail, damaged)
				}
				if damaged {
					if info.Tail.Offset != keptEnd || !strings.Contains(logs.String(), "torn tail cut") ||
						!strings.Contains(logs.String(), fmt.Sprintf("offset=%d", keptEnd)) {
						t.Fatalf("tail %+v, log %q", info.Tail, logs.String())
					}
				}
				// The journal continues after the last good record, and the
				// damaged bytes are gone.
				next := uint64(want + 1)
				appendRange(t, w, next, next+3, 0)
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				seqs, tailAfter := readAll(t, dir)
				if tailAfter != nil || len(seqs) != int(next+3) {
					t.Fatalf("after repair: %d records, tail %+v", len(seqs), tailAfter)
				}
			})
		}
	}
}

// TestBitFlipInSealedSegment flips one bit in every byte of a sealed
// segment (header, frames and the zero padding after the data) and checks
// that Open refuses each time, naming that segment and an offset at or
// before the flip.
func TestBitFlipInSealedSegment(t *testing.T) {
	dir := writeJournal(t, 120, 10)
	segs := segmentPaths(t, dir)
	if len(segs) < 3 {
		t.Fatalf("%d segments; need at least 3", len(segs))
	}
	sealed := segs[1]
	f, err := os.OpenFile(sealed, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	rng := rand.New(rand.NewPCG(3, 4))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	flip := func(off int64, mask byte) {
		var b [1]byte
		if _, err := f.ReadAt(b[:], off); err != nil {
			t.Fatal(err)
		}
		b[0] ^= mask
		if _, err := f.WriteAt(b[:], off); err != nil {
			t.Fatal(err)
		}
	}
	step := int64(1)
	if testing.Short() {
		step = 7
	}
	for off := int64(0); off < st.Size(); off += step {
		mask := byte(1) << rng.IntN(8)
		flip(off, mask)
		cfg := smallConfig()
		cfg.Logger = quiet
		cfg.Sync = skipSync
		w, err := journal.Open(dir, cfg)
		var ce *journal.CorruptionError
		if !errors.As(err, &ce) || !errors.Is(err, journal.ErrCorrupt) {
			if w != nil {
				w.Close()
			}
			t.Fatalf("flip of bit %02x at offset %d: open returned %v, want corruption", mask, off, err)
		}
		if ce.Segment != sealed || ce.Offset > off {
			t.Fatalf("flip at %d: error names %s offset %d", off, ce.Segment, ce.Offset)
		}
		flip(off, mask)
	}
	// Undamaged again, it opens.
	w := openWriter(t, dir, smallConfig())
	w.Close()
}

// TestCorruptRecordFollowedByValidRecords: damage in the middle of the last
// segment is not a torn tail, because good records follow it.
func TestCorruptRecordFollowedByValidRecords(t *testing.T) {
	dir := writeJournal(t, 60, 7)
	spans := frameSpans(t, dir)
	victim := spans[len(spans)-3]
	segs := segmentPaths(t, dir)
	path := segs[len(segs)-1]
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	content[victim.start+journal.FrameHeaderBytes] ^= 0x10
	if err := os.WriteFile(path, content, 0o640); err != nil {
		t.Fatal(err)
	}
	_, err = journal.Open(dir, smallConfig())
	var ce *journal.CorruptionError
	if !errors.As(err, &ce) || ce.Segment != path || ce.Offset != victim.start ||
		!strings.Contains(ce.Reason, "followed by a valid record") {
		t.Fatalf("open: %v", err)
	}
	// The read-only reader refuses as well.
	r, err := journal.NewReader(dir, journal.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		_, err = r.Next()
		if err != nil {
			break
		}
	}
	if !errors.Is(err, journal.ErrCorrupt) {
		t.Fatalf("reader: %v", err)
	}
}

// TestSequenceGapIsCorruption: a record with a good CRC but the wrong seq
// (here: a segment whose name and header skip a seq) stops recovery.
func TestSequenceGapIsCorruption(t *testing.T) {
	dir := writeJournal(t, 120, 10)
	segs := segmentPaths(t, dir)
	if err := os.Remove(segs[1]); err != nil { // a missing middle segment
		t.Fatal(err)
	}
	_, err := journal.Open(dir, smallConfig())
	var ce *journal.CorruptionError
	if !errors.As(err, &ce) || ce.Segment != segs[0] || !strings.Contains(ce.Reason, "next segment") {
		t.Fatalf("open with a missing segment: %v", err)
	}
}

func TestLeftoverTempFilesAreRemoved(t *testing.T) {
	dir := writeJournal(t, 10, 0)
	tmp := segmentPaths(t, dir)[0] + ".tmp"
	if err := os.WriteFile(tmp, []byte("half made"), 0o640); err != nil {
		t.Fatal(err)
	}
	w := openWriter(t, dir, smallConfig())
	defer w.Close()
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("leftover temporary still there: %v", err)
	}
}
