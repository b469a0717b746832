package cluster

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// testMatcherConfig is a small venue with one instrument around 100.00.
func testMatcherConfig() core.Config {
	return core.Config{OrdersMax: 50_000, ClOrdIDsMax: 200_000, SessionsMax: 8, LevelsPerSideMax: 4096,
		Instruments: []core.InstrumentConfig{{ID: 1, Symbol: "AAA", TickSize: "0.01", LotSize: 1, MinQty: 1,
			MaxQty: 1_000_000, RefPriceTicks: 10_000, BandPercent: 10}}}
}

// orderFlow makes real commands (limit orders that rest and trade, and
// cancels) from a seed.
type orderFlow struct {
	rng     *rand.Rand
	nextID  int
	clockNs int64
	buf     [256]byte
}

func newOrderFlow(seed uint64) *orderFlow {
	return &orderFlow{rng: rand.New(rand.NewPCG(seed, 11)), clockNs: 1_780_000_000_000_000_000}
}

// next encodes the command that will carry seq.
func (f *orderFlow) next(t testing.TB, seq uint64) []byte {
	t.Helper()
	f.clockNs += int64(1 + f.rng.IntN(50_000))
	f.nextID++
	session := uint16(1 + f.rng.IntN(4))
	side := venue.SideBuy
	if f.rng.IntN(2) == 0 {
		side = venue.SideSell
	}
	if f.rng.IntN(10) < 8 || f.nextID < 3 {
		return f.limit(t, seq, session, side, 10_000+int64(f.rng.IntN(11))-5, int64(1+f.rng.IntN(100)))
	}
	var m venue.CancelOrder
	err := m.WrapEncode(f.buf[:], 0)
	f.setHead(m, seq, session, side)
	if err == nil {
		err = m.SetClOrdIDString(fmt.Sprintf("o%d", f.nextID))
	}
	if err == nil {
		err = m.SetOrigClOrdIDString(fmt.Sprintf("o%d", 1+f.rng.IntN(f.nextID-1)))
	}
	if err != nil {
		t.Fatal(err)
	}
	return f.buf[:m.EncodedLength()]
}

// orderCommand is what an order command sets first (venue.NewOrder, venue.CancelOrder).
type orderCommand interface {
	SetSeq(uint64)
	SetTimestampNs(int64)
	SetSessionIdx(uint16)
	SetSide(venue.Side)
	SetInstrumentID(uint32)
}

// setHead sets the fields every order command of the flow shares: instrument 1, the flow's clock.
func (f *orderFlow) setHead(m orderCommand, seq uint64, session uint16, side venue.Side) {
	m.SetSeq(seq)
	m.SetTimestampNs(f.clockNs)
	m.SetSessionIdx(session)
	m.SetSide(side)
	m.SetInstrumentID(1)
}

// limit encodes a day limit order on instrument 1 with ClOrdID o<nextID>.
func (f *orderFlow) limit(t testing.TB, seq uint64, session uint16, side venue.Side, priceTicks, qty int64) []byte {
	t.Helper()
	var m venue.NewOrder
	err := m.WrapEncode(f.buf[:], 0)
	f.setHead(m, seq, session, side)
	m.SetOrdType(venue.OrdTypeLimit)
	m.SetTimeInForce(venue.TimeInForceDay)
	m.SetPriceTicks(priceTicks)
	m.SetQty(qty)
	if err == nil {
		err = m.SetClOrdIDString(fmt.Sprintf("o%d", f.nextID))
	}
	if err == nil {
		err = m.SetAccountString(fmt.Sprintf("acct%d", session))
	}
	if err != nil {
		t.Fatal(err)
	}
	return f.buf[:m.EncodedLength()]
}

// batch encodes count commands from seq on as journal frames.
func (f *orderFlow) batch(t testing.TB, seq uint64, count int) []byte {
	var frames []byte
	for i := range count {
		frames = journal.AppendFrame(frames, seq+uint64(i), f.next(t, seq+uint64(i)))
	}
	return frames
}
