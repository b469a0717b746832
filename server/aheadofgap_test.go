package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/gateway/edge"
	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestMessagesAheadOfAGapAreBounded leaves a gap in its sequence numbers,
// never fills it, and sends on: QuickFIX/Go keeps each message after the gap
// for when it is filled, and kept every one, the venue's memory growing with
// all the client sent (no message rate counts them: the application sees
// none). Past the edge's bound the session is logged out, its Logout saying
// why.
func TestMessagesAheadOfAGapAreBounded(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	c.NextOut++ // a gap at 2
	if err := c.Send("1", fixclient.F(112, "past-the-gap")); err != nil {
		t.Fatal(err)
	}
	if m, err := c.ReadAny(readWait); err != nil || m.Type() != "2" || m.Get(7) != "2" {
		t.Fatalf("got %v (%v), want a ResendRequest from 2", m, err)
	}
	// Twice the bound, in messages of 60 KB, ahead of the gap; written
	// while the answers are read, and only until the venue closes.
	pad := strings.Repeat("x", 60<<10)
	n := 2 * edge.DefaultAheadBytesMax / len(pad)
	wrote := make(chan int, 1)
	go func() {
		i := 0
		for ; i < n; i++ {
			if c.Send("1", fixclient.F(112, pad)) != nil {
				break
			}
		}
		wrote <- i
	}()
	for deadline := time.Now().Add(4 * readWait); ; {
		m, err := c.ReadAny(time.Until(deadline))
		if err != nil {
			t.Fatalf("no Logout (%v) after %d messages ahead of the gap", err, <-wrote)
		}
		if m.Type() == "5" {
			if got := m.Get(58); got != edge.AheadOfGapText {
				t.Fatalf("Logout says %q, want %q", got, edge.AheadOfGapText)
			}
			break
		}
	}
	if !c.Closed(readWait) {
		t.Fatal("the connection stays open after the Logout")
	}
	<-wrote
	if s.edge.Stats().Count(edge.ReasonAheadOfGap) == 0 {
		t.Fatal("ahead_of_gap not counted")
	}
}

// TestSmallMessagesAheadOfAGapAreBounded: the bound is on what the messages
// ahead of the gap cost the venue's memory, not on their bytes alone.
// QuickFIX/Go keeps each one parsed, some 1.7 KiB for a 78-byte
// Heartbeat: counted by their bytes, the bound let a client pin some 350
// MiB with Heartbeats before its 16 MiB of them were counted. A burst of
// Heartbeats of a twelfth of the bound's bytes is now past it.
func TestSmallMessagesAheadOfAGapAreBounded(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	c.NextOut++ // a gap at 2
	if err := c.Send("0"); err != nil {
		t.Fatal(err)
	}
	if m, err := c.ReadAny(readWait); err != nil || m.Type() != "2" || m.Get(7) != "2" {
		t.Fatalf("got %v (%v), want a ResendRequest from 2", m, err)
	}
	var burst []byte
	for burst == nil || len(burst) < edge.DefaultAheadBytesMax/12 {
		now := fixclient.Timestamp(time.Now())
		burst = append(burst, fixclient.Build(fixclient.F(35, "0"), fixclient.F(49, c.Sender), fixclient.F(56, c.Target),
			fixclient.F(34, strconv.Itoa(c.NextOut)), fixclient.F(52, now))...)
		c.NextOut++
	}
	sent := make(chan error, 1)
	go func() { sent <- c.SendRaw(burst) }()
	m, err := c.ReadAny(4 * readWait)
	if err != nil || m.Type() != "5" || m.Get(58) != edge.AheadOfGapText {
		t.Fatalf("got %v (%v) after %d bytes of Heartbeats ahead of the gap, want a Logout saying %q", m, err, len(burst), edge.AheadOfGapText)
	}
	<-sent
	if s.edge.Stats().Count(edge.ReasonAheadOfGap) == 0 {
		t.Fatal("ahead_of_gap not counted")
	}
}

// TestMessagesAheadOfAGapThenFilled: a client that sends on while it fills
// the gaps the venue asks for is not logged out, however much it sends over
// many gaps, each less than the bound ahead: the count starts again once a
// gap is filled. Nor is one that jumps its sequence numbers forward with a
// SequenceReset-GapFill and sends on at once, past the bound: the messages
// read before the jump is handled count only a little.
func TestMessagesAheadOfAGapThenFilled(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	pad := strings.Repeat("x", 60<<10)
	testRequests := func(n int, round string) error {
		for i := 0; i < n; i++ {
			if err := c.Send("1", fixclient.F(112, fmt.Sprintf("%s-%d-%s", round, i, pad))); err != nil {
				return err
			}
		}
		return nil
	}
	answered := func(n int, round string) {
		t.Helper()
		for i := 0; i < n; i++ {
			m, err := c.ReadAny(readWait)
			if err != nil || m.Type() != "0" || !strings.HasPrefix(m.Get(112), fmt.Sprintf("%s-%d-", round, i)) {
				t.Fatalf("%s: got %v (%v), want the Heartbeat answering TestRequest %d", round, m, err, i)
			}
		}
	}
	gapFill := func(seq, newSeq int, possDup bool) {
		t.Helper()
		now := fixclient.Timestamp(time.Now())
		f := []fixclient.Field{fixclient.F(35, "4"), fixclient.F(49, c.Sender), fixclient.F(56, c.Target), fixclient.F(34, strconv.Itoa(seq))}
		if possDup {
			f = append(f, fixclient.F(43, "Y"), fixclient.F(52, now), fixclient.F(122, now))
		} else {
			f = append(f, fixclient.F(52, now))
		}
		if err := c.SendRaw(fixclient.Build(append(f, fixclient.F(123, "Y"), fixclient.F(36, strconv.Itoa(newSeq)))...)); err != nil {
			t.Fatal(err)
		}
	}
	// A fifth of the bound ahead of a gap, seven times: past the bound in
	// all, and each round's answers (the Heartbeats echo the TestReqIDs)
	// within the edge's outbound bound, which a burst of them overflowed
	// when a loaded machine's client read them slower than they came.
	ahead := edge.DefaultAheadBytesMax / 5 / len(pad)
	if ahead*len(pad) >= edge.DefaultOutboundBytesMax {
		t.Fatalf("a round's answers (%d bytes) do not fit the outbound bound", ahead*len(pad))
	}
	for _, round := range []string{"first", "second", "third", "fourth", "fifth", "sixth", "seventh"} {
		gap := c.NextOut
		c.NextOut++
		if err := testRequests(ahead, round); err != nil {
			t.Fatal(err)
		}
		if m, err := c.ReadAny(readWait); err != nil || m.Type() != "2" || m.Get(7) != strconv.Itoa(gap) {
			t.Fatalf("%s: got %v (%v), want a ResendRequest from %d", round, m, err, gap)
		}
		gapFill(gap, gap+1, true)
		answered(ahead, round)
	}
	// A jump, and more than the bound right after it.
	gapFill(c.NextOut, 1_000_000, false)
	c.NextOut = 1_000_000
	over := edge.DefaultAheadBytesMax/len(pad) + 10
	sent := make(chan error, 1)
	go func() { sent <- testRequests(over, "jump") }()
	answered(over, "jump")
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if got := s.edge.Stats().Count(edge.ReasonAheadOfGap); got != 0 {
		t.Fatalf("ahead_of_gap counted %d times", got)
	}
}
