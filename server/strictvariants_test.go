package server

import (
	"strings"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestStrictClientAcceptsEveryVariant drives the venue, for strict
// QuickFIX/Go clients (strict_test.go), through the variants of its
// messages that TestStrictClientAcceptsEveryMessage does not reach: a
// self-trade prevention's cancel, an IOC's remainder, a replace to the
// filled quantity (150=5 with 39=2), a GTD order's replace and a stop
// GTD order's trigger (150=D) and fill, each with its ExpireTime, the
// OrderCancelReject of a cancel naming a replaced order, the status report
// the gateway writes for an unknown symbol, and market data of a call: an
// imbalance with more sellers (277=Q) as an update and in a snapshot, offer
// updates, and the uncross's fills (625=2).
func TestStrictClientAcceptsEveryVariant(t *testing.T) {
	t.Parallel()
	s := startWithFeed(t, "")
	a := startStrict(t, s, "CLIENT3")
	b := startStrict(t, s, "CLIENT4")
	const expire = "20991231-23:59:59.000"

	// Self-trade prevention (cancel resting, the default): the same
	// account's buy meets its resting sell.
	a.send("D", limit("s1", "ACME", "2", "5", "100.00", "1", "STP1")...)
	a.expect("8", map[int]string{11: "s1", 150: "0"})
	a.send("D", limit("s2", "ACME", "1", "5", "100.00", "1", "STP1")...)
	a.expect("8", map[int]string{11: "s1", 150: "4", 39: "4", 58: gateway.CancelText(venue.CancelReasonSelfTrade)})
	a.expect("8", map[int]string{11: "s2", 150: "0"})
	a.send("F", "11", "s3", "41", "s2", "55", "ACME", "54", "1", "60", now())
	a.expect("8", map[int]string{11: "s3", 150: "4"})

	// An IOC's remainder.
	b.send("D", limit("i1", "ACME", "2", "2", "100.00")...)
	b.expect("8", map[int]string{11: "i1", 150: "0"})
	a.send("D", append(limit("i2", "ACME", "1", "5", "100.00")[:14], "59", "3")...)
	a.expect("8", map[int]string{11: "i2", 150: "F", 39: "1", 32: "2", 31: "100.00"})
	a.expect("8", map[int]string{11: "i2", 150: "4", 39: "4", 58: gateway.CancelText(venue.CancelReasonIocRemainder)})
	b.expect("8", map[int]string{11: "i1", 150: "F", 39: "2"})

	// A replace to the quantity already filled ends the order filled.
	a.send("D", limit("rz1", "ACME", "1", "5", "99.00")...)
	a.expect("8", map[int]string{11: "rz1", 150: "0"})
	b.send("D", limit("rz2", "ACME", "2", "2", "99.00")...)
	b.expect("8", map[int]string{11: "rz2", 150: "F", 39: "2"})
	a.expect("8", map[int]string{11: "rz1", 150: "F", 39: "1"})
	a.send("G", "11", "rz3", "41", "rz1", "55", "ACME", "54", "1", "60", now(), "38", "2", "40", "2", "44", "99.00")
	a.expect("8", map[int]string{11: "rz3", 41: "rz1", 150: "5", 39: "2", 14: "2", 151: "0"})

	// A GTD order's replace, a cancel naming the order it replaced, then
	// its cancel.
	gtd := func(id, qty string) []string {
		return []string{"11", id, "55", "ACME", "54", "1", "60", now(), "38", qty, "40", "2", "44", "98.00", "59", "6", "126", expire}
	}
	a.send("D", gtd("g1", "1")...)
	a.expect("8", map[int]string{11: "g1", 150: "0", 126: expire})
	a.send("G", append([]string{"41", "g1"}, gtd("g2", "2")...)...)
	a.expect("8", map[int]string{11: "g2", 41: "g1", 150: "5", 39: "0", 126: expire})
	a.send("F", "11", "g3", "41", "g1", "55", "ACME", "54", "1", "60", now())
	if m := a.expect("9", map[int]string{11: "g3", 41: "g1", 434: "1", 102: "1"}); m.get(37) == "NONE" || m.get(58) == "" {
		t.Errorf("cancel naming a replaced order: %s", m.raw)
	}
	a.send("F", "11", "g4", "41", "g2", "55", "ACME", "54", "1", "60", now())
	a.expect("8", map[int]string{11: "g4", 150: "4", 126: expire})

	// A GTD buy stop, elected by a trade at its StopPx: its Restated
	// report and its fill say its expiry and StopPx.
	b.send("D", limit("st1", "ACME", "2", "2", "99.80")...)
	b.expect("8", map[int]string{11: "st1", 150: "0"})
	a.send("D", "11", "st2", "55", "ACME", "54", "1", "60", now(), "38", "2", "40", "3", "99", "99.50", "59", "6", "126", expire)
	a.expect("8", map[int]string{11: "st2", 150: "0", 40: "3", 126: expire})
	b.send("D", limit("st3", "ACME", "2", "1", "99.50")...)
	b.expect("8", map[int]string{11: "st3", 150: "0"})
	a.send("D", limit("st4", "ACME", "1", "1", "99.50")...)
	a.expect("8", map[int]string{11: "st4", 150: "F", 39: "2"})
	a.expect("8", map[int]string{11: "st2", 150: "D", 378: "99", 99: "99.50", 126: expire})
	a.expect("8", map[int]string{11: "st2", 150: "F", 39: "2", 31: "99.80", 99: "99.50", 126: expire})

	// A status request the gateway answers itself: an unknown symbol.
	a.send("H", "11", "u1", "55", "NOPE", "54", "1", "790", "su1")
	a.expect("8", map[int]string{11: "u1", 150: "I", 39: "8", 103: "5", 790: "su1", 55: "NOPE"})

	// Market data of an opening call on LOTS (tick 0.05, lot 10).
	mdReq := func(id, subscription string, types ...string) {
		t.Helper()
		m := quickfix.NewMessage()
		m.Header.SetString(tag.MsgType, "V")
		m.Body.SetString(tag.MDReqID, id)
		m.Body.SetString(tag.SubscriptionRequestType, subscription)
		m.Body.SetString(tag.MarketDepth, "0")
		m.Body.SetString(tag.MDUpdateType, "1")
		g := quickfix.NewRepeatingGroup(tag.NoMDEntryTypes, quickfix.GroupTemplate{quickfix.GroupElement(tag.MDEntryType)})
		for _, typ := range types {
			g.Add().SetString(tag.MDEntryType, typ)
		}
		m.Body.SetGroup(g)
		syms := quickfix.NewRepeatingGroup(tag.NoRelatedSym, quickfix.GroupTemplate{quickfix.GroupElement(tag.Symbol)})
		syms.Add().SetString(tag.Symbol, "LOTS")
		m.Body.SetGroup(syms)
		if err := quickfix.SendToTarget(m, a.id); err != nil {
			t.Fatal(err)
		}
	}
	// awaitX takes updates of subscription id until each of parts has been
	// in one of them: the feed applies the events of orders sent close
	// together in one batch or in two, so that an offer and the
	// imbalance it makes come in one update or in two.
	awaitX := func(id string, parts ...string) {
		t.Helper()
		seen := make([]bool, len(parts))
		for range 64 {
			x := a.expect("X", map[int]string{262: id})
			all := true
			for i, p := range parts {
				seen[i] = seen[i] || strings.Contains(x.raw, p)
				all = all && seen[i]
			}
			if all {
				return
			}
		}
		t.Fatalf("no updates of %s with %v", id, parts)
	}
	mdReq("mdq", "1", "1", "A")
	a.expect("W", map[int]string{262: "mdq", 55: "LOTS", 268: "0"})
	if err := s.Gateway().SetTradingStatus("LOTS", venue.TradingStatusOpeningCall, time.Second); err != nil {
		t.Fatal(err)
	}
	a.expect("h", map[int]string{325: "Y", 336: "LOTS", 340: "4"})
	b.send("D", limit("m1", "LOTS", "2", "30", "51.00")...)
	b.expect("8", map[int]string{11: "m1", 150: "0"})
	b.send("D", limit("m2", "LOTS", "1", "10", "52.00")...)
	b.expect("8", map[int]string{11: "m2", 150: "0"})
	awaitX("mdq", "|279=0|269=1|55=LOTS|270=51.00|271=30|", "|277=Q|")
	// A snapshot once the feed's depth cache has both orders (the W comes
	// from it, and it applies events after their ExecutionReports may
	// have gone: see TestStrictClientAcceptsEveryMessage's market data).
	lots, _ := s.fixmd.Cache().Lookup("LOTS")
	var d marketdata.Depth
	for deadline := time.Now().Add(readWait); ; time.Sleep(5 * time.Millisecond) {
		if err := s.fixmd.Cache().Depth(lots.ID, 0, &d); err != nil {
			t.Fatal(err)
		}
		if len(d.Bids) == 1 && len(d.Asks) == 1 && d.State.Indicative.Active {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v the depth cache shows LOTS bids %v asks %v", readWait, d.Bids, d.Asks)
		}
	}
	mdReq("mdw", "0", "0", "1", "A")
	if w := a.expect("W", map[int]string{262: "mdw", 55: "LOTS", 268: "3"}); !strings.Contains(w.raw, "|269=A|") || !strings.Contains(w.raw, "|277=Q|") {
		t.Errorf("snapshot of a call: %s", w.raw)
	}
	if err := s.Gateway().SetTradingStatus("LOTS", venue.TradingStatusOpen, time.Second); err != nil {
		t.Fatal(err)
	}
	b.expect("8", map[int]string{11: "m2", 150: "F", 39: "2", 625: "2"})
	b.expect("8", map[int]string{11: "m1", 150: "F", 39: "1", 625: "2"})
	awaitX("mdq", "|279=2|269=A|")
	b.send("F", "11", "m3", "41", "m1", "55", "LOTS", "54", "2", "60", now())
	b.expect("8", map[int]string{11: "m3", 150: "4"})
	a.checkNoRejects()
	b.checkNoRejects()
}
