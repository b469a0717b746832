package ring

import (
	"testing"
	"time"
)

// A barrier woken only by call is passed over by publications: a parked
// consumer on it gets no wake-up token from Publish, PublishRange or a
// consumer's WaitFor, while an ordinary barrier parked beside it does; Wake
// gives it one. The parked state is set by hand so that no goroutine races
// the check.
func TestWakeOnlyByCallIgnoresPublications(t *testing.T) {
	for _, mode := range []ProducerMode{MultiProducer, SingleProducer} {
		r := mustNew(t, Config{Slots: 8, SlotSize: 64, Producer: mode})
		byCall, plain := r.NewBarrier(), r.NewBarrier()
		byCall.WakeOnlyByCall()
		for _, b := range []*Barrier{byCall, plain} {
			b.parked.Store(true)
			r.sleepers.Add(1)
		}
		seq, _, err := r.Claim()
		if err != nil {
			t.Fatal(err)
		}
		r.Publish(seq)
		hi, err := r.ClaimN(2)
		if err != nil {
			t.Fatal(err)
		}
		r.PublishRange(hi-1, hi)
		r.Wake()
		if n := len(byCall.wake.ch); n != 0 {
			t.Fatalf("mode %d: publications left %d wake-up tokens for the barrier woken only by call", mode, n)
		}
		if n := len(plain.wake.ch); n != 1 {
			t.Fatalf("mode %d: ordinary parked barrier has %d wake-up tokens after publications, want 1", mode, n)
		}
		byCall.Wake()
		if n := len(byCall.wake.ch); n != 1 {
			t.Fatalf("mode %d: Wake left %d tokens, want 1", mode, n)
		}
	}
}

// A consumer parked on a barrier woken only by call stays parked through a
// publication (its park timeout is an hour) and takes everything published
// once Wake is called, as the pipeline's journal wakes its matcher.
func TestWakeOnlyByCallWakesOnWake(t *testing.T) {
	r := mustNew(t, Config{Slots: 8, SlotSize: 64})
	r.parkTimeout = time.Hour
	b := r.NewBarrier()
	b.WakeOnlyByCall()
	got := make(chan int64, 1)
	go func() {
		avail, err := b.WaitFor(0)
		if err != nil {
			t.Error(err)
		}
		got <- avail
	}()
	waitParked(t, b)
	parks := b.Parks()
	for i := 0; i < 3; i++ {
		seq, _, err := r.Claim()
		if err != nil {
			t.Fatal(err)
		}
		r.Publish(seq)
	}
	if len(b.wake.ch) != 0 || !b.parked.Load() {
		t.Fatal("a publication woke a consumer that only Wake may wake")
	}
	b.Wake()
	select {
	case avail := <-got:
		if avail != 2 {
			t.Fatalf("WaitFor(0) after Wake = %d, want 2", avail)
		}
	case <-time.After(hangLimit):
		t.Fatal("Wake did not wake the parked consumer")
	}
	if b.Parks() != parks {
		t.Fatalf("Parks went from %d to %d without a new park", parks, b.Parks())
	}
}
