package marketdata

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestFeedRunsOnTheEventRing: Feed.Run consumes the event ring through a
// RingSource and publishes only events of commands the watermark allows
// (durable and completely applied), then stops when the barrier is alerted.
func TestFeedRunsOnTheEventRing(t *testing.T) {
	r, err := ring.New(ring.Config{Slots: 1 << 12, SlotSize: 256, Producer: ring.SingleProducer,
		ClaimTimeout: ring.DefaultClaimTimeout})
	if err != nil {
		t.Fatal(err)
	}
	consumed := ring.NewSequence(-1)
	r.AddGatingSequences(consumed)
	barrier := r.NewBarrier()
	var ready atomic.Int64
	conn := udpSink(t)
	defer conn.Close()
	fx := newFeedFixture(t, conn.LocalAddr().String(), nil)
	done := make(chan error, 1)
	go func() {
		done <- fx.feed.Run(RingSource{Ring: r, Barrier: barrier, Sequence: consumed, CommandsReady: ready.Load})
	}()

	sim := newVenueSim(t, 61)
	eventsUpTo := map[uint64]uint64{} // command seq → events published up to and including it
	var published uint64
	for i := 0; i < 400; i++ {
		events := sim.next()
		for _, ev := range events.All() {
			seq, slot, err := r.Claim()
			if err != nil {
				t.Fatal(err)
			}
			copy(slot, ev)
			r.Publish(seq)
			published++
		}
		eventsUpTo[sim.seq] = published
	}
	waitApplied := func(want uint64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for fx.feed.Stats().Tracker.EventsApplied != want {
			if time.Now().After(deadline) {
				t.Fatalf("feed applied %d events, want %d", fx.feed.Stats().Tracker.EventsApplied, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	ready.Store(150)
	waitApplied(eventsUpTo[150])
	time.Sleep(20 * time.Millisecond) // it must not run ahead of the watermark
	if got := fx.feed.Stats().Tracker.EventsApplied; got != eventsUpTo[150] {
		t.Fatalf("feed ran past the watermark: %d events, want %d", got, eventsUpTo[150])
	}
	ready.Store(int64(sim.seq))
	waitApplied(published)
	fx.feed.View(func(tr *Tracker, _ uint64) { compareWithMatcher(t, sim.m, tr, int(sim.seq)) })
	for deadline := time.Now().Add(10 * time.Second); consumed.Load() != int64(published)-1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // Run releases right after it applies
			t.Fatalf("released up to %d, published %d", consumed.Load(), published)
		}
	}
	barrier.Alert()
	if err := <-done; !errors.Is(err, ring.ErrAlerted) {
		t.Fatalf("Run returned %v", err)
	}
}

// TestCommandLargerThanTheRingDoesNotStall: a mass cancel with more events
// than the event ring has slots. The producer (standing in for the matcher)
// can only finish publishing the command once the feed releases some of its
// events, so the feed must take durable events of a command that has not
// ended; without that both wait for each other and the claim times out. The
// books must come out exact.
func TestCommandLargerThanTheRingDoesNotStall(t *testing.T) {
	const slots = 64
	r, err := ring.New(ring.Config{Slots: slots, SlotSize: 256, Producer: ring.SingleProducer, ClaimTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	consumed := ring.NewSequence(-1)
	r.AddGatingSequences(consumed)
	barrier := r.NewBarrier()
	var ready, durable atomic.Int64
	conn := udpSink(t)
	defer conn.Close()
	fx := newFeedFixture(t, conn.LocalAddr().String(), nil)
	done := make(chan error, 1)
	go func() {
		done <- fx.feed.Run(RingSource{Ring: r, Barrier: barrier, Sequence: consumed, CommandsReady: ready.Load, Durable: durable.Load})
	}()

	sim := newVenueSim(t, 62)
	var published uint64
	publish := func(events *core.BufferSink) error {
		for _, ev := range events.All() {
			seq, slot, err := r.Claim()
			if err != nil {
				return err
			}
			copy(slot, ev)
			r.Publish(seq)
			published++
		}
		return nil
	}
	// Commands are durable before the matcher is done with them (the
	// journal and the matcher run side by side), and ready once both hold.
	for i := 0; sim.live.Len() < 2*slots; i++ {
		if i == 5000 {
			t.Fatalf("only %d resting orders after %d commands", sim.live.Len(), i)
		}
		events := sim.apply(sim.newOrder)
		durable.Store(int64(sim.seq))
		if err := publish(events); err != nil {
			t.Fatalf("command %d: %v", sim.seq, err)
		}
		ready.Store(int64(sim.seq))
	}
	events := sim.apply(func() []byte {
		var c venue.MassCancel
		sim.must(c.WrapEncode(sim.cmd[:], 0))
		c.SetSeq(sim.seq)
		c.SetTimestampNs(sim.nowNs)
		c.SetSessionIdx(1)
		c.SetFilterSessionIdx(0xFFFF) // every session, instrument and side
		c.SetMassCancelRequestType(7)
		sim.must(c.SetClOrdIDString(sim.newClOrdID()))
		return sim.cmd[:c.EncodedLength()]
	})
	if events.Len() <= slots {
		t.Fatalf("the mass cancel has %d events, want more than the ring's %d slots", events.Len(), slots)
	}
	durable.Store(int64(sim.seq))
	if err := publish(events); err != nil {
		t.Fatalf("publishing the %d events of one command through %d slots: %v (the feed waited for the command to end)",
			events.Len(), slots, err)
	}
	ready.Store(int64(sim.seq))
	for deadline := time.Now().Add(10 * time.Second); fx.feed.Stats().Tracker.EventsApplied != published; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("feed applied %d events, want %d", fx.feed.Stats().Tracker.EventsApplied, published)
		}
	}
	fx.feed.View(func(tr *Tracker, _ uint64) { compareWithMatcher(t, sim.m, tr, int(sim.seq)) })
	barrier.Alert()
	if err := <-done; !errors.Is(err, ring.ErrAlerted) {
		t.Fatalf("Run returned %v", err)
	}
}

// TestEndsCommandLooksAtTheNextEvent: a batch cut inside a command (taken in
// parts while the command was not yet complete) does not end it, though the
// command has become complete by the time the feed asks; the batch's last
// event ends its command when the next published event is of a later one,
// or none is published.
func TestEndsCommandLooksAtTheNextEvent(t *testing.T) {
	r, err := ring.New(ring.Config{Slots: 8, SlotSize: 64, Producer: ring.SingleProducer})
	if err != nil {
		t.Fatal(err)
	}
	publish := func(cause uint64) {
		seq, slot, err := r.Claim()
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint64(slot[venue.MessageHeaderSize:], cause)
		r.Publish(seq)
	}
	publish(1)
	publish(1)
	publish(1)
	var ready atomic.Int64
	ready.Store(1)
	s := RingSource{Ring: r, CommandsReady: ready.Load}
	if s.EndsCommand(0) || s.EndsCommand(1) {
		t.Fatal("a batch cut inside command 1 ends it")
	}
	if !s.EndsCommand(2) {
		t.Fatal("command 1's last event, with nothing after it, does not end it")
	}
	publish(2)
	if !s.EndsCommand(2) {
		t.Fatal("command 1's last event, with command 2's after it, does not end it")
	}
	if s.EndsCommand(3) {
		t.Fatal("command 2, not ready, ended")
	}
}
