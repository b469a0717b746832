package eventstream

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// tapTestEvent writes the event of ring sequence n (command cause): a Fill
// whose LastQty is n, so that every event is distinct.
func tapTestEvent(t *testing.T, slot []byte, cause uint64, n int64) []byte {
	var f venue.Fill
	if err := f.WrapEncode(slot, 0); err != nil {
		t.Error(err)
		return nil
	}
	f.SetCauseSeq(cause)
	f.SetLastQty(n)
	return slot[:eventLen(slot)]
}

// TestTapCopiesInOrderAndDropsWhenFull: a producer publishes commands of
// one to three events into a real ring while the reader takes the tap's
// events slowly at first; the tap never holds the producer back (a full
// tap drops), every event it keeps is the ring's, with its command's index,
// in order, and kept plus dropped is everything published.
func TestTapCopiesInOrderAndDropsWhenFull(t *testing.T) {
	r, err := ring.New(ring.Config{Slots: 256, SlotSize: core.EventSlotMin, Producer: ring.SingleProducer,
		ClaimTimeout: ring.DefaultClaimTimeout})
	if err != nil {
		t.Fatal(err)
	}
	seq := ring.NewSequence(-1)
	r.AddGatingSequences(seq)
	var applied atomic.Int64
	applied.Store(99) // commands start at seq 100
	tap, err := NewTap(TapSource{Ring: r, Sequence: seq, SeqBase: 100, Applied: applied.Load}, 64)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		tap.Run(stop, 100*time.Microsecond)
	}()

	const commands = 2000
	expected := make([][]byte, 0, 4*commands) // by ring sequence
	indexes := make([]uint32, 0, 4*commands)
	produced := make(chan error, 1)
	go func() {
		n := int64(0)
		for c := 0; c < commands; c++ {
			cause := uint64(100 + c)
			for i := 0; i < 1+c%3; i++ {
				s, slot, err := r.Claim()
				if err != nil {
					produced <- err
					return
				}
				ev := tapTestEvent(t, slot, cause, n)
				expected = append(expected, append([]byte(nil), ev...))
				indexes = append(indexes, uint32(i))
				r.Publish(s)
				n++
			}
			applied.Store(int64(cause))
		}
		produced <- nil
	}()

	// Read slowly until the producer is done (the tap overflows), then
	// drain: bounded by a deadline.
	type got struct {
		ringSeq int64
		index   uint32
		bytes   []byte
	}
	var kept []got
	done := false
	for deadline := time.Now().Add(30 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatal("the tap did not deliver the producer's events in time")
		}
		if !done {
			select {
			case err := <-produced:
				if err != nil {
					t.Fatalf("the producer was held back: %v", err)
				}
				done = true
			default:
				time.Sleep(time.Millisecond)
			}
		}
		for h := tap.head(); h != nil; h = tap.head() {
			kept = append(kept, got{h.ringSeq, h.index, append([]byte(nil), h.bytes[:h.n]...)})
			tap.pop()
			if !done {
				break // one per millisecond while the producer runs
			}
		}
		if done && tap.seen.Load() == int64(len(expected))-1 && tap.head() == nil {
			break
		}
	}
	close(stop)
	<-copied

	total := int64(len(expected))
	if tap.Dropped() == 0 {
		t.Fatal("a slow reader made the tap drop nothing")
	}
	if int64(len(kept))+tap.Dropped() != total {
		t.Fatalf("kept %d + dropped %d != published %d", len(kept), tap.Dropped(), total)
	}
	prev := int64(-1)
	for _, g := range kept {
		if g.ringSeq <= prev {
			t.Fatalf("ring sequence %d after %d", g.ringSeq, prev)
		}
		prev = g.ringSeq
		if !bytes.Equal(g.bytes, expected[g.ringSeq]) || g.index != indexes[g.ringSeq] {
			t.Fatalf("entry of ring sequence %d: index %d (want %d), bytes differ: %v", g.ringSeq, g.index,
				indexes[g.ringSeq], !bytes.Equal(g.bytes, expected[g.ringSeq]))
		}
	}
	if c := tap.complete.Load(); c != 100+commands-1 {
		t.Fatalf("complete %d, want %d", c, 100+commands-1)
	}
	if seq.Load() != total-1 {
		t.Fatalf("the tap released the ring up to %d, want %d", seq.Load(), total-1)
	}
}
