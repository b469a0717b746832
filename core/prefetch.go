package core

import (
	"encoding/binary"
	"unsafe"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Prefetch starts loading into the CPU's caches the index entry that
// applying cmd will read first, and returns without waiting for it: for a
// NewOrder the home slot of its ClOrdID in the (session, ClOrdID) table;
// for a CancelOrder or ReplaceOrder the home slot of its OrigClOrdID, or,
// when it addresses the order by OrderID alone, the OrderID's entry. Other
// commands are ignored.
//
// A caller that already holds the next command when it applies the current
// one (the pipeline, whose command ring shows it every command that has
// been published) calls Prefetch(next) and then Apply(current): with a
// production-size ClOrdID table (tens of megabytes) that first read of
// each command is a cache miss, and this way it overlaps the current
// command's work instead of stalling the next one.
//
// Prefetch changes nothing and emits nothing, so whether it was called
// cannot change what Apply does; it takes any bytes (a short, foreign or
// malformed command is ignored) and never panics. It costs the reading and
// hashing of one ClOrdID, which Apply repeats.
func (m *Matcher) Prefetch(cmd []byte) {
	if len(cmd) < venue.MessageHeaderSize {
		return
	}
	hdr := binary.LittleEndian.Uint64(cmd)
	if uint16(hdr>>32) != venue.SchemaID {
		return
	}
	const h = venue.MessageHeaderSize
	switch uint16(hdr >> 16) {
	case venue.NewOrderTemplateID:
		if b, err := commandBlock(cmd, hdr, venue.NewOrderEncodedLength); err == nil {
			m.prefetchClOrdID(b[newOrderClOrdIDAt:], binary.LittleEndian.Uint16(b[h+venue.NewOrderSessionIdxOffset:]), 0)
		}
	case venue.CancelOrderTemplateID:
		if b, err := commandBlock(cmd, hdr, venue.CancelOrderEncodedLength); err == nil {
			m.prefetchClOrdID(b[cancelOrigClOrdIDAt:], binary.LittleEndian.Uint16(b[h+venue.CancelOrderSessionIdxOffset:]),
				binary.LittleEndian.Uint64(b[h+venue.CancelOrderOrderIDOffset:]))
		}
	case venue.ReplaceOrderTemplateID:
		if b, err := commandBlock(cmd, hdr, venue.ReplaceOrderEncodedLength); err == nil {
			m.prefetchClOrdID(b[replaceOrigClOrdIDAt:], binary.LittleEndian.Uint16(b[h+venue.ReplaceOrderSessionIdxOffset:]),
				binary.LittleEndian.Uint64(b[h+venue.ReplaceOrderOrderIDOffset:]))
		}
	}
}

// prefetchClOrdID prefetches the home slot of the ClOrdID in field, or,
// when the field is empty, the entry of orderID (0: none), as locate would
// look them up.
func (m *Matcher) prefetchClOrdID(field []byte, session uint16, orderID uint64) {
	x := &m.index
	var k clOrdKey
	if n := k.load(field); n > 0 {
		prefetch(unsafe.Pointer(&x.byClOrdID[k.hashLen(n, session)&x.mask]))
		return
	}
	if d := orderID - x.dayOrderID; orderID != 0 && d < uint64(len(x.byDayOrderID)) {
		prefetch(unsafe.Pointer(&x.byDayOrderID[d]))
	}
}
