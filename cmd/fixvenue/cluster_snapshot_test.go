package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/admintest"
)

// TestClusterFollowerCatchesUpFromSnapshot keeps a follower down while the
// sessions trade, so that the leader writes far past its in-memory Raft log
// (cluster.entries_in_memory = 16 entries): the follower rejoins, gets a
// Raft snapshot (matcher state, events hash, the feed's state and the
// console tape's) built from the leader's journal and streamed to it, then
// the log, and ends with the same committed seq, events hash, standby feed
// (next sequence number and state) and console tape as the other follower
// (an operator's mass cancel by account among the commands it missed: the
// tape keeps the account from the command, which the snapshot's replay
// shows it as the follower's apply does).
// Every acknowledged order is then on the leader, and `journal verify`
// prints the same line on all three nodes.
func TestClusterFollowerCatchesUpFromSnapshot(t *testing.T) {
	_, _, md := clusterMarketData(t)
	h := writeClusterConfigsWith(t, nil, false, "entries_in_memory = 16\n", md)
	h.startAll()
	l := h.leader(30 * time.Second)
	behind, other := (l+1)%3, (l+2)%3
	h.kill(behind)
	if a := admintest.Call(t, http.MethodPost, "http://"+h.adminAddr(l)+"/v1/cancel", clusterToken,
		`{"reason": "fund closed", "account": "FUND"}`); a.Status != http.StatusOK {
		t.Fatalf("POST /v1/cancel: %d %s", a.Status, a.Body)
	}
	// Trade until the leader is well past its in-memory log: a count of
	// entries, not a time, since a loaded machine batches more per entry.
	wait := h.round("behind", false)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		if st, err := h.nodeStatus(l); err == nil && st.Applied >= 200 {
			break
		}
	}
	h.endRound(wait)
	st, err := h.nodeStatus(l)
	if err != nil {
		t.Fatal(err)
	}
	if st.Applied < 200 {
		t.Fatalf("the leader applied only %d entries: not far enough past its 16 in memory to prove anything", st.Applied)
	}
	h.start(behind)
	h.quiesce(60 * time.Second)
	stB, errB := h.nodeStatus(behind)
	stO, errO := h.nodeStatus(other)
	if errB != nil || errO != nil {
		t.Fatal(errB, errO)
	}
	if stB.EventsHash == "" || stB.EventsHash != stO.EventsHash || stB.CommittedSeq != stO.CommittedSeq {
		t.Fatalf("rejoined follower: committed %d hash %s; other follower: committed %d hash %s",
			stB.CommittedSeq, stB.EventsHash, stO.CommittedSeq, stO.EventsHash)
	}
	if stB.FeedNextSeq < 2 || stB.FeedNextSeq != stO.FeedNextSeq || stB.FeedStateHash == "" || stB.FeedStateHash != stO.FeedStateHash {
		t.Fatalf("rejoined follower's standby feed: next seq %d, state %s; other follower's: next seq %d, state %s",
			stB.FeedNextSeq, stB.FeedStateHash, stO.FeedNextSeq, stO.FeedStateHash)
	}
	if stB.TapeHash == "" || stB.TapeHash != stO.TapeHash {
		t.Fatalf("rejoined follower's console tape %s, other follower's %s", stB.TapeHash, stO.TapeHash)
	}
	if logs := h.procs[behind].logs(); !strings.Contains(logs, "installing a Raft snapshot") {
		t.Fatalf("the follower caught up without a snapshot:\n%s", lastLines(logs, 40))
	}
	t.Logf("leader at index %d when the follower came back; rejoined follower and the other agree at seq %d, events hash %s",
		st.Applied, stB.CommittedSeq, stB.EventsHash)
	for _, c := range h.clients {
		cl, err := c.connect(h.fix[:], 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.verify(cl, true); err != nil {
			t.Fatalf("%s: %v", c.comp, err)
		}
		cl.Close()
	}
	h.checkClients()
	h.quiesce(30 * time.Second)
	h.verifyJournals()
}
