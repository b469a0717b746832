package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/cluster"
	"github.com/fixvenue/fixvenue/core/pipeline"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/gateway/fixstore"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/ops"
)

func TestOrderLifecycle(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	a := logon(t, s, "CLIENT1", true)
	b := logon(t, s, "CLIENT2", true)

	// A resting sell, then a buy that takes part of it.
	sendOrder(t, a, order{id: "s1", side: "2", qty: "10", px: "100.10", extra: []fixclient.Field{fixclient.F(1, "ACC-A")}})
	ack := expectER(t, a, map[int]string{11: "s1", 150: "0", 39: "0", 151: "10", 1: "ACC-A", 44: "100.10", 55: "ACME"})
	orderID := ack.Get(37)
	sendOrder(t, b, order{id: "b1", side: "1", qty: "4", px: "100.20"})
	expectER(t, b, map[int]string{11: "b1", 150: "0"})
	expectER(t, b, map[int]string{11: "b1", 150: "F", 39: "2", 31: "100.10", 32: "4", 14: "4", 151: "0", 6: "100.100000"})
	expectER(t, a, map[int]string{11: "s1", 150: "F", 39: "1", 31: "100.10", 32: "4", 14: "4", 151: "6", 37: orderID})

	// Status of the partly filled order.
	if err := a.Send("H", fixclient.F(11, "s1"), fixclient.F(55, "ACME"), fixclient.F(54, "2"), fixclient.F(790, "req-7")); err != nil {
		t.Fatal(err)
	}
	expectER(t, a, map[int]string{11: "s1", 150: "I", 39: "1", 151: "6", 14: "4", 790: "req-7"})

	// Replace: lower quantity at the same price keeps priority.
	replace := func(c *fixclient.Client, id, orig, qty, px string) {
		t.Helper()
		if err := c.Send("G", fixclient.F(11, id), fixclient.F(41, orig), fixclient.F(55, "ACME"), fixclient.F(54, "2"),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, qty), fixclient.F(40, "2"), fixclient.F(44, px)); err != nil {
			t.Fatal(err)
		}
	}
	replace(a, "s2", "s1", "8", "100.10")
	expectER(t, a, map[int]string{11: "s2", 41: "s1", 150: "5", 39: "1", 151: "4", 58: "replaced: time priority kept", 37: orderID})
	// Price change loses priority.
	replace(a, "s3", "s2", "8", "100.11")
	expectER(t, a, map[int]string{11: "s3", 41: "s2", 150: "5", 151: "4", 58: "replaced: time priority lost"})

	// Cancel it.
	if err := a.Send("F", fixclient.F(11, "c1"), fixclient.F(41, "s3"), fixclient.F(55, "ACME"), fixclient.F(54, "2"),
		fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	expectER(t, a, map[int]string{11: "c1", 41: "s3", 150: "4", 39: "4", 14: "4", 151: "0"})
	// Cancelling it again is too late.
	if err := a.Send("F", fixclient.F(11, "c2"), fixclient.F(41, "s3"), fixclient.F(55, "ACME"), fixclient.F(54, "2"),
		fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Expect(readWait, "9", map[int]string{11: "c2", 434: "1"}); err != nil {
		t.Fatal(err)
	}

	// Mass cancel of one's own orders only.
	sendOrder(t, a, order{id: "m1", side: "1", qty: "1", px: "99.00"})
	sendOrder(t, a, order{id: "m2", side: "1", qty: "1", px: "98.00"})
	sendOrder(t, b, order{id: "keep", side: "1", qty: "1", px: "97.00"})
	expectER(t, a, map[int]string{11: "m2", 150: "0"})
	expectER(t, b, map[int]string{11: "keep", 150: "0"})
	if err := a.Send("q", fixclient.F(11, "mc1"), fixclient.F(530, "7"), fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Expect(readWait, "r", map[int]string{11: "mc1", 530: "7", 531: "7"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Get(533) != "2" {
		t.Fatalf("mass cancel affected %s orders, want 2: %s", rep.Get(533), rep)
	}
	if err := b.Send("H", fixclient.F(11, "keep"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, b, map[int]string{11: "keep", 150: "I", 39: "0"})

	// Security list.
	if err := a.Send("x", fixclient.F(320, "sl1"), fixclient.F(559, "4")); err != nil {
		t.Fatal(err)
	}
	sl, err := a.Expect(readWait, "y", map[int]string{320: "sl1", 560: "0", 146: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sl.String(), "55=ACME|15=USD|232=3|233=MININCR|234=0.01|233=MINQTY|234=1|233=PRICE|234=90.00-110.00|561=1|562=1|58=tick size 0.01, lot 1, quantity 1 to 100000, price band 90.00-110.00|") {
		t.Fatalf("security list: %s", sl)
	}

	// An unsupported application message gets a BusinessMessageReject.
	if err := a.Send("c", fixclient.F(320, "sd1"), fixclient.F(321, "0")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Expect(readWait, "j", map[int]string{380: "3"}); err != nil {
		t.Fatal(err)
	}

	m := scrape(t, s)
	if metricstest.Value(t, m, "fixvenue_trades_total") != "1" || metricstest.Value(t, m, "fixvenue_sessions_logged_on") != "2" {
		t.Fatalf("metrics:\n%s", m)
	}
	for _, name := range []string{"fixvenue_order_round_trip_seconds_count", "fixvenue_journal_durable_seq", "go_goroutines", "fixvenue_command_ring_occupancy"} {
		metricstest.Value(t, m, name)
	}
	if v, err := strconv.ParseFloat(metricstest.Value(t, m, "fixvenue_data_dir_free_bytes"), 64); err != nil || v <= 0 {
		t.Errorf("fixvenue_data_dir_free_bytes = %v (%v): want the data directory's free space", v, err)
	}
	// The matcher runs on a locked thread by default, and the metric says so and why.
	if !strings.Contains(m, `fixvenue_matcher_thread_info{`) || !strings.Contains(m, `locked="true"`) || !strings.Contains(m, `reason="`) {
		t.Errorf("no fixvenue_matcher_thread_info with locked=\"true\" and a reason:\n%s", m)
	}
	// The stage histograms saw the orders: flushes with their fsync time and
	// batch size, the event age at outbound, and the edge's outbound count.
	for _, name := range []string{"fixvenue_journal_fsync_seconds_count", "fixvenue_journal_flush_records_count",
		"fixvenue_outbound_event_age_seconds_count", "fixvenue_edge_messages_out_total"} {
		if v := metricstest.Value(t, m, name); v == "0" {
			t.Errorf("%s = 0 after orders were answered", name)
		}
	}
}

// TestReplaceAtOrBelowFilledQuantity checks the answer FIX 4.4 Appendix D
// gives a replace whose quantity is at or below what the order has filled:
// ExecType Replaced, OrdStatus Filled ("filled" takes precedence over
// "canceled"), OrderQty equal to CumQty, nothing left on the book.
func TestReplaceAtOrBelowFilledQuantity(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	a := logon(t, s, "CLIENT1", true)
	b := logon(t, s, "CLIENT2", true)
	sendOrder(t, a, order{id: "s1", side: "2", qty: "10", px: "100.10"})
	expectER(t, a, map[int]string{11: "s1", 150: "0"})
	sendOrder(t, b, order{id: "b1", side: "1", qty: "4", px: "100.10"})
	expectER(t, a, map[int]string{11: "s1", 150: "F", 39: "1", 14: "4", 151: "6"})

	if err := a.Send("G", fixclient.F(11, "s2"), fixclient.F(41, "s1"), fixclient.F(55, "ACME"), fixclient.F(54, "2"),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "3"), fixclient.F(40, "2"), fixclient.F(44, "100.10")); err != nil {
		t.Fatal(err)
	}
	expectER(t, a, map[int]string{11: "s2", 41: "s1", 150: "5", 39: "2", 38: "4", 14: "4", 151: "0",
		58: "replaced to a quantity at or below the filled quantity"})

	// The order is finished and says so; nothing of it rests any more.
	if err := a.Send("H", fixclient.F(11, "s2"), fixclient.F(55, "ACME"), fixclient.F(54, "2")); err != nil {
		t.Fatal(err)
	}
	expectER(t, a, map[int]string{11: "s2", 150: "I", 39: "2", 38: "4", 14: "4", 151: "0"})
	// Asked by the ClOrdID the replace superseded, it answers the order's
	// current state under its current ClOrdID.
	if err := a.Send("H", fixclient.F(11, "s1"), fixclient.F(55, "ACME"), fixclient.F(54, "2")); err != nil {
		t.Fatal(err)
	}
	expectER(t, a, map[int]string{11: "s2", 150: "I", 39: "2", 38: "4", 14: "4", 151: "0"})
	sendOrder(t, b, order{id: "b2", side: "1", qty: "1", px: "100.10"})
	expectER(t, b, map[int]string{11: "b2", 150: "0", 39: "0", 151: "1"})
}

func TestRejectReasons(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	cases := []struct {
		o      order
		reason string
		text   string
	}{
		{order{id: "r1", sym: "NOPE", side: "1", qty: "1", px: "1"}, "1", "unknown symbol"},
		{order{id: "r2", side: "1", qty: "1", px: "100.001"}, "99", "tick size 0.01"},
		{order{id: "r3", side: "1", qty: "1", px: "150.00"}, "99", "band 90.00 to 110.00"},
		{order{id: "r4", sym: "LOTS", side: "1", qty: "15", px: "50.00"}, "13", "lot"},
		{order{id: "r5", sym: "LOTS", side: "1", qty: "2000", px: "50.00"}, "13", "maximum"},
		{order{id: "r6", side: "1", qty: "1", px: "100.00", tif: "2"}, "11", "(at the opening) is accepted only during the opening call"},
		{order{id: "r7", side: "1", qty: "1", px: "100.00", typ: "P"}, "11", "order type"},
		{order{id: "r9", side: "1", qty: "1", typ: "3"}, "99", "StopPx"},
		{order{id: "r8", side: "1", qty: "1.5", px: "100.00"}, "13", "OrderQty"},
		{order{id: strings.Repeat("x", 37), side: "1", qty: "1", px: "100.00"}, "99", "ClOrdID"},
	}
	for _, tc := range cases {
		sendOrder(t, c, tc.o)
		m := expectER(t, c, map[int]string{11: tc.o.id, 150: "8", 39: "8"})
		if m.Get(103) != tc.reason || !strings.Contains(m.Get(58), tc.text) {
			t.Errorf("order %s: 103=%s 58=%q; want 103=%s and text with %q", tc.o.id, m.Get(103), m.Get(58), tc.reason, tc.text)
		}
	}
	// Duplicate ClOrdID; then Appendix D: the same order with PossResend=Y gets its status.
	sendOrder(t, c, order{id: "d1", side: "1", qty: "1", px: "95.00"})
	expectER(t, c, map[int]string{11: "d1", 150: "0"})
	sendOrder(t, c, order{id: "d1", side: "1", qty: "1", px: "95.00"})
	expectER(t, c, map[int]string{11: "d1", 150: "8", 103: "6"})
	c.NextOut-- // resend the last one as PossResend with its original sequence number? No: a new seq with 97=Y in the header.
	c.NextOut++
	// sendPossResend sends a buy of 1 at 95.00 as clOrdID with PossResend=Y
	// in its header, at the next sequence number.
	sendPossResend := func(clOrdID string) {
		t.Helper()
		now := fixclient.Timestamp(time.Now())
		msg := fixclient.Build(fixclient.F(35, "D"), fixclient.F(49, "CLIENT1"), fixclient.F(56, s.cfg.Venue.SenderCompID),
			fixclient.F(34, itoa(c.NextOut)), fixclient.F(97, "Y"), fixclient.F(52, now),
			fixclient.F(11, clOrdID), fixclient.F(55, "ACME"), fixclient.F(54, "1"), fixclient.F(60, now),
			fixclient.F(38, "1"), fixclient.F(40, "2"), fixclient.F(44, "95.00"))
		c.NextOut++
		if err := c.SendRaw(msg); err != nil {
			t.Fatal(err)
		}
	}
	sendPossResend("d1")
	expectER(t, c, map[int]string{11: "d1", 150: "I", 39: "0"})
	// Unknown ClOrdID with PossResend=Y is a new order.
	sendPossResend("d2")
	expectER(t, c, map[int]string{11: "d2", 150: "0"})
	// A cancel must carry a new ClOrdID: reusing the order's own is a
	// duplicate (CxlRejReason 6), and the order stays.
	if err := c.Send("F", fixclient.F(11, "d2"), fixclient.F(41, "d2"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(readWait, "9", map[int]string{11: "d2", 41: "d2", 102: "6", 434: "1", 39: "0"}); err != nil {
		t.Fatal(err)
	}
	// Cancel of an unknown order.
	if err := c.Send("F", fixclient.F(11, "x1"), fixclient.F(41, "never"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(readWait, "9", map[int]string{11: "x1", 102: "1", 434: "1"}); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestCancelOnDisconnectAcrossReconnect(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT3", true)
	sendOrder(t, c, order{id: "day1", side: "1", qty: "5", px: "99.00"})
	sendOrder(t, c, order{id: "gtc1", side: "1", qty: "5", px: "98.00", tif: "1"})
	expectER(t, c, map[int]string{11: "day1", 150: "0"})
	expectER(t, c, map[int]string{11: "gtc1", 150: "0"})
	c.Close() // drop without a Logout
	time.Sleep(200 * time.Millisecond)

	// Reconnect without resetting: the venue's cancel reached the store while we were away.
	r, _ := resume(t, s, "CLIENT3", c.NextOut)
	// The venue's next sequence number is above what we saw: we ask for the gap.
	if err := r.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	m, err := r.Expect(readWait, "8", map[int]string{11: "day1", 150: "4", 58: "cancelled on disconnect"})
	if err != nil {
		t.Fatal(err)
	}
	_ = m
	if err := r.Send("H", fixclient.F(11, "gtc1"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, r, map[int]string{11: "gtc1", 150: "I", 39: "0"})
}

// heldWrites keeps what is written to it, so that a test can send several
// messages in one write: the venue then reads them together.
type heldWrites struct {
	net.Conn
	buf []byte
}

func (h *heldWrites) Write(b []byte) (int, error) {
	h.buf = append(h.buf, b...)
	return len(b), nil
}

// TestOrderAfterLogoutIsNotTaken: an order read together with its session's
// Logout, behind it, is not taken, nor is one behind a Logon sent after the
// Logout: QuickFIX/Go hands them to the application after the session's
// logout (and its cancel-on-disconnect) was journaled; the order rested with
// nobody logged on, and the Logon left the session counted as logged on. The
// order is answered with a BusinessMessageReject that the client gets by
// resend.
func TestOrderAfterLogoutIsNotTaken(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	for _, relogon := range []bool{false, true} {
		c := logon(t, s, "CLIENT3", true)
		conn := c.Conn
		held := &heldWrites{Conn: conn}
		c.Conn = held
		if err := c.Send("5"); err != nil {
			t.Fatal(err)
		}
		if relogon {
			if err := c.Send("A", fixclient.F(98, "0"), fixclient.F(108, "30")); err != nil {
				t.Fatal(err)
			}
		}
		late := c.NextOut
		sendOrder(t, c, order{id: "late", side: "1", qty: "5", px: "99.00"})
		c.Conn = conn
		if err := c.SendRaw(held.buf); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Expect(readWait, "5", nil); err != nil {
			t.Fatalf("no Logout answering ours: %v", err)
		}
		if !c.Closed(readWait) {
			t.Fatal("connection not closed after the Logout")
		}
		// QuickFIX/Go hands over what it holds of the connection before it
		// takes the next one; a Logon of a new connection claimed before that
		// is over is not told apart (docs/ARCHITECTURE.md, "Known limits of
		// the session layer").
		time.Sleep(100 * time.Millisecond)
		if s.Gateway().ClientLoggedOn("CLIENT3") {
			t.Fatalf("relogon %v: the session counts as logged on with its connection closed", relogon)
		}

		// QuickFIX/Go hands the application what it had read when the
		// Logout was handled; what it had not read yet is not taken either,
		// and its number not consumed: the venue asks for it again.
		r, err := fixclient.Dial(s.FIXAddr(), "CLIENT3", s.cfg.Venue.SenderCompID)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		r.NextOut = c.NextOut
		if err := r.Send("A", fixclient.F(98, "0"), fixclient.F(108, "30")); err != nil {
			t.Fatal(err)
		}
		if m, err := r.ReadAny(readWait); err != nil || m.Type() != "A" {
			t.Fatalf("relogon %v: Logon answered with %v, %v", relogon, m, err)
		}
		// QuickFIX/Go asks for what it misses while it handles the Logon,
		// before it reads what follows: a TestRequest sent now is answered
		// on its own with nothing missing, or comes after that ask (and is
		// dropped with the ask outstanding). Waiting for one of the two
		// tells the cases apart on a machine of any speed (a wait for the
		// ask alone ran out on a busy one).
		if err := r.Send("1", fixclient.F(112, "fence")); err != nil {
			t.Fatal(err)
		}
		gapFrom := ""
		for answered := false; !answered; {
			m, err := r.ReadAny(readWait)
			switch {
			case err != nil:
				t.Fatalf("relogon %v: neither a ResendRequest nor the TestRequest's Heartbeat: %v", relogon, err)
			case m.Type() == "2":
				// From the order, or from the Logon before it when
				// neither was read.
				if n, err := strconv.Atoi(m.Get(7)); err != nil || n > late {
					t.Fatalf("relogon %v: ResendRequest %s after the order %d", relogon, m, late)
				}
				gapFrom, answered = m.Get(7), true
			case m.Type() == "0" && m.Get(112) == "fence":
				answered = true
			}
		}
		if gapFrom != "" {
			t.Logf("relogon %v: the order behind the Logout was not read before the disconnect (the venue asks from %s)", relogon, gapFrom)
			// The fill covers the order, the Logon and the dropped TestRequest.
			now := fixclient.Timestamp(time.Now())
			if err := r.SendRaw(fixclient.Build(fixclient.F(35, "4"), fixclient.F(49, "CLIENT3"), fixclient.F(56, s.cfg.Venue.SenderCompID),
				fixclient.F(34, gapFrom), fixclient.F(43, "Y"), fixclient.F(52, now), fixclient.F(122, now),
				fixclient.F(123, "Y"), fixclient.F(36, itoa(r.NextOut)))); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := r.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
				t.Fatal(err)
			}
			want := map[int]string{45: itoa(late), 372: "D", 379: "late", 380: "4", 58: gateway.LoggedOutText}
			if _, err := r.Expect(readWait, "j", want); err != nil {
				t.Fatalf("relogon %v: the order behind the Logout not refused: %v (received: %v)", relogon, err, r.Received)
			}
		}
		if err := r.Send("H", fixclient.F(11, "late"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
			t.Fatal(err)
		}
		if m := expectER(t, r, map[int]string{11: "late", 150: "I"}); m.Get(39) == "0" {
			t.Fatalf("relogon %v: the order behind the Logout rests with its session logged out: %s", relogon, m)
		}
		r.Logout()
	}
}

func TestThrottles(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "SLOW", true)
	for i := 0; i < 5; i++ {
		sendOrder(t, c, order{id: "t" + fmtInt(i), side: "1", qty: "1", px: "90.00"})
	}
	for i := 0; i < 3; i++ {
		expectER(t, c, map[int]string{11: "t" + fmtInt(i), 150: "0"})
	}
	for i := 3; i < 5; i++ {
		m := expectER(t, c, map[int]string{11: "t" + fmtInt(i), 150: "8"})
		if !strings.Contains(m.Get(58), "throttled") {
			t.Fatalf("order over the limit: %s", m)
		}
	}
	// Past the message limit (8/s) the session is logged out, then cancel-on-disconnect applies.
	for i := 0; i < 6; i++ {
		if err := c.Send("H", fixclient.F(11, "t0"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
			break
		}
	}
	if _, err := c.Expect(readWait, "5", nil); err != nil {
		t.Fatalf("no Logout after the message rate limit: %v", err)
	}
	if !c.Closed(3 * time.Second) {
		t.Fatal("connection still open after a throttle logout")
	}
}

// TestAnswersWaitForDurability blocks the journal's fdatasync and checks that
// no ExecutionReport leaves the process until it returns.
func TestAnswersWaitForDurability(t *testing.T) {
	t.Parallel()
	var block atomic.Bool
	release := make(chan struct{})
	syncs := atomic.Int64{}
	sync := func(f *os.File, kind journal.SyncKind) error {
		if kind == journal.SyncData && block.Load() {
			syncs.Add(1)
			<-release
		}
		return journal.DefaultSync(f, kind)
	}
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{JournalSync: sync})
	c := logon(t, s, "CLIENT1", true)
	block.Store(true)
	sendOrder(t, c, order{id: "g1", side: "1", qty: "1", px: "99.00"})
	if m, err := c.Read(700 * time.Millisecond); err == nil {
		t.Fatalf("answer left before its command was durable: %s", m)
	}
	if syncs.Load() == 0 {
		t.Fatal("the journal never tried to sync the order")
	}
	block.Store(false)
	close(release)
	expectER(t, c, map[int]string{11: "g1", 150: "0"})
}

// TestFsyncFailureIsFailStop makes the journal's fdatasync fail: the order
// whose batch failed is never acknowledged, every logged-on session is told
// the venue halted (an unsolicited TradingSessionStatus), every later order
// is refused with a clear reason while the session stays up, and operators
// see the cause: /readyz, the admin status, fixvenue_halted. Clients are told
// which part failed, never the cause.
func TestFsyncFailureIsFailStop(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	sync := failingSync(&fail)
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()), Options{JournalSync: sync})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "ok1", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "ok1", 150: "0"})
	if m := scrape(t, s); metricstest.Value(t, m, "fixvenue_halted") != "0" {
		t.Fatalf("fixvenue_halted before any failure:\n%s", m)
	}
	fail.Store(true)
	sendOrder(t, c, order{id: "lost1", side: "1", qty: "1", px: "99.00"})
	deadline := time.Now().Add(5 * time.Second)
	for s.Pipeline().Err() == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if s.Pipeline().Err() == nil {
		t.Fatal("a failed fdatasync did not stop the pipeline")
	}
	h, err := c.Expect(readWait, "h", map[int]string{336: "ALL", 340: "1", 325: "Y"})
	if err != nil {
		t.Fatalf("no unsolicited TradingSessionStatus of the halt: %v (received %v)", err, c.Received)
	}
	if text := h.Get(58); !strings.HasPrefix(text, "venue halted: journal failure;") || strings.Contains(text, "input/output") {
		t.Fatalf("halt status Text %q: want the failed part and no cause", text)
	}
	// Every later order is refused. The first command's answer never comes,
	// and the refusals do not wait for it (AnswerOrderWait each would take
	// 30 s for these 30).
	const after = 30
	for i := range after {
		sendOrder(t, c, order{id: fmt.Sprintf("after%d", i), side: "1", qty: "1", px: "99.00"})
	}
	answered := time.Now().Add(15 * time.Second)
	for i := range after {
		m, err := c.Expect(time.Until(answered), "8", map[int]string{11: fmt.Sprintf("after%d", i), 150: "8"})
		if err != nil {
			t.Fatalf("order %d of %d after the failure: %v", i+1, after, err)
		}
		if got := m.Get(58); got != "venue halted: journal failure" {
			t.Fatalf("order after the failure: Text %q, want \"venue halted: journal failure\"", got)
		}
	}
	for _, got := range c.Received {
		if got.Get(11) == "lost1" {
			t.Fatalf("the order whose fsync failed was answered: %s", got)
		}
	}
	// Operators see the cause.
	var ready struct{ Error, Code string }
	if code := adminCall(t, s, "GET", "/readyz", "", "", &ready); code != 503 || ready.Code != "halted" || !strings.Contains(ready.Error, "input/output error") {
		t.Fatalf("/readyz of a halted venue: %d %+v", code, ready)
	}
	var st ops.StatusInfo
	if code := adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st); code != 200 || st.Ready || !strings.Contains(st.Halted, "journal") || !strings.Contains(st.Halted, "input/output error") {
		t.Fatalf("/v1/status of a halted venue: %d %+v", code, st)
	}
	if m := scrape(t, s); metricstest.Value(t, m, "fixvenue_halted") != "1" {
		t.Fatalf("fixvenue_halted after the failure:\n%s", m)
	}
	// An operator's action is refused at once: nothing can be journaled.
	var refused struct{ Error, Code string }
	if code := adminCall(t, s, "POST", "/v1/instruments/ACME/halt", aliceToken, `{"reason":"after the failure"}`, &refused); code != 503 || refused.Code != "halted" {
		t.Fatalf("operator action on a halted venue: %d %+v", code, refused)
	}
}

// TestSessionStoreFailureHalts: when a session's FIX store cannot grow (its
// block reservation fails as on a full disk), the report it could not store
// would be lost to its client without a trace, not even a sequence gap. The
// venue halts instead: that session is disconnected, the others are told
// the part that failed, and operators see the cause.
func TestSessionStoreFailureHalts(t *testing.T) {
	t.Parallel()
	var full atomic.Bool
	allocate := func(f *os.File, size int64) error {
		if full.Load() {
			return syscall.ENOSPC
		}
		return fixstore.Fallocate(f, size)
	}
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()), Options{StoreAllocate: allocate})
	a := logon(t, s, "CLIENT1", true)
	b := logon(t, s, "CLIENT2", true)
	full.Store(true)
	// CLIENT1's reports fill its store's first reservation (1 MiB, about
	// 6,000 reports); the next one cannot be stored.
	const batch, ordersMax = 250, 20000
	sent, answered := 0, true
	var readErr error
	for sent < ordersMax && answered && s.Pipeline().Err() == nil {
		for i := 0; i < batch && answered; i++ {
			readErr = a.Send("D", fixclient.F(11, fmt.Sprintf("f%d", sent)), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
				fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"),
				fixclient.F(44, "99.00"), fixclient.F(59, "0"))
			answered = readErr == nil // the venue may have dropped the connection
			sent++
		}
		for i := 0; i < batch && answered && s.Pipeline().Err() == nil; i++ {
			m, err := a.Read(readWait)
			if err == nil && m.Type() == "5" {
				err = fmt.Errorf("logged out: %s", m)
			}
			answered, readErr = err == nil, err // a missing answer, or the connection closed
		}
	}
	// The store halts the venue on a goroutine of its own: wait for it.
	deadline := time.Now().Add(readWait)
	for s.Pipeline().Err() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	err := s.Pipeline().Err()
	if !errors.Is(err, fixstore.ErrFailed) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("after %d orders the venue's state is %v (last read: %v): want a halt on CLIENT1's store", sent, err, readErr)
	}
	if !a.Closed(readWait) {
		t.Fatal("the session whose report could not be stored was not disconnected")
	}
	h, herr := b.Expect(readWait, "h", map[int]string{336: "ALL", 340: "1", 325: "Y"})
	if herr != nil || !strings.HasPrefix(h.Get(58), "venue halted: FIX session store failure;") {
		t.Fatalf("CLIENT2 was not told of the halt: %v %v", h, herr)
	}
	sendOrder(t, b, order{id: "b1", side: "1", qty: "1", px: "99.00"})
	if m := expectER(t, b, map[int]string{11: "b1", 150: "8"}); m.Get(58) != "venue halted: FIX session store failure" {
		t.Fatalf("order after the halt: %s", m)
	}
	var ready struct{ Error, Code string }
	if code := adminCall(t, s, "GET", "/readyz", "", "", &ready); code != 503 || ready.Code != "halted" || !strings.Contains(ready.Error, "CLIENT1.fixstore") {
		t.Fatalf("/readyz after a store failure: %d %+v", code, ready)
	}
}

// TestLogonAfterAHaltIsTold: a session that logs on once the venue has
// halted (a client that reconnects, one whose store failed) is told so at
// its logon, as the sessions logged on at the halt were, not only when it
// sends an order: one that only waits for its resting orders to trade
// would never learn that none will.
func TestLogonAfterAHaltIsTold(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{JournalSync: failingSync(&fail)})
	a := logon(t, s, "CLIENT1", true)
	fail.Store(true)
	sendOrder(t, a, order{id: "lost1", side: "1", qty: "1", px: "99.00"})
	if _, err := a.Expect(readWait, "h", map[int]string{336: "ALL", 340: "1"}); err != nil {
		t.Fatalf("no halt: %v", err)
	}
	b := logon(t, s, "CLIENT2", true)
	h, err := b.Expect(readWait, "h", map[int]string{336: "ALL", 340: "1", 325: "Y"})
	if err != nil || !strings.HasPrefix(h.Get(58), "venue halted: journal failure;") {
		t.Fatalf("a session logged on after the halt is not told of it: %v %v", h, err)
	}
}

// journal.fix_store_sync paces the FIX stores' fdatasyncs: with a short
// interval the store written by a logon and an order is synced soon after;
// with an hour, not at all while the venue runs.
func TestFIXStoreSyncInterval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		every time.Duration
		want  bool
	}{{20 * time.Millisecond, true}, {time.Hour, false}} {
		// One venue at a time: QuickFIX/Go's sessions are process-wide.
		t.Run(tc.every.String(), func(t *testing.T) {
			cfg := testConfig(t, t.TempDir(), "")
			cfg.Journal.FIXStoreSync.Duration = tc.every
			s := startServer(t, cfg, Options{})
			c := logon(t, s, "CLIENT1", true)
			sendOrder(t, c, order{id: "sync1", side: "1", qty: "5", px: "99.00"})
			expectER(t, c, map[int]string{11: "sync1", 150: "0"})
			// A sync that comes is waited for as long as a loaded machine
			// may delay the timer, the fdatasync and the scrape; one that
			// must not come is looked for over a second, fifty of the short
			// intervals.
			within := time.Second
			if tc.want {
				within = readWait
			}
			synced := false
			for deadline := time.Now().Add(within); time.Now().Before(deadline) && !synced; time.Sleep(20 * time.Millisecond) {
				synced = metricstest.Value(t, scrape(t, s), "fixvenue_fix_store_fsyncs_total") != "0"
			}
			if synced != tc.want {
				t.Fatalf("store synced within %v = %v, want %v", within, synced, tc.want)
			}
		})
	}
}

// TestHaltReason: clients are told the part that failed, from the error's
// chain, and never its text.
func TestHaltReason(t *testing.T) {
	eio := errors.New("input/output error")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: flush: %w", pipeline.ErrJournal, eio), "journal failure"},
		{fmt.Errorf("%w: flush: %w", pipeline.ErrJournal, cluster.ErrLostLeadership), "this node lost the cluster's leadership"},
		{fmt.Errorf("%w: panicked on command seq 7: boom", pipeline.ErrMatcher), "matcher failure"},
		{fmt.Errorf("%w: reserve 2097152 bytes for a.fixstore: %w", fixstore.ErrFailed, eio), "FIX session store failure"},
		{eio, "internal failure"},
	} {
		if got := haltReason(tc.err); got != tc.want {
			t.Errorf("haltReason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
