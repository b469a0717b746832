package marketdata

import (
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestIndicativeFollowsTheOrderThatMovedIt: in a call the matcher publishes
// the indicative uncross at the end of the command that changed the book,
// so the feed must show the order that command entered before the
// AuctionUpdate computed with it. A receiver applying messages in sequence
// otherwise holds, at the AuctionUpdate, a book that does not cross while
// the update says that volume would trade.
func TestIndicativeFollowsTheOrderThatMovedIt(t *testing.T) {
	s := newScenario(t)
	buy, sell, day := venue.SideBuy, venue.SideSell, venue.TimeInForceDay
	s.status(venue.TradingStatusOpeningCall)
	expectLines(t, "a bid in the call", s.order(buy, 1010, 5, day), `
added #1 Buy 5@1010 rpt=2
level New Buy #1 5@1010 n=1 rpt=3
AuctionUpdate`)
	expectLines(t, "an offer that crosses it", s.order(sell, 1000, 3, day), `
added #2 Sell 3@1000 rpt=5
level New Sell #1 3@1000 n=1 rpt=6
AuctionUpdate`)
}

// TestIndicativeFollowsAReplaceAcrossTheBook: a replace that crosses the
// book in a call is held like a new order; it too goes out before the
// indicative its command published.
func TestIndicativeFollowsAReplaceAcrossTheBook(t *testing.T) {
	s := newScenario(t)
	buy, sell, day := venue.SideBuy, venue.SideSell, venue.TimeInForceDay
	s.status(venue.TradingStatusOpeningCall)
	s.order(sell, 1000, 3, day)
	s.order(buy, 990, 5, day)
	expectLines(t, "a bid re-priced across the offer", s.replace(2, buy, 1010, 5), `
deleted #2 Buy rpt=8
level Delete Buy #1 0@990 n=0 rpt=9
added #2 Buy 5@1010 rpt=10
level New Buy #1 5@1010 n=1 rpt=11
AuctionUpdate`)
}
