package feedclient

import (
	"strings"
	"testing"

	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// TestBookViewSeq: the watch view shows the last sequence number applied,
// and "-" before the client has joined (after a failover it starts again
// from nothing; it showed 2^64-1).
func TestBookViewSeq(t *testing.T) {
	b := &Book{Symbol: "ACME"}
	if got := string(appendBookView(nil, b, nil, 5, 0)); !strings.Contains(got, "seq -  ") {
		t.Fatalf("not joined: %q", got)
	}
	if got := string(appendBookView(nil, b, nil, 5, 42)); !strings.Contains(got, "seq 41  ") {
		t.Fatalf("joined: %q", got)
	}
}

// TestBookViewIndicative: in a call the view shows what the book would
// uncross at, and the imbalance; once open, nothing of it.
func TestBookViewIndicative(t *testing.T) {
	b := &Book{Symbol: "ACME", TickMantissa: 1, TickExponent: -2, Defined: true, Status: mdsbe.TradingStatusOpeningCall,
		Auction: Auction{Kind: mdsbe.AuctionUpdateKindIndicative, PriceTicks: 10000, MatchedQty: 5, ImbalanceSide: mdsbe.ImbalanceSideSell, ImbalanceQty: 3}}
	if got := string(appendBookView(nil, b, nil, 5, 42)); !strings.Contains(got, "\nindicative 5 @ 100.00  imbalance sell 3\n") {
		t.Fatalf("in the call: %q", got)
	}
	b.Auction = Auction{Kind: mdsbe.AuctionUpdateKindIndicative}
	if got := string(appendBookView(nil, b, nil, 5, 42)); !strings.Contains(got, "\nindicative no cross\n") {
		t.Fatalf("no cross: %q", got)
	}
	b.Status = mdsbe.TradingStatusOpen
	if got := string(appendBookView(nil, b, nil, 5, 42)); strings.Contains(got, "indicative") {
		t.Fatalf("open: %q", got)
	}
}

// TestLinesView: with two lines the watch says what each brought.
func TestLinesView(t *testing.T) {
	got := string(appendLinesView(nil, [2]LineStats{{Datagrams: 12, Duplicates: 3}, {Datagrams: 9}}))
	if want := "\nlines: A 12 datagrams (3 duplicates), B 9 datagrams (0 duplicates)\n"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}
