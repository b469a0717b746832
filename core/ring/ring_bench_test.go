package ring

import (
	"encoding/binary"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Hop benchmarks move b.N items from producer goroutines to one consumer
// goroutine; ns/op is the cost of one item's hand-off. The ring and the
// channels have the same capacity. A ring item is a 64-byte slot of which the
// producer writes 8 bytes; ChanHop sends an 8-byte value, ChanHop64Bytes a
// 64-byte array. items/batch is how many items the ring consumer found per
// WaitFor on average. Results depend heavily on how many
// cores are free: with two cores and anything else running, a spinning
// consumer competes with its own producer.

const (
	hopSlots        = 1024
	hopSlotSizeByte = 64
)

var benchStrategies = []WaitStrategy{BusySpin, SpinYield, SpinPark}

// hopProduce publishes count items, retrying when the ring pushes back.
func hopProduce(b *testing.B, r *Ring, count int) {
	for i := 0; i < count; {
		seq, slot, err := r.Claim()
		if errors.Is(err, ErrBusy) {
			continue
		}
		if err != nil {
			b.Error(err)
			return
		}
		binary.LittleEndian.PutUint64(slot, uint64(i))
		r.Publish(seq)
		i++
	}
}

// hopConsume reads total items and returns the sum of their values, so the
// reads cannot be optimised away.
func hopConsume(b *testing.B, r *Ring, bar *Barrier, cons *Sequence, total int64) uint64 {
	var sum uint64
	batches := 0
	defer func() { b.ReportMetric(float64(total)/float64(max(batches, 1)), "items/batch") }()
	for next := int64(0); next < total; {
		batches++
		avail, err := bar.WaitFor(next)
		if err != nil {
			b.Fatal(err)
		}
		for s := next; s <= avail; s++ {
			sum += binary.LittleEndian.Uint64(r.Slot(s))
		}
		cons.Store(avail)
		next = avail + 1
	}
	return sum
}

func benchRingHop(b *testing.B, mode ProducerMode, w WaitStrategy, producers int) {
	r, cons, bar := newGatedRing(b, Config{Slots: hopSlots, SlotSize: hopSlotSizeByte, Producer: mode, Wait: w, ClaimTimeout: time.Second})
	perProducer := b.N/producers + 1
	total := int64(perProducer * producers)
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hopProduce(b, r, perProducer)
		}()
	}
	sink := hopConsume(b, r, bar, cons, total)
	wg.Wait()
	b.StopTimer()
	if want := uint64(producers) * uint64(perProducer) * uint64(perProducer-1) / 2; sink != want {
		b.Fatalf("consumed sum %d, want %d", sink, want)
	}
}

// BenchmarkRingHop: one producer goroutine → one consumer goroutine through
// a SingleProducer ring of 64-byte slots, 8 bytes written per item.
func BenchmarkRingHop(b *testing.B) {
	for _, w := range benchStrategies {
		b.Run(w.String(), func(b *testing.B) { benchRingHop(b, SingleProducer, w, 1) })
	}
}

// hopBatchItems is how many items the batching producer claims and publishes
// at once, about the events of one busy matcher command.
const hopBatchItems = 8

// BenchmarkRingHopClaimN: RingHop with a producer that claims hopBatchItems
// slots with ClaimN, writes them and publishes them with one PublishRange;
// ns/op is still per item.
func BenchmarkRingHopClaimN(b *testing.B) {
	for _, w := range benchStrategies {
		b.Run(w.String(), func(b *testing.B) {
			r, cons, bar := newGatedRing(b, Config{Slots: hopSlots, SlotSize: hopSlotSizeByte, Producer: SingleProducer, Wait: w, ClaimTimeout: time.Second})
			total := int64(b.N/hopBatchItems+1) * hopBatchItems
			b.ReportAllocs()
			b.ResetTimer()
			go func() {
				for i := int64(0); i < total; {
					hi, err := r.ClaimN(hopBatchItems)
					if errors.Is(err, ErrBusy) {
						continue
					}
					if err != nil {
						b.Error(err)
						return
					}
					for s := hi - hopBatchItems + 1; s <= hi; s++ {
						binary.LittleEndian.PutUint64(r.Slot(s), uint64(i))
						i++
					}
					r.PublishRange(hi-hopBatchItems+1, hi)
				}
			}()
			sink := hopConsume(b, r, bar, cons, total)
			b.StopTimer()
			if want := uint64(total) * uint64(total-1) / 2; sink != want {
				b.Fatalf("consumed sum %d, want %d", sink, want)
			}
		})
	}
}

// BenchmarkRingHopMultiProducer: two producer goroutines claiming by CAS →
// one consumer.
func BenchmarkRingHopMultiProducer(b *testing.B) {
	for _, w := range benchStrategies {
		b.Run(w.String(), func(b *testing.B) { benchRingHop(b, MultiProducer, w, 2) })
	}
}

// BenchmarkChanHop: the same hand-off through a buffered channel of the ring's
// capacity.
func BenchmarkChanHop(b *testing.B) {
	ch := make(chan uint64, hopSlots)
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		for i := 0; i < b.N; i++ {
			ch <- uint64(i)
		}
	}()
	var sum uint64
	for i := 0; i < b.N; i++ {
		sum += <-ch
	}
	b.StopTimer()
	if want := uint64(b.N) * uint64(b.N-1) / 2; sum != want {
		b.Fatalf("consumed sum %d, want %d", sum, want)
	}
}

// BenchmarkChanHop64Bytes: the channel hop with the ring's payload, a 64-byte
// array per item, so that the channel copies as many bytes as one ring slot
// holds. BenchmarkChanHop (an 8-byte value) flatters the channel; both are
// reported.
func BenchmarkChanHop64Bytes(b *testing.B) {
	ch := make(chan [hopSlotSizeByte]byte, hopSlots)
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		var item [hopSlotSizeByte]byte
		for i := 0; i < b.N; i++ {
			binary.LittleEndian.PutUint64(item[:], uint64(i))
			ch <- item
		}
	}()
	var sum uint64
	for i := 0; i < b.N; i++ {
		item := <-ch
		sum += binary.LittleEndian.Uint64(item[:])
	}
	b.StopTimer()
	if want := uint64(b.N) * uint64(b.N-1) / 2; sum != want {
		b.Fatalf("consumed sum %d, want %d", sum, want)
	}
}

// BenchmarkClaimPublishConsume: the uncontended cost of one item in one
// goroutine (no hand-off), and proof that it does not allocate.
func BenchmarkClaimPublishConsume(b *testing.B) {
	for _, mode := range []ProducerMode{SingleProducer, MultiProducer} {
		b.Run(mode.String(), func(b *testing.B) {
			r, cons, bar := newGatedRing(b, Config{Slots: hopSlots, SlotSize: hopSlotSizeByte, Producer: mode})
			var sum uint64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				seq, slot, err := r.Claim()
				if err != nil {
					b.Fatal(err)
				}
				binary.LittleEndian.PutUint64(slot, uint64(i))
				r.Publish(seq)
				if _, err := bar.WaitFor(seq); err != nil {
					b.Fatal(err)
				}
				sum += binary.LittleEndian.Uint64(r.Slot(seq))
				cons.Store(seq)
			}
			if sum != uint64(b.N)*uint64(b.N-1)/2 {
				b.Fatal("wrong sum")
			}
		})
	}
}

// floorRing is the least a one-item hand-off between two goroutines can do:
// one producer, one consumer, a cursor stored once per item and the
// consumer's position stored once per batch, both busy-spinning, no wait
// strategy, no gating list, no timeout, no close. It exists only to measure
// the floor of BenchmarkRingHop on the machine at hand.
type floorRing struct {
	buf    []byte
	_      cacheLinePad
	cursor atomic.Int64
	_      cacheLinePad
	cons   atomic.Int64
	_      cacheLinePad
}

// BenchmarkFloorHop moves b.N items through a floorRing with the capacity
// and slot size of BenchmarkRingHop. Against BenchmarkChanHop it bounds what
// any ring can gain one item at a time here: each item still moves the
// cursor's cache line and the slot's between the two cores.
func BenchmarkFloorHop(b *testing.B) {
	r := &floorRing{buf: make([]byte, hopSlots*hopSlotSizeByte)}
	r.cursor.Store(-1)
	r.cons.Store(-1)
	total := int64(b.N)
	slot := func(s int64) []byte {
		at := (s & (hopSlots - 1)) * hopSlotSizeByte
		return r.buf[at : at+hopSlotSizeByte]
	}
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		consumed := int64(-1) // the consumer's position as last read
		for i := int64(0); i < total; i++ {
			for i-hopSlots > consumed {
				if consumed = r.cons.Load(); i-hopSlots > consumed {
					runtime.Gosched()
				}
			}
			binary.LittleEndian.PutUint64(slot(i), uint64(i))
			r.cursor.Store(i)
		}
	}()
	var sum uint64
	batches := 0
	for next := int64(0); next < total; {
		avail := r.cursor.Load()
		for spins := 1; avail < next; spins++ {
			if spins%busySpinYieldEvery == 0 {
				runtime.Gosched() // with one P the producer runs only then
			}
			avail = r.cursor.Load()
		}
		batches++
		for s := next; s <= avail; s++ {
			sum += binary.LittleEndian.Uint64(slot(s))
		}
		r.cons.Store(avail)
		next = avail + 1
	}
	b.StopTimer()
	b.ReportMetric(float64(total)/float64(max(batches, 1)), "items/batch")
	if want := uint64(total) * uint64(total-1) / 2; sum != want {
		b.Fatalf("consumed sum %d, want %d", sum, want)
	}
}
