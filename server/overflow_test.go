package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/ops"
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

// wideQty is an instrument whose max_qty is near its bound (the test
// venue's 4096 orders and 16384 ClOrdIDs) with a band of 50% around 1000
// (a top of 1500 ticks), so that a band moved up to 40400 ticks would put
// an order's notional past int64.
const wideQty = `
[[instrument]]
id = 8
symbol = "WIDEQ"
tick_size = "1"
lot_size = 1
min_qty = 1
max_qty = 450000000000000
ref_price = "1000"
band_percent = 50
`

// TestBandMoveKeepsOrderNotionalInRange: a band moved up by the admin API
// must keep max_qty at its top within the largest order notional, as the
// configuration must. The move was taken, and a buy of 431850100834394
// at 40400, a notional that wraps to −1000000000000034016, then passed a
// max_order_notional of 1000000 and entered the book.
func TestBandMoveKeepsOrderNotionalInRange(t *testing.T) {
	t.Parallel()
	extra := wideQty + `
[risk]
[[risk.session]]
comp_id = "CLIENT1"
max_order_notional = 1000000
` + adminConfig()
	s := startServer(t, testConfig(t, t.TempDir(), extra), Options{})
	c := logon(t, s, "CLIENT1", true)
	var refusal struct{ Error, Code string }
	code := adminCall(t, s, "POST", "/v1/instruments/WIDEQ/band", aliceToken, `{"reason":"up","ref_price":"40000","band_percent":1}`, &refusal)
	if code != 400 || refusal.Code != "bad_band" || !strings.Contains(refusal.Error, "max_qty 450000000000000 is above the largest order notional") {
		t.Errorf("band moved to a top where max_qty overflows the notional: %d %+v", code, refusal)
	}
	sendOrder(t, c, order{id: "w1", sym: "WIDEQ", side: "1", qty: "431850100834394", px: "40400"})
	expectER(t, c, map[int]string{11: "w1", 150: "8"})
	// A move that keeps it within the bound is taken.
	if code := adminCall(t, s, "POST", "/v1/instruments/WIDEQ/band", aliceToken, `{"reason":"up a little","ref_price":"1100","band_percent":25}`, nil); code != 200 {
		t.Errorf("band to 825..1375: %d", code)
	}
}

// bigNotional trades near the largest order notional: 450000000000000 at
// 10200 is 4590000000000000000 ticks, within 2^62−2 and the test venue's
// max_qty bound.
const bigNotional = `
[[instrument]]
id = 7
symbol = "BIGN"
tick_size = "1"
lot_size = 1
min_qty = 1
max_qty = 450000000000000
ref_price = "10000"
band_percent = 2
`

// TestDaySalesPastTwoToTheSixtyTwoLeaveBuysOpen: a session that sold more
// than 2^62 ticks of notional in a day buys as before, whether its sales
// rested or took resting buys. The day's net bought figure,
// −9180000000000000000, made the credit check (no limit − figure − the
// order) wrap negative, and the buy was refused on a credit limit nobody
// set.
func TestDaySalesPastTwoToTheSixtyTwoLeaveBuysOpen(t *testing.T) {
	t.Parallel()
	extra := bigNotional + `
[risk]
[risk.sessions]
max_open_orders = 100
`
	s := startServer(t, testConfig(t, t.TempDir(), extra), Options{})
	seller := logon(t, s, "CLIENT1", true)
	for i, buyer := range []string{"CLIENT2", "CLIENT3", "CLIENT4"} {
		b := logon(t, s, buyer, true)
		id := fmt.Sprint("s", i)
		sell := order{id: id, sym: "BIGN", side: "2", qty: "450000000000000", px: "10200"}
		buy := order{id: "b", sym: "BIGN", side: "1", qty: "450000000000000", px: "10200"}
		if i == 1 { // the sale takes a resting buy
			sendOrder(t, b, buy)
			expectER(t, b, map[int]string{11: "b", 150: "0"})
			sendOrder(t, seller, sell)
		} else { // the sale rests and is taken
			sendOrder(t, seller, sell)
			expectER(t, seller, map[int]string{11: id, 150: "0"})
			sendOrder(t, b, buy)
		}
		expectER(t, b, map[int]string{11: "b", 150: "F", 39: "2"})
		expectER(t, seller, map[int]string{11: id, 150: "F", 39: "2"})
		if i > 0 {
			id := fmt.Sprint("buy", i)
			sendOrder(t, seller, order{id: id, sym: "BIGN", side: "1", qty: "1", px: "9800"})
			expectER(t, seller, map[int]string{11: id, 150: "0"})
		}
	}
}

// TestRiskReportNamesTheMostUsedPositionLimit: the utilisation report
// names the position limit nearest its use, 1e14 of 1e15, not 1e14 of
// 4e18: the ratios were compared by int64 products, which wrapped.
func TestRiskReportNamesTheMostUsedPositionLimit(t *testing.T) {
	t.Parallel()
	extra := bigNotional + strings.NewReplacer("id = 7", "id = 6", "BIGN", "BIGM").Replace(bigNotional) + `
[risk]
report_interval = "10ms"
[[risk.session]]
comp_id = "CLIENT1"
[[risk.session.instrument]]
symbol = "BIGN"
max_position = 4000000000000000000
[[risk.session.instrument]]
symbol = "BIGM"
max_position = 1000000000000000
`
	s := startServer(t, testConfig(t, t.TempDir(), extra), Options{})
	c := logon(t, s, "CLIENT1", true)
	for _, sym := range []string{"BIGN", "BIGM"} {
		sendOrder(t, c, order{id: sym, sym: sym, side: "1", qty: "100000000000000", px: "9800"})
		expectER(t, c, map[int]string{11: sym, 150: "0"})
	}
	var figures *ops.RiskFigures
	waitUntil(t, "a utilisation report of both orders", func() bool {
		var list []ops.RiskSubject
		if code := adminCall(t, s, "GET", "/v1/risk", "", "", &list); code != 200 {
			t.Fatalf("GET /v1/risk: %d", code)
		}
		for _, subj := range list {
			if subj.Name == "CLIENT1" && subj.Figures != nil && subj.Figures.OpenOrders == 2 {
				figures = subj.Figures
				return true
			}
		}
		return false
	})
	if figures.PositionUsed != 100000000000000 || figures.PositionLimit != 1000000000000000 {
		t.Fatalf("position used %d of %d, want 100000000000000 of 1000000000000000", figures.PositionUsed, figures.PositionLimit)
	}
}
