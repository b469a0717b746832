package server

import (
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/console"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/journal"
)

// A cluster node keeps the console's tape (the day's trades, the admin
// API's day figures) while it follows: its matcher's events of every
// committed command go to the tape as well as to the events hash, so that
// when it comes to lead, its console and admin API show the day the
// journal holds, as a restarted venue's do (console/doc.go, "The day and
// restarts"). A replica applies its whole journal at start, so the tape
// needs no state saved with snapshots.

// followerSink is the sink of a follower's matcher: the events hash, and
// the tape when the admin API is on (nil tape: the hash alone).
func followerSink(cfg *config.Config, hash *journal.HashSink) (core.EventSink, *console.Tape) {
	if !cfg.Admin.Enabled() {
		return hash, nil
	}
	ids := make([]uint32, 0, len(cfg.Instruments))
	for _, in := range cfg.Instruments {
		ids = append(ids, in.ID)
	}
	tape := console.NewTape(ids, nil)
	return &tapeSink{hash: hash, tape: tape}, tape
}

// tapeSink hands each event to the tape, then hashes it.
type tapeSink struct {
	hash *journal.HashSink
	tape *console.Tape
	slot []byte
}

func (t *tapeSink) Claim() []byte {
	t.slot = t.hash.Claim()
	return t.slot
}

func (t *tapeSink) Commit() {
	t.tape.Replay(t.slot)
	t.hash.Commit()
}
