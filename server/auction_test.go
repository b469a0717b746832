package server

import (
	"testing"
	"time"
)

// TestScheduledOpeningAuction runs the opening call of the compressed
// trading day over FIX on TCP: in the pre-open a crossing buy and sell and
// an order at the opening (59=2) are accepted and do not trade; at the
// scheduled open the book uncrosses at one price (the reference 100.00,
// closest of the tied prices), both fills carry TradingSessionSubID 2
// (opening auction), and the order at the opening that did not trade
// expires.
func TestScheduledOpeningAuction(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a compressed day's opening call")
	}
	s := tradingDayVenue(t, t.TempDir())
	waitReady(t, s)
	waitStatus(t, s, "ACME", "OpeningCall", compressedDayLength+2*time.Second)
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "opg-buy", side: "1", qty: "10", px: "100.50"})
	sendOrder(t, c, order{id: "opg-sell", side: "2", qty: "10", px: "100.00"})
	sendOrder(t, c, order{id: "at-open", side: "1", qty: "1", px: "99.00", tif: "2"})
	sendOrder(t, c, order{id: "ioc", side: "1", qty: "1", px: "99.00", tif: "3"})
	expectER(t, c, map[int]string{11: "opg-buy", 150: "0"})
	expectER(t, c, map[int]string{11: "opg-sell", 150: "0"})
	expectER(t, c, map[int]string{11: "at-open", 150: "0", 59: "2"})
	expectER(t, c, map[int]string{11: "ioc", 150: "8", 103: "11",
		58: "IOC and FOK orders are not accepted during a call phase: nothing matches until the uncross"})
	if st := instrumentsOf(t, s)["ACME"]; st.Status != "OpeningCall" || st.Bid != "100.50" || st.Ask != "100.00" {
		t.Fatalf("in the call the book should rest crossed: %+v", st)
	}
	waitStatus(t, s, "ACME", "Open", 3*time.Second)
	expectER(t, c, map[int]string{11: "opg-buy", 150: "F", 39: "2", 31: "100.00", 32: "10", 625: "2"})
	expectER(t, c, map[int]string{11: "opg-sell", 150: "F", 39: "2", 31: "100.00", 32: "10", 625: "2"})
	expectER(t, c, map[int]string{11: "at-open", 150: "C", 39: "C"})
	if st := instrumentsOf(t, s)["ACME"]; st.Bid != "" || st.Ask != "" {
		t.Fatalf("after the uncross the book should be empty: %+v", st)
	}
}
