package pipeharness

import (
	"github.com/fixvenue/fixvenue/bench/loadmix"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Order flow constants.
const (
	instrumentID   = 1
	refPriceTicks  = 10_000 // 100.00 at tick 0.01
	spreadTicks    = 5      // passive orders rest at least this far from the reference
	passiveLevels  = 8      // ... spread over this many levels per side
	orderQty       = 10
	cancelLagUnits = 16 // a passive order is cancelled this many passive orders later
	clOrdIDDigits  = 12
)

// flow encodes command j of the schedule. Commands come in units of two:
// a passive unit is a new resting order and the cancel of the passive order
// placed cancelLagUnits passive units earlier (while there is none, a second
// resting order on the other side, never cancelled, seeds the book); a cross
// unit is a resting buy and a sell at the same price that fills it.
type flow struct {
	mix     loadmix.Mix
	clOrdID [1 + clOrdIDDigits]byte
	origID  [1 + clOrdIDDigits]byte
}

// unitIsPassive reports whether unit u is passive and its index among the
// passive units.
func (f *flow) unitIsPassive(u int64) (bool, int64) {
	switch f.mix {
	case loadmix.Passive:
		return true, u
	case loadmix.Cross:
		return false, 0
	}
	return u%2 == 1, u / 2
}

// encode writes command j into slot with the given seq and timestamp and
// reports whether it was a NewOrder (which takes a ClOrdID record).
func (f *flow) encode(slot []byte, j int64, seq uint64, timestampNs int64) (newOrder bool) {
	u, second := j/2, j%2 == 1
	passive, pi := f.unitIsPassive(u)
	switch {
	case !passive && !second:
		f.newOrder(slot, seq, timestampNs, 'B', u, venue.SideBuy, refPriceTicks, "B")
	case !passive:
		f.newOrder(slot, seq, timestampNs, 'S', u, venue.SideSell, refPriceTicks, "S")
	case !second:
		side, px := passiveSide(pi)
		f.newOrder(slot, seq, timestampNs, 'P', pi, side, px, "P")
	case pi < cancelLagUnits:
		side, px := passiveSide(pi + 1) // the other side: seeds a standing book
		f.newOrder(slot, seq, timestampNs, 'Q', pi, side, px, "P")
	default:
		side, _ := passiveSide(pi - cancelLagUnits)
		f.cancel(slot, seq, timestampNs, pi, pi-cancelLagUnits, side)
		return false
	}
	return true
}

// passiveSide alternates sides and spreads prices over passiveLevels levels.
func passiveSide(pi int64) (venue.Side, int64) {
	off := spreadTicks + pi/2%passiveLevels
	if pi%2 == 0 {
		return venue.SideBuy, refPriceTicks - off
	}
	return venue.SideSell, refPriceTicks + off
}

// putID writes kind and n as a ClOrdID into dst and returns it.
func putID(dst *[1 + clOrdIDDigits]byte, kind byte, n int64) []byte {
	dst[0] = kind
	for i := clOrdIDDigits; i >= 1; i-- {
		dst[i] = byte('0' + n%10)
		n /= 10
	}
	return dst[:]
}

func (f *flow) newOrder(slot []byte, seq uint64, timestampNs int64, kind byte, n int64, side venue.Side, priceTicks int64, account string) {
	var c venue.NewOrder
	_ = c.WrapEncode(slot, 0) // ring slots hold every command
	c.SetSeq(seq)
	c.SetTimestampNs(timestampNs)
	c.SetSide(side)
	c.SetOrdType(venue.OrdTypeLimit)
	c.SetInstrumentID(instrumentID)
	c.SetTimeInForce(venue.TimeInForceGTC)
	c.SetStpMode(venue.StpModeDefault)
	c.SetPriceTicks(priceTicks)
	c.SetQty(orderQty)
	_ = c.SetClOrdID(putID(&f.clOrdID, kind, n))
	_ = c.SetAccountString(account)
}

func (f *flow) cancel(slot []byte, seq uint64, timestampNs int64, n, target int64, side venue.Side) {
	var c venue.CancelOrder
	_ = c.WrapEncode(slot, 0)
	c.SetSeq(seq)
	c.SetTimestampNs(timestampNs)
	c.SetSide(side)
	c.SetInstrumentID(instrumentID)
	_ = c.SetClOrdID(putID(&f.clOrdID, 'C', n))
	_ = c.SetOrigClOrdID(putID(&f.origID, 'P', target))
}

// endOfDay writes an EndOfDay command (it expires DAY orders only, and the
// flow's orders are GTC, so it causes no event).
func endOfDay(slot []byte, seq uint64, timestampNs int64) {
	var c venue.EndOfDay
	_ = c.WrapEncode(slot, 0)
	c.SetSeq(seq)
	c.SetTimestampNs(timestampNs)
}
