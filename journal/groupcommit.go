package journal

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// commandSeqOffset is where every command of the schema keeps its seq: the
// first field of the block, right after the message header.
const commandSeqOffset = venue.MessageHeaderSize

// Run is the journal goroutine's loop over the command ring (group
// commit). It waits on barrier for published commands, appends every
// command published since the last flush (payload: the SBE message, header
// plus blockLength bytes, copied verbatim from the slot), stores own (the
// journal's gating sequence on the ring, so producers may reuse those slots
// while the sync runs), then flushes: one write, one fdatasync, durable =
// the batch's last seq. Commands published during that fdatasync form the
// next batch, which is why latency stays near one fsync while throughput
// grows with load.
//
// The ring slot at sequence s must hold the command whose seq field is
// NextSeq()+(s-(own+1)) at entry: command seqs continue the journal across
// restarts. A slot that is not a command of the venue schema, or whose seq
// field disagrees, is a broken pipeline; Run fails the journal rather than
// journal something the matcher would apply differently.
//
// Run returns nil when the barrier is alerted or the ring closed (after
// everything already taken was flushed), and the FailedError when the
// journal fails. Use Config.OnFlush to wake consumers that wait for the
// durable sequence.
func (w *Writer) Run(r *ring.Ring, barrier *ring.Barrier, own *ring.Sequence) error {
	next := own.Load() + 1
	base := w.nextSeq - uint64(next) // journal seq of ring sequence s is base+s
	for {
		avail, err := barrier.WaitFor(next)
		if errors.Is(err, ring.ErrAlerted) || errors.Is(err, ring.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		for s := next; s <= avail; s++ {
			if err := w.appendCommand(base+uint64(s), r.Slot(s)); err != nil {
				return err
			}
		}
		own.Store(avail)
		if err := w.Flush(); err != nil {
			return err
		}
		next = avail + 1
	}
}

// appendCommand journals the command at the start of slot. Any error is
// fail-stop: the matcher applies every command, so the journal may not
// skip one.
func (w *Writer) appendCommand(seq uint64, slot []byte) error {
	n, err := CommandLength(slot)
	if err != nil {
		return w.fail("decode command", fmt.Errorf("command seq %d: %w", seq, err))
	}
	if got := binary.LittleEndian.Uint64(slot[commandSeqOffset:]); got != seq {
		return w.fail("append", fmt.Errorf("command in the slot of seq %d carries seq %d", seq, got))
	}
	if err := w.Append(seq, slot[:n]); err != nil {
		if errors.Is(err, ErrFailed) {
			return err
		}
		return w.fail("append", fmt.Errorf("command seq %d: %w", seq, err))
	}
	return nil
}

// ErrNotCommand is returned by CommandLength for bytes that are not a
// command of the venue schema.
var ErrNotCommand = errors.New("journal: not a venue command")

// CommandLength returns the encoded length of the SBE message at the start
// of b (header plus blockLength) after checking the schema id, that the
// template is a command, and that the message fits in b.
func CommandLength(b []byte) (int, error) {
	templateID, err := venue.TemplateIDOf(b, 0)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNotCommand, err)
	}
	if !isCommand(templateID) {
		return 0, fmt.Errorf("%w: template %d %s", ErrNotCommand, templateID, venue.MessageName(templateID))
	}
	n := venue.MessageHeaderSize + int(binary.LittleEndian.Uint16(b))
	if n < commandSeqOffset+8 || n > len(b) {
		return 0, fmt.Errorf("%w: length %d for a %d-byte buffer", ErrNotCommand, n, len(b))
	}
	return n, nil
}

// isCommand reports whether templateID is a command (gateway → matcher)
// rather than an event. A command added to the schema must be added here,
// or the journal fails loudly on its first use.
func isCommand(templateID uint16) bool {
	switch templateID {
	case venue.NewOrderTemplateID, venue.CancelOrderTemplateID, venue.ReplaceOrderTemplateID,
		venue.MassCancelTemplateID, venue.OrderStatusRequestTemplateID, venue.SessionDisconnectedTemplateID,
		venue.SetTradingStatusTemplateID, venue.EndOfDayTemplateID, venue.SnapshotTemplateID, venue.TickTemplateID,
		venue.OperatorCommandTemplateID:
		return true
	}
	return false
}
