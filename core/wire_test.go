package core

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/fixvenue/fixvenue/sbe"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestLoadClOrdKey compares clOrdKey.load with the generated getter (bytes
// up to the first NUL) on fields of every length, with and without bytes
// left after the NUL.
func TestLoadClOrdKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var buf [cmdSlotSize]byte
	var c venue.NewOrder
	if err := c.WrapDecode(encodeHeaderOnly(buf[:], venue.NewOrderTemplateID, venue.NewOrderBlockLength), 0); err != nil {
		t.Fatal(err)
	}
	for n := 0; n <= venue.ClOrdIDLength; n++ {
		for trial := 0; trial < 200; trial++ {
			field := c.ClOrdIDArray()
			for i := range field {
				field[i] = byte(1 + rng.IntN(255)) // never NUL
			}
			if n < len(field) {
				field[n] = 0
				if trial%2 == 0 {
					clear(field[n:]) // properly padded
				}
			}
			want := c.ClOrdID()
			var k clOrdKey
			h := k.loadHashed(field[:], 3)
			var padded [venue.ClOrdIDLength]byte
			copy(padded[:], want)
			if !bytes.Equal(k.id(), want) || k.len() != len(want) || k.bytes() != padded || k.empty() != (len(want) == 0) {
				t.Fatalf("length %d: key %q, getter %q", n, k.bytes(), want)
			}
			if k2 := keyOf(want); !k2.equal(&k) || k2.hash(3) != h || k.hash(3) != h {
				t.Fatalf("length %d: keyOf and load disagree", n)
			}
		}
	}
}

// encodeHeaderOnly writes a message header for templateID at the start of
// buf, leaving the block as it is, and returns buf.
func encodeHeaderOnly(buf []byte, templateID uint16, blockLength int) []byte {
	var h venue.MessageHeader
	_ = h.Wrap(buf, 0)
	h.SetBlockLength(uint16(blockLength))
	h.SetTemplateID(templateID)
	h.SetSchemaID(venue.SchemaID)
	h.SetVersion(venue.SchemaVersion)
	return buf
}

// TestClOrdHashNeighbours checks the bucket design: ClOrdIDs that differ
// only in a last decimal or hex digit share a 16-slot bucket, and their
// tags differ.
func TestClOrdHashNeighbours(t *testing.T) {
	base := []byte("ORD1234567890104x") // the last character in the third word
	seen := map[uint32]bool{}
	var bucket uint32 // the table index uses the low half only
	for i, c := range []byte("0123456789abcdef") {
		base[len(base)-1] = c
		k := keyOf(base)
		h := k.hash(5)
		if i == 0 {
			bucket = uint32(h) &^ 15
		}
		if uint32(h)&^15 != bucket || h&15 != uint64(i) {
			t.Fatalf("%q: hash %#x, bucket %#x", base, h, bucket)
		}
		if seen[uint32(h>>32)] {
			t.Fatalf("%q: tag repeats", base)
		}
		seen[uint32(h>>32)] = true
	}
	k := keyOf(base)
	if k.hash(5) == k.hash(6) {
		t.Fatal("the session does not change the hash")
	}
}

// dirtySink hands out one slot full of 0xAA, so that a byte an encoder
// forgets shows.
type dirtySink struct {
	slot [EventSlotMin]byte
	n    int
}

func (s *dirtySink) Claim() []byte {
	for i := range s.slot {
		s.slot[i] = 0xAA
	}
	return s.slot[:]
}

func (s *dirtySink) Commit() { s.n = eventLength(s.slot[:]) }

func (s *dirtySink) event() []byte { return s.slot[:s.n] }

// TestEventEncoding compares every byte of the order-flow events, whose
// report head the matcher writes as words into a slot it does not zero,
// with the generated flyweights' encoding of the same values (WrapEncode
// and one setter per field), over random values.
func TestEventEncoding(t *testing.T) {
	m, err := NewMatcher(Config{OrdersMax: 4, ClOrdIDsMax: 8, SessionsMax: 8, Instruments: []InstrumentConfig{
		{ID: 0xA1B2C3D4, Symbol: "X", TickSize: "1", LotSize: 1, MinQty: 1, MaxQty: 100, RefPriceTicks: 100, BandPercent: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	sink := &dirtySink{}
	m.sink = sink
	rng := rand.New(rand.NewPCG(3, 4))
	text := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('!' + rng.IntN(90))
		}
		return b
	}
	for trial := 0; trial < 500; trial++ {
		oi := m.pool.alloc()
		m.pool.clearSlot(oi)
		o := &m.pool.orders[oi]
		o.orderID, o.sessionIdx = rng.Uint64(), uint16(rng.IntN(8))
		o.side, o.ordType, o.tif = venue.Side(rng.IntN(256)), venue.OrdType(rng.IntN(256)), venue.TimeInForce(rng.IntN(256))
		o.flags = venue.OrderFlags(rng.IntN(256)) &^ venue.OrderFlagsIceberg // icebergs: TestGolden, the property test
		o.reportWord = reportWordOf(o.sessionIdx, o.side, o.ordType, 0xA1B2C3D4)
		o.priceTicks, o.qty, o.leavesQty = rng.Int64(), rng.Int64(), int64(rng.IntN(2))*rng.Int64()
		o.cumQty, o.cumNotionalTicks, o.expireTimeNs = int64(rng.IntN(2))*rng.Int64(), rng.Int64(), rng.Int64()
		account := text(rng.IntN(venue.AccountLength + 1))
		copy(o.account[:], account)
		clOrdID, other := text(rng.IntN(venue.ClOrdIDLength+1)), text(rng.IntN(venue.ClOrdIDLength+1))
		key, otherKey := keyOf(clOrdID), keyOf(other)
		m.index.recsUsed = 0
		clear(m.index.byClOrdID)
		o.rec = addKey(&m.index, &key, o.sessionIdx, o, oi)
		m.causeSeq, m.nowNs, m.lastExecID = rng.Uint64(), rng.Int64(), rng.Uint64()
		execID := m.lastExecID + 1
		a, b, c, d := rng.Uint64(), rng.Int64(), rng.Int64(), rng.Uint64()
		var want [EventSlotMin]byte
		// wantOrder encodes into want what every order event carries of o.
		wantOrder := func(e interface {
			event
			orderHead
			SetAccount([]byte) error
		}, execID uint64) {
			_ = e.WrapEncode(want[:], 0)
			e.SetCauseSeq(m.causeSeq)
			e.SetTimestampNs(m.nowNs)
			e.SetSessionIdx(o.sessionIdx)
			e.SetSide(o.side)
			e.SetOrdType(o.ordType)
			e.SetInstrumentID(0xA1B2C3D4)
			e.SetTimeInForce(o.tif)
			e.SetOrderID(o.orderID)
			e.SetExecID(execID)
			e.SetPriceTicks(o.priceTicks)
			e.SetQty(o.qty)
			_ = e.SetAccount(account)
		}
		check := func(name string, n int) {
			t.Helper()
			if got := sink.event(); !bytes.Equal(got, want[:n]) {
				t.Fatalf("%s differs from the flyweight's encoding\n got %x\nwant %x", name, got, want[:n])
			}
		}

		stopPx := int64(rng.IntN(2)) * rng.Int64()
		maxFloor, display := int64(rng.IntN(2))*rng.Int64(), rng.Int64()
		m.emitAccepted(o, &newOrderCmd{stopPxTicks: stopPx, maxFloorQty: maxFloor, displayQty: display})
		var ea venue.OrderAccepted
		wantOrder(&ea, execID)
		ea.SetFlags(o.flags)
		ea.SetLeavesQty(o.leavesQty)
		ea.SetExpireTimeNs(o.expireTimeNs)
		ea.SetStopPxTicks(stopPx)
		ea.SetMaxFloorQty(maxFloor)
		ea.SetDisplayQty(display)
		_ = ea.SetClOrdID(clOrdID)
		check("OrderAccepted", venue.OrderAcceptedEncodedLength)

		aggressor := rng.IntN(2) == 0
		auction := uint8(rng.IntN(2))
		kind := fillResting
		if aggressor {
			kind |= fillAggressor
		}
		if auction != 0 {
			kind |= fillAuction
		}
		m.lastTradeID = a
		m.emitFill(o, kind, b, c, d, o.leavesQty)
		var ef venue.Fill
		wantOrder(&ef, execID+1)
		if aggressor {
			ef.SetAggressor(venue.BooleanTypeTrue)
		}
		ef.SetAuction(venue.BooleanType(auction))
		ef.SetOrdStatus(venue.OrdStatusPartiallyFilled)
		if o.leavesQty == 0 {
			ef.SetOrdStatus(venue.OrdStatusFilled)
		}
		ef.SetTradeID(a)
		ef.SetLastPriceTicks(b)
		ef.SetLastQty(c)
		ef.SetLeavesQty(o.leavesQty)
		ef.SetCumQty(o.cumQty)
		ef.SetCumNotionalTicks(o.cumNotionalTicks)
		ef.SetContraOrderID(d)
		ef.SetDisplayQty(o.leavesQty)
		_ = ef.SetClOrdID(clOrdID)
		check("Fill", venue.FillEncodedLength)

		reason, status := venue.CancelReason(rng.IntN(256)), venue.OrdStatus(rng.IntN(256))
		withOrig := rng.IntN(2) == 0
		if withOrig {
			m.emitCancelled(o, reason, status, b, &otherKey, &key)
		} else {
			m.emitCancelled(o, reason, status, b, &key, nil)
		}
		var ec venue.OrderCancelled
		wantOrder(&ec, execID+2)
		ec.SetReason(reason)
		ec.SetOrdStatus(status)
		ec.SetCancelledQty(b)
		ec.SetCumQty(o.cumQty)
		ec.SetCumNotionalTicks(o.cumNotionalTicks)
		if withOrig {
			_ = ec.SetClOrdID(other)
			_ = ec.SetOrigClOrdID(clOrdID)
		} else {
			_ = ec.SetClOrdID(clOrdID)
		}
		check("OrderCancelled", venue.OrderCancelledEncodedLength)

		lost := rng.IntN(2) == 0
		m.emitReplaced(o, oi, lost, b, c, &otherKey)
		var er venue.OrderReplaced
		wantOrder(&er, execID+3)
		if lost {
			er.SetPriorityLost(venue.BooleanTypeTrue)
		}
		er.SetOrdStatus(orderStatusOf(o))
		er.SetLeavesQty(o.leavesQty)
		er.SetCumQty(o.cumQty)
		er.SetCumNotionalTicks(o.cumNotionalTicks)
		er.SetOldPriceTicks(b)
		er.SetOldLeavesQty(c)
		er.SetExpireTimeNs(o.expireTimeNs)
		er.SetDisplayQty(o.leavesQty)
		_ = er.SetClOrdID(clOrdID)
		_ = er.SetOrigClOrdID(other)
		check("OrderReplaced", venue.OrderReplacedEncodedLength)

		m.pool.release(oi)
	}
}

// randomField fills a char field with a random text: any length, and after
// its NUL either padding or garbage.
func randomField(rng *rand.Rand, f []byte) {
	for i := range f {
		f[i] = byte(1 + rng.IntN(255))
	}
	if n := rng.IntN(len(f) + 1); n < len(f) {
		f[n] = 0
		if rng.IntN(2) == 0 {
			clear(f[n:])
		}
	}
}

// TestCommandDecoding compares the decoded order-flow commands with the
// generated flyweights' getters over random bytes: it checks the ClOrdIDs
// and accounts that the matcher reads a word at a time.
func TestCommandDecoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var buf [cmdSlotSize]byte
	fill := func(templateID uint16, blockLength int) []byte {
		for i := range buf {
			buf[i] = byte(rng.IntN(256))
		}
		return encodeHeaderOnly(buf[:], templateID, blockLength)
	}
	padded := func(v []byte) (b [venue.AccountLength]byte) {
		copy(b[:], v)
		return b
	}
	// The matcher decodes into the same structs command after command
	// (Matcher.decoded): decoding over the last command's fields must give
	// what decoding into zeroed ones gives.
	var reusedN newOrderCmd
	var reusedC cancelCmd
	var reusedR replaceCmd
	for trial := 0; trial < 2000; trial++ {
		reusedN.displayQty = rng.Int64() // the matcher sets it for an iceberg
		checkCommandDecode(t, rng, "NewOrder", fill(venue.NewOrderTemplateID, venue.NewOrderBlockLength), &reusedN,
			func(f venue.NewOrder) [][]byte { return [][]byte{f.ClOrdIDArray()[:], f.AccountArray()[:]} },
			func(n newOrderCmd, f venue.NewOrder) bool {
				return n.seq != f.Seq() || n.timestampNs != f.TimestampNs() || n.sessionIdx != f.SessionIdx() ||
					n.side != f.Side() || n.ordType != f.OrdType() || n.instrumentID != f.InstrumentID() ||
					n.tif != f.TimeInForce() || n.flags != f.Flags() || n.stpMode != f.StpMode() ||
					n.priceTicks != f.PriceTicks() || n.qty != f.Qty() || n.expireTimeNs != f.ExpireTimeNs() ||
					!bytes.Equal(n.clOrdID.id(), f.ClOrdID()) || n.clOrdIDLen != len(f.ClOrdID()) ||
					n.account != padded(f.Account())
			})
		checkCommandDecode(t, rng, "CancelOrder", fill(venue.CancelOrderTemplateID, venue.CancelOrderBlockLength), &reusedC,
			func(f venue.CancelOrder) [][]byte { return [][]byte{f.ClOrdIDArray()[:], f.OrigClOrdIDArray()[:]} },
			func(c cancelCmd, fc venue.CancelOrder) bool {
				return c.seq != fc.Seq() || c.timestampNs != fc.TimestampNs() || c.sessionIdx != fc.SessionIdx() ||
					c.side != fc.Side() || c.instrumentID != fc.InstrumentID() || c.orderID != fc.OrderID() ||
					!bytes.Equal(c.clOrdID.id(), fc.ClOrdID()) || !bytes.Equal(c.origClOrdID.id(), fc.OrigClOrdID()) ||
					c.origLen != len(fc.OrigClOrdID())
			})
		checkCommandDecode(t, rng, "ReplaceOrder", fill(venue.ReplaceOrderTemplateID, venue.ReplaceOrderBlockLength), &reusedR,
			func(f venue.ReplaceOrder) [][]byte {
				return [][]byte{f.ClOrdIDArray()[:], f.OrigClOrdIDArray()[:], f.AccountArray()[:]}
			},
			func(r replaceCmd, fr venue.ReplaceOrder) bool {
				return r.seq != fr.Seq() || r.timestampNs != fr.TimestampNs() || r.sessionIdx != fr.SessionIdx() ||
					r.side != fr.Side() || r.ordType != fr.OrdType() || r.instrumentID != fr.InstrumentID() ||
					r.tif != fr.TimeInForce() || r.orderID != fr.OrderID() || r.priceTicks != fr.PriceTicks() ||
					r.qty != fr.Qty() || r.expireTimeNs != fr.ExpireTimeNs() ||
					!bytes.Equal(r.clOrdID.id(), fr.ClOrdID()) || r.clOrdIDLen != len(fr.ClOrdID()) ||
					!bytes.Equal(r.origClOrdID.id(), fr.OrigClOrdID()) || r.origLen != len(fr.OrigClOrdID()) ||
					r.account != padded(fr.Account())
			})
	}
}

// checkCommandDecode is one command of TestCommandDecoding: it wraps cmd as
// an F, randomizes the char arrays fields gives, decodes it into a zeroed C
// and over *reused, and fails if wrong finds the first differs from the
// getters or the second differs from the first.
func checkCommandDecode[F any, PF interface {
	*F
	WrapDecode([]byte, int) error
}, C comparable, PC interface {
	*C
	decode(F)
}](t *testing.T, rng *rand.Rand, name string, cmd []byte, reused PC, fields func(F) [][]byte, wrong func(C, F) bool) {
	t.Helper()
	var f F
	if err := PF(&f).WrapDecode(cmd, 0); err != nil {
		t.Fatal(err)
	}
	for _, field := range fields(f) {
		randomField(rng, field)
	}
	var c C
	PC(&c).decode(f)
	if wrong(c, f) {
		t.Fatalf("%s decoded as %+v", name, c)
	}
	if reused.decode(f); *reused != c {
		t.Fatalf("%s decoded over the last one as %+v, want %+v", name, *reused, c)
	}
}

// TestCommandHeaderErrors checks that Apply refuses bad headers with the
// errors of the flyweights' WrapDecode, in the same order.
func TestCommandHeaderErrors(t *testing.T) {
	m, err := NewMatcher(Config{OrdersMax: 4, ClOrdIDsMax: 8, SessionsMax: 2, Instruments: []InstrumentConfig{
		{ID: 1, Symbol: "X", TickSize: "1", LotSize: 1, MinQty: 1, MaxQty: 100, RefPriceTicks: 100, BandPercent: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	sink := NewBufferSink(4)
	var buf [cmdSlotSize]byte
	for _, tc := range []struct {
		templateID uint16
		block      int
		decode     func([]byte) error
	}{
		{venue.NewOrderTemplateID, venue.NewOrderBlockLength, func(b []byte) error { var c venue.NewOrder; return c.WrapDecode(b, 0) }},
		{venue.CancelOrderTemplateID, venue.CancelOrderBlockLength, func(b []byte) error { var c venue.CancelOrder; return c.WrapDecode(b, 0) }},
		{venue.ReplaceOrderTemplateID, venue.ReplaceOrderBlockLength, func(b []byte) error { var c venue.ReplaceOrder; return c.WrapDecode(b, 0) }},
	} {
		for _, block := range []int{0, tc.block - 1, tc.block, tc.block + 1, 200, 0xFFFF} {
			for _, length := range []int{0, 7, 8, 9, venue.MessageHeaderSize + tc.block - 1, venue.MessageHeaderSize + tc.block, len(buf)} {
				clear(buf[:])
				cmd := encodeHeaderOnly(buf[:], tc.templateID, block)[:length]
				want := tc.decode(cmd)
				if want == nil {
					continue // a valid command; the golden and property tests cover those
				}
				if got := m.Apply(cmd, sink); got != want {
					t.Errorf("template %d block %d length %d: Apply says %v, WrapDecode %v", tc.templateID, block, length, got, want)
				}
			}
		}
	}
	// Another schema's message is refused as such whatever its template
	// id: Apply dispatches on the id before any check of the schema.
	for id := range uint16(300) {
		clear(buf[:])
		cmd := encodeHeaderOnly(buf[:], id, 200)
		cmd[4]++ // schemaId
		if got := m.Apply(cmd, sink); got != sbe.ErrWrongSchema {
			t.Errorf("template %d of another schema: Apply says %v", id, got)
		}
	}
	if sink.Len() != 0 {
		t.Fatalf("%d events for refused commands", sink.Len())
	}
}
