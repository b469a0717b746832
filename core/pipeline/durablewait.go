package pipeline

import (
	"sync"
	"sync/atomic"
	"time"
)

// durableTokensFree bounds the wake tokens kept for reuse. Each goroutine in
// WaitDurable holds one token; the venue has one such goroutine on the order
// path (outbound) and a few more at times (operator calls), so a waiter
// beyond this many concurrent ones makes its own token and drops it after.
const durableTokensFree = 16

// durableToken wakes one goroutine in WaitDurable: a one-slot channel and
// the timer that bounds the wait, both made once so that waiting does not
// allocate (docs/benchmarks.md, "The FIX path against its floor").
type durableToken struct {
	ch    chan struct{}
	timer *time.Timer
}

// durableWaiters are the goroutines waiting for the durable sequence to
// advance. The journal goroutine wakes them all after each flush; it takes
// the lock only when someone waits.
type durableWaiters struct {
	n       atomic.Int32 // len(waiting), read without the lock
	mu      sync.Mutex
	waiting []*durableToken
	free    []*durableToken
}

// register returns a token, listed as waiting, with no stale wake-up in it.
// A waiter registers before it checks the durable sequence, and the
// journal advances that sequence before it looks for waiters (both
// sequentially consistent atomics): either the waiter sees the advance or
// the journal sees the waiter.
func (w *durableWaiters) register() *durableToken {
	w.mu.Lock()
	var t *durableToken
	if n := len(w.free); n > 0 {
		t = w.free[n-1]
		w.free[n-1] = nil
		w.free = w.free[:n-1]
	} else {
		t = &durableToken{ch: make(chan struct{}, 1), timer: time.NewTimer(time.Hour)}
		t.timer.Stop()
	}
	select {
	case <-t.ch:
	default:
	}
	w.waiting = append(w.waiting, t)
	w.n.Store(int32(len(w.waiting)))
	w.mu.Unlock()
	return t
}

// unregister takes t off the waiting list and keeps it for reuse.
func (w *durableWaiters) unregister(t *durableToken) {
	t.timer.Stop()
	w.mu.Lock()
	for i, x := range w.waiting {
		if x == t {
			last := len(w.waiting) - 1
			w.waiting[i] = w.waiting[last]
			w.waiting[last] = nil
			w.waiting = w.waiting[:last]
			break
		}
	}
	w.n.Store(int32(len(w.waiting)))
	if len(w.free) < durableTokensFree {
		w.free = append(w.free, t)
	}
	w.mu.Unlock()
}

// wake gives every waiting goroutine a token; it never blocks.
func (w *durableWaiters) wake() {
	if w.n.Load() == 0 {
		return
	}
	w.mu.Lock()
	for _, t := range w.waiting {
		select {
		case t.ch <- struct{}{}:
		default:
		}
	}
	w.mu.Unlock()
}
