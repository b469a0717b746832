package marketdata

import (
	"errors"

	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

var errSnapshotTooLarge = errors.New("marketdata: snapshot larger than SnapshotBytesMax")

// snapshotEntriesMax is how many orders one SnapshotEntries message carries
// so that it fits in one snapshot packet.
const snapshotEntriesMax = (snapshotPacketBytes - packet.HeaderSize - packet.LengthPrefixSize -
	mdsbe.SnapshotEntriesEncodedLength) / mdsbe.SnapshotEntriesEntriesBlockLength

// frameSink collects packets as TCP frames in one growing buffer, up to a bound.
type frameSink struct {
	buf      []byte
	bytesMax int
}

func (s *frameSink) WritePacket(pkt []byte, _ uint64, _ int) error {
	if len(s.buf)+packet.LengthPrefixSize+len(pkt) > s.bytesMax {
		return errSnapshotTooLarge
	}
	s.buf = append(s.buf, byte(len(pkt)), byte(len(pkt)>>8))
	s.buf = append(s.buf, pkt...)
	return nil
}

// encodeSnapshot writes, as TCP frames, a snapshot of one instrument (or of
// all when instrumentID is 0): SnapshotStart, then per instrument its
// InstrumentDefinition and one or more SnapshotEntries with its orders in
// priority order, then SnapshotEnd. It holds the feed's lock while it
// encodes, so the books are exactly those after message lastSeq, the last
// one sent. Encoding is proportional to the book; the feed waits meanwhile.
func (f *Feed) encodeSnapshot(requestID uint64, instrumentID uint32, bytesMax int) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return encodeSnapshot(f.tracker, f.cfg.Channel, f.builder.NextSeq()-1, requestID, instrumentID, bytesMax)
}

// encodeSnapshot encodes the tracker's books, which must reflect exactly the
// messages up to lastSeq.
func encodeSnapshot(t *Tracker, channel uint16, lastSeq, requestID uint64, instrumentID uint32, bytesMax int) ([]byte, error) {
	first, last := 0, len(t.insts)
	if instrumentID != 0 {
		i, ok := t.instIndex[InstrumentID(instrumentID)]
		if !ok {
			return nil, ErrUnknownInstrument
		}
		first, last = int(i), int(i)+1
	}
	// Size the buffer once: every order's entry plus a packet's worth per
	// instrument for the headers, so encoding never copies what it wrote.
	estimate := t.index.count*mdsbe.SnapshotEntriesEntriesBlockLength + (last-first+1)*1024
	sink := &frameSink{bytesMax: bytesMax, buf: make([]byte, 0, min(estimate, bytesMax))}
	b, err := packet.NewBuilder(packet.BuilderConfig{Channel: channel, BytesMax: snapshotPacketBytes, Sink: sink})
	if err != nil {
		return nil, err
	}
	e := snapshotEncoder{b: b, timeNs: t.timeNs}
	e.start(requestID, lastSeq, uint32(last-first))
	for i := first; i < last; i++ {
		e.instrument(t, &t.insts[i])
	}
	e.end(requestID, lastSeq)
	if e.err == nil {
		e.err = b.Flush()
	}
	return sink.buf, e.err
}

// snapshotEncoder writes snapshot messages, keeping the first error.
type snapshotEncoder struct {
	b      *packet.Builder
	timeNs int64
	err    error
}

func (e *snapshotEncoder) reserve(n int) ([]byte, int, bool) {
	if e.err != nil {
		return nil, 0, false
	}
	buf, off, err := e.b.Reserve(n, e.timeNs)
	e.err = err
	return buf, off, err == nil
}

func (e *snapshotEncoder) start(requestID, lastSeq uint64, count uint32) {
	if buf, off, ok := e.reserve(mdsbe.SnapshotStartEncodedLength); ok {
		var m mdsbe.SnapshotStart
		_ = m.WrapEncode(buf, off)
		m.SetRequestID(requestID)
		m.SetLastSeq(lastSeq)
		m.SetInstrumentCount(count)
	}
}

func (e *snapshotEncoder) end(requestID, lastSeq uint64) {
	if buf, off, ok := e.reserve(mdsbe.SnapshotEndEncodedLength); ok {
		var m mdsbe.SnapshotEnd
		_ = m.WrapEncode(buf, off)
		m.SetRequestID(requestID)
		m.SetLastSeq(lastSeq)
	}
}

func (e *snapshotEncoder) instrument(t *Tracker, in *instrument) {
	if buf, off, ok := e.reserve(mdsbe.InstrumentDefinitionEncodedLength); ok {
		var m mdsbe.InstrumentDefinition
		_ = m.WrapEncode(buf, off)
		m.SetInstrumentID(uint32(in.def.ID))
		m.SetTickExponent(in.def.TickExponent)
		m.SetTickMantissa(in.def.TickMantissa)
		m.SetLotSize(in.def.LotSize)
		m.SetStatus(in.status)
		e.err = m.SetSymbolString(in.def.Symbol)
	}
	// Orders in priority order: bids best first, then asks best first.
	var batch [snapshotEntriesMax]BookOrder
	var sides [snapshotEntriesMax]mdsbe.Side
	n, sent := 0, false
	for _, si := range [2]sideIdx{bidSide, askSide} {
		s := &in.sides[si]
		for li := len(s.levels) - 1; li >= 0; li-- {
			for oi := s.levels[li].head; oi != noOrder; oi = t.orders[oi].next {
				o := &t.orders[oi]
				batch[n] = BookOrder{PublicID: o.pub, PriceTicks: o.priceTicks, Qty: o.leavesQty}
				sides[n] = wireSide(si)
				n++
				if n == snapshotEntriesMax {
					e.entries(in, batch[:n], sides[:n])
					n, sent = 0, true
				}
			}
		}
	}
	if n > 0 || !sent {
		e.entries(in, batch[:n], sides[:n])
	}
	if ind := &in.indicative; ind.Active {
		e.indicative(in, ind)
	}
}

// indicative writes the call's last indicative uncross as an AuctionUpdate
// of kind Indicative after the instrument's entries, at the rptSeq they
// carry: a client that joins or recovers during a call knows at once what
// the call would uncross at (package documentation, "Auctions"). Its status
// is the phase the live AuctionUpdate carried, not the instrument's status
// now: the entries carry that, and a call extended into a volatility
// auction or halted is still the call it was.
func (e *snapshotEncoder) indicative(in *instrument, ind *Indicative) {
	buf, off, ok := e.reserve(mdsbe.AuctionUpdateEncodedLength)
	if !ok {
		return
	}
	var m mdsbe.AuctionUpdate
	_ = m.WrapEncode(buf, off)
	m.SetInstrumentID(uint32(in.def.ID))
	m.SetStatus(mdsbe.TradingStatus(ind.Phase))
	m.SetKind(mdsbe.AuctionUpdateKindIndicative)
	m.SetImbalanceSide(mdsbe.ImbalanceSide(ind.ImbalanceSide))
	m.SetRule(mdsbe.AuctionRule(ind.Rule))
	m.SetRptSeq(in.rptSeq)
	m.SetPriceTicks(ind.PriceTicks)
	m.SetMatchedQty(ind.MatchedQty)
	m.SetImbalanceQty(ind.ImbalanceQty)
	m.SetTransactTimeNs(e.timeNs)
}

func (e *snapshotEncoder) entries(in *instrument, orders []BookOrder, sides []mdsbe.Side) {
	buf, off, ok := e.reserve(mdsbe.SnapshotEntriesEncodedLength + len(orders)*mdsbe.SnapshotEntriesEntriesBlockLength)
	if !ok {
		return
	}
	var m mdsbe.SnapshotEntries
	_ = m.WrapEncode(buf, off)
	m.SetInstrumentID(uint32(in.def.ID))
	m.SetStatus(in.status)
	m.SetRptSeq(in.rptSeq)
	m.SetLastTradePriceTicks(in.lastTradePriceTicks)
	m.SetLastTradeQty(in.lastTradeQty)
	m.SetVolume(in.volume)
	g, err := m.EntriesCount(len(orders))
	if err != nil {
		e.err = err
		return
	}
	for i := range orders {
		en := g.Entry(i)
		en.SetOrderID(uint64(orders[i].PublicID))
		en.SetPriceTicks(orders[i].PriceTicks)
		en.SetQty(orders[i].Qty)
		en.SetSide(sides[i])
	}
}
