package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/eventstream"
	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestClusterDeposedLeaderExportsNoReplacedCommand: a leader cut off from
// the others (its messages reach no one) takes orders that never commit;
// the others elect a leader whose commands take the same seqs. Once the
// link is back the deposed node follows the new leader, and its committed
// seq passes those seqs: its export, still running until the process
// restarts, took that for its own commands being durable and published
// their events, which the new leader's journal does not hold, so the
// stream could no longer be continued. The leader's durable sequence is
// that of its own batches the quorum confirmed (cluster.Journal).
// Each node reaches NATS through a proxy: the followers' are cut until the
// old leader has had its chance, as a slower new leader's export would be.
func TestClusterDeposedLeaderExportsNoReplacedCommand(t *testing.T) {
	nats, err := eventstream.StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer nats.Stop()
	var natsLinks [3]*linkProxy
	for i := range natsLinks {
		natsLinks[i] = newLinkProxy(t, strings.TrimPrefix(nats.URL(), "nats://"))
	}
	h := writeClusterConfigsWith(t, func(i int) string {
		return fmt.Sprintf("\n[export]\nenabled = true\nnats_url = \"nats://%s\"\n", natsLinks[i].ln.Addr())
	}, false, "", nil)
	h.startAll()
	l := h.leader(30 * time.Second)
	old, err := fixclient.Dial(h.fix[l], "CLIENT1", "VENUE")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := old.Logon(true); err != nil {
		t.Fatal(err)
	}
	restDayBuy(t, old, "committed")
	h.converge(10 * time.Second)
	for j := range 3 {
		if j != l {
			natsLinks[j].setBlocked(true)
			h.links[[2]int{l, j}].setBlocked(true)
		}
	}
	for i := range 5 {
		if err := old.Send("D", dayBuy(fmt.Sprintf("never-committed-%d", i))...); err != nil {
			t.Fatal(err)
		}
	}
	nl := -1
	for deadline := time.Now().Add(20 * time.Second); nl < 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the others elected no leader")
		}
		for i := range 3 {
			if st, err := h.nodeStatus(i); i != l && err == nil && st.Serving {
				nl = i
			}
		}
	}
	c := &clusterClient{comp: "CLIENT2"}
	cl, err := c.connect([]string{h.fix[nl]}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range 10 {
		restDayBuy(t, cl, fmt.Sprintf("new-leader-%d", i))
	}
	// The deposed node hears the commits while its venue stops.
	for j := range 3 {
		if j != l {
			h.links[[2]int{l, j}].setBlocked(false)
		}
	}
	h.converge(20 * time.Second)
	natsLinks[nl].setBlocked(false)
	out, err := exec.Command(binPath, "events", "verify", "--config", h.cfgs[nl]).CombinedOutput()
	if err != nil {
		t.Fatalf("events verify against the new leader: %v\n%s\nold leader's log:\n%s", err, out, lastLines(h.procs[l].logs(), 30))
	}
}
