package venue_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

func TestTradingStatusText(t *testing.T) {
	for name, want := range map[string]venue.TradingStatus{
		"open": venue.TradingStatusOpen, "halted": venue.TradingStatusHalted, "closed": venue.TradingStatusClosed,
		"opening-call": venue.TradingStatusOpeningCall, "closing-call": venue.TradingStatusClosingCall,
		"volatility-auction": venue.TradingStatusVolatilityAuction,
	} {
		var got venue.TradingStatus
		if err := got.UnmarshalText([]byte(name)); err != nil || got != want {
			t.Fatalf("UnmarshalText(%q) = %v, %v; want %v", name, got, err, want)
		}
		text, err := got.MarshalText()
		if err != nil || string(text) != name {
			t.Fatalf("%v.MarshalText() = %q, %v; want %q", got, text, err, name)
		}
	}
	for _, bad := range []string{"", "Open", "paused", "halt", "\x00"} {
		got := venue.TradingStatusHalted
		err := got.UnmarshalText([]byte(bad))
		want := fmt.Sprintf("%q is not open, halted, closed, opening-call, closing-call or volatility-auction", bad)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("UnmarshalText(%q): error %v, want one containing %s", bad, err, want)
		}
		if got != venue.TradingStatusHalted {
			t.Errorf("UnmarshalText(%q) changed the status to %v", bad, got)
		}
	}
	for _, v := range []venue.TradingStatus{0, 7, 255} {
		if _, err := v.MarshalText(); err == nil {
			t.Errorf("MarshalText(%d) did not fail", v)
		}
	}
}
