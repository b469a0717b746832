package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/schedule"
)

// twoGroupsDay is the compressed day with ACME and LOTS in groups of
// their own, at the same times, listed in the order given.
func twoGroupsDay(first, second string) string {
	group := func(name, symbol string) string {
		return fmt.Sprintf("[[schedule.group]]\nname = %q\ninstruments = [%q]\npre_open = \"1s\"\nopen = \"2s\"\nclose = \"8s\"\n", name, symbol)
	}
	symbols := map[string]string{"acme": "ACME", "lots": "LOTS"}
	return "\n[schedule]\nenabled = true\ntime_zone = \"Europe/Paris\"\nday = \"12s\"\nend_of_day = \"9s\"\n" +
		group(first, symbols[first]) + group(second, symbols[second])
}

// TestScheduleRecordNamesItsGroup: the venue stopped between the opens of
// two groups due at one instant (schedule.state holds the first group's),
// and the groups were reordered in the configuration before the restart.
// The catch-up opens the second group: the record names the group it
// stopped after. It named it by position, which after the reordering was
// the second group's: that group counted as opened and stayed in the
// opening call until the close. A record written before groups were named
// (by position) is still read, in the order it was written for.
func TestScheduleRecordNamesItsGroup(t *testing.T) {
	t.Parallel()
	for _, older := range []bool{false, true} {
		t.Run(fmt.Sprintf("older_record=%v", older), func(t *testing.T) { recordNamesItsGroup(t, older) })
	}
}

func recordNamesItsGroup(t *testing.T, olderRecord bool) {
	dir := t.TempDir()
	dayStart := time.Now().Truncate(compressedDayLength)
	venueWith := func(groups string, at time.Duration) *Server {
		cfg := testConfig(t, dir, adminConfig()+groups)
		return startServer(t, cfg, Options{Now: stoppedClock(dayStart.Add(at))})
	}
	written := twoGroupsDay("acme", "lots")
	s := venueWith(written, 1500*time.Millisecond) // both in the opening call
	waitStatus(t, s, "LOTS", "OpeningCall", readWait)
	if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, `{"reason":"as the schedule","group":"acme","phase":"open"}`, nil); code != 200 {
		t.Fatalf("open acme: %d", code)
	}
	s.Close()

	// The record of acme's open, the first of the two at 2 s, as the venue
	// writes it (names) or wrote it (positions).
	open := schedule.Transition{At: dayStart.Add(2 * time.Second), Kind: schedule.Open, Group: 0,
		Day: fmt.Sprintf("day-%d", dayStart.UnixNano()/int64(compressedDayLength))}
	record := map[string]any{"last_unix_ns": open.At.UnixNano(), "last": open.String(), "kind": open.Kind, "group": 0}
	restartWith := written
	if !olderRecord {
		record["group_name"] = "acme"
		record["groups"] = map[string]any{"acme": map[string]any{"day": open.Day, "kind": open.Kind}}
		restartWith = twoGroupsDay("lots", "acme")
	}
	b, _ := json.Marshal(record)
	if err := os.WriteFile(filepath.Join(dir, ops.ScheduleStateFile), b, 0o644); err != nil {
		t.Fatal(err)
	}

	s = venueWith(restartWith, 2500*time.Millisecond)
	if in := instrumentsOf(t, s); in["LOTS"].Status != "Open" || in["ACME"].Status != "Open" {
		t.Fatalf("after the catch-up ACME is %s and LOTS %s, want both Open", in["ACME"].Status, in["LOTS"].Status)
	}
	if _, record := scheduleRecord(t, dir); !strings.Contains(string(record), `"lots":{"day"`) {
		t.Fatalf("the record does not name lots' open: %s", record)
	}
}

// TestTimesMovedLaterTakeNoGroupBack: the group opened, then pre_open and
// open were moved later in the configuration and the venue restarted past
// the new pre-open. ACME stays open: the day's new pre-open and open come
// after its open ran, and are passed over; its close, still ahead, runs.
// The new pre-open put ACME back into the opening call in the middle of the
// day it had opened.
func TestTimesMovedLaterTakeNoGroupBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dayStart := time.Now().Truncate(compressedDayLength)
	var clock atomic.Int64
	clock.Store(dayStart.Add(1500 * time.Millisecond).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	s := tradingDayVenueAt(t, dir, now)
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
	clock.Store(dayStart.Add(2500 * time.Millisecond).UnixNano()) // the open at 2 s runs
	waitStatus(t, s, "ACME", "Open", readWait)
	waitUntil(t, "the open recorded", func() bool {
		_, record := scheduleRecord(t, dir)
		return strings.Contains(string(record), " open ")
	})
	s.Close()

	cfg := tradingDayVenueConfig(t, dir)
	cfg.Schedule.Groups[0].PreOpen.Duration, cfg.Schedule.Groups[0].Open.Duration = 5*time.Second, 6*time.Second
	clock.Store(dayStart.Add(5500 * time.Millisecond).UnixNano()) // past the new pre-open
	s = startServer(t, cfg, Options{Now: now})
	if acme := instrumentsOf(t, s)["ACME"]; acme.Status != "Open" {
		t.Fatalf("after pre_open and open were moved later ACME is %s, want Open", acme.Status)
	}
	clock.Store(dayStart.Add(6500 * time.Millisecond).UnixNano()) // past the new open
	waitUntil(t, "the new open passed over", func() bool {
		_, record := scheduleRecord(t, dir)
		return strings.Contains(string(record), "at "+dayStart.Add(6*time.Second).Format(time.RFC3339Nano))
	})
	clock.Store(dayStart.Add(8500 * time.Millisecond).UnixNano())
	waitStatus(t, s, "ACME", "Closed", readWait)
}

// TestRemovedGroupLeavesTheRecord: schedule.state names a group the
// configuration no longer has (removed, or renamed). The next transition
// written leaves it out, keeping the configured group's: the record kept
// every group a venue ever had, for ever.
func TestRemovedGroupLeavesTheRecord(t *testing.T) {
	dir := t.TempDir()
	dayStart := time.Now().Truncate(compressedDayLength)
	day := fmt.Sprintf("day-%d", dayStart.UnixNano()/int64(compressedDayLength))
	preOpen := schedule.Transition{At: dayStart.Add(time.Second), Day: day, Kind: schedule.PreOpen, Group: 0}
	b, _ := json.Marshal(map[string]any{"last_unix_ns": preOpen.At.UnixNano(), "last": preOpen.String(),
		"kind": preOpen.Kind, "group_name": "all", "groups": map[string]any{
			"all":  map[string]any{"day": day, "kind": schedule.PreOpen},
			"gone": map[string]any{"day": day, "kind": schedule.Open},
		}})
	if err := os.WriteFile(filepath.Join(dir, ops.ScheduleStateFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var clock atomic.Int64
	clock.Store(dayStart.Add(1500 * time.Millisecond).UnixNano())
	s := tradingDayVenueAt(t, dir, func() time.Time { return time.Unix(0, clock.Load()) })
	waitReady(t, s)
	clock.Store(dayStart.Add(2500 * time.Millisecond).UnixNano()) // the open at 2 s runs and is written
	waitUntil(t, "the open recorded", func() bool {
		_, record := scheduleRecord(t, dir)
		return strings.Contains(string(record), " open ")
	})
	_, record := scheduleRecord(t, dir)
	var st struct {
		Groups map[string]json.RawMessage `json:"groups"`
	}
	if err := json.Unmarshal(record, &st); err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Groups["gone"]; ok || st.Groups["all"] == nil {
		t.Fatalf("the record keeps the removed group, or lost the configured one: %s", record)
	}
}
