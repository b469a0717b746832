package server

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/metricstest"
)

// TestMappedSourceAddressAllowsIPv4: an allowed source written as an
// IPv4-mapped IPv6 address names the IPv4 client it maps (the edge
// compares IPv4 clients unmapped, so the entry never matched and its
// client was refused).
func TestMappedSourceAddressAllowsIPv4(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), "[[session]]\ncomp_id = \"MAPPED\"\nallowed_source_addresses = [\"::ffff:127.0.0.1\"]\n"), Options{})
	c := logon(t, s, "MAPPED", true)
	sendOrder(t, c, order{id: "m1", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "m1", 150: "0"})
}

// TestConfiguredAcceptRate: fix.accepts_per_source_* reach the edge. With
// a burst of two and a rate that does not refill within the test, a third
// connection from the address is closed before a byte is read and counted
// as an accept_rate refusal, while the first two stay open.
func TestConfiguredAcceptRate(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), "")
	cfg.FIX.AcceptsPerSourcePerSecond, cfg.FIX.AcceptsPerSourceBurst = 0.001, 2
	s := startServer(t, cfg, Options{})
	var conns []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", s.FIXAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	closed := func(c net.Conn, wait time.Duration) bool {
		_ = c.SetReadDeadline(time.Now().Add(wait))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
	// The third is reset at once: the dial itself may already see it.
	if third, err := net.Dial("tcp", s.FIXAddr()); err == nil {
		defer third.Close()
		if !closed(third, readWait) {
			t.Fatal("the third connection within the burst of two is still open")
		}
	} else if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("third dial: %v", err)
	}
	for i, c := range conns[:2] {
		if closed(c, 200*time.Millisecond) {
			t.Errorf("connection %d within the burst was closed", i+1)
		}
	}
	if got := metricstest.Float(t, scrape(t, s), `fixvenue_edge_refusals_total{reason="accept_rate"}`); got != 1 {
		t.Errorf("accept_rate refusals %v, want 1", got)
	}
}
