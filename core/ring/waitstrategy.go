package ring

import (
	"fmt"
	"runtime"
	"time"
)

// WaitStrategy says how a goroutine waits when it cannot proceed: a consumer
// whose next sequence is not yet published, or a producer whose next slot has
// not yet been released by the slowest gating consumer. The zero value is
// SpinPark, the default, because it is the only one that gives the cores back
// when the venue is idle.
type WaitStrategy uint8

const (
	// SpinPark spins briefly, then parks: a consumer sleeps on its own channel until a producer wakes it
	// (producers look at one atomic counter after each publish and only do
	// work when somebody sleeps) or until a short timeout passes. A single
	// producer waiting for space parks the same way and is woken by the
	// consumer that frees it; multiple producers waiting for space sleep for
	// short intervals.
	SpinPark WaitStrategy = iota
	// SpinYield spins briefly, then calls runtime.Gosched in a loop. It never
	// sleeps, so an idle waiter keeps a core busy, but it lets other
	// goroutines on the same core run.
	SpinYield
	// BusySpin re-checks in a tight loop forever. Lowest hand-off latency,
	// but each waiter burns a whole core even when there is nothing to do.
	// It calls runtime.Gosched once every busySpinYieldEvery failed checks
	// and never sleeps.
	BusySpin
	// SpinThenPark spins for longer before it parks (spinThenParkTriesMax
	// re-checks, tens of microseconds), so a consumer fed every few tens of
	// microseconds rarely parks, saving the futex hand-off that each park of
	// a locked OS thread costs. The pipeline gives it to the matcher only and
	// lets every other waiter park as SpinPark does. Over FIX on 2 CPUs it
	// lost to SpinPark (the spin holds a processor the sessions need:
	// docs/benchmarks.md, "Locked matcher thread"); it is for a machine with a
	// little spare CPU but not a core to give a BusySpin matcher.
	// Producers waiting for space behave as under SpinPark.
	SpinThenPark

	waitStrategyCount // number of strategies; keep last
)

const (
	// spinTriesMax is how many times a waiter re-checks before it yields
	// (SpinYield) or parks (SpinPark). A re-check is a few atomic loads, so
	// this is well under a microsecond: long enough to catch a producer that
	// is in the middle of publishing, short enough not to steal a core.
	//
	// A spin bounded by time instead, about as long as a park and wake-up
	// cost (50 µs: the classic spin-then-block bound, which never costs more
	// than twice the better choice), was measured and dropped
	// (docs/benchmarks.md, "Wait strategy: spin, then park"). That bound
	// assumes that spinning costs only the spinner's own cycles. On two
	// cores it does not: a
	// consumer fed every 10 µs never parks, so the matcher, an event
	// consumer and a busy producer keep more goroutines on processors than
	// there are processors, and the one left queued waits for the
	// scheduler's 10 ms preemption. At 100,000 commands/s the pipeline's
	// median went from 0.07-0.15 ms to 3-8 ms; at 1,000 and 10,000
	// commands/s, where the consumers park anyway, the process took 1.2-2.1
	// times the CPU and the median got 1.3-3 times worse (spinners hold the
	// processors a woken goroutine needs). Such a spin pays only with a core
	// for every spinning goroutine.
	spinTriesMax = 128
	// SpinPark does not yield between spinning and parking. A yield puts the
	// goroutine on the global run queue, where nothing wakes it when work
	// arrives (a producer wakes only parked consumers): in an execution trace
	// of the pipeline at 100,000 commands/s, 91% of all scheduling delay was
	// goroutines coming back from such yields, and on a locked OS thread each
	// yield is also a futex hand-off of the thread. Removing the 4 yields
	// that were left cut the pipeline's CPU at 10,000 commands/s by about a
	// fifth with the matcher's thread locked (docs/benchmarks.md, "Wait
	// strategy: spin, then park").
	// parkTimeoutDefault bounds one park of a consumer. Wake-ups are designed
	// not to get lost; the timeout is a safety net, and it also covers a
	// dependency sequence stored by a goroutine that never calls into this
	// ring afterwards (see Ring.Wake).
	parkTimeoutDefault = time.Millisecond
	// parkIdleDoublings is how many times a consumer that keeps finding
	// nothing doubles its park timeout: from 1 ms to 64 ms, so an idle
	// consumer wakes about 16 times a second instead of a thousand. A
	// consumer that finds work starts again at parkTimeoutDefault.
	parkIdleDoublings = 6
	// spaceSleepNs is how long one of several producers that wait for space
	// sleeps between checks under SpinPark (a single producer parks and is
	// woken instead, see Ring.parkForSpace). Consumers do not wake multiple
	// producers, so this is the extra latency such a producer may see once
	// a full ring drains; when the process is otherwise idle Go's timers
	// round it up to a millisecond.
	spaceSleepNs = 50 * time.Microsecond
	// deadlineCheckEvery is how many busy-spin tries pass between two reads of
	// the clock while a producer waits for space under BusySpin.
	deadlineCheckEvery = 64
	// busySpinYieldEvery is how many failed checks a BusySpin waiter makes
	// between two runtime.Gosched calls (a power of two). When the goroutine
	// it waits for is queued on the same P (GOMAXPROCS=1, or more runnable
	// goroutines than Ps) a pure spin would hold the P for a whole 10 ms
	// preemption slice; one yield per few microseconds of spinning avoids
	// that and costs nothing measurable when the other goroutine is running
	// elsewhere, because Gosched returns at once when nobody else is runnable.
	busySpinYieldEvery = 1 << 10
	// spinThenParkTriesMax is how many times a SpinThenPark consumer
	// re-checks before it parks: on the machine of docs/benchmarks.md one
	// re-check of the command ring is a few nanoseconds, so this spins for
	// roughly 20-60 µs, about the interval between commands at 10,000-20,000
	// commands/s. It does not yield while spinning: on a locked thread a
	// yield is itself a futex hand-off of the thread.
	spinThenParkTriesMax = 1 << 13
)

// waitStrategyNames maps each strategy to its configuration name.
var waitStrategyNames = [waitStrategyCount]string{
	SpinPark:     "park",
	SpinYield:    "yield",
	BusySpin:     "spin",
	SpinThenPark: "spinpark",
}

// UnmarshalText reads the strategy named in configuration: "spin"
// (BusySpin), "yield" (SpinYield), "park" (SpinPark; "block" is accepted
// as another name for it), or "spinpark" (SpinThenPark). Any other name is an error, never a silent default.
func (w *WaitStrategy) UnmarshalText(b []byte) error {
	if string(b) == "block" {
		*w = SpinPark
		return nil
	}
	for v, name := range waitStrategyNames {
		if string(b) == name {
			*w = WaitStrategy(v)
			return nil
		}
	}
	return fmt.Errorf("ring: unknown wait strategy %q (want spin, yield, park or spinpark)", b)
}

// MarshalText returns the configuration name; an undefined strategy is an error.
func (w WaitStrategy) MarshalText() ([]byte, error) {
	if !w.Valid() {
		return nil, fmt.Errorf("ring: undefined wait strategy %d", uint8(w))
	}
	return []byte(waitStrategyNames[w]), nil
}

// String returns the configuration name of the strategy.
func (w WaitStrategy) String() string {
	if w < waitStrategyCount {
		return waitStrategyNames[w]
	}
	return fmt.Sprintf("WaitStrategy(%d)", uint8(w))
}

// Valid reports whether w is one of the defined strategies.
func (w WaitStrategy) Valid() bool { return w < waitStrategyCount }

// consumerStep is one wait step of a consumer that has already failed tries
// times. It returns true when the caller should park now.
func (w WaitStrategy) consumerStep(tries int) (park bool) {
	switch w {
	case BusySpin:
		if tries%busySpinYieldEvery == busySpinYieldEvery-1 {
			runtime.Gosched()
		}
		return false
	case SpinYield:
		if tries >= spinTriesMax {
			runtime.Gosched()
		}
		return false
	case SpinThenPark:
		return tries >= spinThenParkTriesMax
	default: // SpinPark
		return tries >= spinTriesMax
	}
}

// producerStep is one wait step of a producer waiting for space that has
// already failed tries times.
func (w WaitStrategy) producerStep(tries int) {
	switch w {
	case BusySpin:
		if tries%busySpinYieldEvery == busySpinYieldEvery-1 {
			runtime.Gosched()
		}
	case SpinYield:
		if tries >= spinTriesMax {
			runtime.Gosched()
		}
	default: // SpinPark and SpinThenPark
		if tries >= spinTriesMax {
			time.Sleep(spaceSleepNs)
		}
	}
}
