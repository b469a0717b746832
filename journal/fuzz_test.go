package journal_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fixvenue/fixvenue/journal"
)

// fuzzSegmentName is the one segment a fuzz input becomes: first seq 0.
const fuzzSegmentName = "journal-00000000000000000000.seg"

// fuzzHeader is a valid header for a segment of sizeBytes starting at seq 0,
// built from the layout in doc.go (not from the package's encoder, so the
// test also checks the documentation).
func fuzzHeader(sizeBytes int) []byte {
	h := make([]byte, journal.SegmentHeaderBytes)
	copy(h, "FVJOURNL")
	binary.LittleEndian.PutUint16(h[8:], journal.FormatVersion)
	binary.LittleEndian.PutUint16(h[10:], journal.SegmentHeaderBytes)
	binary.LittleEndian.PutUint64(h[24:], uint64(sizeBytes))
	binary.LittleEndian.PutUint32(h[60:], crc32.Checksum(h[:60], crc32.MakeTable(crc32.Castagnoli)))
	return h
}

// fuzzFrame builds a record frame from the layout in doc.go.
func fuzzFrame(seq uint64, payload []byte) []byte {
	f := make([]byte, journal.FrameHeaderBytes+len(payload))
	binary.LittleEndian.PutUint32(f[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(f[8:], seq)
	copy(f[16:], payload)
	binary.LittleEndian.PutUint32(f[4:], crc32.Checksum(f[8:], crc32.MakeTable(crc32.Castagnoli)))
	return f
}

// fuzzSegmentBytes turns a fuzz input into segment file bytes. With raw
// set, the input is the whole file (header parsing is fuzzed); otherwise it
// is the body after a valid header, padded to the minimum segment size.
func fuzzSegmentBytes(raw bool, body []byte) []byte {
	if raw {
		return body
	}
	size := max(journal.SegmentHeaderBytes+len(body), journal.SegmentHeaderBytes+journal.FrameHeaderBytes+1)
	file := make([]byte, size)
	copy(file, fuzzHeader(size))
	copy(file[journal.SegmentHeaderBytes:], body)
	return file
}

// scanAll reads dir to the end and returns the payloads or the error.
func scanAll(dir string) ([][]byte, *journal.TailDamage, error) {
	r, err := journal.NewReader(dir, journal.ReaderOptions{Logger: quietLogger()})
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var out [][]byte
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, r.Tail(), nil
		}
		if err != nil {
			return out, nil, err
		}
		if rec.Seq != uint64(len(out)) {
			return out, nil, errors.New("reader returned a sequence gap")
		}
		out = append(out, append([]byte(nil), rec.Payload...))
	}
}

// FuzzSegment feeds arbitrary segment bytes to the reader and to recovery.
// They must never panic; the reader either reads records or reports
// corruption; and when recovery accepts the segment, it leaves a journal
// that reads back cleanly with the same records and accepts appends.
func FuzzSegment(f *testing.F) {
	valid := append(append(fuzzFrame(0, []byte("first")), fuzzFrame(1, []byte("second record"))...), fuzzFrame(2, []byte{9})...)
	f.Add(false, valid)
	f.Add(false, valid[:len(valid)-3])                                 // torn last record
	f.Add(false, append(append([]byte(nil), valid...), 0, 0, 0, 0, 7)) // garbage after the end marker
	f.Add(false, append(fuzzFrame(0, []byte("a")), fuzzFrame(5, []byte("gap"))...))
	f.Add(false, []byte{0xff, 0xff, 0xff, 0xff})
	f.Add(true, append(fuzzHeader(journal.SegmentHeaderBytes+len(valid)), valid...))
	f.Add(true, []byte("FVJOURNL"))
	f.Fuzz(func(t *testing.T, raw bool, body []byte) {
		if len(body) > 1<<20 {
			return
		}
		dir := t.TempDir()
		path := filepath.Join(dir, fuzzSegmentName)
		if err := os.WriteFile(path, fuzzSegmentBytes(raw, body), 0o640); err != nil {
			t.Fatal(err)
		}
		before, tail, err := scanAll(dir)
		if err != nil {
			if !errors.Is(err, journal.ErrCorrupt) {
				t.Fatalf("reader error that is not corruption: %v", err)
			}
			if _, oerr := journal.Open(dir, journal.Config{SegmentBytes: 4096, PayloadBytesMax: 256, Sync: skipSync, Logger: quietLogger()}); !errors.Is(oerr, journal.ErrCorrupt) {
				t.Fatalf("reader reports %v but Open says %v", err, oerr)
			}
			return
		}
		w, err := journal.Open(dir, journal.Config{SegmentBytes: 4096, PayloadBytesMax: 256, Sync: skipSync, Logger: quietLogger()})
		if err != nil {
			t.Fatalf("reader accepted the segment, Open refused: %v", err)
		}
		if got := w.Recovery(); got.Records != int64(len(before)) || (got.Tail == nil) != (tail == nil) {
			t.Fatalf("recovery %+v, reader saw %d records, tail %+v", got, len(before), tail)
		}
		next := w.NextSeq()
		appendErr := w.Append(next, []byte("after recovery"))
		if err := w.Close(); err != nil && appendErr == nil {
			t.Fatal(err)
		}
		after, tailAfter, err := scanAll(dir)
		if err != nil || tailAfter != nil {
			t.Fatalf("after recovery: %v, tail %+v", err, tailAfter)
		}
		want := len(before)
		if appendErr == nil {
			want++
		}
		if len(after) != want {
			t.Fatalf("%d records after recovery and one append, want %d", len(after), want)
		}
		for i := range before {
			if string(after[i]) != string(before[i]) {
				t.Fatalf("record %d changed by recovery", i)
			}
		}
	})
}
