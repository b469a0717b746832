package gateway

import (
	"math/bits"
	"sync/atomic"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Post-only rejects. A post-only order's reports carry ExecInst 6, its
// reject too (gateway/doc.go, "Unsupported order fields"), but the
// matcher's OrderRejected carries no flags, and its layout stays as it is:
// the event export checks a stream's events byte for byte against a replay
// of the journal, so the same commands must give the same events in every
// build. The gateway knows the order was post-only from the message it
// decoded: inbound notes the command's seq, and outbound reads it back for
// the reject. A drop-copy replay and the answers rebuilt after a crash see
// the command itself before its events (noteCommand).

// postOnlySeqs remembers the seqs of post-only NewOrder commands, one
// slot per seq modulo its size: written by the sessions' goroutines,
// read by outbound. A slot is overwritten only by a post-only order its
// size of commands later; New sizes it for the command and event rings
// together, which hold the commands between one published and the one
// outbound answers, so the first's reject is built before then. A slot
// keeps no other state: a reject whose slot was overwritten would only
// lack its ExecInst.
type postOnlySeqs struct {
	slots []atomic.Uint64 // seq+1 (0: none)
	mask  uint64
}

// newPostOnlySeqs holds at least n seqs (a power of two, at least 1).
func newPostOnlySeqs(n int) *postOnlySeqs {
	size := 1
	if n > 1 {
		size = 1 << bits.Len(uint(n-1))
	}
	return &postOnlySeqs{slots: make([]atomic.Uint64, size), mask: uint64(size - 1)}
}

// note records that command seq is a post-only new order.
func (p *postOnlySeqs) note(seq uint64) { p.slots[seq&p.mask].Store(seq + 1) }

// has reports whether command seq was noted.
func (p *postOnlySeqs) has(seq uint64) bool { return p.slots[seq&p.mask].Load() == seq+1 }

// postOnlyCommand returns the seq of cmd when it is a post-only
// NewOrder.
func postOnlyCommand(cmd []byte) (uint64, bool) {
	if id, err := venue.TemplateIDOf(cmd, 0); err != nil || id != venue.NewOrderTemplateID {
		return 0, false
	}
	var c venue.NewOrder
	if c.WrapDecode(cmd, 0) != nil || !c.Flags().Has(venue.OrderFlagsPostOnly) {
		return 0, false
	}
	return c.Seq(), true
}

// noteCommand notes cmd, a journaled command replayed before its events,
// when it is a post-only NewOrder (a replaying gateway's).
func (g *Gateway) noteCommand(cmd []byte) {
	if seq, ok := postOnlyCommand(cmd); ok {
		g.postOnlySeqs.note(seq)
	}
}
