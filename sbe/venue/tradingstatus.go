package venue

import "fmt"

// This file is written by hand: it gives TradingStatus the spelling the
// venue configuration uses ("open", "halted", "closed", "opening-call",
// "closing-call", "volatility-auction"), so that a configuration file holds
// a TradingStatus directly and the names are read in one place. String
// keeps the schema's names for logs and dumps.

// tradingStatusNames maps each status to its configuration spelling.
var tradingStatusNames = [...]string{
	TradingStatusOpen:              "open",
	TradingStatusHalted:            "halted",
	TradingStatusClosed:            "closed",
	TradingStatusOpeningCall:       "opening-call",
	TradingStatusClosingCall:       "closing-call",
	TradingStatusVolatilityAuction: "volatility-auction",
}

// UnmarshalText reads a status as the configuration spells it (see
// tradingStatusNames). Any other text is an error, never a silent default.
func (v *TradingStatus) UnmarshalText(b []byte) error {
	for s, name := range tradingStatusNames {
		if name != "" && string(b) == name {
			*v = TradingStatus(s)
			return nil
		}
	}
	return fmt.Errorf("trading status %q is not open, halted, closed, opening-call, closing-call or volatility-auction", b)
}

// MarshalText returns the configuration spelling; a value the schema does not
// define is an error.
func (v TradingStatus) MarshalText() ([]byte, error) {
	if !v.Valid() {
		return nil, fmt.Errorf("undefined trading status %d", uint8(v))
	}
	return []byte(tradingStatusNames[v]), nil
}
