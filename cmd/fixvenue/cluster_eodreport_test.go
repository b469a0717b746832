package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/admintest"
	"github.com/fixvenue/fixvenue/ops"
)

// TestClusterNewLeaderReportsTheLastEndOfDay: an end of day runs on the
// leader, with a DAY order resting; the leadership then moves to another
// node. The new leader's GET /v1/status names that end of day in
// last_end_of_day (its seq, command time and the order it expired), as the
// old leader's did: the morning's operator asks whichever node leads
// whether the night's end of day ran. The new leader gave none (it had no
// end_of_day.json of its own), or the one of a day it had led itself.
func TestClusterNewLeaderReportsTheLastEndOfDay(t *testing.T) {
	h := newClusterHarness(t)
	l := h.leader(30 * time.Second)
	cl, err := h.clients[0].connect([]string{h.fix[l]}, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	restDayBuy(t, cl, "day-1")
	cl.Close()
	if a := admintest.Call(t, http.MethodPost, "http://"+h.adminAddr(l)+"/v1/eod", clusterToken, `{"reason":"night"}`); a.Status != http.StatusOK {
		t.Fatalf("POST /v1/eod: %d %s", a.Status, a.Body)
	}
	lastEndOfDay := func(node int) (*ops.EndOfDayReport, error) {
		a := admintest.Call(t, http.MethodGet, "http://"+h.adminAddr(node)+"/v1/status", clusterToken, "")
		if a.Status != http.StatusOK {
			return nil, fmt.Errorf("GET /v1/status on node %d: %d %s", node+1, a.Status, a.Body)
		}
		var st struct {
			LastEndOfDay *ops.EndOfDayReport `json:"last_end_of_day"`
		}
		if err := json.Unmarshal(a.Body, &st); err != nil {
			return nil, err
		}
		return st.LastEndOfDay, nil
	}
	var old *ops.EndOfDayReport
	eventually(t, "the end of day's report on the leader", func() error {
		var err error
		if old, err = lastEndOfDay(l); err == nil && old == nil {
			err = errors.New("none yet")
		}
		return err
	})
	if old.Expired != 1 || old.CommandUnixNs == 0 {
		t.Fatalf("the leader's report: %+v, want the one DAY order expired and the command time", *old)
	}
	h.converge(20 * time.Second)
	next := (l + 1) % 3
	if out, err := transfer(h.cfgs[l], next); err != nil {
		t.Fatalf("cluster transfer: %v\n%s", err, out)
	}
	// A transfer asks for node next; an election may seat the other
	// follower instead. Either is a new leader that ran no end of day.
	deadline := time.Now().Add(30 * time.Second)
	for next = h.leader(30 * time.Second); next == l; next = h.leader(30 * time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("node %d still leads after the transfer", l+1)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var now *ops.EndOfDayReport
	eventually(t, "the new leader's status", func() error {
		var err error
		now, err = lastEndOfDay(next)
		return err
	})
	if now == nil {
		t.Fatalf("the new leader (node %d) reports no last end of day; the old one's: %+v", next+1, *old)
	}
	if now.Seq != old.Seq || now.CommandUnixNs != old.CommandUnixNs || now.Expired != old.Expired {
		t.Fatalf("the new leader's last end of day: %+v, want the old leader's: %+v", *now, *old)
	}
}
