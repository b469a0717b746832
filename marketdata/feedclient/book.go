package feedclient

import (
	"errors"
	"math"
	"math/big"
	"strconv"

	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// Errors of book maintenance. Each makes the client resynchronise from a
// snapshot: the feed and the book disagree, so the book cannot be trusted.
var (
	ErrInconsistent = errors.New("feedclient: feed message disagrees with the book")
	ErrLevelsFull   = errors.New("feedclient: more price levels than LevelsMax")
	// ErrSeqWentBack reports a feed that numbers below what the client
	// applied: a venue started on another data directory.
	ErrSeqWentBack = errors.New("feedclient: the feed's sequence went back (the venue restarted on another data directory?)")
)

// Level is one price level.
type Level struct {
	PriceTicks int64
	Qty        int64
	OrderCount int
}

// Book is the client's view of one instrument: market by price, the trade
// summary and the status. Read it only on the client's goroutine (in a
// callback or through Client.Inspect); copy what you keep.
type Book struct {
	InstrumentID uint32
	Symbol       string
	TickMantissa int64 // tick size = TickMantissa × 10^TickExponent
	TickExponent int8
	LotSize      int64
	Defined      bool // an InstrumentDefinition was received

	Status       mdsbe.TradingStatus
	StatusReason mdsbe.StatusReason // why the last InstrumentStatus came, when the venue said (None after a snapshot, which does not): EndOfDay for the day's end, which leaves the status as it was
	// Auction is the last AuctionUpdate: during a call the indicative
	// uncross, after it the uncross itself (Kind tells which).
	Auction Auction
	RptSeq  uint64
	// LastTradePriceTicks and LastTradeQty are the instrument's last
	// trade, of this day or an earlier one; Volume is the quantity traded
	// since the last end of day.
	LastTradePriceTicks int64
	LastTradeQty        int64
	Volume              int64

	Bids []Level // best first
	Asks []Level // best first

	levelsMax int
}

// Auction is what an AuctionUpdate says: the price a call uncrosses (or
// would uncross) at, the quantity that trades there, what is left over and
// on which side, and the rule that chose the price.
type Auction struct {
	Kind          mdsbe.AuctionUpdateKind
	PriceTicks    int64
	MatchedQty    int64
	ImbalanceSide mdsbe.ImbalanceSide
	ImbalanceQty  int64
	Rule          mdsbe.AuctionRule
}

func (b *Book) side(s mdsbe.Side) (*[]Level, bool, error) {
	switch s {
	case mdsbe.SideBuy:
		return &b.Bids, true, nil
	case mdsbe.SideSell:
		return &b.Asks, false, nil
	}
	return nil, false, ErrInconsistent
}

func better(bid bool, a, c int64) bool {
	if bid {
		return a > c
	}
	return a < c
}

// applyLevel applies a PriceLevelUpdate. The level number must agree with
// the price's place in the book; any disagreement is ErrInconsistent.
func (b *Book) applyLevel(m *mdsbe.PriceLevelUpdate) error {
	levels, bid, err := b.side(m.Side())
	if err != nil {
		return err
	}
	ls := *levels
	i := int(m.LevelNum()) - 1
	px := m.PriceTicks()
	switch m.Action() {
	case mdsbe.UpdateActionNew:
		if i < 0 || i > len(ls) || (i > 0 && !better(bid, ls[i-1].PriceTicks, px)) ||
			(i < len(ls) && !better(bid, px, ls[i].PriceTicks)) || m.Qty() <= 0 || m.OrderCount() == 0 {
			return ErrInconsistent
		}
		if len(ls) >= b.levelsMax {
			return ErrLevelsFull
		}
		ls = append(ls, Level{})
		copy(ls[i+1:], ls[i:])
		ls[i] = Level{PriceTicks: px, Qty: m.Qty(), OrderCount: int(m.OrderCount())}
	case mdsbe.UpdateActionChange:
		if i < 0 || i >= len(ls) || ls[i].PriceTicks != px || m.Qty() <= 0 || m.OrderCount() == 0 {
			return ErrInconsistent
		}
		ls[i].Qty, ls[i].OrderCount = m.Qty(), int(m.OrderCount())
	case mdsbe.UpdateActionDelete:
		if i < 0 || i >= len(ls) || ls[i].PriceTicks != px {
			return ErrInconsistent
		}
		ls = append(ls[:i], ls[i+1:]...)
	default:
		return ErrInconsistent
	}
	*levels = ls
	return nil
}

// addSnapshotOrder adds one order of a snapshot. Orders come best level
// first, so an order either joins the last level or opens a worse one.
func (b *Book) addSnapshotOrder(side mdsbe.Side, priceTicks, qty int64) error {
	levels, bid, err := b.side(side)
	if err != nil {
		return err
	}
	if qty <= 0 {
		return ErrInconsistent
	}
	ls := *levels
	if n := len(ls); n > 0 && ls[n-1].PriceTicks == priceTicks {
		ls[n-1].Qty += qty
		ls[n-1].OrderCount++
		return nil
	} else if n > 0 && !better(bid, ls[n-1].PriceTicks, priceTicks) {
		return ErrInconsistent
	}
	if len(ls) >= b.levelsMax {
		return ErrLevelsFull
	}
	*levels = append(ls, Level{PriceTicks: priceTicks, Qty: qty, OrderCount: 1})
	return nil
}

func (b *Book) reset() {
	b.Bids, b.Asks = b.Bids[:0], b.Asks[:0]
	b.RptSeq, b.LastTradePriceTicks, b.LastTradeQty, b.Volume = 0, 0, 0, 0
	b.Auction = Auction{} // a snapshot carries a call's indicative
	// A snapshot gives the status, not why it changed: a reason kept from
	// an earlier InstrumentStatus may be of another status.
	b.StatusReason = mdsbe.StatusReasonNone
}

// AppendPrice appends priceTicks as a decimal number in the instrument's
// price units (ticks × tick size), exactly, without floating point. Before
// the definition is known it appends the tick count.
func (b *Book) AppendPrice(dst []byte, priceTicks int64) []byte {
	if !b.Defined {
		return strconv.AppendInt(dst, priceTicks, 10)
	}
	return AppendDecimal(dst, priceTicks, b.TickMantissa, b.TickExponent)
}

// AppendDecimal appends ticks × mantissa × 10^exponent as a plain decimal
// number (valid JSON), exactly, without floating point.
func AppendDecimal(dst []byte, ticks, mantissa int64, exponent int8) []byte {
	var digits []byte
	var scratch [24]byte
	neg := false
	if v := ticks * mantissa; mantissa == 0 || (v/mantissa == ticks && !(ticks == -1 && mantissa == math.MinInt64)) {
		neg = v < 0
		digits = strconv.AppendUint(scratch[:0], absUint(v), 10)
	} else { // the product overflows int64: multiply exactly
		p := new(big.Int).Mul(big.NewInt(ticks), big.NewInt(mantissa))
		neg = p.Sign() < 0
		digits = p.Abs(p).Append(scratch[:0], 10)
	}
	if neg {
		dst = append(dst, '-')
	}
	if exponent >= 0 {
		dst = append(dst, digits...)
		if len(digits) == 1 && digits[0] == '0' {
			return dst
		}
		for i := int8(0); i < exponent; i++ {
			dst = append(dst, '0')
		}
		return dst
	}
	scale := int(-exponent)
	if len(digits) <= scale { // a value below one: "0." then zeros, then the digits
		dst = append(dst, '0', '.')
		for i := len(digits); i < scale; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-scale]...)
	return append(append(dst, '.'), digits[len(digits)-scale:]...)
}

func absUint(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}
