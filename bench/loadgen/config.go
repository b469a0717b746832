package loadgen

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fixvenue/fixvenue/bench/loadmix"
)

// Bounds of one run.
const (
	// SessionsMax bounds the FIX sessions of one run.
	SessionsMax = 256
	// OrdersPerRunMax bounds the orders of one run (warm-up included): the
	// per-order answer flags are allocated up front, one byte per order
	// and one per cancel (64 MiB at the bound).
	OrdersPerRunMax = 1 << 25
	// RateMax bounds the offered rate, orders per second.
	RateMax = 1_000_000
	// cancelLagSlots is how many of its own orders a session sends between
	// a passive order and its cancel, so the book holds a few resting
	// orders per session and stays flat.
	cancelLagSlots = 4
	// sendBatchMax bounds the messages one write carries when the sender
	// is behind its schedule; each slot is an order plus perhaps a cancel.
	sendBatchMax = 64
	// symbolBytesMax and priceBytesMax bound the text fields of the templates.
	symbolBytesMax = 32
	priceBytesMax  = 20
)

// Config describes one open-loop run.
type Config struct {
	Addr         string // venue FIX address, host:port
	Sessions     int    // number of FIX sessions
	FirstSession int    // CompID of the first session is SenderPrefix+FirstSession
	SenderPrefix string // "CLIENT"
	TargetCompID string // "VENUE"
	Password     string // Password (554) on Logon, if any
	// RatePerSecond is the offered rate of NewOrderSingle over all sessions.
	// Cancels of passive orders come on top of it.
	RatePerSecond float64
	Duration      time.Duration // measured part of the schedule
	Warmup        time.Duration // unrecorded part before it
	Drain         time.Duration // wait for answers after the last due time
	Mix           loadmix.Mix   // passive: resting buys below and sells above the price, each cancelled cancelLagSlots orders later; cross: buy/sell pairs at one price that trade; mixed: both in turn
	Symbol        string
	Price         string // decimal price of crossing orders, inside the band
	Spread        string // passive orders rest at Price−Spread (buy) and Price+Spread (sell)
	Qty           int64
	HeartBtIntS   int
	LogonTimeout  time.Duration
	// RunID prefixes every ClOrdID (runIDBytes of [0-9A-Z]); empty means
	// one derived from the clock, so that runs never collide.
	RunID string
	// Progress receives a line each second while the run goes; nil: silent.
	Progress io.Writer
}

// DefaultConfig is the demo venue's setup: CLIENT1… → VENUE, ACME around 100.00.
func DefaultConfig() Config {
	return Config{
		Addr: "127.0.0.1:9878", Sessions: 4, FirstSession: 1, SenderPrefix: "CLIENT", TargetCompID: "VENUE",
		RatePerSecond: 5000, Duration: 10 * time.Second, Warmup: 2 * time.Second, Drain: 5 * time.Second,
		Mix: loadmix.Passive, Symbol: "ACME", Price: "100.00", Spread: "0.50", Qty: 10,
		HeartBtIntS: 30, LogonTimeout: 10 * time.Second,
	}
}

// Validate refuses a configuration no run can take, naming each fault: Run
// refuses it so before it dials, and a caller may ask first.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Addr == "" {
		bad("address is empty")
	}
	if c.Sessions < 1 || c.Sessions > SessionsMax {
		bad("sessions %d outside [1, %d]", c.Sessions, SessionsMax)
	}
	// Written so that NaN fails it too: every comparison with NaN is
	// false, and a NaN rate passed `<= 0 || > RateMax`, then sized the
	// run's tables from it (a panic) or, in a ramp, made no step at all.
	rateOK := c.RatePerSecond > 0 && c.RatePerSecond <= RateMax
	if !rateOK {
		bad("rate %g outside (0, %d] orders/s", c.RatePerSecond, RateMax)
	}
	timesOK := c.Duration > 0 && c.Warmup >= 0
	if !timesOK || c.Drain < 0 {
		bad("duration must be positive, warm-up and drain not negative")
	}
	// The orders are counted for a rate and times a run can take, and in
	// float64 before any int64: a rate past RateMax (1e20), or a warm-up
	// and duration whose sum passes a time.Duration, overflowed the count,
	// which then added a second, wrong reason ("makes no order to
	// measure: raise the rate").
	if orders := c.RatePerSecond * (c.Warmup.Seconds() + c.Duration.Seconds()); rateOK && timesOK && orders > OrdersPerRunMax {
		bad("%.0f orders in the run, more than %d: shorten it or lower the rate", orders, OrdersPerRunMax)
	} else if rateOK && timesOK && c.totalOrders()-c.warmupOrders() < 1 {
		// Orders are due every 1/rate: a duration shorter than that
		// measured none, and a run of nothing measured was reported held,
		// its p99 the zero of an empty histogram.
		bad("%g orders/s for %v makes no order to measure: lengthen the duration or raise the rate", c.RatePerSecond, c.Duration)
	}
	if c.Mix > loadmix.Mixed {
		bad("unknown mix %d", c.Mix)
	}
	if c.Symbol == "" || len(c.Symbol) > symbolBytesMax || strings.ContainsRune(c.Symbol, soh) {
		bad("symbol must be 1 to %d characters", symbolBytesMax)
	}
	if c.Qty <= 0 {
		bad("qty must be positive")
	}
	if c.HeartBtIntS <= 0 {
		bad("heartbeat interval must be positive")
	}
	if c.RunID != "" && !validRunID(c.RunID) {
		bad("run id %q must be %d characters of 0-9 A-Z", c.RunID, runIDBytes)
	}
	if _, _, err := passivePrices(c.Price, c.Spread); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("loadgen: %w", errors.Join(errs...))
	}
	return nil
}

// totalOrders is the number of orders in the schedule, warm-up included.
func (c *Config) totalOrders() int64 {
	return int64(c.RatePerSecond * (c.Warmup + c.Duration).Seconds())
}

// warmupOrders is the number of orders due in the warm-up, sent but not measured.
func (c *Config) warmupOrders() int64 { return int64(c.RatePerSecond * c.Warmup.Seconds()) }

func validRunID(s string) bool {
	if len(s) != runIDBytes {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// newRunID derives a run id from the clock: milliseconds in base 36, so
// two runs started a millisecond apart differ (it wraps every 25 days).
func newRunID(now time.Time) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	v := uint64(now.UnixMilli())
	var b [runIDBytes]byte
	for i := runIDBytes - 1; i >= 0; i-- {
		b[i] = digits[v%36]
		v /= 36
	}
	return string(b[:])
}

// fixedPoint is a decimal as mantissa × 10^-scale.
type fixedPoint struct {
	mantissa int64
	scale    int
}

// parseFixedPoint reads a non-negative decimal such as "100.00".
func parseFixedPoint(s string) (fixedPoint, bool) {
	if s == "" || len(s) > priceBytesMax {
		return fixedPoint{}, false
	}
	var f fixedPoint
	seenDot := false
	for _, c := range []byte(s) {
		switch {
		case c == '.' && !seenDot:
			seenDot = true
		case c >= '0' && c <= '9':
			f.mantissa = f.mantissa*10 + int64(c-'0')
			if seenDot {
				f.scale++
			}
		default:
			return fixedPoint{}, false
		}
	}
	return f, s != "."
}

func (f fixedPoint) rescale(scale int) int64 {
	m := f.mantissa
	for s := f.scale; s < scale; s++ {
		m *= 10
	}
	return m
}

func formatFixedPoint(m int64, scale int) string {
	s := strconv.FormatInt(m, 10)
	if scale == 0 {
		return s
	}
	for len(s) <= scale {
		s = "0" + s
	}
	return s[:len(s)-scale] + "." + s[len(s)-scale:]
}

// passivePrices returns the prices of passive buys and sells, price ∓
// spread, in decimal text with the finer of the two scales.
func passivePrices(price, spread string) (buy, sell string, err error) {
	p, okP := parseFixedPoint(price)
	s, okS := parseFixedPoint(spread)
	if !okP || !okS || p.mantissa <= 0 {
		return "", "", fmt.Errorf("price %q and spread %q must be decimals, the price positive", price, spread)
	}
	scale := max(p.scale, s.scale)
	pm, sm := p.rescale(scale), s.rescale(scale)
	if sm <= 0 || sm >= pm {
		return "", "", fmt.Errorf("spread %q must be positive and below the price %q, so passive orders never cross", spread, price)
	}
	return formatFixedPoint(pm-sm, scale), formatFixedPoint(pm+sm, scale), nil
}
