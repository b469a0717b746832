package marketdata

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/internal/flowtest"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// venueSim drives the real matcher with random commands, as a gateway would,
// and keeps what a client would know (its live orders, learnt from events)
// so that cancels and replaces mostly address real orders.

const simSessions = 4

var simInstruments = []core.InstrumentConfig{
	{ID: 1, Symbol: "ACME", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 1000, RefPriceTicks: 1000, BandPercent: 10,
		VolatilityBandTicks: 15, VolatilityAuctionNs: 100_000_000}, // interruptions, ended by ticks
	{ID: 2, Symbol: "GLOBEX", TickSize: "0.05", LotSize: 10, MinQty: 10, MaxQty: 10000, RefPriceTicks: 500, BandPercent: 10},
	{ID: 7, Symbol: "INITECH", TickSize: "0.001", LotSize: 100, MinQty: 100, MaxQty: 100000, RefPriceTicks: 2500, BandPercent: 2},
}

// simTrackerDefs are the same instruments as the feed knows them.
func simTrackerDefs() []InstrumentDef {
	return []InstrumentDef{
		{ID: 1, Symbol: "ACME", TickMantissa: 1, TickExponent: -2, LotSize: 1},
		{ID: 2, Symbol: "GLOBEX", TickMantissa: 5, TickExponent: -2, LotSize: 10},
		{ID: 7, Symbol: "INITECH", TickMantissa: 1, TickExponent: -3, LotSize: 100},
	}
}

const simOrdersMax = 2048

type simOrder struct {
	id      uint64
	session uint16
	inst    uint32
	side    venue.Side
	price   int64
	qty     int64
	clOrdID string
}

type venueSim struct {
	t     testing.TB
	rng   *rand.Rand
	m     *core.Matcher
	sink  *core.BufferSink
	seq   uint64
	nowNs int64
	clSeq int
	cmd   [256]byte
	live  flowtest.Live[simOrder]
	mid   map[uint32]int64
}

// simStartNs is the simulated venue's clock at its first command.
const simStartNs = 1_700_000_000_000_000_000

func newVenueSim(t testing.TB, seed uint64) *venueSim {
	m, err := core.NewMatcher(core.Config{OrdersMax: simOrdersMax, ClOrdIDsMax: 1 << 17, SessionsMax: simSessions + 1,
		LevelsPerSideMax: 1024, Instruments: simInstruments})
	if err != nil {
		t.Fatal(err)
	}
	s := &venueSim{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15)), m: m,
		sink: core.NewBufferSink(64), nowNs: simStartNs,
		mid: map[uint32]int64{}}
	for _, in := range simInstruments {
		s.mid[in.ID] = in.RefPriceTicks
	}
	return s
}

func (s *venueSim) must(err error) {
	if err != nil {
		s.t.Helper()
		s.t.Fatal(err)
	}
}

// next applies one random command and returns its events (valid until the
// next call).
func (s *venueSim) next() *core.BufferSink {
	return s.apply(s.randomCommand)
}

// apply advances the clock, applies the command that encode makes (it
// stamps s.seq) and returns its events (valid until the next call).
func (s *venueSim) apply(encode func() []byte) *core.BufferSink {
	s.seq++
	s.nowNs += 1000 + s.rng.Int64N(1_000_000)
	s.sink.Reset()
	cmd := encode()
	if err := s.m.Apply(cmd, s.sink); err != nil {
		s.t.Fatalf("matcher refused command %d: %v", s.seq, err)
	}
	for _, ev := range s.sink.All() {
		s.learn(ev)
	}
	return s.sink
}

func (s *venueSim) randomCommand() []byte {
	r := s.rng.IntN(1000)
	if r >= 560 && r < 880 && s.live.Len() == 0 {
		r = 0 // nothing to cancel or replace
	}
	switch {
	case r < 560:
		return s.newOrder()
	case r < 680:
		return s.cancel()
	case r < 880:
		return s.replace()
	case r < 890:
		return s.massCancel()
	case r < 900:
		return s.disconnect()
	case r < 915:
		return s.setStatus()
	case r < 917:
		return s.endOfDay()
	default:
		return s.tick()
	}
}

func (s *venueSim) pickInstrument() core.InstrumentConfig {
	return simInstruments[s.rng.IntN(len(simInstruments))]
}

func (s *venueSim) pickSide() venue.Side {
	if s.rng.IntN(2) == 0 {
		return venue.SideBuy
	}
	return venue.SideSell
}

// price is a limit around the instrument's drifting mid: buys mostly below,
// sells mostly above, with enough overlap to trade often.
func (s *venueSim) price(in core.InstrumentConfig, side venue.Side) int64 {
	mid := s.mid[in.ID] + int64(s.rng.IntN(3)) - 1
	lo, hi := in.RefPriceTicks*9/10+5, in.RefPriceTicks*11/10-5
	mid = max(lo, min(hi, mid))
	s.mid[in.ID] = mid
	off := int64(s.rng.IntN(14)) - 2
	if side == venue.SideBuy {
		return mid - off
	}
	return mid + off
}

// simCommand encodes a command of type *M in s.cmd, stamped with the
// simulation's seq and clock; set writes the rest.
func simCommand[M any, P interface {
	*M
	WrapEncode(buf []byte, off int) error
	EncodedLength() int
	SetSeq(uint64)
	SetTimestampNs(int64)
}](s *venueSim, set func(P)) []byte {
	return cmdtest.Encode(s.t, s.cmd[:], func(c P) {
		c.SetSeq(s.seq)
		c.SetTimestampNs(s.nowNs)
		set(c)
	})
}

// weighted is one value of a random choice: drawn when a draw in [0, n)
// (n the last entry's below) is under below and no earlier entry's.
type weighted[T any] struct {
	below int
	v     T
}

func pickWeighted[T any](s *venueSim, choices []weighted[T]) T {
	r := s.rng.IntN(choices[len(choices)-1].below)
	for _, c := range choices {
		if r < c.below {
			return c.v
		}
	}
	panic("unreachable: the draw is under the last bound")
}

// simTimesInForce are a limit order's times in force, in percent.
var simTimesInForce = []weighted[venue.TimeInForce]{
	{40, venue.TimeInForceDay}, {65, venue.TimeInForceGTC}, {75, venue.TimeInForceGTD}, {86, venue.TimeInForceIOC},
	{96, venue.TimeInForceFOK},
	{98, venue.TimeInForceAtTheOpening}, // refused outside the opening call
	{100, venue.TimeInForceAtTheClose},
}

// simStatuses are the statuses an operator sets, in twentieths: mostly
// Open, which ends a call with its uncross.
var simStatuses = []weighted[venue.TradingStatus]{
	{12, venue.TradingStatusOpen}, {14, venue.TradingStatusHalted}, {15, venue.TradingStatusClosed},
	{17, venue.TradingStatusOpeningCall}, {19, venue.TradingStatusClosingCall}, {20, venue.TradingStatusVolatilityAuction},
}

func (s *venueSim) newClOrdID() string {
	s.clSeq++
	return fmt.Sprintf("c%d", s.clSeq)
}

var simAccounts = []string{"", "A", "B", "C"}

func (s *venueSim) newOrder() []byte {
	in := s.pickInstrument()
	side := s.pickSide()
	return simCommand(s, func(c *venue.NewOrder) {
		c.SetSessionIdx(uint16(1 + s.rng.IntN(simSessions)))
		c.SetSide(side)
		c.SetInstrumentID(in.ID)
		c.SetQty(in.LotSize * int64(1+s.rng.IntN(10)))
		k := s.rng.IntN(100)
		switch {
		case k < 12:
			c.SetOrdType(venue.OrdTypeMarket)
			c.SetTimeInForce(venue.TimeInForceIOC)
			if s.rng.IntN(2) == 0 {
				c.SetTimeInForce(venue.TimeInForceDay) // waits for the uncross in a call
			}
		case k < 24:
			// A stop a few ticks beyond the last trade: it stays off the book
			// until a trade elects it (then it trades or rests in a cascade).
			s.stopOrder(c, in, side)
		default:
			c.SetOrdType(venue.OrdTypeLimit)
			c.SetPriceTicks(s.price(in, side))
			c.SetTimeInForce(pickWeighted(s, simTimesInForce))
			if c.TimeInForce() == venue.TimeInForceGTD {
				c.SetExpireTimeNs(s.nowNs + s.rng.Int64N(200_000_000))
			}
			if tif := c.TimeInForce(); tif != venue.TimeInForceIOC && tif != venue.TimeInForceFOK && s.rng.IntN(100) < 5 {
				c.SetFlags(venue.OrderFlagsPostOnly)
			}
			if tif := c.TimeInForce(); tif != venue.TimeInForceIOC && tif != venue.TimeInForceFOK && s.rng.IntN(100) < 20 {
				// An iceberg: the feed must show only its display slice.
				c.SetMaxFloorQty(min(c.Qty(), in.LotSize*int64(1+s.rng.IntN(3))))
			}
		}
		if s.rng.IntN(100) < 10 {
			c.SetStpMode(venue.StpMode(s.rng.IntN(5)))
		}
		s.must(c.SetClOrdIDString(s.newClOrdID()))
		s.must(c.SetAccountString(simAccounts[s.rng.IntN(len(simAccounts))]))
	})
}

// stopOrder makes c a stop or stop-limit order waiting a few ticks beyond
// the last trade price (or the reference price).
func (s *venueSim) stopOrder(c *venue.NewOrder, in core.InstrumentConfig, side venue.Side) {
	last, ok := s.m.LastTradePrice(in.ID)
	if !ok {
		last = in.RefPriceTicks
	}
	d := int64(1 + s.rng.IntN(6))
	stopPx := last + d
	if side == venue.SideSell {
		stopPx = last - d
	}
	c.SetStopPxTicks(stopPx)
	c.SetTimeInForce(venue.TimeInForceDay)
	if s.rng.IntN(2) == 0 {
		c.SetOrdType(venue.OrdTypeStop)
		return
	}
	c.SetOrdType(venue.OrdTypeStopLimit)
	limit := stopPx + int64(s.rng.IntN(4))
	if side == venue.SideSell {
		limit = stopPx - int64(s.rng.IntN(4))
	}
	c.SetPriceTicks(limit)
}

// pickLive returns a known live order, or a made-up one now and then.
func (s *venueSim) pickLive() simOrder {
	if s.rng.IntN(20) == 0 || s.live.Len() == 0 {
		return simOrder{id: uint64(1 + s.rng.IntN(100000)), session: uint16(1 + s.rng.IntN(simSessions)),
			inst: s.pickInstrument().ID, side: s.pickSide(), price: 1000, qty: 100}
	}
	return s.live.At(s.rng.IntN(s.live.Len()))
}

func (s *venueSim) cancel() []byte {
	o := s.pickLive()
	return simCommand(s, func(c *venue.CancelOrder) {
		c.SetSessionIdx(o.session)
		c.SetSide(o.side)
		c.SetInstrumentID(o.inst)
		c.SetOrderID(o.id)
		s.must(c.SetClOrdIDString(s.newClOrdID()))
	})
}

func (s *venueSim) replace() []byte {
	o := s.pickLive()
	ov, ok := s.m.Order(o.id)
	return simCommand(s, func(c *venue.ReplaceOrder) {
		c.SetSessionIdx(o.session)
		c.SetSide(o.side)
		c.SetOrdType(venue.OrdTypeLimit)
		c.SetInstrumentID(o.inst)
		c.SetTimeInForce(venue.TimeInForceDay)
		c.SetOrderID(o.id)
		c.SetPriceTicks(o.price)
		c.SetQty(o.qty)
		if ok {
			c.SetTimeInForce(ov.TimeInForce)
			c.SetExpireTimeNs(ov.ExpireTimeNs)
			c.SetOrdType(ov.OrdType)
			c.SetStopPxTicks(ov.StopPxTicks)
			c.SetMaxFloorQty(ov.MaxFloorQty)
			lot := int64(1)
			for _, in := range simInstruments {
				if in.ID == o.inst {
					lot = in.LotSize
				}
			}
			switch r := s.rng.IntN(100); {
			case r < 35: // re-price, maybe across the book
				c.SetPriceTicks(ov.PriceTicks + int64(s.rng.IntN(9)) - 4)
			case r < 60: // quantity up: loses priority
				c.SetQty(ov.Qty + lot*int64(1+s.rng.IntN(5)))
			case r < 90: // quantity down: keeps priority, or ends the order
				c.SetQty(max(lot, ov.Qty-lot*int64(1+s.rng.IntN(5))))
			default: // unchanged: a no-op replace
			}
			if ov.MaxFloorQty != 0 && s.rng.IntN(10) == 0 {
				c.SetMaxFloorQty(min(c.Qty(), lot*int64(1+s.rng.IntN(3)))) // a new display size
			}
		}
		s.must(c.SetClOrdIDString(s.newClOrdID()))
	})
}

func (s *venueSim) massCancel() []byte {
	return simCommand(s, func(c *venue.MassCancel) {
		c.SetSessionIdx(uint16(1 + s.rng.IntN(simSessions)))
		c.SetFilterSessionIdx(0xFFFF)
		if s.rng.IntN(2) == 0 {
			c.SetFilterSessionIdx(c.SessionIdx())
		}
		if s.rng.IntN(2) == 0 {
			c.SetInstrumentID(s.pickInstrument().ID)
		}
		c.SetSide(uint8(s.rng.IntN(3)))
		c.SetMassCancelRequestType(7)
		s.must(c.SetClOrdIDString(s.newClOrdID()))
	})
}

func (s *venueSim) disconnect() []byte {
	return simCommand(s, func(c *venue.SessionDisconnected) {
		c.SetSessionIdx(uint16(1 + s.rng.IntN(simSessions)))
		c.SetCancelOnDisconnect(venue.BooleanType(s.rng.IntN(2)))
	})
}

func (s *venueSim) setStatus() []byte {
	return simCommand(s, func(c *venue.SetTradingStatus) {
		c.SetInstrumentID(s.pickInstrument().ID)
		c.SetStatus(pickWeighted(s, simStatuses))
	})
}

func (s *venueSim) endOfDay() []byte {
	return simCommand(s, func(*venue.EndOfDay) {})
}

func (s *venueSim) tick() []byte {
	s.nowNs += s.rng.Int64N(50_000_000)
	return simCommand(s, func(*venue.Tick) {})
}

// learn keeps the live-order list as a client would, from events only.
func (s *venueSim) learn(ev []byte) {
	_, err := s.live.Follow(ev, func(m *venue.OrderAccepted) (simOrder, bool) {
		return simOrder{id: m.OrderID(), session: m.SessionIdx(), inst: m.InstrumentID(), side: m.Side(),
			price: m.PriceTicks(), qty: m.Qty(), clOrdID: string(m.ClOrdID())}, true
	}, func(o *simOrder, m *venue.OrderReplaced) {
		o.price, o.qty, o.clOrdID = m.PriceTicks(), m.Qty(), string(m.ClOrdID())
	})
	s.must(err)
}

// compareWithMatcher fails the test unless the tracker's books, orders and
// statuses equal the matcher's.
func compareWithMatcher(t testing.TB, m *core.Matcher, tr *Tracker, step int) {
	t.Helper()
	var ml []core.Level
	var mo []core.OrderView
	var tl []Level
	var to []BookOrder
	for _, in := range simInstruments {
		for _, side := range []venue.Side{venue.SideBuy, venue.SideSell} {
			wire := mdsbe.SideBuy
			if side == venue.SideSell {
				wire = mdsbe.SideSell
			}
			// The feed shows what the book displays: icebergs' slices only.
			ml = displayedLevels(m.BookOrders(in.ID, side, mo[:0]), ml[:0])
			tl, _ = tr.AppendLevels(tl[:0], InstrumentID(in.ID), wire, 0)
			if len(ml) != len(tl) {
				t.Fatalf("step %d inst %d %v: %d levels in the matcher, %d in the tracker\nmatcher %v\ntracker %v",
					step, in.ID, side, len(ml), len(tl), ml, tl)
			}
			for i := range ml {
				if ml[i].PriceTicks != tl[i].PriceTicks || ml[i].Qty != tl[i].Qty || ml[i].Orders != tl[i].OrderCount {
					t.Fatalf("step %d inst %d %v level %d: matcher %+v tracker %+v", step, in.ID, side, i, ml[i], tl[i])
				}
			}
			mo = m.BookOrders(in.ID, side, mo[:0])
			to, _ = tr.AppendOrders(to[:0], InstrumentID(in.ID), wire)
			if len(mo) != len(to) {
				t.Fatalf("step %d inst %d %v: %d orders in the matcher, %d in the tracker", step, in.ID, side, len(mo), len(to))
			}
			for i := range mo {
				if mo[i].OrderID != uint64(to[i].OrderID) || mo[i].DisplayQty != to[i].Qty || mo[i].PriceTicks != to[i].PriceTicks {
					t.Fatalf("step %d inst %d %v order %d: matcher %d %d@%d tracker %+v", step, in.ID, side, i,
						mo[i].OrderID, mo[i].LeavesQty, mo[i].PriceTicks, to[i])
				}
			}
		}
		ms, _ := m.TradingStatus(in.ID)
		st, err := tr.State(InstrumentID(in.ID))
		if err != nil || uint8(st.Status) != uint8(ms) {
			t.Fatalf("step %d inst %d: status matcher %v tracker %v (%v)", step, in.ID, ms, st.Status, err)
		}
	}
	// Market orders waiting for an uncross are in no book the feed shows.
	waiting := 0
	for _, in := range simInstruments {
		waiting += len(m.AuctionMarketOrders(in.ID, venue.SideBuy, nil)) + len(m.AuctionMarketOrders(in.ID, venue.SideSell, nil))
	}
	if got, want := tr.Stats().OrdersHeld, m.RestingOrders()-waiting; got != want {
		t.Fatalf("step %d: tracker holds %d orders, matcher rests %d", step, got, want)
	}
}

// displayedLevels sums the displayed quantity of a side's orders (in
// priority order) by price level, as the feed shows the book.
func displayedLevels(orders []core.OrderView, dst []core.Level) []core.Level {
	for _, o := range orders {
		if n := len(dst); n > 0 && dst[n-1].PriceTicks == o.PriceTicks {
			dst[n-1].Qty += o.DisplayQty
			dst[n-1].Orders++
			continue
		}
		dst = append(dst, core.Level{PriceTicks: o.PriceTicks, Qty: o.DisplayQty, Orders: 1})
	}
	return dst
}
