package core

import (
	"encoding/binary"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// This file holds the workload shared by the allocation tests and the
// benchmarks: a book of `depth` price levels per side with 4 resting orders
// each, and pre-encoded commands whose ClOrdID is re-stamped in place (a
// fixed-width counter) so that issuing one costs no allocation.

const (
	workloadInstrument = 1
	workloadRefTicks   = 100_000 // 1,000.00 at a 0.01 tick
	workloadOrderQty   = 10
	workloadPerLevel   = 4
	workloadIDWidth    = 16
	// workloadClOrdIDs sizes the ClOrdID table of the benchmarks: a day of
	// 65,536 ClOrdIDs, after which an untimed EndOfDay clears it. Its tables
	// (1 MB each) stay in cache; BenchmarkPlaceCancelClOrdIDTable shows the
	// cost of a production-size table, whose probes miss the cache.
	workloadClOrdIDs = 1 << 16
)

// ringSink stands in for the event ring: a fixed set of EventSlotMin-byte
// slots reused in turn.
type ringSink struct {
	slots [64][EventSlotMin]byte
	next  uint64
	kinds [256]uint64 // events seen per template id (low byte)
}

func (s *ringSink) Claim() []byte { return s.slots[s.next&63][:] }

func (s *ringSink) Commit() {
	s.kinds[s.slots[s.next&63][2]]++
	s.next++
}

// stampedCmd is an encoded command whose ClOrdID field can be renumbered.
type stampedCmd struct {
	buf [cmdSlotSize]byte
	cmd []byte
	id  []byte // the ClOrdID field's bytes inside buf
	// own, when set, is a cancel's own ClOrdID field after its first byte,
	// stamped with the same number (newStampedCancelOwnID).
	own []byte
}

// hexPairs[b] is the two hex digits of byte b as a little-endian 16-bit
// word: the first digit in the low byte.
var hexPairs = func() (t [256]uint64) {
	const digits = "0123456789abcdef"
	for b := range t {
		t[b] = uint64(digits[b>>4]) | uint64(digits[b&15])<<8
	}
	return t
}()

// hexWord is the eight hex digits of x, most significant first, as a
// little-endian word.
func hexWord(x uint32) uint64 {
	return hexPairs[x>>24] | hexPairs[x>>16&0xFF]<<16 | hexPairs[x>>8&0xFF]<<32 | hexPairs[x&0xFF]<<48
}

// stamp writes n as a fixed-width hex ClOrdID and returns the command. It
// stores the field as two whole words, as a producer copying a command into
// a ring slot does, rather than byte by byte: fewer of the harness's own
// instructions in each iteration, and no narrow stores right before the
// matcher's word loads of the same bytes.
func (c *stampedCmd) stamp(n uint64) []byte {
	id := c.id[:workloadIDWidth]
	binary.LittleEndian.PutUint64(id[0:8], hexWord(uint32(n>>32)))
	binary.LittleEndian.PutUint64(id[8:16], hexWord(uint32(n)))
	if c.own != nil {
		binary.LittleEndian.PutUint64(c.own[0:8], hexWord(uint32(n>>32)))
		binary.LittleEndian.PutUint64(c.own[8:16], hexWord(uint32(n)))
	}
	return c.cmd
}

const idPlaceholder = "0000000000000000"

func newStampedOrder(a orderArgs) *stampedCmd {
	c := &stampedCmd{}
	a.clOrdID = idPlaceholder
	c.cmd = encodeNewOrder(c.buf[:], &a)
	var d venue.NewOrder
	mustEncode(d.WrapDecode(c.cmd, 0))
	c.id = d.ClOrdID()
	return c
}

// newStampedCancel encodes a cancel whose OrigClOrdID is the stamped field:
// it cancels the order stamped with the same number.
func newStampedCancel(a orderRefArgs) *stampedCmd {
	c := &stampedCmd{}
	a.origClOrdID = idPlaceholder
	a.clOrdID = "cxl"
	c.cmd = encodeCancel(c.buf[:], &a)
	var d venue.CancelOrder
	mustEncode(d.WrapDecode(c.cmd, 0))
	d.SetChecks(CancelMatchesOrder) // as the gateway's cancels: the order's side and instrument checked
	c.id = d.OrigClOrdID()
	return c
}

// newStampedCancelOwnID is newStampedCancel whose own ClOrdID is "x" and the
// stamped number, new with every cancel, as a client's are; checks are the
// cancel's (CancelMatchesOrder, CancelRemembersClOrdID).
func newStampedCancelOwnID(a orderRefArgs, checks uint8) *stampedCmd {
	c := &stampedCmd{}
	a.origClOrdID = idPlaceholder
	a.clOrdID = "x" + idPlaceholder
	a.checks = checks
	c.cmd = encodeCancel(c.buf[:], &a)
	var d venue.CancelOrder
	mustEncode(d.WrapDecode(c.cmd, 0))
	c.id = d.OrigClOrdID()
	c.own = d.ClOrdID()[1:]
	return c
}

// workload is a matcher with a symmetric book around workloadRefTicks: asks
// at ref+1 … ref+depth, bids at ref−1 … ref−depth, workloadPerLevel GTC
// orders of workloadOrderQty each.
type workload struct {
	m           *Matcher
	sink        *ringSink
	depth       int
	clOrdIDsMax int
	nextID      uint64
	seq         uint64
}

func newWorkload(tb testing.TB, depth int) *workload {
	return newWorkloadSized(tb, depth, workloadClOrdIDs)
}

func newWorkloadSized(tb testing.TB, depth, clOrdIDsMax int) *workload {
	tb.Helper()
	cfg := Config{
		OrdersMax:   2*depth*workloadPerLevel + 1024,
		ClOrdIDsMax: clOrdIDsMax,
		SessionsMax: 4,
		Instruments: []InstrumentConfig{{ID: workloadInstrument, Symbol: "BENCH", TickSize: "0.01", LotSize: 1,
			MinQty: 1, MaxQty: 1_000_000, RefPriceTicks: workloadRefTicks, BandPercent: 20}},
		Risk: workloadRisk(),
	}
	m, err := NewMatcher(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	w := &workload{m: m, sink: &ringSink{}, depth: depth, clOrdIDsMax: clOrdIDsMax}
	for level := 1; level <= depth; level++ {
		for k := 0; k < workloadPerLevel; k++ {
			w.apply(tb, w.order(venue.SideSell, workloadRefTicks+int64(level), workloadOrderQty, venue.TimeInForceGTC))
			w.apply(tb, w.order(venue.SideBuy, workloadRefTicks-int64(level), workloadOrderQty, venue.TimeInForceGTC))
		}
	}
	if m.RestingOrders() != 2*depth*workloadPerLevel {
		tb.Fatalf("book holds %d orders, want %d", m.RestingOrders(), 2*depth*workloadPerLevel)
	}
	return w
}

// order encodes a limit order with a fresh ClOrdID (setup only: it allocates).
func (w *workload) order(side venue.Side, px, qty int64, tif venue.TimeInForce) []byte {
	w.nextID++
	return newStampedOrder(orderArgs{session: 1, side: side, ordType: venue.OrdTypeLimit,
		instrument: workloadInstrument, tif: tif, px: px, qty: qty}).stamp(w.nextID)
}

func (w *workload) apply(tb testing.TB, cmd []byte) {
	if err := w.m.Apply(cmd, w.sink); err != nil {
		tb.Fatal(err)
	}
}

// timePlaceCancel times b.N iterations of a passive buy one tick inside
// the book and its cancel by ClOrdID, and stops the timer for the
// benchmark's checks.
func (w *workload) timePlaceCancel(b *testing.B) {
	w.timePlaceCancelWith(b, newStampedCancel(orderRefArgs{session: 1, side: venue.SideBuy, instrument: workloadInstrument}))
}

// timePlaceCancelWith is timePlaceCancel with the cancel given.
func (w *workload) timePlaceCancelWith(b *testing.B, cancel *stampedCmd) {
	place := newStampedOrder(orderArgs{session: 1, side: venue.SideBuy, ordType: venue.OrdTypeLimit,
		instrument: workloadInstrument, px: workloadRefTicks - 1, qty: workloadOrderQty})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		id := w.id(b)
		_ = w.m.Apply(place.stamp(id), w.sink)
		_ = w.m.Apply(cancel.stamp(id), w.sink)
	}
	b.StopTimer()
}

// timePairs times b.N iterations of first then second, each stamped with a
// new ClOrdID, and stops the timer for the benchmark's checks.
func (w *workload) timePairs(b *testing.B, first, second *stampedCmd) {
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_ = w.m.Apply(first.stamp(w.id(b)), w.sink)
		_ = w.m.Apply(second.stamp(w.id(b)), w.sink)
	}
	b.StopTimer()
}

// id hands out the next ClOrdID number; when the day's ClOrdID table is
// nearly full it runs EndOfDay (the book is GTC, so only the finished
// orders' ClOrdIDs go), outside the benchmark's timer.
func (w *workload) id(b *testing.B) uint64 {
	w.nextID++
	if w.m.index.recsUsed >= w.clOrdIDsMax-64 {
		if b != nil {
			b.StopTimer()
		}
		w.seq++
		var buf [cmdSlotSize]byte
		if err := w.m.Apply(encodeEndOfDay(buf[:], w.seq, 0), w.sink); err != nil {
			panic(err)
		}
		if b != nil {
			b.StartTimer()
		}
	}
	return w.nextID
}
