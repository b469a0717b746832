package marketdata

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// scenario applies hand-written commands to the matcher and the tracker
// and renders the feed messages they produce as text.
type scenario struct {
	t       *testing.T
	feed    *Feed // when set, events go to the feed instead of the tracker
	m       *core.Matcher
	sink    *core.BufferSink
	tr      *Tracker
	b       *packet.Builder
	capture *packetCapture
	seq     uint64
	cmd     [256]byte
	// events keeps a copy of every event applied, when record is set.
	record bool
	events [][]byte
}

func newScenario(t *testing.T) *scenario {
	return newScenarioOf(t, simInstruments)
}

// newScenarioOf is newScenario with the matcher configured with
// instruments, which must be simInstruments with other auction settings.
func newScenarioOf(t *testing.T, instruments []core.InstrumentConfig) *scenario {
	m, err := core.NewMatcher(core.Config{OrdersMax: 64, ClOrdIDsMax: 1024, SessionsMax: 4, LevelsPerSideMax: 1024,
		Instruments: instruments})
	if err != nil {
		t.Fatal(err)
	}
	s := &scenario{t: t, m: m, sink: core.NewBufferSink(16), capture: &packetCapture{}}
	s.b, _ = packet.NewBuilder(packet.BuilderConfig{Channel: 1, Sequenced: true, Sink: s.capture})
	s.tr, err = NewTracker(TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: 64, LevelsMax: 64}, s.b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// apply runs one command and returns its feed messages, one per line.
func (s *scenario) apply(cmd []byte) string {
	s.t.Helper()
	s.sink.Reset()
	if err := s.m.Apply(cmd, s.sink); err != nil {
		s.t.Fatal(err)
	}
	if s.record {
		for _, ev := range s.sink.All() {
			s.events = append(s.events, bytes.Clone(ev))
		}
	}
	if s.feed != nil {
		var batch [][]byte
		for _, ev := range s.sink.All() {
			batch = append(batch, ev)
		}
		if err := s.feed.ApplyBatch(batch); err != nil {
			s.t.Fatal(err)
		}
		return ""
	}
	for _, ev := range s.sink.All() {
		if err := s.tr.Apply(ev); err != nil {
			s.t.Fatal(err)
		}
	}
	if err := s.tr.EndCommand(); err != nil {
		s.t.Fatal(err)
	}
	_ = s.b.Flush()
	compareWithMatcher(s.t, s.m, s.tr, int(s.seq))
	var out []string
	for _, p := range s.capture.packets {
		var r packet.Reader
		if err := r.Reset(p); err != nil {
			s.t.Fatal(err)
		}
		for msg, ok := r.Next(); ok; msg, ok = r.Next() {
			out = append(out, describe(msg))
		}
	}
	s.capture.packets = s.capture.packets[:0]
	return strings.Join(out, "\n")
}

func (s *scenario) order(side venue.Side, px, qty int64, tif venue.TimeInForce) string {
	s.seq++
	typ := venue.OrdTypeLimit
	if px == 0 {
		typ = venue.OrdTypeMarket
	}
	return s.apply(cmdtest.NewOrder(s.t, s.cmd[:], cmdtest.Order{Seq: s.seq, TimestampNs: int64(s.seq), Session: 1, Instrument: 1,
		Side: side, OrdType: typ, TIF: tif, PriceTicks: px, Qty: qty, ClOrdID: fmt.Sprintf("o%d", s.seq)}))
}

func (s *scenario) replace(orderID uint64, side venue.Side, px, qty int64) string {
	s.seq++
	return s.apply(cmdtest.Replace(s.t, s.cmd[:], cmdtest.Order{Seq: s.seq, TimestampNs: int64(s.seq), Session: 1, Instrument: 1,
		Side: side, OrdType: venue.OrdTypeLimit, TIF: venue.TimeInForceDay, OrderID: orderID, PriceTicks: px, Qty: qty,
		ClOrdID: fmt.Sprintf("r%d", s.seq)}))
}

func (s *scenario) cancel(orderID uint64, side venue.Side) string {
	s.seq++
	return s.apply(cmdtest.Cancel(s.t, s.cmd[:], cmdtest.Order{Seq: s.seq, TimestampNs: int64(s.seq), Session: 1, Instrument: 1,
		Side: side, OrderID: orderID, ClOrdID: fmt.Sprintf("x%d", s.seq)}))
}

func (s *scenario) status(st venue.TradingStatus) string {
	s.seq++
	return s.apply(cmdtest.SetStatus(s.t, s.cmd[:], s.seq, int64(s.seq), 1, st))
}

// describe renders one feed message.
func describe(msg []byte) string {
	tid, _ := mdsbe.TemplateIDOf(msg, 0)
	switch tid {
	case mdsbe.OrderAddedTemplateID:
		var m mdsbe.OrderAdded
		_ = m.WrapDecode(msg, 0)
		return fmt.Sprintf("added #%d %v %d@%d rpt=%d", m.OrderID(), m.Side(), m.Qty(), m.PriceTicks(), m.RptSeq())
	case mdsbe.OrderModifiedTemplateID:
		var m mdsbe.OrderModified
		_ = m.WrapDecode(msg, 0)
		return fmt.Sprintf("modified #%d %v %d@%d lost=%v rpt=%d", m.OrderID(), m.Side(), m.Qty(), m.PriceTicks(),
			m.PriorityLost() == mdsbe.BooleanTypeTrue, m.RptSeq())
	case mdsbe.OrderExecutedTemplateID:
		var m mdsbe.OrderExecuted
		_ = m.WrapDecode(msg, 0)
		return fmt.Sprintf("executed #%d %v %d@%d leaves=%d trade=%d rpt=%d", m.OrderID(), m.Side(), m.ExecQty(),
			m.PriceTicks(), m.LeavesQty(), m.TradeID(), m.RptSeq())
	case mdsbe.OrderDeletedTemplateID:
		var m mdsbe.OrderDeleted
		_ = m.WrapDecode(msg, 0)
		return fmt.Sprintf("deleted #%d %v rpt=%d", m.OrderID(), m.Side(), m.RptSeq())
	case mdsbe.PriceLevelUpdateTemplateID:
		var m mdsbe.PriceLevelUpdate
		_ = m.WrapDecode(msg, 0)
		return fmt.Sprintf("level %v %v #%d %d@%d n=%d rpt=%d", m.Action(), m.Side(), m.LevelNum(), m.Qty(),
			m.PriceTicks(), m.OrderCount(), m.RptSeq())
	case mdsbe.TradeTemplateID:
		var m mdsbe.Trade
		_ = m.WrapDecode(msg, 0)
		return fmt.Sprintf("trade %d %d@%d aggressor=%v buy=#%d sell=#%d volume=%d rpt=%d", m.TradeID(), m.Qty(),
			m.PriceTicks(), m.AggressorSide(), m.BuyOrderID(), m.SellOrderID(), m.Volume(), m.RptSeq())
	case mdsbe.InstrumentStatusTemplateID:
		var m mdsbe.InstrumentStatus
		_ = m.WrapDecode(msg, 0)
		return fmt.Sprintf("status %v rpt=%d", m.Status(), m.RptSeq())
	}
	return mdsbe.MessageName(tid)
}

func expectLines(t *testing.T, what, got, want string) {
	t.Helper()
	want = strings.TrimSpace(want)
	if got != want {
		t.Fatalf("%s:\ngot\n%s\nwant\n%s", what, got, want)
	}
}

// TestTrackerMessages pins the exact feed messages of the cases that need
// care: aggressive orders that trade and then rest (no crossed book is ever
// shown), IOC remainders (never shown), replaces that keep or lose priority,
// and replaces that cross the book.
func TestTrackerMessages(t *testing.T) {
	s := newScenario(t)
	buy, sell, day := venue.SideBuy, venue.SideSell, venue.TimeInForceDay
	expectLines(t, "resting sell", s.order(sell, 1005, 10, day), `
added #1 Sell 10@1005 rpt=1
level New Sell #1 10@1005 n=1 rpt=2`)
	expectLines(t, "second level", s.order(sell, 1006, 5, day), `
added #2 Sell 5@1006 rpt=3
level New Sell #2 5@1006 n=1 rpt=4`)
	expectLines(t, "aggressive buy sweeps one level and rests", s.order(buy, 1005, 15, day), `
trade 1 10@1005 aggressor=Buy buy=#3 sell=#1 volume=10 rpt=5
executed #1 Sell 10@1005 leaves=0 trade=1 rpt=6
level Delete Sell #1 0@1005 n=0 rpt=7
added #3 Buy 5@1005 rpt=8
level New Buy #1 5@1005 n=1 rpt=9`)
	expectLines(t, "IOC that partly fills is never shown resting", s.order(sell, 1004, 8, venue.TimeInForceIOC), `
trade 2 5@1005 aggressor=Sell buy=#3 sell=#4 volume=15 rpt=10
executed #3 Buy 5@1005 leaves=0 trade=2 rpt=11
level Delete Buy #1 0@1005 n=0 rpt=12`)
	expectLines(t, "two bids", s.order(buy, 1000, 4, day)+"\n"+s.order(buy, 1000, 6, day), `
added #5 Buy 4@1000 rpt=13
level New Buy #1 4@1000 n=1 rpt=14
added #6 Buy 6@1000 rpt=15
level Change Buy #1 10@1000 n=2 rpt=16`)
	expectLines(t, "quantity down keeps priority", s.replace(5, buy, 1000, 3), `
modified #5 Buy 3@1000 lost=false rpt=17
level Change Buy #1 9@1000 n=2 rpt=18`)
	expectLines(t, "quantity up loses priority", s.replace(5, buy, 1000, 7), `
modified #5 Buy 7@1000 lost=true rpt=19
level Change Buy #1 13@1000 n=2 rpt=20`)
	expectLines(t, "re-price without crossing", s.replace(6, buy, 999, 6), `
modified #6 Buy 6@999 lost=true rpt=21
level Change Buy #1 7@1000 n=1 rpt=22
level New Buy #2 6@999 n=1 rpt=23`)
	expectLines(t, "re-price across the book: delete, trade, then rest", s.replace(6, buy, 1006, 8), `
deleted #6 Buy rpt=24
level Delete Buy #2 0@999 n=0 rpt=25
trade 3 5@1006 aggressor=Buy buy=#6 sell=#2 volume=20 rpt=26
executed #2 Sell 5@1006 leaves=0 trade=3 rpt=27
level Delete Sell #1 0@1006 n=0 rpt=28
added #6 Buy 3@1006 rpt=29
level New Buy #1 3@1006 n=1 rpt=30`)
	expectLines(t, "cancel", s.cancel(5, buy), `
deleted #5 Buy rpt=31
level Delete Buy #2 0@1000 n=0 rpt=32`)
	expectLines(t, "market order into an empty side: no trace but nothing", s.order(buy, 0, 5, venue.TimeInForceIOC), ``)
	expectLines(t, "halt", s.status(venue.TradingStatusHalted), `status Halted rpt=33`)
}

// TestTrackerAllocatesNothing applies a long recorded event stream one
// event at a time and counts allocations: the tracker handles every event
// the matcher writes, so like the rest of that path it allocates nothing
// after NewTracker (memory is reserved up front, not grown under load).
func TestTrackerAllocatesNothing(t *testing.T) {
	events := recordEvents(t, 31, 3000)
	b, _ := packet.NewBuilder(packet.BuilderConfig{Channel: 1, Sequenced: true, Sink: discardSink{}})
	tr, err := NewTracker(TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024}, b)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	allocs := testing.AllocsPerRun(len(events)-1, func() {
		if err := tr.Apply(events[i]); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			if err := tr.EndBatch(); err != nil {
				t.Fatal(err)
			}
			_ = b.Flush()
		}
		i++
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per event", allocs)
	}
	if i != len(events) || tr.Stats().MessagesQueued == 0 {
		t.Fatalf("applied %d of %d events", i, len(events))
	}
}

type discardSink struct{}

func (discardSink) WritePacket([]byte, uint64, int) error { return nil }

// recordEvents copies the events of n random commands.
func recordEvents(t testing.TB, seed uint64, n int) [][]byte {
	sim := newVenueSim(t, seed)
	var events [][]byte
	for i := 0; i < n; i++ {
		for _, ev := range sim.next().All() {
			events = append(events, append([]byte(nil), ev...))
		}
	}
	return events
}

// feedBytes runs a command stream through a tracker and returns the packets
// and the messages, each concatenated. batch is the number of commands per
// batch (EndBatch and Flush after each).
func feedBytes(t *testing.T, seed uint64, commands, batch int) (packets, messages []byte, lastEventNs int64) {
	sim := newVenueSim(t, seed)
	capture := &packetCapture{}
	b, _ := packet.NewBuilder(packet.BuilderConfig{Channel: 1, Sequenced: true, Sink: capture})
	tr, err := NewTracker(TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024}, b)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < commands; i++ {
		for _, ev := range sim.next().All() {
			if err := tr.Apply(ev); err != nil {
				t.Fatal(err)
			}
		}
		if i%batch == batch-1 {
			_ = tr.EndBatch()
			_ = b.Flush()
		}
	}
	_ = tr.EndCommand()
	_ = b.Flush()
	for _, p := range capture.packets {
		packets = append(packets, p...)
		var r packet.Reader
		if err := r.Reset(p); err != nil {
			t.Fatal(err)
		}
		if r.SendingTimeNs > sim.nowNs || r.SendingTimeNs < 1_700_000_000_000_000_000 {
			t.Fatalf("sending time %d is not an event time", r.SendingTimeNs)
		}
		for msg, ok := r.Next(); ok; msg, ok = r.Next() {
			messages = append(messages, msg...)
		}
	}
	return packets, messages, sim.nowNs
}

// TestFeedIsDeterministic: the same commands give the same packets, byte
// for byte, with sending times taken from the events (so replaying a
// journal reproduces the feed); batching changes packet boundaries, never
// the messages.
func TestFeedIsDeterministic(t *testing.T) {
	p1, m1, _ := feedBytes(t, 77, 3000, 1)
	p2, m2, _ := feedBytes(t, 77, 3000, 1)
	if !bytes.Equal(p1, p2) {
		t.Fatalf("two runs differ: %x vs %x", sha256.Sum256(p1), sha256.Sum256(p2))
	}
	_, m3, _ := feedBytes(t, 77, 3000, 7)
	if !bytes.Equal(m1, m3) || !bytes.Equal(m1, m2) || len(m1) == 0 {
		t.Fatal("batching changed the messages")
	}
	t.Logf("feed sha256 %x (%d bytes)", sha256.Sum256(p1), len(p1))
}

// BenchmarkTrackerApply is the tracker's cost per event: decode, book
// update and feed messages into a packet (the sink discards).
func BenchmarkTrackerApply(b *testing.B) {
	events := recordEvents(b, 41, 20000)
	newTracker := func() (*Tracker, *packet.Builder) {
		pb, _ := packet.NewBuilder(packet.BuilderConfig{Channel: 1, Sequenced: true, Sink: discardSink{}})
		tr, err := NewTracker(TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024}, pb)
		if err != nil {
			b.Fatal(err)
		}
		return tr, pb
	}
	tr, pb := newTracker()
	b.ReportAllocs()
	b.ResetTimer()
	for i, k := 0, 0; i < b.N; i, k = i+1, k+1 {
		if k == len(events) {
			b.StopTimer()
			tr, pb = newTracker()
			k = 0
			b.StartTimer()
		}
		if err := tr.Apply(events[k]); err != nil {
			b.Fatal(err)
		}
		if k%16 == 15 {
			_ = tr.EndBatch()
			_ = pb.Flush()
		}
	}
}
