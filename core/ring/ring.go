// Memory ordering.
//
// Slot bytes are plain memory; only the counters are atomics (sync/atomic's
// typed Int64/Int32/Bool). Go's atomics are sequentially consistent and the
// Go memory model says that an atomic store is synchronized before any atomic
// load that observes it, which creates a happens-before edge. A producer writes
// the slot bytes and then stores the publication (the per-slot availability
// marker in multi-producer mode, the cursor in single-producer mode); a
// consumer loads that publication and only then reads the bytes, so it sees
// everything the producer wrote. A single-producer PublishRange stores the
// cursor once for a batch whose slots were all written before that store.
// Multi-producer consumers load only the markers: a marker equal to its
// sequence is the publication, and the claim cursor orders nothing for them
// (they read it only to tell, after Close, that a sequence was never
// claimed). The reverse edge protects reuse: a consumer
// finishes reading, then stores its Sequence; a producer loads the gating
// sequences before it hands out a slot of the next lap, so the overwrite
// happens after the read. The park protocol relies on the single total order
// of sequentially consistent operations: a consumer announces itself (sleepers
// counter) and then re-checks the publication, a producer stores the
// publication and then reads the sleepers counter; in any interleaving at
// least one of the two sees the other, so a wake-up cannot be lost. Waiting
// for a Sequence to move is the same protocol the other way round: a parked
// dependent consumer or the single producer parked for space announces
// itself in storeWaiters and re-checks the sequences, and the consumer that
// stores its Sequence reads storeWaiters at its next WaitFor or Wake.

package ring

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// ProducerMode says how many goroutines may claim slots concurrently.
type ProducerMode uint8

const (
	// MultiProducer lets any number of goroutines call Claim and Publish
	// concurrently (the command ring: one producer per FIX session). Claims
	// use compare-and-swap on a shared cursor, and a per-slot availability
	// marker lets consumers see only the contiguous published prefix. It is
	// the zero value because it is the safe one.
	MultiProducer ProducerMode = iota
	// SingleProducer is for exactly one producing goroutine (the event ring:
	// the matcher). Claims are plain arithmetic and a publication is one
	// atomic store. Two goroutines claiming on a SingleProducer ring corrupt
	// it (the race detector reports it).
	SingleProducer
)

// String names the mode.
func (m ProducerMode) String() string {
	switch m {
	case MultiProducer:
		return "multi"
	case SingleProducer:
		return "single"
	}
	return fmt.Sprintf("ProducerMode(%d)", uint8(m))
}

const (
	// SlotSizeMin is the smallest slot: one cache line, enough for an SBE
	// header and a small block.
	SlotSizeMin = 64
	// slotAlignBytes keeps every slot 8-byte aligned so int64 fields of a
	// flyweight never straddle a word.
	slotAlignBytes = 8
	// RingBytesMax bounds Slots*SlotSize (1 GiB: sixteen million 64-byte
	// slots). The buffer is allocated once at start-up; anything larger is a
	// configuration mistake.
	RingBytesMax = 1 << 30
	// slotBaseAlignBytes is the alignment of slot 0. Slot sizes are
	// multiples of 8, and the usual 64-byte slot then sits on exactly one
	// cache line, so a producer writing one slot never shares a line with a
	// consumer reading the previous one.
	slotBaseAlignBytes = 64
	// DefaultClaimTimeout is the back-pressure bound we recommend for the
	// command ring: long enough to ride out a garbage collection or a
	// scheduling hiccup of the matcher, short enough that a FIX client gets a
	// "system busy" reject instead of a hung session.
	DefaultClaimTimeout = 50 * time.Millisecond
)

var (
	// ErrBusy is returned by Claim when the slowest gating consumer stayed a
	// whole ring behind for the configured ClaimTimeout. Nothing was claimed.
	ErrBusy = errors.New("ring: full (consumers are a whole ring behind)")
	// ErrClosed is returned by Claim after Close, and by WaitFor after Close
	// once everything published up to the requested sequence is consumed.
	ErrClosed = errors.New("ring: closed")
	// ErrAlerted is returned by Barrier.WaitFor after Barrier.Alert.
	ErrAlerted = errors.New("ring: barrier alerted")
)

// Config fixes a ring's shape at start-up.
type Config struct {
	// Slots is the number of slots, a power of two.
	Slots int
	// SlotSize is the size of one slot in bytes: a multiple of 8, at least
	// SlotSizeMin.
	SlotSize int
	// Producer is MultiProducer (zero value) or SingleProducer.
	Producer ProducerMode
	// Wait is how both consumers and producers wait (zero value SpinPark).
	Wait WaitStrategy
	// ClaimTimeout bounds how long Claim waits for space before it returns
	// ErrBusy. Zero means do not wait at all: Claim fails at once when the
	// ring is full. DefaultClaimTimeout is the usual choice. Negative is an
	// error.
	ClaimTimeout time.Duration
}

// validate checks every field and explains the first problem it finds.
func (c Config) validate() error {
	switch {
	case c.Slots <= 0 || bits.OnesCount(uint(c.Slots)) != 1:
		return fmt.Errorf("ring: Slots = %d, want a power of two", c.Slots)
	case c.SlotSize < SlotSizeMin:
		return fmt.Errorf("ring: SlotSize = %d, want at least %d", c.SlotSize, SlotSizeMin)
	case c.SlotSize%slotAlignBytes != 0:
		return fmt.Errorf("ring: SlotSize = %d, want a multiple of %d", c.SlotSize, slotAlignBytes)
	case c.Slots > RingBytesMax/c.SlotSize:
		return fmt.Errorf("ring: Slots*SlotSize = %d*%d exceeds RingBytesMax (%d)", c.Slots, c.SlotSize, RingBytesMax)
	case c.Producer != MultiProducer && c.Producer != SingleProducer:
		return fmt.Errorf("ring: unknown producer mode %d", c.Producer)
	case !c.Wait.Valid():
		return fmt.Errorf("ring: unknown wait strategy %d", c.Wait)
	case c.ClaimTimeout < 0:
		return fmt.Errorf("ring: ClaimTimeout = %v, want >= 0", c.ClaimTimeout)
	}
	return nil
}

// Ring is a bounded sequence of fixed-size byte slots. Sequence s lives in
// slot s & (Slots-1); sequences start at 0 and only grow. See the package
// documentation for the protocol.
type Ring struct {
	// Read-only after New.
	buf               []byte         // Slots*SlotSize bytes, no pointers: never scanned by the GC
	available         []atomic.Int64 // multi-producer: the sequence last published in each slot, at marker(seq)
	markerLaneMask    int64          // see marker
	markerRowShift    uint8
	markerStrideShift uint8
	slotsMask         int64
	slots             int64
	slotSize          int
	mode              ProducerMode
	wait              WaitStrategy
	claimTimeout      time.Duration
	parkTimeout       time.Duration // tests lengthen it to prove wake-ups are not lost
	// beforePark, when set by a test, runs as a consumer decides to park and
	// before it announces itself: the exact window in which a publish would
	// be lost if park did not re-check after announcing. It is given the
	// park's timeout.
	beforePark func(timeout time.Duration)
	// beforeSpacePark is beforePark for the single producer parking for
	// space: a consumer that frees space in it sends no wake-up.
	beforeSpacePark func()

	// spaceWake wakes the single producer parked for space (zero, so
	// ignoring wake-ups, on a multi-producer ring).
	spaceWake wakeToken

	gates    atomic.Pointer[[]*Sequence] // copy-on-write; producers gate on these
	barriers atomic.Pointer[[]*Barrier]  // copy-on-write; parked ones are woken
	setupMu  sync.Mutex                  // serialises the copy-on-write writers above

	_ cacheLinePad
	// highWater is what consumers poll. Multi-producer: the highest claimed
	// sequence (claims advance it by CAS; availability says what is
	// published). Single-producer: the highest published sequence.
	highWater atomic.Int64
	_         cacheLinePad
	// gateCache is the minimum gating sequence as last computed by a
	// multi-producer claim, so that claims scan the gates only when the ring
	// looks full.
	gateCache atomic.Int64
	_         cacheLinePad
	// single holds the single producer's private state: plain fields,
	// touched by that goroutine only.
	single struct {
		next      int64 // highest claimed sequence
		published int64 // highest published sequence
		gateCache int64 // minimum gating sequence last seen
	}
	_ cacheLinePad
	// sleepers counts parked consumers. storeWaiters says who waits for a
	// consumer's Sequence to move: its low half counts the parked consumers
	// whose barrier has dependency sequences, and it holds spaceWaiter
	// while the single producer is parked for space (see parkForSpace).
	// Both are written only around parks and read on every publish and
	// WaitFor.
	sleepers     atomic.Int32
	storeWaiters atomic.Int64
	_            cacheLinePad
	busyCount    atomic.Int64
	closed       atomic.Bool
	_            cacheLinePad
}

// New allocates a ring. All memory the ring will ever use is allocated here.
func New(cfg Config) (*Ring, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r := &Ring{
		buf:          alignedBytes(cfg.Slots*cfg.SlotSize, slotBaseAlignBytes),
		slotsMask:    int64(cfg.Slots - 1),
		slots:        int64(cfg.Slots),
		slotSize:     cfg.SlotSize,
		mode:         cfg.Producer,
		wait:         cfg.Wait,
		claimTimeout: cfg.ClaimTimeout,
		parkTimeout:  parkTimeoutDefault,
	}
	if cfg.Producer == SingleProducer {
		r.spaceWake = newWakeToken()
	}
	r.highWater.Store(-1)
	r.gateCache.Store(-1)
	r.single.next = -1
	r.single.published = -1
	r.single.gateCache = -1
	if cfg.Producer == MultiProducer {
		lanes := min(markersPerLine, r.slots)
		r.markerLaneMask = lanes - 1
		r.markerRowShift = uint8(bits.TrailingZeros64(uint64(lanes)))
		r.markerStrideShift = uint8(bits.TrailingZeros64(uint64(r.slots / lanes)))
		r.available = make([]atomic.Int64, cfg.Slots)
		for i := range r.available {
			r.available[i].Store(-1)
		}
	}
	noGates := []*Sequence{}
	r.gates.Store(&noGates)
	noBarriers := []*Barrier{}
	r.barriers.Store(&noBarriers)
	return r, nil
}

// alignedBytes returns size bytes starting at an address that is a multiple
// of align (a power of two). The Go heap does not move objects, so the
// alignment holds for the life of the slice.
func alignedBytes(size, align int) []byte {
	raw := make([]byte, size+align)
	skip := int(-uintptr(unsafe.Pointer(&raw[0])) & uintptr(align-1))
	return raw[skip : skip+size : skip+size]
}

// markersPerLine is how many availability markers share a 64-byte cache line.
const markersPerLine = 8

// marker returns the index of seq's availability marker. Consecutive
// sequences are spread over different cache lines (sequence i of a group of
// markersPerLine goes to lane i, lanes are Slots/markersPerLine markers
// apart), so producers publishing neighbouring sequences do not write the
// same line, and a consumer polling for the next sequence is not disturbed by
// publications after it.
func (r *Ring) marker(seq int64) int64 {
	i := seq & r.slotsMask
	return (i&r.markerLaneMask)<<r.markerStrideShift | i>>r.markerRowShift
}

// Slots returns the number of slots.
func (r *Ring) Slots() int { return int(r.slots) }

// SlotSize returns the size of one slot in bytes.
func (r *Ring) SlotSize() int { return r.slotSize }

// Wait returns the ring's wait strategy.
func (r *Ring) Wait() WaitStrategy { return r.wait }

// BusyCount returns how many claims have failed with ErrBusy since New.
func (r *Ring) BusyCount() int64 { return r.busyCount.Load() }

// Cursor returns the highest claimed sequence (multi-producer) or the highest
// published sequence (single-producer), -1 before the first. For metrics.
func (r *Ring) Cursor() int64 { return r.highWater.Load() }

// Slot returns the bytes of sequence seq's slot. The slice aliases the ring:
// it is valid for a producer between Claim and Publish, and for a consumer
// between WaitFor returning at least seq and storing a Sequence ≥ seq. The
// capacity is limited to the slot so an append cannot spill into the next one.
func (r *Ring) Slot(seq int64) []byte {
	off := int(seq&r.slotsMask) * r.slotSize
	return r.buf[off : off+r.slotSize : off+r.slotSize]
}

// AddGatingSequences makes producers wait for seqs: no slot is handed out
// again until every gating sequence has passed it. Add them before the first
// Claim. A sequence added later must already hold a value no more than one
// ring behind the cursor (set it to Cursor() first), or producers stall until
// it catches up. With no gating sequence at all the ring does not gate, and
// producers overwrite slots nobody has read: every consumer must be covered,
// either by its own gating sequence or by a consumer that depends on it.
func (r *Ring) AddGatingSequences(seqs ...*Sequence) {
	r.setupMu.Lock()
	defer r.setupMu.Unlock()
	old := *r.gates.Load()
	next := make([]*Sequence, 0, len(old)+len(seqs))
	next = append(append(next, old...), seqs...)
	r.gates.Store(&next)
}

// RemoveGatingSequence stops gating on seq (a consumer that leaves). It
// reports whether seq was a gating sequence. A producer parked for space
// that seq held back is woken to re-check the remaining gates.
func (r *Ring) RemoveGatingSequence(seq *Sequence) bool {
	r.setupMu.Lock()
	old := *r.gates.Load()
	next := make([]*Sequence, 0, len(old))
	for _, s := range old {
		if s != seq {
			next = append(next, s)
		}
	}
	r.gates.Store(&next)
	r.setupMu.Unlock()
	r.Wake()
	return len(next) != len(old)
}

// Claim reserves the next slot for the calling producer and returns its
// sequence and bytes. The bytes still hold whatever the previous lap wrote:
// encode over them (a flyweight's WrapEncode zeroes its block). Every claimed
// sequence must be published, even when encoding fails (write a command the
// consumer will reject), because consumers stop at the first unpublished one.
//
// When the ring is full Claim waits with the ring's wait strategy for at most
// ClaimTimeout and then returns ErrBusy without claiming anything, so a busy
// claim leaves no hole. After Close it returns ErrClosed.
func (r *Ring) Claim() (seq int64, slot []byte, err error) {
	if r.closed.Load() {
		return -1, nil, ErrClosed
	}
	if r.mode == SingleProducer {
		seq, err = r.claimSingle(1)
	} else {
		seq, err = r.claimMulti(1)
	}
	if err != nil {
		return -1, nil, err
	}
	return seq, r.Slot(seq), nil
}

// ClaimN reserves n consecutive slots (1 ≤ n ≤ Slots) for the calling
// producer and returns the highest claimed sequence hi: the producer owns
// hi-n+1 through hi, reads their bytes with Slot, and publishes them with
// PublishRange (or, single-producer, Publish(hi)). Everything Claim says holds:
// it waits at most ClaimTimeout for all n slots and then returns ErrBusy
// having claimed none of them, and it returns ErrClosed after Close. A
// producer that writes several items at once (the matcher's events for one
// command) pays the claim and, above all, the publication's atomic store once
// per batch instead of once per item. An n outside [1, Slots] is a
// programming error and panics.
func (r *Ring) ClaimN(n int) (hi int64, err error) {
	if n < 1 || int64(n) > r.slots {
		panic(fmt.Sprintf("ring: ClaimN(%d), want 1 to %d slots", n, r.slots))
	}
	if r.closed.Load() {
		return -1, ErrClosed
	}
	if r.mode == SingleProducer {
		return r.claimSingle(int64(n))
	}
	return r.claimMulti(int64(n))
}

// claimSingle claims for the one producer: plain fields, no atomics unless
// the ring looks full.
func (r *Ring) claimSingle(n int64) (int64, error) {
	next := r.single.next + n
	wrapPoint := next - r.slots // the sequence whose slot next reuses
	if wrapPoint > r.single.gateCache {
		var w spaceWait
		for {
			lowest := minimumSequence(*r.gates.Load(), r.single.next)
			if wrapPoint <= lowest {
				r.single.gateCache = lowest
				break
			}
			if err := w.step(r, wrapPoint); err != nil {
				return -1, err
			}
		}
	}
	r.single.next = next
	return next, nil
}

// claimMulti claims by compare-and-swap. The capacity check is made against
// the same cursor value the CAS expects, so a successful CAS means the slots
// were free; a producer that gives up has not moved the cursor.
func (r *Ring) claimMulti(n int64) (int64, error) {
	var w spaceWait
	for {
		current := r.highWater.Load()
		next := current + n
		wrapPoint := next - r.slots
		if wrapPoint > r.gateCache.Load() {
			lowest := minimumSequence(*r.gates.Load(), current)
			if wrapPoint > lowest {
				if err := w.step(r, wrapPoint); err != nil {
					return -1, err
				}
				continue
			}
			// A racing producer may store an older minimum; that only makes
			// the cache conservative, never wrong, because gates only grow.
			r.gateCache.Store(lowest)
		}
		if r.highWater.CompareAndSwap(current, next) {
			return next, nil
		}
	}
}

// parkForSpace parks the single producer until a consumer frees the slot of
// wrapPoint, the deadline, Close or the park timeout. It follows the
// consumers' park protocol the other way round: the producer announces
// itself (storeWaiters, a sequentially consistent add) and then re-checks
// the gating sequences; a consumer stores its Sequence and then, at its next
// WaitFor (or Ring.Wake), reads storeWaiters and sends a token. In any
// interleaving one of the two sees the other, so the wake-up cannot be lost.
// A sleep instead would last much longer than asked: a Go timer shorter
// than a millisecond waits a whole millisecond when the process is otherwise
// idle (the runtime's poller sleeps in milliseconds).
func (r *Ring) parkForSpace(wrapPoint int64, deadline time.Time) {
	if r.beforeSpacePark != nil {
		r.beforeSpacePark()
	}
	r.storeWaiters.Add(spaceWaiter)
	if minimumSequence(*r.gates.Load(), r.single.next) < wrapPoint && !r.closed.Load() {
		if d := min(time.Until(deadline), r.parkTimeout); d > 0 {
			r.spaceWake.wait(d)
		}
	}
	r.storeWaiters.Add(-spaceWaiter)
}

// spaceWaiter is storeWaiters' mark of the single producer parked for space.
const spaceWaiter = 1 << 32

// wakeStoreWaiters wakes whoever storeWaiters (w, non-zero) says waits for a
// consumer's Sequence: the parked consumers with dependencies and the
// producer parked for space. It is the cold path of WaitFor and Wake, so it
// is kept out of line.
//
//go:noinline
func (r *Ring) wakeStoreWaiters(w int64) {
	if w&(spaceWaiter-1) != 0 {
		r.wakeParked(true)
	}
	if w >= spaceWaiter {
		r.spaceWake.give()
	}
}

// spaceWait tracks one producer's wait for space: how often it has tried and
// when it must give up.
type spaceWait struct {
	tries    int
	deadline time.Time
}

// step waits once for the slot of wrapPoint to be freed, or returns
// ErrClosed or ErrBusy (counting the latter).
func (w *spaceWait) step(r *Ring, wrapPoint int64) error {
	if r.closed.Load() {
		return ErrClosed
	}
	if r.claimTimeout == 0 {
		r.busyCount.Add(1)
		return ErrBusy
	}
	if w.tries == 0 {
		w.deadline = time.Now().Add(r.claimTimeout)
	} else if (r.wait != BusySpin || w.tries%deadlineCheckEvery == 0) && time.Now().After(w.deadline) {
		r.busyCount.Add(1)
		return ErrBusy
	}
	if (r.wait == SpinPark || r.wait == SpinThenPark) && r.mode == SingleProducer && w.tries >= spinTriesMax {
		r.parkForSpace(wrapPoint, w.deadline)
	} else {
		r.wait.producerStep(w.tries)
	}
	w.tries++
	return nil
}

// Publish makes sequence seq visible to consumers. In multi-producer mode
// sequences may be published in any order; consumers see only the contiguous
// prefix. In single-producer mode sequences must be published in claim
// order, and publishing seq also publishes every claimed sequence before it.
func (r *Ring) Publish(seq int64) {
	if r.mode == SingleProducer {
		if seq <= r.single.published || seq > r.single.next {
			r.panicPublishOrder(seq, seq)
		}
		r.single.published = seq
		r.highWater.Store(seq)
	} else {
		r.available[r.marker(seq)].Store(seq)
	}
	if r.sleepers.Load() != 0 {
		r.wakeParked(false)
	}
}

// PublishRange publishes the claimed sequences lo through hi, usually the
// batch of one ClaimN. Single-producer it is Publish(hi): one atomic store for
// the whole batch, and lo must follow the last published sequence or lie
// after it. Multi-producer it marks each slot, and consumers see the
// sequences as they become contiguous with what is already published. lo > hi,
// a range longer than the ring, or (single-producer) a range that is not
// claimed or was already published is a programming error and panics.
func (r *Ring) PublishRange(lo, hi int64) {
	if lo > hi || hi-lo >= r.slots {
		r.panicPublishOrder(lo, hi)
	}
	if r.mode == SingleProducer {
		if lo <= r.single.published || hi > r.single.next {
			r.panicPublishOrder(lo, hi)
		}
		r.single.published = hi
		r.highWater.Store(hi)
	} else {
		for s := lo; s <= hi; s++ {
			r.available[r.marker(s)].Store(s)
		}
	}
	if r.sleepers.Load() != 0 {
		r.wakeParked(false)
	}
}

// panicPublishOrder reports a publication of lo..hi that breaks the rules:
// a single producer publishing out of claim order would expose unwritten
// slots. Kept out of Publish so Publish stays small.
//
//go:noinline
func (r *Ring) panicPublishOrder(lo, hi int64) {
	if r.mode == MultiProducer {
		panic(fmt.Sprintf("ring: published %d..%d, want lo <= hi and at most %d sequences", lo, hi, r.slots))
	}
	panic(fmt.Sprintf("ring: single producer published %d..%d, claimed up to %d, published up to %d",
		lo, hi, r.single.next, r.single.published))
}

// SetParkTimeout replaces the bound on one park (1 ms, doubled while idle).
// Wake-ups are never lost, so the timeout is a safety net; a test that proves
// a wake-up arrives lengthens it so that the timeout cannot stand in for it.
// Call it before the ring is used.
func (r *Ring) SetParkTimeout(d time.Duration) { r.parkTimeout = d }

// Wake wakes parked consumers whose barrier has dependency sequences, and
// the single producer parked for space. A consumer that stores a Sequence
// some barrier of this ring depends on, or that gates this ring, and that
// does not call WaitFor on this ring right afterwards (WaitFor does this
// itself), calls Wake so that the waiter does not sleep out its park
// timeout. It costs one atomic load when nobody is parked.
func (r *Ring) Wake() {
	if w := r.storeWaiters.Load(); w != 0 {
		r.wakeStoreWaiters(w)
	}
}

// wakeParked sends a token to every parked barrier (only those with
// dependencies when dependentsOnly). Tokens go into a one-slot channel without
// blocking, so a wake that races with the consumer waking up on its own is
// harmless: the consumer sees a spurious wake-up later and re-checks. It is
// the cold path of Publish and WaitFor, so it is kept out of line.
//
//go:noinline
func (r *Ring) wakeParked(dependentsOnly bool) {
	for _, b := range *r.barriers.Load() {
		if b.byCall || dependentsOnly && len(b.deps) == 0 {
			continue
		}
		if b.parked.Load() {
			b.signal()
		}
	}
}

// Close stops the ring: Claim returns ErrClosed from now on (producers waiting
// for space give up with ErrClosed), and every consumer is woken. Consumers
// can still read everything published; WaitFor returns ErrClosed once nothing
// at or after the requested sequence can ever be published. Stop producers
// before Close so that no claimed sequence stays unpublished.
func (r *Ring) Close() {
	r.closed.Store(true)
	for _, b := range *r.barriers.Load() {
		b.signal()
	}
	r.spaceWake.give()
}

// Closed reports whether Close was called.
func (r *Ring) Closed() bool { return r.closed.Load() }
