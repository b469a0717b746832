package journal_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fixvenue/fixvenue/journal"
)

func TestRoundTripAcrossSegmentRolls(t *testing.T) {
	dir := t.TempDir()
	rec, cfg := recordedConfig()
	w := openWriter(t, dir, cfg)
	const n = 3000
	appendRange(t, w, 0, n, 37)
	if got := w.Durable(); got != n-1 {
		t.Fatalf("durable %d, want %d", got, n-1)
	}
	segs := w.Stats().SegmentsCreated.Load()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if segs < 10 {
		t.Fatalf("only %d segments created; the test must cross many rolls", segs)
	}
	if got := len(segmentPaths(t, dir)); int64(got) != segs {
		t.Fatalf("%d segment files, writer created %d", got, segs)
	}
	// One fdatasync per flush plus one per roll, and nothing else.
	wantData := int((n+36)/37) + int(segs-1)
	if got := rec.count(journal.SyncData); got != wantData {
		t.Fatalf("%d fdatasyncs, want %d (flushes + rolls)", got, wantData)
	}

	seqs, tail := readAll(t, dir)
	if len(seqs) != n || seqs[0] != 0 || seqs[n-1] != n-1 || tail != nil {
		t.Fatalf("read %d records (tail %v), want %d", len(seqs), tail, n)
	}

	// Reopen, check what recovery found, continue, and read everything again.
	w = openWriter(t, dir, smallConfig())
	info := w.Recovery()
	if info.Records != n || info.FirstSeq != 0 || info.LastSeq != n-1 || info.Tail != nil || int64(info.Segments) != segs {
		t.Fatalf("recovery %+v", info)
	}
	if w.NextSeq() != n || w.Durable() != n-1 {
		t.Fatalf("after recovery next %d durable %d", w.NextSeq(), w.Durable())
	}
	appendRange(t, w, n, n+500, 0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	seqs, _ = readAll(t, dir)
	if len(seqs) != n+500 {
		t.Fatalf("read %d records after reopen, want %d", len(seqs), n+500)
	}
}

func TestReaderFromSeqSkipsEarlierSegments(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig()
	cfg.FirstSeq = 100
	w := openWriter(t, dir, cfg)
	appendRange(t, w, 100, 1100, 50)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, from := range []uint64{0, 100, 101, 577, 1099, 1100} {
		r, err := journal.NewReader(dir, journal.ReaderOptions{FromSeq: from})
		if err != nil {
			t.Fatal(err)
		}
		want := max(from, 100)
		for rec, err := range r.All() {
			if err != nil {
				t.Fatalf("from %d: %v", from, err)
			}
			if rec.Seq != want {
				t.Fatalf("from %d: got seq %d, want %d", from, rec.Seq, want)
			}
			want++
		}
		if want != 1100 || r.LastSeq() != 1099 {
			t.Fatalf("from %d: ended before %d, last %d", from, want, r.LastSeq())
		}
		r.Close()
	}
}

func TestAppendRejectsBadInputWithoutFailing(t *testing.T) {
	w := openWriter(t, t.TempDir(), smallConfig())
	defer w.Close()
	if err := w.Append(1, []byte("x")); !errors.Is(err, journal.ErrSequence) {
		t.Fatalf("seq 1 on an empty journal: %v, want ErrSequence", err)
	}
	if err := w.Append(0, nil); !errors.Is(err, journal.ErrPayloadSize) {
		t.Fatalf("empty payload: %v", err)
	}
	if err := w.Append(0, make([]byte, 257)); !errors.Is(err, journal.ErrPayloadSize) {
		t.Fatalf("oversized payload: %v", err)
	}
	if err := w.Append(0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(0, []byte("x")); !errors.Is(err, journal.ErrSequence) {
		t.Fatalf("repeated seq: %v", err)
	}
	if w.Err() != nil {
		t.Fatalf("caller mistakes must not fail the journal: %v", w.Err())
	}
}

func TestAppendDoesNotAllocate(t *testing.T) {
	cfg := smallConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.BufferBytes = 1 << 20
	cfg.Policy = journal.PolicyNone
	w := openWriter(t, t.TempDir(), cfg)
	defer w.Close()
	payload := payloadFor(1)
	seq := uint64(0)
	if err := w.Append(seq, payload); err != nil { // creates the segment
		t.Fatal(err)
	}
	seq++
	allocs := testing.AllocsPerRun(1000, func() {
		if err := w.Append(seq, payload); err != nil {
			t.Fatal(err)
		}
		seq++
	})
	if allocs != 0 {
		t.Fatalf("Append allocates %.1f times per call", allocs)
	}
	allocs = testing.AllocsPerRun(100, func() {
		if err := w.Append(seq, payload); err != nil {
			t.Fatal(err)
		}
		seq++
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Append+Flush allocates %.1f times per call", allocs)
	}
}

// TestGroupCommitOneFsyncPerFlush: however many records are appended
// between flushes, a flush costs one fdatasync.
func TestGroupCommitOneFsyncPerFlush(t *testing.T) {
	rec := newSyncRecorder()
	// Default 64 MiB segments (no roll); a 64 KiB buffer that big batches spill.
	cfg := journal.Config{Sync: rec.sync, BufferBytes: 64 << 10}
	w := openWriter(t, t.TempDir(), cfg)
	defer w.Close()
	var next uint64
	for _, batch := range []int{1, 2, 10, 1000, 5000} {
		before := rec.count(journal.SyncData)
		for range batch {
			if err := w.Append(next, payloadFor(next)); err != nil {
				t.Fatal(err)
			}
			next++
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := rec.count(journal.SyncData) - before; got != 1 {
			t.Fatalf("batch of %d records: %d fdatasyncs", batch, got)
		}
		if w.Durable() != int64(next-1) {
			t.Fatalf("durable %d after batch, want %d", w.Durable(), next-1)
		}
	}
	// A flush with nothing new does not sync.
	before := rec.count(journal.SyncData)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if rec.count(journal.SyncData) != before {
		t.Fatal("an empty flush synced")
	}
	if got := w.Stats().BatchRecordsMax.Load(); got != 5000 {
		t.Fatalf("BatchRecordsMax %d", got)
	}
	if got := w.Stats().Spills.Load(); got == 0 {
		t.Fatal("a 5000-record batch did not spill the 64 KiB buffer")
	}
}

// TestSlowFsyncHoldsDurable proves the primitive the outbound gate relies
// on: while fdatasync has not returned, Durable does not move.
func TestSlowFsyncHoldsDurable(t *testing.T) {
	rec := newSyncRecorder()
	w := openWriter(t, t.TempDir(), journal.Config{Sync: rec.sync})
	defer w.Close()
	appendRange(t, w, 0, 5, 0) // durable = 4, gate not yet installed
	rec.mu.Lock()
	rec.entered, rec.release = make(chan struct{}), make(chan struct{})
	rec.mu.Unlock()
	for s := uint64(5); s < 20; s++ {
		if err := w.Append(s, payloadFor(s)); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error)
	go func() { done <- w.Flush() }()
	<-rec.entered // the flush is inside fdatasync now
	for range 1000 {
		if d := w.Durable(); d != 4 {
			t.Fatalf("durable moved to %d while fdatasync was still running", d)
		}
		if d := w.DurableSequence().Load(); d != 4 {
			t.Fatalf("durable sequence moved to %d while fdatasync was still running", d)
		}
	}
	close(rec.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d := w.Durable(); d != 19 {
		t.Fatalf("durable %d after the sync returned, want 19", d)
	}
}

func TestFailStopOnSyncError(t *testing.T) {
	dir := t.TempDir()
	rec, cfg := recordedConfig()
	rec.failData, rec.failAt = syscall.EIO, 3
	cfg.SegmentBytes = 1 << 20
	var flushes []journal.FlushInfo
	cfg.OnFlush = func(fi journal.FlushInfo) { flushes = append(flushes, fi) }
	w := openWriter(t, dir, cfg)
	appendRange(t, w, 0, 10, 5) // syncs 1 and 2
	if w.Durable() != 9 || len(flushes) != 2 {
		t.Fatalf("durable %d, %d flushes", w.Durable(), len(flushes))
	}
	for s := uint64(10); s < 15; s++ {
		if err := w.Append(s, payloadFor(s)); err != nil {
			t.Fatal(err)
		}
	}
	err := w.Flush() // sync 3 fails
	if !errors.Is(err, journal.ErrFailed) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("flush error %v, want ErrFailed wrapping EIO", err)
	}
	var fe *journal.FailedError
	if !errors.As(err, &fe) || fe.Op != "fdatasync" || fe.DurableSeq != 9 {
		t.Fatalf("failure %+v", fe)
	}
	// From now on: no progress, the same error, counted once.
	if err := w.Append(15, payloadFor(15)); !errors.Is(err, journal.ErrFailed) {
		t.Fatalf("append after failure: %v", err)
	}
	if err := w.Flush(); !errors.Is(err, journal.ErrFailed) {
		t.Fatalf("flush after failure: %v", err)
	}
	if w.Durable() != 9 || !errors.Is(w.Err(), journal.ErrFailed) || w.Stats().Failures.Load() != 1 || len(flushes) != 2 {
		t.Fatalf("after failure: durable %d err %v failures %d flushes %d",
			w.Durable(), w.Err(), w.Stats().Failures.Load(), len(flushes))
	}
	if rec.count(journal.SyncData) != 3 {
		t.Fatalf("%d syncs: a failed fsync must never be retried", rec.count(journal.SyncData))
	}
	if err := w.Close(); !errors.Is(err, journal.ErrFailed) {
		t.Fatalf("close: %v", err)
	}
	// The directory is consistent: it opens, and holds at least what was durable.
	w, err = journal.Open(dir, smallConfig())
	if err != nil {
		t.Fatalf("reopen after fail-stop: %v", err)
	}
	defer w.Close()
	if got := w.Recovery().LastSeq; got < 9 || got > 14 {
		t.Fatalf("recovered last seq %d, want 9..14", got)
	}
}

// TestFailStopOnFullDiskAtRoll injects ENOSPC into the creation of the next
// segment: the writer fails, no half-made segment is left visible, and the
// journal reopens at the last good record.
func TestFailStopOnFullDiskAtRoll(t *testing.T) {
	dir := t.TempDir()
	rec, cfg := recordedConfig()
	w := openWriter(t, dir, cfg)
	var s uint64
	for ; w.Stats().SegmentsCreated.Load() < 2; s++ {
		if err := w.Append(s, payloadFor(s)); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	rec.mu.Lock()
	rec.failKind, rec.failKindErr = journal.SyncFile, syscall.ENOSPC
	rec.mu.Unlock()
	var appendErr error
	for ; appendErr == nil; s++ {
		appendErr = w.Append(s, payloadFor(s))
		if appendErr == nil {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !errors.Is(appendErr, syscall.ENOSPC) || !errors.Is(appendErr, journal.ErrFailed) {
		t.Fatalf("append at roll: %v, want ErrFailed wrapping ENOSPC", appendErr)
	}
	// The error names the segment that could not be made (its first record
	// the one being appended), for the operator who reads it.
	var fe *journal.FailedError
	if !errors.As(appendErr, &fe) || !strings.HasSuffix(fe.Segment, fmt.Sprintf("%020d.seg", s-1)) ||
		!strings.Contains(appendErr.Error(), fmt.Sprintf("%020d", s-1)) {
		t.Fatalf("append at roll: %v names segment %q, want the one starting at %d", appendErr, fe.Segment, s-1)
	}
	durable := w.Durable()
	if durable != int64(s-2) {
		t.Fatalf("durable %d, want %d", durable, s-2)
	}
	_ = w.Close()
	if tmp, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmp) != 0 {
		t.Fatalf("half-made segment left behind: %v", tmp)
	}
	w = openWriter(t, dir, smallConfig())
	defer w.Close()
	if w.Recovery().LastSeq != durable || w.NextSeq() != uint64(durable+1) {
		t.Fatalf("recovered %+v next %d, want last %d", w.Recovery(), w.NextSeq(), durable)
	}
	appendRange(t, w, uint64(durable+1), uint64(durable+50), 10)
}

// TestFailStopOnRemovedSegment: a segment removed while it is written (the
// data directory removed under the venue) takes writes and syncs without an
// error, and its records would be gone at the next start. The flush after
// the removal fails instead of advancing the durable sequence, whether the
// removed segment is the one being written or one the batch left at a roll.
func TestFailStopOnRemovedSegment(t *testing.T) {
	for _, atRoll := range []bool{false, true} {
		t.Run(fmt.Sprintf("at roll %v", atRoll), func(t *testing.T) {
			dir := t.TempDir()
			w := openWriter(t, dir, smallConfig())
			defer w.Close()
			appendRange(t, w, 0, 10, 0)
			segs := segmentPaths(t, dir)
			if err := os.Remove(segs[len(segs)-1]); err != nil {
				t.Fatal(err)
			}
			// At a roll, the append that rolls fails: the records before it
			// went to the removed segment.
			var err error
			s := uint64(10)
			for created := w.Stats().SegmentsCreated.Load(); ; s++ {
				if err = w.Append(s, payloadFor(s)); err != nil || !atRoll || w.Stats().SegmentsCreated.Load() > created {
					break
				}
			}
			if err == nil {
				err = w.Flush()
			}
			if !errors.Is(err, journal.ErrFailed) || !errors.Is(err, journal.ErrSegmentRemoved) {
				t.Fatalf("records 10..%d written to a removed segment: %v, want ErrFailed wrapping ErrSegmentRemoved", s, err)
			}
			if w.Durable() != 9 {
				t.Fatalf("durable %d after the removal, want 9", w.Durable())
			}
		})
	}
}

func TestPolicyNoneNeverSyncsRecords(t *testing.T) {
	rec := newSyncRecorder()
	w := openWriter(t, t.TempDir(), journal.Config{Policy: journal.PolicyNone, Sync: rec.sync})
	defer w.Close()
	appendRange(t, w, 0, 100, 10)
	if got := rec.count(journal.SyncData); got != 0 {
		t.Fatalf("%d fdatasyncs under PolicyNone", got)
	}
	if w.Durable() != 99 {
		t.Fatalf("durable %d", w.Durable())
	}
}

func TestPolicyText(t *testing.T) {
	for _, want := range []journal.Policy{journal.PolicyBatch, journal.PolicyNone} {
		text, err := want.MarshalText()
		if err != nil || string(text) != want.String() {
			t.Fatalf("%v.MarshalText() = %q, %v", want, text, err)
		}
		var got journal.Policy
		if err := got.UnmarshalText(text); err != nil || got != want {
			t.Fatalf("UnmarshalText(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	var p journal.Policy
	if err := p.UnmarshalText([]byte("none")); err != nil || p != journal.PolicyNone {
		t.Fatalf(`UnmarshalText("none") = %v, %v`, p, err)
	}
	for _, bad := range []string{"always", "", "Batch", "none "} {
		p := journal.PolicyNone
		err := p.UnmarshalText([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q is not batch or none", bad)) {
			t.Errorf("UnmarshalText(%q): error %v, want one naming the value and the choices", bad, err)
		}
		if p != journal.PolicyNone {
			t.Errorf("UnmarshalText(%q) changed the policy to %v", bad, p)
		}
	}
	if _, err := journal.Policy(9).MarshalText(); err == nil {
		t.Error("MarshalText of an undefined policy did not fail")
	}
	if s := journal.Policy(9).String(); s != "Policy(9)" {
		t.Errorf("String of an undefined policy = %q", s)
	}
}

func TestOpenRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]journal.Config{
		"segment too small": {SegmentBytes: 100, PayloadBytesMax: 256},
		"payload too large": {PayloadBytesMax: journal.PayloadBytesLimit + 1},
		"buffer too small":  {BufferBytes: 100, PayloadBytesMax: 256},
		"segment too large": {SegmentBytes: journal.SegmentBytesLimit + 1},
	} {
		if _, err := journal.Open(t.TempDir(), cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A file where a directory should be.
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := journal.Open(f, journal.Config{}); err == nil {
		t.Error("opened a file as a journal directory")
	}
}
