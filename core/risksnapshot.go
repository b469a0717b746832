package core

import (
	"bufio"
	"encoding/binary"
	"fmt"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The risk section of a snapshot (see snapshot.go):
//
//	u32 subjects, u32 cells (subjects × listed instruments; 0 when risk is off)
//	per account  16 bytes: its name, NUL-padded (subjects after the sessions)
//	per subject  riskSubjectWords i64 (limits, then figures; see
//	             riskSubject.words), u8 killed
//	per cell     riskCellWords i64 (see riskCell.words), u8 overrides;
//	             subject by subject, each in instrument order
//
// Cells are written for the listed instruments (configured and added)
// only, not for the room Config.InstrumentsMax keeps, so a snapshot does
// not depend on that bound. The unlisted
// instruments' cells are made fresh from the restored subject limits.
//
// Limits are in it because operators change them with journaled commands
// that a replay from this snapshot no longer sees. Subjects follow their
// index (sessions, then accounts in sorted order), so a venue restarted with
// other accounts or instruments refuses the snapshot rather than giving one
// account's figures to another.

const (
	riskSubjectWords = 15
	riskCellWords    = 7
)

func (s *riskSubject) words() [riskSubjectWords]*int64 {
	return [...]*int64{&s.maxOrderQty, &s.maxOrderNotional, &s.maxOpenOrders, &s.maxOpenNotional, &s.creditLimit,
		&s.maxPosition, &s.killAfterBreaches, &s.killAtLoss, &s.openOrders, &s.openNotional, &s.openBuyNotional,
		&s.dayNetBought, &s.costBase, &s.heldValue, &s.breaches}
}

func (c *riskCell) words() [riskCellWords]*int64 {
	return [...]*int64{&c.position, &c.openBuyQty, &c.openSellQty, &c.markTicks, &c.maxOrderQty, &c.maxOrderNotional, &c.maxPosition}
}

func (m *Matcher) writeRiskSnapshot(bw *bufio.Writer) {
	r := &m.risk
	var b [8]byte
	bw.Write(binary.LittleEndian.AppendUint32(b[:0], uint32(len(r.subjects))))
	listed := r.listedCells(len(m.instruments))
	bw.Write(binary.LittleEndian.AppendUint32(b[:0], uint32(len(r.subjects)*listed)))
	for i := range r.names {
		bw.Write(r.names[i][:])
	}
	for i := range r.subjects {
		s := &r.subjects[i]
		for _, w := range s.words() {
			bw.Write(binary.LittleEndian.AppendUint64(b[:0], uint64(*w)))
		}
		killed := byte(0)
		if s.killed {
			killed = 1
		}
		bw.WriteByte(killed)
	}
	for subj := range r.subjects {
		for ii := range listed {
			c := r.cell(uint16(subj), uint16(ii))
			for _, w := range c.words() {
				bw.Write(binary.LittleEndian.AppendUint64(b[:0], uint64(*w)))
			}
			bw.WriteByte(c.overrides)
		}
	}
}

// listedCells is the number of cells per subject a snapshot holds: one per
// listed instrument with risk on, none without.
func (r *riskState) listedCells(instruments int) int {
	if !r.on {
		return 0
	}
	return instruments
}

func (m *Matcher) readRiskSnapshot(sr *snapshotReader) error {
	r := &m.risk
	b, err := sr.next(8)
	if err != nil {
		return err
	}
	subjects, cells := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	listed := r.listedCells(len(m.instruments)) // the instruments section came first
	if int(subjects) != len(r.subjects) || int64(cells) != int64(len(r.subjects)*listed) {
		return fmt.Errorf("%w: risk for %d sessions and accounts and %d cells, the config and the listed instruments give %d and %d",
			ErrSnapshot, subjects, cells, len(r.subjects), len(r.subjects)*listed)
	}
	for i := range r.names {
		if b, err = sr.next(venue.AccountLength); err != nil {
			return err
		}
		if [venue.AccountLength]byte(b) != r.names[i] {
			return fmt.Errorf("%w: risk account %d is %q, the config has %q", ErrSnapshot, i, trimNUL(b), trimNUL(r.names[i][:]))
		}
	}
	for i := range r.subjects {
		s := &r.subjects[i]
		if b, err = sr.next(8*riskSubjectWords + 1); err != nil {
			return err
		}
		for j, w := range s.words() {
			*w = int64(binary.LittleEndian.Uint64(b[8*j:]))
		}
		switch b[8*riskSubjectWords] {
		case 0:
		case 1:
			s.killed = true
			r.countKilled(1)
		default:
			return fmt.Errorf("%w: risk subject %d: kill flag %d", ErrSnapshot, i, b[8*riskSubjectWords])
		}
	}
	for subj := range r.subjects {
		if !r.on {
			break
		}
		for ii := range listed {
			if b, err = sr.next(8*riskCellWords + 1); err != nil {
				return err
			}
			c := r.cell(uint16(subj), uint16(ii))
			for j, w := range c.words() {
				*w = int64(binary.LittleEndian.Uint64(b[8*j:]))
			}
			c.overrides = b[8*riskCellWords]
		}
		r.freshCells(uint16(subj), listed)
	}
	return nil
}

// reset empties every figure and kill switch and the limits, which a
// snapshot then restores (ReadSnapshot).
func (r *riskState) reset() {
	clear(r.subjects)
	clear(r.cells)
	r.killed, r.pending, r.checks = 0, 0, r.on
}

// checkRiskInvariants recomputes every subject's open figures from the
// resting orders (CheckInvariants): the counts that riskOpen and
// riskTradeResting keep must equal them, and every order's subject must be
// the one its account and session give.
func (m *Matcher) checkRiskInvariants() error {
	r := &m.risk
	if !r.on {
		if r.pending != 0 {
			return fmt.Errorf("risk: %d automatic kills pending between commands", r.pending)
		}
		return nil
	}
	killed := 0
	type open struct{ orders, notional, buyNotional int64 }
	want := make([]open, len(r.subjects))
	buys := make([]int64, len(r.cells))
	sells := make([]int64, len(r.cells))
	for oi := m.all.head; oi != noOrder; oi = m.pool.orders[oi].lists[listAll].next {
		o := &m.pool.orders[oi]
		subj := m.index.recs[o.rec].riskSubject
		if subj != r.subjectOf(o.sessionIdx, &o.account) {
			return fmt.Errorf("risk: order %d has subject %d, its account and session give %d", o.orderID, subj, r.subjectOf(o.sessionIdx, &o.account))
		}
		n := o.leavesQty * m.riskPriceOf(o)
		w := &want[subj]
		w.orders++
		w.notional += n
		ci := int(subj)*r.stride + int(o.instrument)
		if o.side == venue.SideBuy {
			w.buyNotional += n
			buys[ci] += o.leavesQty
		} else {
			sells[ci] += o.leavesQty
		}
	}
	for i := range r.subjects {
		s := &r.subjects[i]
		if s.killed {
			killed++
		}
		if s.killPending {
			return fmt.Errorf("risk: subject %d has an automatic kill pending between commands", i)
		}
		if w := want[i]; s.openOrders != w.orders || s.openNotional != w.notional || s.openBuyNotional != w.buyNotional {
			return fmt.Errorf("risk: subject %d counts %d open orders, %d open notional, %d open buy notional; the book has %d, %d, %d",
				i, s.openOrders, s.openNotional, s.openBuyNotional, w.orders, w.notional, w.buyNotional)
		}
	}
	for i := range r.cells {
		if c := &r.cells[i]; c.openBuyQty != buys[i] || c.openSellQty != sells[i] {
			return fmt.Errorf("risk: cell %d counts %d/%d open buy/sell quantity, the book has %d/%d", i, c.openBuyQty, c.openSellQty, buys[i], sells[i])
		}
	}
	for subj := range r.subjects {
		fresh := r.subjects[subj].freshCell()
		for ii := len(m.instruments); ii < r.stride; ii++ {
			if c := r.cell(uint16(subj), uint16(ii)); *c != fresh {
				return fmt.Errorf("risk: subject %d's cell of unlisted instrument %d is %+v, want the subject's limits and no figures", subj, ii, *c)
			}
		}
	}
	if killed != r.killed || r.pending != 0 {
		return fmt.Errorf("risk: %d subjects killed, counted %d; %d kills pending", killed, r.killed, r.pending)
	}
	return nil
}
