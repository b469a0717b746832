package server

import (
	"bytes"
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

// closingCallDay is the compressed day with a closing call: pre-open at
// 1 s, open at 2 s, closing call at 6 s, close at 8 s, end of day at 9 s.
const closingCallDay = `
[schedule]
enabled = true
time_zone = "Europe/Paris"
day = "12s"
end_of_day = "9s"
[[schedule.group]]
name = "all"
pre_open = "1s"
open = "2s"
closing_call = "6s"
close = "8s"
`

// dayClock is a trading-day clock a test moves: at sets it to an offset
// into the day starting at dayStart.
type dayClock struct {
	dayStart time.Time
	ns       atomic.Int64
}

func newDayClock() *dayClock { return &dayClock{dayStart: time.Now().Truncate(compressedDayLength)} }

func (c *dayClock) at(d time.Duration) { c.ns.Store(c.dayStart.Add(d).UnixNano()) }

func (c *dayClock) now() time.Time { return time.Unix(0, c.ns.Load()) }

// earlyCloseDay starts the closing-call day's venue on dir in its opening
// call, has the schedule open it at 2 s and an operator close the group
// at 3 s, before the closing call (POST /v1/phase).
func earlyCloseDay(t *testing.T, dir string, clock *dayClock) *Server {
	t.Helper()
	clock.at(1500 * time.Millisecond)
	s := startServer(t, testConfig(t, dir, adminConfig()+closingCallDay), Options{Now: clock.now})
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
	clock.at(2500 * time.Millisecond) // the schedule's open
	waitStatus(t, s, "ACME", "Open", readWait)
	clock.at(3 * time.Second)
	if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, `{"reason":"closing early","group":"all","phase":"close"}`, nil); code != 200 {
		t.Fatalf("close: %d", code)
	}
	waitStatus(t, s, "ACME", "Closed", readWait)
	return s
}

// TestOperatorsEarlyCloseStaysClosed: an operator closes the group early;
// the day's closing call, when it comes (or in the catch-up of a restart
// after its time), is passed over, and the group stays closed; the next
// day's pre-open opens the call as scheduled. The closing call reopened
// order entry: the operator's phase change did not count as the group's
// progress.
func TestOperatorsEarlyCloseStaysClosed(t *testing.T) {
	t.Parallel()
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			dir, clock := t.TempDir(), newDayClock()
			s := earlyCloseDay(t, dir, clock)
			if restart {
				s.Close()
				clock.at(6500 * time.Millisecond)
				s = startServer(t, testConfig(t, dir, adminConfig()+closingCallDay), Options{Now: clock.now})
			} else {
				clock.at(6500 * time.Millisecond)
			}
			waitUntil(t, "the closing call's turn", func() bool {
				_, record := scheduleRecord(t, dir)
				return strings.Contains(string(record), " closing_call ")
			})
			if acme := instrumentsOf(t, s)["ACME"]; acme.Status != "Closed" {
				t.Fatalf("after the operator's early close and the closing call's time ACME is %s, want Closed", acme.Status)
			}
			// The closing call passed over leaves the group where the
			// operator put it in its day.
			_, record := scheduleRecord(t, dir)
			var st struct {
				Groups map[string]ops.GroupRun `json:"groups"`
			}
			if err := json.Unmarshal(record, &st); err != nil || st.Groups["all"].Kind != schedule.Close {
				t.Fatalf("the record after the closing call passed over: %s (%v), want group all at its close", record, err)
			}
			clock.at(compressedDayLength + 1500*time.Millisecond) // the next day's pre-open
			waitStatus(t, s, "ACME", "OpeningCall", 3*readWait)
		})
	}
}

// TestNewLeaderKeepsAnOperatorsEarlyClose: a cluster's follower derives
// the schedule's progress from the journaled commands: the schedule's open,
// then an operator's early close. Through a Raft snapshot's part, a new
// leader started on it after the closing call's time keeps the group
// closed. The follower took the operator's close for no progress (only the
// open it ended), and the new leader ran the closing call.
func TestNewLeaderKeepsAnOperatorsEarlyClose(t *testing.T) {
	t.Parallel()
	dir, clock := t.TempDir(), newDayClock()
	cfg := testConfig(t, dir, adminConfig()+closingCallDay)
	s := earlyCloseDay(t, dir, clock)
	s.Close()

	var state bytes.Buffer
	if err := followerProgress(t, dir, cfg).WriteState(&state); err != nil {
		t.Fatal(err)
	}
	p := newScheduleProgress(cfg)
	if err := p.Restore(&state); err != nil {
		t.Fatal(err)
	}
	if err := p.save(dir, cfg.Schedule); err != nil {
		t.Fatal(err)
	}
	clock.at(6500 * time.Millisecond)
	s = startServer(t, cfg, Options{Now: clock.now})
	if acme := instrumentsOf(t, s)["ACME"]; acme.Status != "Closed" {
		t.Fatalf("the new leader after the closing call's time has ACME %s, want Closed", acme.Status)
	}
}

// TestFirstStartPhasesNotSetAreSetAgain: a first start (no schedule record)
// after the day's close, whose commands bringing the instruments to the
// closed phase fail (the journal's disk fails: the venue halts). Nothing
// is recorded, so the next start brings every instrument to its phase:
// closed. The record said the schedule was up to date, and the next start
// left the instruments open.
func TestFirstStartPhasesNotSetAreSetAgain(t *testing.T) {
	t.Parallel()
	dir, clock := t.TempDir(), newDayClock()
	cfg := testConfig(t, dir, adminConfig()+closingCallDay)
	clock.at(10 * time.Second) // after the end of day
	var fail atomic.Bool
	fail.Store(true)
	s := startServer(t, cfg, Options{Now: clock.now, JournalSync: failingSync(&fail)})
	waitUntil(t, "the venue halted", func() bool { return s.pipe.Err() != nil })
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, ops.ScheduleStateFile)); err == nil {
		t.Error("the schedule recorded its progress though its first start's commands failed")
	}

	s = startServer(t, cfg, Options{Now: clock.now})
	for sym, in := range instrumentsOf(t, s) {
		if in.Status != "Closed" {
			t.Errorf("after the start that failed, %s is %s, want Closed", sym, in.Status)
		}
	}
}

// TestClosingCallUncrossesAnOperatorsPreOpen: an operator puts the open
// group back into the pre-open (POST /v1/phase), and the schedule's closing
// call comes before anyone opens it. The opening call ends with its
// uncross, as the open would end it: the crossing orders trade in the
// opening auction (625=2), the order at the opening left over expires, and
// ACME enters the closing call with its book empty. The closing call
// expired the order at the opening, never traded the others and took the
// crossed book into the closing call.
func TestClosingCallUncrossesAnOperatorsPreOpen(t *testing.T) {
	t.Parallel()
	clock := newDayClock()
	clock.at(2500 * time.Millisecond)
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()+closingCallDay), Options{Now: clock.now})
	waitStatus(t, s, "ACME", "Open", readWait)
	c := logon(t, s, "CLIENT1", true)
	clock.at(3 * time.Second)
	if code := adminCall(t, s, "POST", "/v1/phase", aliceToken, `{"reason":"late news","group":"all","phase":"pre_open"}`, nil); code != 200 {
		t.Fatalf("pre-open: %d", code)
	}
	waitStatus(t, s, "ACME", "OpeningCall", readWait)
	sendOrder(t, c, order{id: "opg-buy", side: "1", qty: "10", px: "100.50"})
	sendOrder(t, c, order{id: "opg-sell", side: "2", qty: "10", px: "100.00"})
	sendOrder(t, c, order{id: "at-open", side: "1", qty: "1", px: "99.00", tif: "2"})
	expectER(t, c, map[int]string{11: "opg-buy", 150: "0"})
	expectER(t, c, map[int]string{11: "opg-sell", 150: "0"})
	expectER(t, c, map[int]string{11: "at-open", 150: "0", 59: "2"})
	clock.at(6500 * time.Millisecond) // the schedule's closing call
	expectER(t, c, map[int]string{11: "opg-buy", 150: "F", 39: "2", 31: "100.00", 32: "10", 625: "2"})
	expectER(t, c, map[int]string{11: "opg-sell", 150: "F", 39: "2", 31: "100.00", 32: "10", 625: "2"})
	expectER(t, c, map[int]string{11: "at-open", 150: "C", 39: "C"})
	waitStatus(t, s, "ACME", "ClosingCall", readWait)
	if st := instrumentsOf(t, s)["ACME"]; st.Bid != "" || st.Ask != "" {
		t.Fatalf("the closing call took a book from the opening call: %+v", st)
	}
}
