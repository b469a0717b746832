package server

import (
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/console"
)

// A cluster node keeps the console's tape (the day's trades, the admin
// API's day figures) while it follows: its matcher's events of every
// committed command go to the tape as well as to the events hash, so that
// when it comes to lead, its console and admin API show the day the
// journal holds, as a restarted venue's do (console/doc.go, "The day and
// restarts"). A Raft snapshot carries the tape's state beside the
// matcher's (server/cluster.go, restore), so a follower caught up from one
// has the same tape as one that applied every command.

// followerTape is the tape a follower keeps (standbySink hands it the
// events), or nil when the admin API is off.
func followerTape(cfg *config.Config) *console.Tape {
	if !cfg.Admin.Enabled() {
		return nil
	}
	ids := make([]uint32, 0, len(cfg.Instruments))
	for _, in := range cfg.Instruments {
		ids = append(ids, in.ID)
	}
	return console.NewTape(ids, nil)
}
