package marketdata

import (
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The emit functions write one feed message each into the packet builder,
// numbering it with the instrument's next rptSeq. The builder assigns the
// channel sequence number. Every message is stamped (through its packet)
// with the time of the event being applied, never the wall clock, so a
// replay writes the same bytes.

func (t *Tracker) nextRptSeq(in *instrument) uint64 {
	in.rptSeq++
	if !in.dirty {
		in.dirty = true
		t.dirty = append(t.dirty, t.instIndex[in.def.ID]) // within capacity: one entry per instrument
	}
	t.messagesQueued++
	return in.rptSeq
}

func (t *Tracker) emitAdded(in *instrument, o *order) error {
	buf, off, err := t.out.Reserve(mdsbe.OrderAddedEncodedLength, t.timeNs)
	if err != nil {
		return err
	}
	m := &t.mAdded
	if err := m.WrapEncode(buf, off); err != nil {
		return err
	}
	m.SetInstrumentID(uint32(in.def.ID))
	m.SetSide(wireSide(o.side))
	m.SetOrderID(uint64(o.pub))
	m.SetRptSeq(t.nextRptSeq(in))
	m.SetPriceTicks(o.priceTicks)
	m.SetQty(o.leavesQty)
	return nil
}

func (t *Tracker) emitModified(in *instrument, o *order, priorityLost bool) error {
	buf, off, err := t.out.Reserve(mdsbe.OrderModifiedEncodedLength, t.timeNs)
	if err != nil {
		return err
	}
	m := &t.mModified
	if err := m.WrapEncode(buf, off); err != nil {
		return err
	}
	m.SetInstrumentID(uint32(in.def.ID))
	m.SetSide(wireSide(o.side))
	if priorityLost {
		m.SetPriorityLost(mdsbe.BooleanTypeTrue)
	} else {
		m.SetPriorityLost(mdsbe.BooleanTypeFalse)
	}
	m.SetOrderID(uint64(o.pub))
	m.SetRptSeq(t.nextRptSeq(in))
	m.SetPriceTicks(o.priceTicks)
	m.SetQty(o.leavesQty)
	return nil
}

func (t *Tracker) emitExecuted(in *instrument, o *order, tradeID uint64, priceTicks, qty int64) error {
	buf, off, err := t.out.Reserve(mdsbe.OrderExecutedEncodedLength, t.timeNs)
	if err != nil {
		return err
	}
	m := &t.mExecuted
	if err := m.WrapEncode(buf, off); err != nil {
		return err
	}
	m.SetInstrumentID(uint32(in.def.ID))
	m.SetSide(wireSide(o.side))
	m.SetOrderID(uint64(o.pub))
	m.SetRptSeq(t.nextRptSeq(in))
	m.SetTradeID(tradeID)
	m.SetPriceTicks(priceTicks)
	m.SetExecQty(qty)
	m.SetLeavesQty(o.leavesQty)
	return nil
}

func (t *Tracker) emitDeleted(in *instrument, o *order) error {
	buf, off, err := t.out.Reserve(mdsbe.OrderDeletedEncodedLength, t.timeNs)
	if err != nil {
		return err
	}
	m := &t.mDeleted
	if err := m.WrapEncode(buf, off); err != nil {
		return err
	}
	m.SetInstrumentID(uint32(in.def.ID))
	m.SetSide(wireSide(o.side))
	m.SetOrderID(uint64(o.pub))
	m.SetRptSeq(t.nextRptSeq(in))
	return nil
}

// emitLevel publishes the level at index li. For Delete the caller removes
// the level after this call, so levelNum is its rank before the removal.
func (t *Tracker) emitLevel(in *instrument, s *bookSide, li int, action mdsbe.UpdateAction) error {
	buf, off, err := t.out.Reserve(mdsbe.PriceLevelUpdateEncodedLength, t.timeNs)
	if err != nil {
		return err
	}
	m := &t.mLevel
	if err := m.WrapEncode(buf, off); err != nil {
		return err
	}
	lv := &s.levels[li]
	m.SetInstrumentID(uint32(in.def.ID))
	if s.bid {
		m.SetSide(mdsbe.SideBuy)
	} else {
		m.SetSide(mdsbe.SideSell)
	}
	m.SetAction(action)
	m.SetLevelNum(uint32(s.levelNum(li)))
	m.SetRptSeq(t.nextRptSeq(in))
	m.SetPriceTicks(lv.priceTicks)
	if action != mdsbe.UpdateActionDelete {
		m.SetQty(lv.qty)
		m.SetOrderCount(uint32(lv.orderCount))
	}
	return nil
}

// emitTrade publishes one trade from its aggressor's Fill: a trade has
// exactly one aggressor Fill, so each tradeId is published once.
func (t *Tracker) emitTrade(in *instrument, f *venue.Fill) error {
	in.lastTradePriceTicks = f.LastPriceTicks()
	in.lastTradeQty = f.LastQty()
	in.volume += f.LastQty()
	buf, off, err := t.out.Reserve(mdsbe.TradeEncodedLength, t.timeNs)
	if err != nil {
		return err
	}
	m := &t.mTrade
	if err := m.WrapEncode(buf, off); err != nil {
		return err
	}
	m.SetInstrumentID(uint32(in.def.ID))
	buyID, sellID := t.publicID(f.OrderID()), t.publicID(f.ContraOrderID())
	m.SetAuction(mdsbe.BooleanType(f.Auction()))
	if f.Side() == venue.SideBuy {
		m.SetAggressorSide(mdsbe.SideBuy)
	} else {
		m.SetAggressorSide(mdsbe.SideSell)
		buyID, sellID = sellID, buyID
	}
	m.SetRptSeq(t.nextRptSeq(in))
	m.SetTradeID(f.TradeID())
	m.SetPriceTicks(f.LastPriceTicks())
	m.SetQty(f.LastQty())
	m.SetBuyOrderID(buyID)
	m.SetSellOrderID(sellID)
	m.SetVolume(in.volume)
	m.SetTransactTimeNs(t.timeNs)
	return nil
}

func (t *Tracker) emitStatus(in *instrument) error {
	buf, off, err := t.out.Reserve(mdsbe.InstrumentStatusEncodedLength, t.timeNs)
	if err != nil {
		return err
	}
	m := &t.mStatus
	if err := m.WrapEncode(buf, off); err != nil {
		return err
	}
	m.SetInstrumentID(uint32(in.def.ID))
	m.SetStatus(in.status)
	m.SetReason(in.statusReason)
	in.statusReason = mdsbe.StatusReasonNone
	m.SetRptSeq(t.nextRptSeq(in))
	m.SetTransactTimeNs(t.timeNs)
	return nil
}

// publicID is the id the feed shows an order of a trade under: a refilled
// slice's own, not the venue's OrderID, which would link it to the slices
// before it. An order the tracker does not hold (a market order that waited
// for an uncross) was never refilled.
func (t *Tracker) publicID(id uint64) uint64 {
	if oi := t.index.get(OrderID(id)); oi != noOrder {
		return uint64(t.orders[oi].pub)
	}
	return id
}
