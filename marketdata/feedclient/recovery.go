package feedclient

import (
	"errors"
	"fmt"

	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// Recovery runs on the client's goroutine and calls the Recoverer
// synchronously: while it waits, the UDP socket buffers the live feed
// (ReceiveBufferBytes), and the packets are handled afterwards, most as
// duplicates. A Recoverer call never nests: an inconsistency found while
// applying retransmitted packets only marks that a snapshot is needed.

// snapState is the progress of the snapshot being received.
type snapState struct {
	started bool
	done    bool
	lastSeq uint64
	timeNs  int64 // the packets' sending time: the feed's last event's
}

// join takes the first snapshot (or a new one after the books went stale).
// It reports false when it could not, or may not yet try again.
func (c *Client) join() bool {
	if c.cfg.Clock().UnixNano() < c.resyncAfter || c.recovering {
		return false
	}
	r := Recovery{Cause: CauseJoin, Outcome: Snapshotted}
	if err := c.snapshot(); err != nil {
		r.Outcome, r.Err = Unrecovered, err
	}
	c.report(r)
	if c.expected == 0 {
		return false
	}
	c.drain()
	return true
}

// recover fills the gaps between c.expected and the last sequence known to
// exist, one after the other: holes between held packets are as old as the
// first one (or, after a heartbeat, certainly lost). The loop ends when no
// gap is left or a round makes no progress.
func (c *Client) recover(cause RecoveryCause) {
	for rounds := 0; rounds <= c.cfg.ReorderPacketsMax && !c.recovering; rounds++ {
		before := c.expected
		c.recoverOne(cause)
		if c.expected == 0 || c.expected == before || c.InSync() {
			return
		}
	}
}

// recoverOne fills the gap from c.expected to the first held packet (or to
// the sequence a heartbeat announced): by retransmission when the service
// still has it, else by snapshot.
func (c *Client) recoverOne(cause RecoveryCause) {
	if c.expected == 0 {
		c.join()
		return
	}
	from, to := c.expected, c.knownNextSeq
	if low, ok := c.reorder.lowestSeq(from); ok && (low < to || to <= from) {
		to = low
	}
	if to <= from {
		c.drain()
		return
	}
	if c.cfg.Clock().UnixNano() < c.retransmitAfter {
		return // the service asked to wait (rate limited): the gap stays pending
	}
	r := Recovery{Cause: cause, FromSeq: from, Count: to - from}
	if to-from <= uint64(c.cfg.RetransmitCountMax) {
		c.recovering, c.needResync = true, false
		reason, err := c.rec.Retransmit(from, uint32(to-from), c.applyRetransmitted)
		c.recovering = false
		switch {
		case err != nil:
			r.Err = err
		case reason == mdsbe.RetransmitRejectReasonRateLimited && !c.needResync:
			// Ask again later: the service's limit is per connection and
			// refuses a snapshot too, which would leave the books stale
			// though they are right up to the gap. The gap stays pending,
			// its packets held, until the pause is over (Poll).
			c.stats.RetransmitRejects++
			now := c.cfg.Clock().UnixNano()
			c.retransmitAfter = now + int64(rateLimitedWait)
			if c.gapSinceNs == 0 {
				c.gapSinceNs = now // a tail a heartbeat revealed: Poll asks again
			}
			return
		case reason != 0:
			r.RetransmitReject = reason
			c.stats.RetransmitRejects++
		case !c.needResync && c.expected >= to:
			r.Outcome = Retransmitted
			c.stats.Retransmissions++
		}
		if c.needResync {
			c.stats.Inconsistencies++
		}
	}
	if r.Outcome == 0 {
		r.Outcome = Snapshotted
		if err := c.snapshot(); err != nil {
			r.Outcome, r.Err = Unrecovered, err
		}
	}
	c.drain()
	c.report(r)
}

// resync replaces the books by a snapshot after an inconsistency.
func (c *Client) resync(cause RecoveryCause, seq uint64, why error) {
	if c.recovering {
		c.needResync = true
		return
	}
	r := Recovery{Cause: cause, FromSeq: seq, Outcome: Snapshotted, Err: why}
	if err := c.snapshot(); err != nil {
		r.Outcome, r.Err = Unrecovered, errors.Join(why, err)
	}
	c.drain()
	c.report(r)
}

func (c *Client) report(r Recovery) {
	r.PassedOver, c.passedOver = c.passedOver, nil
	if r.Outcome == Unrecovered {
		c.stats.Unrecovered++
	}
	if cb := c.cfg.Callbacks.OnRecovery; cb != nil {
		cb(r)
	}
}

// applyRetransmitted handles one packet of a retransmission.
func (c *Client) applyRetransmitted(pkt []byte) error {
	if c.needResync {
		return nil // the snapshot that follows replaces everything
	}
	if err := c.rd.Reset(pkt); err != nil || c.rd.Seq == 0 || c.rd.Channel != c.cfg.Channel {
		c.stats.Malformed++
		return fmt.Errorf("%w: bad retransmitted packet", ErrRecoveryProtocol)
	}
	c.stats.Packets++
	seq, count := c.rd.Seq, c.rd.Count
	switch end := seq + uint64(count); {
	case end <= c.expected:
		c.stats.Duplicates++
	case seq <= c.expected:
		c.applyPacket(pkt)
	default:
		if len(pkt) <= packet.DatagramBytesMax {
			c.reorder.put(pkt, seq, count)
		}
	}
	return nil
}

// snapshot replaces every book by the service's snapshot. On failure the
// books are stale: the client forgets its position and tries to join again
// after a pause, keeping (bounded) the packets that arrive meanwhile.
func (c *Client) snapshot() error {
	c.recovering, c.snap = true, snapState{}
	reason, err := c.rec.Snapshot(0, c.applySnapshotPacket)
	c.recovering, c.needResync = false, false
	if err == nil && reason != 0 {
		err = fmt.Errorf("feedclient: snapshot refused: %v", reason)
	}
	if err == nil && !c.snap.done {
		err = fmt.Errorf("%w: snapshot ended early", ErrRecoveryProtocol)
	}
	if err != nil {
		c.expected, c.gapSinceNs = 0, 0
		c.resyncAfter = c.cfg.Clock().UnixNano() + int64(resyncBackoffDefault)
		return err
	}
	c.stats.Snapshots++
	c.expected = c.snap.lastSeq + 1
	// The snapshot stands for the sequenced packets it replaces: a
	// heartbeat stamped before its last event announced a sequence it
	// covers, even when no live packet was read yet (one sent while the
	// feed was idle before this client joined, read after the join).
	c.latestSeqTimeNs = max(c.latestSeqTimeNs, c.snap.timeNs)
	c.knownNextSeq, c.gapSinceNs = c.expected, 0
	c.reorder.dropAbove(c.expected + c.cfg.SeqAheadMax)
	// What a line brought beyond the snapshot may be of an older numbering
	// (a feed that numbers anew): its heartbeats are checked as with one
	// line until it brings a packet again.
	for i := range c.lineEnd {
		if c.lineEnd[i] > c.expected {
			c.lineEnd[i] = 0
		}
	}
	if cb := c.cfg.Callbacks.OnBook; cb != nil {
		for _, b := range c.books {
			cb(b)
		}
	}
	return nil
}

// applySnapshotPacket applies the messages of one snapshot packet.
func (c *Client) applySnapshotPacket(pkt []byte) error {
	if err := c.srd.Reset(pkt); err != nil {
		return err
	}
	for msg, ok := c.srd.Next(); ok; msg, ok = c.srd.Next() {
		if err := c.applySnapshotMessage(msg); err != nil {
			return err
		}
	}
	// After the messages: SnapshotStart begins the state afresh.
	c.snap.timeNs = max(c.snap.timeNs, c.srd.SendingTimeNs)
	return nil
}

func (c *Client) applySnapshotMessage(msg []byte) error {
	tid, err := mdsbe.TemplateIDOf(msg, 0)
	if err != nil {
		return err
	}
	if tid != mdsbe.SnapshotStartTemplateID && !c.snap.started {
		return fmt.Errorf("%w: snapshot message before SnapshotStart", ErrRecoveryProtocol)
	}
	switch tid {
	case mdsbe.SnapshotStartTemplateID:
		var m mdsbe.SnapshotStart
		if err := m.WrapDecode(msg, 0); err != nil {
			return err
		}
		c.snap = snapState{started: true, lastSeq: m.LastSeq()}
		for _, b := range c.books {
			b.reset()
		}
	case mdsbe.InstrumentDefinitionTemplateID:
		if _, err := c.define(msg); err != nil {
			return err
		}
	case mdsbe.SnapshotEntriesTemplateID:
		var m mdsbe.SnapshotEntries
		if err := m.WrapDecode(msg, 0); err != nil {
			return err
		}
		b, err := c.book(m.InstrumentID())
		if err != nil {
			return err
		}
		b.Status, b.RptSeq = m.Status(), m.RptSeq()
		b.LastTradePriceTicks, b.LastTradeQty, b.Volume = m.LastTradePriceTicks(), m.LastTradeQty(), m.Volume()
		g := m.Entries()
		for i := 0; i < g.Count(); i++ {
			e := g.Entry(i)
			if err := b.addSnapshotOrder(e.Side(), e.PriceTicks(), e.Qty()); err != nil {
				return err
			}
		}
	case mdsbe.AuctionUpdateTemplateID:
		// The call's indicative, after the instrument's entries.
		var m mdsbe.AuctionUpdate
		if err := m.WrapDecode(msg, 0); err != nil {
			return err
		}
		b, err := c.book(m.InstrumentID())
		if err != nil {
			return err
		}
		b.Auction = Auction{Kind: m.Kind(), PriceTicks: m.PriceTicks(), MatchedQty: m.MatchedQty(),
			ImbalanceSide: m.ImbalanceSide(), ImbalanceQty: m.ImbalanceQty(), Rule: m.Rule()}
	case mdsbe.SnapshotEndTemplateID:
		var m mdsbe.SnapshotEnd
		if err := m.WrapDecode(msg, 0); err != nil {
			return err
		}
		if m.LastSeq() != c.snap.lastSeq {
			return fmt.Errorf("%w: SnapshotEnd lastSeq differs from SnapshotStart", ErrRecoveryProtocol)
		}
		c.snap.done = true
	}
	return nil
}
