package core

import (
	"math"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestNextDueNsIsWhenATimerRuns: a resting GTD order makes the matcher's
// next timer due one nanosecond after its expiry: a command stamped at the
// expiry leaves it, one stamped after expires it, and then nothing is due.
func TestNextDueNsIsWhenATimerRuns(t *testing.T) {
	m, err := NewMatcher(Config{OrdersMax: 16, ClOrdIDsMax: 64, SessionsMax: 1, Instruments: []InstrumentConfig{
		{ID: 1, Symbol: "A", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 1000, RefPriceTicks: 10000, BandPercent: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.NextDueNs(); got != math.MaxInt64 {
		t.Fatalf("an empty matcher: due %d", got)
	}
	buf := make([]byte, 256)
	sink := NewBufferSink(16)
	apply := func(cmd []byte) {
		t.Helper()
		sink.Reset()
		if err := m.Apply(cmd, sink); err != nil {
			t.Fatal(err)
		}
	}
	apply(encodeNewOrder(buf, &orderArgs{seq: 0, ts: 100, side: venue.SideBuy, ordType: venue.OrdTypeLimit, instrument: 1,
		tif: venue.TimeInForceGTD, px: 9900, qty: 1, expireNs: 5_000, clOrdID: "g"}))
	if got := m.NextDueNs(); got != 5_001 {
		t.Fatalf("a GTD order expiring at 5000: due %d, want 5001", got)
	}
	apply(encodeTick(buf, 1, 5_000))
	if m.RestingOrders() != 1 || m.NextDueNs() != 5_001 {
		t.Fatalf("a command at the expiry: %d resting, due %d", m.RestingOrders(), m.NextDueNs())
	}
	apply(encodeTick(buf, 2, 5_001))
	if m.RestingOrders() != 0 || m.NextDueNs() != math.MaxInt64 {
		t.Fatalf("a command after the expiry: %d resting, due %d", m.RestingOrders(), m.NextDueNs())
	}
}
