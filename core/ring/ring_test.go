package ring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// hangLimit only guards against a test that would otherwise hang forever; no
// test asserts how fast anything is.
const hangLimit = 60 * time.Second

var allStrategies = []WaitStrategy{BusySpin, SpinYield, SpinPark, SpinThenPark}

// Every test item is laid out the same way in its slot: producer id, that
// producer's counter, the sequence the producer claimed, and a word left for
// a first consumer to stamp.
const (
	offProducer = 0
	offCounter  = 8
	offSeq      = 16
	offStamp    = 24
)

func writeItem(slot []byte, producer, counter uint64, seq int64) {
	binary.LittleEndian.PutUint64(slot[offProducer:], producer)
	binary.LittleEndian.PutUint64(slot[offCounter:], counter)
	binary.LittleEndian.PutUint64(slot[offSeq:], uint64(seq))
	binary.LittleEndian.PutUint64(slot[offStamp:], 0)
}

func readItem(slot []byte) (producer, counter uint64, seq int64) {
	return binary.LittleEndian.Uint64(slot[offProducer:]),
		binary.LittleEndian.Uint64(slot[offCounter:]),
		int64(binary.LittleEndian.Uint64(slot[offSeq:]))
}

func mustNew(t testing.TB, cfg Config) *Ring {
	t.Helper()
	r, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return r
}

// newGatedRing is mustNew plus one consumer: its gating sequence and a
// barrier without dependencies.
func newGatedRing(t testing.TB, cfg Config) (*Ring, *Sequence, *Barrier) {
	r := mustNew(t, cfg)
	cons := NewSequence(-1)
	r.AddGatingSequences(cons)
	return r, cons, r.NewBarrier()
}

// waitDone fails the test if done is not closed within hangLimit.
func waitDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(hangLimit):
		t.Fatalf("%s did not finish within %v (hang)", what, hangLimit)
	}
}

// produceItems claims and publishes count items as producer id, retrying on
// ErrBusy, and returns how many claims were refused.
func produceItems(r *Ring, id uint64, count int) (busy int64, err error) {
	for i := 0; i < count; {
		seq, slot, err := r.Claim()
		if errors.Is(err, ErrBusy) {
			busy++
			continue
		}
		if err != nil {
			return busy, fmt.Errorf("producer %d item %d: %w", id, i, err)
		}
		writeItem(slot, id, uint64(i), seq)
		r.Publish(seq)
		i++
	}
	return busy, nil
}

// produceConcurrently starts producers goroutines, each producing
// perProducer items with produceItems (errors reported on t); the group is
// done when they all are.
func produceConcurrently(t *testing.T, r *Ring, producers, perProducer int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := produceItems(r, uint64(p), perProducer); err != nil {
				t.Error(err)
			}
		}()
	}
	return &wg
}

// orderChecker verifies that each producer's items arrive exactly once and in
// order, and that every slot holds the sequence it was read at.
type orderChecker struct {
	nextCounter []uint64
	consumed    int64
}

func newOrderChecker(producers int) *orderChecker {
	return &orderChecker{nextCounter: make([]uint64, producers)}
}

func (c *orderChecker) check(seq int64, slot []byte) error {
	producer, counter, wroteSeq := readItem(slot)
	if wroteSeq != seq {
		return fmt.Errorf("slot read at sequence %d holds sequence %d", seq, wroteSeq)
	}
	if producer >= uint64(len(c.nextCounter)) {
		return fmt.Errorf("sequence %d: unknown producer %d", seq, producer)
	}
	if counter != c.nextCounter[producer] {
		return fmt.Errorf("sequence %d: producer %d item %d, want item %d", seq, producer, counter, c.nextCounter[producer])
	}
	c.nextCounter[producer]++
	c.consumed++
	return nil
}

func (c *orderChecker) complete(perProducer uint64) error {
	for p, n := range c.nextCounter {
		if n != perProducer {
			return fmt.Errorf("producer %d: consumed %d items, want %d", p, n, perProducer)
		}
	}
	return nil
}

// consumeAsync runs consumeAll in a goroutine, reporting its error on t; the
// channel closes when it returns.
func consumeAsync(t *testing.T, r *Ring, b *Barrier, cons *Sequence, total int64, check func(int64, []byte) error) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := consumeAll(r, b, cons, total, check); err != nil {
			t.Error(err)
		}
	}()
	return done
}

// consumeAll reads total items through b, releasing them through seq, and
// checks them with check.
func consumeAll(r *Ring, b *Barrier, seq *Sequence, total int64, check func(int64, []byte) error) error {
	next := seq.Load() + 1
	for next < total {
		avail, err := b.WaitFor(next)
		if err != nil {
			return fmt.Errorf("WaitFor(%d): %w", next, err)
		}
		if avail < next {
			return fmt.Errorf("WaitFor(%d) returned %d without error", next, avail)
		}
		for s := next; s <= avail; s++ {
			if err := check(s, r.Slot(s)); err != nil {
				return err
			}
		}
		seq.Store(avail)
		next = avail + 1
	}
	return nil
}

func TestNewRejectsBadConfig(t *testing.T) {
	good := Config{Slots: 8, SlotSize: 64}
	tests := []struct {
		name   string
		edit   func(*Config)
		errHas string
	}{
		{"zero slots", func(c *Config) { c.Slots = 0 }, "power of two"},
		{"negative slots", func(c *Config) { c.Slots = -8 }, "power of two"},
		{"slots not power of two", func(c *Config) { c.Slots = 12 }, "power of two"},
		{"slot below minimum", func(c *Config) { c.SlotSize = 56 }, "at least 64"},
		{"zero slot size", func(c *Config) { c.SlotSize = 0 }, "at least 64"},
		{"slot not multiple of 8", func(c *Config) { c.SlotSize = 68 }, "multiple of 8"},
		{"too many bytes", func(c *Config) { c.Slots = 1 << 25; c.SlotSize = 64 }, "RingBytesMax"},
		{"unknown producer mode", func(c *Config) { c.Producer = 7 }, "producer mode"},
		{"unknown wait strategy", func(c *Config) { c.Wait = waitStrategyCount }, "wait strategy"},
		{"negative claim timeout", func(c *Config) { c.ClaimTimeout = -time.Millisecond }, "ClaimTimeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good
			tt.edit(&cfg)
			r, err := New(cfg)
			if err == nil {
				t.Fatalf("New(%+v) = %p, nil; want an error", cfg, r)
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("New(%+v) error %q does not mention %q", cfg, err, tt.errHas)
			}
		})
	}
	for _, cfg := range []Config{
		good,
		{Slots: 1, SlotSize: 64, Producer: SingleProducer},
		{Slots: 1 << 12, SlotSize: 128, Wait: BusySpin, ClaimTimeout: DefaultClaimTimeout},
	} {
		r, err := New(cfg)
		if err != nil {
			t.Fatalf("New(%+v): %v", cfg, err)
		}
		if r.Slots() != cfg.Slots || r.SlotSize() != cfg.SlotSize || r.Wait() != cfg.Wait {
			t.Fatalf("New(%+v) = ring of %d slots of %d bytes, wait %v", cfg, r.Slots(), r.SlotSize(), r.Wait())
		}
		if got := len(r.Slot(0)); got != cfg.SlotSize {
			t.Fatalf("len(Slot(0)) = %d, want %d", got, cfg.SlotSize)
		}
		if addr := uintptr(unsafe.Pointer(&r.Slot(0)[0])); addr%slotBaseAlignBytes != 0 {
			t.Fatalf("slot 0 at %#x is not %d-byte aligned", addr, slotBaseAlignBytes)
		}
		last := r.Slot(int64(cfg.Slots - 1))
		if end := uintptr(unsafe.Pointer(&last[0])) + uintptr(len(last)); end != uintptr(unsafe.Pointer(&r.Slot(0)[0]))+uintptr(cfg.Slots*cfg.SlotSize) {
			t.Fatalf("slots are not laid out back to back")
		}
	}
}

func TestWaitStrategyText(t *testing.T) {
	tests := []struct {
		name string
		want WaitStrategy
		ok   bool
	}{
		{"spin", BusySpin, true},
		{"yield", SpinYield, true},
		{"park", SpinPark, true},
		{"block", SpinPark, true},
		{"spinpark", SpinThenPark, true},
		{"", SpinPark, false},
		{"Spin", SpinPark, false},
		{"sleep", SpinPark, false},
	}
	for _, tt := range tests {
		got := SpinYield
		err := got.UnmarshalText([]byte(tt.name))
		if (err == nil) != tt.ok {
			t.Fatalf("UnmarshalText(%q) error = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if !tt.ok {
			want := fmt.Sprintf("unknown wait strategy %q (want spin, yield, park or spinpark)", tt.name)
			if !strings.Contains(err.Error(), want) || got != SpinYield {
				t.Fatalf("UnmarshalText(%q) = %v, %v; want it unchanged and an error containing %q", tt.name, got, err, want)
			}
		}
		if tt.ok && got != tt.want {
			t.Fatalf("UnmarshalText(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	for _, w := range allStrategies {
		text, err := w.MarshalText()
		if err != nil || string(text) != w.String() {
			t.Fatalf("%v.MarshalText() = %q, %v", w, text, err)
		}
		var back WaitStrategy
		if err := back.UnmarshalText(text); err != nil || back != w {
			t.Fatalf("UnmarshalText(%q) = %v, %v; want %v", text, back, err, w)
		}
	}
	if _, err := WaitStrategy(200).MarshalText(); err == nil {
		t.Fatal("MarshalText of an undefined strategy did not fail")
	}
	var zero Config
	if zero.Wait != SpinPark {
		t.Fatalf("zero Config waits with %v, want the default SpinPark", zero.Wait)
	}
	if WaitStrategy(200).Valid() || !strings.Contains(WaitStrategy(200).String(), "200") {
		t.Fatalf("WaitStrategy(200) should be invalid and print its number")
	}
}

func TestClaimPublishConsumeInOneGoroutine(t *testing.T) {
	for _, mode := range []ProducerMode{SingleProducer, MultiProducer} {
		t.Run(mode.String(), func(t *testing.T) {
			r, cons, b := newGatedRing(t, Config{Slots: 4, SlotSize: 64, Producer: mode})
			for lap := int64(0); lap < 3; lap++ {
				for i := int64(0); i < 4; i++ {
					seq, slot, err := r.Claim()
					if err != nil {
						t.Fatalf("Claim: %v", err)
					}
					if want := lap*4 + i; seq != want {
						t.Fatalf("Claim = %d, want %d", seq, want)
					}
					if &slot[0] != &r.Slot(seq)[0] || len(slot) != 64 || cap(slot) != 64 {
						t.Fatalf("Claim's slot does not alias Slot(%d) with len=cap=64", seq)
					}
					writeItem(slot, 0, uint64(seq), seq)
					r.Publish(seq)
				}
				// Everything published is returned as one batch.
				avail, err := b.WaitFor(lap * 4)
				if err != nil || avail != lap*4+3 {
					t.Fatalf("WaitFor(%d) = %d, %v; want %d", lap*4, avail, err, lap*4+3)
				}
				for s := lap * 4; s <= avail; s++ {
					if _, counter, seq := readItem(r.Slot(s)); seq != s || counter != uint64(s) {
						t.Fatalf("slot %d holds seq %d counter %d", s, seq, counter)
					}
				}
				cons.Store(avail)
			}
			if r.Cursor() != 11 {
				t.Fatalf("Cursor = %d, want 11", r.Cursor())
			}
		})
	}
}

func TestMultiProducerConsumersSeeOnlyContiguousPublished(t *testing.T) {
	r := mustNew(t, Config{Slots: 8, SlotSize: 64, Producer: MultiProducer})
	r.AddGatingSequences(NewSequence(-1))
	b := r.NewBarrier()
	for i := 0; i < 3; i++ {
		if _, _, err := r.Claim(); err != nil {
			t.Fatalf("Claim: %v", err)
		}
	}
	r.Publish(2)
	r.Publish(0)
	if avail, err := b.WaitFor(0); err != nil || avail != 0 {
		t.Fatalf("with 0 and 2 published, WaitFor(0) = %d, %v; want 0", avail, err)
	}
	r.Publish(1)
	if avail, err := b.WaitFor(1); err != nil || avail != 2 {
		t.Fatalf("with 0..2 published, WaitFor(1) = %d, %v; want 2", avail, err)
	}
}

func TestSingleProducerRejectsPublishOutOfOrder(t *testing.T) {
	r := mustNew(t, Config{Slots: 8, SlotSize: 64, Producer: SingleProducer})
	r.AddGatingSequences(NewSequence(-1))
	for i := 0; i < 2; i++ {
		if _, _, err := r.Claim(); err != nil {
			t.Fatalf("Claim: %v", err)
		}
	}
	r.Publish(1) // publishes 0 and 1
	for _, seq := range []int64{1, 0, 2} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("Publish(%d) after publishing 1 of 2 claims did not panic", seq)
				}
			}()
			r.Publish(seq)
		}()
	}
}

func TestMultiProducerStress(t *testing.T) {
	const producers = 4
	for _, w := range allStrategies {
		t.Run(w.String(), func(t *testing.T) {
			perProducer := 4000
			if w == BusySpin {
				// Five spinning goroutines share two cores and, under
				// the race detector, each check is slow: keep it short.
				perProducer = 1000
			}
			r, cons, b := newGatedRing(t, Config{Slots: 16, SlotSize: 64, Producer: MultiProducer, Wait: w, ClaimTimeout: DefaultClaimTimeout})
			total := int64(producers * perProducer)

			wg := produceConcurrently(t, r, producers, perProducer)
			checker := newOrderChecker(producers)
			done := consumeAsync(t, r, b, cons, total, checker.check)
			waitDone(t, done, "consumer")
			wg.Wait()
			if err := checker.complete(uint64(perProducer)); err != nil {
				t.Fatal(err)
			}
			if checker.consumed != total || r.Cursor() != total-1 {
				t.Fatalf("consumed %d, cursor %d; want %d items, cursor %d", checker.consumed, r.Cursor(), total, total-1)
			}
			if laps := total / 16; laps < 100 {
				t.Fatalf("only %d laps: the test does not exercise wrap-around", laps)
			}
		})
	}
}

func TestDependentConsumerNeverPassesItsDependency(t *testing.T) {
	const (
		producers   = 2
		perProducer = 3000
		total       = producers * perProducer
		stampMagic  = 0x5eed_f00d
	)
	r := mustNew(t, Config{Slots: 16, SlotSize: 64, Producer: MultiProducer, ClaimTimeout: DefaultClaimTimeout})
	first, second := NewSequence(-1), NewSequence(-1)
	// Gating on the last consumer of the chain is enough: it never passes
	// the first one.
	r.AddGatingSequences(second)
	firstBarrier := r.NewBarrier()
	secondBarrier := r.NewBarrier(first)

	wg := produceConcurrently(t, r, producers, perProducer)
	stamp := func(seq int64, slot []byte) error {
		binary.LittleEndian.PutUint64(slot[offStamp:], uint64(seq)^stampMagic)
		return nil
	}
	firstDone := consumeAsync(t, r, firstBarrier, first, total, stamp)
	checker := newOrderChecker(producers)
	check := func(seq int64, slot []byte) error {
		if got := binary.LittleEndian.Uint64(slot[offStamp:]); got != uint64(seq)^stampMagic {
			return fmt.Errorf("second consumer read sequence %d before the first stamped it", seq)
		}
		return checker.check(seq, slot)
	}
	secondDone := consumeAsync(t, r, secondBarrier, second, total, check)
	waitDone(t, firstDone, "first consumer")
	waitDone(t, secondDone, "second consumer")
	wg.Wait()
	if err := checker.complete(perProducer); err != nil {
		t.Fatal(err)
	}
}

func TestSlowConsumerIsNeverLapped(t *testing.T) {
	const (
		slots = 8
		total = 2000
	)
	for _, mode := range []ProducerMode{SingleProducer, MultiProducer} {
		t.Run(mode.String(), func(t *testing.T) {
			r, cons, b := newGatedRing(t, Config{Slots: slots, SlotSize: 64, Producer: mode, ClaimTimeout: time.Minute})
			produced := make(chan struct{})
			go func() {
				defer close(produced)
				for i := int64(0); i < total; i++ {
					seq, slot, err := r.Claim()
					if err != nil {
						t.Errorf("Claim: %v", err)
						return
					}
					// The consumer has released everything up to
					// cons; the claimed slot must be one of those.
					if released := cons.Load(); seq-released > slots {
						t.Errorf("claimed %d while the consumer had only released %d", seq, released)
					}
					writeItem(slot, 0, uint64(i), seq)
					r.Publish(seq)
				}
			}()
			checker := newOrderChecker(1)
			consumed := make(chan struct{})
			go func() {
				defer close(consumed)
				next := int64(0)
				for next < total {
					avail, err := b.WaitFor(next)
					if err != nil {
						t.Errorf("WaitFor: %v", err)
						return
					}
					for s := next; s <= avail; s++ {
						if err := checker.check(s, r.Slot(s)); err != nil {
							t.Error(err)
							return
						}
					}
					// Hold the batch while the producer runs ahead,
					// then check that nothing in it was overwritten.
					if next%3 == 0 {
						time.Sleep(20 * time.Microsecond)
					} else {
						runtime.Gosched()
					}
					for s := next; s <= avail; s++ {
						if _, _, seq := readItem(r.Slot(s)); seq != s {
							t.Errorf("slot of %d was overwritten by %d while the consumer held it", s, seq)
							return
						}
					}
					cons.Store(avail)
					next = avail + 1
				}
			}()
			waitDone(t, consumed, "slow consumer")
			waitDone(t, produced, "producer")
			if err := checker.complete(total); err != nil {
				t.Fatal(err)
			}
			if r.BusyCount() != 0 {
				t.Fatalf("BusyCount = %d with a one-minute claim timeout", r.BusyCount())
			}
		})
	}
}

func TestBackPressureRefusesThenLosesNothing(t *testing.T) {
	const (
		slots       = 8
		producers   = 3
		perProducer = 300
	)
	for _, mode := range []ProducerMode{MultiProducer, SingleProducer} {
		t.Run(mode.String(), func(t *testing.T) {
			r, cons, b := newGatedRing(t, Config{Slots: slots, SlotSize: 64, Producer: mode, ClaimTimeout: 2 * time.Millisecond})

			// The consumer is stalled: fill the ring, then one more claim
			// must be refused after the bound, claiming nothing.
			for i := 0; i < slots; i++ {
				seq, slot, err := r.Claim()
				if err != nil {
					t.Fatalf("Claim %d of an empty ring: %v", i, err)
				}
				writeItem(slot, 0, uint64(i), seq)
				r.Publish(seq)
			}
			if seq, slot, err := r.Claim(); !errors.Is(err, ErrBusy) || seq != -1 || slot != nil {
				t.Fatalf("Claim on a full ring = %d, %d bytes, %v; want ErrBusy", seq, len(slot), err)
			}
			if r.BusyCount() != 1 || r.Cursor() != slots-1 {
				t.Fatalf("after one refusal: BusyCount %d, Cursor %d; want 1, %d", r.BusyCount(), r.Cursor(), slots-1)
			}
			producerCount := producers
			if mode == SingleProducer {
				producerCount = 1
			}
			// Producers keep trying while the consumer is stalled; the
			// consumer resumes once each of them has been refused.
			var refusedOnce, wg sync.WaitGroup
			busyByProducer := make([]int64, producerCount)
			for p := 0; p < producerCount; p++ {
				refusedOnce.Add(1)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						_, _, err := r.Claim()
						if errors.Is(err, ErrBusy) {
							busyByProducer[p]++
							refusedOnce.Done()
							break
						}
						t.Errorf("Claim with a stalled consumer: %v, want ErrBusy", err)
						refusedOnce.Done()
						return
					}
					id := uint64(p)
					counterStart := 0
					if p == 0 {
						id, counterStart = 0, slots // producer 0 continues the fill above
					}
					for i := counterStart; i < counterStart+perProducer; {
						seq, slot, err := r.Claim()
						if errors.Is(err, ErrBusy) {
							busyByProducer[p]++
							continue
						}
						if err != nil {
							t.Errorf("Claim: %v", err)
							return
						}
						writeItem(slot, id, uint64(i), seq)
						r.Publish(seq)
						i++
					}
				}()
			}
			refusedOnce.Wait()
			total := int64(slots + producerCount*perProducer)
			checker := newOrderChecker(producerCount)
			done := consumeAsync(t, r, b, cons, total, checker.check)
			waitDone(t, done, "consumer")
			wg.Wait()
			if checker.consumed != total || r.Cursor() != total-1 {
				t.Fatalf("consumed %d, cursor %d; want %d, %d (a refused claim left a hole or lost an item)",
					checker.consumed, r.Cursor(), total, total-1)
			}
			for p, n := range checker.nextCounter {
				want := uint64(perProducer)
				if p == 0 {
					want += slots
				}
				if n != want {
					t.Fatalf("producer %d: consumed %d items, want %d", p, n, want)
				}
			}
			var busy int64 = 1
			for _, n := range busyByProducer {
				busy += n
			}
			if r.BusyCount() != busy {
				t.Fatalf("BusyCount = %d, producers saw %d refusals", r.BusyCount(), busy)
			}
		})
	}
}

func TestZeroClaimTimeoutRefusesAtOnce(t *testing.T) {
	r := mustNew(t, Config{Slots: 2, SlotSize: 64, ClaimTimeout: 0})
	cons := NewSequence(-1)
	r.AddGatingSequences(cons)
	for i := 0; i < 2; i++ {
		seq, _, err := r.Claim()
		if err != nil {
			t.Fatalf("Claim: %v", err)
		}
		r.Publish(seq)
	}
	for i := 1; i <= 3; i++ {
		if _, _, err := r.Claim(); !errors.Is(err, ErrBusy) {
			t.Fatalf("Claim on a full ring with no timeout: %v, want ErrBusy", err)
		}
		if r.BusyCount() != int64(i) {
			t.Fatalf("BusyCount = %d, want %d", r.BusyCount(), i)
		}
	}
	cons.Store(0) // release one slot
	if seq, _, err := r.Claim(); err != nil || seq != 2 {
		t.Fatalf("Claim after release = %d, %v; want 2", seq, err)
	}
	if !r.RemoveGatingSequence(cons) || r.RemoveGatingSequence(cons) {
		t.Fatal("RemoveGatingSequence should report true once, then false")
	}
}

// waitParked waits until b's consumer is parked, so the test exercises the
// wake-up of a sleeping consumer and not the spinning one.
func waitParked(t *testing.T, b *Barrier) {
	t.Helper()
	deadline := time.Now().Add(hangLimit)
	for !b.parked.Load() {
		if time.Now().After(deadline) {
			t.Fatal("consumer never parked")
		}
		runtime.Gosched()
	}
}

// wakeParked parks a WaitFor(0) on b, then runs wake, which must make the
// wait return want without error within hangLimit (what names the wake-up).
func wakeParked(t *testing.T, b *Barrier, wake func(), want int64, what string) {
	t.Helper()
	type result struct {
		avail int64
		err   error
	}
	got := make(chan result, 1)
	go func() {
		avail, err := b.WaitFor(0)
		got <- result{avail, err}
	}()
	waitParked(t, b)
	wake()
	select {
	case res := <-got:
		if res.err != nil || res.avail != want {
			t.Fatalf("after %s: WaitFor(0) = %d, %v; want %d", what, res.avail, res.err, want)
		}
	case <-time.After(hangLimit):
		t.Fatalf("%s did not wake the consumer", what)
	}
}

func TestAlertUnblocksWaiter(t *testing.T) {
	for _, w := range allStrategies {
		t.Run(w.String(), func(t *testing.T) {
			r := mustNew(t, Config{Slots: 8, SlotSize: 64, Wait: w})
			r.parkTimeout = time.Hour // only the alert may wake it
			b := r.NewBarrier()
			result := make(chan error, 1)
			go func() {
				_, err := b.WaitFor(0)
				result <- err
			}()
			if w == SpinPark {
				waitParked(t, b)
			}
			b.Alert()
			select {
			case err := <-result:
				if !errors.Is(err, ErrAlerted) {
					t.Fatalf("WaitFor after Alert: %v, want ErrAlerted", err)
				}
			case <-time.After(hangLimit):
				t.Fatal("Alert did not unblock WaitFor")
			}
			if !b.Alerted() {
				t.Fatal("Alerted() = false after Alert")
			}
			b.ClearAlert()
			seq, _, _ := r.Claim()
			r.Publish(seq)
			if avail, err := b.WaitFor(0); err != nil || avail != 0 {
				t.Fatalf("WaitFor after ClearAlert = %d, %v; want 0", avail, err)
			}
		})
	}
}

func TestCloseUnblocksEveryoneAndDrains(t *testing.T) {
	for _, w := range allStrategies {
		t.Run(w.String(), func(t *testing.T) {
			r := mustNew(t, Config{Slots: 4, SlotSize: 64, Wait: w, ClaimTimeout: time.Hour})
			r.parkTimeout = time.Hour
			cons := NewSequence(-1)
			r.AddGatingSequences(cons)
			idle, draining := r.NewBarrier(), r.NewBarrier()
			for i := 0; i < 4; i++ {
				seq, _, _ := r.Claim()
				r.Publish(seq)
			}
			idleResult, producerResult := make(chan error, 1), make(chan error, 1)
			go func() {
				_, err := idle.WaitFor(4) // nothing will ever come
				idleResult <- err
			}()
			go func() {
				_, _, err := r.Claim() // the ring is full for an hour
				producerResult <- err
			}()
			if w == SpinPark {
				waitParked(t, idle)
			}
			r.Close()
			for name, ch := range map[string]chan error{"consumer": idleResult, "producer": producerResult} {
				select {
				case err := <-ch:
					if !errors.Is(err, ErrClosed) {
						t.Fatalf("%s after Close: %v, want ErrClosed", name, err)
					}
				case <-time.After(hangLimit):
					t.Fatalf("Close did not unblock the %s", name)
				}
			}
			if _, _, err := r.Claim(); !errors.Is(err, ErrClosed) || !r.Closed() {
				t.Fatalf("Claim after Close: %v, want ErrClosed", err)
			}
			// What was published before Close is still delivered.
			if avail, err := draining.WaitFor(0); err != nil || avail != 3 {
				t.Fatalf("draining WaitFor(0) = %d, %v; want 3", avail, err)
			}
			if _, err := draining.WaitFor(4); !errors.Is(err, ErrClosed) {
				t.Fatalf("WaitFor past the end of a closed ring: %v, want ErrClosed", err)
			}
		})
	}
}

func TestCloseStillDeliversAnInFlightClaim(t *testing.T) {
	r := mustNew(t, Config{Slots: 4, SlotSize: 64, Producer: MultiProducer})
	r.parkTimeout = time.Hour
	r.AddGatingSequences(NewSequence(-1))
	b := r.NewBarrier()
	seq, _, err := r.Claim()
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	r.Close()
	wakeParked(t, b, func() { r.Publish(seq) }, 0, "publishing the in-flight claim")
}

// TestParkedConsumerWakeUpIsNeverLost sets the park timeout to an hour, so a
// lost wake-up hangs the test instead of being hidden by the safety net.
func TestParkedConsumerWakeUpIsNeverLost(t *testing.T) {
	const items = 400
	for _, mode := range []ProducerMode{SingleProducer, MultiProducer} {
		t.Run(mode.String(), func(t *testing.T) {
			r := mustNew(t, Config{Slots: 8, SlotSize: 64, Producer: mode, Wait: SpinPark, ClaimTimeout: time.Minute})
			r.parkTimeout = time.Hour
			cons := NewSequence(-1)
			r.AddGatingSequences(cons)
			b := r.NewBarrier()
			done := consumeAsync(t, r, b, cons, items, newOrderChecker(1).check)
			for i := 0; i < items; i++ {
				for cons.Load() != int64(i)-1 {
					runtime.Gosched()
				}
				// Half the items are published while the consumer is
				// asleep, half while it is on its way to sleep.
				if i%2 == 0 {
					waitParked(t, b)
				}
				seq, slot, err := r.Claim()
				if err != nil {
					t.Fatalf("Claim: %v", err)
				}
				writeItem(slot, 0, uint64(i), seq)
				r.Publish(seq)
			}
			waitDone(t, done, "consumer (a lost wake-up hangs here)")
		})
	}
}

// TestPublishJustBeforeParkIsNotLost publishes each item from inside the
// window between the consumer's last failed check and its announcement that
// it sleeps. The producer sees no sleeper and sends no wake-up, so only the
// re-check after announcing can find the item; the hour-long park timeout
// turns a lost wake-up into a hang.
func TestPublishJustBeforeParkIsNotLost(t *testing.T) {
	const items = 100
	for _, mode := range []ProducerMode{SingleProducer, MultiProducer} {
		t.Run(mode.String(), func(t *testing.T) {
			r := mustNew(t, Config{Slots: 8, SlotSize: 64, Producer: mode, Wait: SpinPark})
			r.parkTimeout = time.Hour
			cons := NewSequence(-1)
			r.AddGatingSequences(cons)
			b := r.NewBarrier()
			published := 0
			r.beforePark = func(time.Duration) {
				if published == items {
					return
				}
				seq, slot, err := r.Claim()
				if err != nil {
					panic(err)
				}
				writeItem(slot, 0, uint64(published), seq)
				r.Publish(seq)
				published++
			}
			done := consumeAsync(t, r, b, cons, items, newOrderChecker(1).check)
			waitDone(t, done, "consumer (a lost wake-up hangs here)")
			if published != items {
				t.Fatalf("the park window published %d items, want %d", published, items)
			}
		})
	}
}

// TestDependentConsumerWakeUpIsNeverLost checks that a consumer parked on a
// dependency is woken when the consumer it depends on moves, not by the park
// timeout.
func TestDependentConsumerWakeUpIsNeverLost(t *testing.T) {
	const items = 300
	r := mustNew(t, Config{Slots: 8, SlotSize: 64, Producer: SingleProducer, Wait: SpinPark, ClaimTimeout: time.Minute})
	r.parkTimeout = time.Hour
	first, second := NewSequence(-1), NewSequence(-1)
	r.AddGatingSequences(second)
	firstBarrier, secondBarrier := r.NewBarrier(), r.NewBarrier(first)
	firstDone := make(chan struct{})
	go func() {
		defer close(firstDone)
		slow := func(seq int64, slot []byte) error {
			// Give the second consumer time to park on the dependency.
			for i := 0; i < 50; i++ {
				runtime.Gosched()
			}
			return nil
		}
		if err := consumeAll(r, firstBarrier, first, items, slow); err != nil {
			t.Error(err)
		}
		// Like a real consumer, go back to waiting for more, which wakes
		// the dependent one; the alert ends this test.
		if _, err := firstBarrier.WaitFor(items); !errors.Is(err, ErrAlerted) {
			t.Errorf("first consumer's last WaitFor: %v, want ErrAlerted", err)
		}
	}()
	secondDone := consumeAsync(t, r, secondBarrier, second, items, newOrderChecker(1).check)
	if _, err := produceItems(r, 0, items); err != nil {
		t.Fatal(err)
	}
	waitDone(t, secondDone, "dependent consumer (a lost wake-up hangs here)")
	firstBarrier.Alert()
	waitDone(t, firstDone, "first consumer")
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	for _, mode := range []ProducerMode{SingleProducer, MultiProducer} {
		for _, w := range allStrategies {
			t.Run(mode.String()+"/"+w.String(), func(t *testing.T) {
				r, cons, b := newGatedRing(t, Config{Slots: 64, SlotSize: 64, Producer: mode, Wait: w, ClaimTimeout: DefaultClaimTimeout})
				next := int64(0)
				var sum uint64
				allocs := testing.AllocsPerRun(1000, func() {
					seq, slot, err := r.Claim()
					if err != nil {
						panic(err)
					}
					binary.LittleEndian.PutUint64(slot, uint64(seq))
					r.Publish(seq)
					avail, err := b.WaitFor(next)
					if err != nil {
						panic(err)
					}
					for s := next; s <= avail; s++ {
						sum += binary.LittleEndian.Uint64(r.Slot(s))
					}
					cons.Store(avail)
					next = avail + 1
				})
				if allocs != 0 {
					t.Fatalf("claim+publish+WaitFor+consume allocates %v times per item", allocs)
				}
				if next < 1000 || sum == 0 {
					t.Fatalf("the measured function did not run: next %d", next)
				}
			})
		}
	}
}

// TestWakeReleasesConsumerParkedOnForeignSequence: the dependency is stored
// by a goroutine that never calls WaitFor on this ring (as the journal's
// durable sequence would be), so only Wake can end the hour-long park.
func TestWakeReleasesConsumerParkedOnForeignSequence(t *testing.T) {
	r := mustNew(t, Config{Slots: 8, SlotSize: 64, Producer: SingleProducer, Wait: SpinPark})
	r.parkTimeout = time.Hour
	durable := NewSequence(-1)
	cons := NewSequence(-1)
	r.AddGatingSequences(cons)
	b := r.NewBarrier(durable)
	for i := 0; i < 3; i++ {
		seq, slot, _ := r.Claim()
		writeItem(slot, 0, uint64(i), seq)
		r.Publish(seq)
	}
	// The wait returns 1, limited by the dependency.
	wakeParked(t, b, func() { durable.Store(1); r.Wake() }, 1, "Wake of a consumer parked on its dependency")
}

// TestNewBarrierWaitUsesItsOwnStrategy: on a SpinPark ring, a barrier made
// with BusySpin never parks while it waits, and one made with NewBarrier does
// (the pipeline relies on this to let only the matcher spin longer).
func TestNewBarrierWaitUsesItsOwnStrategy(t *testing.T) {
	for _, tt := range []struct {
		name       string
		own        bool
		wantParked bool
	}{{"ring's strategy", false, true}, {"own BusySpin", true, false}} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(Config{Slots: 8, SlotSize: SlotSizeMin, Producer: SingleProducer, Wait: SpinPark, ClaimTimeout: DefaultClaimTimeout})
			if err != nil {
				t.Fatal(err)
			}
			b := r.NewBarrier()
			if tt.own {
				b = r.NewBarrierWait(BusySpin)
			}
			done := make(chan int64, 1)
			go func() {
				avail, _ := b.WaitFor(0)
				done <- avail
			}()
			// A parking consumer is waited for up to hangLimit: its goroutine
			// may not run for a while on a loaded machine, and 50 ms was
			// sometimes over before it had spun and parked. One that must
			// not park is watched for 50 ms, well past its spin.
			watch := 50 * time.Millisecond
			if tt.wantParked {
				watch = hangLimit
			}
			parked := false
			for deadline := time.Now().Add(watch); time.Now().Before(deadline) && !parked; {
				parked = r.sleepers.Load() != 0
				time.Sleep(time.Millisecond)
			}
			if parked != tt.wantParked {
				t.Fatalf("consumer parked = %v, want %v", parked, tt.wantParked)
			}
			seq, _, err := r.Claim()
			if err != nil {
				t.Fatal(err)
			}
			r.Publish(seq)
			select {
			case avail := <-done:
				if avail != 0 {
					t.Fatalf("WaitFor(0) = %d, want 0", avail)
				}
			case <-time.After(hangLimit):
				t.Fatal("consumer never saw the publication")
			}
		})
	}
}

func TestNewBarrierWaitRejectsAnUndefinedStrategy(t *testing.T) {
	r, err := New(Config{Slots: 8, SlotSize: SlotSizeMin, Wait: SpinPark})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("NewBarrierWait(waitStrategyCount) did not panic")
		}
	}()
	r.NewBarrierWait(waitStrategyCount)
}
