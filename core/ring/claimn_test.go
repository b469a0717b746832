package ring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// mustPanic fails the test unless f panics.
func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatalf("%s did not panic", what)
		}
	}()
	f()
}

// TestClaimNPublishRangeInOneGoroutine claims batches of different sizes
// across several laps, so batches straddle the end of the buffer, and checks
// that each batch is published whole and read back intact.
func TestClaimNPublishRangeInOneGoroutine(t *testing.T) {
	for _, mode := range []ProducerMode{SingleProducer, MultiProducer} {
		t.Run(mode.String(), func(t *testing.T) {
			r, cons, b := newGatedRing(t, Config{Slots: 8, SlotSize: 64, Producer: mode})
			next := int64(0)
			for i, n := range []int{3, 5, 1, 8, 2, 7, 4, 6, 8} {
				hi, err := r.ClaimN(n)
				if err != nil {
					t.Fatalf("batch %d: ClaimN(%d): %v", i, n, err)
				}
				lo := hi - int64(n) + 1
				if lo != next {
					t.Fatalf("batch %d: ClaimN(%d) = %d, want %d", i, n, hi, next+int64(n)-1)
				}
				for s := lo; s <= hi; s++ {
					writeItem(r.Slot(s), 0, uint64(s), s)
				}
				if got := r.Cursor(); mode == SingleProducer && got != lo-1 {
					t.Fatalf("batch %d: single-producer Cursor = %d before PublishRange, want %d", i, got, lo-1)
				}
				r.PublishRange(lo, hi)
				avail, err := b.WaitFor(lo)
				if err != nil || avail != hi {
					t.Fatalf("batch %d: WaitFor(%d) = %d, %v; want %d", i, lo, avail, err, hi)
				}
				for s := lo; s <= hi; s++ {
					if _, counter, seq := readItem(r.Slot(s)); seq != s || counter != uint64(s) {
						t.Fatalf("slot %d holds seq %d counter %d", s, seq, counter)
					}
				}
				cons.Store(hi)
				next = hi + 1
			}
			if r.Cursor() != next-1 {
				t.Fatalf("Cursor = %d, want %d", r.Cursor(), next-1)
			}
		})
	}
}

// TestClaimNIsAllOrNothing: a batch that does not fit is refused whole with
// ErrBusy after the timeout, the cursor does not move (no hole), and smaller
// claims that fit still succeed.
func TestClaimNIsAllOrNothing(t *testing.T) {
	for _, mode := range []ProducerMode{SingleProducer, MultiProducer} {
		for _, timeout := range []time.Duration{0, time.Millisecond} {
			t.Run(mode.String()+"/"+timeout.String(), func(t *testing.T) {
				r, cons, b := newGatedRing(t, Config{Slots: 8, SlotSize: 64, Producer: mode, ClaimTimeout: timeout})
				hi, err := r.ClaimN(6)
				if err != nil || hi != 5 {
					t.Fatalf("ClaimN(6) on an empty ring = %d, %v; want 5", hi, err)
				}
				r.PublishRange(0, 5)
				if hi, err := r.ClaimN(3); !errors.Is(err, ErrBusy) || hi != -1 {
					t.Fatalf("ClaimN(3) with 2 slots free = %d, %v; want -1, ErrBusy", hi, err)
				}
				if r.Cursor() != 5 || r.BusyCount() != 1 {
					t.Fatalf("after a refused ClaimN: Cursor %d, BusyCount %d; want 5, 1", r.Cursor(), r.BusyCount())
				}
				if hi, err := r.ClaimN(2); err != nil || hi != 7 {
					t.Fatalf("ClaimN(2) with 2 slots free = %d, %v; want 7", hi, err)
				}
				r.PublishRange(6, 7)
				if avail, err := b.WaitFor(0); err != nil || avail != 7 {
					t.Fatalf("WaitFor(0) = %d, %v; want 7: a refused batch must leave no hole", avail, err)
				}
				cons.Store(2) // three slots free again
				if hi, err := r.ClaimN(3); err != nil || hi != 10 {
					t.Fatalf("ClaimN(3) after releasing 3 = %d, %v; want 10", hi, err)
				}
				r.PublishRange(8, 10)
				r.Close()
				if hi, err := r.ClaimN(1); !errors.Is(err, ErrClosed) || hi != -1 {
					t.Fatalf("ClaimN after Close = %d, %v; want -1, ErrClosed", hi, err)
				}
			})
		}
	}
}

func TestClaimNAndPublishRangeRejectMisuse(t *testing.T) {
	for _, mode := range []ProducerMode{SingleProducer, MultiProducer} {
		t.Run(mode.String(), func(t *testing.T) {
			r := mustNew(t, Config{Slots: 8, SlotSize: 64, Producer: mode})
			r.AddGatingSequences(NewSequence(-1))
			for _, n := range []int{0, -1, 9} {
				mustPanic(t, fmt.Sprintf("ClaimN(%d)", n), func() { _, _ = r.ClaimN(n) })
			}
			if r.Cursor() != -1 {
				t.Fatalf("a rejected ClaimN moved the cursor to %d", r.Cursor())
			}
			hi, err := r.ClaimN(8) // a whole ring fits in one batch
			if err != nil || hi != 7 {
				t.Fatalf("ClaimN(8) on an empty 8-slot ring = %d, %v; want 7", hi, err)
			}
			mustPanic(t, "PublishRange(3, 2)", func() { r.PublishRange(3, 2) })
			mustPanic(t, "PublishRange(0, 8), longer than the ring", func() { r.PublishRange(0, 8) })
			if mode == SingleProducer {
				r.PublishRange(0, 3)
				mustPanic(t, "PublishRange(3, 5) overlapping what is published", func() { r.PublishRange(3, 5) })
				mustPanic(t, "PublishRange(4, 8) past the claim", func() { r.PublishRange(4, 8) })
				r.PublishRange(6, 7) // also publishes 4 and 5, as Publish(7) would
				if r.Cursor() != 7 {
					t.Fatalf("Cursor = %d, want 7", r.Cursor())
				}
			}
		})
	}
}

// produceBatches writes count items of producer p, claimed with ClaimN and
// published with PublishRange batchSize(i) at a time (i items written so
// far; the last batch is cut to what is left).
func produceBatches(t *testing.T, r *Ring, p uint64, count int, batchSize func(i int) int) {
	for i := 0; i < count; {
		n := min(batchSize(i), count-i)
		hi, err := r.ClaimN(n)
		if errors.Is(err, ErrBusy) {
			continue
		}
		if err != nil {
			t.Error(err)
			return
		}
		lo := hi - int64(n) + 1
		for s := lo; s <= hi; s++ {
			writeItem(r.Slot(s), p, uint64(i), s)
			i++
		}
		r.PublishRange(lo, hi)
	}
}

// TestMultiProducerClaimNStress: producers claim batches of 1 to 4 slots
// concurrently on a small ring and publish each batch at once; the consumer
// must see every producer's items exactly once and in order.
func TestMultiProducerClaimNStress(t *testing.T) {
	const (
		producers   = 3
		perProducer = 3000
		slots       = 16
	)
	for _, w := range allStrategies {
		t.Run(w.String(), func(t *testing.T) {
			r, cons, b := newGatedRing(t, Config{Slots: slots, SlotSize: 64, Producer: MultiProducer, Wait: w, ClaimTimeout: DefaultClaimTimeout})
			var wg sync.WaitGroup
			for p := 0; p < producers; p++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					produceBatches(t, r, uint64(p), perProducer, func(i int) int { return 1 + (i+p)%4 })
				}()
			}
			total := int64(producers * perProducer)
			checker := newOrderChecker(producers)
			done := consumeAsync(t, r, b, cons, total, checker.check)
			waitDone(t, done, "consumer")
			wg.Wait()
			if err := checker.complete(perProducer); err != nil {
				t.Fatal(err)
			}
			if r.Cursor() != total-1 {
				t.Fatalf("cursor %d, want %d", r.Cursor(), total-1)
			}
		})
	}
}

// TestSingleProducerClaimNAcrossGoroutines: one producer goroutine writes
// batches while a consumer reads them, through many laps of a small ring.
func TestSingleProducerClaimNAcrossGoroutines(t *testing.T) {
	const (
		items = 20000
		slots = 16
	)
	for _, w := range allStrategies {
		t.Run(w.String(), func(t *testing.T) {
			r, cons, b := newGatedRing(t, Config{Slots: slots, SlotSize: 64, Producer: SingleProducer, Wait: w, ClaimTimeout: DefaultClaimTimeout})
			go produceBatches(t, r, 0, items, func(i int) int { return 1 + i%slots })
			checker := newOrderChecker(1)
			done := consumeAsync(t, r, b, cons, items, checker.check)
			waitDone(t, done, "consumer")
			if err := checker.complete(items); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestClaimNDoesNotAllocate(t *testing.T) {
	for _, mode := range []ProducerMode{SingleProducer, MultiProducer} {
		t.Run(mode.String(), func(t *testing.T) {
			r, cons, b := newGatedRing(t, Config{Slots: 64, SlotSize: 64, Producer: mode, ClaimTimeout: DefaultClaimTimeout})
			next := int64(0)
			allocs := testing.AllocsPerRun(1000, func() {
				hi, err := r.ClaimN(4)
				if err != nil {
					panic(err)
				}
				for s := hi - 3; s <= hi; s++ {
					binary.LittleEndian.PutUint64(r.Slot(s), uint64(s))
				}
				r.PublishRange(hi-3, hi)
				avail, err := b.WaitFor(next)
				if err != nil {
					panic(err)
				}
				cons.Store(avail)
				next = avail + 1
			})
			if allocs != 0 {
				t.Fatalf("ClaimN+PublishRange+WaitFor allocates %v times per batch", allocs)
			}
			if next < 4000 {
				t.Fatalf("the measured function did not run: next %d", next)
			}
		})
	}
}
