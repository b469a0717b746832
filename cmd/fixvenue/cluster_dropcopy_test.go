package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestClusterDropCopyReplayAcrossFailover: a drop-copy session logs on to
// a new leader with a reset (the client contract: FIX stores are not
// replicated), so the copies of the reports the old leader sent before it
// died reach it only by a TradeCaptureReportRequest (35=AD); the new
// leader replays the period across the failover from its journal, every
// acknowledged order's report, where a cluster node refused every such
// request (README, "Drop copy").
func TestClusterDropCopyReplayAcrossFailover(t *testing.T) {
	h := writeClusterConfigs(t, func(int) string {
		return "\n[[session]]\ncomp_id = \"DROP\"\nkind = \"dropcopy\"\ncopy_all = true\n"
	}, false)
	h.startAll()
	l := h.leader(30 * time.Second)
	from := time.Now().Add(-time.Second)
	client := &clusterClient{comp: "CLIENT1"}
	orders := func(prefix string) {
		c, err := client.connect(h.fix[:], 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for i := range 5 {
			restDayBuy(t, c, fmt.Sprintf("%s%d", prefix, i))
		}
	}
	orders("old-leader-")
	h.kill(l)
	orders("new-leader-")
	d, err := (&clusterClient{comp: "DROP"}).connect(h.fix[:], 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	to := time.Now().Add(time.Second)
	if err := d.Send("AD", fixclient.F(568, "period"), fixclient.F(569, "0"), fixclient.F(580, "2"),
		fixclient.F(75, from.UTC().Format("20060102")), fixclient.F(60, fixclient.Timestamp(from)),
		fixclient.F(75, to.UTC().Format("20060102")), fixclient.F(60, fixclient.Timestamp(to))); err != nil {
		t.Fatal(err)
	}
	copies := map[string]bool{}
	for {
		m, err := d.Read(10 * time.Second)
		if err != nil {
			t.Fatalf("after %d copies: %v", len(copies), err)
		}
		if m.Type() == "8" && m.Get(797) == "Y" && m.Get(150) == "0" {
			copies[m.Get(11)] = true
		}
		if m.Type() == "AQ" && m.Get(750) != "0" {
			if m.Get(750) != "1" {
				t.Fatalf("the replay ended with %s", m)
			}
			break
		}
	}
	for _, prefix := range []string{"old-leader-", "new-leader-"} {
		for i := range 5 {
			if id := fmt.Sprintf("%s%d", prefix, i); !copies[id] {
				t.Errorf("no copy of %s's acknowledgement in the replay (%d copies)", id, len(copies))
			}
		}
	}
}
