package pipeline

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// SlotBytes is the slot size of both rings: every command and event fits.
const SlotBytes = 256

// Applier is the matcher as the pipeline sees it; *core.Matcher is one.
type Applier interface {
	Apply(cmd []byte, sink core.EventSink) error
}

// Prefetcher is an Applier that can be shown commands before it applies
// them (core.Matcher.Prefetch), so that their cache misses overlap the
// work of the commands before them. Before each Apply, the pipeline shows
// it the published commands up to Config.PrefetchDistance ahead, each at
// most once (a command applied as soon as it is published is never shown)
// and in order. Prefetch must not change what Apply does; a panic in it
// stops the pipeline as one in Apply does.
type Prefetcher interface {
	Prefetch(cmd []byte)
}

// Journal is the durable log as the pipeline sees it (journal.Writer).
type Journal interface {
	// Append adds one command; seq must be the next sequence.
	Append(seq uint64, payload []byte) error
	// Flush makes everything appended durable with one sync and advances DurableSequence.
	Flush() error
	// DurableSequence is the last durable command seq (-1 for none).
	DurableSequence() *ring.Sequence
}

// Config configures a Pipeline.
type Config struct {
	Matcher      Applier
	Journal      Journal // nil: no journal; Durable follows the matcher
	SeqBase      uint64  // seq of the first command of this run (the journal's next seq)
	CommandSlots int
	EventSlots   int
	Wait         ring.WaitStrategy
	ClaimTimeout time.Duration
	Logger       *slog.Logger
	// PrefetchDistance is how many commands ahead of the one it applies a
	// Prefetcher matcher is shown (core.PrefetchDistance); 0 means 1.
	PrefetchDistance int
	// UnlockedMatcher runs the matcher goroutine without runtime.LockOSThread.
	// The default (locked) gives the lowest median hand-off; on a machine with
	// no core to spare, waking a parked locked thread is an OS wake-up that
	// hands the waker's processor away, and unlocked gives a shorter tail
	// (both measured: docs/benchmarks.md, "Locked matcher thread").
	UnlockedMatcher bool
	// PinMatcher pins the matcher's locked thread to CPU MatcherCPU
	// (sched_setaffinity; Linux only); unset leaves placement to the kernel.
	PinMatcher bool
	MatcherCPU int
	// OnSnapshot, when set, is called on the matcher goroutine right after a
	// Snapshot command was applied, with that command's seq: the matcher's state
	// is then exactly the state after that seq.
	OnSnapshot func(seq uint64)
	// AfterBatch, when set, is called on the matcher goroutine after each
	// run of commands it applied before waiting for more (one command at a
	// low rate, many under load), so the matcher's state may be read there.
	AfterBatch func()
	// OnFail is called once, from the failing goroutine, when the matcher or the journal fails.
	OnFail func(error)
}

// Pipeline owns the rings and the matcher and journal goroutines.
type Pipeline struct {
	cfg      Config
	Commands *ring.Ring
	Events   *ring.Ring

	matcherSeq *ring.Sequence // last command applied
	journalSeq *ring.Sequence // last command appended and flushed
	durable    *ring.Sequence // last durable command seq (command seq space)

	matcherBarrier *ring.Barrier
	journalBarrier *ring.Barrier
	consumers      []*ring.Barrier
	consumerSeqs   []*ring.Sequence

	failed   atomic.Pointer[error]
	failOnce sync.Once
	// broken: the journal or the matcher failed (failInside), not only a
	// part outside the pipeline (Halt): Drained stops waiting for them.
	broken  atomic.Bool
	wg      sync.WaitGroup
	started bool

	eventsPublished atomic.Int64

	// durableWaiters are woken after every advance of the durable sequence,
	// so that WaitDurable sleeps until the journal moves instead of polling.
	durableWaiters durableWaiters
	// journalEnded is set when the journal stage failed and stopped: the
	// durable sequence never moves again, so WaitDurable answers at once.
	journalEnded atomic.Bool
}

// New builds the rings; add event consumers, then Start.
func New(cfg Config) (*Pipeline, error) {
	if cfg.Matcher == nil {
		return nil, errors.New("pipeline: no matcher")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// SpinThenPark is the matcher's alone: every other waiter parks after
	// the short spin, so that only one goroutine holds a processor spinning.
	ringWait := cfg.Wait
	if ringWait == ring.SpinThenPark {
		ringWait = ring.SpinPark
	}
	cmds, err := ring.New(ring.Config{Slots: cfg.CommandSlots, SlotSize: SlotBytes, Producer: ring.MultiProducer,
		Wait: ringWait, ClaimTimeout: cfg.ClaimTimeout})
	if err != nil {
		return nil, fmt.Errorf("command ring: %w", err)
	}
	evs, err := ring.New(ring.Config{Slots: cfg.EventSlots, SlotSize: SlotBytes, Producer: ring.SingleProducer,
		Wait: ringWait, ClaimTimeout: ring.DefaultClaimTimeout})
	if err != nil {
		return nil, fmt.Errorf("event ring: %w", err)
	}
	p := &Pipeline{cfg: cfg, Commands: cmds, Events: evs,
		matcherSeq: ring.NewSequence(-1), journalSeq: ring.NewSequence(-1)}
	if cfg.Journal != nil {
		p.durable = cfg.Journal.DurableSequence()
		p.journalBarrier = cmds.NewBarrier()
		cmds.AddGatingSequences(p.journalSeq)
	} else {
		p.durable = ring.NewSequence(int64(cfg.SeqBase) - 1)
	}
	if cfg.PinMatcher && (cfg.UnlockedMatcher || cfg.MatcherCPU < 0) {
		return nil, fmt.Errorf("pipeline: pinning the matcher to CPU %d needs a locked matcher thread and a CPU >= 0", cfg.MatcherCPU)
	}
	p.matcherBarrier = cmds.NewBarrierWait(cfg.Wait)
	if cfg.Journal != nil && runtime.GOMAXPROCS(0) > 1 {
		// No event of a command is used before the command is durable, so the
		// journal wakes the matcher once per batch, before its sync, rather
		// than every producer at every publication: fewer wake-ups of its
		// locked thread, each an OS hand-off. Not with one P: the matcher,
		// readied just before the sync, would wait for the P that the
		// journal's thread keeps in the system call until the runtime takes
		// it back (docs/benchmarks.md, "Matcher woken by the journal").
		p.matcherBarrier.WakeOnlyByCall()
	}
	cmds.AddGatingSequences(p.matcherSeq)
	return p, nil
}

// durableAdvanced wakes every WaitDurable caller, once per journal flush.
func (p *Pipeline) durableAdvanced() { p.durableWaiters.wake() }

// endJournal records that the journal stage failed and stopped, and wakes
// the WaitDurableOrEnd callers: nothing they wait for can become durable
// now (a deposed cluster leader's in-flight admin call is answered before
// the process restarts, instead of waiting out its timeout).
func (p *Pipeline) endJournal() {
	p.journalEnded.Store(true)
	p.durableWaiters.wake()
}

// JournalEnded reports whether the journal stage failed and stopped: no
// command not yet durable will be (a deposed cluster leader's).
func (p *Pipeline) JournalEnded() bool { return p.journalEnded.Load() }

// WaitDurable blocks until command seq is durable or timeout passes, and
// reports whether it is durable. Outbound consumers call it before an answer
// leaves the process.
func (p *Pipeline) WaitDurable(seq int64, timeout time.Duration) bool {
	return p.waitDurable(seq, timeout, false)
}

// WaitDurableOrEnd is WaitDurable that returns false at once when the
// journal stage failed and stopped (a deposed cluster leader's): the
// durable sequence will not move again. An operator's call waits with it,
// so that it is answered before the process restarts; loops that call
// WaitDurable again on false (outbound) keep WaitDurable, which sleeps.
func (p *Pipeline) WaitDurableOrEnd(seq int64, timeout time.Duration) bool {
	return p.waitDurable(seq, timeout, true)
}

func (p *Pipeline) waitDurable(seq int64, timeout time.Duration, orEnd bool) bool {
	if p.durable.Load() >= seq {
		return true
	}
	t := p.durableWaiters.register()
	defer p.durableWaiters.unregister(t)
	t.timer.Reset(timeout)
	for {
		if p.durable.Load() >= seq {
			return true
		}
		if orEnd && p.journalEnded.Load() {
			return false
		}
		select {
		case <-t.ch:
		case <-t.timer.C:
			return p.durable.Load() >= seq
		}
	}
}

// SeqBase is the command seq of ring sequence 0.
func (p *Pipeline) SeqBase() uint64 { return p.cfg.SeqBase }

// Durable is the journal's durable command seq (command seq space).
func (p *Pipeline) Durable() *ring.Sequence { return p.durable }

// AddEventConsumer registers a consumer of the event ring and returns its
// barrier and the sequence it must advance. Call before Start.
func (p *Pipeline) AddEventConsumer() (*ring.Barrier, *ring.Sequence) {
	if p.started {
		panic("pipeline: AddEventConsumer after Start")
	}
	seq := ring.NewSequence(-1)
	b := p.Events.NewBarrier()
	p.Events.AddGatingSequences(seq)
	p.consumers = append(p.consumers, b)
	p.consumerSeqs = append(p.consumerSeqs, seq)
	return b, seq
}

// The fail-stop error wraps the part that failed, so that a venue can tell
// its clients which without showing them the cause (errors.Is).
var (
	ErrMatcher = errors.New("matcher")
	ErrJournal = errors.New("journal")
)

// ErrHalted is wrapped by Claim's refusal once the pipeline has failed or
// was halted.
var ErrHalted = errors.New("venue halted")

// Claim claims a command slot for a producer (Commands.Claim), or refuses
// once the venue has halted (Err != nil), wrapping ErrHalted and the cause:
// every producer claims here, so none publishes a command after a halt.
func (p *Pipeline) Claim() (int64, []byte, error) {
	if err := p.Err(); err != nil {
		return 0, nil, fmt.Errorf("%w: %w", ErrHalted, err)
	}
	return p.Commands.Claim()
}

// Halt fail-stops the venue for a failure outside the pipeline, such as a
// FIX session store that could not be written: from now on Err returns err
// and Claim refuses, and OnFail is called, as after a journal or matcher
// failure (only the first failure counts). The commands already published
// are still journaled and applied, so their answers go out where they can,
// and the pipeline stays Sound: Stop drains it as it would a running one.
func (p *Pipeline) Halt(err error) { p.fail(err) }

// Sound reports that neither the journal nor the matcher has failed: the
// venue may be halted (Halt), but every command published is journaled and
// applied and every event reaches its consumers, so that a drained
// pipeline's consumers hold the state of every event.
func (p *Pipeline) Sound() bool { return !p.broken.Load() }

// Err returns the fail-stop error, if any.
func (p *Pipeline) Err() error {
	if e := p.failed.Load(); e != nil {
		return *e
	}
	return nil
}

// failInside fail-stops the venue for a failure of the journal or the
// matcher: nothing more becomes durable or is applied.
func (p *Pipeline) failInside(err error) {
	p.broken.Store(true)
	p.fail(err)
}

func (p *Pipeline) fail(err error) {
	p.failOnce.Do(func() {
		p.failed.Store(&err)
		p.cfg.Logger.Error("pipeline failed: trading halted", "err", err)
		if p.cfg.OnFail != nil {
			p.cfg.OnFail(err)
		}
	})
}

// Start launches the journal and matcher goroutines.
func (p *Pipeline) Start() {
	p.started = true
	if p.cfg.Journal != nil {
		p.wg.Add(1)
		go p.runJournal()
	}
	p.wg.Add(1)
	go p.runMatcher()
}

// eventPublishBatchMax bounds how many events the matcher keeps claimed but
// unpublished: a command's events are published together (one atomic store
// and one wake-up check for all of them), and a command with more events than
// this (a sweep through a deep book) publishes every eventPublishBatchMax, so
// the matcher never waits for ring space that only its own unpublished
// events hold.
const eventPublishBatchMax = 64

// eventSink claims event slots one at a time and publishes them in batches:
// at the end of each command (publish), or when eventPublishBatchMax are
// pending.
type eventSink struct {
	r       *ring.Ring
	seq     int64 // the slot claimed last
	last    int64 // the last committed, unpublished slot (pending > 0)
	pending int64
	n       *atomic.Int64
}

func (s *eventSink) Claim() []byte {
	if s.pending >= eventPublishBatchMax {
		s.publish()
	}
	for {
		seq, slot, err := s.r.Claim()
		if err == nil {
			s.seq = seq
			return slot
		}
		// A full event ring is back-pressure from a slow consumer: wait, never drop.
		if errors.Is(err, ring.ErrClosed) {
			panic("pipeline: event ring closed while the matcher runs")
		}
	}
}

func (s *eventSink) Commit() {
	s.last = s.seq
	s.pending++
}

// publish makes every committed event visible (single producer: publishing
// the last publishes all claimed before it).
func (s *eventSink) publish() {
	if s.pending == 0 {
		return
	}
	s.r.Publish(s.last)
	s.n.Add(s.pending)
	s.pending = 0
}

func (p *Pipeline) runMatcher() {
	defer p.wg.Done()
	if !p.cfg.UnlockedMatcher {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if p.cfg.PinMatcher {
			if err := pinThread(p.cfg.MatcherCPU); err != nil {
				// Pinning is a placement hint: the matcher runs correctly
				// anywhere, so a refused pin is logged, not fatal.
				p.cfg.Logger.Warn("matcher thread not pinned", "cpu", p.cfg.MatcherCPU, "err", err)
			}
		}
	}
	sink := &eventSink{r: p.Events, n: &p.eventsPublished}
	prefetcher, _ := p.cfg.Matcher.(Prefetcher)
	distance := int64(max(p.cfg.PrefetchDistance, 1))
	shown := int64(-1) // the last command shown to the prefetcher
	next := int64(0)
	for {
		avail, err := p.matcherBarrier.WaitFor(next)
		if err != nil {
			return // alerted: stopping
		}
		for ; next <= avail; next++ {
			if prefetcher != nil {
				// Each published command after this one, at most once, in order.
				shown = max(shown, next)
				if limit := min(avail, next+distance); shown < limit {
					if !p.showAhead(prefetcher, shown+1, limit) {
						return
					}
					shown = limit
				}
			}
			if p.cfg.Journal == nil {
				// Without a journal nothing waits for the disk: a command counts as
				// durable before its events exist, so outbound never waits.
				p.durable.Store(int64(p.cfg.SeqBase) + next)
			}
			err := p.apply(next, sink)
			// A command's events become visible together, before the
			// matcher's sequence says it was applied (Stop relies on it).
			sink.publish()
			if err != nil {
				if p.cfg.Journal == nil {
					// Taken back before the failure is visible: whoever sees
					// the venue failed never sees the failed command durable.
					p.durable.Store(int64(p.cfg.SeqBase) + next - 1)
				}
				p.failInside(err)
				return
			}
			p.matcherSeq.Store(next)
		}
		if p.cfg.AfterBatch != nil {
			p.cfg.AfterBatch()
		}
	}
}

// showAhead shows the prefetcher commands from..to and, like apply, turns a
// panic into fail-stop.
func (p *Pipeline) showAhead(prefetcher Prefetcher, from, to int64) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			p.failInside(fmt.Errorf("%w: panicked prefetching command seq %d: %v", ErrMatcher, p.cfg.SeqBase+uint64(from), r))
			ok = false
		}
	}()
	for ; from <= to; from++ {
		prefetcher.Prefetch(p.Commands.Slot(from))
	}
	return true
}

// apply runs one command; a refusal or a panic is its error, for the
// caller to fail-stop with.
func (p *Pipeline) apply(seq int64, sink *eventSink) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: panicked on command seq %d: %v", ErrMatcher, p.cfg.SeqBase+uint64(seq), r)
		}
	}()
	slot := p.Commands.Slot(seq)
	if err := p.cfg.Matcher.Apply(slot, sink); err != nil {
		return fmt.Errorf("%w: refused command seq %d: %w", ErrMatcher, p.cfg.SeqBase+uint64(seq), err)
	}
	if p.cfg.OnSnapshot != nil && binary.LittleEndian.Uint16(slot[2:]) == venue.SnapshotTemplateID {
		p.cfg.OnSnapshot(p.cfg.SeqBase + uint64(seq))
	}
	return nil
}

func (p *Pipeline) runJournal() {
	defer p.wg.Done()
	// However the journal stops, the matcher takes what was published.
	defer p.matcherBarrier.Wake()
	j := p.cfg.Journal
	next := int64(0)
	for {
		avail, err := p.journalBarrier.WaitFor(next)
		if err != nil {
			return
		}
		for ; next <= avail; next++ {
			slot := p.Commands.Slot(next)
			n := venue.MessageHeaderSize + int(binary.LittleEndian.Uint16(slot)) // header + blockLength
			if err := j.Append(p.cfg.SeqBase+uint64(next), slot[:n]); err != nil {
				p.failInside(fmt.Errorf("%w: append of command seq %d: %w", ErrJournal, p.cfg.SeqBase+uint64(next), err))
				p.endJournal()
				return
			}
		}
		// Append copied every command into the journal's buffer: the slots can be
		// reused while the batch is synced, so producers never wait on the disk.
		p.journalSeq.Store(avail)
		// The matcher applies the batch while it is synced.
		p.matcherBarrier.Wake()
		if err := j.Flush(); err != nil {
			p.failInside(fmt.Errorf("%w: flush: %w", ErrJournal, err))
			p.endJournal()
			return
		}
		p.durableAdvanced()
		// Consumers that gate on durability may be parked on the event ring.
		p.Events.Wake()
	}
}

// Stop drains: it waits until the matcher has applied every published command
// and every event consumer has consumed every event (bounded by timeout), then
// stops all goroutines. Producers must have stopped first.
func (p *Pipeline) Stop(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !p.Drained() {
		if time.Now().After(deadline) {
			p.alertAll()
			p.wg.Wait()
			return errors.New("pipeline: stop timed out before draining")
		}
		time.Sleep(time.Millisecond)
	}
	p.alertAll()
	p.wg.Wait()
	return nil
}

// Drained reports that the matcher (and the journal) have taken every
// command claimed so far and every event consumer every event, or that the
// journal or the matcher failed: then nothing more becomes durable, and
// consumers gated on durability would wait for ever. A halted pipeline
// (Halt) drains as a running one does.
func (p *Pipeline) Drained() bool {
	if p.broken.Load() {
		return true
	}
	cmdCursor := p.Commands.Cursor()
	if p.matcherSeq.Load() < cmdCursor {
		return false
	}
	if p.cfg.Journal != nil && p.journalSeq.Load() < cmdCursor {
		return false
	}
	evCursor := p.Events.Cursor()
	for _, s := range p.consumerSeqs {
		if s.Load() < evCursor {
			return false
		}
	}
	return true
}

func (p *Pipeline) alertAll() {
	p.matcherBarrier.Alert()
	if p.journalBarrier != nil {
		p.journalBarrier.Alert()
	}
	for _, b := range p.consumers {
		b.Alert()
	}
	p.Commands.Close()
	p.Events.Close()
}

// EventsPublished counts events written by the matcher in this run.
func (p *Pipeline) EventsPublished() int64 { return p.eventsPublished.Load() }

// MatcherParks counts the times the matcher's goroutine parked waiting for
// commands; each ended with a wake-up of its thread.
func (p *Pipeline) MatcherParks() int64 { return p.matcherBarrier.Parks() }

// MatcherSequence is the ring sequence of the last command the matcher applied.
func (p *Pipeline) MatcherSequence() int64 { return p.matcherSeq.Load() }
