package marketdata

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestTrackerNeverReadsIcebergReserve feeds a tracker a random stream with
// icebergs twice: as the engine wrote it, and with every quantity that
// tells an iceberg's reserve (order quantity, leaves, cumulative and
// cancelled quantity) raised by a large amount. The feed must not change by
// a byte: the tracker uses only the display quantities of an iceberg.
func TestTrackerNeverReadsIcebergReserve(t *testing.T) {
	events := recordEvents(t, 77, 6000)
	icebergs := map[uint64]bool{}
	var refills int
	scrambled := make([][]byte, len(events))
	const reserve = 1 << 40
	for i, ev := range events {
		ev = bytes.Clone(ev)
		scrambled[i] = ev
		tid, _ := venue.TemplateIDOf(ev, 0)
		switch tid {
		case venue.OrderAcceptedTemplateID:
			var m venue.OrderAccepted
			_ = m.WrapDecode(ev, 0)
			if m.Flags().Has(venue.OrderFlagsIceberg) {
				icebergs[m.OrderID()] = true
				m.SetQty(m.Qty() + reserve)
				m.SetLeavesQty(m.LeavesQty() + reserve)
			}
		case venue.OrderReplacedTemplateID:
			var m venue.OrderReplaced
			_ = m.WrapDecode(ev, 0)
			if was := icebergs[m.OrderID()]; was || m.MaxFloorQty() != 0 {
				icebergs[m.OrderID()] = m.MaxFloorQty() != 0
				m.SetQty(m.Qty() + reserve)
				m.SetLeavesQty(m.LeavesQty() + reserve)
				if was {
					m.SetOldLeavesQty(m.OldLeavesQty() + reserve)
				}
			}
		case venue.FillTemplateID:
			var m venue.Fill
			_ = m.WrapDecode(ev, 0)
			if icebergs[m.OrderID()] {
				m.SetQty(m.Qty() + reserve)
				m.SetLeavesQty(m.LeavesQty() + reserve)
				m.SetCumQty(m.CumQty() + reserve)
			}
		case venue.OrderCancelledTemplateID:
			var m venue.OrderCancelled
			_ = m.WrapDecode(ev, 0)
			if icebergs[m.OrderID()] {
				m.SetQty(m.Qty() + reserve)
				m.SetCancelledQty(m.CancelledQty() + reserve)
			}
		case venue.OrderRefilledTemplateID:
			refills++
		}
	}
	if refills == 0 || len(icebergs) == 0 {
		t.Fatalf("weak stream: %d icebergs, %d refills", len(icebergs), refills)
	}
	run := func(events [][]byte) []byte {
		capture := &packetCapture{}
		b, _ := packet.NewBuilder(packet.BuilderConfig{Channel: 1, Sequenced: true, Sink: capture})
		tr, err := NewTracker(TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024}, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			if err := tr.Apply(ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := tr.EndCommand(); err != nil {
			t.Fatal(err)
		}
		_ = b.Flush()
		return bytes.Join(capture.packets, nil)
	}
	if !bytes.Equal(run(events), run(scrambled)) {
		t.Fatal("the feed changed with the icebergs' reserves: the tracker read them")
	}
	t.Logf("%d events, %d icebergs, %d refills", len(events), len(icebergs), refills)
}

// iceberg enters a DAY iceberg of display maxFloor.
func (s *scenario) iceberg(side venue.Side, px, qty, maxFloor int64) string {
	s.seq++
	return s.apply(cmdtest.NewOrder(s.t, s.cmd[:], cmdtest.Order{Seq: s.seq, TimestampNs: int64(s.seq), Session: 1, Instrument: 1,
		Side: side, OrdType: venue.OrdTypeLimit, TIF: venue.TimeInForceDay, PriceTicks: px, Qty: qty, MaxFloorQty: maxFloor,
		ClOrdID: fmt.Sprintf("o%d", s.seq)}))
}

// replaceIceberg replaces an order with an iceberg of display maxFloor.
func (s *scenario) replaceIceberg(orderID uint64, side venue.Side, px, qty, maxFloor int64) string {
	s.seq++
	return s.apply(cmdtest.Replace(s.t, s.cmd[:], cmdtest.Order{Seq: s.seq, TimestampNs: int64(s.seq), Session: 1, Instrument: 1,
		Side: side, OrdType: venue.OrdTypeLimit, TIF: venue.TimeInForceDay, OrderID: orderID, PriceTicks: px, Qty: qty,
		MaxFloorQty: maxFloor, ClOrdID: fmt.Sprintf("r%d", s.seq)}))
}

// TestRefillHasANewPublicID: the feed shows each refilled slice as a new
// order under an id no order had (RefillIDBase and up), never the
// iceberg's OrderID, which would link the slices and tell every reader that
// the order is an iceberg and how often it refilled; the slice's later
// executions, trades, changes and its cancel use the id the feed last
// showed, and a replace across the book adds it again under that id.
func TestRefillHasANewPublicID(t *testing.T) {
	s := newScenario(t)
	buy, sell, day := venue.SideBuy, venue.SideSell, venue.TimeInForceDay
	r1, r2, r3 := uint64(RefillIDBase)+1, uint64(RefillIDBase)+2, uint64(RefillIDBase)+3
	expectLines(t, "iceberg", s.iceberg(sell, 1005, 20, 3), `
added #1 Sell 3@1005 rpt=1
level New Sell #1 3@1005 n=1 rpt=2`)
	expectLines(t, "the slice trades away: a refill under a new id", s.order(buy, 1005, 3, day), fmt.Sprintf(`
trade 1 3@1005 aggressor=Buy buy=#2 sell=#1 volume=3 rpt=3
executed #1 Sell 3@1005 leaves=0 trade=1 rpt=4
level Delete Sell #1 0@1005 n=0 rpt=5
added #%[1]d Sell 3@1005 rpt=6
level New Sell #1 3@1005 n=1 rpt=7`, r1))
	expectLines(t, "the new slice trades under its id, and refills under another", s.order(buy, 1005, 4, day), fmt.Sprintf(`
trade 2 3@1005 aggressor=Buy buy=#3 sell=#%[1]d volume=6 rpt=8
executed #%[1]d Sell 3@1005 leaves=0 trade=2 rpt=9
level Delete Sell #1 0@1005 n=0 rpt=10
added #%[2]d Sell 3@1005 rpt=11
level New Sell #1 3@1005 n=1 rpt=12
trade 3 1@1005 aggressor=Buy buy=#3 sell=#%[2]d volume=7 rpt=13
executed #%[2]d Sell 1@1005 leaves=2 trade=3 rpt=14
level Change Sell #1 2@1005 n=1 rpt=15`, r1, r2))
	expectLines(t, "a replace that keeps priority", s.replaceIceberg(1, sell, 1005, 15, 3), fmt.Sprintf(`
modified #%[1]d Sell 2@1005 lost=false rpt=16
level Change Sell #1 2@1005 n=1 rpt=17`, r2))
	expectLines(t, "a bid to cross", s.order(buy, 1000, 2, day), `
added #4 Buy 2@1000 rpt=18
level New Buy #1 2@1000 n=1 rpt=19`)
	expectLines(t, "a replace across the book: deleted, trades, added under the same id", s.replaceIceberg(1, sell, 1000, 15, 3), fmt.Sprintf(`
deleted #%[1]d Sell rpt=20
level Delete Sell #1 0@1005 n=0 rpt=21
trade 4 2@1000 aggressor=Sell buy=#4 sell=#%[1]d volume=9 rpt=22
executed #4 Buy 2@1000 leaves=0 trade=4 rpt=23
level Delete Buy #1 0@1000 n=0 rpt=24
added #%[1]d Sell 3@1000 rpt=25
level New Sell #1 3@1000 n=1 rpt=26`, r2))
	expectLines(t, "a third refill", s.order(buy, 1000, 3, day), fmt.Sprintf(`
trade 5 3@1000 aggressor=Buy buy=#5 sell=#%[1]d volume=12 rpt=27
executed #%[1]d Sell 3@1000 leaves=0 trade=5 rpt=28
level Delete Sell #1 0@1000 n=0 rpt=29
added #%[2]d Sell 3@1000 rpt=30
level New Sell #1 3@1000 n=1 rpt=31`, r2, r3))
	expectLines(t, "cancel", s.cancel(1, sell), fmt.Sprintf(`
deleted #%d Sell rpt=32
level Delete Sell #1 0@1000 n=0 rpt=33`, r3))
}

// mboBook rebuilds the books by order from the feed's messages alone, as a
// market-by-order reader does, and checks the ids as it goes: an added
// order's id is neither live nor one of an order executed in full (an
// iceberg's next slice under its id linked the two), and every execution,
// change and delete names a live order, as does the resting side of every
// trade. Only a replace across the book deletes an order and adds it again
// under its id.
type mboBook struct {
	orders map[mboKey]mboOrder
	filled map[mboKey]bool // every order executed in full
	added  int             // OrderAdded messages
}

type mboKey struct {
	inst uint32
	id   uint64
}

type mboOrder struct {
	side       mdsbe.Side
	priceTicks int64
	qty        int64
}

func newMBOBook() *mboBook {
	return &mboBook{orders: map[mboKey]mboOrder{}, filled: map[mboKey]bool{}}
}

func (b *mboBook) packet(t testing.TB, pkt []byte) {
	t.Helper()
	var r packet.Reader
	if err := r.Reset(pkt); err != nil {
		t.Fatal(err)
	}
	for msg, ok := r.Next(); ok; msg, ok = r.Next() {
		if err := b.message(msg); err != nil {
			t.Fatalf("seq %d: %v", r.Seq, err)
		}
	}
}

func (b *mboBook) message(msg []byte) error {
	live := func(inst uint32, id uint64) (mboOrder, error) {
		o, ok := b.orders[mboKey{inst, id}]
		if !ok {
			return o, fmt.Errorf("order #%d of instrument %d is not on the book", id, inst)
		}
		return o, nil
	}
	switch tid, _ := mdsbe.TemplateIDOf(msg, 0); tid {
	case mdsbe.OrderAddedTemplateID:
		var m mdsbe.OrderAdded
		_ = m.WrapDecode(msg, 0)
		k := mboKey{m.InstrumentID(), m.OrderID()}
		if _, dup := b.orders[k]; dup {
			return fmt.Errorf("order #%d added twice", k.id)
		}
		if b.filled[k] {
			return fmt.Errorf("order #%d added again after it was executed in full", k.id)
		}
		b.added++
		b.orders[k] = mboOrder{m.Side(), m.PriceTicks(), m.Qty()}
	case mdsbe.OrderModifiedTemplateID:
		var m mdsbe.OrderModified
		_ = m.WrapDecode(msg, 0)
		if _, err := live(m.InstrumentID(), m.OrderID()); err != nil {
			return err
		}
		b.orders[mboKey{m.InstrumentID(), m.OrderID()}] = mboOrder{m.Side(), m.PriceTicks(), m.Qty()}
	case mdsbe.OrderExecutedTemplateID:
		var m mdsbe.OrderExecuted
		_ = m.WrapDecode(msg, 0)
		k := mboKey{m.InstrumentID(), m.OrderID()}
		o, err := live(k.inst, k.id)
		if err != nil {
			return err
		}
		if o.qty-m.ExecQty() != m.LeavesQty() {
			return fmt.Errorf("order #%d: %d executed of %d, leaves %d", k.id, m.ExecQty(), o.qty, m.LeavesQty())
		}
		o.qty = m.LeavesQty()
		b.orders[k] = o
		if o.qty == 0 {
			delete(b.orders, k)
			b.filled[k] = true
		}
	case mdsbe.OrderDeletedTemplateID:
		var m mdsbe.OrderDeleted
		_ = m.WrapDecode(msg, 0)
		if _, err := live(m.InstrumentID(), m.OrderID()); err != nil {
			return err
		}
		delete(b.orders, mboKey{m.InstrumentID(), m.OrderID()})
	case mdsbe.TradeTemplateID:
		var m mdsbe.Trade
		_ = m.WrapDecode(msg, 0)
		if m.Auction() == mdsbe.BooleanTypeTrue {
			return nil // a market order that waited for the uncross was never on the book
		}
		resting := m.SellOrderID()
		if m.AggressorSide() == mdsbe.SideSell {
			resting = m.BuyOrderID()
		}
		if _, err := live(m.InstrumentID(), resting); err != nil {
			return fmt.Errorf("trade %d: %v", m.TradeID(), err)
		}
	}
	return nil
}

// compare fails the test unless the rebuilt books hold exactly the
// tracker's orders under the ids the feed shows them by.
func (b *mboBook) compare(t testing.TB, tr *Tracker, step int) {
	t.Helper()
	n := 0
	var orders []BookOrder
	for _, d := range tr.Instruments() {
		for _, side := range []mdsbe.Side{mdsbe.SideBuy, mdsbe.SideSell} {
			orders, _ = tr.AppendOrders(orders[:0], d.ID, side)
			for _, o := range orders {
				got, ok := b.orders[mboKey{uint32(d.ID), uint64(o.PublicID)}]
				if !ok || got != (mboOrder{side, o.PriceTicks, o.Qty}) {
					t.Fatalf("step %d inst %d: tracker order %+v, feed reader's %+v (%v)", step, d.ID, o, got, ok)
				}
				if (o.PublicID > RefillIDBase) != (o.PublicID != o.OrderID) {
					t.Fatalf("step %d inst %d: order %+v: public id neither its own nor a refill's", step, d.ID, o)
				}
				n++
			}
		}
	}
	if n != len(b.orders) {
		t.Fatalf("step %d: the tracker holds %d orders, the feed reader %d", step, n, len(b.orders))
	}
}

// TestRefillsOnTheUDPFeed: a feed client follows, over real UDP, an iceberg
// whose slice trades away twice, and rebuilds the book by order from its
// messages: each slice under its own id (the first the order's, the
// refills' new), none used twice, and the books the tracker's. A snapshot
// from the recovery service shows the live slice under the id the feed
// last published, and its cancel deletes that id.
func TestRefillsOnTheUDPFeed(t *testing.T) {
	conn := udpSink(t)
	fx := newFeedFixture(t, conn.LocalAddr().String(), nil)
	s := newScenario(t)
	s.feed = fx.feed
	var mu sync.Mutex
	mbo := newMBOBook()
	var mboErr error
	var added []uint64
	c := startClient(t, conn, fx.feed.RecoveryAddr().String(), feedclient.Callbacks{
		OnMessage: func(seq uint64, tid uint16, msg []byte) {
			mu.Lock()
			defer mu.Unlock()
			if err := mbo.message(msg); err != nil && mboErr == nil {
				mboErr = fmt.Errorf("seq %d: %w", seq, err)
			}
			if tid == mdsbe.OrderAddedTemplateID {
				var m mdsbe.OrderAdded
				_ = m.WrapDecode(msg, 0)
				added = append(added, m.OrderID())
			}
		},
	})
	waitSnapshot(t, c) // of the empty book: every order reaches the client over UDP
	buy, sell, day := venue.SideBuy, venue.SideSell, venue.TimeInForceDay
	s.iceberg(sell, 1005, 10, 3)
	s.order(buy, 1005, 3, day)
	s.order(buy, 1005, 3, day)
	s.order(buy, 1005, 1, day)
	waitConverged(t, fx, c)
	r1, r2 := uint64(RefillIDBase)+1, uint64(RefillIDBase)+2
	mu.Lock()
	if mboErr != nil {
		t.Fatal(mboErr)
	}
	if len(added) != 3 || added[0] != 1 || added[1] != r1 || added[2] != r2 {
		t.Fatalf("slices added as %v, want #1, #%d, #%d", added, r1, r2)
	}
	fx.feed.View(func(tr *Tracker, _ uint64) { mbo.compare(t, tr, -1) })
	mu.Unlock()

	rc := dialRecovery(t, fx.feed.RecoveryAddr().String())
	rc.snapshot(1, 1)
	var entries []string
	for done := false; !done; {
		pkt, err := packet.ReadFrame(rc.r, rc.buf)
		if err != nil {
			t.Fatal(err)
		}
		var r packet.Reader
		if err := r.Reset(pkt); err != nil {
			t.Fatal(err)
		}
		for msg, ok := r.Next(); ok; msg, ok = r.Next() {
			switch tid, _ := mdsbe.TemplateIDOf(msg, 0); tid {
			case mdsbe.SnapshotEntriesTemplateID:
				var m mdsbe.SnapshotEntries
				_ = m.WrapDecode(msg, 0)
				g := m.Entries()
				for i := 0; i < g.Count(); i++ {
					e := g.Entry(i)
					entries = append(entries, fmt.Sprintf("#%d %v %d@%d", e.OrderID(), e.Side(), e.Qty(), e.PriceTicks()))
				}
			case mdsbe.SnapshotEndTemplateID:
				done = true
			}
		}
	}
	if want := fmt.Sprintf("#%d Sell 2@1005", r2); len(entries) != 1 || entries[0] != want {
		t.Fatalf("snapshot entries %v, want %s", entries, want)
	}

	s.cancel(1, sell)
	waitConverged(t, fx, c)
	mu.Lock()
	defer mu.Unlock()
	if mboErr != nil || len(mbo.orders) != 0 {
		t.Fatalf("after the cancel: %v, orders %v", mboErr, mbo.orders)
	}
}

// TestRefillIDsAcrossARestart: a venue that starts from the feed's saved
// state and replays the commands after it, and one that replays its whole
// journal, publish the messages the running feed published, byte for byte:
// the slices the state holds keep their public ids, and the refills after
// it take the ids that come next, not ones handed out before.
func TestRefillIDsAcrossARestart(t *testing.T) {
	live := newFeedFixture(t, udpSink(t).LocalAddr().String(), nil).feed
	s := newScenario(t)
	s.feed, s.record = live, true
	buy, sell, day := venue.SideBuy, venue.SideSell, venue.TimeInForceDay
	s.iceberg(sell, 1005, 10, 3)
	s.order(buy, 1005, 3, day) // refill 1 of order 1
	s.iceberg(buy, 1000, 10, 3)
	var state bytes.Buffer
	if err := live.WriteState(&state); err != nil {
		t.Fatal(err)
	}
	cut := len(s.events)
	var cutSeq uint64
	live.View(func(_ *Tracker, next uint64) { cutSeq = next })
	s.order(buy, 1005, 3, day)  // refill 2, of order 1
	s.order(sell, 1000, 3, day) // refill 3, of order 3
	s.order(buy, 1005, 1, day)
	s.cancel(1, sell)

	quiet := func() *Feed {
		f, err := NewFeed(FeedConfig{Tracker: TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024},
			FeedAddr: udpSink(t).LocalAddr().String(), Recovery: RecoveryConfig{Addr: "127.0.0.1:0"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	replay := func(f *Feed, events [][]byte) {
		for _, ev := range events {
			if err := f.Replay(ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.EndReplay(); err != nil {
			t.Fatal(err)
		}
	}
	restored := quiet()
	if err := restored.Restore(bytes.NewReader(state.Bytes())); err != nil {
		t.Fatal(err)
	}
	replay(restored, s.events[cut:])
	whole := quiet()
	replay(whole, s.events)

	messages := func(f *Feed, from uint64) map[uint64]string {
		var next uint64
		f.View(func(_ *Tracker, n uint64) { next = n })
		frames, _, err := f.win.copyFrom(nil, from, next, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		out := map[uint64]string{}
		if err := forEachFrame(frames, func(pkt []byte) error {
			var r packet.Reader
			if err := r.Reset(pkt); err != nil {
				return err
			}
			seq := r.Seq
			for msg, ok := r.Next(); ok; msg, ok = r.Next() {
				if seq >= from {
					out[seq] = string(msg)
				}
				seq++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := messages(live, cutSeq)
	var text []string
	for seq := cutSeq; seq < cutSeq+uint64(len(want)); seq++ {
		text = append(text, describe([]byte(want[seq])))
	}
	r1, r2, r3 := uint64(RefillIDBase)+1, uint64(RefillIDBase)+2, uint64(RefillIDBase)+3
	for _, line := range []string{
		fmt.Sprintf("executed #%d Sell 3@1005", r1), fmt.Sprintf("added #%d Sell 3@1005", r2),
		fmt.Sprintf("added #%d Buy 3@1000", r3), fmt.Sprintf("deleted #%d Sell", r2),
	} {
		if !strings.Contains(strings.Join(text, "\n"), line) {
			t.Fatalf("the feed after the state has no %q:\n%s", line, strings.Join(text, "\n"))
		}
	}
	for name, f := range map[string]*Feed{"restored from the state": restored, "replayed from the start": whole} {
		got := messages(f, cutSeq)
		if len(got) != len(want) {
			t.Fatalf("%s: %d messages after the state, the live feed %d", name, len(got), len(want))
		}
		for seq, msg := range want {
			if got[seq] != msg {
				t.Fatalf("%s: message %d is %s, the live feed's %s", name, seq, describe([]byte(got[seq])), describe([]byte(msg)))
			}
		}
	}
}
