package server

import (
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestEveryReportSaysWhatTheOrderIs: every ExecutionReport of a post-only
// order carries ExecInst 6 (18) and every one of an iceberg its MaxFloor
// (111), as their New, Replaced and status reports do (gateway/doc.go):
// fills (150=F), a client's cancel, an expiry (150=C), a mass cancel's and
// a cancel-on-disconnect's reports (150=4), their drop copies, live and
// rebuilt from the journal for a TradeCaptureReportRequest. Fills and
// cancels carry neither: the gateway reads them from its open-order view,
// or from the change held with the answers when the order was entered or
// replaced in the same command as its fill (an iceberg that takes on
// entry, one replaced to a new MaxFloor at a crossing price). Every report
// stays valid against the FIX 4.4 dictionary. Not parallel: the drop-copy
// replay collects the process's garbage (testConfig).
func TestEveryReportSaysWhatTheOrderIs(t *testing.T) {
	s := startServer(t, testConfig(t, t.TempDir(), dropCopySessions), Options{})
	v := strictValidator(t)
	c := logon(t, s, "CLIENT1", true)
	o := logon(t, s, "CLIENT2", true)
	d := logon(t, s, "CLIENT3", true)
	dc := logon(t, s, "DCALL", true)
	from := time.Now().Add(-time.Second)
	postOnly, iceberg := fixclient.F(18, "6"), func(q string) fixclient.Field { return fixclient.F(111, q) }
	cancel := func(id, orig, side string) {
		t.Helper()
		if err := c.Send("F", fixclient.F(11, id), fixclient.F(41, orig), fixclient.F(55, "ACME"), fixclient.F(54, side),
			fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
			t.Fatal(err)
		}
	}
	replace := func(id, orig, qty, px, maxFloor string) {
		t.Helper()
		if err := c.Send("G", fixclient.F(11, id), fixclient.F(41, orig), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, qty), fixclient.F(40, "2"), fixclient.F(44, px),
			fixclient.F(59, "1"), iceberg(maxFloor)); err != nil {
			t.Fatal(err)
		}
	}
	// What each report of an order gives, by the report's ClOrdID (a
	// cancel's or replace's is the request's): "" for a field it must not
	// carry.
	const expire = ".000"
	terms := map[string]map[int]string{}
	po := map[int]string{18: "6", 111: ""}
	for _, id := range []string{"po", "po-x", "po-gtd", "po-mc", "po-fill"} {
		terms[id] = po
	}
	for id, maxFloor := range map[string]string{"ice": "2", "ice-mc": "1", "ice-take": "2", "ice-take2": "1", "ice-r": "2",
		"ice-r2": "1", "ice-r-x": "1"} {
		terms[id] = map[int]string{111: maxFloor, 18: ""}
	}
	terms["d-poice"] = map[int]string{18: "6", 111: "2"}

	// A post-only order cancelled by its client, one expired, and one
	// cancelled with an iceberg by a mass cancel.
	sendOrder(t, c, order{id: "po", side: "1", qty: "1", px: "97.00", extra: []fixclient.Field{postOnly}})
	expectER(t, c, map[int]string{11: "po", 150: "0", 18: "6"})
	cancel("po-x", "po", "1")
	expectER(t, c, map[int]string{11: "po-x", 150: "4"})
	expireAt := time.Now().Add(time.Second).UTC().Format("20060102-15:04:05") + expire
	sendOrder(t, c, order{id: "po-gtd", side: "1", qty: "1", px: "96.50", tif: "6",
		extra: []fixclient.Field{postOnly, fixclient.F(126, expireAt)}})
	expectER(t, c, map[int]string{11: "po-gtd", 150: "0", 18: "6"})
	if m := expectER(t, c, map[int]string{11: "po-gtd", 150: "C", 39: "C"}); m.Get(126) != expireAt {
		t.Errorf("expiry of a GTD order without its ExpireTime %s: %s", expireAt, m)
	}
	sendOrder(t, c, order{id: "po-mc", side: "1", qty: "1", px: "96.00", extra: []fixclient.Field{postOnly}})
	expectER(t, c, map[int]string{11: "po-mc", 150: "0"})
	sendOrder(t, c, order{id: "ice-mc", side: "1", qty: "3", px: "95.90", extra: []fixclient.Field{iceberg("1")}})
	expectER(t, c, map[int]string{11: "ice-mc", 150: "0", 111: "1"})
	if err := c.Send("q", fixclient.F(11, "mc"), fixclient.F(530, "7"), fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "po-mc", 150: "4"})
	expectER(t, c, map[int]string{11: "ice-mc", 150: "4"})
	if _, err := c.Expect(readWait, "r", map[int]string{11: "mc", 531: "7", 533: "2"}); err != nil {
		t.Fatal(err)
	}

	// A post-only order filled as it rests.
	sendOrder(t, c, order{id: "po-fill", side: "1", qty: "1", px: "98.00", extra: []fixclient.Field{postOnly}})
	expectER(t, c, map[int]string{11: "po-fill", 150: "0"})
	sendOrder(t, o, order{id: "hit0", side: "2", qty: "1", px: "98.00", tif: "3"})
	expectER(t, c, map[int]string{11: "po-fill", 150: "F", 39: "2"})

	// An iceberg filled slice by slice, partly then in full.
	sendOrder(t, c, order{id: "ice", side: "1", qty: "4", px: "99.00", extra: []fixclient.Field{iceberg("2")}})
	expectER(t, c, map[int]string{11: "ice", 150: "0", 111: "2"})
	sendOrder(t, o, order{id: "hit1", side: "2", qty: "1", px: "99.00", tif: "3"})
	expectER(t, c, map[int]string{11: "ice", 150: "F", 39: "1"})
	sendOrder(t, o, order{id: "hit2", side: "2", qty: "3", px: "99.00", tif: "3"})
	expectER(t, c, map[int]string{11: "ice", 150: "F", 39: "2"})

	// An iceberg that takes on entry: its fill is built in the chunk of
	// answers that holds its entry. Replaced to a smaller display at a
	// crossing price, it trades in the replace's command: the fill gives
	// the new MaxFloor, which the view learns only at the hand-over.
	sendOrder(t, o, order{id: "ask", side: "2", qty: "2", px: "100.00"})
	expectER(t, o, map[int]string{11: "ask", 150: "0"})
	sendOrder(t, c, order{id: "ice-take", side: "1", qty: "4", px: "100.00", tif: "1", extra: []fixclient.Field{iceberg("2")}})
	expectER(t, c, map[int]string{11: "ice-take", 150: "F", 39: "1"})
	sendOrder(t, o, order{id: "ask2", side: "2", qty: "3", px: "100.50"})
	expectER(t, o, map[int]string{11: "ask2", 150: "0"})
	replace("ice-take2", "ice-take", "4", "100.50", "1")
	expectER(t, c, map[int]string{11: "ice-take2", 150: "5", 111: "1"})
	expectER(t, c, map[int]string{11: "ice-take2", 150: "F", 39: "2"})

	// An iceberg replaced to a smaller display, then cancelled.
	sendOrder(t, c, order{id: "ice-r", side: "1", qty: "4", px: "98.50", tif: "1", extra: []fixclient.Field{iceberg("2")}})
	expectER(t, c, map[int]string{11: "ice-r", 150: "0"})
	replace("ice-r2", "ice-r", "4", "98.50", "1")
	expectER(t, c, map[int]string{11: "ice-r2", 150: "5"})
	cancel("ice-r-x", "ice-r2", "1")
	expectER(t, c, map[int]string{11: "ice-r-x", 150: "4"})

	// A post-only iceberg cancelled when its session drops (a day order:
	// cancel-on-disconnect leaves the others): the drop copy shows its
	// cancel.
	sendOrder(t, d, order{id: "d-poice", side: "1", qty: "4", px: "95.00", extra: []fixclient.Field{postOnly, iceberg("2")}})
	expectER(t, d, map[int]string{11: "d-poice", 150: "0", 18: "6", 111: "2"})
	d.Close()
	if _, err := dc.Expect(readWait, "8", map[int]string{11: "d-poice", 150: "4", 58: "cancelled on disconnect"}); err != nil {
		t.Fatalf("%v (received so far: %v)", err, dc.Received)
	}

	// Each fill and cancel above, and its copy, says what its order is.
	checked := map[string]bool{}
	check := func(when string, m *fixclient.Message) {
		t.Helper()
		if m.Type() != "8" {
			return
		}
		validate(t, v, m)
		want, ok := terms[m.Get(11)]
		if !ok {
			return
		}
		for tg, val := range want {
			if m.Get(tg) != val {
				t.Errorf("%s: report 150=%s of %s has %d=%q, want %q: %s", when, m.Get(150), m.Get(11), tg, m.Get(tg), val, m)
			}
		}
		checked[when+" "+m.Get(11)+" 150="+m.Get(150)+" 39="+m.Get(39)] = true
	}
	for _, m := range c.Received {
		check("report", m)
	}
	// The copies of them all are in by now: a session's answers are
	// copied in event order, and the last event's copy has come.
	for _, m := range dc.Received {
		check("copy", m)
	}
	for _, want := range []string{"po-x 150=4 39=4", "po-gtd 150=C 39=C", "po-mc 150=4 39=4", "ice-mc 150=4 39=4", "po-fill 150=F 39=2",
		"ice 150=F 39=1", "ice 150=F 39=2", "ice-take 150=F 39=1", "ice-take2 150=F 39=2", "ice-r-x 150=4 39=4"} {
		for _, when := range []string{"report", "copy"} {
			if !checked[when+" "+want] {
				t.Errorf("no %s %s to check", when, want)
			}
		}
	}
	if !checked["copy d-poice 150=4 39=4"] {
		t.Error("no copy of the cancel on disconnect to check")
	}

	// The replay rebuilds them from the journal's events alone.
	waitDurableAll(t, s)
	if err := dc.Send("AD", fixclient.F(568, "R1"), fixclient.F(569, "0"), fixclient.F(580, "1"),
		fixclient.F(75, from.UTC().Format("20060102")), fixclient.F(60, from.UTC().Format("20060102-15:04:05.000"))); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Expect(readWait, "AQ", map[int]string{568: "R1", 750: "0"}); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := dc.Read(readWait)
		if err != nil {
			t.Fatal(err)
		}
		if m.Type() == "AQ" {
			if m.Get(750) != "1" {
				t.Fatalf("replay ended with %s", m)
			}
			break
		}
		check("replayed copy", m)
	}
	for _, want := range []string{"po-x 150=4 39=4", "po-gtd 150=C 39=C", "po-fill 150=F 39=2", "ice 150=F 39=2", "ice-take 150=F 39=1",
		"ice-take2 150=F 39=2", "ice-r-x 150=4 39=4", "d-poice 150=4 39=4"} {
		if !checked["replayed copy "+want] {
			t.Errorf("no replayed copy %s to check", want)
		}
	}
}
