package ring

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Barrier is how one consumer waits for the ring: it tracks the ring's
// publication and, optionally, other consumers' sequences the consumer must
// not overtake. A Barrier belongs to one consumer goroutine: WaitFor must not
// be called from two goroutines at once. Alert may be called from anywhere.
type Barrier struct {
	ring *Ring
	wait WaitStrategy // how WaitFor waits; the ring's unless NewBarrierWait chose another
	deps []*Sequence
	wake wakeToken // a parked WaitFor waits here
	// byCall: publications leave this barrier's parked consumer asleep, and
	// only Wake (or Alert, Close) wakes it (WakeOnlyByCall). Set before the
	// ring is used, read-only after.
	byCall  bool
	_       cacheLinePad
	parked  atomic.Bool
	alerted atomic.Bool
	parks   atomic.Int64
	_       cacheLinePad
}

// NewBarrier returns a barrier for a consumer that may read a sequence only
// once it is published and every sequence in deps has reached it. Create
// barriers at start-up: each is registered with the ring for wake-ups for the
// ring's life.
func (r *Ring) NewBarrier(deps ...*Sequence) *Barrier {
	return r.NewBarrierWait(r.wait, deps...)
}

// NewBarrierWait is NewBarrier for a consumer that waits with its own
// strategy w instead of the ring's: the pipeline's matcher spins longer
// (SpinThenPark) than the other consumers of the same ring. Producers still
// wait with the ring's strategy. An undefined w panics (a programming error).
func (r *Ring) NewBarrierWait(w WaitStrategy, deps ...*Sequence) *Barrier {
	if !w.Valid() {
		panic(fmt.Sprintf("ring: NewBarrierWait with undefined wait strategy %d", uint8(w)))
	}
	b := &Barrier{
		ring: r,
		wait: w,
		deps: append([]*Sequence(nil), deps...),
		wake: newWakeToken(),
	}
	r.setupMu.Lock()
	defer r.setupMu.Unlock()
	old := *r.barriers.Load()
	next := make([]*Barrier, 0, len(old)+1)
	next = append(append(next, old...), b)
	r.barriers.Store(&next)
	return b
}

// WaitFor blocks, using the ring's wait strategy, until sequence seq is
// published and every dependency has reached seq, and then returns the highest
// sequence avail ≥ seq such that everything from seq to avail is readable, so
// the consumer can handle a batch. It returns ErrAlerted after Alert, and
// ErrClosed after Close once nothing at or after seq can still be published
// (everything published before Close is still returned first). On error
// avail is seq-1.
func (b *Barrier) WaitFor(seq int64) (avail int64, err error) {
	r := b.ring
	// The caller has most likely just stored its own sequence: wake the
	// consumers parked on it, and the producer if it is parked for space.
	// One atomic load when nobody is parked.
	if w := r.storeWaiters.Load(); w != 0 {
		r.wakeStoreWaiters(w)
	}
	if !b.alerted.Load() {
		if avail = b.available(seq); avail >= seq {
			return avail, nil
		}
	}
	return b.waitSlow(seq)
}

// waitSlow is WaitFor's loop once the fast check has failed.
//
// Each park that finds nothing doubles the next one's timeout, up to
// parkIdleDoublings times the ring's park timeout: the timeout is only a
// safety net (wake-ups are not lost), and at a thousand timeouts a second
// per consumer an idle venue spent 7% of a core waking its consumers,
// the matcher's locked thread among them (docs/benchmarks.md, "Wait strategy: spin, then park").
func (b *Barrier) waitSlow(seq int64) (int64, error) {
	r := b.ring
	timeout, doublings := r.parkTimeout, 0
	for tries := 0; ; tries++ {
		if b.alerted.Load() {
			return seq - 1, ErrAlerted
		}
		if avail := b.available(seq); avail >= seq {
			return avail, nil
		}
		if r.closed.Load() && b.exhausted(seq) {
			return seq - 1, ErrClosed
		}
		if b.wait.consumerStep(tries) {
			b.park(seq, timeout)
			if doublings < parkIdleDoublings {
				timeout *= 2
				doublings++
			}
		}
	}
}

// available returns the highest sequence readable from seq on, or a value
// below seq when seq itself is not readable yet.
func (b *Barrier) available(seq int64) int64 {
	if b.ring.mode == MultiProducer {
		return b.availableMulti(seq)
	}
	high := b.ring.highWater.Load()
	if high < seq {
		return high
	}
	for _, d := range b.deps {
		if v := d.Load(); v < high {
			high = v
		}
	}
	return high
}

// availableMulti walks the availability markers from seq and stops before
// the first sequence not yet published. It never reads the claim cursor: a
// marker equals its sequence only once that sequence is published (a marker
// left by an earlier lap is a whole ring smaller), so the cursor would add
// nothing but a cache line that every claim's compare-and-swap has to take
// back from the polling consumer. Producers cannot be a whole ring ahead of
// a consumer that gates them (or that a gating consumer depends on), which
// bounds the walk.
func (b *Barrier) availableMulti(seq int64) int64 {
	r := b.ring
	limit := seq + r.slots - 1
	for _, d := range b.deps {
		if v := d.Load(); v < limit {
			limit = v
		}
	}
	if limit < seq {
		return limit
	}
	s := seq
	for s <= limit && r.available[r.marker(s)].Load() == s {
		s++
	}
	return s - 1
}

// exhausted reports, on a closed ring, that seq was never claimed, so it will
// never be published. A claimed sequence is still awaited: its producer was
// already past the closed check and will publish it.
func (b *Barrier) exhausted(seq int64) bool {
	return b.ring.highWater.Load() < seq
}

// park sleeps until a producer, Alert, Close or timeout wakes it.
// It announces itself before re-checking, so a producer that publishes after
// the re-check sees the announcement and sends a token.
func (b *Barrier) park(seq int64, timeout time.Duration) {
	r := b.ring
	hasDeps := len(b.deps) != 0
	if r.beforePark != nil {
		r.beforePark(timeout)
	}
	b.parks.Add(1)
	// A token from an earlier park would end this one at once, with no
	// publication behind it.
	b.wake.drain()
	b.parked.Store(true)
	r.sleepers.Add(1)
	if hasDeps {
		r.storeWaiters.Add(1)
	}
	if b.available(seq) < seq && !b.alerted.Load() && !r.closed.Load() {
		b.wake.wait(timeout)
	}
	if hasDeps {
		r.storeWaiters.Add(-1)
	}
	r.sleepers.Add(-1)
	b.parked.Store(false)
}

// signal leaves a wake-up token unless one is already waiting.
func (b *Barrier) signal() { b.wake.give() }

// WakeOnlyByCall makes publications on the ring leave this barrier's parked
// consumer asleep: it is woken by Wake (and by Alert, Close and its park
// timeout) only. It is for a consumer whose events nobody can use before
// another consumer has done its part: the pipeline's matcher, whose events
// wait for the journal's fdatasync, is woken by the journal once per batch
// rather than by every FIX session's publication, and each wake-up of its
// locked thread is an OS hand-off (docs/benchmarks.md, "Matcher woken by the
// journal"). Whoever calls Wake must do so after seeing every publication
// the consumer needs, or the consumer finds it only at its park timeout.
// Call it before the ring is used.
func (b *Barrier) WakeOnlyByCall() { b.byCall = true }

// Wake wakes the barrier's consumer if it is parked: one atomic load when it
// is not. Called after the caller has seen a publication (its own WaitFor
// returned it), it is never lost: the consumer announces its park before it
// re-checks the ring.
func (b *Barrier) Wake() {
	if b.parked.Load() {
		b.signal()
	}
}

// Parked reports that the consumer is parked (or about to park).
func (b *Barrier) Parked() bool { return b.parked.Load() }

// Parks counts the times the consumer parked (each costs a wake-up to end).
func (b *Barrier) Parks() int64 { return b.parks.Load() }

// Alert makes the current and every later WaitFor return ErrAlerted, waking
// the consumer if it is parked. Used to stop one consumer without closing the
// ring.
func (b *Barrier) Alert() {
	b.alerted.Store(true)
	b.signal()
}

// ClearAlert lets WaitFor wait again after Alert.
func (b *Barrier) ClearAlert() { b.alerted.Store(false) }

// Alerted reports whether Alert was called and not cleared.
func (b *Barrier) Alerted() bool { return b.alerted.Load() }
