package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestReportsArriveInEventOrder: a session's ExecutionReports reach the
// client in the order of the events that caused them, whether outbound
// hands a report to QuickFIX/Go itself or the session's sender goroutine
// does (docs/ARCHITECTURE.md, "Why the sender paces QuickFIX/Go"). Orders
// and their cancels are sent back to back without waiting, so that reports
// pile up and both paths are taken; the matcher applies them in arrival
// order, so the acknowledgement of order i, then its cancel, then order
// i+1 is the only right order.
func TestReportsArriveInEventOrder(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	const orders = 300 // 600 messages, under the session's default throttles
	for i := range orders {
		sendOrder(t, c, order{id: fmt.Sprintf("o%d", i), side: "1", qty: "1", px: "99.00"})
		if err := c.Send("F", fixclient.F(11, fmt.Sprintf("c%d", i)), fixclient.F(41, fmt.Sprintf("o%d", i)),
			fixclient.F(55, "ACME"), fixclient.F(54, "1"), fixclient.F(38, "1"), fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range orders {
		for _, want := range []struct{ id, execType string }{{fmt.Sprintf("o%d", i), "0"}, {fmt.Sprintf("c%d", i), "4"}} {
			m, err := c.Read(readWait)
			if err != nil {
				t.Fatalf("report %s: %v", want.id, err)
			}
			if m.Type() != "8" || m.Get(11) != want.id || m.Get(150) != want.execType {
				t.Fatalf("got %s, want the ExecutionReport 11=%s 150=%s next", m, want.id, want.execType)
			}
		}
	}
}

// TestReplaceKeepsPostOnly: an order keeps the post-only it was entered with
// through a replace, and a replace that asks post-only (ExecInst 6) of a
// plain order is refused, never amended into an order that takes the
// liquidity it asked not to take (gateway/doc.go, "Unsupported order
// fields").
func TestReplaceKeepsPostOnly(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	a := logon(t, s, "CLIENT1", true)
	b := logon(t, s, "CLIENT2", true)
	sendOrder(t, b, order{id: "ask", side: "2", qty: "5", px: "100.00"})
	expectER(t, b, map[int]string{11: "ask", 150: "0"})
	replace := func(id, orig, px string, extra ...fixclient.Field) {
		t.Helper()
		f := []fixclient.Field{fixclient.F(11, id), fixclient.F(41, orig), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "5"), fixclient.F(40, "2"), fixclient.F(44, px), fixclient.F(59, "0")}
		if err := a.Send("G", append(f, extra...)...); err != nil {
			t.Fatal(err)
		}
	}
	postOnly := fixclient.F(18, "6")

	// A plain order: a replace with ExecInst 6 that would cross is refused,
	// and the order rests untouched.
	sendOrder(t, a, order{id: "plain", side: "1", qty: "5", px: "99.00"})
	expectER(t, a, map[int]string{11: "plain", 150: "0"})
	replace("plain2", "plain", "100.00", postOnly)
	m, err := a.Expect(readWait, "9", map[int]string{11: "plain2", 41: "plain", 434: "2", 102: "99", 39: "0"})
	if err != nil {
		t.Fatalf("%v (received so far: %v)", err, a.Received)
	}
	if !strings.Contains(m.Get(58), "cannot add post-only (ExecInst 6)") {
		t.Fatalf("Text %q does not name post-only", m.Get(58))
	}
	if err := a.Send("H", fixclient.F(11, "plain"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, a, map[int]string{11: "plain", 150: "I", 39: "0", 14: "0", 151: "5", 44: "99.00"})
	replace("plain3", "plain", "98.00")
	if m := expectER(t, a, map[int]string{11: "plain3", 150: "5", 44: "98.00"}); m.Get(18) != "" {
		t.Fatalf("a plain order's Replaced report carries ExecInst %s", m.Get(18))
	}

	// A post-only order keeps its post-only whether the replace restates
	// ExecInst 6 or not.
	sendOrder(t, a, order{id: "po", side: "1", qty: "5", px: "99.50", extra: []fixclient.Field{postOnly}})
	expectER(t, a, map[int]string{11: "po", 150: "0", 18: "6"})
	// Its Replaced reports say so (ExecInst 6), as its New did.
	replace("po2", "po", "99.60", postOnly)
	expectER(t, a, map[int]string{11: "po2", 150: "5", 44: "99.60", 18: "6"})
	replace("po2b", "po2", "99.70")
	expectER(t, a, map[int]string{11: "po2b", 150: "5", 44: "99.70", 18: "6"})
	if err := a.Send("H", fixclient.F(11, "po2b"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, a, map[int]string{11: "po2b", 150: "I", 44: "99.70", 18: "6"})
	replace("po3", "po2b", "100.00")
	if _, err := a.Expect(readWait, "9", map[int]string{11: "po3", 102: "99", 58: "post-only order would take liquidity"}); err != nil {
		t.Fatalf("%v (received so far: %v)", err, a.Received)
	}
}

// TestOrderDecimals: a Price or OrderQty is read as the decimal it is
// (gateway/doc.go: prices go from the decimal string to ticks, never
// rounded): trailing zeros, however many, change nothing; more fractional
// digits than any tick has is off the tick; a number too large for the
// venue is outside the band or above the maximum, said so as for any other.
func TestOrderDecimals(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "zeros", side: "1", qty: "5.00000000000000000000", px: "99.5000000000000000000000000"})
	expectER(t, c, map[int]string{11: "zeros", 150: "0", 38: "5", 44: "99.50", 151: "5"})
	for _, tc := range []struct {
		id, qty, px, reason, text string
	}{
		{"fine", "1", "99.5000000000000000001", "99", "price 99.5000000000000000001 is not a multiple of the tick size 0.01"},
		{"fine9", "1", "99.0000000001", "99", "price 99.0000000001 is not a multiple of the tick size 0.01"},
		{"bigpx", "1", "99999999999999999999", "99", "price outside the instrument's price band 90.00 to 110.00"},
		{"bigqty", "99999999999999999999", "99.00", "13", "quantity outside the instrument's minimum and maximum"},
		{"negqty", "-99999999999999999999", "99.00", "13", "OrderQty must be a positive whole number"},
	} {
		sendOrder(t, c, order{id: tc.id, side: "1", qty: tc.qty, px: tc.px})
		expectER(t, c, map[int]string{11: tc.id, 150: "8", 103: tc.reason, 58: tc.text})
	}
	sendOrder(t, c, order{id: "bigstop", side: "1", qty: "1", typ: "3", extra: []fixclient.Field{fixclient.F(99, "99999999999999999999")}})
	expectER(t, c, map[int]string{11: "bigstop", 150: "8", 103: "99", 58: "StopPx (99) outside the instrument's price band 90.00 to 110.00"})
}

// TestCancelReplaceNamesTheField: a cancel or replace that names another
// characteristic than its order's is refused with a Text naming that field,
// the order's value and the one asked, not a list of everything that must
// match (README, "FIX").
func TestCancelReplaceNamesTheField(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "o1", side: "1", qty: "5", px: "99.00", extra: []fixclient.Field{fixclient.F(1, "ACC1")}})
	expectER(t, c, map[int]string{11: "o1", 150: "0"})
	for _, tc := range []struct {
		msgType, id, sym, side, typ, tif, account, text string
	}{
		{"G", "r1", "ACME", "2", "2", "0", "", "a replace must give the order's Side (54) 1, not 2"},
		{"G", "r2", "LOTS", "1", "2", "0", "", "a replace must give the order's Symbol (55) ACME, not LOTS"},
		{"G", "r3", "ACME", "1", "4", "0", "", "a replace must keep the order's OrdType (40) 2, not 4"},
		{"G", "r4", "ACME", "1", "2", "1", "", "a replace must keep the order's TimeInForce (59; absent is DAY) 0, not 1"},
		{"G", "r5", "ACME", "1", "2", "0", "ACC2", "a replace must keep the order's Account (1) ACC1, not ACC2"},
		{"F", "c1", "ACME", "2", "", "", "", "a cancel must give the order's Side (54) 1, not 2"},
		{"F", "c2", "LOTS", "1", "", "", "", "a cancel must give the order's Symbol (55) ACME, not LOTS"},
		// A symbol the venue does not list is the gateway's to refuse: the
		// order is still named, and so CxlRejReason is 99, not unknown order.
		{"F", "c3", "NOPE", "1", "", "", "", "unknown symbol NOPE"},
		{"G", "r6", "NOPE", "1", "2", "0", "", "unknown symbol NOPE"},
	} {
		f := []fixclient.Field{fixclient.F(11, tc.id), fixclient.F(41, "o1"), fixclient.F(55, tc.sym), fixclient.F(54, tc.side),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "5")}
		if tc.msgType == "G" {
			px := "99.00" // on the tick of the symbol asked, so that only the field in question differs
			if tc.sym == "LOTS" {
				px = "50.00"
			}
			f = append(f, fixclient.F(40, tc.typ), fixclient.F(59, tc.tif), fixclient.F(44, px))
			if tc.typ == "4" {
				f = append(f, fixclient.F(99, px))
			}
			if tc.account != "" {
				f = append(f, fixclient.F(1, tc.account))
			}
		}
		if err := c.Send(tc.msgType, f...); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Expect(readWait, "9", map[int]string{11: tc.id, 102: "99", 37: "1", 39: "0", 58: tc.text}); err != nil {
			t.Fatalf("%s: %v (received so far: %v)", tc.id, err, c.Received)
		}
	}
}

// TestGatewayCancelRejectFindsTheOrderByClOrdID: a cancel or replace the
// gateway refuses before a command (an unknown symbol, an off-tick price)
// gets an OrderCancelReject with the OrderID and OrdStatus of the order its
// OrigClOrdID names, found in the open-order view by ClOrdID: an order
// entered, replaced and partly filled by its new ClOrdID, and by its old
// one too, which still names it (as the matcher's reject of it says), the
// Text saying so. An order ended today (filled, cancelled) is named with
// its final status by each of its ClOrdIDs, a done cancel's included, and
// by its OrderID, as the matcher's too-late reject names it, before and
// after a restart; only a ClOrdID the session never sent is unknown.
func TestGatewayCancelRejectFindsTheOrderByClOrdID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, testConfig(t, dir, ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	other := logon(t, s, "CLIENT2", true)
	now := func() fixclient.Field { return fixclient.F(60, fixclient.Timestamp(time.Now())) }
	replace := func(id, orig, sym string) []fixclient.Field {
		return []fixclient.Field{fixclient.F(11, id), fixclient.F(41, orig), fixclient.F(55, sym), fixclient.F(54, "1"), now(),
			fixclient.F(38, "4"), fixclient.F(40, "2"), fixclient.F(59, "1"), fixclient.F(44, "99.00")}
	}
	const unknown, replaced = "unknown symbol NOPE", "; and OrigClOrdID (41) names an order since replaced: give its current ClOrdID"
	refused := func(msgType string, f []fixclient.Field, orderID, ordStatus, text string) {
		t.Helper()
		id, orig := f[0].Value, f[1].Value
		if err := c.Send(msgType, f...); err != nil {
			t.Fatal(err)
		}
		m, err := c.Expect(readWait, "9", map[int]string{11: id})
		if err != nil {
			t.Fatalf("%s: %v (received so far: %v)", id, err, c.Received)
		}
		if m.Get(41) != orig || m.Get(37) != orderID || m.Get(39) != ordStatus || m.Get(58) != text {
			t.Fatalf("%s: %s; want OrigClOrdID %s, OrderID %s, OrdStatus %s, Text %q", id, m, orig, orderID, ordStatus, text)
		}
	}
	// GTC: the order outlives its session's disconnection (cancel on
	// disconnect) for the restart below.
	sendOrder(t, c, order{id: "o1", side: "1", qty: "5", px: "99.00", tif: "1"})
	orderID := expectER(t, c, map[int]string{11: "o1", 150: "0"}).Get(37)
	sendOrder(t, c, order{id: "n1", side: "1", qty: "5", px: "98.00"})
	expectER(t, c, map[int]string{11: "n1", 150: "0"})
	if err := c.Send("G", replace("o2", "o1", "ACME")...); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "o2", 150: "5", 37: orderID})
	refused("F", []fixclient.Field{fixclient.F(11, "c1"), fixclient.F(41, "o2"), fixclient.F(55, "NOPE"), fixclient.F(54, "1"), now()}, orderID, "0", unknown)
	sendOrder(t, other, order{id: "s1", side: "2", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "o2", 150: "F", 39: "1"})
	refused("F", []fixclient.Field{fixclient.F(11, "c2"), fixclient.F(41, "o2"), fixclient.F(55, "NOPE"), fixclient.F(54, "1"), now()}, orderID, "1", unknown)
	refused("G", replace("r3", "o2", "NOPE"), orderID, "1", unknown)
	// By the ClOrdID the replace superseded: the order still rests, and
	// 37=NONE 39=8 told the client it was gone.
	refused("F", []fixclient.Field{fixclient.F(11, "c4"), fixclient.F(41, "o1"), fixclient.F(55, "NOPE"), fixclient.F(54, "1"), now()}, orderID, "1", unknown+replaced)
	offTick := replace("r5", "o1", "ACME")
	offTick[len(offTick)-1] = fixclient.F(44, "99.001")
	refused("G", offTick, orderID, "1", "price 99.001 is not a multiple of the tick size 0.01"+replaced)
	refused("F", []fixclient.Field{fixclient.F(11, "c6"), fixclient.F(41, "never"), fixclient.F(55, "NOPE"), fixclient.F(54, "1"), now()}, "NONE", "8", unknown)
	// A filled order is named Filled: the matcher answers it too late,
	// and 37=NONE 39=8 told the client it had never been.
	sendOrder(t, c, order{id: "f1", side: "2", qty: "1", px: "101.00"})
	filledID := expectER(t, c, map[int]string{11: "f1", 150: "0"}).Get(37)
	sendOrder(t, other, order{id: "b1", side: "1", qty: "1", px: "101.00"})
	expectER(t, c, map[int]string{11: "f1", 150: "F", 39: "2"})
	refused("F", []fixclient.Field{fixclient.F(11, "c10"), fixclient.F(41, "f1"), fixclient.F(55, "NOPE"), fixclient.F(54, "2"), now()}, filledID, "2", unknown)
	// The superseded ClOrdID still names the order after a restart: the
	// view is seeded with it from the matcher's records (Gateway.SeedSuperseded),
	// and the filled order's (Gateway.SeedEnded).
	restart := func() {
		t.Helper()
		next := c.NextOut
		c.Close()
		other.Close()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = startServer(t, testConfig(t, dir, ""), Options{})
		c, _ = resume(t, s, "CLIENT1", next)
		other = logon(t, s, "CLIENT2", true)
	}
	restart()
	refused("F", []fixclient.Field{fixclient.F(11, "c7"), fixclient.F(41, "o1"), fixclient.F(55, "NOPE"), fixclient.F(54, "1"), now()}, orderID, "1", unknown+replaced)
	refused("F", []fixclient.Field{fixclient.F(11, "c11"), fixclient.F(41, "f1"), fixclient.F(55, "NOPE"), fixclient.F(54, "2"), now()}, filledID, "2", unknown)
	// Once the order has ended, each of its ClOrdIDs (the last, one a
	// replace superseded, the cancel's own) and its OrderID (37, which
	// the gateway looks up first) name it Cancelled.
	if err := c.Send("F", fixclient.F(11, "c8"), fixclient.F(41, "o2"), fixclient.F(55, "ACME"), fixclient.F(54, "1"), now()); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "c8", 150: "4"})
	cancelledEach := func(n string) {
		t.Helper()
		refused("F", []fixclient.Field{fixclient.F(11, "c9"+n), fixclient.F(41, "o1"), fixclient.F(55, "NOPE"), fixclient.F(54, "1"), now()}, orderID, "4", unknown)
		refused("F", []fixclient.Field{fixclient.F(11, "c12"+n), fixclient.F(41, "o2"), fixclient.F(55, "NOPE"), fixclient.F(54, "1"), now()}, orderID, "4", unknown)
		late := replace("r13"+n, "c8", "ACME")
		late[len(late)-1] = fixclient.F(44, "99.001")
		refused("G", late, orderID, "4", "price 99.001 is not a multiple of the tick size 0.01")
		refused("F", []fixclient.Field{fixclient.F(11, "c14"+n), fixclient.F(41, "o2"), fixclient.F(37, orderID), fixclient.F(55, "NOPE"), fixclient.F(54, "1"), now()}, orderID, "4", unknown)
		refused("F", []fixclient.Field{fixclient.F(11, "c15"+n), fixclient.F(41, "never"), fixclient.F(55, "NOPE"), fixclient.F(54, "1"), now()}, "NONE", "8", unknown)
	}
	cancelledEach("a")
	// And after a restart, from the matcher's records.
	restart()
	cancelledEach("b")
	refused("F", []fixclient.Field{fixclient.F(11, "c16"), fixclient.F(41, "f1"), fixclient.F(55, "NOPE"), fixclient.F(54, "2"), now()}, filledID, "2", unknown)
}

// TestReplaceOutsideBandNamesTheBand: a replace refused for a price outside
// the band names the band's edges, and StopPx when the stop price is the
// one outside, as the reject of a new order does.
func TestReplaceOutsideBandNamesTheBand(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "lim", side: "1", qty: "5", px: "99.00"})
	expectER(t, c, map[int]string{11: "lim", 150: "0"})
	sendOrder(t, c, order{id: "stp", side: "1", qty: "5", typ: "3", extra: []fixclient.Field{fixclient.F(99, "105.00")}})
	expectER(t, c, map[int]string{11: "stp", 150: "0"})
	for _, tc := range []struct {
		id, orig, typ string
		price         []fixclient.Field
		text          string
	}{
		{"lim2", "lim", "2", []fixclient.Field{fixclient.F(44, "89.99")}, "price outside the instrument's price band 90.00 to 110.00"},
		{"stp2", "stp", "3", []fixclient.Field{fixclient.F(99, "110.01")}, "StopPx (99) outside the instrument's price band 90.00 to 110.00"},
	} {
		f := []fixclient.Field{fixclient.F(11, tc.id), fixclient.F(41, tc.orig), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "5"), fixclient.F(40, tc.typ), fixclient.F(59, "0")}
		if err := c.Send("G", append(f, tc.price...)...); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Expect(readWait, "9", map[int]string{11: tc.id, 102: "99", 39: "0", 58: tc.text}); err != nil {
			t.Fatalf("%s: %v (received so far: %v)", tc.id, err, c.Received)
		}
	}
}
