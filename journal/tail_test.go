package journal_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/journal"
)

// TestTailerFollowsAWriter tails a journal while it is written, across many
// segment rolls, and checks every record once, in order, never past the
// durable sequence it was given.
func TestTailerFollowsAWriter(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, smallConfig())
	const n = 3000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s := uint64(0); s < n; s++ {
			if err := w.Append(s, payloadFor(s)); err != nil {
				t.Errorf("append %d: %v", s, err)
				return
			}
			if s%13 == 0 || s == n-1 {
				if err := w.Flush(); err != nil {
					t.Errorf("flush: %v", err)
					return
				}
			}
		}
	}()
	tl, err := journal.NewTailer(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	next := uint64(0)
	for deadline := time.Now().Add(20 * time.Second); next < n; {
		if time.Now().After(deadline) {
			t.Fatalf("tailer stuck at %d", next)
		}
		upTo := w.Durable()
		rec, ok, err := tl.Next(upTo)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			time.Sleep(50 * time.Microsecond)
			continue
		}
		if rec.Seq != next || int64(rec.Seq) > upTo || !bytes.Equal(rec.Payload, payloadFor(rec.Seq)) {
			t.Fatalf("record seq %d (want %d, durable %d)", rec.Seq, next, upTo)
		}
		next++
	}
	<-done
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// From the middle of a later segment.
	tl2, err := journal.NewTailer(dir, 2000)
	if err != nil {
		t.Fatal(err)
	}
	defer tl2.Close()
	rec, ok, err := tl2.Next(n - 1)
	if err != nil || !ok || rec.Seq != 2000 {
		t.Fatalf("from 2000: %v %v %v", rec.Seq, ok, err)
	}
	if _, ok, _ := tl2.Next(1999); ok {
		t.Fatal("tailer read past the limit")
	}
}
