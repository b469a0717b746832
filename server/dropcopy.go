package server

import (
	"encoding/binary"
	"path/filepath"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// dropCopyGrant is the gateway's view of a drop-copy session's grants, nil
// for an order session.
func dropCopyGrant(sc *config.Session) *gateway.DropCopyGrant {
	if !sc.IsDropCopy() {
		return nil
	}
	return &gateway.DropCopyGrant{All: sc.CopyAll, Sessions: sc.CopySessions, Accounts: sc.CopyAccounts}
}

// replayEvents is gateway.ReplayEvents over the journal: a matcher of its
// own, configured as the venue's, applies the journal's durable commands
// from the first, those the end of day archived included (determinism: the
// venue's events, byte for byte), each handed to fn before its events. It
// takes as much memory as the venue's matcher while it runs; the gateway
// runs one at a time.
func (s *Server) replayEvents(stop <-chan struct{}, fn func(ev []byte) bool) error {
	m, err := core.NewMatcher(MatcherConfig(s.cfg))
	if err != nil {
		return err
	}
	t, err := journal.NewChainTailer(filepath.Join(s.cfg.Venue.DataDir, "journal"), 0)
	if err != nil {
		return err
	}
	defer t.Close()
	durable := s.pipe.Durable().Load()
	sink := &reportSink{fn: fn}
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		rec, ok, err := t.Next(durable)
		if err != nil || !ok {
			return err
		}
		if !fn(rec.Payload) { // the command, then its events
			return nil
		}
		if err := m.Apply(rec.Payload, sink); err != nil {
			return err
		}
		if sink.stopped {
			return nil
		}
	}
}

// reportSink hands each event to fn until fn says stop.
type reportSink struct {
	slot    [core.EventSlotMin]byte
	fn      func(ev []byte) bool
	stopped bool
}

func (r *reportSink) Claim() []byte {
	clear(r.slot[:venue.MessageHeaderSize])
	return r.slot[:]
}

func (r *reportSink) Commit() {
	if !r.stopped {
		n := venue.MessageHeaderSize + int(binary.LittleEndian.Uint16(r.slot[:]))
		r.stopped = !r.fn(r.slot[:n])
	}
}
