package pipeline

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/core/ring"
)

// syncJournal makes each flush durable after a short sleep (a stand-in for
// fdatasync), allocating nothing.
type syncJournal struct {
	mu      sync.Mutex
	pending uint64
	durable *ring.Sequence
}

func (j *syncJournal) Append(seq uint64, _ []byte) error {
	j.mu.Lock()
	j.pending = seq
	j.mu.Unlock()
	return nil
}

func (j *syncJournal) Flush() error {
	time.Sleep(50 * time.Microsecond)
	j.mu.Lock()
	j.durable.Store(int64(j.pending))
	j.mu.Unlock()
	return nil
}

func (j *syncJournal) DurableSequence() *ring.Sequence { return j.durable }

// TestWaitDurable: goroutines waiting for different commands, and one
// waiting for a command never sent, each get the right answer; waits end
// when the journal advances, not at their timeout.
func TestWaitDurable(t *testing.T) {
	j := &syncJournal{durable: ring.NewSequence(-1)}
	p, barrier, own := startPipeline(t, Config{Matcher: &echoMatcher{}, Journal: j, CommandSlots: 1024, EventSlots: 1024,
		Wait: ring.SpinPark, ClaimTimeout: time.Second})
	defer p.Stop(5 * time.Second)
	go func() { // the event consumer, so the matcher never waits for space
		for next := int64(0); ; {
			avail, err := barrier.WaitFor(next)
			if err != nil {
				return
			}
			own.Store(avail)
			next = avail + 1
		}
	}()
	if p.WaitDurable(0, 20*time.Millisecond) {
		t.Fatal("WaitDurable true for a command never sent")
	}
	const commands, waiters = 2000, 4
	var wg sync.WaitGroup
	for w := 0; w < waiters; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for seq := int64(w); seq < commands; seq += waiters {
				// A minute is a bound for a lost wake-up, far beyond any flush.
				start := time.Now()
				if !p.WaitDurable(seq, time.Minute) || p.Durable().Load() < seq {
					t.Errorf("waiter %d: command %d not durable", w, seq)
					return
				}
				if time.Since(start) >= time.Minute {
					t.Errorf("waiter %d: command %d: woken by the timeout, not the journal", w, seq)
					return
				}
			}
		}(w)
	}
	for i := 0; i < commands; i++ {
		submit(t, p, uint64(i))
	}
	wg.Wait()
	if p.WaitDurable(commands, 20*time.Millisecond) {
		t.Fatal("WaitDurable true for a command never sent")
	}
}

// TestWaitDurableDoesNotAllocate: waiting for durability on the order path
// (outbound, once per batch) allocates nothing, nor does the journal's
// wake-up after a flush.
func TestWaitDurableDoesNotAllocate(t *testing.T) {
	j := &syncJournal{durable: ring.NewSequence(-1)}
	p, barrier, own := startPipeline(t, Config{Matcher: &echoMatcher{}, Journal: j, CommandSlots: 1024, EventSlots: 1024,
		Wait: ring.SpinPark, ClaimTimeout: time.Second})
	defer p.Stop(5 * time.Second)
	next := int64(0)
	slow := 0
	allocs := testing.AllocsPerRun(500, func() {
		seq, slot, _ := p.Commands.Claim()
		binary.LittleEndian.PutUint16(slot[0:], 16)
		binary.LittleEndian.PutUint64(slot[8:], uint64(seq))
		p.Commands.Publish(seq)
		if p.Durable().Load() < seq {
			slow++
		}
		if !p.WaitDurable(seq, time.Minute) {
			t.Errorf("command %d not durable", seq)
		}
		avail, _ := barrier.WaitFor(next)
		next = avail + 1
		own.Store(avail)
	})
	if allocs != 0 {
		t.Fatalf("a wait for durability allocates %.2f times", allocs)
	}
	if slow == 0 {
		t.Fatal("no wait found the command not yet durable: the waiting path was not measured")
	}
}
