package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestMonitorFollowsTheMatcher feeds the monitor the events of random
// commands applied by a real matcher and checks after every command that
// its best bid and offer, resting orders and resting quantities equal the
// matcher's book.
func TestMonitorFollowsTheMatcher(t *testing.T) {
	cfg := core.Config{OrdersMax: 512, ClOrdIDsMax: 8192, SessionsMax: 4, Instruments: []core.InstrumentConfig{
		{ID: 1, Symbol: "A", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 1000, RefPriceTicks: 10000, BandPercent: 10},
		{ID: 2, Symbol: "B", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 1000, RefPriceTicks: 5000, BandPercent: 10}}}
	m, err := core.NewMatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mon := newMonitor(map[uint32]instrumentSeed{1: {status: venue.TradingStatusOpen}, 2: {status: venue.TradingStatusOpen}})
	rng := rand.New(rand.NewPCG(7, 21))
	buf := make([]byte, 256)
	sink := core.NewBufferSink(64)
	var live []uint64
	fills := 0
	const commands = 5000
	for seq := uint64(0); seq < commands; seq++ {
		cmd := randomCommand(t, rng, buf, seq, live)
		sink.Reset()
		if err := m.Apply(cmd, sink); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < sink.Len(); i++ {
			ev := sink.Event(i)
			mon.apply(ev)
			id, _ := venue.TemplateIDOf(ev, 0)
			if id == venue.FillTemplateID {
				fills++
			}
			if id == venue.OrderAcceptedTemplateID {
				var e venue.OrderAccepted
				_ = e.WrapDecode(ev, 0)
				live = append(live, e.OrderID())
			}
		}
		if len(live) > 256 {
			live = live[len(live)-256:]
		}
		for _, in := range cfg.Instruments {
			if err := sameBook(m, mon, in.ID); err != nil {
				t.Fatalf("after command %d: instrument %d: %v", seq, in.ID, err)
			}
		}
	}
	if n, _ := mon.EventsHash(); n < commands {
		t.Fatalf("%d events for %d commands", n, commands)
	}
	if fills == 0 || m.RestingOrders() == 0 {
		t.Fatalf("the workload neither trades nor rests: %d fills, %d resting", fills, m.RestingOrders())
	}
}

func randomCommand(t testing.TB, rng *rand.Rand, buf []byte, seq uint64, live []uint64) []byte {
	instrument := uint32(1 + rng.IntN(2))
	mid := int64(10000)
	if instrument == 2 {
		mid = 5000
	}
	switch r := rng.IntN(100); {
	case r < 2:
		var c venue.OperatorCommand
		_ = c.WrapEncode(buf, 0)
		c.SetSeq(seq)
		c.SetTimestampNs(int64(seq))
		c.SetAction(venue.OperatorActionTypeEndOfDay)
		return buf[:c.EncodedLength()]
	case r < 30 && len(live) > 0:
		return cmdtest.Cancel(t, buf, cmdtest.Order{Seq: seq, TimestampNs: int64(seq), Session: 1, Instrument: instrument,
			Side: venue.SideBuy, OrderID: live[rng.IntN(len(live))], ClOrdID: fmt.Sprintf("c%d", seq)})
	default:
		// The draws in a fixed order (session, side, type and price,
		// time in force, quantity), so a seed gives the same flow.
		o := cmdtest.Order{Seq: seq, TimestampNs: int64(seq), Instrument: instrument, OrdType: venue.OrdTypeLimit,
			ClOrdID: fmt.Sprintf("o%d", seq)}
		o.Session = uint16(rng.IntN(3))
		o.Side = venue.Side(1 + rng.IntN(2))
		if rng.IntN(10) == 0 {
			o.OrdType = venue.OrdTypeMarket
		} else {
			o.PriceTicks = mid - 20 + rng.Int64N(41)
		}
		o.TIF = []venue.TimeInForce{venue.TimeInForceDay, venue.TimeInForceGTC, venue.TimeInForceIOC}[rng.IntN(3)]
		if o.OrdType == venue.OrdTypeMarket {
			o.TIF = venue.TimeInForceIOC
		}
		o.Qty = 1 + rng.Int64N(20)
		return cmdtest.NewOrder(t, buf, o)
	}
}

// sameBook compares the monitor's view of an instrument with the matcher's book.
func sameBook(m *core.Matcher, mon *Monitor, id uint32) error {
	st, _ := mon.Instrument(id)
	bids, asks := m.BookLevels(id, venue.SideBuy, nil), m.BookLevels(id, venue.SideSell, nil)
	var orders int
	var bidQty, askQty int64
	for _, l := range bids {
		orders += l.Orders
		bidQty += l.Qty
	}
	for _, l := range asks {
		orders += l.Orders
		askQty += l.Qty
	}
	want := InstrumentState{Status: st.Status, RestingOrders: orders, BidLevels: len(bids), AskLevels: len(asks),
		BidQtyTotal: bidQty, AskQtyTotal: askQty}
	if len(bids) > 0 {
		want.BidTicks, want.BidQty = bids[0].PriceTicks, bids[0].Qty
	}
	if len(asks) > 0 {
		want.AskTicks, want.AskQty = asks[0].PriceTicks, asks[0].Qty
	}
	if st != want {
		return fmt.Errorf("monitor %+v, matcher %+v", st, want)
	}
	return nil
}

// BenchmarkMonitorApply is the monitor's cost per event of a random order
// flow (its allocations are map growth for resting orders and levels).
func BenchmarkMonitorApply(b *testing.B) {
	cfg := core.Config{OrdersMax: 4096, ClOrdIDsMax: 1 << 20, SessionsMax: 4, Instruments: []core.InstrumentConfig{
		{ID: 1, Symbol: "A", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 1000, RefPriceTicks: 10000, BandPercent: 10},
		{ID: 2, Symbol: "B", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 1000, RefPriceTicks: 5000, BandPercent: 10}}}
	m, err := core.NewMatcher(cfg)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 256)
	sink := core.NewBufferSink(1 << 16)
	var live []uint64
	for seq := uint64(0); seq < 50_000; seq++ {
		start := sink.Len()
		if err := m.Apply(randomCommand(b, rng, buf, seq, live), sink); err != nil {
			b.Fatal(err)
		}
		for i := start; i < sink.Len(); i++ {
			var e venue.OrderAccepted
			if e.WrapDecode(sink.Event(i), 0) == nil {
				live = append(live, e.OrderID())
			}
		}
		if len(live) > 256 {
			live = live[len(live)-256:]
		}
	}
	events := make([][]byte, sink.Len())
	for i := range events {
		events[i] = sink.Event(i)
	}
	b.ResetTimer()
	b.ReportAllocs()
	var mon *Monitor
	for i := 0; i < b.N; i++ {
		if i%len(events) == 0 {
			b.StopTimer()
			mon = newMonitor(map[uint32]instrumentSeed{1: {status: venue.TradingStatusOpen}, 2: {status: venue.TradingStatusOpen}})
			b.StartTimer()
		}
		mon.apply(events[i%len(events)])
	}
}

// TestMonitorKnowsTheVolatilityAuction: the monitor tells an interruption
// of continuous trading from a call's extension and knows when each
// uncrosses, from the events, as the matcher does; a monitor seeded from a
// matcher in an extension (a restart, a promotion) starts knowing it too,
// and the uncross clears it.
func TestMonitorKnowsTheVolatilityAuction(t *testing.T) {
	cfg := core.Config{OrdersMax: 64, ClOrdIDsMax: 256, SessionsMax: 2, Instruments: []core.InstrumentConfig{
		{ID: 1, Symbol: "OPG", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 1000, RefPriceTicks: 10000, BandPercent: 10,
			VolatilityBandTicks: 100, VolatilityAuctionNs: 1000, CallExtension: true, Status: venue.TradingStatusOpeningCall},
		{ID: 2, Symbol: "CNT", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 1000, RefPriceTicks: 10000, BandPercent: 10,
			VolatilityBandTicks: 100, VolatilityAuctionNs: 1000}}}
	m, err := core.NewMatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mon := newMonitor(map[uint32]instrumentSeed{1: {status: venue.TradingStatusOpeningCall}, 2: {status: venue.TradingStatusOpen}})
	buf := make([]byte, 256)
	sink := core.NewBufferSink(64)
	seq := uint64(0)
	apply := func(cmd []byte) {
		t.Helper()
		sink.Reset()
		if err := m.Apply(cmd, sink); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < sink.Len(); i++ {
			mon.apply(sink.Event(i))
		}
		seq++
	}
	order := func(instrument uint32, side venue.Side, px int64) {
		apply(cmdtest.NewOrder(t, buf, cmdtest.Order{Seq: seq, TimestampNs: int64(100 + seq), Instrument: instrument, Side: side,
			OrdType: venue.OrdTypeLimit, PriceTicks: px, Qty: 1, TIF: venue.TimeInForceDay, ClOrdID: fmt.Sprintf("o%d", seq)}))
	}
	same := func(id uint32, wantOf venue.TradingStatus) {
		t.Helper()
		st, _ := mon.Instrument(id)
		endNs, of, ok := m.VolatilityAuction(id)
		if !ok || of != wantOf || st.AuctionOf != wantOf || st.AuctionEndNs != endNs || st.Status != venue.TradingStatusVolatilityAuction {
			t.Fatalf("instrument %d: monitor %+v, matcher end %d of %v (%v); want an auction of %v", id, st, endNs, of, ok, wantOf)
		}
	}
	// OPG would open at 101.50, outside 99.00-101.00: the phase change extends its call.
	order(1, venue.SideBuy, 10200)
	order(1, venue.SideSell, 10150)
	var c venue.OperatorCommand
	_ = c.WrapEncode(buf, 0)
	c.SetSeq(seq)
	c.SetTimestampNs(int64(100 + seq))
	c.SetAction(venue.OperatorActionTypeSetPhaseStatus)
	c.SetInstrumentID(1)
	c.SetStatus(venue.TradingStatusOpen)
	apply(buf[:c.EncodedLength()])
	same(1, venue.TradingStatusOpeningCall)
	// CNT: a trade at 100.00, then an order that would trade at 102.00.
	order(2, venue.SideSell, 10000)
	order(2, venue.SideBuy, 10000)
	order(2, venue.SideSell, 10200)
	order(2, venue.SideBuy, 10200)
	same(2, venue.TradingStatusVolatilityAuction)
	if seeded, _ := newMonitor(instrumentSeeds(m, []config.Instrument{{ID: 1}})).Instrument(1); seeded.AuctionOf != venue.TradingStatusOpeningCall ||
		seeded.AuctionEndNs == 0 {
		t.Fatalf("a monitor seeded from the matcher: %+v", seeded)
	}
	// Past both ends: they uncross and the auctions are gone.
	var tick venue.Tick
	_ = tick.WrapEncode(buf, 0)
	tick.SetSeq(seq)
	tick.SetTimestampNs(1_000_000)
	apply(buf[:tick.EncodedLength()])
	for _, id := range []uint32{1, 2} {
		if st, _ := mon.Instrument(id); st.Status != venue.TradingStatusOpen || st.AuctionEndNs != 0 || st.AuctionOf != 0 {
			t.Fatalf("instrument %d after its uncross: %+v", id, st)
		}
	}
}

// TestMonitorKnowsWhereAHaltCameFrom: the status a halt interrupted, where
// a resume returns the instrument, is the matcher's in the monitor that
// follows its events (random status changes and phase changes, of one
// instrument and of all, refused ones among them) as in one seeded from
// it at a start or a promotion.
func TestMonitorKnowsWhereAHaltCameFrom(t *testing.T) {
	cfg := core.Config{OrdersMax: 64, ClOrdIDsMax: 4096, SessionsMax: 2, Instruments: []core.InstrumentConfig{
		{ID: 1, Symbol: "A", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 1000, RefPriceTicks: 10000, BandPercent: 10},
		{ID: 2, Symbol: "B", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 1000, RefPriceTicks: 5000, BandPercent: 10}}}
	instruments := []config.Instrument{{ID: 1}, {ID: 2}}
	m, err := core.NewMatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mon := newMonitor(instrumentSeeds(m, instruments))
	rng := rand.New(rand.NewPCG(3, 11))
	buf := make([]byte, 256)
	sink := core.NewBufferSink(64)
	statuses := []venue.TradingStatus{venue.TradingStatusOpen, venue.TradingStatusHalted, venue.TradingStatusClosed,
		venue.TradingStatusOpeningCall, venue.TradingStatusClosingCall, venue.TradingStatusHalted, 0x7f}
	remembered := 0
	for seq := uint64(0); seq < 3000; seq++ {
		var c venue.OperatorCommand
		_ = c.WrapEncode(buf, 0)
		c.SetSeq(seq)
		c.SetTimestampNs(int64(seq))
		c.SetAction(venue.OperatorActionTypeSetTradingStatus)
		if rng.IntN(3) == 0 {
			c.SetAction(venue.OperatorActionTypeSetPhaseStatus)
		}
		c.SetInstrumentID(uint32(rng.IntN(3)))
		c.SetStatus(statuses[rng.IntN(len(statuses))])
		sink.Reset()
		if err := m.Apply(buf[:c.EncodedLength()], sink); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < sink.Len(); i++ {
			mon.apply(sink.Event(i))
		}
		seeded := newMonitor(instrumentSeeds(m, instruments))
		for _, in := range instruments {
			want, _ := m.HaltedFrom(in.ID)
			live, _ := mon.Instrument(in.ID)
			start, _ := seeded.Instrument(in.ID)
			if live.HaltedFrom != want || start.HaltedFrom != want {
				t.Fatalf("after command %d (%v %v of %d): instrument %d halted from %v in the matcher, %v live, %v seeded",
					seq, c.Action(), c.Status(), c.InstrumentID(), in.ID, want, live.HaltedFrom, start.HaltedFrom)
			}
			if want == venue.TradingStatusClosed {
				remembered++
			}
		}
	}
	if remembered == 0 {
		t.Fatal("no instrument was ever halted from Closed: the workload proves little")
	}
}
