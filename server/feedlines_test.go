package server

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
)

// TestFeedBLineCarriesTheFeed: a venue with marketdata.feed_b_addr sends
// every datagram on its B line too. Its A line here reaches a socket that
// drops everything (nobody reads it), so a client reading its own A socket,
// which the venue never sends to, and the venue's B line keeps ACME's book
// from the B line alone: the orders a FIX client rests after the join reach
// it without a gap recovered over TCP, and the venue counts the B line's
// packets (fixvenue_md_line_b_packets_sent_total).
func TestFeedBLineCarriesTheFeed(t *testing.T) {
	t.Parallel()
	listen := func() *net.UDPConn {
		conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	venueA, clientA, lineB := listen(), listen(), listen()
	cfg := testConfig(t, t.TempDir(), "")
	cfg.MarketData.Enabled = true
	cfg.MarketData.FeedAddr = venueA.LocalAddr().String()
	cfg.MarketData.FeedBAddr = lineB.LocalAddr().String()
	cfg.MarketData.RecoveryAddr = "127.0.0.1:0"
	s := startServer(t, cfg, Options{})

	gaps := make(chan feedclient.Recovery, 16)
	fc := runFeedClient(t, s, feedclient.Config{ConnB: lineB, Callbacks: feedclient.Callbacks{OnRecovery: func(r feedclient.Recovery) {
		if r.Cause != feedclient.CauseJoin {
			select {
			case gaps <- r:
			default: // one is enough to fail
			}
		}
	}}}, clientA)
	waitFeedJoined(t, fc)
	stats := func() (st feedclient.Stats, bid int64) {
		ictx, icancel := context.WithTimeout(context.Background(), readWait)
		defer icancel()
		if err := fc.Inspect(ictx, func(c *feedclient.Client) {
			st = c.Stats()
			if b := c.BookBySymbol("ACME"); b != nil && len(b.Bids) > 0 {
				bid = b.Bids[0].PriceTicks
			}
		}); err != nil {
			t.Fatalf("feed client: %v", err)
		}
		return st, bid
	}
	c := logon(t, s, "CLIENT1", true)
	for _, px := range []string{"99.00", "99.50", "99.75"} {
		sendOrder(t, c, order{id: "b" + px, side: "1", qty: "1", px: px})
		expectER(t, c, map[int]string{11: "b" + px, 150: "0"})
	}
	for deadline := time.Now().Add(readWait); ; time.Sleep(5 * time.Millisecond) {
		st, bid := stats()
		if bid == 9975 {
			if st.Lines[1].Datagrams == 0 || st.Lines[0].Datagrams != 0 || st.Retransmissions != 0 || st.Snapshots != 1 {
				t.Fatalf("the book came other than by the B line: %+v", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ACME's best bid on the feed is %d ticks, want 9975: %+v", bid, st)
		}
	}
	select {
	case r := <-gaps:
		t.Fatalf("a recovery over TCP: %+v", r)
	default:
	}
	if n := metricstest.Float(t, scrape(t, s), "fixvenue_md_line_b_packets_sent_total"); n < 3 {
		t.Fatalf("fixvenue_md_line_b_packets_sent_total %v, want the packets of three orders at least", n)
	}
}
