package gateway

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// The order round trip (fixvenue_order_round_trip_seconds, Config.OrderToER)
// is measured from a FIX message's arrival, which inbound notes with its
// command's seq (the monotonic time the command's wall timestamp was read
// beside), to an answer's hand-over. Only a command inbound published from a
// FIX message (publish: an order, cancel, replace, mass cancel or status
// request) has an arrival. The others carry the time their
// publisher stamped them, or one they were due: an operator's mass cancel,
// kill switch, halt or phase change and its uncross, an end of day, a Tick's
// expiries, a cancel-on-disconnect, a transition the schedule runs at
// start-up for the downtime (hours before). Their reports are no answer to a
// message and would fill the histogram with figures no order took, so
// outbound measures only the answers of commands noted here; those of a
// noted command are all measured, as its arrival is theirs (the fills of
// the resting orders it trades with, the expiries and auction timers it runs
// first). The answers rebuilt after a crash (Redeliver) and a drop-copy
// replay's copies are handed over elsewhere and never measured.
//
// An event carries no origin of its command: an operator's cancel names the
// order's session as a client's does. Inbound knows it, so it notes the seq
// of each command it publishes, and outbound looks the event's causeSeq up.

// fixCommands remembers the seqs of the commands inbound published from FIX
// messages, one slot per seq modulo its size: written by the sessions'
// goroutines before the command is published, read by outbound after the
// command's events, so the ring sequences order the two. New sizes it as
// rejectEchoes (postonly.go), for the command and event rings together, so
// a command's answers are handed over before a later command overwrites
// its slot; one whose slot was overwritten would only go unmeasured. A slot
// is 8 bytes, and 8 more for its message's arrival: 8 MiB with the default
// rings (config/default.toml).
//
// The round trip is timed by the monotonic clock (Gateway.monoNs): from the
// message's arrival as its session's goroutine took it (session.arrived),
// kept beside its seq, to the hand-over. The wall clock, which the
// commands are stamped with, may be stepped (an NTP step, an operator's
// date command: README, "Operating the venue"), and a round trip across
// the step would be off by as much, or below zero.
type fixCommands struct {
	slots []atomic.Uint64 // seq+1 of the command last noted in the slot (0: none)
	// arrived is, per slot, the monotonic arrival of the message of the
	// command noted there (nil: not kept, as for boundOrders).
	arrived []atomic.Int64
	mask    uint64
}

// newFixCommands holds at least n seqs (a power of two, at least 1), with
// their messages' arrivals when arrivals is set.
func newFixCommands(n int, arrivals bool) *fixCommands {
	size := 1
	if n > 1 {
		size = 1 << bits.Len(uint(n-1))
	}
	f := &fixCommands{slots: make([]atomic.Uint64, size), mask: uint64(size - 1)}
	if arrivals {
		f.arrived = make([]atomic.Int64, size)
	}
	return f
}

// note records that command seq is a FIX message's, which arrived at
// monotonic time arrived (not kept without arrivals). The arrival is
// stored first: outbound reads it once the seq says the slot is seq's.
func (f *fixCommands) note(seq uint64, arrived int64) {
	if f.arrived != nil {
		f.arrived[seq&f.mask].Store(arrived)
	}
	f.slots[seq&f.mask].Store(seq + 1)
}

// has reports whether command seq was noted (false on a nil f: a gateway
// that renders only, whose answers are never measured).
func (f *fixCommands) has(seq uint64) bool {
	return f != nil && f.slots[seq&f.mask].Load() == seq+1
}

// arrival returns the monotonic arrival of the message of command seq, and
// whether seq was noted (false on a nil f).
func (f *fixCommands) arrival(seq uint64) (int64, bool) {
	if !f.has(seq) {
		return 0, false
	}
	return f.arrived[seq&f.mask].Load(), true
}

// monoNs is the monotonic clock, in nanoseconds since the gateway was made:
// a wall clock stepped meanwhile does not move it (fixCommands).
func (g *Gateway) monoNs() int64 { return int64(time.Since(g.monoBase)) }
