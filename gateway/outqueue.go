package gateway

import (
	"sync"
	"time"
)

// outQueueMin is the room an outQueue starts with.
const outQueueMin = 64

// outQueue is a sender's queue: a FIFO of at most max messages whose
// memory follows its use. It grows by doubling up to max and is not
// shrunk, so a session holds at most what its longest backlog needed.
//
// A channel of capacity max held max slots from the start: with the
// default fix.outbound_queue_max (65,536) 1 MiB a session, 32 MiB for the
// demo's sessions, all of it holding pointers, which every garbage
// collection scanned, empty or not: nearly all of the venue's scan work,
// and most of each collection's time (docs/benchmarks.md, "Heap
// headroom").
type outQueue struct {
	mu   sync.Mutex
	buf  []outMsg // a ring: n messages from head
	head int
	n    int
	max  int
	// ready receives after a push (values coalesce): the sender goroutine
	// waits on it when the queue is empty.
	ready chan struct{}
}

func newOutQueue(max int) *outQueue {
	return &outQueue{max: max, ready: make(chan struct{}, 1)}
}

// push queues o unless the queue holds max messages.
func (q *outQueue) push(o outMsg) bool {
	q.mu.Lock()
	if q.n == q.max {
		q.mu.Unlock()
		return false
	}
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)%len(q.buf)] = o
	q.n++
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// grow doubles the ring (at least outQueueMin, at most max), oldest first.
func (q *outQueue) grow() {
	buf := make([]outMsg, min(q.max, max(outQueueMin, 2*len(q.buf))))
	for i := range q.n {
		buf[i] = q.buf[(q.head+i)%len(q.buf)]
	}
	q.buf, q.head = buf, 0
}

// pushWait is push that waits, polling every pushWaitPoll, until there is
// room or done is closed (false). A full queue means a client that does
// not read, already disconnected (sender.queueCounted): this waits for the
// sender to hand the backlog to the session's store, which is quick.
func (q *outQueue) pushWait(o outMsg, done <-chan struct{}) bool {
	if q.push(o) {
		return true
	}
	t := time.NewTicker(pushWaitPoll)
	defer t.Stop()
	for !q.push(o) {
		select {
		case <-done:
			return false
		case <-t.C:
		}
	}
	return true
}

// pushWaitPoll is how often pushWait looks for room.
const pushWaitPoll = time.Millisecond

// pop takes the oldest message, if any.
func (q *outQueue) pop() (outMsg, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 {
		return outMsg{}, false
	}
	o := q.buf[q.head]
	q.buf[q.head] = outMsg{} // the queue keeps no sent message alive
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return o, true
}

// len is the number of messages queued.
func (q *outQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}
