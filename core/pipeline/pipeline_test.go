package pipeline

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/ring"
)

// echoMatcher turns each command into one event that carries the command's
// seq (as causeSeq, at the same offset the schema uses) and its payload word.
type echoMatcher struct {
	panicOn uint64
}

func (m *echoMatcher) Apply(cmd []byte, sink core.EventSink) error {
	seq := binary.LittleEndian.Uint64(cmd[8:])
	if m.panicOn != 0 && seq == m.panicOn {
		panic("boom")
	}
	ev := sink.Claim()
	binary.LittleEndian.PutUint16(ev[0:], 16)
	binary.LittleEndian.PutUint64(ev[8:], seq)
	copy(ev[16:24], cmd[16:24])
	sink.Commit()
	return nil
}

// slowJournal records appends and makes them durable after a delay per flush.
type slowJournal struct {
	mu      sync.Mutex
	seqs    []uint64
	pending uint64
	durable *ring.Sequence
	delay   time.Duration
	flushes atomic.Int64
	failAt  int64
}

func (j *slowJournal) Append(seq uint64, payload []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.seqs) > 0 && j.seqs[len(j.seqs)-1]+1 != seq {
		return errors.New("out of order append")
	}
	j.seqs = append(j.seqs, seq)
	j.pending = seq
	return nil
}

func (j *slowJournal) Flush() error {
	n := j.flushes.Add(1)
	if j.failAt != 0 && n >= j.failAt {
		return errors.New("injected fsync failure")
	}
	time.Sleep(j.delay)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.durable.Store(int64(j.pending))
	return nil
}

func (j *slowJournal) DurableSequence() *ring.Sequence { return j.durable }

// startPipeline makes a pipeline of cfg with one event consumer (its
// barrier and sequence returned) and starts it.
func startPipeline(t *testing.T, cfg Config) (*Pipeline, *ring.Barrier, *ring.Sequence) {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	barrier, own := p.AddEventConsumer()
	p.Start()
	return p, barrier, own
}

func submit(t *testing.T, p *Pipeline, word uint64) {
	t.Helper()
	seq, slot, err := p.Commands.Claim()
	for errors.Is(err, ring.ErrBusy) {
		seq, slot, err = p.Commands.Claim()
	}
	if err != nil {
		t.Error(err)
		return
	}
	binary.LittleEndian.PutUint16(slot[0:], 16)
	binary.LittleEndian.PutUint64(slot[8:], p.SeqBase()+uint64(seq))
	binary.LittleEndian.PutUint64(slot[16:], word)
	p.Commands.Publish(seq)
}

// TestDurabilityGatesOutbound runs producers, the journal with a slow fsync,
// the matcher and one outbound consumer that gates each event on Durable():
// every command is journaled once and in order, each producer's commands come
// out in its order, group commit covers many commands per flush, and the
// consumer always gets past its gate (durability keeps advancing).
func TestDurabilityGatesOutbound(t *testing.T) {
	const producers, perProducer = 4, 2000
	j := &slowJournal{durable: ring.NewSequence(99), delay: 200 * time.Microsecond, seqs: nil}
	j.seqs = []uint64{99}
	p, barrier, own := startPipeline(t, Config{Matcher: &echoMatcher{}, Journal: j, SeqBase: 100, CommandSlots: 256, EventSlots: 256,
		Wait: ring.SpinPark, ClaimTimeout: 50 * time.Millisecond})

	var seen atomic.Int64
	perProducerNext := make([]uint64, producers)
	done := make(chan struct{})
	go func() {
		defer close(done)
		next := int64(0)
		for next < producers*perProducer {
			avail, err := barrier.WaitFor(next)
			if err != nil {
				return
			}
			for ; next <= avail; next++ {
				ev := p.Events.Slot(next)
				cause := int64(binary.LittleEndian.Uint64(ev[8:]))
				for p.Durable().Load() < cause {
					time.Sleep(10 * time.Microsecond)
				}
				word := binary.LittleEndian.Uint64(ev[16:])
				prod, n := word>>32, word&0xFFFFFFFF
				if n != perProducerNext[prod] {
					t.Errorf("producer %d: event %d after %d", prod, n, perProducerNext[prod])
				}
				perProducerNext[prod] = n + 1
				seen.Add(1)
				own.Store(next)
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < producers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perProducer; i++ {
				submit(t, p, uint64(w)<<32|uint64(i))
			}
		}(w)
	}
	wg.Wait()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("consumer saw %d of %d events", seen.Load(), producers*perProducer)
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := len(j.seqs) - 1; got != producers*perProducer {
		t.Fatalf("journal has %d commands, want %d", got, producers*perProducer)
	}
	if j.flushes.Load() >= producers*perProducer {
		t.Fatalf("%d flushes for %d commands: no group commit", j.flushes.Load(), producers*perProducer)
	}
	if j.seqs[1] != 100 {
		t.Fatalf("first command seq %d, want SeqBase 100", j.seqs[1])
	}
}

// waitForFailStop waits up to 10 s for the pipeline to fail and for its
// OnFail to have stored the error in failed (fail records the error before
// it calls OnFail: both are waited for), and fails the test with msg if
// either is missing.
func waitForFailStop(t *testing.T, p *Pipeline, failed *atomic.Pointer[error], msg string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for (p.Err() == nil || failed.Load() == nil) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if p.Err() == nil || failed.Load() == nil {
		t.Fatal(msg)
	}
}

func TestMatcherPanicIsFailStop(t *testing.T) {
	var failed atomic.Pointer[error]
	p, _, _ := startPipeline(t, Config{Matcher: &echoMatcher{panicOn: 5}, CommandSlots: 64, EventSlots: 64,
		ClaimTimeout: time.Millisecond, OnFail: func(e error) { failed.Store(&e) }})
	for i := 0; i < 10; i++ {
		submit(t, p, uint64(i))
	}
	waitForFailStop(t, p, &failed, "panic in the matcher did not fail-stop the pipeline")
	if err := p.Err(); !errors.Is(err, ErrMatcher) || errors.Is(err, ErrJournal) {
		t.Fatalf("a matcher panic fails as %v: want the matcher named (errors.Is ErrMatcher)", err)
	}
	if got := p.Durable().Load(); got != 4 {
		t.Fatalf("durable = %d after failing on seq 5, want 4: nothing after the failure may be acknowledged", got)
	}
	p.Stop(time.Second)
}

func TestJournalFailureIsFailStop(t *testing.T) {
	j := &slowJournal{durable: ring.NewSequence(-1), failAt: 1}
	p, _, _ := startPipeline(t, Config{Matcher: &echoMatcher{}, Journal: j, CommandSlots: 64, EventSlots: 64, ClaimTimeout: time.Millisecond})
	submit(t, p, 1)
	deadline := time.Now().Add(10 * time.Second)
	for p.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if p.Err() == nil || j.durable.Load() != -1 {
		t.Fatalf("fsync failure: err=%v durable=%d", p.Err(), j.durable.Load())
	}
	if err := p.Err(); !errors.Is(err, ErrJournal) || errors.Is(err, ErrMatcher) {
		t.Fatalf("a journal failure fails as %v: want the journal named (errors.Is ErrJournal)", err)
	}
	// Nothing more becomes durable: the drain waits for nothing.
	if p.Sound() || !p.Drained() {
		t.Fatalf("after a journal failure: Sound %v, Drained %v; want false, true", p.Sound(), p.Drained())
	}
	p.Stop(time.Second)
}

// TestHaltedPipelineDrains: a pipeline halted from outside (a FIX store
// that failed) stays Sound, and Drained waits, as in a running venue, until
// its event consumers have every event of the commands published before
// the halt: a stop then finds their states complete.
func TestHaltedPipelineDrains(t *testing.T) {
	j := &slowJournal{durable: ring.NewSequence(-1)}
	p, barrier, own := startPipeline(t, Config{Matcher: &echoMatcher{}, Journal: j, CommandSlots: 64, EventSlots: 64, ClaimTimeout: time.Millisecond})
	defer p.Stop(time.Second)
	for i := 0; i < 3; i++ {
		submit(t, p, uint64(i))
	}
	p.Halt(errors.New("store: no space left on device"))
	if !p.Sound() {
		t.Fatal("a halt from outside the pipeline made it unsound")
	}
	if !p.WaitDurable(2, 5*time.Second) {
		t.Fatalf("commands published before the halt did not become durable (durable %d)", p.Durable().Load())
	}
	if p.Drained() {
		t.Fatal("drained with the consumer's events unread")
	}
	for next := int64(0); next < 3; {
		avail, err := barrier.WaitFor(next)
		if err != nil {
			t.Fatal(err)
		}
		next = avail + 1
		own.Store(avail)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !p.Drained() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !p.Drained() {
		t.Fatal("not drained once the consumer read every event")
	}
}

// TestHaltRefusesClaims: a halt from outside (a FIX store that failed)
// reports its error, calls OnFail once, and refuses every later claim, while
// the commands published before it still become durable and applied.
func TestHaltRefusesClaims(t *testing.T) {
	j := &slowJournal{durable: ring.NewSequence(-1)}
	var fails atomic.Int32
	p, _, _ := startPipeline(t, Config{Matcher: &echoMatcher{}, Journal: j, CommandSlots: 64, EventSlots: 64,
		ClaimTimeout: time.Millisecond, OnFail: func(error) { fails.Add(1) }})
	defer p.Stop(time.Second)
	for i := 0; i < 3; i++ {
		submit(t, p, uint64(i))
	}
	if _, _, err := p.Claim(); err != nil {
		t.Fatalf("claim before the halt: %v", err)
	} // claimed and never published: the ring is not used again below
	cause := errors.New("store: no space left on device")
	p.Halt(cause)
	p.Halt(errors.New("a second failure"))
	if !errors.Is(p.Err(), cause) || fails.Load() != 1 {
		t.Fatalf("after the halt: Err %v, OnFail called %d times", p.Err(), fails.Load())
	}
	if _, _, err := p.Claim(); !errors.Is(err, ErrHalted) || !errors.Is(err, cause) {
		t.Fatalf("claim after the halt: %v, want ErrHalted wrapping the cause", err)
	}
	if !p.WaitDurable(2, 5*time.Second) {
		t.Fatalf("commands published before the halt did not become durable (durable %d)", p.Durable().Load())
	}
}

func TestMatcherLoopDoesNotAllocate(t *testing.T) {
	p, barrier, own := startPipeline(t, Config{Matcher: &echoMatcher{}, CommandSlots: 1024, EventSlots: 1024, Wait: ring.SpinPark, ClaimTimeout: time.Second})
	defer p.Stop(time.Second)
	next := int64(0)
	allocs := testing.AllocsPerRun(500, func() {
		seq, slot, _ := p.Commands.Claim()
		binary.LittleEndian.PutUint16(slot[0:], 16)
		binary.LittleEndian.PutUint64(slot[8:], uint64(seq))
		p.Commands.Publish(seq)
		avail, _ := barrier.WaitFor(next)
		next = avail + 1
		own.Store(avail)
	})
	if allocs != 0 {
		t.Fatalf("command round trip through the pipeline allocates %.1f times", allocs)
	}
}

// TestUnlockedMatcherRunsTheSamePipeline runs commands through a pipeline
// whose matcher goroutine is not locked to its OS thread.
func TestUnlockedMatcherRunsTheSamePipeline(t *testing.T) {
	p, barrier, own := startPipeline(t, Config{Matcher: &echoMatcher{}, CommandSlots: 64, EventSlots: 64, ClaimTimeout: time.Second, UnlockedMatcher: true})
	for i := 0; i < 200; i++ {
		submit(t, p, uint64(i))
		avail, err := barrier.WaitFor(int64(i))
		if err != nil || avail < int64(i) {
			t.Fatalf("event %d: avail %d, %v", i, avail, err)
		}
		if got := binary.LittleEndian.Uint64(p.Events.Slot(int64(i))[16:]); got != uint64(i) {
			t.Fatalf("event %d carries %d", i, got)
		}
		own.Store(int64(i))
	}
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
}

// fanoutMatcher emits the command's payload word as a count of events (a
// sweep through a deep book), each carrying the command's seq and its index.
type fanoutMatcher struct{}

func (fanoutMatcher) Apply(cmd []byte, sink core.EventSink) error {
	seq := binary.LittleEndian.Uint64(cmd[8:])
	n := binary.LittleEndian.Uint64(cmd[16:])
	for i := uint64(0); i < n; i++ {
		ev := sink.Claim()
		binary.LittleEndian.PutUint16(ev[0:], 16)
		binary.LittleEndian.PutUint64(ev[8:], seq)
		binary.LittleEndian.PutUint64(ev[16:], i)
		sink.Commit()
	}
	return nil
}

// A command's events are published together, but a command with more events
// than the event ring holds still gets through: the matcher publishes every
// eventPublishBatchMax events, so it never waits for space that only its own
// unpublished events occupy. Every event arrives once, in order.
func TestCommandWithMoreEventsThanTheRing(t *testing.T) {
	const eventSlots = 2 * eventPublishBatchMax
	counts := []uint64{1, 3, 5 * eventSlots, 0, eventPublishBatchMax, eventPublishBatchMax + 1, 7}
	p, barrier, own := startPipeline(t, Config{Matcher: fanoutMatcher{}, CommandSlots: 64, EventSlots: eventSlots, ClaimTimeout: time.Second})
	var total uint64
	for _, n := range counts {
		total += n
	}
	got := make(chan error, 1)
	go func() {
		next, cmd, index := int64(0), 0, uint64(0)
		for next < int64(total) {
			avail, err := barrier.WaitFor(next)
			if err != nil {
				got <- err
				return
			}
			for ; next <= avail; next++ {
				for counts[cmd] == 0 {
					cmd++
				}
				ev := p.Events.Slot(next)
				if seq, i := binary.LittleEndian.Uint64(ev[8:]), binary.LittleEndian.Uint64(ev[16:]); seq != uint64(cmd) || i != index {
					got <- fmt.Errorf("event %d: command %d index %d, want command %d index %d", next, seq, i, cmd, index)
					return
				}
				if index++; index == counts[cmd] {
					cmd, index = cmd+1, 0
				}
				own.Store(next)
			}
		}
		got <- nil
	}()
	for _, n := range counts {
		submit(t, p, n)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("events stopped: the matcher waits for ring space its own events hold")
	}
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if p.EventsPublished() != int64(total) {
		t.Fatalf("EventsPublished %d, want %d", p.EventsPublished(), total)
	}
}

// prefetchMatcher is echoMatcher that checks what it is shown: each
// command at most once and in order (a command applied as soon as it is
// published is never shown), after the command being applied and at most
// distance ahead of it. Applying a command whose seq is a multiple of
// holdEvery waits for hold, so that the test can publish a whole batch
// behind it.
type prefetchMatcher struct {
	echoMatcher
	distance  int64
	holdEvery int64
	hold      chan struct{}

	mu         sync.Mutex
	shown      int64 // the last seq shown, -1 for none
	applying   int64 // the seq applied next
	applied    []int64
	prefetches int
	wrong      []string
}

func (m *prefetchMatcher) Prefetch(cmd []byte) {
	seq := int64(binary.LittleEndian.Uint64(cmd[8:]))
	m.mu.Lock()
	defer m.mu.Unlock()
	if seq <= m.shown || seq <= m.applying || seq > m.applying+m.distance {
		m.wrong = append(m.wrong, fmt.Sprintf("shown %d after %d, before applying %d", seq, m.shown, m.applying))
	}
	m.shown = seq
	m.prefetches++
}

func (m *prefetchMatcher) Apply(cmd []byte, sink core.EventSink) error {
	seq := int64(binary.LittleEndian.Uint64(cmd[8:]))
	m.mu.Lock()
	m.applied = append(m.applied, seq)
	m.applying = seq + 1
	m.mu.Unlock()
	if seq%m.holdEvery == 0 {
		<-m.hold
	}
	return m.echoMatcher.Apply(cmd, sink)
}

// TestPipelinePrefetchesAhead publishes batches of commands while the
// matcher is held on each batch's first: the rest of the batch is then
// shown to Prefetch ahead of Apply, each command at most once, in order,
// never before it is published and never more than PrefetchDistance ahead,
// and every command is still applied once, in order.
func TestPipelinePrefetchesAhead(t *testing.T) {
	const batches, perBatch, distance = 50, 8, 3
	m := &prefetchMatcher{shown: -1, distance: distance, holdEvery: perBatch, hold: make(chan struct{})}
	p, barrier, own := startPipeline(t, Config{Matcher: m, CommandSlots: 256, EventSlots: 256, ClaimTimeout: time.Second,
		PrefetchDistance: distance})
	defer p.Stop(time.Second)
	next := int64(0)
	for b := 0; b < batches; b++ {
		var last int64
		for range perBatch {
			seq, slot, err := p.Commands.Claim()
			if err != nil {
				t.Fatal(err)
			}
			binary.LittleEndian.PutUint16(slot[0:], 16)
			binary.LittleEndian.PutUint64(slot[8:], uint64(seq))
			p.Commands.Publish(seq)
			last = seq
		}
		m.hold <- struct{}{} // the batch's first command may finish
		for next <= last {
			avail, err := barrier.WaitFor(next)
			if err != nil {
				t.Fatal(err)
			}
			next = avail + 1
			own.Store(avail)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.wrong) > 0 {
		t.Fatalf("%d wrong prefetches, first: %s", len(m.wrong), m.wrong[0])
	}
	if len(m.applied) != batches*perBatch {
		t.Fatalf("%d commands applied, want %d", len(m.applied), batches*perBatch)
	}
	for i, seq := range m.applied {
		if seq != int64(i) {
			t.Fatalf("command %d applied as %d-th", seq, i)
		}
	}
	// Behind each held first command the rest of its batch is published, so
	// at least its last perBatch-2 commands are shown before they are applied.
	if want := batches * (perBatch - 2); m.prefetches < want {
		t.Fatalf("%d prefetches for %d batches of %d, want at least %d", m.prefetches, batches, perBatch, want)
	}
}

// panickyPrefetcher panics when shown the command with seq panicOn.
type panickyPrefetcher struct {
	echoMatcher
	panicOn uint64
}

func (m *panickyPrefetcher) Prefetch(cmd []byte) {
	if binary.LittleEndian.Uint64(cmd[8:]) == m.panicOn {
		panic("boom in prefetch")
	}
}

// TestPrefetchPanicIsFailStop: a panic while the matcher is shown a command
// ahead stops the pipeline as a panic in Apply does, and nothing from the
// command about to be applied on is acknowledged. The commands are all
// published before the pipeline starts, so the matcher sees them at once.
func TestPrefetchPanicIsFailStop(t *testing.T) {
	var failed atomic.Pointer[error]
	p, err := New(Config{Matcher: &panickyPrefetcher{panicOn: 5}, CommandSlots: 64, EventSlots: 64, PrefetchDistance: 3,
		ClaimTimeout: time.Millisecond, OnFail: func(e error) { failed.Store(&e) }})
	if err != nil {
		t.Fatal(err)
	}
	p.AddEventConsumer()
	for i := 0; i < 10; i++ {
		submit(t, p, uint64(i))
	}
	p.Start()
	waitForFailStop(t, p, &failed, "a panic in Prefetch did not fail-stop the pipeline")
	// Command 5 is shown just before command 2 would be applied (3 ahead).
	if got := p.Durable().Load(); got != 1 {
		t.Fatalf("durable = %d after failing before applying seq 2, want 1", got)
	}
	p.Stop(time.Second)
}

// heldJournal is a journal whose flushes each wait for the test's release.
type heldJournal struct {
	slowJournal
	release chan struct{}
}

func (j *heldJournal) Flush() error {
	<-j.release
	return j.slowJournal.Flush()
}

// TestJournalWakesTheMatcher: with a journal and more than one P, the
// matcher is woken by the journal once per batch, before its sync, and not
// by the publications: a command published while the journal syncs is
// applied with the journal's next batch, the matcher parked meanwhile. With
// one P the publications wake it, and it applies the command during the
// sync. Parks are an hour long, so only a wake-up ends one.
func TestJournalWakesTheMatcher(t *testing.T) {
	for _, procs := range []int{2, 1} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			journalWakesTheMatcher(t, procs > 1)
		})
	}
}

func journalWakesTheMatcher(t *testing.T, byJournal bool) {
	j := &heldJournal{slowJournal: slowJournal{durable: ring.NewSequence(-1)}, release: make(chan struct{})}
	p, err := New(Config{Matcher: &echoMatcher{}, Journal: j, CommandSlots: 64, EventSlots: 64,
		Wait: ring.SpinPark, ClaimTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p.Commands.SetParkTimeout(time.Hour)
	_, own := p.AddEventConsumer()
	own.Store(1 << 40) // the test reads no events: never gate the matcher
	p.Start()
	defer func() {
		close(j.release)
		if err := p.Stop(10 * time.Second); err != nil {
			t.Error(err)
		}
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("after 10 s: %s", what)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	submit(t, p, 0)
	waitFor("the matcher applied the journal's first batch during its sync", func() bool { return p.MatcherSequence() == 0 })
	waitFor("the matcher parked", p.matcherBarrier.Parked)
	// The journal's wake-up for the first batch may land after the matcher
	// found the batch on its own and parked again (a spurious wake-up, which
	// the ring allows): let it, so that the parks counted from here are
	// the publications' doing.
	time.Sleep(20 * time.Millisecond)
	waitFor("the matcher parked again", p.matcherBarrier.Parked)
	parks := p.MatcherParks()
	const during = 20
	for i := 1; i <= during; i++ {
		submit(t, p, uint64(i))
	}
	if !byJournal {
		waitFor("the publications woke the matcher during the sync", func() bool { return p.MatcherSequence() == during })
		j.release <- struct{}{}
		return
	}
	// Give a matcher woken by the publications time to show it; one woken
	// only by the journal (held in its sync) stays parked.
	deadline := time.Now().Add(100 * time.Millisecond)
	for p.MatcherSequence() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := p.MatcherSequence(); got != 0 || p.MatcherParks() != parks {
		t.Fatalf("while the journal synced, the matcher woke (%d parks) and applied up to %d: the publications woke it",
			p.MatcherParks()-parks, got)
	}
	j.release <- struct{}{} // the first sync ends; the journal takes the rest
	waitFor("the matcher applied what was published during the sync", func() bool { return p.MatcherSequence() == during })
	if woke := p.MatcherParks() - parks; woke > 2 {
		t.Fatalf("the matcher parked %d times for one batch", woke)
	}
}
