package fixmd

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// callVenue is a real matcher whose events go through a real feed into the
// handler's depth cache, as the server wires them.
type callVenue struct {
	t    *testing.T
	m    *core.Matcher
	sink *core.BufferSink
	feed *marketdata.Feed
	seq  uint64
	cmd  [256]byte
}

func newCallVenue(t *testing.T, h *Handler) *callVenue {
	t.Helper()
	m, err := core.NewMatcher(core.Config{OrdersMax: 64, ClOrdIDsMax: 256, SessionsMax: 4, LevelsPerSideMax: 256,
		Instruments: []core.InstrumentConfig{{ID: 1, Symbol: "ACME", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 1000,
			RefPriceTicks: 1000, BandPercent: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	feed, err := marketdata.NewFeed(marketdata.FeedConfig{FeedAddr: udp.LocalAddr().String(), Listener: h.Cache(),
		Tracker:  marketdata.TrackerConfig{Instruments: []marketdata.InstrumentDef{{ID: 1, Symbol: "ACME", TickMantissa: 1, TickExponent: -2, LotSize: 1}}, OrdersMax: 64, LevelsMax: 256},
		Recovery: marketdata.RecoveryConfig{Addr: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { feed.Close() })
	return &callVenue{t: t, m: m, sink: core.NewBufferSink(16), feed: feed}
}

func (v *callVenue) apply(cmd []byte) {
	v.t.Helper()
	v.sink.Reset()
	if err := v.m.Apply(cmd, v.sink); err != nil {
		v.t.Fatal(err)
	}
	var batch [][]byte
	for _, ev := range v.sink.All() {
		batch = append(batch, ev)
	}
	if err := v.feed.ApplyBatch(batch); err != nil {
		v.t.Fatal(err)
	}
}

func (v *callVenue) status(st venue.TradingStatus) {
	v.seq++
	v.apply(cmdtest.SetStatus(v.t, v.cmd[:], v.seq, int64(v.seq), 1, st))
}

func (v *callVenue) limit(side venue.Side, px, qty int64) {
	v.seq++
	v.apply(cmdtest.NewOrder(v.t, v.cmd[:], cmdtest.Order{Seq: v.seq, TimestampNs: int64(v.seq), Session: 1, Instrument: 1,
		Side: side, OrdType: venue.OrdTypeLimit, TIF: venue.TimeInForceDay, PriceTicks: px, Qty: qty,
		ClOrdID: "o" + strconv.FormatUint(v.seq, 10)}))
}

// entries renders a W's or an X's MDEntries, one string per entry, with the
// fields an imbalance entry may carry.
func entries(t *testing.T, m *quickfix.Message) []string {
	t.Helper()
	g := mdEntryGroup(field(t, &m.Header.FieldMap, tag.MsgType) == "X")
	if err := m.Body.GetGroup(g); err != nil {
		t.Fatalf("entries: %v: %s", err, m)
	}
	var out []string
	for i := 0; i < g.Len(); i++ {
		e := g.Get(i)
		s := ""
		for _, tg := range []quickfix.Tag{tag.MDUpdateAction, tag.MDEntryType, tag.MDEntryPx, tag.MDEntrySize, tag.TradeCondition, tag.Text} {
			if v, err := e.GetString(tg); err == nil {
				s += strconv.Itoa(int(tg)) + "=" + v + " "
			}
		}
		out = append(out, s)
	}
	return out
}

func requestTypes(reqID, updType string, types ...string) *quickfix.Message {
	m := request(reqID, "1", 0, "ACME")
	m.Body.SetString(tag.MDUpdateType, updType)
	g := quickfix.NewRepeatingGroup(tag.NoMDEntryTypes, quickfix.GroupTemplate{quickfix.GroupElement(tag.MDEntryType)})
	for _, ty := range types {
		g.Add().SetString(tag.MDEntryType, ty)
	}
	m.Body.SetGroup(g)
	return m
}

// TestImbalanceEntries: a subscription to MDEntryType A gets the call's
// indicative uncross in its snapshot and each change as an incremental
// entry, and a deletion when the call uncrosses.
func TestImbalanceEntries(t *testing.T) {
	h, r := newHandler(t)
	v := newCallVenue(t, h)
	v.status(venue.TradingStatusOpeningCall)
	v.limit(venue.SideBuy, 1001, 5)
	v.limit(venue.SideSell, 1000, 3) // crosses: 3 would trade, buyers left over

	h.Handle(1, requestTypes("imb", "1", "A"))
	expect(t, r, "W", "imb", "")
	snap := entries(t, r.last(t))
	// 10.00 and 10.01 tie on volume and imbalance; buyers are left over at
	// both, so the higher price wins (market pressure).
	if len(snap) != 1 || snap[0] != "269=A 270=10.01 271=3 277=P 58=imbalance buy 2; rule MarketPressure " {
		t.Fatalf("snapshot entries %q", snap)
	}
	// The book levels are not what it asked for.
	h.Handle(1, requestTypes("all", "1", "0", "1", "A"))
	if got := entries(t, r.last(t)); len(got) != 3 {
		t.Fatalf("bids, offers and imbalance: %q", got)
	}
	h.Handle(1, request("book", "1", 0, "ACME"))
	if got := entries(t, r.last(t)); len(got) != 2 {
		t.Fatalf("bids and offers only: %q", got)
	}

	n := len(r.sent)
	v.limit(venue.SideSell, 1000, 4) // now 5 trade, sellers left over 2
	h.sendPending()
	var imb []string
	for _, m := range r.sent[n:] {
		if field(t, &m.Body.FieldMap, tag.MDReqID) == "imb" {
			imb = append(imb, entries(t, m)...)
		}
	}
	if len(imb) != 1 || imb[0][:len("279=1 269=A ")] != "279=1 269=A " || !strings.Contains(imb[0], "271=5 277=Q 58=imbalance sell 2;") {
		t.Fatalf("indicative change %q", imb)
	}

	n = len(r.sent)
	v.status(venue.TradingStatusOpen) // uncross: the indicative ends
	h.sendPending()
	imb = imb[:0]
	for _, m := range r.sent[n:] {
		if field(t, &m.Body.FieldMap, tag.MDReqID) == "imb" {
			imb = append(imb, entries(t, m)...)
		}
	}
	if len(imb) != 1 || imb[0][:len("279=2 269=A ")] != "279=2 269=A " || strings.Contains(imb[0], "271=") {
		t.Fatalf("end of call %q", imb)
	}
	h.Handle(1, requestTypes("after", "0", "A"))
	if got := entries(t, r.last(t)); len(got) != 0 {
		t.Fatalf("snapshot after the call: %q", got)
	}

	h.Handle(1, requestTypes("bad", "1", "4"))
	expect(t, r, "Y", "bad", "8")
}

// TestImbalanceKeptAcrossHalt: a halted call keeps its orders, and the
// matcher goes on publishing its indicative's changes, so the entry stays
// (no deletion at the halt, the entry in a snapshot taken while halted) and
// is there when the call resumes; it ends at the uncross. The halt deleted
// it, so that the call, resumed, showed none until its book changed.
func TestImbalanceKeptAcrossHalt(t *testing.T) {
	h, r := newHandler(t)
	v := newCallVenue(t, h)
	v.status(venue.TradingStatusOpeningCall)
	v.limit(venue.SideBuy, 1001, 5)
	v.limit(venue.SideSell, 1000, 3)
	h.Handle(1, requestTypes("imb", "1", "A"))
	expect(t, r, "W", "imb", "")
	const want = "269=A 270=10.01 271=3 277=P 58=imbalance buy 2; rule MarketPressure "
	sentTo := func(from int) (got []string) {
		h.sendPending()
		for _, m := range r.sent[from:] {
			if field(t, &m.Body.FieldMap, tag.MDReqID) == "imb" {
				got = append(got, entries(t, m)...)
			}
		}
		return got
	}
	// kept moves the call to st (what says so) and checks that nothing of
	// the entry is sent and that a snapshot (request reqID) then has it.
	kept := func(st venue.TradingStatus, what, reqID string) {
		t.Helper()
		n := len(r.sent)
		v.status(st)
		if got := sentTo(n); len(got) != 0 {
			t.Fatalf("%s changed its imbalance entry: %q", what, got)
		}
		h.Handle(1, requestTypes(reqID, "0", "A"))
		if got := entries(t, r.last(t)); len(got) != 1 || got[0] != want {
			t.Fatalf("snapshot after %s: %q, want %q", what, got, want)
		}
	}

	kept(venue.TradingStatusHalted, "the halt of a call", "halted")
	kept(venue.TradingStatusOpeningCall, "the call resumed", "resumed")

	n := len(r.sent)
	v.status(venue.TradingStatusOpen)
	if got := sentTo(n); len(got) != 1 || !strings.HasPrefix(got[0], "279=2 269=A 270=10.01") {
		t.Fatalf("uncross of the call resumed: %q", got)
	}
}

// TestFullRefreshOnlyWhenItsEntriesChange: a snapshot+updates subscription
// (265=0) is sent a full refresh when what it shows changes, not when the
// other side of the book or an imbalance it did not ask for does (it got a
// copy of its last refresh, or an empty one, at every change).
func TestFullRefreshOnlyWhenItsEntriesChange(t *testing.T) {
	h, r := newHandler(t)
	v := newCallVenue(t, h)
	v.status(venue.TradingStatusOpen)
	h.Handle(1, requestTypes("offers", "0", "1"))
	h.Handle(1, requestTypes("imb", "0", "A"))
	sentTo := func(reqID string, from int) (n int) {
		for _, m := range r.sent[from:] {
			if field(t, &m.Body.FieldMap, tag.MDReqID) == reqID {
				n++
			}
		}
		return n
	}
	n := len(r.sent)
	v.limit(venue.SideBuy, 990, 5)
	h.sendPending()
	if got := sentTo("offers", n) + sentTo("imb", n); got != 0 {
		t.Fatalf("a new bid sent %d full refreshes to offer and imbalance subscriptions", got)
	}
	v.limit(venue.SideSell, 1010, 5)
	h.sendPending()
	if sentTo("offers", n) != 1 || sentTo("imb", n) != 0 {
		t.Fatalf("a new offer: %d refreshes of offers, %d of imbalance, want 1 and 0", sentTo("offers", n), sentTo("imb", n))
	}
}
