package gateway

import (
	"math/bits"
	"sync/atomic"
)

// The order round trip (fixvenue_order_round_trip_seconds, Config.OrderToER)
// is measured from a FIX message's arrival, the timestamp inbound gives its
// command, to an answer's hand-over. Only a command inbound published from a
// FIX message (publish: an order, cancel, replace, mass cancel or status
// request) has an arrival for a timestamp. The others carry the time their
// publisher stamped them, or one they were due: an operator's mass cancel,
// kill switch, halt or phase change and its uncross, an end of day, a Tick's
// expiries, a cancel-on-disconnect, a transition the schedule runs at
// start-up for the downtime (hours before). Their reports are no answer to a
// message and would fill the histogram with figures no order took, so
// outbound measures only the answers of commands noted here; those of a
// noted command are all measured, as its timestamp is theirs (the fills of
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
// is 8 bytes: 4 MiB with the default rings (config/default.toml).
type fixCommands struct {
	slots []atomic.Uint64 // seq+1 of the command last noted in the slot (0: none)
	mask  uint64
}

// newFixCommands holds at least n seqs (a power of two, at least 1).
func newFixCommands(n int) *fixCommands {
	size := 1
	if n > 1 {
		size = 1 << bits.Len(uint(n-1))
	}
	return &fixCommands{slots: make([]atomic.Uint64, size), mask: uint64(size - 1)}
}

// note records that command seq is a FIX message's.
func (f *fixCommands) note(seq uint64) {
	f.slots[seq&f.mask].Store(seq + 1)
}

// has reports whether command seq was noted (false on a nil f: a gateway
// that renders only, whose answers are never measured).
func (f *fixCommands) has(seq uint64) bool {
	return f != nil && f.slots[seq&f.mask].Load() == seq+1
}
