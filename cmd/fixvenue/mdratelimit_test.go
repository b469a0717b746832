package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/conftest"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
	"github.com/fixvenue/fixvenue/marketdata/packet"
)

// TestFeedClientWaitsOutTheRecoveryRateLimit: a relay drops every other
// packet of a busy feed, so a client asks for more retransmissions than the
// recovery service's rate limit allows. A refusal for the rate limit is a
// request to ask later, not one for a snapshot, which the same limit
// refuses: the client waits and retransmits, its books never stale, and ends
// with the matcher's book (it asked for a snapshot, was refused it, marked
// its books stale and reported the gap unrecovered).
func TestFeedClientWaitsOutTheRecoveryRateLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	relayIn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer relayIn.Close()
	clientConn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeVenueConfig(t, dir, `[engine]
orders_max = 4096
clordids_max = 8192
[marketdata]
feed_addr = %q
recovery_addr = "127.0.0.1:0"
heartbeat_interval = "100ms"
[[session]]
comp_id = "CLIENT1"
`+conftest.ACME, relayIn.LocalAddr().String())
	v := startVenue(t, cfg)

	// The relay: every other sequenced packet is lost while dropping is on.
	var dropping atomic.Bool
	go func() {
		buf := make([]byte, 65536)
		var rd packet.Reader
		n := 0
		for {
			size, err := relayIn.Read(buf)
			if err != nil {
				return
			}
			if dropping.Load() && rd.Reset(buf[:size]) == nil && rd.Seq != 0 {
				n++
				if n%2 == 0 {
					continue
				}
			}
			_, _ = clientConn.WriteToUDP(buf[:size], clientConn.LocalAddr().(*net.UDPAddr))
		}
	}()

	var mu sync.Mutex
	var unrecovered []feedclient.Recovery
	client, err := feedclient.New(feedclient.Config{Conn: clientConn, RecoveryAddr: v.ready.RecoveryAddr,
		Callbacks: feedclient.Callbacks{OnRecovery: func(r feedclient.Recovery) {
			if r.Outcome == feedclient.Unrecovered {
				mu.Lock()
				unrecovered = append(unrecovered, r)
				mu.Unlock()
			}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- client.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Error(err)
		}
	}()
	waitInSync := func(what string) {
		t.Helper()
		for {
			var ok bool
			if err := client.Inspect(ctx, func(c *feedclient.Client) { ok = c.InSync() }); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if ok {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitInSync("joining")

	dropping.Store(true)
	c := logOn(t, v.fixAddr, "CLIENT1")
	defer c.Close()
	const orders = 120 // about 60 gaps, well past the service's burst of 20 requests
	for i := range orders {
		id := fmt.Sprintf("o%d", i)
		if err := c.Send("D", fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"),
			fixclient.F(44, fmt.Sprintf("%d.%02d", 90+i/100, i%100)), fixclient.F(59, "1")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Expect(10*time.Second, "8", map[int]string{11: id, 150: "0"}); err != nil {
			t.Fatal(err)
		}
	}
	dropping.Store(false)
	want := engineBooks(t, cfg)["ACME"]
	for {
		var got feedclient.Stats
		var book bookLevels
		var inSync bool
		if err := client.Inspect(ctx, func(c *feedclient.Client) {
			got, inSync = c.Stats(), c.InSync()
			if b := c.BookBySymbol("ACME"); b != nil {
				book = clientBook(b)
			}
		}); err != nil {
			t.Fatalf("the client never caught up: %v", err)
		}
		if inSync && reflect.DeepEqual(book, want) {
			if got.RetransmitRejects == 0 {
				t.Logf("no retransmission was refused for the rate limit (stats %+v): the test did not reach the limit", got)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range unrecovered {
		t.Errorf("gap from seq %d (%d messages) unrecovered, the books stale: %v", r.FromSeq, r.Count, r.Err)
	}
}
