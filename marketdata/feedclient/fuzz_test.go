package feedclient

import (
	"testing"
	"time"
)

// FuzzPacket: arbitrary datagrams never panic the client, and whatever it
// accepts its books stay well formed (sorted, positive quantities, within
// bounds). The client is joined and mid-stream, so the bytes reach the
// sequencing, recovery and book code, not only the framing checks.
func FuzzPacket(f *testing.F) {
	seed := newScriptFeed(f, 1)
	for i := 0; i < 3; i++ {
		for _, p := range seed.step() {
			f.Add(p)
		}
	}
	f.Add(seed.heartbeat())
	var snap [][]byte
	_, _ = seed.Snapshot(0, func(p []byte) error { snap = append(snap, append([]byte(nil), p...)); return nil })
	f.Add(snap[0])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		feed := newScriptFeed(t, 2)
		clock := &fakeClock{now: time.Unix(1, 0)}
		c, err := New(Config{Recoverer: feed, Clock: clock.Now, ReorderPacketsMax: 8, LevelsMax: 64, InstrumentsMax: 8})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			for _, p := range feed.step() {
				c.HandlePacket(p)
			}
		}
		c.HandlePacket(pkt)
		for _, p := range feed.step() {
			c.HandlePacket(p)
		}
		clock.advance(time.Second)
		c.Poll()
		c.HandlePacket(feed.heartbeat())
		c.Books(func(b *Book) { checkWellFormed(t, b, 64) })
	})
}

func checkWellFormed(t *testing.T, b *Book, levelsMax int) {
	for _, side := range []struct {
		levels []Level
		bid    bool
	}{{b.Bids, true}, {b.Asks, false}} {
		if len(side.levels) > levelsMax {
			t.Fatalf("instrument %d: %d levels", b.InstrumentID, len(side.levels))
		}
		for i, l := range side.levels {
			if l.Qty <= 0 || l.OrderCount <= 0 {
				t.Fatalf("instrument %d: level %+v", b.InstrumentID, l)
			}
			if i > 0 && !better(side.bid, side.levels[i-1].PriceTicks, l.PriceTicks) {
				t.Fatalf("instrument %d: levels out of order %v", b.InstrumentID, side.levels)
			}
		}
	}
}
