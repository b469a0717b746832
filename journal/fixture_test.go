package journal_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/fixvenue/fixvenue/journal"
)

// payloadFor returns a deterministic payload for seq whose length varies
// between 1 and 200 bytes, so frames straddle buffer and segment edges.
func payloadFor(seq uint64) []byte {
	n := 1 + int((seq*7919)%200)
	p := make([]byte, n)
	x := seq*0x9E3779B97F4A7C15 + 1
	for i := range p {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		p[i] = byte(x)
	}
	return p
}

// smallConfig makes segments of a few KiB so that tests roll often.
func smallConfig() journal.Config {
	return journal.Config{SegmentBytes: 4096, PayloadBytesMax: 256, BufferBytes: 1024}
}

// appendRange appends seqs [from, to) with payloadFor, flushing every
// flushEvery records and at the end.
// openWriter opens the journal in dir with cfg, failing the test on error.
func openWriter(t testing.TB, dir string, cfg journal.Config) *journal.Writer {
	t.Helper()
	w, err := journal.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func appendRange(t testing.TB, w *journal.Writer, from, to uint64, flushEvery int) {
	t.Helper()
	for s := from; s < to; s++ {
		if err := w.Append(s, payloadFor(s)); err != nil {
			t.Fatalf("append %d: %v", s, err)
		}
		if flushEvery > 0 && int(s-from+1)%flushEvery == 0 {
			if err := w.Flush(); err != nil {
				t.Fatalf("flush at %d: %v", s, err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

// eachRecord reads every record of dir with a Reader made with opts and
// calls each on it in order (rec.Payload is valid until the next call),
// failing the test on a read error. It returns the number of records read
// and the reader's tail.
func eachRecord(t testing.TB, dir string, opts journal.ReaderOptions, each func(rec journal.Record)) (int, *journal.TailDamage) {
	t.Helper()
	r, err := journal.NewReader(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for rec, err := range r.All() {
		if err != nil {
			t.Fatalf("read after %d records: %v", n, err)
		}
		each(rec)
		n++
	}
	return n, r.Tail()
}

// readAll reads every record of dir with a Reader and checks each payload
// against payloadFor. It returns the seqs read and the reader's tail.
func readAll(t testing.TB, dir string) ([]uint64, *journal.TailDamage) {
	t.Helper()
	var seqs []uint64
	_, tail := eachRecord(t, dir, journal.ReaderOptions{}, func(rec journal.Record) {
		if !bytes.Equal(rec.Payload, payloadFor(rec.Seq)) {
			t.Fatalf("seq %d: payload differs (segment %s offset %d)", rec.Seq, rec.Segment, rec.Offset)
		}
		seqs = append(seqs, rec.Seq)
	})
	return seqs, tail
}

// segmentPaths lists the segment files of dir in order.
func segmentPaths(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "journal-*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

// copyDir copies the regular files of src into a new temporary directory.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// syncRecorder wraps DefaultSync, counting calls by kind, and can block or
// fail chosen calls.
type syncRecorder struct {
	mu     sync.Mutex
	counts map[journal.SyncKind]int
	// failData, when set, is returned by the SyncData call number failAt (1-based).
	failData error
	failAt   int
	// failKind/failKindErr fail every call of that kind.
	failKind    journal.SyncKind
	failKindErr error
	// gate, when set, makes SyncData calls announce themselves on entered
	// and wait for release.
	entered chan struct{}
	release chan struct{}
}

func newSyncRecorder() *syncRecorder {
	return &syncRecorder{counts: map[journal.SyncKind]int{}}
}

// recordedConfig is smallConfig with its syncs going to a new syncRecorder.
func recordedConfig() (*syncRecorder, journal.Config) {
	rec := newSyncRecorder()
	cfg := smallConfig()
	cfg.Sync = rec.sync
	return rec, cfg
}

func (s *syncRecorder) sync(f *os.File, kind journal.SyncKind) error {
	s.mu.Lock()
	s.counts[kind]++
	n := s.counts[kind]
	failData, failAt := s.failData, s.failAt
	failKindErr := s.failKindErr
	failKind := s.failKind
	entered, release := s.entered, s.release
	s.mu.Unlock()
	if failKindErr != nil && kind == failKind {
		return failKindErr
	}
	if kind == journal.SyncData {
		if failData != nil && n == failAt {
			return failData
		}
		if entered != nil {
			entered <- struct{}{}
			<-release
		}
	}
	return journal.DefaultSync(f, kind)
}

func (s *syncRecorder) count(kind journal.SyncKind) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[kind]
}

// skipSync is a SyncFunc for the exhaustive damage loops, which open and
// repair a journal hundreds of times: what they check is the bytes that
// recovery reads and writes, not the disk cache, and a real fsync per
// iteration would make them take minutes on a busy machine. Every other
// test syncs for real.
func skipSync(*os.File, journal.SyncKind) error { return nil }

// TestRecords: Records yields what a Reader yields, in order, stops where
// the loop stops, and reports a journal it cannot open as its one value.
func TestRecords(t *testing.T) {
	dir := writeJournal(t, 40, 5)
	var want []uint64
	eachRecord(t, dir, journal.ReaderOptions{FromSeq: 7}, func(rec journal.Record) { want = append(want, rec.Seq) })
	var got []uint64
	for rec, err := range journal.Records(dir, journal.ReaderOptions{FromSeq: 7}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rec.Seq)
	}
	if len(want) != 33 || !slices.Equal(got, want) {
		t.Fatalf("Records gave seqs %v, the reader %v (want 7..39)", got, want)
	}
	n := 0
	for range journal.Records(dir, journal.ReaderOptions{}) {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Fatalf("the loop ran %d times, want 3", n)
	}
	missing := filepath.Join(t.TempDir(), "none", "deeper")
	if err := os.WriteFile(filepath.Join(filepath.Dir(filepath.Dir(missing)), "none"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	values := 0
	for _, err := range journal.Records(missing, journal.ReaderOptions{}) {
		values++
		if err == nil {
			t.Fatal("a journal under a file opened without an error")
		}
	}
	if values != 1 {
		t.Fatalf("%d values for a journal that cannot be opened, want 1", values)
	}
}
