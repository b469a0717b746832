package server

import (
	"testing"
)

// bigTicks is an instrument whose prices are near the largest decimal an
// int64 holds: a tick of 10^15 and a reference price of 9000 ticks, its
// band (±3%) reaching 9270 ticks, above 2^63 − 1 as a number.
const bigTicks = `
[[instrument]]
id = 9
symbol = "BIGT"
tick_size = "1000000000000000"
lot_size = 1
min_qty = 1
max_qty = 1000
ref_price = "9000000000000000000"
band_percent = 3
`

// TestLargeTickPricesOnTheWire trades at a price whose value times the
// AvgPx's extra digits, and whose band's top, are beyond int64: the
// ExecutionReport's AvgPx and a reject's band were written from wrapped
// products (a negative or garbled number).
func TestLargeTickPricesOnTheWire(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), bigTicks), Options{})
	a := logon(t, s, "CLIENT1", true)
	b := logon(t, s, "CLIENT2", true)
	const px = "9000000000000000000"
	sendOrder(t, a, order{id: "s1", sym: "BIGT", side: "2", qty: "3", px: px})
	expectER(t, a, map[int]string{11: "s1", 150: "0"})
	sendOrder(t, b, order{id: "b1", sym: "BIGT", side: "1", qty: "3", px: px})
	expectER(t, b, map[int]string{11: "b1", 150: "F", 31: px, 32: "3", 14: "3", 6: px + ".0000"})
	expectER(t, a, map[int]string{11: "s1", 150: "F", 31: px, 14: "3", 6: px + ".0000"})

	// A price too large for an int64 is beyond the band: the reject names
	// the band's edges as they are.
	sendOrder(t, b, order{id: "b2", sym: "BIGT", side: "1", qty: "1", px: "9300000000000000000"})
	expectER(t, b, map[int]string{11: "b2", 150: "8", 58: "price outside the instrument's price band 8730000000000000000 to 9270000000000000000"})
}
