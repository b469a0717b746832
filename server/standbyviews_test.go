package server

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/internal/flowtest"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// standbyFlow makes random commands of every kind that opens, changes or
// ends resting orders: limit, market, stop and post-only orders of every
// time in force, cancels, replaces, mass cancels, session disconnects,
// auctions (a call, then the open that uncrosses it), ticks that expire GTD
// orders, ends of day and an added instrument.
type standbyFlow struct {
	rng     *rand.Rand
	clockNs int64
	live    flowtest.Live[liveOrder]
	added   bool
	buf     [512]byte
}

type liveOrder struct {
	id         uint64
	instrument uint32
	session    uint16
	side       venue.Side
	ordType    venue.OrdType
	tif        venue.TimeInForce
}

// follow notes an event's effect on the live orders the flow picks from.
func (f *standbyFlow) follow(ev []byte) {
	_, _ = f.live.Follow(ev, func(e *venue.OrderAccepted) (liveOrder, bool) {
		return liveOrder{e.OrderID(), e.InstrumentID(), e.SessionIdx(), e.Side(), e.OrdType(), e.TimeInForce()}, e.LeavesQty() > 0
	}, nil)
}

// price is a limit price near an instrument's reference: buys mostly
// below it, sells mostly above, so that the books fill up and still trade.
func (f *standbyFlow) price(mid int64, side venue.Side) int64 {
	if side == venue.SideBuy {
		return mid - 15 + f.rng.Int64N(18)
	}
	return mid - 2 + f.rng.Int64N(18)
}

// terms are an instrument's reference price and its lot.
func (f *standbyFlow) terms(instrument uint32) (mid, lot int64) {
	switch instrument {
	case 2:
		return 1000, 10
	case 7:
		return 400, 10
	}
	return 10_000, 1
}

func (f *standbyFlow) next(t *testing.T, seq uint64) []byte {
	t.Helper()
	f.clockNs += int64(1 + f.rng.IntN(20_000_000))
	instruments := []uint32{1, 2}
	if f.added {
		instruments = append(instruments, 7)
	}
	instrument := instruments[f.rng.IntN(len(instruments))]
	mid, lot := f.terms(instrument)
	session := uint16(f.rng.IntN(4))
	side := venue.Side(1 + f.rng.IntN(2))
	switch r := f.rng.IntN(1000); {
	case r < 3 && !f.added && seq > 500:
		f.added = true
		a := core.AddedInstrument{ID: 7, Symbol: "NEWCO", Tick: decimal.Tick{Mantissa: 5, Scale: 2}, LotSize: 10, MinQty: 10,
			MaxQty: 1000, RefPriceTicks: 400, BandPercent: 20, Status: venue.TradingStatusOpen}
		if err := core.EncodeAddInstrument(f.buf[:], seq, f.clockNs, &a, "alice", "listing"); err != nil {
			t.Fatal(err)
		}
		return f.buf[:]
	case r < 1:
		// The venue's end of day (ops): its OperatorResult tells a view
		// kept from the events that the ClOrdIDs replaces took are
		// forgotten, as the plain EndOfDay command, which emits nothing,
		// cannot.
		return cmdtest.Encode(t, f.buf[:], func(c *venue.OperatorCommand) {
			c.SetSeq(seq)
			c.SetTimestampNs(f.clockNs)
			c.SetAction(venue.OperatorActionTypeEndOfDay)
		})
	case r < 20:
		f.clockNs += int64(f.rng.IntN(200_000_000))
		return cmdtest.Encode(t, f.buf[:], func(c *venue.Tick) { c.SetSeq(seq); c.SetTimestampNs(f.clockNs) })
	case r < 35:
		// A call, or back to continuous trading (the uncross).
		st := venue.TradingStatusOpen
		if f.rng.IntN(2) == 0 {
			st = []venue.TradingStatus{venue.TradingStatusOpeningCall, venue.TradingStatusClosingCall, venue.TradingStatusOpeningCall,
				venue.TradingStatusHalted}[f.rng.IntN(4)]
		}
		return cmdtest.SetStatus(t, f.buf[:], seq, f.clockNs, instrument, st)
	case r < 40:
		return cmdtest.Encode(t, f.buf[:], func(c *venue.MassCancel) {
			c.SetSeq(seq)
			c.SetTimestampNs(f.clockNs)
			c.SetSessionIdx(session)
			c.SetFilterSessionIdx(session)
			if f.rng.IntN(2) == 0 {
				c.SetInstrumentID(instrument)
			}
			c.SetMassCancelRequestType(7)
			if err := c.SetClOrdIDString(fmt.Sprintf("m%d", seq)); err != nil {
				t.Fatal(err)
			}
		})
	case r < 42:
		return cmdtest.Encode(t, f.buf[:], func(c *venue.SessionDisconnected) {
			c.SetSeq(seq)
			c.SetTimestampNs(f.clockNs)
			c.SetSessionIdx(session)
			c.SetCancelOnDisconnect(1)
		})
	case r < 70 && f.live.Len() > 0:
		o := f.live.At(f.rng.IntN(f.live.Len()))
		// With the checks of every cancel the gateway journals: a done
		// cancel's ClOrdID is recorded, naming the order it ended, as a
		// view kept from the events has it.
		return cmdtest.Encode(t, f.buf[:], func(c *venue.CancelOrder) {
			c.SetSeq(seq)
			c.SetTimestampNs(f.clockNs)
			c.SetSessionIdx(o.session)
			c.SetSide(o.side)
			c.SetInstrumentID(o.instrument)
			c.SetOrderID(o.id)
			c.SetChecks(core.CancelMatchesOrder | core.CancelRemembersClOrdID)
			if err := c.SetClOrdIDString(fmt.Sprintf("c%d", seq)); err != nil {
				t.Fatal(err)
			}
		})
	case r < 170 && f.live.Len() > 0:
		o := f.live.At(f.rng.IntN(f.live.Len()))
		if o.ordType != venue.OrdTypeLimit {
			break // only limit orders take a new price here
		}
		mid, lot := f.terms(o.instrument)
		return cmdtest.Encode(t, f.buf[:], func(c *venue.ReplaceOrder) {
			c.SetSeq(seq)
			c.SetTimestampNs(f.clockNs)
			c.SetSessionIdx(o.session)
			c.SetSide(o.side)
			c.SetInstrumentID(o.instrument)
			c.SetOrderID(o.id)
			c.SetOrdType(venue.OrdTypeLimit)
			c.SetTimeInForce(o.tif)
			c.SetPriceTicks(f.price(mid, o.side))
			c.SetQty(lot * (1 + f.rng.Int64N(20)))
			if o.tif == venue.TimeInForceGTD {
				c.SetExpireTimeNs(f.clockNs + f.rng.Int64N(1_000_000_000))
			}
			if err := c.SetClOrdIDString(fmt.Sprintf("r%d", seq)); err != nil {
				t.Fatal(err)
			}
			if err := c.SetAccountString(fmt.Sprintf("acct%d", o.session)); err != nil {
				t.Fatal(err)
			}
		})
	}
	return cmdtest.Encode(t, f.buf[:], func(c *venue.NewOrder) {
		c.SetSeq(seq)
		c.SetTimestampNs(f.clockNs)
		c.SetSessionIdx(session)
		c.SetSide(side)
		c.SetInstrumentID(instrument)
		c.SetOrdType(venue.OrdTypeLimit)
		c.SetPriceTicks(f.price(mid, side))
		switch k := f.rng.IntN(20); {
		case k == 0:
			c.SetOrdType(venue.OrdTypeMarket)
			c.SetPriceTicks(0)
		case k == 1:
			c.SetOrdType(venue.OrdTypeStop)
			c.SetPriceTicks(0)
			c.SetStopPxTicks(f.price(mid, side))
		case k == 2:
			c.SetOrdType(venue.OrdTypeStopLimit)
			c.SetStopPxTicks(f.price(mid, side))
		case k < 5:
			c.SetFlags(venue.OrderFlagsPostOnly)
		}
		tifs := []venue.TimeInForce{venue.TimeInForceDay, venue.TimeInForceGTC, venue.TimeInForceIOC, venue.TimeInForceGTD,
			venue.TimeInForceFOK, venue.TimeInForceAtTheOpening}
		tif := tifs[f.rng.IntN(len(tifs))]
		c.SetTimeInForce(tif)
		if tif == venue.TimeInForceGTD {
			c.SetExpireTimeNs(f.clockNs + f.rng.Int64N(1_000_000_000))
		}
		c.SetQty(lot * (1 + f.rng.Int64N(20)))
		if err := c.SetClOrdIDString(fmt.Sprintf("o%d", seq)); err != nil {
			t.Fatal(err)
		}
		if err := c.SetAccountString(fmt.Sprintf("acct%d", session)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestStandbyViewsEqualBookWalk applies a random workload to a follower's
// matcher through its standby sink, and checks at intervals that the
// open-order view and the control plane's resting orders it keeps from the
// events equal those a walk of the books builds (what a new leader would
// otherwise build at promotion; docs/benchmarks.md, "failover").
func TestStandbyViewsEqualBookWalk(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), "")
	m, err := core.NewMatcher(MatcherConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	// The end of day's OperatorResult reaches the session control and the schedule.
	disabled, err := newDisabledSessions(cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	sink := standbySink{hash: journal.NewHashSink(), disabled: disabled, schedule: newScheduleProgress(cfg)}
	sink.open, sink.rest = standbyViews(cfg, m)
	count := make(map[uint16]int)
	f := &standbyFlow{rng: rand.New(rand.NewPCG(22, 5)), clockNs: 1_780_000_000_000_000_000}
	check := func(at uint64) {
		t.Helper()
		open, rest := standbyViews(cfg, m)
		if d := sink.open.Diff(open); d != "" {
			t.Fatalf("after command %d: open-order view kept from events / walked: %s", at, d)
		}
		if d := sink.rest.Diff(rest); d != "" {
			t.Fatalf("after command %d: resting orders kept from events / walked: %s", at, d)
		}
	}
	most, stops := 0, 0 // live orders and waiting stops at a check
	const commands = 20_000
	for seq := uint64(1); seq <= commands; seq++ {
		cmd := f.next(t, seq)
		tee := &teeEvents{standbySink: &sink, on: func(ev []byte) {
			id, _ := venue.TemplateIDOf(ev, 0)
			count[id]++
			f.follow(ev)
		}}
		if err := m.Apply(cmd, tee); err != nil {
			t.Fatalf("command %d: %v", seq, err)
		}
		if seq%1000 == 0 {
			check(seq)
			most = max(most, m.RestingOrders()+m.WaitingStops())
			stops = max(stops, m.WaitingStops())
		}
	}
	check(commands)
	if sink.open.Refused() != 0 {
		t.Fatalf("the open-order view refused %d orders", sink.open.Refused())
	}
	// The workload must have done what the test claims to cover.
	for _, id := range []uint16{venue.FillTemplateID, venue.OrderCancelledTemplateID, venue.OrderReplacedTemplateID,
		venue.MassCancelReportTemplateID, venue.InstrumentAddedTemplateID, venue.TradingStatusChangedTemplateID} {
		if count[id] == 0 {
			t.Fatalf("no event of template %d in the workload: %v", id, count)
		}
	}
	if most < 150 || stops == 0 {
		t.Fatalf("at most %d live orders and %d waiting stops at a check: the comparison is too thin", most, stops)
	}
	t.Logf("events by template %v; at most %d live orders at a check", count, most)
}

// teeEvents passes each event to the standby sink, then to on.
type teeEvents struct {
	*standbySink
	on func([]byte)
}

func (s *teeEvents) Commit() {
	s.standbySink.Commit()
	s.on(s.slot[:])
}

// BenchmarkPromotionViews is the work the standby views take off a
// promotion, with 200,000 orders resting: "walk" is what a new leader did
// (read every live order, enter each into the open-order view and the
// control plane's resting orders), "event" what a follower now does per
// event instead (both views, for the events of a new order that rests and
// its cancel). Run: go test -run '^$' -bench PromotionViews -benchtime 5x -count 4 ./server/
func BenchmarkPromotionViews(b *testing.B) {
	const resting = 200_000
	cfg := testConfig(&testing.T{}, b.TempDir(), "")
	cfg.Engine.OrdersMax, cfg.Engine.ClOrdIDsMax = resting+1024, resting+30_000
	m, err := core.NewMatcher(MatcherConfig(cfg))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 512)
	sink := core.NewBufferSink(8)
	for i := range resting {
		o := cmdtest.Order{Seq: uint64(i + 1), TimestampNs: int64(i + 1), Session: uint16(i % 4), Instrument: 1,
			OrdType: venue.OrdTypeLimit, TIF: venue.TimeInForceGTC, Qty: 1 + int64(i%50), ClOrdID: fmt.Sprintf("o%d", i),
			Account: fmt.Sprintf("acct%d", i%4), Side: venue.SideBuy, PriceTicks: 9_000 + int64(i%999)}
		if i%2 == 1 {
			o.Side, o.PriceTicks = venue.SideSell, 10_001+int64(i%999)
		}
		sink.Reset()
		if err := m.Apply(cmdtest.NewOrder(b, buf, o), sink); err != nil {
			b.Fatal(err)
		}
	}
	if m.RestingOrders() != resting {
		b.Fatalf("%d resting, want %d", m.RestingOrders(), resting)
	}
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			instruments := listedInstruments(cfg, m)
			views := openOrdersOf(m, instruments)
			gateway.NewOpenView(len(cfg.Sessions), cfg.Engine.OrdersMax, cfg.Engine.ClOrdIDsMax).Seed(views)
			ops.NewStandbyResting(m, instruments, views)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/resting, "ns/order")
	})
	// The events of 10,000 orders that rest and are cancelled: fed again
	// each op, they enter and leave the views the same way.
	var events [][]byte
	for i := range 10_000 {
		seq := uint64(resting + 2*i + 1)
		o := cmdtest.Order{Seq: seq, TimestampNs: int64(seq), Session: 1, Instrument: 1, OrdType: venue.OrdTypeLimit,
			TIF: venue.TimeInForceGTC, Qty: 5, ClOrdID: fmt.Sprintf("n%d", seq), Account: "acct1", Side: venue.SideBuy, PriceTicks: 9_500}
		sink.Reset()
		if err := m.Apply(cmdtest.NewOrder(b, buf, o), sink); err != nil {
			b.Fatal(err)
		}
		var e venue.OrderAccepted
		if err := e.WrapDecode(sink.Event(0), 0); err != nil {
			b.Fatal(err)
		}
		events = append(events, append([]byte(nil), sink.Event(0)...))
		sink.Reset()
		c := cmdtest.Cancel(b, buf, cmdtest.Order{Seq: seq + 1, TimestampNs: int64(seq + 1), Session: 1, Instrument: 1,
			Side: venue.SideBuy, OrderID: e.OrderID(), ClOrdID: fmt.Sprintf("c%d", seq)})
		if err := m.Apply(c, sink); err != nil || sink.Len() != 1 {
			b.Fatalf("cancel: %v, %d events", err, sink.Len())
		}
		events = append(events, append([]byte(nil), sink.Event(0)...))
	}
	b.Run("event", func(b *testing.B) {
		open, rest := standbyViews(cfg, m)
		for b.Loop() {
			for _, ev := range events {
				open.Event(ev)
				rest.Event(ev)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
	})
}
