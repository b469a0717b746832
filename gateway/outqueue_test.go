package gateway

import (
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
)

// TestOutQueueOrderAndBound: messages come out in the order they went in,
// across the ring's growth and its wrap-around; a full queue refuses; its
// memory follows its use, never past the bound.
func TestOutQueueOrderAndBound(t *testing.T) {
	for _, max := range []int{1, 3, outQueueMin, 100, 1000} {
		q := newOutQueue(max)
		if len(q.buf) != 0 {
			t.Fatalf("max %d: %d slots before any push", max, len(q.buf))
		}
		msgs := make([]*quickfix.Message, 3*max)
		for i := range msgs {
			msgs[i] = quickfix.NewMessage()
		}
		in, out := 0, 0
		// Fill, half drain, fill again (wrapping), drain, three times over.
		for round := 0; round < 3; round++ {
			for q.push(outMsg{m: msgs[in%len(msgs)], reuse: in%2 == 0}) {
				in++
			}
			if q.len() != max {
				t.Fatalf("max %d: full at %d", max, q.len())
			}
			for range max / 2 {
				o, ok := q.pop()
				if !ok || o.m != msgs[out%len(msgs)] || o.reuse != (out%2 == 0) {
					t.Fatalf("max %d: pop %d out of order", max, out)
				}
				out++
			}
		}
		for o, ok := q.pop(); ok; o, ok = q.pop() {
			if o.m != msgs[out%len(msgs)] {
				t.Fatalf("max %d: pop %d out of order", max, out)
			}
			out++
		}
		if in != out || q.len() != 0 {
			t.Fatalf("max %d: %d in, %d out, %d left", max, in, out, q.len())
		}
		if len(q.buf) > max {
			t.Fatalf("max %d: %d slots", max, len(q.buf))
		}
		for i, o := range q.buf {
			if o.m != nil {
				t.Fatalf("max %d: slot %d still holds a message after its pop", max, i)
			}
		}
	}
	q := newOutQueue(65536)
	for range 100 {
		q.push(outMsg{m: quickfix.NewMessage()})
	}
	if len(q.buf) != 128 {
		t.Fatalf("100 messages queued in %d slots, want 128", len(q.buf))
	}
}

// TestOutQueuePushWait: a push to a full queue waits for room, or ends
// when done is closed.
func TestOutQueuePushWait(t *testing.T) {
	q := newOutQueue(1)
	a, b := outMsg{m: quickfix.NewMessage()}, outMsg{m: quickfix.NewMessage()}
	q.push(a)
	done := make(chan struct{})
	pushed := make(chan bool)
	go func() { pushed <- q.pushWait(b, done) }()
	select {
	case <-pushed:
		t.Fatal("pushed into a full queue")
	case <-time.After(20 * time.Millisecond):
	}
	if o, _ := q.pop(); o.m != a.m {
		t.Fatal("the first message is not first out")
	}
	if !<-pushed {
		t.Fatal("the waiting push failed once there was room")
	}
	if o, _ := q.pop(); o.m != b.m {
		t.Fatal("the waiting push's message is not next")
	}
	q.push(a)
	go func() { pushed <- q.pushWait(b, done) }()
	close(done)
	if <-pushed {
		t.Fatal("a push to a full queue succeeded after done")
	}
}
