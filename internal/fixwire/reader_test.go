package fixwire

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// TestReaderSplitsStream feeds messages one byte per read, so that every
// message arrives split at every possible place, and checks that they come
// out whole and in order, and that the end of the stream follows.
func TestReaderSplitsStream(t *testing.T) {
	m1 := AppendMessage(nil, "FIX.4.4", fix("35=0|"))
	m2 := AppendMessage(nil, "FIX.4.4", fix("35=1|112=|"))
	m3 := AppendMessage(nil, "FIX.4.4", bytes.Repeat(fix("58=xxxxxxxxxxxxxxxxxxx|"), 400)) // past the first buffer
	stream := bytes.Join([][]byte{m1, m2, m3}, nil)
	r := NewReader(iotest.OneByteReader(bytes.NewReader(stream)), 1<<16)
	for i, want := range [][]byte{m1, m2, m3} {
		got, err := r.Next()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("message %d: %q, %v", i+1, got, err)
		}
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the stream: %v, want EOF", err)
	}
}

func TestReaderKeepsWhatItCouldNotFrame(t *testing.T) {
	r := NewReader(bytes.NewReader(fix("8=FIX.4.4|9=1x|rest")), 1<<16)
	if _, err := r.Next(); !errors.Is(err, ErrBodyLength) {
		t.Fatalf("Next = %v, want ErrBodyLength", err)
	}
	if got := string(r.Buffered()); got != string(fix("8=FIX.4.4|9=1x|rest")) {
		t.Fatalf("Buffered = %q", got)
	}
}

func TestReaderBound(t *testing.T) {
	msg := AppendMessage(nil, "FIX.4.4", fix("35=0|58=abcdefgh|"))
	if _, err := NewReader(bytes.NewReader(msg), len(msg)-1).Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("message over the bound: %v, want ErrTooLarge", err)
	}
	// A bound shorter than a header: the buffer fills without a verdict.
	if _, err := NewReader(bytes.NewReader(msg), 6).Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("bound below the header: %v, want ErrTooLarge", err)
	}
	if got, err := NewReader(bytes.NewReader(msg), len(msg)).Next(); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("message at the bound: %q, %v", got, err)
	}
}

// emptyReader returns no bytes and no error, forever.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderGivesUpOnEmptyReads(t *testing.T) {
	if _, err := NewReader(emptyReader{}, 1024).Next(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("Next = %v, want io.ErrNoProgress", err)
	}
}

// A Reader with its whole buffer up front takes several messages from one
// read and never allocates.
func TestReaderSizeDoesNotAllocate(t *testing.T) {
	m := AppendMessage(nil, "FIX.4.4", fix("35=8|34=1|11=X|"))
	stream := bytes.Repeat(m, 1000)
	src := bytes.NewReader(stream)
	r := NewReaderSize(src, len(m), 4*len(m))
	allocs := testing.AllocsPerRun(500, func() {
		if got, err := r.Next(); err != nil || !bytes.Equal(got, m) {
			t.Fatalf("%q, %v", got, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per message, want 0", allocs)
	}
}
