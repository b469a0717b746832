package core

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/fixvenue/fixvenue/internal/flowtest"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The benchmarks mirror the reference Java engine's published table: each
// iteration is the whole operation (2, 2 or 13 commands), it undoes its own
// effect so the book does not drift, and "depth" is price levels per side
// with 4 resting orders each. Events go to a ring-like sink of reused slots.

var benchDepths = []int{10, 1000}

func BenchmarkPassivePlaceCancel(b *testing.B) {
	for _, depth := range benchDepths {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			w := newWorkload(b, depth)
			resting := w.m.RestingOrders()
			w.timePlaceCancel(b)
			if w.m.RestingOrders() != resting {
				b.Fatalf("the book drifted: %d orders, %d before", w.m.RestingOrders(), resting)
			}
		})
	}
}

// BenchmarkPlaceCancelClOrdIDTable is PassivePlaceCancel at depth 10 with
// ClOrdID tables of a test size and of the default production size (4 Mi
// ClOrdIDs a day): the difference is the cost of cache misses in the
// duplicate-ClOrdID check, which the reference engine does not make.
func BenchmarkPlaceCancelClOrdIDTable(b *testing.B) {
	for _, size := range []int{1 << 16, 1 << 22} {
		b.Run(fmt.Sprintf("clordids=%d", size), func(b *testing.B) {
			w := newWorkloadSized(b, 10, size)
			w.timePlaceCancel(b)
		})
	}
}

// BenchmarkPlaceCancelRecorded is PassivePlaceCancel at depth 10 with a new
// ClOrdID on every cancel, as a client's, the cancel's checks those of the
// gateway's cancels with and without CancelRemembersClOrdID: the cost of
// recording the cancel's ClOrdID (a record copied, a table slot written,
// the table filling twice as fast).
func BenchmarkPlaceCancelRecorded(b *testing.B) {
	for _, c := range []struct {
		name   string
		checks uint8
	}{{"recorded=false", CancelMatchesOrder}, {"recorded=true", CancelMatchesOrder | CancelRemembersClOrdID}} {
		b.Run(c.name, func(b *testing.B) {
			w := newWorkload(b, 10)
			resting := w.m.RestingOrders()
			w.timePlaceCancelWith(b, newStampedCancelOwnID(orderRefArgs{session: 1, side: venue.SideBuy, instrument: workloadInstrument}, c.checks))
			if w.m.RestingOrders() != resting {
				b.Fatalf("the book drifted: %d orders, %d before", w.m.RestingOrders(), resting)
			}
		})
	}
}

func BenchmarkAggressiveFillRefill(b *testing.B) {
	for _, depth := range benchDepths {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			w := newWorkload(b, depth)
			take := newStampedOrder(orderArgs{session: 2, side: venue.SideBuy, ordType: venue.OrdTypeLimit,
				instrument: workloadInstrument, px: workloadRefTicks + 1, qty: workloadOrderQty})
			refill := newStampedOrder(orderArgs{session: 1, side: venue.SideSell, ordType: venue.OrdTypeLimit,
				instrument: workloadInstrument, tif: venue.TimeInForceGTC, px: workloadRefTicks + 1, qty: workloadOrderQty})
			trades := w.m.Counters().LastTradeID
			w.timePairs(b, take, refill)
			if got := w.m.Counters().LastTradeID - trades; got != uint64(b.N) {
				b.Fatalf("%d trades in %d iterations", got, b.N)
			}
			checkWorkloadBook(b, w)
		})
	}
}

func BenchmarkMarketSweep3Levels(b *testing.B) {
	for _, depth := range benchDepths {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			w := newWorkload(b, depth)
			sweep := newStampedOrder(orderArgs{session: 2, side: venue.SideBuy, ordType: venue.OrdTypeMarket,
				instrument: workloadInstrument, tif: venue.TimeInForceIOC, qty: 3 * workloadPerLevel * workloadOrderQty})
			var refills []*stampedCmd
			for level := 1; level <= 3; level++ {
				for range workloadPerLevel {
					refills = append(refills, newStampedOrder(orderArgs{session: 1, side: venue.SideSell,
						ordType: venue.OrdTypeLimit, instrument: workloadInstrument, tif: venue.TimeInForceGTC,
						px: workloadRefTicks + int64(level), qty: workloadOrderQty}))
				}
			}
			trades := w.m.Counters().LastTradeID
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				_ = w.m.Apply(sweep.stamp(w.id(b)), w.sink)
				for _, r := range refills {
					_ = w.m.Apply(r.stamp(w.id(b)), w.sink)
				}
			}
			b.StopTimer()
			if got := w.m.Counters().LastTradeID - trades; got != uint64(12*b.N) {
				b.Fatalf("%d trades in %d iterations, want 12 each", got, b.N)
			}
			checkWorkloadBook(b, w)
		})
	}
}

// checkWorkloadBook verifies that a benchmark left the book as it found it.
func checkWorkloadBook(b *testing.B, w *workload) {
	b.Helper()
	for _, side := range []venue.Side{venue.SideBuy, venue.SideSell} {
		levels := w.m.BookLevels(workloadInstrument, side, nil)
		if len(levels) != w.depth {
			b.Fatalf("side %v has %d levels, want %d", side, len(levels), w.depth)
		}
		for _, lv := range levels {
			if lv.Orders != workloadPerLevel || lv.Qty != workloadPerLevel*workloadOrderQty {
				b.Fatalf("side %v level %d: %d orders, qty %d", side, lv.PriceTicks, lv.Orders, lv.Qty)
			}
		}
	}
	if err := w.m.CheckInvariants(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMixedFlow runs exchange-core's published mix on one book of about
// 1,000 orders over about 750 levels: 9% GTC orders, 3% IOC orders, 6%
// cancels, 82% moves (replace to a new price). The command stream is made
// beforehand by a generator that follows the book through the events; the
// benchmark replays it from a snapshot of the starting book, restoring the
// snapshot (untimed) each time the stream is used up. One op is one command.
func BenchmarkMixedFlow(b *testing.B) {
	runMixedFlow(b, newMixedFlow(b, 1_000, 200_000), false)
}

// BenchmarkMixedFlowDeepBook is MixedFlow on a book of about 100,000 orders
// (over the same 750 levels) with a ClOrdID table sized for 800,000
// ClOrdIDs: the pool, the records and the tables no longer fit in the
// caches, as in production, and most commands miss on their index entry,
// their order and its neighbours. "prefetch=on" shows Prefetch each
// command PrefetchDistance commands before applying it, as the pipeline
// does when the commands are already in its ring.
func BenchmarkMixedFlowDeepBook(b *testing.B) {
	flow := newMixedFlow(b, 100_000, 400_000)
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "prefetch=off", true: "prefetch=on"}[on], func(b *testing.B) {
			runMixedFlow(b, flow, on)
		})
	}
}

// runMixedFlow replays flow's command stream from its starting book; with
// prefetch it shows Prefetch the commands ahead of the one it applies.
func runMixedFlow(b *testing.B, flow *mixedFlow, prefetch bool) {
	m, err := NewMatcher(flow.cfg)
	if err != nil {
		b.Fatal(err)
	}
	sink := &ringSink{}
	b.ReportAllocs()
	b.ResetTimer()
	pos, shown := len(flow.offsets), 0 // shown: the last command shown to Prefetch
	for range b.N {
		if pos == len(flow.offsets) {
			b.StopTimer()
			if err := m.ReadSnapshot(bytes.NewReader(flow.start)); err != nil {
				b.Fatal(err)
			}
			pos, shown = 0, 0
			b.StartTimer()
		}
		// As the pipeline does: each command shown once, in order, up to
		// PrefetchDistance ahead.
		for ; prefetch && shown < min(pos+PrefetchDistance, len(flow.offsets)-1); shown++ {
			m.Prefetch(flow.command(shown + 1))
		}
		_ = m.Apply(flow.command(pos), sink)
		pos++
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// mixedFlow is a starting book (as a snapshot) and a command stream.
type mixedFlow struct {
	cfg     Config
	start   []byte
	stream  []byte
	offsets []int
}

// command returns the i-th command of the stream.
func (f *mixedFlow) command(i int) []byte {
	start, end := f.offsets[i], len(f.stream)
	if i+1 < len(f.offsets) {
		end = f.offsets[i+1]
	}
	return f.stream[start:end]
}

func newMixedFlow(tb testing.TB, restingTarget, commands int) *mixedFlow {
	tb.Helper()
	const ref, spread = 100_000, 375 // about 750 levels in use around the reference
	f := &mixedFlow{cfg: Config{OrdersMax: 4 * restingTarget, ClOrdIDsMax: 2 * commands, SessionsMax: 2,
		Instruments: []InstrumentConfig{{ID: 1, Symbol: "MIX", TickSize: "0.01", LotSize: 1, MinQty: 1,
			MaxQty: 1_000_000, RefPriceTicks: ref, BandPercent: 5}}}}
	m, err := NewMatcher(f.cfg)
	if err != nil {
		tb.Fatal(err)
	}
	t := newFlowTracker()
	rng := rand.New(rand.NewPCG(42, 7))
	sink := NewBufferSink(64)
	var buf [cmdSlotSize]byte
	var seq uint64
	nextID := 0
	apply := func(cmd []byte) {
		sink.Reset()
		if err := m.Apply(cmd, sink); err != nil {
			tb.Fatal(err)
		}
		t.follow(sink)
	}
	newOrder := func(tif venue.TimeInForce, side venue.Side, px int64) []byte {
		seq++
		nextID++
		return encodeNewOrder(buf[:], &orderArgs{seq: seq, session: 1, side: side, ordType: venue.OrdTypeLimit,
			instrument: 1, tif: tif, px: px, qty: int64(1 + rng.IntN(100)), clOrdID: "f" + strconv.Itoa(nextID)})
	}
	// Passive price: bids below the reference, asks above, spread over the levels.
	passive := func(side venue.Side) int64 {
		off := int64(1 + rng.IntN(spread))
		if side == venue.SideBuy {
			return ref - off
		}
		return ref + off
	}
	side := func() venue.Side { return venue.Side(1 + rng.IntN(2)) }
	for t.live.Len() < restingTarget {
		s := side()
		apply(newOrder(venue.TimeInForceGTC, s, passive(s)))
	}
	f.start = snapshotOf(tb, m)
	for range commands {
		var cmd []byte
		r := rng.IntN(100)
		switch {
		case r < 9 || t.live.Len() < restingTarget/2:
			s := side()
			cmd = newOrder(venue.TimeInForceGTC, s, passive(s))
		case r < 12:
			s := side()
			px := int64(ref + 10) // an aggressive IOC crossing the near levels
			if s == venue.SideSell {
				px = ref - 10
			}
			cmd = newOrder(venue.TimeInForceIOC, s, px)
		case r < 18:
			o := t.pick(rng)
			seq++
			cmd = encodeCancel(buf[:], &orderRefArgs{seq: seq, session: 1, side: o.side, instrument: 1,
				clOrdID: "x", origClOrdID: o.clOrdID})
		default:
			o := t.pick(rng)
			seq++
			nextID++
			cmd = encodeReplace(buf[:], &orderArgs{seq: seq, session: 1, side: o.side, ordType: venue.OrdTypeLimit,
				instrument: 1, tif: venue.TimeInForceGTC, px: passive(o.side), qty: o.qty,
				clOrdID: "f" + strconv.Itoa(nextID), origClOrdID: o.clOrdID})
		}
		f.offsets = append(f.offsets, len(f.stream))
		f.stream = append(f.stream, cmd...)
		apply(cmd)
	}
	return f
}

// flowTracker follows live orders through the events, as a client would.
type flowTracker struct {
	live flowtest.Live[*flowOrder]
}

type flowOrder struct {
	side    venue.Side
	qty     int64
	clOrdID string
}

func newFlowTracker() *flowTracker { return &flowTracker{} }

func (t *flowTracker) pick(rng *rand.Rand) *flowOrder {
	return t.live.At(rng.IntN(t.live.Len()))
}

func (t *flowTracker) follow(s *BufferSink) {
	for _, ev := range s.All() {
		_, _ = t.live.Follow(ev, func(e *venue.OrderAccepted) (*flowOrder, bool) {
			if e.TimeInForce() != venue.TimeInForceGTC {
				return nil, false
			}
			return &flowOrder{side: e.Side(), qty: e.Qty(), clOrdID: string(e.ClOrdID())}, true
		}, func(o **flowOrder, e *venue.OrderReplaced) {
			(*o).clOrdID, (*o).qty = string(e.ClOrdID()), e.Qty()
		})
	}
}

// BenchmarkStopCascade10 elects ten stops in one command: ten buy stops
// wait at ref+1 … ref+10, and a buy at ref+1 trades there, electing the
// first, whose trade at ref+2 elects the second, and so on up to ref+11.
// An iteration is 24 commands: the ten stops entered, the electing order
// (10 OrderTriggered, 11 trades), the eleven asks put back, and a sell at
// ref−1 with its bid put back, which moves the last trade price below the
// stops again.
func BenchmarkStopCascade10(b *testing.B) {
	const stops = 10
	w := newWorkload(b, 0)
	const ref = workloadRefTicks
	var asks []*stampedCmd
	for level := int64(1); level <= stops+1; level++ {
		asks = append(asks, newStampedOrder(orderArgs{session: 1, side: venue.SideSell, ordType: venue.OrdTypeLimit,
			instrument: workloadInstrument, tif: venue.TimeInForceGTC, px: ref + level, qty: 1}))
	}
	bid := newStampedOrder(orderArgs{session: 1, side: venue.SideBuy, ordType: venue.OrdTypeLimit,
		instrument: workloadInstrument, tif: venue.TimeInForceGTC, px: ref - 1, qty: 1})
	var stopCmds []*stampedCmd
	for level := int64(1); level <= stops; level++ {
		// GTC: the EndOfDay that w.id runs when the ClOrdID table fills
		// must not expire stops waiting in the middle of an iteration.
		stopCmds = append(stopCmds, newStampedOrder(orderArgs{session: 3, side: venue.SideBuy, ordType: venue.OrdTypeStop,
			instrument: workloadInstrument, tif: venue.TimeInForceGTC, stopPx: ref + level, qty: 1}))
	}
	trigger := newStampedOrder(orderArgs{session: 2, side: venue.SideBuy, ordType: venue.OrdTypeLimit,
		instrument: workloadInstrument, px: ref + 1, qty: 1})
	reset := newStampedOrder(orderArgs{session: 2, side: venue.SideSell, ordType: venue.OrdTypeLimit,
		instrument: workloadInstrument, px: ref - 1, qty: 1})
	for _, c := range append(asks, bid) {
		w.apply(b, c.stamp(w.id(nil)))
	}
	resting, trades := w.m.RestingOrders(), w.m.Counters().LastTradeID
	triggered := w.sink.kinds[venue.OrderTriggeredTemplateID&0xFF]
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, c := range stopCmds {
			_ = w.m.Apply(c.stamp(w.id(b)), w.sink)
		}
		_ = w.m.Apply(trigger.stamp(w.id(b)), w.sink)
		for _, c := range asks {
			_ = w.m.Apply(c.stamp(w.id(b)), w.sink)
		}
		_ = w.m.Apply(reset.stamp(w.id(b)), w.sink)
		_ = w.m.Apply(bid.stamp(w.id(b)), w.sink)
	}
	b.StopTimer()
	got := w.sink.kinds[venue.OrderTriggeredTemplateID&0xFF] - triggered
	if got != uint64(stops*b.N) || w.m.Counters().LastTradeID-trades != uint64((stops+2)*b.N) ||
		w.m.RestingOrders() != resting || w.m.WaitingStops() != 0 {
		b.Fatalf("%d stops elected, %d trades in %d iterations; %d resting (%d before), %d waiting",
			got, w.m.Counters().LastTradeID-trades, b.N, w.m.RestingOrders(), resting, w.m.WaitingStops())
	}
}

// BenchmarkIcebergRefill rests an iceberg of 50 showing 10 inside the
// spread and takes it with one buy of 50: five slices, four refills (each
// an OrderRefilled and a move to the back of the level). An iteration is
// the two commands.
func BenchmarkIcebergRefill(b *testing.B) {
	w := newWorkload(b, 10)
	const slices = 5
	iceberg := newStampedOrder(orderArgs{session: 1, side: venue.SideSell, ordType: venue.OrdTypeLimit,
		instrument: workloadInstrument, px: workloadRefTicks, qty: slices * workloadOrderQty, maxFloor: workloadOrderQty})
	take := newStampedOrder(orderArgs{session: 2, side: venue.SideBuy, ordType: venue.OrdTypeLimit,
		instrument: workloadInstrument, tif: venue.TimeInForceIOC, px: workloadRefTicks, qty: slices * workloadOrderQty})
	trades := w.m.Counters().LastTradeID
	refills := w.sink.kinds[venue.OrderRefilledTemplateID&0xFF]
	w.timePairs(b, iceberg, take)
	got := w.sink.kinds[venue.OrderRefilledTemplateID&0xFF] - refills
	if got != uint64((slices-1)*b.N) || w.m.Counters().LastTradeID-trades != uint64(slices*b.N) {
		b.Fatalf("%d refills, %d trades in %d iterations", got, w.m.Counters().LastTradeID-trades, b.N)
	}
	checkWorkloadBook(b, w)
}

// BenchmarkReadSnapshot reads a book of about 100,000 orders (400,000
// ClOrdIDs of the day) into a matcher with the venue's default bounds
// (config/default.toml: 1,048,576 orders, 4,194,304 ClOrdIDs): "new" into
// one just made, on memory the system has just handed over, as a start
// from a snapshot does; "used" into one that holds the book already, as a
// cluster's checkpoint build does.
func BenchmarkReadSnapshot(b *testing.B) {
	flow := newMixedFlow(b, 100_000, 400_000)
	cfg := flow.cfg
	cfg.OrdersMax, cfg.ClOrdIDsMax = 1<<20, 4<<20
	for _, fresh := range []bool{true, false} {
		b.Run(map[bool]string{true: "new", false: "used"}[fresh], func(b *testing.B) {
			var m *Matcher
			for b.Loop() {
				if fresh || m == nil {
					b.StopTimer()
					m = nil
					debug.FreeOSMemory()
					var err error
					if m, err = NewMatcher(cfg); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if err := m.ReadSnapshot(bytes.NewReader(flow.start)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
