package ring

import "time"

// wakeToken is how a parked goroutine (a consumer in Barrier.park, the single
// producer in Ring.parkForSpace) is woken: a one-slot channel of tokens and
// the timer that bounds one wait on it, both made once so that parking does
// not allocate. give never blocks, so a token that races with the waiter
// waking on its own stays for its next wait, which then returns at once and
// re-checks: a spurious wake-up, never a lost one. A zero wakeToken (a
// multi-producer ring's space token) ignores give.
type wakeToken struct {
	ch    chan struct{}
	timer *time.Timer
}

func newWakeToken() wakeToken {
	t := wakeToken{ch: make(chan struct{}, 1), timer: time.NewTimer(time.Hour)}
	t.timer.Stop()
	return t
}

// give leaves a token unless one is already waiting.
func (t wakeToken) give() {
	select {
	case t.ch <- struct{}{}:
	default:
	}
}

// drain takes a token left from an earlier wait, if any: one given to a
// waiter that then found its work without waiting, or as its timeout
// fired. Called before a waiter announces itself, it loses no wake-up: a
// waker that sees the announcement gives a token after it.
func (t wakeToken) drain() {
	select {
	case <-t.ch:
	default:
	}
}

// wait blocks until a token arrives or d passes. One goroutine waits on a
// token at a time.
func (t wakeToken) wait(d time.Duration) {
	t.timer.Reset(d)
	select {
	case <-t.ch:
	case <-t.timer.C:
	}
	t.timer.Stop()
}
