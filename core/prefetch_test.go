package core

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestPrefetchChangesNothing applies the same random command stream (the
// property test's generator: orders, cancels by ClOrdID and OrderID,
// replaces, status requests, mass cancels, unknown and duplicate ids, end
// of day) to two matchers. The second is shown, before every Apply, the
// commands up to PrefetchDistance ahead as the pipeline shows them, and
// besides a random command of the stream (out of order), the command
// itself and a truncated copy: the events and the final state must be
// identical, byte for byte.
func TestPrefetchChangesNothing(t *testing.T) {
	for ci, cfg := range propertyConfigs() {
		gen := newCommandGen(cfg, 11, newRefModel(cfg))
		follow := NewBufferSink(16)
		var cmds [][]byte
		for range 20_000 {
			cmd := gen.next()
			follow.Reset()
			gen.model.apply(cmd, follow)          // the generator aims at the model's live orders
			cmds = append(cmds, bytes.Clone(cmd)) // the generator reuses its buffer
		}
		rng := rand.New(rand.NewPCG(uint64(ci), 3))
		plain, shown := mustMatcher(t, cfg), mustMatcher(t, cfg)
		a, b := NewBufferSink(64), NewBufferSink(64)
		prefetches, maxResting, last := 0, 0, 0
		stats := map[string]int{}
		for i, cmd := range cmds {
			for ; last < min(i+PrefetchDistance, len(cmds)-1); last++ {
				shown.Prefetch(cmds[last+1])
				prefetches++
			}
			if rng.IntN(4) == 0 {
				shown.Prefetch(cmds[rng.IntN(len(cmds))])
				shown.Prefetch(cmd)
				shown.Prefetch(cmd[:rng.IntN(len(cmd)+1)])
			}
			a.Reset()
			b.Reset()
			errA, errB := plain.Apply(cmd, a), shown.Apply(cmd, b)
			if (errA == nil) != (errB == nil) || !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("command %d: events differ once Prefetch is called (errors %v, %v)", i, errA, errB)
			}
			countEvents(stats, b)
			maxResting = max(maxResting, shown.RestingOrders())
		}
		if !bytes.Equal(snapshotOf(t, plain), snapshotOf(t, shown)) {
			t.Fatal("the snapshots differ once Prefetch is called")
		}
		t.Logf("%d commands, %d shown ahead, at most %d resting orders, events: %v", len(cmds), prefetches, maxResting, stats)
	}
}

func mustMatcher(t *testing.T, cfg Config) *Matcher {
	t.Helper()
	m, err := NewMatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPrefetchTakesAnyBytes shows Prefetch short, foreign and cut commands
// of every template it reads, and addresses no ClOrdID and no OrderID: it
// must return without a panic.
func TestPrefetchTakesAnyBytes(t *testing.T) {
	m := mustMatcher(t, propertyConfigs()[0])
	var buf [cmdSlotSize]byte
	whole := map[string][]byte{
		"new order": encodeNewOrder(buf[:], &orderArgs{session: 1, side: venue.SideBuy, ordType: venue.OrdTypeLimit,
			instrument: 1, px: 100, qty: 1, clOrdID: "a"}),
		"cancel by OrderID":         encodeCancel(make([]byte, cmdSlotSize), &orderRefArgs{session: 1, orderID: 1 << 62, clOrdID: "c"}),
		"cancel addressing nothing": encodeCancel(make([]byte, cmdSlotSize), &orderRefArgs{session: 1, clOrdID: "c"}),
	}
	for name, cmd := range whole {
		for n := 0; n <= len(cmd); n++ {
			m.Prefetch(cmd[:n])
		}
		foreign := bytes.Clone(cmd)
		binary.LittleEndian.PutUint16(foreign[4:], venue.SchemaID+1)
		m.Prefetch(foreign)
		short := bytes.Clone(cmd)
		binary.LittleEndian.PutUint16(short[0:], 1) // a block length shorter than the template's
		m.Prefetch(short)
		t.Logf("%s: %d bytes", name, len(cmd))
	}
	m.Prefetch(nil)
}

// TestPrefetchDoesNotAllocate: Prefetch runs on the matcher's thread
// before every command, so it must not allocate either.
func TestPrefetchDoesNotAllocate(t *testing.T) {
	w := newWorkload(t, 10)
	place := newStampedOrder(orderArgs{session: 1, side: venue.SideBuy, ordType: venue.OrdTypeLimit,
		instrument: workloadInstrument, px: workloadRefTicks - 1, qty: workloadOrderQty})
	cancel := newStampedCancel(orderRefArgs{session: 1, side: venue.SideBuy, instrument: workloadInstrument})
	id := w.id(nil)
	if err := w.m.Apply(place.stamp(id), w.sink); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		w.m.Prefetch(place.stamp(id + 1))
		w.m.Prefetch(cancel.stamp(id))
		w.m.Prefetch(nil)
	})
	if allocs != 0 {
		t.Fatalf("Prefetch allocates %.1f times per call of three", allocs)
	}
}
