package await

import "sync"

// Waits holds the waits for answers of type T, keyed by command sequence.
// The zero value is ready to use.
type Waits[K comparable, T any] struct {
	mu sync.Mutex
	m  map[K]chan T
}

// Expect registers a wait for the answer to command seq; call it before
// the command is published.
func (w *Waits[K, T]) Expect(seq K) <-chan T {
	ch := make(chan T, 1)
	w.mu.Lock()
	if w.m == nil {
		w.m = map[K]chan T{}
	}
	w.m[seq] = ch
	w.mu.Unlock()
	return ch
}

// Forget drops a wait that will not be read (the caller gave up).
func (w *Waits[K, T]) Forget(seq K) {
	w.mu.Lock()
	delete(w.m, seq)
	w.mu.Unlock()
}

// Deliver hands the answer to command seq to its wait, if there is one.
func (w *Waits[K, T]) Deliver(seq K, answer T) {
	w.mu.Lock()
	ch := w.m[seq]
	delete(w.m, seq)
	w.mu.Unlock()
	if ch != nil {
		ch <- answer // buffered: one answer per command
	}
}
