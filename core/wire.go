package core

import (
	"encoding/binary"

	"github.com/fixvenue/fixvenue/sbe"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The matcher reads a few command fields and writes its four order-flow
// events with plain loads and stores at fixed offsets instead of through the
// generated flyweights, which check the length on every field, cut char
// arrays byte by byte and zero a block before filling it. The offsets are
// the generated constants (venue.<Message><Field>Offset, from the start of
// the block), so they follow the schema; they are constants, so every load
// and store still has a fixed offset. The names ending in At below are from
// the start of a message, header included. What the constants cannot say is
// how the code packs fields into words and which events share the report
// head: TestCommandDecoding checks every decoded field against the
// flyweights' getters, TestWireOffsets the ClOrdID fields, and
// TestEventEncoding every byte of each event against the flyweights'
// encoding (and the property test compares every event with the reference
// model's).

// Command fields: the ClOrdIDs, which clOrdKey.load reads a word at a time.
// Apply reads them only after the flyweight's WrapDecode has checked that
// the block is there.
const (
	newOrderClOrdIDAt      = venue.MessageHeaderSize + venue.NewOrderClOrdIDOffset
	cancelClOrdIDAt        = venue.MessageHeaderSize + venue.CancelOrderClOrdIDOffset
	cancelOrigClOrdIDAt    = venue.MessageHeaderSize + venue.CancelOrderOrigClOrdIDOffset
	replaceClOrdIDAt       = venue.MessageHeaderSize + venue.ReplaceOrderClOrdIDOffset
	replaceOrigClOrdIDAt   = venue.MessageHeaderSize + venue.ReplaceOrderOrigClOrdIDOffset
	statusRequestClOrdIDAt = venue.MessageHeaderSize + venue.OrderStatusRequestClOrdIDOffset
	newOrderAccountAt      = venue.MessageHeaderSize + venue.NewOrderAccountOffset
	replaceAccountAt       = venue.MessageHeaderSize + venue.ReplaceOrderAccountOffset
)

// clOrdIDField returns the fixed-width ClOrdID field at offset at of cmd.
func clOrdIDField(cmd []byte, at int) []byte {
	return cmd[at : at+venue.ClOrdIDLength]
}

// The four order-flow events share their first 52 bytes ("report head"),
// at these offsets from the start of the message today:
//
//	 0  header: blockLength u16, templateId u16, schemaId u16, version u16
//	 8  causeSeq u64
//	16  timestampNs i64
//	24  sessionIdx u16, side u8, ordType u8, instrumentId u32
//	32  timeInForce u8, then two event bytes and a reserved byte:
//	    OrderAccepted: flags u8, reserved u16 (zero)
//	    Fill: aggressor u8, ordStatus u8, reserved u8 (zero)
//	    OrderCancelled: reason u8, ordStatus u8, reserved u8 (zero)
//	    OrderReplaced: priorityLost u8, ordStatus u8, reserved u8 (zero)
//	36  orderId u64
//	44  execId u64
//
// then their own fields, in this order (the emit functions write each at
// its generated offset), then the char arrays:
//
//	OrderAccepted   priceTicks, qty, leavesQty, expireTimeNs; clOrdId, account
//	Fill            tradeId, priceTicks, qty, lastPriceTicks, lastQty,
//	                leavesQty, cumQty, cumNotionalTicks, contraOrderId;
//	                clOrdId, account
//	OrderCancelled  priceTicks, qty, cancelledQty, cumQty, cumNotionalTicks;
//	                clOrdId, origClOrdId, account
//	OrderReplaced   priceTicks, qty, leavesQty, cumQty, cumNotionalTicks,
//	                oldPriceTicks, oldLeavesQty, expireTimeNs; clOrdId,
//	                origClOrdId, account
//
// The report head's offsets are OrderAccepted's; the other three events have
// the same (TestEventEncoding). The emit functions write the other fields
// at blockAt (where an event's block starts) plus their generated offsets.
const (
	blockAt                = venue.MessageHeaderSize
	reportCauseSeqAt       = venue.MessageHeaderSize + venue.OrderAcceptedCauseSeqOffset
	reportTimestampAt      = venue.MessageHeaderSize + venue.OrderAcceptedTimestampNsOffset
	reportSessionAt        = venue.MessageHeaderSize + venue.OrderAcceptedSessionIdxOffset
	reportTifAt            = venue.MessageHeaderSize + venue.OrderAcceptedTimeInForceOffset
	reportOrderIDAt        = venue.MessageHeaderSize + venue.OrderAcceptedOrderIDOffset
	reportExecIDAt         = venue.MessageHeaderSize + venue.OrderAcceptedExecIDOffset
	acceptedClOrdIDAt      = venue.MessageHeaderSize + venue.OrderAcceptedClOrdIDOffset
	acceptedAccountAt      = venue.MessageHeaderSize + venue.OrderAcceptedAccountOffset
	fillClOrdIDAt          = venue.MessageHeaderSize + venue.FillClOrdIDOffset
	fillAccountAt          = venue.MessageHeaderSize + venue.FillAccountOffset
	cancelledClOrdIDAt     = venue.MessageHeaderSize + venue.OrderCancelledClOrdIDOffset
	cancelledOrigClOrdIDAt = venue.MessageHeaderSize + venue.OrderCancelledOrigClOrdIDOffset
	cancelledAccountAt     = venue.MessageHeaderSize + venue.OrderCancelledAccountOffset
	replacedClOrdIDAt      = venue.MessageHeaderSize + venue.OrderReplacedClOrdIDOffset
	replacedOrigClOrdIDAt  = venue.MessageHeaderSize + venue.OrderReplacedOrigClOrdIDOffset
	replacedAccountAt      = venue.MessageHeaderSize + venue.OrderReplacedAccountOffset
)

// put64 stores v little-endian at offset at of b.
func put64(b []byte, at int, v uint64) {
	binary.LittleEndian.PutUint64(b[at:at+8], v)
}

// putAccount writes an account field: the order keeps it NUL-padded.
func putAccount(field []byte, account *[venue.AccountLength]byte) {
	f := field[:venue.AccountLength]
	binary.LittleEndian.PutUint64(f[0:8], binary.LittleEndian.Uint64(account[0:8]))
	binary.LittleEndian.PutUint64(f[8:16], binary.LittleEndian.Uint64(account[8:16]))
}

// noClOrdID is the empty ClOrdID; it is never written.
var noClOrdID clOrdKey

// putOrNone writes key k as a ClOrdID field, or an empty one when k is nil.
func (k *clOrdKey) putOrNone(field []byte) {
	if k == nil {
		k = &noClOrdID
	}
	k.put(field)
}

// The message headers of the order-flow events, each as one little-endian
// word: blockLength, templateId, schemaId, version.
const (
	schemaWord      = uint64(venue.SchemaID)<<32 | uint64(venue.SchemaVersion)<<48
	acceptedHeader  = uint64(venue.OrderAcceptedBlockLength) | uint64(venue.OrderAcceptedTemplateID)<<16 | schemaWord
	fillHeader      = uint64(venue.FillBlockLength) | uint64(venue.FillTemplateID)<<16 | schemaWord
	cancelledHeader = uint64(venue.OrderCancelledBlockLength) | uint64(venue.OrderCancelledTemplateID)<<16 | schemaWord
	replacedHeader  = uint64(venue.OrderReplacedBlockLength) | uint64(venue.OrderReplacedTemplateID)<<16 | schemaWord
)

// putReportHead writes the report head of an order-flow event for order o
// (see above): header is the event's, e1 and e2 its two bytes after
// timeInForce, and the event takes the next ExecID. It is small enough to be
// inlined.
func (m *Matcher) putReportHead(b []byte, header uint64, o *order, e1, e2 uint8) {
	h := b[:reportExecIDAt+8]
	binary.LittleEndian.PutUint64(h[0:8], header)
	binary.LittleEndian.PutUint64(h[reportCauseSeqAt:], m.causeSeq)
	binary.LittleEndian.PutUint64(h[reportTimestampAt:], uint64(m.nowNs))
	binary.LittleEndian.PutUint64(h[reportSessionAt:], o.reportWord)
	binary.LittleEndian.PutUint32(h[reportTifAt:], uint32(o.tif)|uint32(e1)<<8|uint32(e2)<<16)
	binary.LittleEndian.PutUint64(h[reportOrderIDAt:], o.orderID)
	m.lastExecID++
	binary.LittleEndian.PutUint64(h[reportExecIDAt:], m.lastExecID)
}

// Commands: Apply reads the header once, checks it as the flyweights'
// WrapDecode would (same errors, same order), and the three commands of the
// order flow are decoded field by field into a struct, each field read once
// from a slice whose length is checked once, at the generated offsets plus
// the header (h in the decode functions). One word, from sessionIdx on,
// holds sessionIdx u16, side u8, ordType u8 (CancelOrder: reserved) and
// instrumentId u32 in every one of them, and is read once and taken apart
// with shifts. TestCommandDecoding checks every field against the
// flyweights' getters.

// commandBlock returns cmd cut to encodedLength (header and our block)
// after the checks of the flyweights' WrapDecode: hdr is cmd's header as
// one word (its template already matched), whose block must be at least
// ours (a newer sender's may be longer) and fit in cmd.
func commandBlock(cmd []byte, hdr uint64, encodedLength int) ([]byte, error) {
	acting := int(uint16(hdr))
	if acting < encodedLength-venue.MessageHeaderSize {
		return nil, sbe.ErrBlockLength
	}
	if len(cmd)-venue.MessageHeaderSize < acting {
		return nil, sbe.ErrShortBuffer
	}
	return cmd[:encodedLength], nil
}

// newOrderCmd is a NewOrder's fields.
type newOrderCmd struct {
	seq          uint64
	timestampNs  int64
	priceTicks   int64
	qty          int64
	expireTimeNs int64
	instrumentID uint32
	sessionIdx   uint16
	side         venue.Side
	ordType      venue.OrdType
	tif          venue.TimeInForce
	flags        venue.OrderFlags
	stpMode      venue.StpMode
	account      [venue.AccountLength]byte // NUL-padded after its first NUL
	clOrdID      clOrdKey
	clOrdIDLen   int
}

func (c *newOrderCmd) decode(b []byte) {
	const h = venue.MessageHeaderSize
	b = b[:venue.NewOrderEncodedLength]
	c.seq = binary.LittleEndian.Uint64(b[h+venue.NewOrderSeqOffset:])
	c.timestampNs = int64(binary.LittleEndian.Uint64(b[h+venue.NewOrderTimestampNsOffset:]))
	w := binary.LittleEndian.Uint64(b[h+venue.NewOrderSessionIdxOffset:])
	c.sessionIdx, c.side, c.ordType, c.instrumentID = uint16(w), venue.Side(w>>16), venue.OrdType(w>>24), uint32(w>>32)
	// One assignment, so that the compiler may load the three bytes before
	// storing any (it merges two of the loads and stores).
	c.tif, c.flags, c.stpMode = venue.TimeInForce(b[h+venue.NewOrderTimeInForceOffset]),
		venue.OrderFlags(b[h+venue.NewOrderFlagsOffset]), venue.StpMode(b[h+venue.NewOrderStpModeOffset])
	c.priceTicks = int64(binary.LittleEndian.Uint64(b[h+venue.NewOrderPriceTicksOffset:]))
	c.qty = int64(binary.LittleEndian.Uint64(b[h+venue.NewOrderQtyOffset:]))
	c.expireTimeNs = int64(binary.LittleEndian.Uint64(b[h+venue.NewOrderExpireTimeNsOffset:]))
	c.clOrdIDLen = c.clOrdID.load(b[newOrderClOrdIDAt:])
	loadAccount(&c.account, b[newOrderAccountAt:])
}

// cancelCmd is a CancelOrder's fields.
type cancelCmd struct {
	seq          uint64
	timestampNs  int64
	orderID      uint64
	instrumentID uint32
	sessionIdx   uint16
	side         venue.Side
	clOrdID      clOrdKey
	clOrdIDLen   int
	origClOrdID  clOrdKey
	origLen      int
}

func (c *cancelCmd) decode(b []byte) {
	const h = venue.MessageHeaderSize
	b = b[:venue.CancelOrderEncodedLength]
	c.seq = binary.LittleEndian.Uint64(b[h+venue.CancelOrderSeqOffset:])
	c.timestampNs = int64(binary.LittleEndian.Uint64(b[h+venue.CancelOrderTimestampNsOffset:]))
	w := binary.LittleEndian.Uint64(b[h+venue.CancelOrderSessionIdxOffset:])
	c.sessionIdx, c.side, c.instrumentID = uint16(w), venue.Side(w>>16), uint32(w>>32)
	c.orderID = binary.LittleEndian.Uint64(b[h+venue.CancelOrderOrderIDOffset:])
	c.clOrdIDLen = c.clOrdID.load(b[cancelClOrdIDAt:])
	c.origLen = c.origClOrdID.load(b[cancelOrigClOrdIDAt:])
}

// replaceCmd is a ReplaceOrder's fields.
type replaceCmd struct {
	seq          uint64
	timestampNs  int64
	orderID      uint64
	priceTicks   int64
	qty          int64
	expireTimeNs int64
	instrumentID uint32
	sessionIdx   uint16
	side         venue.Side
	ordType      venue.OrdType
	tif          venue.TimeInForce
	account      [venue.AccountLength]byte
	clOrdID      clOrdKey
	clOrdIDLen   int
	origClOrdID  clOrdKey
	origLen      int
}

func (c *replaceCmd) decode(b []byte) {
	const h = venue.MessageHeaderSize
	b = b[:venue.ReplaceOrderEncodedLength]
	c.seq = binary.LittleEndian.Uint64(b[h+venue.ReplaceOrderSeqOffset:])
	c.timestampNs = int64(binary.LittleEndian.Uint64(b[h+venue.ReplaceOrderTimestampNsOffset:]))
	w := binary.LittleEndian.Uint64(b[h+venue.ReplaceOrderSessionIdxOffset:])
	c.sessionIdx, c.side, c.ordType, c.instrumentID = uint16(w), venue.Side(w>>16), venue.OrdType(w>>24), uint32(w>>32)
	c.tif = venue.TimeInForce(b[h+venue.ReplaceOrderTimeInForceOffset])
	c.orderID = binary.LittleEndian.Uint64(b[h+venue.ReplaceOrderOrderIDOffset:])
	c.priceTicks = int64(binary.LittleEndian.Uint64(b[h+venue.ReplaceOrderPriceTicksOffset:]))
	c.qty = int64(binary.LittleEndian.Uint64(b[h+venue.ReplaceOrderQtyOffset:]))
	c.expireTimeNs = int64(binary.LittleEndian.Uint64(b[h+venue.ReplaceOrderExpireTimeNsOffset:]))
	c.clOrdIDLen = c.clOrdID.load(b[replaceClOrdIDAt:])
	c.origLen = c.origClOrdID.load(b[replaceOrigClOrdIDAt:])
	loadAccount(&c.account, b[replaceAccountAt:])
}

// loadAccount reads a fixed-width account field up to its first NUL into
// dst, NUL-padded, as copy(dst, getter()) would.
func loadAccount(dst *[venue.AccountLength]byte, field []byte) {
	f := field[:venue.AccountLength]
	w0 := binary.LittleEndian.Uint64(f[0:8])
	w1 := binary.LittleEndian.Uint64(f[8:16])
	if z := nulMarks(w0); z != 0 {
		w0 &= (z&-z)>>7 - 1
		w1 = 0
	} else if z := nulMarks(w1); z != 0 {
		w1 &= (z&-z)>>7 - 1
	}
	binary.LittleEndian.PutUint64(dst[0:8], w0)
	binary.LittleEndian.PutUint64(dst[8:16], w1)
}
