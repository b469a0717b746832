package conftest

// ACME is the [[instrument]] table of ACME as the tests trade it: id 1,
// tick 0.01, lot 1, quantities 1 to 100,000, reference 100.00, band ±10%.
const ACME = `[[instrument]]
id = 1
symbol = "ACME"
tick_size = "0.01"
lot_size = 1
min_qty = 1
max_qty = 100000
ref_price = "100.00"
band_percent = 10
`

// LOTS is the [[instrument]] table of LOTS, the tests' second instrument:
// id 2, tick 0.05, lot 10, quantities 10 to 1,000, reference 50.00, band
// ±10%.
const LOTS = `[[instrument]]
id = 2
symbol = "LOTS"
tick_size = "0.05"
lot_size = 10
min_qty = 10
max_qty = 1000
ref_price = "50.00"
band_percent = 10
`

// NEWCO is the [[instrument]] table of NEWCO, an instrument a test adds to
// a configuration that ran with ACME and LOTS: id 3, tick 0.01, lot 1,
// quantities 1 to 1,000, reference 20.00, band ±10%.
const NEWCO = `[[instrument]]
id = 3
symbol = "NEWCO"
tick_size = "0.01"
lot_size = 1
min_qty = 1
max_qty = 1000
ref_price = "20.00"
band_percent = 10
`
