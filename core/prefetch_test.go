package core

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestPrefetchChangesNothing applies the same random command stream (the
// property test's generator: orders, cancels by ClOrdID and OrderID,
// replaces, status requests, mass cancels, unknown and duplicate ids) to
// two matchers, one of which is shown each next command, the current one
// and a truncated copy before every Apply: the events and the final state
// must be identical, byte for byte.
func TestPrefetchChangesNothing(t *testing.T) {
	for _, cfg := range propertyConfigs() {
		gen := newCommandGen(cfg, 11, newRefModel(cfg))
		follow := NewBufferSink(16)
		var cmds [][]byte
		for range 20_000 {
			cmd := gen.next()
			follow.Reset()
			gen.model.apply(cmd, follow)          // the generator aims at the model's live orders
			cmds = append(cmds, bytes.Clone(cmd)) // the generator reuses its buffer
		}
		plain, shown := mustMatcher(t, cfg), mustMatcher(t, cfg)
		a, b := NewBufferSink(64), NewBufferSink(64)
		prefetches, maxResting := 0, 0
		stats := map[string]int{}
		for i, cmd := range cmds {
			if i+1 < len(cmds) {
				shown.Prefetch(cmds[i+1])
				prefetches++
			}
			shown.Prefetch(cmd)
			shown.Prefetch(cmd[:len(cmd)/2])
			a.Reset()
			b.Reset()
			errA, errB := plain.Apply(cmd, a), shown.Apply(cmd, b)
			if (errA == nil) != (errB == nil) || !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("command %d: events differ once Prefetch is called (errors %v, %v)", i, errA, errB)
			}
			countEvents(stats, b)
			maxResting = max(maxResting, shown.RestingOrders())
		}
		var snapA, snapB bytes.Buffer
		if err := plain.WriteSnapshot(&snapA); err != nil {
			t.Fatal(err)
		}
		if err := shown.WriteSnapshot(&snapB); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(snapA.Bytes(), snapB.Bytes()) {
			t.Fatal("the snapshots differ once Prefetch is called")
		}
		t.Logf("%d commands, %d prefetches, at most %d resting orders, events: %v", len(cmds), prefetches, maxResting, stats)
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
		"new order": encodeNewOrder(buf[:], &newOrderArgs{session: 1, side: venue.SideBuy, ordType: venue.OrdTypeLimit,
			instrument: 1, px: 100, qty: 1, clOrdID: "a"}),
		"cancel by OrderID":         encodeCancel(make([]byte, cmdSlotSize), &cancelArgs{session: 1, orderID: 1 << 62, clOrdID: "c"}),
		"cancel addressing nothing": encodeCancel(make([]byte, cmdSlotSize), &cancelArgs{session: 1, clOrdID: "c"}),
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
