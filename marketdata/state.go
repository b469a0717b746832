package marketdata

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// The feed's state, as written by Feed's capture and read by Feed.Restore,
// so that a venue can start from a snapshot instead of replaying its whole
// journal (see "Restarts" in doc.go). All integers little-endian:
//
//	magic "FVMDST06" (8)
//	nextSeq   u64   sequence number of the next feed message
//	timeNs    i64   event time of the last event applied
//	refills   u64   refilled slices published so far (the last public id
//	                handed out is RefillIDBase+refills)
//	instCount u32
//	per instrument, in configuration order, then the added ones in the
//	order they were added:
//	  an added one first: symbol [16] (NUL padded) | tickMantissa i64 |
//	  tickExponent i8 | lotSize i64 | initial status u8 | levelsMax u32
//	  id u32 | status u8 | rptSeq u64 | lastTradePriceTicks i64 |
//	  lastTradeQty i64 | volume i64 | the call's last indicative: active u8 |
//	  priceTicks i64 | matchedQty i64 | imbalanceSide u8 | imbalanceQty i64 |
//	  rule u8 | phase u8 (the status it carried; all zero outside a call)
//	  per side (bids, then asks): orderCount u32, then per order in
//	  priority order (best level first, then time): orderId u64 |
//	  priceTicks i64 | shown qty i64 (an iceberg's display slice, else the
//	  leaves) | flags u8 (bit 0: an iceberg; bit 1: shown under a refill's
//	  public id, which follows: publicId u64)
//
// The file around it (length, CRC, atomic publication) is the journal's
// snapshot file; the state holds exactly what the tracker derived from the
// events of the commands up to the snapshot's seq, never engine state.
// Versions 03, without the indicative (a call's indicative came back only
// when it changed after a start from a snapshot), 04, without the
// refills' public ids, and 05, without the indicative's phase, are still
// read. A feed that wrote 03 or 04 published a refill under the order's
// OrderID: such a state loads with every order under its OrderID, as the
// receivers saw it, and the refill count at 0 (package documentation,
// "Icebergs"). A feed that wrote 04 or 05 stamped a snapshot's indicative
// with the instrument's status: its indicative loads with that status as
// its phase, which a snapshot repeats until the next indicative (package
// documentation, "Auctions").
const (
	stateMagic   = "FVMDST06"
	stateMagic05 = "FVMDST05"
	stateMagic04 = "FVMDST04"
	stateMagic03 = "FVMDST03"
)

// Bits of an order's flags in the state.
const (
	stateFlagIceberg  = 1 << 0
	stateFlagRefilled = 1 << 1
)

// ErrBadState is wrapped by every error of Feed.Restore.
var ErrBadState = errors.New("marketdata: bad feed state")

// writeState writes the tracker's state. There must be no pending order:
// the caller ends the command first.
func (t *Tracker) writeState(w io.Writer, nextSeq uint64) error {
	bw := bufio.NewWriter(w)
	var b [8]byte
	u64 := func(v uint64) { binary.LittleEndian.PutUint64(b[:], v); bw.Write(b[:8]) }
	u32 := func(v uint32) { binary.LittleEndian.PutUint32(b[:], v); bw.Write(b[:4]) }
	bw.WriteString(stateMagic)
	u64(nextSeq)
	u64(uint64(t.timeNs))
	u64(t.refills)
	u32(uint32(len(t.insts)))
	for i := range t.insts {
		in := &t.insts[i]
		if i >= len(t.cfg.Instruments) {
			var sym [mdsbe.SymbolLength]byte
			copy(sym[:], in.def.Symbol)
			bw.Write(sym[:])
			u64(uint64(in.def.TickMantissa))
			bw.WriteByte(byte(in.def.TickExponent))
			u64(uint64(in.def.LotSize))
			bw.WriteByte(byte(in.def.Status))
			u32(uint32(in.def.LevelsMax))
		}
		u32(uint32(in.def.ID))
		bw.WriteByte(byte(in.status))
		u64(in.rptSeq)
		u64(uint64(in.lastTradePriceTicks))
		u64(uint64(in.lastTradeQty))
		u64(uint64(in.volume))
		ind := &in.indicative
		bw.WriteByte(boolByte(ind.Active))
		u64(uint64(ind.PriceTicks))
		u64(uint64(ind.MatchedQty))
		bw.WriteByte(byte(ind.ImbalanceSide))
		u64(uint64(ind.ImbalanceQty))
		bw.WriteByte(byte(ind.Rule))
		bw.WriteByte(byte(ind.Phase))
		for si := range in.sides {
			s := &in.sides[si]
			n := uint32(0)
			for li := range s.levels {
				n += uint32(s.levels[li].orderCount)
			}
			u32(n)
			for li := len(s.levels) - 1; li >= 0; li-- {
				for oi := s.levels[li].head; oi != noOrder; oi = t.orders[oi].next {
					o := &t.orders[oi]
					u64(uint64(o.id))
					u64(uint64(o.priceTicks))
					u64(uint64(o.leavesQty))
					var flags byte
					if o.iceberg {
						flags |= stateFlagIceberg
					}
					if o.pub != o.id {
						flags |= stateFlagRefilled
					}
					bw.WriteByte(flags)
					if o.pub != o.id {
						u64(uint64(o.pub))
					}
				}
			}
		}
	}
	return bw.Flush()
}

// readState loads a state into a tracker that holds no order and returns
// the feed's next sequence number. The instruments must be those the
// tracker was configured with, in the same order.
func (t *Tracker) readState(r io.Reader) (uint64, error) {
	if t.index.count != 0 || t.pendingN != 0 {
		return 0, errors.New("marketdata: restore into a tracker that holds orders")
	}
	br := bufio.NewReader(r)
	var b [8]byte
	var rerr error
	read := func(n int) []byte {
		if rerr == nil {
			_, rerr = io.ReadFull(br, b[:n])
		}
		return b[:n]
	}
	u64 := func() uint64 { return binary.LittleEndian.Uint64(read(8)) }
	u32 := func() uint32 { return binary.LittleEndian.Uint32(read(4)) }
	magic := string(read(8))
	withIndicative := magic == stateMagic || magic == stateMagic05 || magic == stateMagic04
	withRefills := magic == stateMagic || magic == stateMagic05
	withPhase := magic == stateMagic
	if magic != stateMagic && magic != stateMagic05 && magic != stateMagic04 && magic != stateMagic03 {
		if magic[:6] == stateMagic[:6] {
			return 0, fmt.Errorf("%w: feed state version %s, this build reads %s to %s only (remove the state to rebuild the feed from the journal)",
				ErrBadState, magic[6:], stateMagic03[6:], stateMagic[6:])
		}
		return 0, fmt.Errorf("%w: not a feed state (magic)", ErrBadState)
	}
	nextSeq := u64()
	t.timeNs = int64(u64())
	flagsMax := byte(stateFlagIceberg)
	if withRefills {
		t.refills = u64()
		flagsMax |= stateFlagRefilled
		if rerr == nil && t.refills > uint64(^RefillIDBase) {
			return 0, fmt.Errorf("%w: %d refills", ErrBadState, t.refills)
		}
	}
	n := int(u32())
	if rerr == nil && (n < len(t.cfg.Instruments) || n > cap(t.insts)) {
		return 0, fmt.Errorf("%w: %d instruments, the configuration has %d and allows %d", ErrBadState, n, len(t.cfg.Instruments), cap(t.insts))
	}
	for i := 0; i < n && rerr == nil; i++ {
		if i >= len(t.insts) {
			var sym [mdsbe.SymbolLength]byte
			if rerr == nil {
				_, rerr = io.ReadFull(br, sym[:])
			}
			d := InstrumentDef{Symbol: strings.TrimRight(string(sym[:]), "\x00"), TickMantissa: int64(u64())}
			d.TickExponent = int8(read(1)[0])
			d.LotSize = int64(u64())
			d.Status = mdsbe.TradingStatus(read(1)[0])
			d.LevelsMax = int(u32())
			d.ID = InstrumentID(binary.LittleEndian.Uint32(peek4(br, &rerr)))
			if rerr != nil {
				break
			}
			if _, err := t.addInstrument(d); err != nil {
				return 0, fmt.Errorf("%w: added instrument %d %q: %v", ErrBadState, d.ID, d.Symbol, err)
			}
		}
		in := &t.insts[i]
		if id := InstrumentID(u32()); rerr == nil && id != in.def.ID {
			return 0, fmt.Errorf("%w: instrument %d where the configuration has %d", ErrBadState, id, in.def.ID)
		}
		in.status = mdsbe.TradingStatus(read(1)[0])
		in.rptSeq = u64()
		in.lastTradePriceTicks = int64(u64())
		in.lastTradeQty = int64(u64())
		in.volume = int64(u64())
		if withIndicative {
			active := read(1)[0]
			ind := Indicative{Active: active == 1, PriceTicks: int64(u64()), MatchedQty: int64(u64())}
			ind.ImbalanceSide = venue.ImbalanceSide(read(1)[0])
			ind.ImbalanceQty = int64(u64())
			ind.Rule = venue.AuctionRule(read(1)[0])
			if withPhase {
				ind.Phase = venue.TradingStatus(read(1)[0])
			} else if ind.Active {
				// What the feed that wrote it put in a snapshot.
				ind.Phase = venue.TradingStatus(in.status)
			}
			if rerr == nil && (active > 1 || !ind.ImbalanceSide.Valid() || !ind.Rule.Valid() ||
				ind.Active != ind.Phase.Valid() || (!ind.Active && ind != Indicative{})) {
				return 0, fmt.Errorf("%w: instrument %d: bad indicative", ErrBadState, in.def.ID)
			}
			in.indicative = ind
		}
		for si := range in.sides {
			n := u32()
			s := &in.sides[si]
			for k := uint32(0); k < n && rerr == nil; k++ {
				id, px, qty := OrderID(u64()), int64(u64()), int64(u64())
				flags := read(1)[0]
				if rerr != nil {
					break
				}
				if flags > flagsMax {
					return 0, fmt.Errorf("%w: order %d flags %#x", ErrBadState, id, flags)
				}
				pub := id
				if flags&stateFlagRefilled != 0 {
					// One of the public ids handed out so far.
					if pub = OrderID(u64()); rerr == nil && (pub <= RefillIDBase || uint64(pub-RefillIDBase) > t.refills) {
						return 0, fmt.Errorf("%w: order %d public id %d, %d refills", ErrBadState, id, pub, t.refills)
					}
				}
				// Priority order: each order at the worst level so far or a
				// worse one, so that a loaded state writes back the same.
				if len(s.levels) > 0 && s.better(px, s.levels[0].priceTicks) {
					return 0, fmt.Errorf("%w: instrument %d: orders out of priority order", ErrBadState, in.def.ID)
				}
				if err := t.restoreOrder(int32(i), sideIdx(si), id, pub, px, qty, flags&stateFlagIceberg != 0); err != nil {
					return 0, fmt.Errorf("%w: %v", ErrBadState, err)
				}
			}
		}
	}
	if rerr != nil {
		return 0, fmt.Errorf("%w: %v", ErrBadState, rerr)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return 0, fmt.Errorf("%w: bytes after the last instrument", ErrBadState)
	}
	return nextSeq, nil
}

// restoreOrder rests an order at the back of its level without publishing
// anything: the orders arrive in priority order.
func (t *Tracker) restoreOrder(inst int32, side sideIdx, id, pub OrderID, priceTicks, qty int64, iceberg bool) error {
	if id == 0 || id >= RefillIDBase || qty <= 0 {
		return ErrInconsistent
	}
	if t.index.get(id) != noOrder {
		return ErrDuplicateOrder
	}
	oi, err := t.allocOrder(id)
	if err != nil {
		return err
	}
	o := &t.orders[oi]
	o.priceTicks, o.leavesQty, o.inst, o.side, o.canRest, o.state = priceTicks, qty, inst, side, true, orderResting
	o.iceberg, o.pub = iceberg, pub
	s := &t.insts[inst].sides[side]
	li, found := s.search(priceTicks)
	if !found {
		if err := s.insert(li, priceTicks); err != nil {
			t.freeOrder(oi)
			return err
		}
	}
	s.levels[li].qty += qty
	t.linkTail(s, li, oi)
	return nil
}

// peek4 returns the next 4 bytes without consuming them (the id of an added
// instrument, read again with the rest of its state).
func peek4(br *bufio.Reader, rerr *error) []byte {
	if *rerr != nil {
		return make([]byte, 4)
	}
	b, err := br.Peek(4)
	if err != nil {
		*rerr = err
		return make([]byte, 4)
	}
	return b
}
