package core

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Snapshot format (all integers little-endian), version 8:
//
//	magic        8 bytes "FVCORE\x00\x08"
//	instruments  u32 count, then per instrument (config order, then the
//	             added ones in the order they were added): for an added
//	             instrument first its reference data (appendAdded), then for
//	             every one u32 id, i64 band low ticks, i64 band high ticks,
//	             u8 status, i64 last trade price ticks (0: none yet), u8 the
//	             status a halt interrupted (haltedFrom; 0: not halted, or not
//	             known), then its auction state: u8 call phase (0: none), u8
//	             indicative pending, i64 volatility auction end, i64 time of
//	             the last indicative, and that indicative (i64 price, matched
//	             and imbalance quantities, u8 imbalance side, u8 rule)
//	calls        u32 count, then u32 instrument ids: the instruments in a
//	             call, each once, in the order their indicatives are looked at
//	counters     u64 last OrderID, u64 last ExecID, u64 last TradeID,
//	             i64 clock (timestamp of the last command)
//	ledger       i64 ordered, i64 filled, i64 cancelled
//	records      u32 count, then snapshotRecordSize bytes per ClOrdID record,
//	             in record order (see appendRecord: a record that is not
//	             current ends with its recordTerms, a stop's stop price, a
//	             GTD order's expire time, an iceberg's display size and the
//	             order's flags PostOnly and Iceberg, zero for any other record)
//	orders       u32 count, then snapshotOrderSize bytes per live order, in
//	             priority order: instrument by instrument (config order), bids
//	             then asks, best level first, then time, then the waiting
//	             stops, buy stops then sell stops, first elected first, then
//	             the market orders waiting for an uncross, buys then sells
//	             (see appendOrder: after the record index, the stop level, a
//	             waiting byte, an iceberg's maxFloorQty and display, and the
//	             stop price of an elected stop waiting for an uncross)
//	risk         limits and figures of pre-trade risk (risksnapshot.go)
//	trailer      u32 CRC-32C of every byte before it
//
// The snapshot holds the logical state only: pool slots, free-list order and
// hash-table layout are not in it, because no event depends on them. A
// matcher restored from it therefore writes the same bytes again, and
// applying the same later commands to it gives the same events as the
// matcher it was taken from.
//
// Version 7 is version 8 without the status a halt interrupted: it is
// always read, with none known (as are versions 5 and 6), so that a resume
// of an instrument halted then takes it where it took it before that was
// kept (its group's phase, or Open), not back to Closed. Version 6 is
// version 7 without a record's display size and flags and without an
// elected stop's stop price; version 5 is version 6 without the records'
// terms. Each of those two is read when it holds nothing that would need what
// it lacks: no record of an order that ended or was replaced and could have
// had those terms (version 6: a limit order that could rest, which may have
// been an iceberg or post-only; version 5: that or a stop or GTD order),
// and no elected stop waiting for an uncross, as every snapshot of an end
// of day does; it is refused otherwise: it lost what a status request for
// such an order answers, and a matcher that replays the journal instead
// keeps it, so the two would no longer answer alike.

var snapshotMagic = [8]byte{'F', 'V', 'C', 'O', 'R', 'E', 0, 8}

// The older versions ReadSnapshot still reads.
const (
	snapshotVersionTermless     = 5 // records without terms
	snapshotVersionStopGTDTerms = 6 // records with a stop's and a GTD order's terms only
	snapshotVersionNoHaltOrigin = 7 // instruments without the status a halt interrupted
)

// ErrSnapshot wraps every reason a snapshot cannot be loaded.
var ErrSnapshot = errors.New("core: bad snapshot")

const (
	snapshotRecordSizeTermless     = venue.ClOrdIDLength + venue.AccountLength + 8*6 + 4 + 2 + 1 + 4
	snapshotRecordSizeStopGTDTerms = snapshotRecordSizeTermless + 8 + 8
	snapshotRecordSize             = snapshotRecordSizeStopGTDTerms + 8 + 1
	snapshotOrderSizeUnelected     = 8 + 2 + 5 + 8*6 + venue.AccountLength + 4 + 4 + 1 + 8 + 8
	snapshotOrderSize              = snapshotOrderSizeUnelected + 8
	// An instrument's fixed part: id, band, status, last trade, then the
	// status a halt interrupted.
	snapshotInstrumentSizeNoHaltOrigin = 4 + 8 + 8 + 1 + 8
	snapshotInstrumentSize             = snapshotInstrumentSizeNoHaltOrigin + 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteSnapshot writes the matcher's state to w. Call it between commands,
// from the goroutine that applies them (for example after applying a
// Snapshot command): the state is the state after the last applied command.
func (m *Matcher) WriteSnapshot(w io.Writer) error {
	return m.writeSnapshot(w, snapshotMagic[7])
}

// writeSnapshot writes the snapshot in format version, the current one or
// an older one ReadSnapshot reads (for tests of reading it).
func (m *Matcher) writeSnapshot(w io.Writer, version byte) error {
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	var scratch [snapshotRecordSize + snapshotOrderSize]byte
	b := scratch[:0]
	b = append(b, snapshotMagic[:7]...)
	b = append(b, version)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.instruments)))
	bw.Write(b)
	for i := range m.instruments {
		in := &m.instruments[i]
		if i >= m.listing.configured {
			bw.Write(appendAdded(scratch[:0], &m.listing.added[i-m.listing.configured]))
		}
		b = binary.LittleEndian.AppendUint32(scratch[:0], in.id)
		b = binary.LittleEndian.AppendUint64(b, uint64(in.bandLowTicks))
		b = binary.LittleEndian.AppendUint64(b, uint64(in.bandHighTicks))
		b = append(b, byte(in.status))
		b = binary.LittleEndian.AppendUint64(b, uint64(in.lastTradeTicks))
		if version > snapshotVersionNoHaltOrigin {
			b = append(b, byte(in.haltedFrom))
		}
		bw.Write(appendAuction(b, &in.auction))
	}
	b = binary.LittleEndian.AppendUint32(scratch[:0], uint32(len(m.calls)))
	for _, id := range m.calls {
		b = binary.LittleEndian.AppendUint32(b, id)
	}
	bw.Write(b)
	b = scratch[:0]
	for _, v := range []uint64{m.lastOrderID, m.lastExecID, m.lastTradeID, uint64(m.nowNs),
		uint64(m.qty.orderedQty), uint64(m.qty.filledQty), uint64(m.qty.cancelledQty)} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(m.index.recsUsed))
	bw.Write(b)
	for ri := 0; ri < m.index.recsUsed; ri++ {
		b = appendRecord(scratch[:0], &m.index.recs[ri], &m.index.terms[ri])
		bw.Write(b[:recordSizeOf(version)])
	}
	bw.Write(binary.LittleEndian.AppendUint32(scratch[:0], uint32(m.pool.inUse)))
	for i := range m.instruments {
		in := &m.instruments[i]
		for _, bs := range []*bookSide{&in.sides[0], &in.sides[1], &in.stops[0], &in.stops[1], &in.auction.market[0], &in.auction.market[1]} {
			for li := bs.best; li >= 0; li = bs.nextBest(li) {
				for oi := bs.levels[li].head; oi != noOrder; oi = m.pool.orders[oi].next {
					// A slot keeps an earlier order's: only what is this one's.
					ext := orderExt{maxFloorQty: m.maxFloorOf(oi)}
					if ext.maxFloorQty != 0 {
						ext.displayQty = m.displayOf(oi)
					}
					if o := &m.pool.orders[oi]; o.stopLevel == 0 {
						ext.electedStopPxTicks = m.stopPxOf(oi)
					}
					b = appendOrder(scratch[:0], &m.pool.orders[oi], &ext)
					bw.Write(b[:orderSizeOf(version)])
				}
			}
		}
	}
	m.writeRiskSnapshot(bw)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("core: writing snapshot: %w", err)
	}
	if _, err := w.Write(binary.LittleEndian.AppendUint32(scratch[:0], crc.Sum32())); err != nil {
		return fmt.Errorf("core: writing snapshot: %w", err)
	}
	return nil
}

// recordSizeOf and orderSizeOf are the sizes of a record and an order in
// snapshot format version.
func recordSizeOf(version byte) int {
	switch version {
	case snapshotVersionTermless:
		return snapshotRecordSizeTermless
	case snapshotVersionStopGTDTerms:
		return snapshotRecordSizeStopGTDTerms
	}
	return snapshotRecordSize
}

func orderSizeOf(version byte) int {
	if version < snapshotVersionNoHaltOrigin {
		return snapshotOrderSizeUnelected
	}
	return snapshotOrderSize
}

// instrumentSizeOf is the size of an instrument's fixed part, before its
// auction state, in snapshot format version.
func instrumentSizeOf(version byte) int {
	if version <= snapshotVersionNoHaltOrigin {
		return snapshotInstrumentSizeNoHaltOrigin
	}
	return snapshotInstrumentSize
}

// lacksTerms reports whether record r may have had recordTerms that
// snapshot format version did not keep: it is not current (a live order's
// record is New), and its order was a stop or GTD order (version 5) or a
// limit order that could rest, which may have been an iceberg or post-only
// (versions 5 and 6), as the record does not say.
func lacksTerms(r *clOrdRecord, version byte) bool {
	if r.ordStatus == venue.OrdStatusNew || version >= snapshotVersionNoHaltOrigin {
		return false
	}
	display := r.ordType == venue.OrdTypeLimit && canRest(r.ordType, r.tif)
	return display || (version == snapshotVersionTermless && (IsStop(r.ordType) || r.tif == venue.TimeInForceGTD))
}

// appendRecord encodes a ClOrdID record (its slot is implied by the orders)
// and its terms t, zeros for a current record (whose entry is zero: see
// recordTerms).
func appendRecord(b []byte, r *clOrdRecord, t *recordTerms) []byte {
	id := r.key.bytes()
	b = append(b, id[:]...)
	b = append(b, r.account[:]...)
	for _, v := range []int64{int64(r.orderID), r.priceTicks, r.qty, r.leavesQty, r.cumQty, r.cumNotionalTicks} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	b = binary.LittleEndian.AppendUint32(b, r.instrumentID)
	b = binary.LittleEndian.AppendUint16(b, r.sessionIdx)
	b = append(b, byte(r.key.len()), byte(r.side), byte(r.ordType), byte(r.tif), byte(r.ordStatus))
	var kept recordTerms
	if r.ordStatus != venue.OrdStatusNew {
		kept = *t
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(kept.stopPxTicks))
	b = binary.LittleEndian.AppendUint64(b, uint64(kept.expireTimeNs))
	b = binary.LittleEndian.AppendUint64(b, uint64(kept.maxFloorQty))
	return append(b, byte(kept.flags))
}

func appendOrder(b []byte, o *order, e *orderExt) []byte {
	b = binary.LittleEndian.AppendUint64(b, o.orderID)
	b = binary.LittleEndian.AppendUint16(b, o.sessionIdx)
	b = append(b, byte(o.side), byte(o.ordType), byte(o.tif), byte(o.flags), byte(o.stpMode))
	for _, v := range []int64{o.priceTicks, o.qty, o.leavesQty, o.cumQty, o.cumNotionalTicks, o.expireTimeNs} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	b = append(b, o.account[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(o.rec))
	b = binary.LittleEndian.AppendUint32(b, uint32(o.stopLevel))
	var waiting byte
	if o.waiting {
		waiting = 1
	}
	b = append(b, waiting)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.maxFloorQty))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.displayQty))
	return binary.LittleEndian.AppendUint64(b, uint64(e.electedStopPxTicks))
}

// snapshotReader reads fixed-size pieces and checksums them.
type snapshotReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	buf [snapshotRecordSize + snapshotOrderSize]byte
}

func (sr *snapshotReader) next(n int) ([]byte, error) {
	b := sr.buf[:n]
	if _, err := io.ReadFull(sr.r, b); err != nil {
		return nil, fmt.Errorf("%w: truncated: %v", ErrSnapshot, err)
	}
	sr.crc.Write(b)
	return b, nil
}

// ReadSnapshot replaces the matcher's state with a snapshot written by
// WriteSnapshot from a matcher with the same instruments (ids and bands) and
// capacities at least as large. On error the matcher is left empty.
func (m *Matcher) ReadSnapshot(r io.Reader) error {
	// Only an accepted order takes a pool slot and an OrderID, and it
	// leaves a ClOrdID record: a matcher with neither has written none of
	// that memory. A failed read below may have, whatever it read.
	m.resetState(m.lastOrderID == 0 && m.index.recsUsed == 0)
	err := m.readSnapshot(&snapshotReader{r: bufio.NewReaderSize(r, 1<<16), crc: crc32.New(castagnoli)})
	if err == nil {
		err = m.CheckInvariants()
		if err != nil {
			err = fmt.Errorf("%w: restored state: %v", ErrSnapshot, err)
		}
	}
	if err != nil {
		m.resetState(false)
	}
	return err
}

func (m *Matcher) readSnapshot(sr *snapshotReader) error {
	b, err := sr.next(12)
	if err != nil {
		return err
	}
	version := b[7]
	if [7]byte(b[:7]) != [7]byte(snapshotMagic[:7]) {
		return fmt.Errorf("%w: not a matcher snapshot (version %d)", ErrSnapshot, snapshotMagic[7])
	}
	if version < snapshotVersionTermless || version > snapshotMagic[7] {
		return fmt.Errorf("%w: matcher snapshot version %d, this build reads versions %d to %d only (restart from the journal: move the snapshot files aside)",
			ErrSnapshot, version, snapshotVersionTermless, snapshotMagic[7])
	}
	n := int(binary.LittleEndian.Uint32(b[8:]))
	if n < m.listing.configured || n > cap(m.instruments) {
		return fmt.Errorf("%w: %d instruments, the config has %d and allows %d", ErrSnapshot, n, m.listing.configured, cap(m.instruments))
	}
	for i := range n {
		if i >= m.listing.configured {
			if err := m.readAdded(sr); err != nil {
				return err
			}
		}
		if err := m.readInstrument(sr, &m.instruments[i], version); err != nil {
			return err
		}
	}
	if err := m.readCalls(sr); err != nil {
		return err
	}
	if b, err = sr.next(7*8 + 4); err != nil {
		return err
	}
	m.lastOrderID = binary.LittleEndian.Uint64(b)
	m.lastExecID = binary.LittleEndian.Uint64(b[8:])
	m.lastTradeID = binary.LittleEndian.Uint64(b[16:])
	m.nowNs = int64(binary.LittleEndian.Uint64(b[24:]))
	m.qty.orderedQty = int64(binary.LittleEndian.Uint64(b[32:]))
	m.qty.filledQty = int64(binary.LittleEndian.Uint64(b[40:]))
	m.qty.cancelledQty = int64(binary.LittleEndian.Uint64(b[48:]))
	recs := binary.LittleEndian.Uint32(b[56:])
	if int64(recs) > int64(len(m.index.recs)) {
		return fmt.Errorf("%w: %d ClOrdIDs exceed ClOrdIDsMax %d", ErrSnapshot, recs, len(m.index.recs))
	}
	for ri := 0; ri < int(recs); ri++ {
		if b, err = sr.next(recordSizeOf(version)); err != nil {
			return err
		}
		if err := m.readRecord(b, &m.index.recs[ri], &m.index.terms[ri], version); err != nil {
			return err
		}
	}
	m.index.recsUsed = int(recs)
	m.index.termsEnd = int(recs)
	m.index.reindex(m.lastOrderID) // resetState left the tables empty
	// A session's ClOrdIDs of the day are distinct, and an OrderID has one
	// current record: a record that repeats one would be found in place of
	// the other, or counted twice.
	for ri := range recIdx(recs) {
		r := &m.index.recs[ri]
		if m.index.find(r.sessionIdx, &r.key, r.key.hash(r.sessionIdx)) != ri ||
			(r.ordStatus != venue.OrdStatusReplaced && m.index.findOrder(r.orderID) != ri) {
			return fmt.Errorf("%w: ClOrdID record of order %d repeats a ClOrdID or an order", ErrSnapshot, r.orderID)
		}
	}
	if err := m.readOrders(sr, version); err != nil {
		return err
	}
	m.resyncAuctions()
	if err := m.readRiskSnapshot(sr); err != nil {
		return err
	}
	want := sr.crc.Sum32()
	tail := sr.buf[:4]
	if _, err := io.ReadFull(sr.r, tail); err != nil {
		return fmt.Errorf("%w: truncated before the checksum", ErrSnapshot)
	}
	if binary.LittleEndian.Uint32(tail) != want {
		return fmt.Errorf("%w: checksum mismatch", ErrSnapshot)
	}
	return nil
}

func (m *Matcher) readInstrument(sr *snapshotReader, in *instrument, version byte) error {
	b, err := sr.next(instrumentSizeOf(version))
	if err != nil {
		return err
	}
	id := binary.LittleEndian.Uint32(b)
	low, high := int64(binary.LittleEndian.Uint64(b[4:])), int64(binary.LittleEndian.Uint64(b[12:]))
	// An operator may have moved the band (operatorSetBand) within the
	// levels the configuration allocates.
	if id != in.id || low > high || high-low+1 > int64(len(in.sides[0].levels)) {
		return fmt.Errorf("%w: instrument %d band [%d, %d] does not fit the config's %d with %d levels",
			ErrSnapshot, id, low, high, in.id, len(in.sides[0].levels))
	}
	in.bandLowTicks, in.bandHighTicks = low, high
	status := venue.TradingStatus(b[20])
	if !status.Valid() {
		return fmt.Errorf("%w: instrument %d status %d", ErrSnapshot, id, status)
	}
	in.status = status
	// The last trade may lie outside the band: an operator may have moved
	// the band since (operatorSetBand). It is only ever compared with prices.
	in.lastTradeTicks = int64(binary.LittleEndian.Uint64(b[21:]))
	if in.lastTradeTicks < 0 {
		return fmt.Errorf("%w: instrument %d last trade %d", ErrSnapshot, id, in.lastTradeTicks)
	}
	in.haltedFrom = 0 // an older version's: not known
	if version > snapshotVersionNoHaltOrigin {
		in.haltedFrom = venue.TradingStatus(b[29])
		if in.haltedFrom != 0 && (status != venue.TradingStatusHalted || !in.haltedFrom.Valid() || in.haltedFrom == venue.TradingStatusHalted) {
			return fmt.Errorf("%w: instrument %d in status %v halted from %d", ErrSnapshot, id, status, in.haltedFrom)
		}
	}
	if b, err = sr.next(snapshotAuctionSize); err != nil {
		return err
	}
	if !readAuction(b, &in.auction) {
		return fmt.Errorf("%w: instrument %d auction state is inconsistent", ErrSnapshot, id)
	}
	return nil
}

func (m *Matcher) readRecord(b []byte, r *clOrdRecord, t *recordTerms, version byte) error {
	id := [venue.ClOrdIDLength]byte(b)
	r.key.load(id[:])
	b = b[venue.ClOrdIDLength:]
	copy(r.account[:], b)
	b = b[venue.AccountLength:]
	r.orderID = binary.LittleEndian.Uint64(b)
	r.priceTicks = int64(binary.LittleEndian.Uint64(b[8:]))
	r.qty = int64(binary.LittleEndian.Uint64(b[16:]))
	r.leavesQty = int64(binary.LittleEndian.Uint64(b[24:]))
	r.cumQty = int64(binary.LittleEndian.Uint64(b[32:]))
	r.cumNotionalTicks = int64(binary.LittleEndian.Uint64(b[40:]))
	b = b[48:]
	r.instrumentID = binary.LittleEndian.Uint32(b)
	r.sessionIdx = binary.LittleEndian.Uint16(b[4:])
	r.side, r.ordType, r.tif, r.ordStatus = venue.Side(b[7]), venue.OrdType(b[8]), venue.TimeInForce(b[9]), venue.OrdStatus(b[10])
	r.slot = noOrder
	if m.risk.on {
		r.riskSubject = m.risk.subjectOf(r.sessionIdx, &r.account)
	}
	// Lookups compare padded keys: the ClOrdID must be NUL-padded after its length.
	if r.key.bytes() != id || r.key.len() != int(b[6]) || int(r.sessionIdx) >= len(m.sessions) ||
		r.orderID == 0 || r.orderID > m.lastOrderID || !r.ordStatus.Valid() {
		return fmt.Errorf("%w: ClOrdID record of order %d is inconsistent", ErrSnapshot, r.orderID)
	}
	if lacksTerms(r, version) {
		return fmt.Errorf("%w: matcher snapshot version %d lacks the terms (stop price, expire time, display size, post-only) of order %d, "+
			"which ended or was replaced; this build needs them (kept since version %d) to answer its status (restart from the journal: move the snapshot files aside)",
			ErrSnapshot, version, r.orderID, snapshotVersionNoHaltOrigin)
	}
	*t = recordTerms{}
	if version == snapshotVersionTermless {
		return nil
	}
	b = b[11:]
	t.stopPxTicks, t.expireTimeNs = int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	if version != snapshotVersionStopGTDTerms {
		t.maxFloorQty, t.flags = int64(binary.LittleEndian.Uint64(b[16:])), venue.OrderFlags(b[24])
	}
	if !termsFit(r, t) {
		return fmt.Errorf("%w: ClOrdID record of order %d has terms its order does not keep", ErrSnapshot, r.orderID)
	}
	return nil
}

// readOrders restores the live orders into their levels in priority order,
// then rebuilds the OrderID-ordered lists and the GTD heap.
func (m *Matcher) readOrders(sr *snapshotReader, version byte) error {
	b, err := sr.next(4)
	if err != nil {
		return err
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n > m.ordersMax {
		return fmt.Errorf("%w: %d orders exceed OrdersMax %d", ErrSnapshot, n, m.ordersMax)
	}
	slots := make([]orderIdx, 0, n)
	for range n {
		if b, err = sr.next(orderSizeOf(version)); err != nil {
			return err
		}
		oi, err := m.readOrder(b, version)
		if err != nil {
			return err
		}
		slots = append(slots, oi)
	}
	slices.SortFunc(slots, func(a, b orderIdx) int {
		x, y := m.pool.orders[a].orderID, m.pool.orders[b].orderID
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	for _, oi := range slots {
		m.listOrder(oi)
		if m.pool.orders[oi].tif == venue.TimeInForceGTD {
			m.gtd.push(oi)
		}
	}
	return nil
}

func (m *Matcher) readOrder(b []byte, version byte) (orderIdx, error) {
	oi := m.pool.alloc()
	m.pool.clearSlot(oi)
	o := &m.pool.orders[oi]
	o.orderID = binary.LittleEndian.Uint64(b)
	o.sessionIdx = binary.LittleEndian.Uint16(b[8:])
	o.side, o.ordType, o.tif = venue.Side(b[10]), venue.OrdType(b[11]), venue.TimeInForce(b[12])
	o.flags, o.stpMode = venue.OrderFlags(b[13]), venue.StpMode(b[14])
	b = b[15:]
	o.priceTicks = int64(binary.LittleEndian.Uint64(b))
	o.qty = int64(binary.LittleEndian.Uint64(b[8:]))
	o.leavesQty = int64(binary.LittleEndian.Uint64(b[16:]))
	o.cumQty = int64(binary.LittleEndian.Uint64(b[24:]))
	o.cumNotionalTicks = int64(binary.LittleEndian.Uint64(b[32:]))
	o.expireTimeNs = int64(binary.LittleEndian.Uint64(b[40:]))
	loadAccount(&o.account, (*[venue.AccountLength]byte)(b[48:]))
	ri := recIdx(binary.LittleEndian.Uint32(b[48+venue.AccountLength:]))
	o.stopLevel = int32(binary.LittleEndian.Uint32(b[52+venue.AccountLength:]))
	waiting := b[56+venue.AccountLength]
	ext := orderExt{maxFloorQty: int64(binary.LittleEndian.Uint64(b[57+venue.AccountLength:])),
		displayQty: int64(binary.LittleEndian.Uint64(b[65+venue.AccountLength:]))}
	if version >= snapshotVersionNoHaltOrigin {
		ext.electedStopPxTicks = int64(binary.LittleEndian.Uint64(b[73+venue.AccountLength:]))
	}
	bad := func(what string) (orderIdx, error) {
		return noOrder, fmt.Errorf("%w: order %d: %s", ErrSnapshot, o.orderID, what)
	}
	if o.account != [venue.AccountLength]byte(b[48:]) {
		// Self-trade and replace checks compare padded accounts.
		return bad("account is not NUL-padded")
	}
	if ri < 0 || int(ri) >= m.index.recsUsed {
		return bad("record out of range")
	}
	r := &m.index.recs[ri]
	if r.orderID != o.orderID || r.sessionIdx != o.sessionIdx || r.slot != noOrder || r.ordStatus != venue.OrdStatusNew {
		return bad("disagrees with its ClOrdID record")
	}
	ii, ok := m.instrByID.lookup(r.instrumentID)
	if !ok || !o.side.Valid() || !o.ordType.Valid() || !o.tif.Valid() || !o.flags.Valid() || !o.stpMode.Valid() ||
		waiting > 1 || (waiting == 0 && !canRest(o.ordType, o.tif)) || (waiting == 1 && !IsStop(o.ordType) && o.ordType != venue.OrdTypeMarket) {
		return bad("invalid instrument, side, type or time in force")
	}
	o.instrument = ii
	o.reportWord = reportWordOf(o.sessionIdx, o.side, o.ordType, r.instrumentID)
	in := &m.instruments[ii]
	if (limitLike(o.ordType) && !in.inBand(o.priceTicks)) || o.leavesQty <= 0 || o.cumQty < 0 || o.cumQty+o.leavesQty != o.qty ||
		(o.stopLevel != 0 && !IsStop(o.ordType)) || (o.stopLevel == 0 && IsStop(o.ordType) && (waiting != 1 || o.ordType != venue.OrdTypeStop)) || o.stopLevel < 0 || int(o.stopLevel) > len(in.stops[0].levels) {
		return bad("price or quantities are inconsistent")
	}
	bs, li := &in.sides[sideIndex(o.side)], in.levelIndex(o.priceTicks)
	queued := waiting == 1 && marketLike(o.ordType) && o.stopLevel == 0 // waiting for an uncross (an elected stop too)
	if queued {
		bs, li = &in.auction.market[sideIndex(o.side)], 0
		if in.auction.phase == 0 || o.stopLevel != 0 || o.priceTicks != 0 {
			return bad("waits for an uncross outside a call")
		}
	} else if waiting == 1 {
		bs, li = &in.stops[sideIndex(o.side)], o.stopLevel-1
		if m.stopsWaiting >= m.stopsMax {
			return bad("exceeds StopsMax")
		}
	}
	if bs.best >= 0 && bs.better(li, bs.best) {
		return bad("is not in priority order")
	}
	if isIceberg(o) != (ext.maxFloorQty != 0) || (isIceberg(o) && (waiting == 1 || ext.displayQty <= 0 ||
		ext.displayQty > min(ext.maxFloorQty, o.leavesQty))) || (!isIceberg(o) && ext.displayQty != 0) {
		return bad("iceberg display is inconsistent")
	}
	elected := queued && IsStop(o.ordType)
	switch {
	case elected && version < snapshotVersionNoHaltOrigin:
		return noOrder, fmt.Errorf("%w: matcher snapshot version %d lacks the stop price of order %d, an elected stop waiting for an uncross; "+
			"this build needs it (kept since version %d) to report the order (restart from the journal: move the snapshot files aside)",
			ErrSnapshot, version, o.orderID, snapshotVersionNoHaltOrigin)
	case elected != (ext.electedStopPxTicks != 0) || ext.electedStopPxTicks < 0:
		return bad("an elected stop's stop price is inconsistent")
	}
	m.pool.ext[oi] = ext
	o.rec = ri
	r.slot = oi
	switch {
	case queued:
		bs.pushBack(m.pool.orders, li, oi)
		o.resting, o.waiting = false, true // the risk snapshot holds its figures
	case waiting == 1:
		m.parkStopOnly(in, oi)
	default:
		bs.pushBack(m.pool.orders, li, oi)
	}
	return oi, nil
}

// resetState empties every book, list, index and counter, keeping the
// memory and the configuration (instrument statuses go back to Open); the
// instruments added by commands are forgotten. With untouched (the order
// pool and the ClOrdID tables hold nothing written since NewMatcher or the
// last reset: see ReadSnapshot) those are as they would leave them, and
// are not written again: at the venue's default bounds that is most of a
// start's restore.
func (m *Matcher) resetState(untouched bool) {
	m.dropAddedInstruments()
	m.prefetches = newPrefetchQueue()
	m.invariantsDue = invariantSchedule{} // a new state is checked at the next command
	for i := range m.instruments {
		in := &m.instruments[i]
		in.status, in.haltedFrom = venue.TradingStatusOpen, 0
		in.lastTradeTicks = 0
		in.auction = newAuctionState(&InstrumentConfig{VolatilityBandTicks: in.auction.volBandTicks,
			VolatilityAuctionNs: in.auction.volAuctionNs, CallExtension: in.auction.extendCalls})
		for _, bs := range []*bookSide{&in.sides[0], &in.sides[1], &in.stops[0], &in.stops[1]} {
			for li := range bs.levels {
				bs.levels[li] = level{head: noOrder, tail: noOrder}
			}
			clear(bs.bitmap.words)
			clear(bs.bitmap.summary)
			bs.best, bs.orders, bs.qtyRest = -1, 0, 0
		}
	}
	m.stopsWaiting = 0
	m.calls = m.calls[:0]
	m.timerDueNs = math.MaxInt64
	clear(m.index.recs[:m.index.recsUsed])
	clear(m.index.terms[:m.index.termsEnd])
	m.index.recsUsed, m.index.termsEnd = 0, 0
	if untouched {
		m.index.dayOrderID = 1 // rebuild(0)'s, over tables that hold no entry
	} else {
		m.pool.reset()
		m.index.rebuild(0)
	}
	m.gtd.items = m.gtd.items[:0]
	for i := range m.sessions {
		m.sessions[i] = newOrderList()
	}
	m.all = newOrderList()
	m.lastOrderID, m.lastExecID, m.lastTradeID = 0, 0, 0
	m.qty = quantityLedger{}
	m.risk.reset()
	m.nowNs, m.causeSeq = 0, 0
}

// addedSnapshotSize is the size of an added instrument's reference data.
const addedSnapshotSize = 4 + 1 + 1 + 6*8 + venue.SymbolLength + venue.GroupNameLength

// appendAdded encodes an added instrument's reference data.
func appendAdded(b []byte, a *AddedInstrument) []byte {
	b = binary.LittleEndian.AppendUint32(b, a.ID)
	b = append(b, byte(a.Status), byte(a.Tick.Scale))
	for _, v := range []int64{a.Tick.Mantissa, a.LotSize, a.MinQty, a.MaxQty, a.RefPriceTicks, a.BandPercent} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	var sym [venue.SymbolLength]byte
	var group [venue.GroupNameLength]byte
	copy(sym[:], a.Symbol)
	copy(group[:], a.Group)
	b = append(b, sym[:]...)
	return append(b, group[:]...)
}

// readAdded lists an added instrument again from its reference data, with
// the checks of the AddInstrument command.
func (m *Matcher) readAdded(sr *snapshotReader) error {
	b, err := sr.next(addedSnapshotSize)
	if err != nil {
		return err
	}
	a := AddedInstrument{ID: binary.LittleEndian.Uint32(b), Status: venue.TradingStatus(b[4]),
		Tick: decimal.Tick{Scale: int(b[5])}}
	v := b[6:]
	for _, p := range []*int64{&a.Tick.Mantissa, &a.LotSize, &a.MinQty, &a.MaxQty, &a.RefPriceTicks, &a.BandPercent} {
		*p = int64(binary.LittleEndian.Uint64(v))
		v = v[8:]
	}
	a.Symbol = string(bytes.TrimRight(v[:venue.SymbolLength], "\x00"))
	a.Group = string(bytes.TrimRight(v[venue.SymbolLength:], "\x00"))
	if reason := m.addInstrument(&a); reason == venue.RejectReasonDuplicateInstrument {
		return fmt.Errorf("%w: added instrument %d %q is in the matcher's configuration too: it was added by an AddInstrument command",
			ErrSnapshot, a.ID, a.Symbol)
	} else if reason != venue.RejectReasonNone {
		return fmt.Errorf("%w: added instrument %d %q: %v", ErrSnapshot, a.ID, a.Symbol, reason)
	}
	return nil
}
