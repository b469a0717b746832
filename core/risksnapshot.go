package core

import (
	"bufio"
	"encoding/binary"
	"fmt"
)

// The risk section of a snapshot (see snapshot.go):
//
//	u32 subjects, u32 cells (0 when risk is off)
//	per subject  riskSubjectWords i64 (limits, then figures; see
//	             riskSubject.words), u8 killed
//	per cell     riskCellWords i64 (see riskCell.words), u8 overrides
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
	bw.Write(binary.LittleEndian.AppendUint32(b[:0], uint32(len(r.cells))))
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
	for i := range r.cells {
		for _, w := range r.cells[i].words() {
			bw.Write(binary.LittleEndian.AppendUint64(b[:0], uint64(*w)))
		}
		bw.WriteByte(r.cells[i].overrides)
	}
}

func (m *Matcher) readRiskSnapshot(sr *snapshotReader) error {
	r := &m.risk
	b, err := sr.next(8)
	if err != nil {
		return err
	}
	subjects, cells := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	if int(subjects) != len(r.subjects) || int(cells) != len(r.cells) {
		return fmt.Errorf("%w: risk for %d sessions and accounts and %d cells, the config has %d and %d",
			ErrSnapshot, subjects, cells, len(r.subjects), len(r.cells))
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
			r.killed++
		default:
			return fmt.Errorf("%w: risk subject %d: kill flag %d", ErrSnapshot, i, b[8*riskSubjectWords])
		}
	}
	for i := range r.cells {
		if b, err = sr.next(8*riskCellWords + 1); err != nil {
			return err
		}
		for j, w := range r.cells[i].words() {
			*w = int64(binary.LittleEndian.Uint64(b[8*j:]))
		}
		r.cells[i].overrides = b[8*riskCellWords]
	}
	return nil
}

// reset empties every figure and kill switch and the limits, which a
// snapshot then restores (ReadSnapshot).
func (r *riskState) reset() {
	clear(r.subjects)
	clear(r.cells)
	r.killed, r.pending = 0, 0
}
