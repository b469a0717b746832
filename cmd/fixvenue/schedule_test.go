package main

import (
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/internal/conftest"
)

// readmeSchedule is README's [schedule] example ("Operating the venue"),
// verbatim: its one group lists ACME and GLOBEX.
const readmeSchedule = `
[schedule]
enabled = true
time_zone = "Europe/London"
trading_days = ["Mon", "Tue", "Wed", "Thu", "Fri"]   # the default
holidays = ["2026-12-25", "2026-12-28"]             # these days do not trade
end_of_day = "17h30m"
[[schedule.group]]
name = "equities"
instruments = ["ACME", "GLOBEX"]   # empty: every instrument in no other group
pre_open = "7h50m"                 # the opening call: orders and cancels taken, no matching
open = "8h"                        # uncross at one price, then continuous trading: Open
closing_call = "16h25m"            # optional: the closing call
close = "16h30m"                   # uncross at one price, then Closed
`

// TestStartNamesTheInstrumentsNoScheduleGroupCovers: README's schedule on
// the demo instruments leaves INITECH in no group, which the schedule then
// never moves (open through nights, weekends and holidays); the start says
// so, naming it, where it said nothing. A group for every other instrument
// silences it.
func TestStartNamesTheInstrumentsNoScheduleGroupCovers(t *testing.T) {
	t.Parallel()
	const instruments = `[marketdata]
enabled = false
[[session]]
comp_id = "CLIENT1"
` + conftest.ACME + `[[instrument]]
id = 2
symbol = "GLOBEX"
tick_size = "0.05"
lot_size = 10
min_qty = 10
max_qty = 500000
ref_price = "50.00"
band_percent = 10
[[instrument]]
id = 3
symbol = "INITECH"
tick_size = "0.001"
lot_size = 100
min_qty = 100
max_qty = 10000000
ref_price = "2.500"
band_percent = 20
`
	const warning = "schedule: instruments in no schedule group keep their status around the clock"
	v := startVenue(t, writeVenueConfig(t, t.TempDir(), "%s", instruments+readmeSchedule))
	v.stop(t)
	if logs := v.logs(); !strings.Contains(logs, warning) || !strings.Contains(logs, "instruments=INITECH") {
		t.Errorf("README's schedule on ACME, GLOBEX and INITECH: the start did not name INITECH as in no group:\n%s", logs)
	}
	v = startVenue(t, writeVenueConfig(t, t.TempDir(), "%s", instruments+readmeSchedule+`
[[schedule.group]]
name = "rest"
pre_open = "7h50m"
open = "8h"
close = "16h30m"
`))
	v.stop(t)
	if logs := v.logs(); strings.Contains(logs, warning) {
		t.Errorf("every instrument in a group, the start still warned:\n%s", logs)
	}
}
