package server

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestServerCommandsReadTheVenuesClock: with the venue's clock an hour
// ahead of the wall clock, the periodic snapshot and risk report and an
// operator's kill switch carry the venue clock's time, as the schedule's
// transitions do. They read the wall clock: the journal's times went back
// and forth between the two, and the matcher ran its timers (a GTD
// expiry) by whichever command came last.
func TestServerCommandsReadTheVenuesClock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Now().Add(time.Hour).Truncate(compressedDayLength).Add(5 * time.Second) // in the open
	s := startServer(t, catchUpVenueConfig(t, dir), Options{Now: stoppedClock(now)})
	restDayOrder(t, s, "d1") // a command since the last snapshot: the next period takes one
	if code := adminCall(t, s, "POST", "/v1/risk/kill", aliceToken, `{"reason":"clock","session":"CLIENT1"}`, nil); code != 200 {
		t.Fatalf("kill: %d", code)
	}
	var snapshots, reports, kills int
	waitUntil(t, "a snapshot and a risk report journaled", func() bool {
		snapshots, reports, kills = 0, 0, 0
		for rec, err := range journal.Records(filepath.Join(dir, "journal"), journal.ReaderOptions{}) {
			if err != nil {
				break // the tail being written
			}
			at := int64(0)
			if c, ok := venue.DecodeSnapshot(rec.Payload); ok {
				at = c.TimestampNs()
				snapshots++
			} else if c, ok := venue.DecodeRiskControl(rec.Payload); ok && c.Action() == venue.RiskActionReport {
				at = c.TimestampNs()
				reports++
			} else if ok && c.Action() == venue.RiskActionKill {
				at = c.TimestampNs()
				kills++
			} else {
				continue
			}
			if at != now.UnixNano() {
				t.Fatalf("seq %d stamped %s; the venue's clock reads %s", rec.Seq, time.Unix(0, at), now)
			}
		}
		return snapshots > 0 && reports > 0 && kills > 0
	})
}
