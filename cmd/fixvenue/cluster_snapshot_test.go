package main

import (
	"strings"
	"testing"
	"time"
)

// TestClusterFollowerCatchesUpFromSnapshot keeps a follower down while the
// sessions trade, so that the leader writes far past its in-memory Raft log
// (cluster.entries_in_memory = 16 entries): the follower rejoins, gets a
// Raft snapshot (matcher state and events hash) built from the leader's
// journal, then the log, and ends with the same committed seq and events
// hash as the other follower. Every acknowledged order is then on the leader.
func TestClusterFollowerCatchesUpFromSnapshot(t *testing.T) {
	h := writeClusterConfigsWith(t, nil, false, "entries_in_memory = 16\n", nil)
	for i := range 3 {
		h.start(i)
	}
	l := h.leader(30 * time.Second)
	behind, other := (l+1)%3, (l+2)%3
	h.kill(behind)
	wait := h.round("behind", false)
	time.Sleep(3 * time.Second)
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
}
