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
