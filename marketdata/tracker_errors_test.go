package marketdata

import (
	"errors"
	"testing"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

func cancelledEvent(causeSeq, orderID uint64, side venue.Side, qty int64) []byte {
	buf := make([]byte, venue.OrderCancelledEncodedLength)
	var m venue.OrderCancelled
	_ = m.WrapEncode(buf, 0)
	m.SetCauseSeq(causeSeq)
	m.SetInstrumentID(1)
	m.SetSide(side)
	m.SetOrderID(orderID)
	m.SetCancelledQty(qty)
	return buf
}

func fillEvent(causeSeq, orderID uint64, lastQty, leavesQty int64) []byte {
	buf := make([]byte, venue.FillEncodedLength)
	var m venue.Fill
	_ = m.WrapEncode(buf, 0)
	m.SetCauseSeq(causeSeq)
	m.SetInstrumentID(1)
	m.SetSide(venue.SideBuy)
	m.SetOrderID(orderID)
	m.SetLastPriceTicks(1000)
	m.SetLastQty(lastQty)
	m.SetLeavesQty(leavesQty)
	m.SetDisplayQty(leavesQty)
	return buf
}

// TestTrackerBoundsAndContractErrors: every bound and every event that
// contradicts the book is a named error, never a silent drop.
func TestTrackerBoundsAndContractErrors(t *testing.T) {
	newTracker := func(ordersMax, levelsMax int) *Tracker {
		b, _ := packet.NewBuilder(packet.BuilderConfig{Channel: 1, Sequenced: true, Sink: discardSink{}})
		defs := simTrackerDefs()
		defs[0].LevelsMax = levelsMax
		tr, err := NewTracker(TrackerConfig{Instruments: defs, OrdersMax: ordersMax}, b)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	steps := func(tr *Tracker, events ...[]byte) error {
		for _, ev := range events {
			if err := tr.Apply(ev); err != nil {
				return err
			}
		}
		return tr.EndCommand()
	}
	cases := []struct {
		name   string
		orders int
		levels int
		events [][]byte
		want   error
	}{
		{"levels full", 8, 2, [][]byte{acceptedEvent(1, 1, venue.SideBuy, 1000, 1), acceptedEvent(2, 2, venue.SideBuy, 999, 1),
			acceptedEvent(3, 3, venue.SideBuy, 998, 1)}, ErrLevelsFull},
		{"orders full", 1, 8, func() [][]byte {
			var evs [][]byte
			for i := uint64(1); i <= 1+pendingMax+1; i++ {
				evs = append(evs, acceptedEvent(i, i, venue.SideBuy, 1000, 1))
			}
			return evs
		}(), ErrOrdersFull},
		// The ids from RefillIDBase up are the feed's own, for refilled
		// slices: an order of the venue there would share one.
		{"order id among the refills' public ids", 8, 8, [][]byte{acceptedEvent(1, uint64(RefillIDBase)+1, venue.SideBuy, 1000, 1)}, ErrInconsistent},
		{"duplicate order id", 8, 8, [][]byte{acceptedEvent(1, 1, venue.SideBuy, 1000, 1), acceptedEvent(2, 1, venue.SideBuy, 1000, 1)}, ErrDuplicateOrder},
		{"unknown order", 8, 8, [][]byte{cancelledEvent(1, 42, venue.SideBuy, 1)}, ErrUnknownOrder},
		{"cancel of the wrong quantity", 8, 8, [][]byte{acceptedEvent(1, 1, venue.SideBuy, 1000, 5), cancelledEvent(2, 1, venue.SideBuy, 4)}, ErrInconsistent},
		{"fill that does not add up", 8, 8, [][]byte{acceptedEvent(1, 1, venue.SideBuy, 1000, 5), fillEvent(2, 1, 2, 2)}, ErrInconsistent},
		{"not an event", 8, 8, [][]byte{{1, 2, 3}}, nil},
	}
	for _, tc := range cases {
		err := steps(newTracker(tc.orders, tc.levels), tc.events...)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%s: accepted", tc.name)
			}
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	unknown := acceptedEvent(1, 1, venue.SideBuy, 1000, 1)
	var m venue.OrderAccepted
	_ = m.WrapDecode(unknown, 0)
	m.SetInstrumentID(99)
	if err := newTracker(8, 8).Apply(unknown); !errors.Is(err, ErrUnknownInstrument) {
		t.Errorf("unknown instrument: %v", err)
	}
}

func TestNewInstrumentDef(t *testing.T) {
	cases := []struct {
		tick   string
		status venue.TradingStatus
		want   InstrumentDef
		ok     bool
	}{
		{"0.01", 0, InstrumentDef{ID: 1, Symbol: "X", TickMantissa: 1, TickExponent: -2, LotSize: 10, Status: mdsbe.TradingStatusOpen}, true},
		{"0.01", venue.TradingStatusOpen, InstrumentDef{ID: 1, Symbol: "X", TickMantissa: 1, TickExponent: -2, LotSize: 10, Status: mdsbe.TradingStatusOpen}, true},
		{"0.05", venue.TradingStatusHalted, InstrumentDef{ID: 1, Symbol: "X", TickMantissa: 5, TickExponent: -2, LotSize: 10, Status: mdsbe.TradingStatusHalted}, true},
		{"25", venue.TradingStatusClosed, InstrumentDef{ID: 1, Symbol: "X", TickMantissa: 25, TickExponent: 0, LotSize: 10, Status: mdsbe.TradingStatusClosed}, true},
		{"0.001", 9, InstrumentDef{}, false},
	}
	for _, tc := range cases {
		tick, err := decimal.ParseTick(tc.tick)
		if err != nil {
			t.Fatal(err)
		}
		got, err := NewInstrumentDef(1, "X", tick, 10, tc.status)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("%s %v: got %+v, %v", tc.tick, tc.status, got, err)
		}
	}
}
