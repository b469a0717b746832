package core

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestLevelBitmapAgainstSlice compares next/prev searches with a plain
// []bool over random sets, including word and summary-word boundaries.
func TestLevelBitmapAgainstSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, size := range []int32{1, 63, 64, 65, 4095, 4096, 4097, 10_000} {
		b := newLevelBitmap(size)
		naive := make([]bool, size)
		for step := 0; step < 4000; step++ {
			i := rng.Int32N(size)
			if rng.IntN(3) == 0 {
				b.clear(i)
				naive[i] = false
			} else {
				b.set(i)
				naive[i] = true
			}
			q := rng.Int32N(size+2) - 1
			if got, want := b.nextAtOrAbove(q), naiveNext(naive, q); got != want {
				t.Fatalf("size %d nextAtOrAbove(%d) = %d, want %d", size, q, got, want)
			}
			if got, want := b.prevAtOrBelow(q), naivePrev(naive, q); got != want {
				t.Fatalf("size %d prevAtOrBelow(%d) = %d, want %d", size, q, got, want)
			}
			if b.isSet(i) != naive[i] {
				t.Fatalf("size %d isSet(%d) disagrees", size, i)
			}
		}
	}
}

func naiveNext(s []bool, i int32) int32 {
	for j := max(i, 0); j < int32(len(s)); j++ {
		if s[j] {
			return j
		}
	}
	return -1
}

func naivePrev(s []bool, i int32) int32 {
	for j := min(i, int32(len(s))-1); j >= 0; j-- {
		if s[j] {
			return j
		}
	}
	return -1
}

// TestGTDHeapOrder pushes and removes random orders and checks that the top
// is always the smallest (expireTimeNs, orderID) among those present.
func TestGTDHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	orders := make([]order, 300)
	h := newGTDHeap(len(orders), orders)
	present := map[orderIdx]bool{}
	for step := 0; step < 20_000; step++ {
		oi := orderIdx(rng.IntN(len(orders)))
		if present[oi] {
			h.remove(oi)
			delete(present, oi)
		} else {
			orders[oi] = order{orderID: uint64(oi) + 1, expireTimeNs: rng.Int64N(50), heapPos: -1}
			h.push(oi)
			present[oi] = true
		}
		top, exp := h.top()
		best := noOrder
		for p := range present {
			if best == noOrder || orders[p].expireTimeNs < orders[best].expireTimeNs ||
				(orders[p].expireTimeNs == orders[best].expireTimeNs && orders[p].orderID < orders[best].orderID) {
				best = p
			}
		}
		if top != best || (best != noOrder && exp != orders[best].expireTimeNs) {
			t.Fatalf("step %d: top %d, want %d", step, top, best)
		}
		for i := range h.items {
			if int(orders[h.items[i].slot].heapPos) != i {
				t.Fatalf("step %d: heap position of slot %d is stale", step, h.items[i].slot)
			}
		}
	}
}

// findID looks a ClOrdID given as bytes up in the index.
func findID(x *clOrdIndex, session uint16, id []byte) recIdx {
	k := keyOf(id)
	return x.find(session, &k, k.hash(session))
}

// addKey adds a ClOrdID unknown in session as the matcher does: probe for
// its slot, then add there.
func addKey(x *clOrdIndex, k *clOrdKey, session uint16, o *order, oi orderIdx) recIdx {
	h := k.hash(session)
	known, at := x.probe(session, k, h)
	if known != noRec {
		panic("addKey: the ClOrdID is known")
	}
	return x.add(k, h, at, o, oi)
}

// TestClOrdIndex checks lookups by (session, ClOrdID) and by OrderID, that
// sessions are separate namespaces, and that compaction keeps what it must.
func TestClOrdIndex(t *testing.T) {
	x := newClOrdIndex(100)
	if len(x.byClOrdID) != 256 {
		t.Fatalf("table of %d slots for 100 records, want 256 (half full at most)", len(x.byClOrdID))
	}
	for i := 0; i < 100; i++ {
		id := []byte(strings.Repeat("k", i%36) + string(rune('a'+i%26)))
		if len(id) > venue.ClOrdIDLength {
			id = id[:venue.ClOrdIDLength]
		}
		session := uint16(i % 3)
		if findID(&x, session, id) != noRec {
			continue // the generated id repeats: skip it
		}
		k := keyOf(id)
		ri := addKey(&x, &k, session, &order{sessionIdx: session, orderID: uint64(1000 + i)}, orderIdx(i))
		x.setOrder(uint64(1000+i), ri)
		if findID(&x, session, id) != ri || findID(&x, session+1, id) == ri {
			t.Fatalf("record %d not found in its own session only", i)
		}
		if x.findOrder(uint64(1000+i)) != ri {
			t.Fatalf("order %d not found", 1000+i)
		}
	}
	if x.findOrder(5) != noRec || findID(&x, 0, []byte("never")) != noRec {
		t.Fatal("unknown keys found")
	}
	kept := 0
	x.compact(1099, func(ri recIdx) bool { return x.recs[ri].orderID%2 == 0 }, func(from, to recIdx) { kept++ })
	if x.recsUsed != kept {
		t.Fatalf("compaction kept %d records, reported %d", x.recsUsed, kept)
	}
	// The OrderIDs from 1100 − kept on are in the day's array, the others
	// in the table of earlier days: both must answer.
	if x.dayOrderID != 1100-uint64(kept) || x.dayOrderID <= 1000 {
		t.Fatalf("the day's OrderIDs start at %d, want %d", x.dayOrderID, 1100-kept)
	}
	for ri := 0; ri < x.recsUsed; ri++ {
		r := &x.recs[ri]
		if r.orderID%2 != 0 || findID(&x, r.sessionIdx, r.id()) != recIdx(ri) || x.findOrder(r.orderID) != recIdx(ri) {
			t.Fatalf("record %d is not indexed after compaction", ri)
		}
	}
}

func TestBandTicks(t *testing.T) {
	cases := []struct{ ref, pct, low, high int64 }{
		{10000, 10, 9000, 11000},
		{10001, 10, 9001, 11001}, // 9000.9 rounds up, 11001.1 rounds down
		{2500, 20, 2000, 3000},
		{7, 10, 7, 7}, // 6.3 → 7, 7.7 → 7
		{1, 50, 1, 1},
		{3, 99, 1, 5}, // 0.03 → 1 (clamped to one tick), 5.97 → 5
	}
	for _, c := range cases {
		low, high := bandTicks(c.ref, c.pct)
		if low != c.low || high != c.high {
			t.Errorf("bandTicks(%d, %d) = [%d, %d], want [%d, %d]", c.ref, c.pct, low, high, c.low, c.high)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	good := func() Config {
		return Config{OrdersMax: 10, ClOrdIDsMax: 20, SessionsMax: 2, Instruments: []InstrumentConfig{
			{ID: 1, Symbol: "A", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 10, RefPriceTicks: 100, BandPercent: 10}}}
	}
	if _, err := NewMatcher(good()); err != nil {
		t.Fatalf("good config refused: %v", err)
	}
	cases := map[string]func(*Config){
		"no orders":          func(c *Config) { c.OrdersMax = 0 },
		"clordids < orders":  func(c *Config) { c.ClOrdIDsMax = 5 },
		"no sessions":        func(c *Config) { c.SessionsMax = 0 },
		"sessions 0xFFFF":    func(c *Config) { c.SessionsMax = 0x10000 },
		"no instruments":     func(c *Config) { c.Instruments = nil },
		"id 0":               func(c *Config) { c.Instruments[0].ID = 0 },
		"duplicate id":       func(c *Config) { c.Instruments = append(c.Instruments, c.Instruments[0]) },
		"empty symbol":       func(c *Config) { c.Instruments[0].Symbol = "" },
		"bad tick":           func(c *Config) { c.Instruments[0].TickSize = "0" },
		"lot 0":              func(c *Config) { c.Instruments[0].LotSize = 0 },
		"max < min":          func(c *Config) { c.Instruments[0].MaxQty = 0 },
		"band 0":             func(c *Config) { c.Instruments[0].BandPercent = 0 },
		"band 100":           func(c *Config) { c.Instruments[0].BandPercent = 100 },
		"ref 0":              func(c *Config) { c.Instruments[0].RefPriceTicks = 0 },
		"band too wide":      func(c *Config) { c.LevelsPerSideMax = 10 },
		"notional overflows": func(c *Config) { c.Instruments[0].MaxQty = 1 << 62 },
		"bad status":         func(c *Config) { c.Instruments[0].Status = 9 },
		"stp key too long":   func(c *Config) { c.AccountStpModes = map[string]venue.StpMode{strings.Repeat("a", 17): 1} },
		"stp mode Default":   func(c *Config) { c.AccountStpModes = map[string]venue.StpMode{"a": venue.StpModeDefault} },
	}
	for name, mutate := range cases {
		c := good()
		mutate(&c)
		if _, err := NewMatcher(c); !errors.Is(err, errConfig) {
			t.Errorf("%s: got %v, want a config error", name, err)
		}
	}
}

// TestBufferSink checks framing, reuse without allocation and growth.
func TestBufferSink(t *testing.T) {
	s := NewBufferSink(1)
	write := func(n uint64) {
		var e venue.TradingStatusChanged
		if err := e.WrapEncode(s.Claim(), 0); err != nil {
			t.Fatal(err)
		}
		e.SetCauseSeq(n)
		s.Commit()
	}
	for n := uint64(1); n <= 10; n++ {
		write(n) // grows past the hint
	}
	if s.Len() != 10 || len(s.Bytes()) != 10*venue.TradingStatusChangedEncodedLength {
		t.Fatalf("%d events in %d bytes", s.Len(), len(s.Bytes()))
	}
	for i, ev := range s.All() {
		if seq, _ := eventCause(ev); seq != uint64(i+1) || len(ev) != venue.TradingStatusChangedEncodedLength {
			t.Fatalf("event %d: causeSeq %d, %d bytes", i, seq, len(ev))
		}
	}
	if allocs := testing.AllocsPerRun(100, func() {
		s.Reset()
		for n := uint64(1); n <= 10; n++ {
			write(n)
		}
	}); allocs != 0 {
		t.Fatalf("a reused sink allocates %v times", allocs)
	}
}

func TestInstrumentIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{1, 2, 3, 17, 1000} {
		ids := make([]uint32, 0, n)
		seen := map[uint32]bool{}
		for len(ids) < n {
			id := 1 + rng.Uint32N(1<<31)
			if n < 20 {
				id = 1 + rng.Uint32N(64) // small ids collide in the table
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		x := newInstrumentIndex(ids, len(ids))
		for i, id := range ids {
			if got, ok := x.lookup(id); !ok || int(got) != i {
				t.Fatalf("n=%d: lookup(%d) = %d %v, want %d", n, id, got, ok, i)
			}
		}
		for range 1000 {
			id := rng.Uint32N(1 << 31)
			if _, ok := x.lookup(id); ok != seen[id] {
				t.Fatalf("n=%d: lookup(%d) found=%v", n, id, ok)
			}
		}
	}
}

// TestClOrdIndexSharedPrefix fills the table with ClOrdIDs that differ only
// in their last byte, all of which hash to one bucket, and checks that
// probing past the bucket still finds each of them.
func TestClOrdIndexSharedPrefix(t *testing.T) {
	x := newClOrdIndex(300)
	for c := 1; c < 256; c++ {
		id := []byte{'P', 'X', byte(c)}
		if findID(&x, 7, id) != noRec {
			t.Fatalf("%q found before it was added", id)
		}
		k := keyOf(id)
		addKey(&x, &k, 7, &order{sessionIdx: 7}, 0)
	}
	for c := 1; c < 256; c++ {
		id := []byte{'P', 'X', byte(c)}
		ri := findID(&x, 7, id)
		if ri == noRec || string(x.recs[ri].id()) != string(id) {
			t.Fatalf("%q not found", id)
		}
		if findID(&x, 8, id) != noRec {
			t.Fatalf("%q found in another session", id)
		}
	}
}

// TestOrderSize holds an order slot to two cache lines: the pool is indexed
// by a shift, and a filled resting order touches at most two lines.
func TestOrderSize(t *testing.T) {
	if size := unsafe.Sizeof(order{}); size != 128 {
		t.Fatalf("order is %d bytes, want 128", size)
	}
}
