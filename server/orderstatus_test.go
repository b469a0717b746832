package server

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/journal"
)

// TestOrderStatusOfEndedOrdersEchoesTerms: a status request (H) for a stop
// or GTD order that has ended, cancelled or filled, gives its StopPx (99)
// and ExpireTime (126), as one for a live order does: FIX 4.4 requires them
// on every report of such an order. An iceberg's gives its MaxFloor (111)
// and a post-only order's its ExecInst 6 (18), as every report of the live
// order did, so that the answer still says what the order was. They were
// missing, as the matcher's record of an ended order did not keep them. So
// it goes on after a restart from a snapshot taken once the orders had
// ended, and a mass status (AF) reports the live order as H does.
func TestOrderStatusOfEndedOrdersEchoesTerms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, "")
	// Snapshots as in TestRestartFromSnapshot, which says why a second.
	cfg.Journal.SnapshotInterval.Duration = time.Second
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	other := logon(t, s, "CLIENT2", true)
	const expire = "20991231-23:59:59"
	gtd := fixclient.F(126, expire)

	sendOrder(t, c, order{id: "stop", side: "1", qty: "5", px: "101.20", typ: "4", tif: "6", extra: []fixclient.Field{fixclient.F(99, "101.00"), gtd}})
	expectER(t, c, map[int]string{11: "stop", 150: "0"})
	if err := c.Send("F", fixclient.F(11, "stop-x"), fixclient.F(41, "stop"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "stop-x", 150: "4"})
	sendOrder(t, c, order{id: "gtd", side: "1", qty: "1", px: "99.00", tif: "6", extra: []fixclient.Field{gtd}})
	expectER(t, c, map[int]string{11: "gtd", 150: "0"})
	sendOrder(t, other, order{id: "hit", side: "2", qty: "1", px: "99.00", tif: "3"})
	expectER(t, c, map[int]string{11: "gtd", 150: "F", 39: "2"})
	sendOrder(t, c, order{id: "live", side: "2", qty: "2", px: "98.00", typ: "4", tif: "6", extra: []fixclient.Field{fixclient.F(99, "98.50"), gtd}})
	expectER(t, c, map[int]string{11: "live", 150: "0"})
	// An iceberg filled slice by slice, a post-only order cancelled, and a
	// post-only iceberg still live.
	sendOrder(t, c, order{id: "ice", side: "1", qty: "4", px: "99.00", extra: []fixclient.Field{fixclient.F(111, "2")}})
	expectER(t, c, map[int]string{11: "ice", 150: "0", 111: "2"})
	sendOrder(t, other, order{id: "hit-ice", side: "2", qty: "2", px: "99.00", tif: "3"})
	sendOrder(t, other, order{id: "hit-ice2", side: "2", qty: "2", px: "99.00", tif: "3"})
	expectER(t, c, map[int]string{11: "ice", 150: "F", 39: "2"})
	sendOrder(t, c, order{id: "po", side: "1", qty: "1", px: "97.00", extra: []fixclient.Field{fixclient.F(18, "6")}})
	expectER(t, c, map[int]string{11: "po", 150: "0", 18: "6"})
	if err := c.Send("F", fixclient.F(11, "po-x"), fixclient.F(41, "po"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "po-x", 150: "4"})
	sendOrder(t, c, order{id: "poice", side: "1", qty: "4", px: "96.00", tif: "1", extra: []fixclient.Field{fixclient.F(18, "6"), fixclient.F(111, "2")}})
	expectER(t, c, map[int]string{11: "poice", 150: "0", 18: "6", 111: "2"})

	want := map[string]map[int]string{
		"stop":  {39: "4", 99: "101.00", 126: expire + ".000"},
		"gtd":   {39: "2", 126: expire + ".000"},
		"live":  {39: "0", 99: "98.50", 126: expire + ".000"},
		"ice":   {39: "2", 111: "2", 18: ""},
		"po":    {39: "4", 18: "6", 111: ""},
		"poice": {39: "0", 18: "6", 111: "2"},
	}
	check := func(when string, m *fixclient.Message) {
		t.Helper()
		for tg, v := range want[m.Get(11)] {
			if m.Get(tg) != v {
				t.Errorf("%s: the report of %s has tag %d %q, want %q: %s", when, m.Get(11), tg, m.Get(tg), v, m)
			}
		}
	}
	ask := func(r *fixclient.Client, when string) {
		t.Helper()
		for id, side := range map[string]string{"stop": "1", "gtd": "1", "live": "2", "ice": "1", "po": "1", "poice": "1"} {
			if err := r.Send("H", fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(54, side)); err != nil {
				t.Fatal(err)
			}
			check(when, expectER(t, r, map[int]string{11: id, 150: "I"}))
		}
	}
	// A snapshot after the orders ended; the states kept beside it are
	// saved at a later command's first event, which the status requests
	// give.
	_, r := restartFromSnapshot(t, s, testConfig(t, dir, ""), c, ask, other)
	ask(r, "status after a restart from a snapshot")
	if err := r.Send("AF", fixclient.F(584, "all"), fixclient.F(585, "7")); err != nil {
		t.Fatal(err)
	}
	check("mass status after the restart", expectER(t, r, map[int]string{584: "all", 150: "I", 11: "live"}))
	check("mass status after the restart", expectER(t, r, map[int]string{584: "all", 150: "I", 11: "poice", 912: "Y"}))
}

// waitSnapshotPast waits, 10 s at most, until the journal holds a snapshot
// at or after seq after (hasSnapshotPast).
func waitSnapshotPast(t *testing.T, s *Server, after uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !hasSnapshotPast(t, s, after) {
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot at or after seq %d after 10 s", after)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hasSnapshotPast reports whether the journal holds a snapshot at or after
// seq after, usable or not yet.
func hasSnapshotPast(t *testing.T, s *Server, after uint64) bool {
	t.Helper()
	snaps, err := journal.ListSnapshots(filepath.Join(s.cfg.Venue.DataDir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sn := range snaps {
		if sn.Seq >= after {
			return true
		}
	}
	return false
}
