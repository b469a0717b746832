package core

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// snapshotAuctionSize is the bytes of an instrument's auction state in a
// snapshot (see the format at the top of snapshot.go).
const snapshotAuctionSize = 1 + 1 + 8 + 8 + 8*3 + 1 + 1 + 1

// appendAuction encodes the part of an auction state that events depend on;
// the book signature is not in it, since after every command it equals the
// book's own (refreshIndicatives), and resyncAuctions recomputes it; only
// whether the instrument is yet to be looked at (a call entered before any
// command, joinCalls) is kept.
func appendAuction(b []byte, a *auctionState) []byte {
	var pending byte
	if a.pending {
		pending = 1
	}
	b = append(b, byte(a.phase), pending)
	for _, v := range []int64{a.endNs, a.shownAtNs, a.shown.priceTicks, a.shown.matchedQty, a.shown.imbalanceQty} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	var fresh byte
	if a.sig.replaces < 0 {
		fresh = 1
	}
	return append(b, byte(a.shown.imbalanceSide), byte(a.shown.rule), fresh)
}

// readAuction restores what appendAuction wrote, and reports whether it is
// consistent.
func readAuction(b []byte, a *auctionState) bool {
	a.phase = venue.TradingStatus(b[0])
	a.pending = b[1] == 1
	a.endNs = int64(binary.LittleEndian.Uint64(b[2:]))
	a.shownAtNs = int64(binary.LittleEndian.Uint64(b[10:]))
	a.shown.priceTicks = int64(binary.LittleEndian.Uint64(b[18:]))
	a.shown.matchedQty = int64(binary.LittleEndian.Uint64(b[26:]))
	a.shown.imbalanceQty = int64(binary.LittleEndian.Uint64(b[34:]))
	a.shown.imbalanceSide, a.shown.rule = venue.ImbalanceSide(b[42]), venue.AuctionRule(b[43])
	a.replaces = 0
	a.sig.replaces = 0
	if b[44] == 1 {
		a.sig.replaces = -1
	}
	return (a.phase == 0 || IsCall(a.phase)) && b[1] <= 1 && b[44] <= 1 && a.endNs >= 0 && a.shown.imbalanceSide.Valid() && a.shown.rule.Valid()
}

// readCalls restores the list of instruments in a call, after the
// instruments; the books are read later, so their signatures are taken
// again at the next command, and the timers are looked at then too.
func (m *Matcher) readCalls(sr *snapshotReader) error {
	b, err := sr.next(4)
	if err != nil {
		return err
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n > len(m.instruments) {
		return fmt.Errorf("%w: %d instruments in a call, %d configured", ErrSnapshot, n, len(m.instruments))
	}
	m.calls = m.calls[:0]
	for range n {
		if b, err = sr.next(4); err != nil {
			return err
		}
		id := binary.LittleEndian.Uint32(b)
		ii, ok := m.instrByID.lookup(id)
		if !ok || m.instruments[ii].auction.phase == 0 {
			return fmt.Errorf("%w: instrument %d listed in a call without a call phase", ErrSnapshot, id)
		}
		// Listed twice, it would stay listed after its call ends (leaveCalls
		// takes one entry out) and be uncrossed again.
		if m.inCalls(id) {
			return fmt.Errorf("%w: instrument %d listed twice in the calls", ErrSnapshot, id)
		}
		m.calls = append(m.calls, id)
	}
	for i := range m.instruments {
		if m.instruments[i].auction.phase != 0 && !m.inCalls(m.instruments[i].id) {
			return fmt.Errorf("%w: instrument %d in a call phase but not listed", ErrSnapshot, m.instruments[i].id)
		}
	}
	m.timerDueNs = math.MinInt64 // runAuctionTimers finds the next due time at the next command
	return nil
}

func (m *Matcher) inCalls(id uint32) bool {
	for _, c := range m.calls {
		if c == id {
			return true
		}
	}
	return false
}

// resyncAuctions takes the books' signatures after a snapshot's orders are
// back, as refreshIndicatives left them after the last command.
func (m *Matcher) resyncAuctions() {
	for i := range m.instruments {
		in := &m.instruments[i]
		if in.auction.sig.replaces >= 0 {
			in.auction.sig = in.signature()
		}
	}
}
