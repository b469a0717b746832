package ring

import (
	"errors"
	"testing"
	"time"
)

// The single producer of a SpinPark ring parks when the ring is full and a
// consumer that frees space wakes it. These tests make every park an hour
// long and the claim timeout a minute, so a lost wake-up shows as a hang.

func newSpaceWaitRing(t *testing.T) (*Ring, *Sequence, *Barrier) {
	t.Helper()
	r := mustNew(t, Config{Slots: 8, SlotSize: 64, Producer: SingleProducer, Wait: SpinPark, ClaimTimeout: time.Minute})
	r.parkTimeout = time.Hour
	cons := NewSequence(-1)
	r.AddGatingSequences(cons)
	return r, cons, r.NewBarrier()
}

// fill claims and publishes the whole ring.
func fill(t *testing.T, r *Ring) {
	t.Helper()
	for i := 0; i < r.Slots(); i++ {
		seq, slot, err := r.Claim()
		if err != nil {
			t.Fatal(err)
		}
		writeItem(slot, 0, uint64(i), seq)
		r.Publish(seq)
	}
}

// claimAsync claims one more slot in another goroutine and reports the result.
func claimAsync(r *Ring) <-chan error {
	res := make(chan error, 1)
	go func() {
		seq, slot, err := r.Claim()
		if err == nil {
			writeItem(slot, 0, uint64(seq), seq)
			r.Publish(seq)
		}
		res <- err
	}()
	return res
}

// waitSpaceParked waits until the producer has announced its park.
func waitSpaceParked(t *testing.T, r *Ring) {
	t.Helper()
	deadline := time.Now().Add(hangLimit)
	for r.storeWaiters.Load() < spaceWaiter {
		if time.Now().After(deadline) {
			t.Fatal("the producer never parked for space")
		}
		time.Sleep(time.Millisecond)
	}
}

// parkedProducer returns a full ring whose producer is parked for space on
// one more claim (res reports that claim) behind the consumer sequence cons.
func parkedProducer(t *testing.T) (r *Ring, cons *Sequence, res <-chan error) {
	t.Helper()
	r, cons, _ = newSpaceWaitRing(t)
	fill(t, r)
	res = claimAsync(r)
	waitSpaceParked(t, r)
	return r, cons, res
}

func claimResult(t *testing.T, res <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-res:
		return err
	case <-time.After(hangLimit):
		t.Fatalf("%s: the parked producer was not woken within %v (hang)", what, hangLimit)
		return nil
	}
}

// TestProducerParkedForSpaceIsWokenByWaitFor: many laps through a small ring
// with a consumer that keeps the producer waiting; each WaitFor after the
// consumer's Store wakes the producer.
func TestProducerParkedForSpaceIsWokenByWaitFor(t *testing.T) {
	const items = 2000
	r, cons, b := newSpaceWaitRing(t)
	done := make(chan struct{})
	var produceErr error
	go func() {
		defer close(done)
		_, produceErr = produceItems(r, 0, items)
	}()
	checker := newOrderChecker(1)
	slow := func(seq int64, slot []byte) error {
		if seq%64 == 0 {
			time.Sleep(200 * time.Microsecond) // let the producer fill the ring and park
		}
		return checker.check(seq, slot)
	}
	consumed := make(chan struct{})
	var consumeErr error
	go func() {
		defer close(consumed)
		consumeErr = consumeAll(r, b, cons, items, slow)
	}()
	waitDone(t, consumed, "consumer")
	if consumeErr != nil {
		t.Fatal(consumeErr)
	}
	waitDone(t, done, "producer")
	if produceErr != nil {
		t.Fatal(produceErr)
	}
	if r.BusyCount() != 0 {
		t.Fatalf("%d claims refused, want 0", r.BusyCount())
	}
}

// TestProducerParkedForSpaceIsWokenByWake: a consumer that frees space and
// does not call WaitFor afterwards wakes the producer with Ring.Wake.
func TestProducerParkedForSpaceIsWokenByWake(t *testing.T) {
	r, cons, res := parkedProducer(t)
	cons.Store(0)
	r.Wake()
	if err := claimResult(t, res, "Wake"); err != nil {
		t.Fatal(err)
	}
}

// TestProducerParkedForSpaceIsWokenByRemovedGate: the producer waits on a
// consumer that leaves; removing its gating sequence wakes the producer,
// which finds the ring ungated and claims.
func TestProducerParkedForSpaceIsWokenByRemovedGate(t *testing.T) {
	r, cons, res := parkedProducer(t)
	if !r.RemoveGatingSequence(cons) {
		t.Fatal("the consumer's sequence was not a gate")
	}
	if err := claimResult(t, res, "RemoveGatingSequence"); err != nil {
		t.Fatal(err)
	}
}

// TestProducerParkedForSpaceIsWokenByClose: Close ends the wait with ErrClosed.
func TestProducerParkedForSpaceIsWokenByClose(t *testing.T) {
	r, _, res := parkedProducer(t)
	r.Close()
	if err := claimResult(t, res, "Close"); !errors.Is(err, ErrClosed) {
		t.Fatalf("claim after Close: %v, want ErrClosed", err)
	}
}

// TestSpaceFreedJustBeforeProducerParksIsNotLost frees the slot inside the
// window between the producer's last failed check and its announcement,
// without any wake-up: only the producer's re-check after announcing can see
// it.
func TestSpaceFreedJustBeforeProducerParksIsNotLost(t *testing.T) {
	r, cons, _ := newSpaceWaitRing(t)
	fill(t, r)
	freed := false
	r.beforeSpacePark = func() {
		if !freed {
			freed = true
			cons.Store(0)
		}
	}
	if err := claimResult(t, claimAsync(r), "re-check"); err != nil {
		t.Fatal(err)
	}
	if !freed {
		t.Fatal("the producer never reached the park window")
	}
}

// TestProducerParkForSpaceRespectsClaimTimeout: with nobody consuming, the
// parked producer gives up with ErrBusy after ClaimTimeout, not after the
// (hour-long) park timeout.
func TestProducerParkForSpaceRespectsClaimTimeout(t *testing.T) {
	r := mustNew(t, Config{Slots: 8, SlotSize: 64, Producer: SingleProducer, Wait: SpinPark, ClaimTimeout: 20 * time.Millisecond})
	r.parkTimeout = time.Hour
	r.AddGatingSequences(NewSequence(-1))
	fill(t, r)
	if err := claimResult(t, claimAsync(r), "timeout"); !errors.Is(err, ErrBusy) {
		t.Fatalf("claim on a full ring: %v, want ErrBusy", err)
	}
	if r.BusyCount() != 1 {
		t.Fatalf("BusyCount %d, want 1", r.BusyCount())
	}
}
