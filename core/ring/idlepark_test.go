package ring

import (
	"sync"
	"testing"
	"time"
)

// An idle consumer's parks back off: each park that finds nothing doubles the
// next one's timeout up to parkIdleDoublings doublings, and a consumer that
// gets work starts again from the ring's park timeout. The timeouts are read
// as each park is entered, so the test does not depend on how long the
// timers take.
func TestIdleParkBacksOff(t *testing.T) {
	const base = 20 * time.Microsecond
	r := mustNew(t, Config{Slots: 8, SlotSize: 64, Producer: SingleProducer, Wait: SpinPark})
	r.parkTimeout = base
	cons := NewSequence(-1)
	r.AddGatingSequences(cons)
	b := r.NewBarrier()

	var mu sync.Mutex
	var seen []time.Duration
	r.beforePark = func(d time.Duration) {
		mu.Lock()
		seen = append(seen, d)
		mu.Unlock()
	}
	parks := func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), seen...)
	}
	waitParks := func(n int) []time.Duration {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for len(parks()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d parks after 10s, want %d", len(parks()), n)
			}
			time.Sleep(time.Millisecond)
		}
		return parks()
	}
	publish := func(item uint64) {
		seq, slot, err := r.Claim()
		if err != nil {
			t.Fatal(err)
		}
		writeItem(slot, 0, item, seq)
		r.Publish(seq)
	}
	consume := func(next int64) <-chan int64 {
		got := make(chan int64, 1)
		go func() {
			avail, err := b.WaitFor(next)
			if err != nil {
				t.Error(err)
			}
			cons.Store(avail)
			got <- avail
		}()
		return got
	}

	want := []time.Duration{base, 2 * base, 4 * base, 8 * base, 16 * base, 32 * base, 64 * base, 64 * base, 64 * base}
	got := consume(0)
	idle := waitParks(len(want))
	for i, d := range want {
		if idle[i] != d {
			t.Fatalf("idle park %d: timeout %v, want %v (all: %v)", i, idle[i], d, idle[:len(want)])
		}
	}
	publish(0)
	if avail := <-got; avail != 0 {
		t.Fatalf("WaitFor(0) = %d, want 0", avail)
	}

	// Work came: the next wait starts from the ring's timeout again.
	before := len(parks())
	got = consume(1)
	again := waitParks(before + 2)[before:]
	if again[0] != base || again[1] != 2*base {
		t.Fatalf("parks after work: timeouts %v, want %v then %v", again[:2], base, 2*base)
	}
	publish(1)
	if avail := <-got; avail != 1 {
		t.Fatalf("WaitFor(1) = %d, want 1", avail)
	}
}
