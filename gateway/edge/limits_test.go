package edge

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// dialFrom connects to addr from a chosen loopback address (the whole of
// 127.0.0.0/8 is local on Linux), so tests can act as several clients.
func dialFrom(t testing.TB, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", from, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// expectRefusedAtAccept connects to v from address from and asserts the
// connection is reset or closed without a byte (the edge resets refused
// connections, which may already fail the dial), and that this is the
// first refusal v counted for reason.
func expectRefusedAtAccept(t testing.TB, v *venue, from string, reason Reason) {
	t.Helper()
	expectClosedAtAccept(t, from, v.addr())
	if got := v.l.Stats().Count(reason); got != 1 {
		t.Fatalf("%v refusals %d, want 1", reason, got)
	}
}

func expectClosedAtAccept(t testing.TB, from, addr string) {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("dial: %v", err)
		}
		return
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	n, err := conn.Read(b[:])
	if err == nil || n != 0 || isTimeout(err) {
		t.Fatalf("connection not refused: n=%d err=%v", n, err)
	}
}

// waitStat waits until get() reaches want.
func waitStat(t testing.TB, name string, get func() int64, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for get() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s = %d, want %d", name, get(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestConnectionLimits(t *testing.T) {
	t.Parallel()
	v := startVenueWith(t, Config{
		ConnectionsMax:          3,
		ConnectionsPerSourceMax: 2,
		SourcesMax:              2,
	}, noDictionary, "CLIENT1")
	stats := v.l.Stats()
	open := func() int64 { return stats.ConnectionsOpen.Load() }

	a1 := dialFrom(t, "127.0.0.1", v.addr())
	dialFrom(t, "127.0.0.1", v.addr())
	waitStat(t, "open connections", open, 2)
	expectRefusedAtAccept(t, v, "127.0.0.1", ReasonConnectionsPerSourceMax)
	// Another address still gets in, up to the total.
	b1 := dialFrom(t, "127.0.0.2", v.addr())
	waitStat(t, "open connections", open, 3)
	expectRefusedAtAccept(t, v, "127.0.0.2", ReasonConnectionsMax)
	// A third address: the source table is full while both are in use.
	_ = b1.Close()
	waitStat(t, "open connections", open, 2)
	b1 = dialFrom(t, "127.0.0.2", v.addr())
	waitStat(t, "open connections", open, 3)
	_ = a1.Close()
	waitStat(t, "open connections", open, 2)
	expectRefusedAtAccept(t, v, "127.0.0.3", ReasonSourcesTableFull)
	// A client that logs on is counted like any other connection and works.
	_ = b1.Close()
	waitStat(t, "open connections", open, 1)
	c := v.logon("CLIENT1")
	c.trade("limits-1")
}

func TestAcceptRate(t *testing.T) {
	t.Parallel()
	v := startVenueWith(t, Config{Accepts: Rate{PerSecond: 0.001, Burst: 3}}, noDictionary, "CLIENT1")
	for range 3 {
		dialFrom(t, "127.0.0.1", v.addr())
	}
	waitStat(t, "open connections", v.l.Stats().ConnectionsOpen.Load, 3)
	expectRefusedAtAccept(t, v, "127.0.0.1", ReasonAcceptRate)
}

// TestOneSourceCannotSpendTheAccepts: an address connecting in a loop is
// refused at its own rate without spending the venue's accepts: another
// address connects still (every connection was reset once one flooded).
func TestOneSourceCannotSpendTheAccepts(t *testing.T) {
	t.Parallel()
	v := startVenueWith(t, Config{Accepts: Rate{PerSecond: 0.001, Burst: 6}, AcceptsPerSource: Rate{PerSecond: 0.001, Burst: 3}},
		noDictionary, "CLIENT1")
	for range 3 {
		dialFrom(t, "127.0.0.1", v.addr())
	}
	waitStat(t, "open connections", v.l.Stats().ConnectionsOpen.Load, 3)
	for range 5 {
		expectClosedAtAccept(t, "127.0.0.1", v.addr())
	}
	c := v.client(dialFrom(t, "127.0.0.2", v.addr()), "CLIENT1")
	c.sendMsg("A", logonBody(testPassword("CLIENT1"))...)
	c.expect("A")
}

// TestLogonsBeforeTheVenueServes: while the venue is not serving (its
// start catching up), a Logon is answered saying so and charged to no
// logon rate: a client that retried through the start logs on at once.
func TestLogonsBeforeTheVenueServes(t *testing.T) {
	t.Parallel()
	var serving atomic.Bool
	v := startVenueWith(t, Config{Serving: serving.Load, LogonsPerSource: Rate{PerSecond: 0.001, Burst: 2}}, noDictionary, "CLIENT1")
	for range 5 {
		c := v.dial("CLIENT1")
		c.sendMsg("A", logonBody(testPassword("CLIENT1"))...)
		expectRefused(t, c, "the venue is starting: try again in a few seconds")
	}
	serving.Store(true)
	c := v.logon("CLIENT1")
	c.trade("serving-1")
}

// TestLogonsOnceTheVenueRefuses: once Refusing gives a Text (a cluster's
// deposed leader, about to restart), every Logon is answered with a Logout
// of that Text, charged to no logon rate, where it was taken and then
// dropped without a word.
func TestLogonsOnceTheVenueRefuses(t *testing.T) {
	t.Parallel()
	var text atomic.Pointer[string]
	refusing := func() string {
		if p := text.Load(); p != nil {
			return *p
		}
		return ""
	}
	v := startVenueWith(t, Config{Refusing: refusing, LogonsPerSource: Rate{PerSecond: 0.001, Burst: 2}}, noDictionary, "CLIENT1", "CLIENT2")
	c := v.logon("CLIENT1")
	c.trade("before")
	moved := "leadership moved to node 2; leader FIX address 127.0.0.1:1"
	text.Store(&moved)
	for range 3 {
		c := v.dial("CLIENT2")
		c.sendMsg("A", logonBody(testPassword("CLIENT2"))...)
		expectRefused(t, c, moved)
	}
}

func TestLogonRateLimits(t *testing.T) {
	t.Parallel()
	t.Run("per source address", func(t *testing.T) {
		t.Parallel()
		v := startVenueWith(t, Config{LogonsPerSource: Rate{PerSecond: 0.001, Burst: 2}}, noDictionary, "CLIENT1", "CLIENT2")
		c := v.logon("CLIENT1")
		bad := v.dial("CLIENT2")
		bad.sendMsg("A", logonBody("wrong")...)
		expectRefused(t, bad, "Logon refused")
		third := v.dial("CLIENT2")
		third.sendMsg("A", logonBody(testPassword("CLIENT2"))...)
		expectRefused(t, third, "Too many logon attempts")
		// The limit is per address: another one logs on.
		other := v.client(dialFrom(t, "127.0.0.2", v.addr()), "CLIENT2")
		other.sendMsg("A", logonBody(testPassword("CLIENT2"))...)
		other.expect("A")
		c.trade("rate-1")
		other.trade("rate-2")
	})
	t.Run("failures do not lock the client out", func(t *testing.T) {
		t.Parallel()
		v := startVenueWith(t, Config{LogonsPerCompID: Rate{PerSecond: 0.001, Burst: 2}}, noDictionary, "CLIENT1")
		// Someone else names CLIENT1 with wrong passwords until refused
		// for it.
		for _, want := range []string{"Logon refused", "Logon refused", "Too many logon attempts"} {
			bad := v.client(dialFrom(t, "127.0.0.2", v.addr()), "CLIENT1")
			bad.sendMsg("A", logonBody("wrong")...)
			expectRefused(t, bad, want)
		}
		// CLIENT1 itself logs on: from its own address, and from the
		// attacker's too, since its credentials pass.
		c := v.logon("CLIENT1")
		c.trade("locked-1")
	})
	t.Run("CompID table full", func(t *testing.T) {
		t.Parallel()
		v := startVenueWith(t, Config{CompIDsMax: 2, LogonsPerCompID: Rate{PerSecond: 0.001, Burst: 5}}, noDictionary, "CLIENT1")
		for _, id := range []string{"X1", "X2", "X3"} {
			c := v.dial(id)
			c.sendMsg("A", logonBody("guess")...)
			want := "" // unknown CompIDs are closed without a word
			if id == "X3" {
				want = "Too many logon attempts"
			}
			if got := refusalTextOrSilent(t, c); got != want {
				t.Fatalf("%s: refusal %q, want %q", id, got, want)
			}
		}
		if got := v.l.Stats().Count(ReasonCompIDsTableFull); got != 1 {
			t.Fatalf("CompID table refusals %d", got)
		}
	})
}

// TestIdleConnections opens 2,000 connections that never send a byte: the
// edge holds them with bounded memory (no QuickFIX/Go goroutine, parser or
// buffer exists for them), closes every one at the logon deadline, and a
// logged-on session trades throughout.
func TestIdleConnections(t *testing.T) {
	const idle = 2000
	const perConnBytesMax = 48 << 10 // goroutine stack, 4 KiB read buffer, socket, client side
	v := startVenueWith(t, Config{
		ConnectionsMax:          idle + 10,
		ConnectionsPerSourceMax: idle + 10,
		Accepts:                 Rate{PerSecond: 1e6, Burst: idle + 10},
		// Long enough for all of them to be open at once even when the
		// machine is busy (dialing 2,000 took over 2 s under a parallel
		// race-detector run).
		LogonTimeout: 8 * time.Second,
	}, noDictionary, "CLIENT1")
	witness := v.logon("CLIENT1")
	stats := v.l.Stats()
	before := memInUse()
	conns := make([]net.Conn, 0, idle)
	start := time.Now()
	for i := range idle {
		// Spread over addresses, as a botnet would be.
		conns = append(conns, dialFrom(t, fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250), v.addr()))
	}
	waitStat(t, "open connections", stats.ConnectionsOpen.Load, idle+1)
	grown := memInUse() - before
	t.Logf("%d idle connections: %d KiB more in use (%d B each)", idle, grown>>10, grown/idle)
	if grown > idle*perConnBytesMax {
		t.Fatalf("memory grew %d bytes for %d idle connections", grown, idle)
	}
	witness.trade("idle-1")
	// Every one is closed by the deadline (plus scheduling slack).
	for _, c := range conns {
		_ = c.SetReadDeadline(start.Add(v.l.cfg.LogonTimeout + 10*time.Second))
		var b [1]byte
		if _, err := c.Read(b[:]); err == nil || isTimeout(err) {
			t.Fatalf("idle connection not closed: %v", err)
		}
	}
	waitStat(t, "open connections", stats.ConnectionsOpen.Load, 1)
	if got := stats.Count(ReasonLogonTimeout); got != idle {
		t.Fatalf("logon timeouts %d, want %d", got, idle)
	}
	witness.trade("idle-2")
}

// memInUse is heap plus goroutine stacks in use after a collection.
func memInUse() int {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int(m.HeapInuse + m.StackInuse)
}

// dialSmallReceiveBuffer connects with a 4 KiB receive buffer, so a client
// that stops reading fills its window quickly.
func dialSmallReceiveBuffer(t testing.TB, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// TestClientThatStopsReading: a client floods orders and never reads the
// reports. Its connection is closed when its outbound buffer is full, or
// when a write stalls past WriteTimeout; QuickFIX/Go is never blocked and
// another session trades meanwhile.
func TestClientThatStopsReading(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cfg    Config
		reason Reason
	}{
		{"outbound buffer full", Config{OutboundBytesMax: 32 << 10, WriteTimeout: time.Minute, SocketWriteBufferBytes: 4096}, ReasonOutboundFull},
		{"write deadline", Config{OutboundBytesMax: 16 << 20, OutboundQueueMax: 1 << 20, WriteTimeout: 300 * time.Millisecond, SocketWriteBufferBytes: 4096}, ReasonWriteTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := startVenueWith(t, tc.cfg, noDictionary, "CLIENT1", "CLIENT2")
			witness := v.logon("CLIENT2")
			stuck := v.client(dialSmallReceiveBuffer(t, v.addr()), "CLIENT1")
			stuck.sendMsg("A", logonBody(testPassword("CLIENT1"))...)
			stuck.expect("A")
			closesBefore := len(v.closeEvents())
			// Flood until the venue gives up on the client (bounded).
			var writeErr error
			for i := 0; i < 20000 && writeErr == nil; i++ {
				_ = stuck.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
				_, writeErr = stuck.conn.Write(stuck.msgAt(stuck.seqOut, "D", newOrderBody(fmt.Sprint("s", i))...))
				stuck.seqOut++
				if i%500 == 0 {
					witness.trade(fmt.Sprint("w", i))
				}
				if v.l.Stats().Count(tc.reason) > 0 {
					break
				}
			}
			v.waitCloseEvent(t, closesBefore, "CLIENT1", tc.reason)
			if v.l.Stats().Count(tc.reason) != 1 {
				t.Fatalf("%s counted %d times", tc.reason, v.l.Stats().Count(tc.reason))
			}
			witness.trade("after")
			// The stuck client's connection is gone.
			_ = stuck.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			var sink [64 << 10]byte
			for {
				_, err := stuck.conn.Read(sink[:])
				if err != nil {
					if isTimeout(err) {
						t.Fatal("stuck client's connection still open")
					}
					break
				}
			}
		})
	}
}

// TestClosedBeforeLogonIsNotAReadError: a client that closes its connection
// before a whole Logon arrived (a port probe or a load balancer's health
// check, with nothing or half a Logon sent) is counted as
// closed_before_logon; a connection reset is a read error. Counted as read
// errors, probes looked like a network fault on the dashboard.
func TestClosedBeforeLogonIsNotAReadError(t *testing.T) {
	t.Parallel()
	v := startVenueWith(t, Config{}, noDictionary, "CLIENT1")
	stats := v.l.Stats()
	probe := dialFrom(t, "127.0.0.1", v.addr())
	_ = probe.Close()
	half := dialFrom(t, "127.0.0.1", v.addr())
	if _, err := half.Write([]byte("8=FIX.4.4\x019=70\x0135=A\x0134=1\x01")); err != nil {
		t.Fatal(err)
	}
	_ = half.Close()
	waitStat(t, "closed_before_logon", func() int64 { return int64(stats.Count(ReasonClosedBeforeLogon)) }, 2)
	reset := dialFrom(t, "127.0.0.1", v.addr())
	if err := reset.(*net.TCPConn).SetLinger(0); err != nil { // close with a RST
		t.Fatal(err)
	}
	_ = reset.Close()
	waitStat(t, "read_error", func() int64 { return int64(stats.Count(ReasonReadError)) }, 1)
	if got := stats.Count(ReasonClosedBeforeLogon); got != 2 {
		t.Fatalf("closed_before_logon %d after a reset, want 2", got)
	}
	v.logon("CLIENT1").trade("after-probes")
}

// TestClientThatReadsSlowlyStaysConnected: a client floods orders and reads
// their reports steadily but slower than the venue writes them (8 KiB every
// 10 ms), so the edge's outbound buffer grows and one flush of it takes
// longer than WriteTimeout as a whole, while each 64 KiB of it goes out well
// within it. The client is not disconnected and reads every report: a write
// timed out when a whole flush outlasted WriteTimeout, which disconnected a
// drop-copy client reading a resend at its own steady pace. The timeout (a
// second) leaves each 64 KiB a wide margin on a loaded machine, where 300
// ms did not; the flood (16,000 reports, about 4 MB) makes a whole flush
// outlast it.
func TestClientThatReadsSlowlyStaysConnected(t *testing.T) {
	t.Parallel()
	cfg := Config{OutboundBytesMax: 16 << 20, OutboundQueueMax: 1 << 20, WriteTimeout: time.Second, SocketWriteBufferBytes: 4096}
	v := startVenueWith(t, cfg, noDictionary, "CLIENT1")
	slow := v.client(dialSmallReceiveBuffer(t, v.addr()), "CLIENT1")
	slow.sendMsg("A", logonBody(testPassword("CLIENT1"))...)
	slow.expect("A")
	const orders = 16000
	read := make(chan error, 1)
	go func() {
		// Counts the reports, "35=8" fields, across chunk boundaries.
		marker := []byte("\x0135=8\x01")
		var buf [8 << 10]byte
		var tail []byte
		// A bound on the whole, wide: under the race detector on a loaded
		// machine the venue wrote 5,400 reports in a minute. A stall is
		// the read deadline's.
		deadline := time.Now().Add(5 * time.Minute)
		for reports := 0; reports < orders; {
			if time.Now().After(deadline) {
				read <- fmt.Errorf("%d of %d reports in 5 minutes", reports, orders)
				return
			}
			_ = slow.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, err := slow.conn.Read(buf[:])
			if err != nil {
				read <- fmt.Errorf("after %d of %d reports: %w", reports, orders, err)
				return
			}
			seen := append(tail, buf[:n]...)
			reports += bytes.Count(seen, marker)
			tail = append([]byte(nil), seen[max(0, len(seen)-len(marker)+1):]...)
			time.Sleep(10 * time.Millisecond)
		}
		read <- nil
	}()
	for i := 0; i < orders; i++ {
		_ = slow.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := slow.conn.Write(slow.msgAt(slow.seqOut, "D", newOrderBody(fmt.Sprint("s", i))...)); err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
		slow.seqOut++
	}
	if err := <-read; err != nil {
		t.Fatalf("a client reading steadily: %v (write timeouts %d)", err, v.l.Stats().Count(ReasonWriteTimeout))
	}
	if n := v.l.Stats().Count(ReasonWriteTimeout); n != 0 {
		t.Fatalf("%d write timeouts for a client reading steadily", n)
	}
}

// TestConnectionAdmittedAfterCloseIsRefused: a connection the accept loop
// hands to admit once Close has passed over the handshaking connections is
// refused (the loop then closes it). Registered, it stayed open through
// Close's pass, and Close waited out its Logon deadline in handshake, or
// its Logon went through the gate after the listener closed.
func TestConnectionAdmittedAfterCloseIsRefused(t *testing.T) {
	l, err := Listen(Config{Address: "127.0.0.1:0", Authenticator: testCredentials("CLIENT1")})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client := dialPlain(t, ln.Addr().String())
	defer client.Close()
	raw, err := ln.AcceptTCP()
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	source := raw.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
	if r := l.admit(source, raw); r != ReasonListenerClosed {
		t.Fatalf("a connection admitted after Close: %v, want %v", r, ReasonListenerClosed)
	}
	l.mu.Lock()
	handshaking, conns := len(l.handshaking), l.conns
	l.mu.Unlock()
	if handshaking != 0 || conns != 0 {
		t.Fatalf("after Close %d connections handshaking, %d counted, want none", handshaking, conns)
	}
}

// TestLogonsRefusedForTheirSequenceNumbers: CheckSeqNums is asked with a
// Logon's ResetSeqNumFlag and MsgSeqNum once its credentials passed, and a
// Text it gives refuses the Logon with a Logout of that Text, counted under
// its own reason; "" lets the Logon through to QuickFIX/Go.
func TestLogonsRefusedForTheirSequenceNumbers(t *testing.T) {
	t.Parallel()
	type asked struct {
		key    SessionKey
		reset  bool
		seqNum uint64
	}
	var mu sync.Mutex
	var seen []asked
	const text = "log on with ResetSeqNumFlag (141=Y)"
	check := func(key SessionKey, reset bool, seqNum uint64) string {
		mu.Lock()
		seen = append(seen, asked{key, reset, seqNum})
		mu.Unlock()
		if reset {
			return ""
		}
		return text
	}
	v := startVenueWith(t, Config{CheckSeqNums: check}, noDictionary, "CLIENT1")
	noReset := []string{"98=0", "108=30", "554=" + testPassword("CLIENT1")}
	c := v.dial("CLIENT1")
	c.seqOut = 7
	c.sendMsg("A", noReset...)
	expectRefused(t, c, text)
	bad := v.dial("CLIENT1")
	bad.sendMsg("A", logonBody("wrong")...)
	expectRefused(t, bad, "Logon refused") // credentials first: not asked
	if got := v.l.Stats().Count(ReasonLogonSeqNums); got != 1 {
		t.Fatalf("refusals for sequence numbers %d, want 1", got)
	}
	ok := v.logon("CLIENT1") // 141=Y, 34=1
	ok.trade("after-reset")
	mu.Lock()
	defer mu.Unlock()
	key := SessionKey{BeginString: "FIX.4.4", ClientCompID: "CLIENT1", VenueCompID: v.venueID}
	want := []asked{{key, false, 7}, {key, true, 1}}
	if !slices.Equal(seen, want) {
		t.Fatalf("CheckSeqNums asked %+v, want %+v", seen, want)
	}
}
