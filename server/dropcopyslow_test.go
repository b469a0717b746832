package server

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/gateway/edge"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/metricstest"
)

// tradePairs has CLIENT2 rest a buy and CLIENT1 sell into it, pairs times:
// four ExecutionReports a pair (two accepts, two fills), each copied to
// DCALL. Both clients read their answers as they go.
func tradePairs(t *testing.T, s *Server, pairs int) {
	t.Helper()
	tradeMore(t, logon(t, s, "CLIENT1", true), logon(t, s, "CLIENT2", true), 0, pairs)
}

// tradeMore is tradePairs for clients c1 and c2 already logged on, from
// pair `from`. A rejected order fails the test with the reject's text:
// the default throttle (session_defaults orders_per_second_reject, 5,000)
// refuses a client's orders beyond it in a second, so more pairs than that
// at once are refused, with one answer each where a pair has two.
func tradeMore(t *testing.T, c1, c2 *fixclient.Client, from, pairs int) {
	t.Helper()
	const burst = 100
	for done := from; done < from+pairs; done += burst {
		n := min(burst, from+pairs-done)
		for i := done; i < done+n; i++ {
			sendOrder(t, c2, order{id: "b" + strconv.Itoa(i), side: "1", qty: "1", px: "100.00"})
			sendOrder(t, c1, order{id: "s" + strconv.Itoa(i), side: "2", qty: "1", px: "100.00"})
		}
		for _, c := range []*fixclient.Client{c1, c2} {
			for got := 0; got < 2*n; {
				m, err := c.ReadAny(readWait)
				if err != nil {
					t.Fatalf("%s: %d of %d answers: %v", c.Sender, got, 2*n, err)
				}
				if m.Type() == "8" {
					if m.Get(39) == "8" {
						t.Fatalf("%s: order %s rejected: %s", c.Sender, m.Get(11), m.Get(58))
					}
					got++
				}
			}
			c.Received = c.Received[:0]
		}
	}
}

// slowReader is a drop-copy client that reads slower than the venue
// writes: a small socket receive buffer, and a pause every few messages,
// as a client that validates, stores and logs each message does.
//
// Its segments are an Ethernet network's (TCP_MAXSEG 1460), not
// loopback's of 64 KiB: a receive window smaller than one segment stalls
// the sender for its persist timer, which backs off to seconds while the
// reader is slow (a loaded machine, the race detector). The venue's
// writer then could not hand the socket 64 KiB in a minute while the
// client still read a message every few seconds, and closed the
// connection for its write timeout in most race runs.
func slowReader(t *testing.T, s *Server, comp string, nextOut int) *fixclient.Client {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
			_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 1460)
		})
	}}
	nc, err := d.Dial("tcp", s.FIXAddr())
	if err != nil {
		t.Fatal(err)
	}
	c := fixclient.New(nc, comp, s.cfg.Venue.SenderCompID)
	c.NextOut = nextOut
	t.Cleanup(func() { c.Close() })
	if err := c.Send("A", fixclient.F(98, "0"), fixclient.F(108, "30")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(readWait, "A", nil); err != nil {
		t.Fatalf("%s logon: %v", comp, err)
	}
	return c
}

// readSlowly reads until until says stop, pausing a millisecond every
// `every` messages, and returns the ExecutionReports read; a lost
// connection fails the test.
func readSlowly(t *testing.T, c *fixclient.Client, what string, every int, until func(m *fixclient.Message) bool) int {
	t.Helper()
	ers := 0
	lastSent := time.Now()
	for n := 1; ; n++ {
		if time.Since(lastSent) > 10*time.Second {
			// A client sends a Heartbeat when it has sent nothing for a
			// while (HeartBtInt 30 s): a long read (under the race
			// detector, on a loaded machine) would be taken for a dead
			// peer, as the venue's TestRequest waits behind the copies.
			if err := c.Send("0"); err != nil {
				t.Fatalf("%s: heartbeat: %v", what, err)
			}
			lastSent = time.Now()
		}
		m, err := c.ReadAny(readWait)
		if err != nil {
			t.Fatalf("%s: the connection ended after %d copies: %v", what, ers, err)
		}
		if m.Type() == "8" {
			ers++
		}
		if m.Type() == "1" {
			// Answered as any client does: a slow read (the race
			// detector's) can outlast the session's heartbeat interval.
			if err := c.Send("0", fixclient.F(112, m.Get(112))); err != nil {
				t.Fatalf("%s: heartbeat: %v", what, err)
			}
			lastSent = time.Now()
		}
		if until(m) {
			return ers
		}
		if n%every == 0 {
			c.Received = c.Received[:0]
			time.Sleep(time.Millisecond)
		}
	}
}

// TestDropCopyRecoversAtItsReadersPace: a drop-copy session away while
// the venue traded gets the copies it missed by ResendRequest, reading
// slower than the venue writes. The resend used to overrun the
// connection's outbound buffer (fix.outbound_queue_max writes, 4 MiB),
// which the edge closes: QuickFIX/Go writes a resend as fast as it reads
// its store. Then it asks for the period with a TradeCaptureReportRequest
// (AD), whose replay overran the buffer too. The session was disconnected
// mid-recovery, and again each time it asked. Both now go at the reader's
// pace.
func TestDropCopyRecoversAtItsReadersPace(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), dropCopySessions)
	cfg.FIX.OutboundQueueMax = 1024 // the least: the edge's bound is reached sooner
	// The outbound bounds are tested, not the write timeout: under the race
	// detector on a loaded machine the reader can take less than 64 KiB in
	// the default 5 s, which the edge rightly takes for a client that
	// stopped reading (write_timeout).
	cfg.FIX.WriteTimeout.Duration = time.Minute
	s := startServer(t, cfg, Options{})
	from := time.Now().Add(-time.Second)
	const pairs = 4000
	tradePairs(t, s, pairs)

	// DCALL was never logged on: every copy waits in its store.
	dc := slowReader(t, s, "DCALL", 1)
	if err := dc.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	if err := dc.Send("1", fixclient.F(112, "resent")); err != nil {
		t.Fatal(err)
	}
	// QuickFIX/Go answers the TestRequest once the resend is written; the
	// copies its sender had not stored yet when the resend began come
	// after it. The copies are counted by MsgSeqNum (noteCopy).
	answered, copies := false, map[string]bool{}
	readSlowly(t, dc, "resend", 10, func(m *fixclient.Message) bool {
		answered = answered || (m.Type() == "0" && m.Get(112) == "resent")
		if m.Type() == "8" {
			noteCopy(t, copies, m)
		}
		return answered && len(copies) >= 4*pairs
	})

	// Then the period, from the journal: the replay waited for room in
	// the session's queue, not in the connection's buffer, which the
	// sender fills as fast as QuickFIX/Go writes to it.
	waitDurableAll(t, s)
	if err := dc.Send("AD", fixclient.F(568, "R1"), fixclient.F(569, "0"), fixclient.F(580, "1"),
		fixclient.F(75, from.UTC().Format("20060102")), fixclient.F(60, fixclient.Timestamp(from))); err != nil {
		t.Fatal(err)
	}
	var done *fixclient.Message
	replayed := readSlowly(t, dc, "replay", 5, func(m *fixclient.Message) bool {
		if m.Type() == "AQ" && m.Get(750) != "0" {
			done = m
		}
		return done != nil
	})
	if done.Get(750) != "1" || done.Get(748) != strconv.Itoa(4*pairs) || replayed != 4*pairs {
		t.Fatalf("replay: %d copies, then %s; want %d and AQ Completed", replayed, done, 4*pairs)
	}
}

// TestDropCopyResendHoldsNoOtherSession: a drop-copy session whose client
// stops reading during its resend is disconnected once its queue
// overflows, and the order sessions' answers go on meanwhile. The paced
// resend used to wait for the connection to be gone, which the edge's
// close makes it only after flushing what the client had not read, for up
// to fix.write_timeout: QuickFIX/Go holds the session's send lock for the
// resend, the drop-copy session's sender waited for it, and outbound
// waited for room in that sender's queue, with every session's answers.
// No copy is lost: the client gets them all by its next resend.
func TestDropCopyResendHoldsNoOtherSession(t *testing.T) {
	// The message the paced resend held when the queue overflowed goes out,
	// and the socket may take more before the overflow: TCP's buffers grow
	// a little after the client stopped reading (89 more were seen, 35 ms
	// after the resend first waited). Without the stop at the overflow,
	// the rest of the store went out: thousands.
	const resentAfterOverflowMax = 256
	cfg := testConfig(t, t.TempDir(), dropCopySessions)
	cfg.FIX.OutboundQueueMax = 1024
	// Longer than the clients wait for an answer: the edge's close of a
	// connection whose client does not read ends with this timeout.
	cfg.FIX.WriteTimeout.Duration = 4 * readWait
	// The throttle is not what is tested: the pairs go at once.
	cfg.SessionDefaults.OrdersPerSecondReject = 0
	s := startServer(t, cfg, Options{})
	c1 := logon(t, s, "CLIENT1", true)
	c2 := logon(t, s, "CLIENT2", true)
	// Copies that the socket's buffers (slowReader's: about 700 copies)
	// and the connection's bounds cannot all take, so that the resend
	// waits for the client; then enough for them to overflow its queue
	// (fix.outbound_queue_max).
	const before, during = 2000, 1000
	tradeMore(t, c1, c2, 0, before)

	dc := slowReader(t, s, "DCALL", 1)
	if err := dc.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	dcID := sessionID(s.cfg, &s.cfg.Sessions[slices.IndexFunc(s.cfg.Sessions, func(sc config.Session) bool { return sc.CompID == "DCALL" })])
	waitUntil(t, "DCALL's resend waiting for its client", func() bool { return edgePacer{s.edge}.Backlogged(dcID) })
	// Counted once waiting: the count no longer moves (for 250 ms), or the
	// queue overflowed (the copies of the pairs before may do it).
	paused := -1.0
	for steady, deadline := 0, time.Now().Add(readWait); steady < 5 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		m := scrape(t, s)
		if metricstest.Float(t, m, "fixvenue_outbound_overflow_disconnects_total") > 0 {
			break
		}
		if now := metricstest.Float(t, m, "fixvenue_resent_messages_total"); now != paused {
			paused, steady = now, 0
		} else {
			steady++
		}
	}
	if paused < 0 {
		t.Fatal("DCALL's queue overflowed before its resend's count was read")
	}
	// DCALL reads nothing: its resend waits for it, and the copies of these
	// pairs fill its queue.
	tradeMore(t, c1, c2, before, during)
	if !dc.Closed(2 * readWait) {
		t.Fatal("DCALL: its connection was not closed")
	}
	// The client sees its socket closed before QuickFIX/Go has let the
	// session go; a Logon before then is refused.
	waitReleased(t, s, "DCALL")

	nc, err := net.Dial("tcp", s.FIXAddr())
	if err != nil {
		t.Fatal(err)
	}
	again := fixclient.New(nc, "DCALL", s.cfg.Venue.SenderCompID)
	t.Cleanup(func() { again.Close() })
	again.NextOut = dc.NextOut
	if err := again.Send("A", fixclient.F(98, "0"), fixclient.F(108, "30")); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Expect(readWait, "A", nil); err != nil {
		t.Fatalf("DCALL logon: %v", err)
	}
	// The first resend has ended: QuickFIX/Go's session goroutine ran it
	// before it took this logon. It stopped at the overflow, where it used
	// to go on through the store, written to the connection that was going,
	// while every session's answers waited behind it.
	if ended := metricstest.Float(t, scrape(t, s), "fixvenue_resent_messages_total"); ended-paused > resentAfterOverflowMax {
		t.Fatalf("the first resend sent %.0f more after its connection overflowed (%.0f before), want at most %d",
			ended-paused, paused, resentAfterOverflowMax)
	}
	if err := again.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	if err := again.Send("1", fixclient.F(112, "resent")); err != nil {
		t.Fatal(err)
	}
	answered, copies := false, map[string]bool{}
	readSlowly(t, again, "resend", 1000, func(m *fixclient.Message) bool {
		answered = answered || (m.Type() == "0" && m.Get(112) == "resent")
		if m.Type() == "8" && m.Get(797) == "Y" {
			noteCopy(t, copies, m)
		}
		return answered && len(copies) >= 4*(before+during)
	})
}

// noteCopy records copy m by its MsgSeqNum: a copy sent between a Logon
// and the client's ResendRequest comes twice, the second time resent
// (PossDupFlag), and counts once. A copy twice otherwise fails the test.
func noteCopy(t *testing.T, copies map[string]bool, m *fixclient.Message) {
	t.Helper()
	seq := m.Get(34)
	if copies[seq] && m.Get(43) != "Y" {
		t.Fatalf("copy %s came twice, the second time not as a resend: %s", seq, m)
	}
	copies[seq] = true
}

// TestOrderSessionResendStopsWithItsConnection: an order session's resend
// to a client that reads nothing waits for it until the edge closes the
// connection (fix.write_timeout); the resend stops there. It used to go on
// through the whole store, written to the closed connection, while
// QuickFIX/Go held the session's send lock. Nothing is lost: the next
// resend brings every report.
func TestOrderSessionResendStopsWithItsConnection(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), "")
	cfg.FIX.OutboundQueueMax = 1024
	cfg.SessionDefaults.OrdersPerSecondReject = 0
	s := startServer(t, cfg, Options{})
	c1 := logon(t, s, "CLIENT1", true)
	c2 := logon(t, s, "CLIENT2", true)
	// Far more reports than the connection's bounds (1,024 writes) and
	// the socket's buffers hold.
	const pairs = 3000
	tradeMore(t, c1, c2, 0, pairs)
	c1.Close()
	waitReleased(t, s, "CLIENT1")

	stalled := slowReader(t, s, "CLIENT1", c1.NextOut)
	before := metricstest.Float(t, scrape(t, s), "fixvenue_resent_messages_total")
	if err := stalled.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	// The edge lets the session go once QuickFIX/Go, its resend done, has
	// seen the connection closed.
	key := edge.SessionKey{BeginString: "FIX.4.4", ClientCompID: "CLIENT1", VenueCompID: s.cfg.Venue.SenderCompID}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, held := s.edge.Session(key); !held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the edge still holds CLIENT1's stalled connection after a minute")
		}
	}
	if resent := metricstest.Float(t, scrape(t, s), "fixvenue_resent_messages_total") - before; resent >= 2*pairs {
		t.Fatalf("the resend to the closed connection sent %.0f reports, the whole store (%d)", resent, 2*pairs)
	} else {
		t.Logf("the resend stopped with its connection after %.0f of %d reports", resent, 2*pairs)
	}

	again, _ := resume(t, s, "CLIENT1", stalled.NextOut)
	if err := again.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	for got := 0; got < 2*pairs; {
		m, err := again.ReadAny(readWait)
		if err != nil {
			t.Fatalf("the next resend: %d of %d reports: %v", got, 2*pairs, err)
		}
		if m.Type() == "8" && m.Get(43) == "Y" {
			got++
		}
		again.Received = again.Received[:0]
	}
}

// resumeStalled logs CLIENT1 on again after its trades with a connection
// that reads slowly (slowReader) and asks for everything it was sent: the
// venue's resend goes at the reader's pace.
func resumeStalled(t *testing.T, s *Server, c1 *fixclient.Client) *fixclient.Client {
	t.Helper()
	c1.Close()
	waitReleased(t, s, "CLIENT1")
	c := slowReader(t, s, "CLIENT1", c1.NextOut)
	if err := c.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOrderSessionResendAtItsReadersPace: an order session back after a
// day's trading asks for what it missed and reads slower than the venue
// writes. The resend, written at once, overran the connection's outbound
// bounds, which closed it mid-resend, every time it asked; it now goes at
// the reader's pace, as a drop-copy session's does.
func TestOrderSessionResendAtItsReadersPace(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), "")
	cfg.FIX.OutboundQueueMax = 1024
	cfg.FIX.WriteTimeout.Duration = time.Minute // as in TestDropCopyRecoversAtItsReadersPace
	cfg.SessionDefaults.OrdersPerSecondReject = 0
	s := startServer(t, cfg, Options{})
	c1, c2 := logon(t, s, "CLIENT1", true), logon(t, s, "CLIENT2", true)
	const pairs = 2000
	tradeMore(t, c1, c2, 0, pairs)
	slow := resumeStalled(t, s, c1)
	if n := readSlowly(t, slow, "resend", 10, func(m *fixclient.Message) bool {
		return m.Type() == "8" && m.Get(43) == "Y" && m.Get(11) == "s"+strconv.Itoa(pairs-1) && m.Get(39) == "2"
	}); n != 2*pairs {
		t.Fatalf("resent %d reports, want %d", n, 2*pairs)
	}
}

// TestOrderSessionResendHoldsNoOtherSession: while an order session's
// resend waits for its client, the fills of its resting orders wait in its
// queue, and the other sessions' answers go on. Outbound hands an order
// session its answers itself, and QuickFIX/Go holds the session's send
// lock for the whole resend: outbound waited there with every session's
// answers. No fill is lost: the client's next resend brings them.
func TestOrderSessionResendHoldsNoOtherSession(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), "")
	cfg.FIX.OutboundQueueMax = 1024
	// Longer than CLIENT2 waits for an answer: the edge closes the stalled
	// connection with it.
	cfg.FIX.WriteTimeout.Duration = 4 * readWait
	cfg.SessionDefaults.OrdersPerSecondReject = 0
	stay := false
	cfg.SessionDefaults.CancelOnDisconnect = &stay // CLIENT1's sells rest while it is away
	s := startServer(t, cfg, Options{})
	c1, c2 := logon(t, s, "CLIENT1", true), logon(t, s, "CLIENT2", true)
	// More reports than the socket's buffers and the connection's bounds
	// take, so that the resend waits for the client.
	const pairs, resting = 2000, 20
	tradeMore(t, c1, c2, 0, pairs)
	for i := range resting {
		sendOrder(t, c1, order{id: "r" + strconv.Itoa(i), side: "2", qty: "1", px: "105.00"})
		if _, err := c1.Expect(readWait, "8", map[int]string{11: "r" + strconv.Itoa(i), 39: "0"}); err != nil {
			t.Fatal(err)
		}
	}
	stalled := resumeStalled(t, s, c1)
	id := sessionID(s.cfg, &s.cfg.Sessions[slices.IndexFunc(s.cfg.Sessions, func(sc config.Session) bool { return sc.CompID == "CLIENT1" })])
	waitUntil(t, "CLIENT1's resend waiting for its client", func() bool { return edgePacer{s.edge}.Backlogged(id) })

	for i := range resting {
		sendOrder(t, c2, order{id: "t" + strconv.Itoa(i), side: "1", qty: "1", px: "105.00"})
	}
	for got := 0; got < 2*resting; {
		m, err := c2.ReadAny(readWait)
		if err != nil {
			t.Fatalf("CLIENT2: %d of %d answers while CLIENT1's resend waits: %v", got, 2*resting, err)
		}
		if m.Type() == "8" {
			got++
		}
	}

	stalled.Close()
	again, _ := resume(t, s, "CLIENT1", stalled.NextOut)
	if err := again.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	for fills, read := 0, 0; fills < resting; read++ {
		m, err := again.ReadAny(readWait)
		if err != nil {
			t.Fatalf("CLIENT1's next resend: %d of %d fills of its resting sells, %d messages read: %v", fills, resting, read, err)
		}
		if m.Type() == "8" && strings.HasPrefix(m.Get(11), "r") && m.Get(39) == "2" {
			fills++
		}
		again.Received = again.Received[:0]
	}
}

// TestDropCopyReplayEndsWithTheVenue: the venue stops while a period's
// replay (AD) waits for its client. The replay ends with an AQ Rejected
// that says how many reports were sent and where to ask again, queued
// before the stop lets the session's sender go, so the client finds it in
// its store once the venue is back. The replay went on after the stop, its
// last copies and its final AQ neither sent nor stored: the client had an
// Accepted with no end.
func TestDropCopyReplayEndsWithTheVenue(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), dropCopySessions)
	cfg.FIX.OutboundQueueMax = 1024
	cfg.SessionDefaults.OrdersPerSecondReject = 0
	s := startServer(t, cfg, Options{})
	from := time.Now().Add(-time.Second)
	const pairs = 1000
	tradePairs(t, s, pairs)
	waitDurableAll(t, s)

	dc := slowReader(t, s, "DCALL", 1)
	if err := dc.Send("AD", fixclient.F(568, "R1"), fixclient.F(569, "0"), fixclient.F(580, "1"),
		fixclient.F(75, from.UTC().Format("20060102")), fixclient.F(60, fixclient.Timestamp(from))); err != nil {
		t.Fatal(err)
	}
	// DCALL reads nothing more: the replay waits for it.
	id := sessionID(s.cfg, &s.cfg.Sessions[slices.IndexFunc(s.cfg.Sessions, func(sc config.Session) bool { return sc.CompID == "DCALL" })])
	waitUntil(t, "the replay waiting for DCALL", func() bool { return edgePacer{s.edge}.Backlogged(id) })
	s.Close()
	dc.Close()

	s2 := startServer(t, cfg, Options{})
	again, _ := resume(t, s2, "DCALL", dc.NextOut)
	if err := again.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	accepted, replayed := false, 0
	for {
		m, err := again.ReadAny(readWait)
		if err != nil {
			t.Fatalf("the resend after the restart: %d replayed copies and no last AQ: %v", replayed, err)
		}
		again.Received = again.Received[:0]
		switch {
		case m.Type() == "AQ" && m.Get(750) == "0":
			accepted = true
		case m.Type() == "8" && accepted:
			replayed++
		case m.Type() == "AQ":
			if !accepted || m.Get(750) != "2" || m.Get(749) != "99" || m.Get(748) != strconv.Itoa(replayed) ||
				!strings.Contains(m.Get(58), "ask again from TransactTime") {
				t.Fatalf("the replay's last AQ after %d copies (Accepted seen: %v): %s", replayed, accepted, m)
			}
			if replayed == 0 || replayed >= 4*pairs {
				t.Fatalf("%d of %d copies replayed before the stop: the replay was not stopped midway", replayed, 4*pairs)
			}
			return
		}
	}
}
