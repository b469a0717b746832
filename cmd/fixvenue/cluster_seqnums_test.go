package main

import (
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/server"
)

// TestClusterNewLeaderWantsAReset: the FIX stores are not replicated, so a
// client logging on to a new leader without ResetSeqNumFlag is refused
// with a Logout that says to reset (docs/ARCHITECTURE.md, "Cluster", "FIX
// sessions on a new leader"), where QuickFIX/Go took the Logon and answered
// from the node's own store: at 1 on a node that never led (the client
// then logs out, its orders cancelled at once), or, on a node that led
// before, from that leadership's numbers, whose messages a resend would
// give again. The same leadership takes a client going on from its
// numbers, and a session's first Logon at 1 on a store at 1.
func TestClusterNewLeaderWantsAReset(t *testing.T) {
	h := newClusterHarness(t)
	l := h.leader(30 * time.Second)
	// A session on the first leader, its numbers past 1.
	c := logOn(t, h.fix[l], "CLIENT1")
	restDayBuy(t, c, "first")
	c.Close()
	// Back on the same leadership without a reset, going on from them.
	again := logOnAt(t, h.fix[l], "CLIENT1", c.NextOut, false)
	restDayBuy(t, again, "second")
	next := again.NextOut
	again.Close()

	h.quiesce(20 * time.Second)
	h.kill(l)
	n := h.leader(30 * time.Second)
	refused := func(node, seqNum int, what string) {
		t.Helper()
		cl, err := fixclient.Dial(h.fix[node], "CLIENT1", "VENUE")
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		cl.NextOut = seqNum
		m, err := cl.Logon(false)
		if m == nil || m.Type() != "5" || m.Get(58) != server.NewLeaderResetText {
			t.Fatalf("%s: node %d answered a Logon without a reset (34=%d) with %v (%v), want a Logout %q",
				what, node+1, seqNum, m, err, server.NewLeaderResetText)
		}
	}
	refused(n, next, "the new leader")
	// A first Logon of the day at 1 on a store at 1 is taken.
	first := logOnAt(t, h.fix[n], "CLIENT1", 1, false)
	restDayBuy(t, first, "third")
	next = first.NextOut
	first.Close()

	// The old leader, back as a follower, leads again: its store holds the
	// numbers of its first leadership, not the client's.
	h.start(l)
	h.converge(30 * time.Second)
	if out, err := transfer(h.cfgs[n], l); err != nil {
		t.Fatalf("cluster transfer --to %d: %v\n%s", l+1, err, out)
	}
	// The node handing over may still say it serves while it logs its
	// sessions out: wait for node l itself.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if st, err := h.nodeStatus(l); err == nil && st.Serving {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d does not serve 30 s after the transfer to it", l+1)
		}
	}
	refused(l, next, "a node leading again")
	// With a reset the session starts again at 1 there.
	reset := logOn(t, h.fix[l], "CLIENT1")
	restDayBuy(t, reset, "fourth")
	reset.Close()
}
