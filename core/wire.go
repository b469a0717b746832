package core

import (
	"encoding/binary"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The matcher decodes its commands and encodes its events with the
// generated flyweights of package venue, which check the buffer once, at
// Wrap, and compile each accessor to a plain load or store. Two things are
// its own, for speed, and live here: ClOrdIDs and accounts move a word at a
// time between the flyweights' char arrays (FArray) and the order's keys,
// and the four order-flow events share a report head that the matcher
// writes as words.
//
// The report head: OrderAccepted, Fill, OrderCancelled and OrderReplaced
// have the same first fields at the same offsets (from the start of the
// message, header included):
//
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
// putReportHead writes them as five words, one of them the order's
// precomputed reportWord (bytes 24-31); the flyweights' setters would store
// the packed fields one by one. The offsets are OrderAccepted's generated
// ones; TestEventEncoding checks every byte of all four events against the
// flyweights' own encoding, so a schema change that moved a field in one of
// them fails there.
const (
	reportCauseSeqAt  = venue.MessageHeaderSize + venue.OrderAcceptedCauseSeqOffset
	reportTimestampAt = venue.MessageHeaderSize + venue.OrderAcceptedTimestampNsOffset
	reportSessionAt   = venue.MessageHeaderSize + venue.OrderAcceptedSessionIdxOffset
	reportTifAt       = venue.MessageHeaderSize + venue.OrderAcceptedTimeInForceOffset
	reportOrderIDAt   = venue.MessageHeaderSize + venue.OrderAcceptedOrderIDOffset
	reportExecIDAt    = venue.MessageHeaderSize + venue.OrderAcceptedExecIDOffset
)

// putAccount writes an account field: the order keeps it NUL-padded.
func putAccount(f *[venue.AccountLength]byte, account *[venue.AccountLength]byte) {
	binary.LittleEndian.PutUint64(f[0:8], binary.LittleEndian.Uint64(account[0:8]))
	binary.LittleEndian.PutUint64(f[8:16], binary.LittleEndian.Uint64(account[8:16]))
}

// noClOrdID is the empty ClOrdID; it is never written.
var noClOrdID clOrdKey

// putOrNone writes key k as a ClOrdID field, or an empty one when k is nil.
func (k *clOrdKey) putOrNone(field *[venue.ClOrdIDLength]byte) {
	if k == nil {
		k = &noClOrdID
	}
	k.put(field)
}

// putReportHead writes the report head of an order-flow event for order o
// into the event's slot (see above): ext holds its three bytes after
// timeInForce (headBytes), and the event takes the next ExecID. The
// event's flyweight writes the header. It is small enough to be inlined.
func (m *Matcher) putReportHead(slot []byte, o *order, ext uint32) {
	h := slot[:reportExecIDAt+8]
	binary.LittleEndian.PutUint64(h[reportCauseSeqAt:], m.causeSeq)
	binary.LittleEndian.PutUint64(h[reportTimestampAt:], uint64(m.nowNs))
	binary.LittleEndian.PutUint64(h[reportSessionAt:], o.reportWord)
	binary.LittleEndian.PutUint32(h[reportTifAt:], uint32(o.tif)|ext)
	binary.LittleEndian.PutUint64(h[reportOrderIDAt:], o.orderID)
	m.lastExecID++
	binary.LittleEndian.PutUint64(h[reportExecIDAt:], m.lastExecID)
}

// headBytes packs the three bytes of a report head after timeInForce into
// putReportHead's ext: one word, so that an emitter passes and keeps one
// value where it had three.
func headBytes(e1, e2, e3 uint8) uint32 {
	return uint32(e1)<<8 | uint32(e2)<<16 | uint32(e3)<<24
}

// Commands: the three commands of the order flow are decoded into structs
// once, from a flyweight that WrapDecode checked (passed by value, so its
// pointer stays in a register), the ClOrdIDs and the account a word at a
// time from the char arrays.

// newOrderCmd is a NewOrder's fields.
type newOrderCmd struct {
	seq          uint64
	timestampNs  int64
	priceTicks   int64
	qty          int64
	expireTimeNs int64
	stopPxTicks  int64
	maxFloorQty  int64
	displayQty   int64 // an iceberg's first display slice, set when it is accepted
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

func (c *newOrderCmd) decode(w venue.NewOrder) {
	c.seq, c.timestampNs = w.Seq(), w.TimestampNs()
	c.sessionIdx, c.side, c.ordType, c.instrumentID = w.SessionIdx(), w.Side(), w.OrdType(), w.InstrumentID()
	c.tif, c.flags, c.stpMode = w.TimeInForce(), w.Flags(), w.StpMode()
	c.priceTicks, c.qty, c.expireTimeNs = w.PriceTicks(), w.Qty(), w.ExpireTimeNs()
	c.stopPxTicks, c.maxFloorQty = w.StopPxTicks(), w.MaxFloorQty()
	c.displayQty = 0 // an iceberg's is set when it is accepted
	c.clOrdIDLen = c.clOrdID.load(w.ClOrdIDArray()[:])
	loadAccount(&c.account, w.AccountArray())
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
	// matchOrder: the order's side and instrument must be these
	// (CancelMatchesOrder in the command's checks).
	matchOrder bool
	// remember: the cancel's own ClOrdID is recorded (CancelRemembersClOrdID).
	remember bool
}

// CancelMatchesOrder is the bit of a CancelOrder's checks that refuses the
// cancel of an order whose side or instrument differ from the command's
// (UnsupportedOrderCharacteristic, as a replace changing them is). Cancels
// journaled before it existed have it clear and replay as they did.
const CancelMatchesOrder uint8 = 1

// CancelRemembersClOrdID is the bit of a CancelOrder's checks that records
// a done cancel's own ClOrdID for the day, naming the cancelled order: a
// status request by it answers the order, and an order or a request that
// uses it again is a duplicate (doc.go, "Rules").
// Cancels journaled before it existed have it clear and replay as they did.
const CancelRemembersClOrdID uint8 = 2

// StatusMatchesOrder is the bit of an OrderStatusRequest's checks that
// answers a request naming an order of the other side, or of another
// instrument, as one naming no order (ordStatus Unknown, reason
// UnsupportedOrderCharacteristic): Side and the instrument are among the
// fields that identify the order in a FIX 4.4 status request, as a
// cancel's do (CancelMatchesOrder). Requests journaled before it existed
// have it clear and replay as they did.
const StatusMatchesOrder uint8 = 1

func (c *cancelCmd) decode(w venue.CancelOrder) {
	c.seq, c.timestampNs = w.Seq(), w.TimestampNs()
	c.matchOrder = w.Checks()&CancelMatchesOrder != 0
	c.remember = w.Checks()&CancelRemembersClOrdID != 0
	c.sessionIdx, c.side, c.instrumentID = w.SessionIdx(), w.Side(), w.InstrumentID()
	c.orderID = w.OrderID()
	c.clOrdIDLen = c.clOrdID.load(w.ClOrdIDArray()[:])
	c.origLen = c.origClOrdID.load(w.OrigClOrdIDArray()[:])
}

// replaceCmd is a ReplaceOrder's fields.
type replaceCmd struct {
	seq          uint64
	timestampNs  int64
	orderID      uint64
	priceTicks   int64
	qty          int64
	expireTimeNs int64
	stopPxTicks  int64
	maxFloorQty  int64
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
	possResend   bool // ReplacePossResend in the command's flags
	postOnly     bool // ReplacePostOnly in the command's flags
	endedLate    bool // ReplaceEndedTooLate in the command's flags
	sayMarket    bool // ReplaceSaysMarket in the command's flags
}

// ReplacePossResend is the bit of a ReplaceOrder's flags that says the client
// sent the replace again (PossResend): when its ClOrdID is already known in
// the session it is answered with that order's status instead of being
// refused as a duplicate, as a NewOrder with OrderFlagsPossResend is.
// Replaces journaled before it existed have it clear and replay as they did.
const ReplacePossResend uint8 = 1

// ReplacePostOnly is the bit of a ReplaceOrder's flags that says the
// replace asks for post-only (FIX ExecInst 6). A replace keeps the order's
// post-only, so the bit adds nothing to an order entered post-only; on one
// that was not, the replace is refused (UnsupportedOrderCharacteristic)
// rather than amended into an order that may take liquidity the client
// asked it not to (doc.go, "Rules"). Replaces journaled before it existed
// have it clear and replay as they did.
const ReplacePostOnly uint8 = 2

// ReplaceEndedTooLate is the bit of a ReplaceOrder's flags that answers a
// replace naming a ClOrdID of an order that has ended since (one a replace
// or a recorded cancel left) TooLateToCancel, as a cancel with
// CancelRemembersClOrdID is, rather than UnknownOrder (doc.go, "Rules").
// Replaces journaled before it existed have it clear and replay as they
// did.
const ReplaceEndedTooLate uint8 = 4

// ReplaceSaysMarket is the bit of a ReplaceOrder's flags that refuses a
// replace of a market order waiting for an uncross, an elected stop order
// waiting as one included, with MarketNotReplaceable, which says why,
// rather than the UnsupportedOrderCharacteristic of a replace that changes
// what the order is (doc.go, "Rules"). Replaces journaled before it
// existed have it clear and replay as they did.
const ReplaceSaysMarket uint8 = 8

func (c *replaceCmd) decode(w venue.ReplaceOrder) {
	c.seq, c.timestampNs = w.Seq(), w.TimestampNs()
	c.possResend = w.Flags()&ReplacePossResend != 0
	c.postOnly = w.Flags()&ReplacePostOnly != 0
	c.endedLate = w.Flags()&ReplaceEndedTooLate != 0
	c.sayMarket = w.Flags()&ReplaceSaysMarket != 0
	c.sessionIdx, c.side, c.ordType, c.instrumentID = w.SessionIdx(), w.Side(), w.OrdType(), w.InstrumentID()
	c.tif = w.TimeInForce()
	c.orderID = w.OrderID()
	c.priceTicks, c.qty, c.expireTimeNs = w.PriceTicks(), w.Qty(), w.ExpireTimeNs()
	c.stopPxTicks, c.maxFloorQty = w.StopPxTicks(), w.MaxFloorQty()
	c.clOrdIDLen = c.clOrdID.load(w.ClOrdIDArray()[:])
	c.origLen = c.origClOrdID.load(w.OrigClOrdIDArray()[:])
	loadAccount(&c.account, w.AccountArray())
}

// loadAccount reads a fixed-width account field up to its first NUL into
// dst, NUL-padded, as copy(dst, getter()) would.
func loadAccount(dst *[venue.AccountLength]byte, f *[venue.AccountLength]byte) {
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
