package server

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// tradeRequest is a TradeCaptureReportRequest body for a period from
// (and to, when not zero), as a strict client writes it.
func tradeRequest(id, reqType string, from, to time.Time) ([]string, *quickfix.RepeatingGroup) {
	g := quickfix.NewRepeatingGroup(tag.NoDates, quickfix.GroupTemplate{
		quickfix.GroupElement(tag.TradeDate), quickfix.GroupElement(tag.TransactTime)})
	// TradeDate (75) first: it is the group's delimiter.
	for _, at := range []time.Time{from, to} {
		if at.IsZero() {
			break
		}
		e := g.Add()
		e.SetString(tag.TradeDate, at.UTC().Format("20060102"))
		e.SetString(tag.TransactTime, at.UTC().Format("20060102-15:04:05.000"))
	}
	return []string{"568", id, "569", reqType}, g
}

// TestDropCopyReplayBeyondTheStore: a drop-copy session that logs on with
// a reset (its FIX store gives it nothing of what it missed) asks for a
// period with a TradeCaptureReportRequest and receives, between an AQ
// Accepted and an AQ Completed, exactly the copies of its grant's reports
// of that period, in the venue's order, rebuilt from the journal; a
// strict QuickFIX/Go client accepts every message. An order session's
// request, an unsupported request type and a request without a period are
// refused.
func TestDropCopyReplayBeyondTheStore(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), dropCopySessions)
	s := startServer(t, cfg, Options{})
	c1 := logon(t, s, "CLIENT1", true)
	c2 := logon(t, s, "CLIENT2", true)

	// Before the period: not replayed.
	sendOrder(t, c1, order{id: "early", side: "1", qty: "1", px: "98.00"})
	expectER(t, c1, map[int]string{11: "early", 150: "0"})
	time.Sleep(5 * time.Millisecond)
	from := time.Now().Truncate(time.Millisecond).Add(time.Millisecond)
	time.Sleep(5 * time.Millisecond)

	// The period: CLIENT1's reports (DC1's grant) and CLIENT2's (not).
	var want []*fixclient.Message
	sendOrder(t, c2, order{id: "s1", side: "2", qty: "10", px: "100.00"})
	expectER(t, c2, map[int]string{11: "s1", 150: "0"})
	for i := 0; i < 5; i++ {
		id := fmt.Sprintf("b%d", i)
		sendOrder(t, c1, order{id: id, side: "1", qty: "1", px: "100.00"})
		want = append(want, expectER(t, c1, map[int]string{11: id, 150: "0"}))
		want = append(want, expectER(t, c1, map[int]string{11: id, 150: "F"}))
	}
	sendOrder(t, c1, order{id: "rest", side: "1", qty: "2", px: "97.00"})
	want = append(want, expectER(t, c1, map[int]string{11: "rest", 150: "0"}))
	// A GTD order's reports carry its ExpireTime, its Canceled report too
	// (from the open-order view, which the replay keeps as well).
	expire := time.Now().Add(time.Hour).UTC().Format("20060102-15:04:05.000")
	sendOrder(t, c1, order{id: "gtd", side: "1", qty: "1", px: "97.00", tif: "6", extra: []fixclient.Field{fixclient.F(126, expire)}})
	want = append(want, expectER(t, c1, map[int]string{11: "gtd", 150: "0", 126: expire}))
	if err := c1.Send("F", fixclient.F(11, "gtd-x"), fixclient.F(41, "gtd"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, time.Now().UTC().Format("20060102-15:04:05.000"))); err != nil {
		t.Fatal(err)
	}
	want = append(want, expectER(t, c1, map[int]string{11: "gtd-x", 150: "4", 126: expire}))
	waitDurableAll(t, s)

	// The drop copy logs on with a reset: nothing is resent to it. Every AQ
	// names its instrument as [N/A]: FIX 4.4 requires an Instrument.
	dc := startStrict(t, s, "DC1")
	body, dates := tradeRequest("R1", "0", from, time.Time{})
	dc.sendGroup("AD", body, dates)
	dc.expect("AQ", map[int]string{568: "R1", 749: "0", 750: "0", 55: "[N/A]"})
	done := dc.expect("AQ", map[int]string{568: "R1", 749: "0", 750: "1", 55: "[N/A]"})
	if done.get(748) != strconv.Itoa(len(want)) {
		t.Fatalf("TotNumTradeReports %s, want %d: %s", done.get(748), len(want), done.raw)
	}
	var got []*strictMsg
	for range want {
		got = append(got, dc.expect("8", map[int]string{797: "Y", 128: "CLIENT1"}))
	}
	for i, m := range got {
		w := want[i]
		for _, tg := range []int{11, 17, 37, 39, 150, 14, 151, 60, 126} {
			if m.get(tg) != w.Get(tg) {
				t.Fatalf("replayed copy %d: tag %d is %q, the original's %q\ncopy: %s\noriginal: %s", i, tg, m.get(tg), w.Get(tg), m.raw, w)
			}
		}
	}
	dc.checkNoRejects()

	// A period that ends before the trades: only "early" is before it, so nothing.
	body, dates = tradeRequest("R2", "0", from.Add(-time.Hour), from.Add(-time.Millisecond))
	dc.sendGroup("AD", body, dates)
	dc.expect("AQ", map[int]string{568: "R2", 750: "0"})
	done = dc.expect("AQ", map[int]string{568: "R2", 750: "1"})
	if done.get(748) != "1" {
		t.Fatalf("a period holding only 'early': TotNumTradeReports %s", done.get(748))
	}
	dc.expect("8", map[int]string{797: "Y", 11: "early"})

	// TransactTimes beyond what nanoseconds in an int64 hold (1678 to 2262)
	// bound the period as the earliest and latest times do; they wrapped.
	body, dates = tradeRequest("R6", "0", time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC))
	dc.sendGroup("AD", body, dates)
	dc.expect("AQ", map[int]string{568: "R6", 750: "0"})
	done = dc.expect("AQ", map[int]string{568: "R6", 750: "1"})
	if done.get(748) != strconv.Itoa(len(want)+1) {
		t.Fatalf("the period from 1600 to 9999: TotNumTradeReports %s, want %d", done.get(748), len(want)+1)
	}
	for range len(want) + 1 {
		dc.expect("8", map[int]string{797: "Y"})
	}

	// Refusals, each an AQ Rejected with its TradeRequestResult.
	body, dates = tradeRequest("R3", "1", from, time.Time{})
	dc.sendGroup("AD", body, dates)
	dc.expect("AQ", map[int]string{568: "R3", 749: "8", 750: "2", 55: "[N/A]"})
	dc.send("AD", "568", "R4", "569", "0")
	dc.expect("AQ", map[int]string{568: "R4", 749: "99", 750: "2"})
	// A request narrowed to an instrument or a side, or asking for another
	// delivery, is refused naming the field: served, it got every report of
	// the period.
	for _, c := range []struct{ id, tag, value string }{
		{"R7", "55", "ACME"}, {"R8", "54", "1"}, {"R9", "725", "1"},
	} {
		body, dates = tradeRequest(c.id, "0", from, time.Time{})
		dc.sendGroup("AD", append(body, c.tag, c.value), dates)
		m := dc.expect("AQ", map[int]string{568: c.id, 749: "99", 750: "2"})
		if want := "tag " + c.tag + "=" + c.value + " is not served"; !strings.HasPrefix(m.get(58), want) {
			t.Errorf("AD with %s=%s: Text %q, want it to begin %q", c.tag, c.value, m.get(58), want)
		}
	}
	// In-band delivery and a Text are taken.
	body, dates = tradeRequest("R10", "0", time.Now().Add(time.Hour), time.Time{})
	dc.sendGroup("AD", append(body, "725", "0", "58", "in band"), dates)
	dc.expect("AQ", map[int]string{568: "R10", 749: "0", 750: "0"})
	dc.expect("AQ", map[int]string{568: "R10", 749: "0", 750: "1", 748: "0"})
	dc.checkNoRejects()
	if err := c1.Send("AD", fixclient.F(568, "R5"), fixclient.F(569, "0"), fixclient.F(580, "1"),
		fixclient.F(75, from.UTC().Format("20060102")), fixclient.F(60, from.UTC().Format("20060102-15:04:05.000"))); err != nil {
		t.Fatal(err)
	}
	if _, err := c1.Expect(readWait, "AQ", map[int]string{568: "R5", 749: "9", 750: "2"}); err != nil {
		t.Fatalf("an order session's request: %v", err)
	}
}

// waitDurableAll waits until every command so far is durable (bounded).
func waitDurableAll(t *testing.T, s *Server) {
	t.Helper()
	p := s.Pipeline()
	for deadline := time.Now().Add(10 * time.Second); p.Durable().Load() < int64(p.SeqBase())+p.MatcherSequence(); {
		if time.Now().After(deadline) {
			t.Fatal("commands not durable within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestDropCopyReplayOverTheArchive: after two ends of day have moved the
// first day's segments to the archive, a drop copy's request for a period
// of that first day gets its reports, rebuilt from archive + live. Before,
// every request was refused once anything was archived.
func TestDropCopyReplayOverTheArchive(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), adminConfig()+dropCopySessions)
	cfg.Journal.SegmentBytes = 65536 // a day fills several segments
	cfg.Journal.SnapshotInterval.Duration = 0
	s := startServer(t, cfg, Options{})
	c1 := logon(t, s, "CLIENT1", true)
	c2 := logon(t, s, "CLIENT2", true)
	from := time.Now().Add(-time.Millisecond)
	sendOrder(t, c2, order{id: "s1", side: "2", qty: "1", px: "100.00"})
	expectER(t, c2, map[int]string{11: "s1", 150: "0"})
	sendOrder(t, c1, order{id: "b1", side: "1", qty: "1", px: "100.00"})
	want := []*fixclient.Message{expectER(t, c1, map[int]string{11: "b1", 150: "0"}), expectER(t, c1, map[int]string{11: "b1", 150: "F"})}
	time.Sleep(5 * time.Millisecond)
	to := time.Now()
	time.Sleep(5 * time.Millisecond)
	for day := range 2 {
		iocBurst(t, c2, fmt.Sprintf("day%d", day), 1500) // CLIENT2's: not DC1's
		if code := adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"day done"}`, nil); code != 200 {
			t.Fatalf("eod: %d", code)
		}
	}
	if archived, _ := filepath.Glob(filepath.Join(cfg.Venue.DataDir, "journal", "archive", "journal-*.seg.gz")); len(archived) == 0 {
		t.Fatal("nothing archived after two ends of day")
	}
	dc := startStrict(t, s, "DC1")
	body, dates := tradeRequest("R1", "0", from, to)
	dc.sendGroup("AD", body, dates)
	dc.expect("AQ", map[int]string{568: "R1", 749: "0", 750: "0", 55: "[N/A]"})
	done := dc.expect("AQ", map[int]string{568: "R1", 749: "0", 750: "1", 55: "[N/A]"})
	if done.get(748) != strconv.Itoa(len(want)) {
		t.Fatalf("TotNumTradeReports %s, want %d: %s", done.get(748), len(want), done.raw)
	}
	for i, w := range want {
		if m := dc.expect("8", map[int]string{797: "Y", 128: "CLIENT1"}); m.get(17) != w.Get(17) || m.get(150) != w.Get(150) {
			t.Fatalf("replayed copy %d: %s, the original %s", i, m.raw, w)
		}
	}
	dc.checkNoRejects()
}

// TestDropCopyReplayPeriodEndsAtATransactTime: a period whose ends are a
// report's TransactTime, as the report shows it (milliseconds), includes
// that report, the period being inclusive (README "Drop copy"). Before,
// the period was compared with the event's nanoseconds, so a period from
// and to a report's own TransactTime held nothing, and one ending at it
// left it out.
func TestDropCopyReplayPeriodEndsAtATransactTime(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), dropCopySessions)
	s := startServer(t, cfg, Options{})
	c1 := logon(t, s, "CLIENT1", true)
	var want []*fixclient.Message
	for i := range 3 {
		id := fmt.Sprintf("o%d", i)
		sendOrder(t, c1, order{id: id, side: "1", qty: "1", px: "98.00"})
		want = append(want, expectER(t, c1, map[int]string{11: id, 150: "0"}))
	}
	waitDurableAll(t, s)
	at := func(m *fixclient.Message) time.Time {
		ts, err := time.Parse("20060102-15:04:05.000", m.Get(60))
		if err != nil {
			t.Fatalf("TransactTime of %s: %v", m, err)
		}
		return ts
	}
	dc := startStrict(t, s, "DC1")
	for i, c := range []struct{ from, to time.Time }{
		{at(want[1]), at(want[1])},                 // every report of that millisecond
		{at(want[0]).Add(-time.Hour), at(want[2])}, // up to the last report, included
	} {
		var ids []string
		for _, w := range want {
			if ts := at(w); !ts.Before(c.from) && !ts.After(c.to) {
				ids = append(ids, w.Get(17))
			}
		}
		id := fmt.Sprintf("R%d", i)
		body, dates := tradeRequest(id, "0", c.from, c.to)
		dc.sendGroup("AD", body, dates)
		dc.expect("AQ", map[int]string{568: id, 749: "0", 750: "0"})
		done := dc.expect("AQ", map[int]string{568: id, 749: "0", 750: "1"})
		if done.get(748) != strconv.Itoa(len(ids)) {
			t.Fatalf("period %s to %s: TotNumTradeReports %s, want %d (ExecIDs %v): %s", c.from.Format(time.StampMilli),
				c.to.Format(time.StampMilli), done.get(748), len(ids), ids, done.raw)
		}
		for _, e := range ids {
			dc.expect("8", map[int]string{797: "Y", 17: e})
		}
	}
	dc.checkNoRejects()
}

// TestDropCopyReplayGivesItsMatcherBack: once a request is completed, the
// replay's matcher (as large as the venue's) is collected, so requests
// back to back never hold several of them (README "Drop copy": as much
// memory as the venue's while the replay runs). Before, each one stayed
// on the heap until a later collection, and a drop copy asking again and
// again took the venue to several times its own memory.
func TestDropCopyReplayGivesItsMatcherBack(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), dropCopySessions)
	cfg.Engine.OrdersMax = 1 << 18 // a matcher of well over a hundred MB
	cfg.Engine.ClOrdIDsMax = 1 << 20
	s := startServer(t, cfg, Options{})
	c1 := logon(t, s, "CLIENT1", true)
	sendOrder(t, c1, order{id: "o1", side: "1", qty: "1", px: "98.00"})
	expectER(t, c1, map[int]string{11: "o1", 150: "0"})
	waitDurableAll(t, s)
	dc := startStrict(t, s, "DC1")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 3 {
		id := fmt.Sprintf("R%d", i)
		body, dates := tradeRequest(id, "0", time.Now().Add(-time.Hour), time.Time{})
		dc.sendGroup("AD", body, dates)
		dc.expect("AQ", map[int]string{568: id, 749: "0", 750: "0"})
		dc.expect("8", map[int]string{797: "Y", 11: "o1"})
		dc.expect("AQ", map[int]string{568: id, 749: "0", 750: "1", 748: "1"})
	}
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 32<<20 {
		t.Fatalf("the heap holds %d MB more after three replays: their matchers were not collected", grown>>20)
	}
}

// TestDropCopyReplayNamesTheRiskSubject: a risk reject rebuilt from the
// journal for a TradeCaptureReportRequest has the Text the client got,
// naming the session by its CompID (README "Risk limits"). Before, the
// replay's gateway, which has no sessions, named it by its index in the
// configuration ("session:0").
func TestDropCopyReplayNamesTheRiskSubject(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), dropCopySessions+"\n[risk]\n[risk.sessions]\nmax_order_qty = 100\n")
	s := startServer(t, cfg, Options{})
	c1 := logon(t, s, "CLIENT1", true)
	from := time.Now().Add(-time.Second)
	sendOrder(t, c1, order{id: "big", side: "1", qty: "101", px: "100.00"})
	orig := expectER(t, c1, map[int]string{11: "big", 150: "8", 103: "3"})
	if !strings.Contains(orig.Get(58), "session:CLIENT1") {
		t.Fatalf("the reject's Text %q does not name session:CLIENT1", orig.Get(58))
	}
	waitDurableAll(t, s)

	dc := startStrict(t, s, "DC1")
	body, dates := tradeRequest("R1", "0", from, time.Time{})
	dc.sendGroup("AD", body, dates)
	dc.expect("AQ", map[int]string{568: "R1", 749: "0", 750: "0"})
	dc.expect("AQ", map[int]string{568: "R1", 749: "0", 750: "1", 748: "1"})
	if m := dc.expect("8", map[int]string{797: "Y", 11: "big"}); m.get(58) != orig.Get(58) {
		t.Fatalf("replayed copy's Text %q, the client's %q", m.get(58), orig.Get(58))
	}
	dc.checkNoRejects()
}
