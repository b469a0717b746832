package marketdata

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// knownBook puts a small known book on a live feed and returns the client
// configuration that reads it.
func knownBook(t *testing.T) (*scenario, feedclient.Config) {
	conn := udpSink(t)
	s := newFeedScenario(t, conn, nil)
	day := venue.TimeInForceDay
	s.order(venue.SideSell, 1005, 10, day)
	s.order(venue.SideSell, 1007, 5, day)
	s.order(venue.SideBuy, 1000, 4, day)
	s.order(venue.SideBuy, 1000, 6, day)
	s.order(venue.SideBuy, 999, 3, day)
	s.order(venue.SideBuy, 1007, 2, day) // trades 2 @ 10.05
	return s, feedclient.Config{Conn: conn, RecoveryAddr: s.feed.RecoveryAddr().String()}
}

func TestBookJSON(t *testing.T) {
	_, cfg := knownBook(t)
	out, err := feedclient.BookJSON(context.Background(), cfg, "ACME")
	if err != nil {
		t.Fatal(err)
	}
	// 5 orders added (2 messages each), one trade (trade, executed, level change).
	want := `{"symbol":"ACME","seq":13,"bids":[[10.00,10,2],[9.99,3,1]],"asks":[[10.05,8,1],[10.07,5,1]]}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	var parsed struct {
		Symbol string
		Seq    uint64
		Bids   [][3]json.Number
		Asks   [][3]json.Number
	}
	if err := json.Unmarshal(out, &parsed); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
}

func TestBookJSONUnknownSymbol(t *testing.T) {
	_, cfg := knownBook(t)
	if _, err := feedclient.BookJSON(context.Background(), cfg, "NOPE"); err == nil || !strings.Contains(err.Error(), "NOPE") {
		t.Fatalf("got %v", err)
	}
}

// TestBookJSONWithoutAVenueSaysWhere: with no venue on the addresses, the
// error names the recovery and feed addresses it tried.
func TestBookJSONWithoutAVenueSaysWhere(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	recovery := l.Addr().String()
	l.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = feedclient.BookJSON(ctx, feedclient.Config{FeedAddr: "127.0.0.1:0", RecoveryAddr: recovery}, "ACME")
	if err == nil || !strings.Contains(err.Error(), "recovery service at "+recovery) || !strings.Contains(err.Error(), "no packet on 127.0.0.1:0") {
		t.Fatalf("got %v", err)
	}
}

func TestWatch(t *testing.T) {
	s, cfg := knownBook(t)
	var out lockedbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- feedclient.Watch(ctx, cfg, "ACME", &out) }()
	// Wait for the first screen, then trade once more and wait for it.
	waitFor := func(what string) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if s := out.String(); strings.Contains(s, what) {
				return s[strings.LastIndex(s, "\x1b[H\x1b[2J"):]
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("no %q in the view:\n%s", what, out.String())
		return ""
	}
	screen := waitFor("10.07")
	for _, want := range []string{"ACME  Open  seq 13", "last 2 @ 10.05", "10.00", "9.99", "2 @ 10.05"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("view lacks %q:\n%s", want, screen)
		}
	}
	s.order(venue.SideSell, 1000, 1, venue.TimeInForceIOC)
	screen = waitFor("last 1 @ 10.00")
	if !strings.Contains(screen, "1 @ 10.00") || !strings.Contains(screen, "seq 16") {
		t.Fatalf("view after a trade:\n%s", screen)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Watch: %v", err)
	}
}
