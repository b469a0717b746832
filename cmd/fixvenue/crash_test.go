package main

import (
	"fmt"
	"math/rand"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

const crashSessions = 4

func crashConfig(t *testing.T, dir string) string {
	t.Helper()
	return writeVenueConfig(t, dir, `[engine]
orders_max = 65536
clordids_max = 262144
command_ring_slots = 4096
event_ring_slots = 16384
[journal]
segment_bytes = 4194304
# Snapshots often, so that kills land before, during and after them and
# restarts load one instead of replaying a journal that grows every cycle.
snapshot_interval = "500ms"
[marketdata]
feed_addr = "127.0.0.1:%d"
recovery_addr = "127.0.0.1:%d"
heartbeat_interval = "200ms"
# Acknowledged orders rest for good, so after the last start the feed's book
# must hold every one of them.
[session_defaults]
cancel_on_disconnect = false
[session_defaults.quickfix]
ResetOnLogon = "N"
[[session]]
comp_id = "CLIENT%%d"
range = [1, %d]
`, freeUDPPort(t), freeTCPPort(t), crashSessions)
}

// crashClient is one session's view across crashes: what it sent, what the
// venue acknowledged, and the sequence numbers on both sides.
type crashClient struct {
	comp     string
	nextOut  int
	lastIn   int             // highest MsgSeqNum received from the venue
	sent     map[string]bool // every ClOrdID sent
	acked    map[string]bool // ClOrdIDs the venue acknowledged (150=0)
	sentList []string
}

// TestCrashKill9 kills the venue with SIGKILL at a random moment while
// several sessions send orders, restarts it, and checks that every order the
// clients saw acknowledged is there, that nothing unsent was invented, and
// that sequence numbers continue (never a silent reset to 1).
func TestCrashKill9(t *testing.T) {
	skipUnderRace(t)
	cycles, seed := cyclesAndSeed(t, "FIXVENUE_CRASH")
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	cfg := crashConfig(t, dir)
	clients := make([]*crashClient, crashSessions)
	for i := range clients {
		clients[i] = &crashClient{comp: "CLIENT" + strconv.Itoa(i+1), nextOut: 1, sent: map[string]bool{}, acked: map[string]bool{}}
	}
	started := time.Now()
	for cycle := 0; cycle < cycles; cycle++ {
		v := startVenue(t, cfg)
		var wg, trading sync.WaitGroup
		for _, c := range clients {
			wg.Add(1)
			trading.Add(1)
			go func(c *crashClient) {
				defer wg.Done()
				c.verifyAndTrade(t, v.fixAddr, cycle, cycle == 0, trading.Done)
			}(c)
		}
		trading.Wait() // every session verified and is sending orders now
		time.Sleep(time.Duration(50+rng.Intn(300)) * time.Millisecond)
		v.kill()
		wg.Wait()
		if t.Failed() {
			t.Fatalf("cycle %d failed; venue log:\n%s", cycle, v.logs())
		}
		// A long run (make crash: 1,000 cycles, about 25 minutes) says how
		// far it is, twenty times over.
		if done := cycle + 1; cycles >= 100 && done%(cycles/20) == 0 {
			t.Logf("%d/%d cycles passed, %s, %d orders acknowledged so far", done, cycles, time.Since(started).Round(time.Second), ackedCount(clients))
		}
	}
	// A last start: everything acknowledged in any cycle must be there, and
	// the feed's book must be the engine's and hold every one of them.
	v := startVenue(t, cfg)
	checkFeedHoldsAcked(t, cfg, clients)
	for _, c := range clients {
		c.verifyAndTrade(t, v.fixAddr, cycles, false, nil)
	}
	v.kill()
	checkJournalInventsNothing(t, filepath.Join(dir, "data", "journal"), clients)

	// Two replays of the journal agree on every event byte, and so does a
	// second build (with the invariants tag, which runs the matcher's
	// self-checks as it replays: after every command while the state is
	// small, spaced out as it grows so that long runs stay linear).
	other := filepath.Join(t.TempDir(), "fixvenue-invariants")
	if out, err := exec.Command("go", "build", "-tags", "invariants", "-o", other, ".").CombinedOutput(); err != nil {
		t.Fatalf("building with -tags invariants: %v\n%s", err, out)
	}
	verifyWith := func(bin string) string {
		out, err := exec.Command(bin, "journal", "verify", "--config", cfg).CombinedOutput()
		if err != nil {
			t.Fatalf("journal verify: %v\n%s", err, out)
		}
		return string(out)
	}
	first, second, third := verifyWith(binPath), verifyWith(binPath), verifyWith(other)
	if first != second || first != third || !strings.HasPrefix(first, "records=") {
		t.Fatalf("journal verify disagrees:\n%s\n%s\n%s (invariants build)", first, second, third)
	}
	t.Logf("journal verify: %s", strings.TrimSpace(first))
}

// checkFeedHoldsAcked compares the feed's ACME book (`md book`) with the
// engine's (`journal book`), and checks that it holds at least every order
// the clients saw acknowledged: they are all buys of 1 that never trade and
// are never cancelled.
func checkFeedHoldsAcked(t *testing.T, cfg string, clients []*crashClient) {
	t.Helper()
	c, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := engineBooks(t, cfg)["ACME"]
	out, err := exec.Command(binPath, "md", "book", "--symbol", "ACME", "--json",
		"--feed-addr", c.MarketData.FeedAddr, "--recovery-addr", c.MarketData.RecoveryAddr).Output()
	if err != nil {
		t.Fatalf("md book: %v", err)
	}
	_, got := parseBookJSON(t, out)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the last restart the feed's book is %v, the engine's %v", got, want)
	}
	var qty int64
	for _, l := range got.Bids {
		var px float64
		var q, n int64
		if _, err := fmt.Sscanf(l, "%f×%d/%d", &px, &q, &n); err != nil {
			t.Fatalf("level %q: %v", l, err)
		}
		qty += q
	}
	if acked := int64(ackedCount(clients)); qty < acked || len(got.Asks) != 0 {
		t.Fatalf("the feed's book holds %d bid quantity and %d ask levels; %d orders of 1 were acknowledged", qty, len(got.Asks), acked)
	}
	t.Logf("feed book after the last restart: %d levels, %d orders resting, as the engine's", len(got.Bids), qty)
}

// verifySampleMax bounds the status requests per session per cycle.
const verifySampleMax = 50

// toVerify returns the acknowledged ClOrdIDs to check: all of them when all is
// set, else the newest verifySampleMax (those nearest the kill).
func (c *crashClient) toVerify(all bool) []string {
	var ids []string
	for i := len(c.sentList) - 1; i >= 0 && (all || len(ids) < verifySampleMax); i-- {
		if c.acked[c.sentList[i]] {
			ids = append(ids, c.sentList[i])
		}
	}
	return ids
}

// verifyAndTrade logs on (continuing sequence numbers), checks every order
// acknowledged so far, then sends orders until the venue dies.
func (c *crashClient) verifyAndTrade(t *testing.T, addr string, cycle int, first bool, trading func()) {
	once := sync.Once{}
	signal := func() {
		if trading != nil {
			once.Do(trading)
		}
	}
	defer signal()
	cl, err := fixclient.Dial(addr, c.comp, "VENUE")
	if err != nil {
		t.Errorf("%s: %v", c.comp, err)
		return
	}
	defer cl.Close()
	cl.NextOut = c.nextOut
	logon, err := cl.Logon(first)
	if err != nil {
		t.Errorf("%s cycle %d: logon: %v", c.comp, cycle, err)
		return
	}
	if !first && logon.SeqNum() <= c.lastIn {
		t.Errorf("%s cycle %d: venue's logon has MsgSeqNum %d, but %d was already received: sequence numbers went back", c.comp, cycle, logon.SeqNum(), c.lastIn)
		return
	}
	c.lastIn = logon.SeqNum()
	// Acknowledged orders must be known to the restarted venue: the last cycle's
	// all, earlier ones a bounded sample (every order gets checked at the end).
	for _, id := range c.toVerify(trading == nil) {
		m, err := orderStatus(cl, "ACME", id)
		if err != nil {
			t.Errorf("%s cycle %d: status of acknowledged %s: %v", c.comp, cycle, id, err)
			return
		}
		if m.Get(39) == "8" {
			t.Errorf("%s cycle %d: acknowledged order %s is unknown after the crash: %s", c.comp, cycle, id, m)
			return
		}
		c.lastIn = m.SeqNum()
	}
	c.nextOut = cl.NextOut
	if trading == nil {
		return
	}
	signal()
	// Trade until the venue is killed: pipelined sends, acks read as they come.
	done := readUntilClosed(cl, func(m *fixclient.Message) {
		c.lastIn = m.SeqNum()
		if m.Type() == "8" && m.Get(150) == "0" {
			c.acked[m.Get(11)] = true
		}
	})
	for n := 0; ; n++ {
		id := fmt.Sprintf("%s-%d-%d", c.comp, cycle, n)
		c.sentList = append(c.sentList, id)
		c.sent[id] = true
		err := sendPacedOrder(cl, id, n)
		c.nextOut = cl.NextOut
		if err != nil {
			break
		}
	}
	<-done
}

// checkJournalInventsNothing reads the journal and checks that every order in
// it was sent by a client.
func checkJournalInventsNothing(t *testing.T, dir string, clients []*crashClient) {
	sent := map[string]bool{}
	for _, c := range clients {
		for id := range c.sent {
			sent[id] = true
		}
	}
	r, err := journal.NewReader(dir, journal.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	orders := 0
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		var no venue.NewOrder
		if no.WrapDecode(rec.Payload, 0) != nil {
			continue
		}
		orders++
		if !sent[string(no.ClOrdID())] {
			t.Errorf("journal holds order %q that no client sent", no.ClOrdID())
		}
	}
	acked := ackedCount(clients)
	t.Logf("journal holds %d orders; clients saw %d acknowledged", orders, acked)
	if orders < acked {
		t.Errorf("journal holds %d orders but %d were acknowledged", orders, acked)
	}
}

// ackedCount is the number of orders the clients have seen acknowledged.
func ackedCount(clients []*crashClient) int {
	n := 0
	for _, c := range clients {
		n += len(c.acked)
	}
	return n
}
