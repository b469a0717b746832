package core

import (
	"errors"
	"fmt"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Bounds that hold whatever the configuration says.
const (
	// LevelsPerSideMaxLimit is the widest price band, in ticks, that one side
	// of one instrument may span. A level costs 24 bytes and a bit, so a side
	// at this bound costs 100 MB; wider bands need a different structure.
	LevelsPerSideMaxLimit = 1 << 22
	// LevelsPerSideMaxDefault applies when Config.LevelsPerSideMax is 0.
	LevelsPerSideMaxDefault = 1 << 20
	// InstrumentsMax bounds Config.Instruments (instrument indexes are uint16).
	InstrumentsMax = 1<<16 - 1
	// SessionsMaxLimit bounds Config.SessionsMax: 0xFFFF means "any session"
	// in MassCancel, so it cannot be a session index.
	SessionsMaxLimit = 0xFFFF
	// OrdersMaxLimit and ClOrdIDsMaxLimit keep pool and record indexes in int32.
	OrdersMaxLimit   = 1<<30 - 1
	ClOrdIDsMaxLimit = 1<<29 - 1
	// percentScale is the denominator of BandPercent.
	percentScale = 100
)

// InstrumentConfig is the reference data of one instrument. Prices are in
// ticks of TickSize; the matcher never sees decimals.
type InstrumentConfig struct {
	// ID is the instrument's wire id; it must not be 0, which means "any
	// instrument" in MassCancel.
	ID     uint32
	Symbol string
	// TickSize is the decimal price step (e.g. "0.01"). The matcher only
	// checks that it parses; the gateway uses it to turn FIX prices into ticks.
	TickSize string
	// LotSize: every order quantity must be a multiple of it.
	LotSize int64
	// MinQty and MaxQty bound an order's total quantity.
	MinQty int64
	MaxQty int64
	// RefPriceTicks is the reference price the band is centred on.
	RefPriceTicks int64
	// BandPercent is the half-width of the price band in percent of the
	// reference price: [ref×(100−p)/100 rounded up, ref×(100+p)/100 rounded
	// down], so the edges are rounded inward to whole ticks.
	BandPercent int64
	// Status is the trading status at start-up; 0 means Open.
	Status venue.TradingStatus
	// VolatilityBandTicks is the half-width of the dynamic band around the
	// last trade price (the configured reference before the first trade):
	// in continuous trading an order that would trade outside it does not,
	// and the instrument enters a volatility auction (auction.go). 0: off.
	VolatilityBandTicks int64
	// VolatilityAuctionNs is how long a volatility auction lasts before it
	// uncrosses; 0 means VolatilityAuctionNsDefault.
	VolatilityAuctionNs int64
	// CallExtension extends an opening or closing call that a phase change
	// would uncross further than VolatilityBandTicks from the reference
	// price, by a volatility auction (extendCall). Off, such a call
	// uncrosses at once, as journals written before the rule replay.
	CallExtension bool
}

// VolatilityAuctionNsDefault is the length of a volatility auction when the
// configuration does not give one: two minutes, as on Xetra.
const VolatilityAuctionNsDefault = 120_000_000_000

// Config sizes the matcher. Everything is allocated by NewMatcher; nothing
// grows afterwards.
type Config struct {
	// OrdersMax bounds the orders resting in all books together. A limit order
	// that could rest is rejected with CapacityExceeded when it is reached.
	OrdersMax int
	// ClOrdIDsMax bounds the ClOrdIDs remembered between two EndOfDay commands:
	// one per accepted order, one per accepted replace and one per done
	// cancel with CancelRemembersClOrdID (a place and cancel takes two). They
	// are kept so that duplicates are refused and PossResend and status
	// requests are answered for finished orders. At the bound, new orders and
	// replaces are rejected with CapacityExceeded, and a cancel is done
	// without recording its ClOrdID. It must be at least OrdersMax.
	ClOrdIDsMax int
	// StopsMax bounds the untriggered stop and stop-limit orders of all
	// instruments together; 0 means OrdersMax. A waiting stop also holds
	// one of the OrdersMax order slots. At either bound a new stop order is
	// rejected with CapacityExceeded.
	StopsMax int
	// SessionsMax bounds session indexes: commands from sessionIdx ≥
	// SessionsMax are rejected (CapacityExceeded or UnknownOrder).
	SessionsMax int
	// LevelsPerSideMax bounds the price levels of one book side (the band
	// width in ticks plus one); 0 means LevelsPerSideMaxDefault.
	LevelsPerSideMax int
	Instruments      []InstrumentConfig
	// InstrumentsMax bounds the configured instruments plus those added by
	// AddInstrument commands; 0 means len(Instruments) (none can be added).
	// The instrument table and its id index are sized for it at start-up.
	InstrumentsMax int
	// AccountStpModes gives the self-trade prevention mode of orders that
	// carry StpMode Default, per account. Accounts that are absent, and the
	// empty account, use CancelResting. Keys are at most AccountLength bytes.
	AccountStpModes map[string]venue.StpMode
	// Risk turns pre-trade risk limits on (risklimits.go); nil: no limits,
	// and no figure is kept. Session kill switches work either way.
	Risk *RiskConfig
	// IndicativeIntervalNs throttles AuctionIndicative events: at most one
	// per instrument per interval of command time (the commands' journaled
	// timestamps, never a clock), the last change published at the first
	// command after the interval. 0: after every command that changes it.
	IndicativeIntervalNs int64
}

// bandTicks returns the band edges, rounded inward to whole ticks, clamped to
// a price of at least one tick.
func bandTicks(refPriceTicks, bandPercent int64) (lowTicks, highTicks int64) {
	lowNum := refPriceTicks * (percentScale - bandPercent)
	lowTicks = lowNum / percentScale
	if lowNum%percentScale != 0 {
		lowTicks++
	}
	highTicks = refPriceTicks * (percentScale + bandPercent) / percentScale
	if lowTicks < 1 {
		lowTicks = 1
	}
	return lowTicks, highTicks
}

var errConfig = errors.New("core: invalid config")

func configError(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errConfig}, a...)...)
}

func (c *Config) stopsMax() int {
	if c.StopsMax == 0 {
		return c.OrdersMax
	}
	return c.StopsMax
}

func (c *Config) instrumentsMax() int {
	if c.InstrumentsMax == 0 {
		return len(c.Instruments)
	}
	return c.InstrumentsMax
}

func (c *Config) levelsPerSideMax() int {
	if c.LevelsPerSideMax == 0 {
		return LevelsPerSideMaxDefault
	}
	return c.LevelsPerSideMax
}

// validate checks every bound; NewMatcher calls it before allocating.
func (c *Config) validate() error {
	if c.OrdersMax <= 0 || c.OrdersMax > OrdersMaxLimit {
		return configError("OrdersMax %d is outside [1, %d]", c.OrdersMax, OrdersMaxLimit)
	}
	if c.ClOrdIDsMax < c.OrdersMax || c.ClOrdIDsMax > ClOrdIDsMaxLimit {
		return configError("ClOrdIDsMax %d is outside [OrdersMax=%d, %d]", c.ClOrdIDsMax, c.OrdersMax, ClOrdIDsMaxLimit)
	}
	if c.StopsMax < 0 || c.StopsMax > c.OrdersMax {
		return configError("StopsMax %d is outside [0, OrdersMax=%d]", c.StopsMax, c.OrdersMax)
	}
	if c.SessionsMax <= 0 || c.SessionsMax > SessionsMaxLimit {
		return configError("SessionsMax %d is outside [1, %d]", c.SessionsMax, SessionsMaxLimit)
	}
	if lm := c.levelsPerSideMax(); lm <= 0 || lm > LevelsPerSideMaxLimit {
		return configError("LevelsPerSideMax %d is outside [1, %d]", lm, LevelsPerSideMaxLimit)
	}
	if len(c.Instruments) == 0 || len(c.Instruments) > InstrumentsMax {
		return configError("%d instruments, want 1 to %d", len(c.Instruments), InstrumentsMax)
	}
	if n := c.instrumentsMax(); n < len(c.Instruments) || n > InstrumentsMax {
		return configError("InstrumentsMax %d is outside [%d instruments, %d]", n, len(c.Instruments), InstrumentsMax)
	}
	seen := make(map[uint32]bool, len(c.Instruments))
	for i := range c.Instruments {
		in := &c.Instruments[i]
		if seen[in.ID] {
			return configError("instrument id %d appears twice", in.ID)
		}
		seen[in.ID] = true
		if err := in.validate(c.levelsPerSideMax(), MaxQtyFor(c.OrdersMax, c.ClOrdIDsMax)); err != nil {
			return fmt.Errorf("%w (instrument %d %q)", err, in.ID, in.Symbol)
		}
	}
	for account, mode := range c.AccountStpModes {
		if len(account) == 0 || len(account) > venue.AccountLength {
			return configError("AccountStpModes key %q must be 1 to %d bytes", account, venue.AccountLength)
		}
		if !mode.Valid() || mode == venue.StpModeDefault {
			return configError("AccountStpModes[%q] = %d is not a concrete mode", account, mode)
		}
	}
	if c.IndicativeIntervalNs < 0 {
		return configError("IndicativeIntervalNs %d is negative", c.IndicativeIntervalNs)
	}
	return c.validateRisk()
}

// validate checks an instrument's bounds: its band at most levelsMax
// ticks wide, its MaxQty at most qtyMax (MaxQtyFor) and within
// OrderNotionalMax at the band's top.
func (in *InstrumentConfig) validate(levelsMax int, qtyMax int64) error {
	if in.ID == 0 {
		return configError("instrument id 0 is reserved for \"any instrument\"")
	}
	if in.Symbol == "" {
		return configError("empty symbol")
	}
	if _, err := decimal.ParseTick(in.TickSize); err != nil {
		return configError("tick size %q: %v", in.TickSize, err)
	}
	if in.LotSize <= 0 || in.MinQty <= 0 || in.MaxQty < in.MinQty {
		return configError("need LotSize > 0 and 0 < MinQty <= MaxQty, have %d, %d, %d", in.LotSize, in.MinQty, in.MaxQty)
	}
	if in.MaxQty > qtyMax {
		return configError("MaxQty %d is above %d, the most whose sums over OrdersMax + ClOrdIDsMax + 1 orders fit an int64", in.MaxQty, qtyMax)
	}
	if in.BandPercent <= 0 || in.BandPercent >= percentScale {
		return configError("BandPercent %d is outside (0, 100)", in.BandPercent)
	}
	if in.RefPriceTicks <= 0 || in.RefPriceTicks > RefPriceTicksMax {
		return configError("RefPriceTicks %d is outside [1, %d]", in.RefPriceTicks, int64(RefPriceTicksMax))
	}
	low, high := bandTicks(in.RefPriceTicks, in.BandPercent)
	if high < low {
		return configError("the band around %d ticks at %d%% holds no whole tick", in.RefPriceTicks, in.BandPercent)
	}
	if high-low+1 > int64(levelsMax) {
		return configError("the band spans %d ticks, more than LevelsPerSideMax %d", high-low+1, levelsMax)
	}
	// An order's notional (and cumNotionalTicks) is at most high × MaxQty.
	if in.MaxQty > MaxQtyAt(high) {
		return configError("MaxQty %d × band high %d ticks is above the largest order notional %d", in.MaxQty, high, int64(OrderNotionalMax))
	}
	if in.Status != 0 && !in.Status.Valid() {
		return configError("status %d is not a TradingStatus", in.Status)
	}
	if in.VolatilityBandTicks < 0 || in.VolatilityAuctionNs < 0 {
		return configError("VolatilityBandTicks %d and VolatilityAuctionNs %d must not be negative", in.VolatilityBandTicks, in.VolatilityAuctionNs)
	}
	return nil
}
