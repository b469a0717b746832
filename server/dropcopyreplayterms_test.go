package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestDropCopyReplaySaysWhatTheOrderIs: a drop copy's replayed copies
// (TradeCaptureReportRequest, README "Drop copy") are the live copies,
// field for field, for orders entered before the requested period and
// filled, replaced or cancelled in it: a GTD order's fill and cancel with
// its ExpireTime (126), a stop's cancel and its trigger's fill with its
// StopPx (99), an iceberg's fill and cancel with its MaxFloor (111), a
// post-only order's fill, replace and cancel with ExecInst 6 (18). Their
// events carry none of these: the replay's open-order view has them from
// the entries, which it keeps though they are outside the period, and
// across a restart (the orders GTC or GTD, so that they outlive their
// session's connection).
func TestDropCopyReplaySaysWhatTheOrderIs(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), dropCopySessions)
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	expire := time.Now().Add(time.Hour).UTC().Format("20060102-15:04:05") + ".000"
	kinds := termKinds(expire)
	// Before the period: every order entered, one of each kind to be
	// filled and one to be cancelled, a post-only one to be replaced and
	// two buy stops.
	for _, k := range kinds {
		sendOrder(t, c, order{id: k.name + "-f", side: "1", qty: k.qty, px: k.fillPx, tif: k.tif, extra: k.extra})
		expectER(t, c, map[int]string{11: k.name + "-f", 150: "0"})
		sendOrder(t, c, order{id: k.name + "-x", side: "1", qty: k.qty, px: k.restPx, tif: k.tif, extra: k.extra})
		expectER(t, c, map[int]string{11: k.name + "-x", 150: "0"})
	}
	sendOrder(t, c, order{id: "po-r", side: "1", qty: "1", px: "95.00", tif: "1", extra: []fixclient.Field{fixclient.F(18, "6")}})
	expectER(t, c, map[int]string{11: "po-r", 150: "0"})
	sendOrder(t, c, order{id: "stop-x", side: "1", qty: "1", tif: "1", typ: "3", extra: []fixclient.Field{fixclient.F(99, "101.00")}})
	expectER(t, c, map[int]string{11: "stop-x", 150: "0", 99: "101.00"})
	sendOrder(t, c, order{id: "stop-f", side: "1", qty: "1", tif: "1", typ: "3", extra: []fixclient.Field{fixclient.F(99, "100.50")}})
	expectER(t, c, map[int]string{11: "stop-f", 150: "0", 99: "100.50"})
	// A restart between: the live view is seeded from the matcher's books,
	// the replay's is built from the journal's events.
	s.Close()
	s = startServer(t, cfg, Options{})
	c = logon(t, s, "CLIENT1", true)
	o, d := logon(t, s, "CLIENT2", true), logon(t, s, "CLIENT3", true)
	dc := startStrict(t, s, "DC1")
	time.Sleep(5 * time.Millisecond)
	from := time.Now().Truncate(time.Millisecond).Add(time.Millisecond)
	time.Sleep(5 * time.Millisecond)

	// The period: their fills, replace and cancels.
	// The best bid first: each hit fills only its own order.
	for i := range kinds {
		k := kinds[len(kinds)-1-i]
		sendOrder(t, o, order{id: "hit-" + k.name, side: "2", qty: k.qty, px: k.fillPx, tif: "3"})
		expectER(t, c, map[int]string{11: k.name + "-f", 150: "F", 39: "2"})
		cancelBuy(t, c, k.name+"-x2", k.name+"-x")
	}
	replacePostOnly(t, c, "1")
	cancelBuy(t, c, "po-r3", "po-r2")
	cancelBuy(t, c, "stop-x2", "stop-x")
	sendOrder(t, o, order{id: "ask", side: "2", qty: "2", px: "100.50"})
	expectER(t, o, map[int]string{11: "ask", 150: "0"})
	sendOrder(t, d, order{id: "lift", side: "1", qty: "1", px: "100.50", tif: "3"})
	expectER(t, c, map[int]string{11: "stop-f", 150: "F", 39: "2"})

	// CLIENT1's live reports in the period, each with its live copy.
	var period []*fixclient.Message
	for _, m := range c.Received {
		if ts, err := time.Parse("20060102-15:04:05.000", m.Get(60)); m.Type() == "8" && m.Get(17) != "" && err == nil && !ts.Before(from) {
			period = append(period, m)
		}
	}
	liveCopies := map[string]*strictMsg{}
	for _, m := range period {
		liveCopies[m.Get(17)] = dc.expect("8", map[int]string{797: "Y", 128: "CLIENT1", 17: m.Get(17)})
	}
	waitDurableAll(t, s)

	body, dates := tradeRequest("R1", "0", from, time.Time{})
	dc.sendGroup("AD", body, dates)
	dc.expect("AQ", map[int]string{568: "R1", 749: "0", 750: "0"})
	// Every field but the header's and trailer's.
	header := map[int]bool{8: true, 9: true, 10: true, 34: true, 35: true, 43: true, 49: true, 52: true, 56: true, 97: true, 122: true}
	checked := map[string]bool{}
	for _, m := range period {
		want := liveCopies[m.Get(17)]
		got := dc.expect("8", map[int]string{797: "Y", 17: m.Get(17)})
		var diffs []string
		for tg, v := range want.fields {
			if !header[tg] && got.get(tg) != v {
				diffs = append(diffs, fmt.Sprintf("%d=%s replayed as %q", tg, v, got.get(tg)))
			}
		}
		for tg, v := range got.fields {
			if _, had := want.fields[tg]; !header[tg] && !had {
				diffs = append(diffs, fmt.Sprintf("replayed with %d=%s", tg, v))
			}
		}
		if len(diffs) > 0 {
			t.Errorf("copy 150=%s of %s replayed otherwise than copied live: %s\nlive:     %s\nreplayed: %s", want.get(150), want.get(11),
				strings.Join(diffs, ", "), want.raw, got.raw)
		}
		checked[want.get(11)+" 150="+want.get(150)] = true
	}
	dc.expect("AQ", map[int]string{568: "R1", 749: "0", 750: "1", 748: fmt.Sprint(len(period))})
	for _, want := range []string{"gtd-f 150=F", "gtd-x2 150=4", "ice-f 150=F", "ice-x2 150=4", "po-f 150=F", "po-x2 150=4", "po-r2 150=5",
		"po-r3 150=4", "stop-x2 150=4", "stop-f 150=F"} {
		if !checked[want] {
			t.Errorf("no replayed copy %s to check (checked: %v)", want, checked)
		}
	}
	dc.checkNoRejects()
}
