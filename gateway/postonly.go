package gateway

import (
	"math/bits"
	"sync/atomic"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// What a reject echoes of its order. A reject's report (150=8) echoes what
// the order asked that the matcher's OrderRejected does not carry: a
// post-only order's ExecInst 6 (gateway/doc.go, "Unsupported order
// fields"), a GTD order's ExpireTime (126), which FIX 4.4 requires of a
// report whose TimeInForce is GTD, a stop order's StopPx (99), which it
// requires of a report of an order that gave one, and an iceberg's
// MaxFloor (111), as a reject of the gateway's own echoes it (the order's
// accept and later reports echo them all too). The event's layout stays as it is:
// the event export checks a stream's events byte for byte against a
// replay of the journal, so the same commands must give the same events
// in every build. The gateway knows them from the message it decoded:
// inbound notes them under the command's seq, and outbound reads them back
// for the reject. A drop-copy replay and the answers rebuilt after a crash
// see the command itself before its events (noteCommand).

// orderEcho is what a reject's report echoes of its NewOrder command.
type orderEcho struct {
	postOnly    bool
	gtd         bool  // TimeInForce GTD: expireNs is the order's expire time
	expireNs    int64 // as the command has it
	stop        bool  // a stop or stop-limit order: stopPxTicks is its StopPx
	stopPxTicks int64
	// iceberg: not a stop, with a display size (maxFloorQty, its MaxFloor).
	// A stop never has one (inbound refuses MaxFloor on any order but a
	// limit order, as the matcher does), so both share a slot's value.
	iceberg     bool
	maxFloorQty int64
}

// noted reports whether a reject has anything to echo.
func (e orderEcho) noted() bool { return e.postOnly || e.gtd || e.stop || e.iceberg }

// rejectEchoes remembers the echoes of NewOrder commands by seq, one slot
// per seq modulo its size: written by the sessions' goroutines, read by
// outbound. A slot is overwritten only by an order that has something to
// echo its size of commands later; New sizes it for the command and event
// rings together, which hold the commands between one published and the
// one outbound answers, so the first's reject is built before then. A
// reject whose slot was overwritten would only lack its echoes.
type rejectEchoes struct {
	slots []echoSlot
	mask  uint64
}

// echoSlot is one seq's echo in 24 bytes (the slots are as many as both
// rings' together): its flags are the key's top bits.
type echoSlot struct {
	key      atomic.Uint64 // seq+1 and the echo's flags (0: none), written last
	expireNs atomic.Int64
	// value is a stop's StopPx (echoStop) or an iceberg's MaxFloor
	// (echoIceberg), never both (orderEcho.iceberg).
	value atomic.Int64
}

// The flags of an echoSlot's key, above the seq+1 in its low bits.
const (
	echoPostOnly = 1 << 63
	echoGTD      = 1 << 62
	echoStop     = 1 << 61
	echoIceberg  = 1 << 60
	echoSeqMask  = echoIceberg - 1
)

// newRejectEchoes holds at least n seqs (a power of two, at least 1).
func newRejectEchoes(n int) *rejectEchoes {
	size := 1
	if n > 1 {
		size = 1 << bits.Len(uint(n-1))
	}
	return &rejectEchoes{slots: make([]echoSlot, size), mask: uint64(size - 1)}
}

// note records what command seq's reject echoes.
func (r *rejectEchoes) note(seq uint64, e orderEcho) {
	s := &r.slots[seq&r.mask]
	key := (seq + 1) & echoSeqMask
	if e.postOnly {
		key |= echoPostOnly
	}
	if e.gtd {
		key |= echoGTD
	}
	var value int64
	switch {
	case e.stop:
		key |= echoStop
		value = e.stopPxTicks
	case e.iceberg:
		key |= echoIceberg
		value = e.maxFloorQty
	}
	s.expireNs.Store(e.expireNs)
	s.value.Store(value)
	s.key.Store(key)
}

// get returns what command seq's reject echoes (nothing when it was not
// noted).
func (r *rejectEchoes) get(seq uint64) orderEcho {
	s := &r.slots[seq&r.mask]
	key := s.key.Load()
	if key&echoSeqMask != (seq+1)&echoSeqMask {
		return orderEcho{}
	}
	e := orderEcho{postOnly: key&echoPostOnly != 0, gtd: key&echoGTD != 0, expireNs: s.expireNs.Load()}
	switch {
	case key&echoStop != 0:
		e.stop, e.stopPxTicks = true, s.value.Load()
	case key&echoIceberg != 0:
		e.iceberg, e.maxFloorQty = true, s.value.Load()
	}
	return e
}

// echoOfCommand returns the seq of cmd and what its reject echoes when it
// is a NewOrder with something to echo.
func echoOfCommand(cmd []byte) (uint64, orderEcho, bool) {
	if id, err := venue.TemplateIDOf(cmd, 0); err != nil || id != venue.NewOrderTemplateID {
		return 0, orderEcho{}, false
	}
	var c venue.NewOrder
	if c.WrapDecode(cmd, 0) != nil {
		return 0, orderEcho{}, false
	}
	e := orderEcho{postOnly: c.Flags().Has(venue.OrderFlagsPostOnly)}
	if c.TimeInForce() == venue.TimeInForceGTD {
		e.gtd, e.expireNs = true, c.ExpireTimeNs()
	}
	if core.IsStop(c.OrdType()) {
		e.stop, e.stopPxTicks = true, c.StopPxTicks()
	} else if c.MaxFloorQty() != 0 {
		e.iceberg, e.maxFloorQty = true, c.MaxFloorQty()
	}
	return c.Seq(), e, e.noted()
}

// noteCommand notes cmd, a journaled command replayed before its events,
// when it is a NewOrder whose reject echoes something (a replaying
// gateway's).
func (g *Gateway) noteCommand(cmd []byte) {
	if seq, e, ok := echoOfCommand(cmd); ok {
		g.rejectEchoes.note(seq, e)
	}
}
