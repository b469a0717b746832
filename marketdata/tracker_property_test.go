package marketdata

import (
	"encoding/binary"
	"testing"

	"github.com/fixvenue/fixvenue/marketdata/feedclient"
	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// packetCapture is a packet.Sink that keeps copies of the packets.
type packetCapture struct{ packets [][]byte }

func (c *packetCapture) WritePacket(pkt []byte, _ uint64, _ int) error {
	c.packets = append(c.packets, append([]byte(nil), pkt...))
	return nil
}

// trackerRecoverer serves a feedclient straight from a tracker: snapshots as
// the recovery service encodes them, and no retransmission at all (so any
// gap would end in a snapshot and show up in the client's counters).
type trackerRecoverer struct {
	tr          *Tracker
	b           *packet.Builder
	retransmits int
}

func (r *trackerRecoverer) Retransmit(uint64, uint32, func([]byte) error) (mdsbe.RetransmitRejectReason, error) {
	r.retransmits++
	return mdsbe.RetransmitRejectReasonTooOld, nil
}

func (r *trackerRecoverer) Snapshot(id uint32, fn func([]byte) error) (mdsbe.SnapshotRejectReason, error) {
	frames, err := encodeSnapshot(r.tr, ChannelDefault, r.b.NextSeq()-1, 1, id, SnapshotBytesMaxDefault)
	if err != nil {
		return 0, err
	}
	return 0, forEachFrame(frames, fn)
}

func (r *trackerRecoverer) Close() error { return nil }

func forEachFrame(frames []byte, fn func([]byte) error) error {
	for len(frames) > 0 {
		n := int(binary.LittleEndian.Uint16(frames))
		if err := fn(frames[2 : 2+n]); err != nil {
			return err
		}
		frames = frames[2+n:]
	}
	return nil
}

// compareClient fails the test unless the client's books equal the tracker's.
func compareClient(t testing.TB, c *feedclient.Client, tr *Tracker, step int) {
	t.Helper()
	var tl []Level
	for _, d := range tr.Instruments() {
		b := c.Book(uint32(d.ID))
		st, _ := tr.State(d.ID)
		if b == nil {
			if st.RptSeq != 0 {
				t.Fatalf("step %d: client has no book for instrument %d", step, d.ID)
			}
			continue
		}
		if b.RptSeq != st.RptSeq || b.Status != st.Status || b.Volume != st.Volume ||
			b.LastTradePriceTicks != st.LastTradePriceTicks || b.LastTradeQty != st.LastTradeQty {
			t.Fatalf("step %d inst %d: client %+v tracker %+v", step, d.ID, *b, st)
		}
		for _, side := range []mdsbe.Side{mdsbe.SideBuy, mdsbe.SideSell} {
			tl, _ = tr.AppendLevels(tl[:0], d.ID, side, 0)
			cl := b.Bids
			if side == mdsbe.SideSell {
				cl = b.Asks
			}
			if len(cl) != len(tl) {
				t.Fatalf("step %d inst %d %v: client %v tracker %v", step, d.ID, side, cl, tl)
			}
			for i := range cl {
				if cl[i].PriceTicks != tl[i].PriceTicks || cl[i].Qty != tl[i].Qty || cl[i].OrderCount != tl[i].OrderCount {
					t.Fatalf("step %d inst %d %v level %d: client %+v tracker %+v", step, d.ID, side, i, cl[i], tl[i])
				}
			}
		}
	}
}

// TestTrackerEqualsMatcher is the property test of the one-writer rule (only
// the matcher touches the books; the tracker rebuilds them from events):
// long random command streams go through the real matcher; after every command the
// tracker, fed only the events, holds exactly the matcher's books (levels,
// orders in priority order, statuses), a feed client fed only the
// tracker's packets holds the same levels, and a market-by-order reader of
// the packets the same orders under the ids the feed shows (mboBook: an
// iceberg's refilled slice under an id never seen before).
func TestTrackerEqualsMatcher(t *testing.T) {
	commands := 12000
	if testing.Short() || raceEnabled {
		commands = 4000
	}
	// Batching modes: how the feed's batches fall relative to commands.
	const (
		perCommand   = iota // EndCommand after each command (the pipeline's RingSource)
		multiCommand        // several commands per batch: the tracker finds the boundaries by causeSeq
		splitCommand        // batches that end inside a command: the book must still be exact at command ends
	)
	for _, run := range []struct {
		seed uint64
		mode int
	}{{1, perCommand}, {2, multiCommand}, {3, splitCommand}, {4, perCommand}} {
		seed := run.seed
		sim := newVenueSim(t, seed)
		capture := &packetCapture{}
		b, err := packet.NewBuilder(packet.BuilderConfig{Channel: ChannelDefault, Sequenced: true, Sink: capture})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := NewTracker(TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024}, b)
		if err != nil {
			t.Fatal(err)
		}
		rec := &trackerRecoverer{tr: tr, b: b}
		client, err := feedclient.New(feedclient.Config{Recoverer: rec})
		if err != nil {
			t.Fatal(err)
		}
		mbo := newMBOBook()
		var trades, resting, triggered, cascades, refills, uncrosses, interruptions int
		batchLeft := 0
		for step := 0; step < commands; step++ {
			events := sim.next()
			n := 0
			for _, ev := range events.All() {
				switch tid, _ := venue.TemplateIDOf(ev, 0); tid {
				case venue.OrderTriggeredTemplateID:
					n++
				case venue.OrderRefilledTemplateID:
					refills++
				case venue.AuctionUncrossedTemplateID:
					var u venue.AuctionUncrossed
					if u.WrapDecode(ev, 0) == nil && u.MatchedQty() > 0 {
						uncrosses++
					}
				case venue.VolatilityInterruptionTemplateID:
					interruptions++
				}
			}
			triggered += n
			if n > 1 {
				cascades++
			}
			split := -1
			if run.mode == splitCommand && events.Len() > 1 {
				split = 1 + sim.rng.IntN(events.Len()-1)
			}
			for i, ev := range events.All() {
				if i == split {
					if err := tr.EndBatch(); err != nil {
						t.Fatalf("seed %d step %d: %v", seed, step, err)
					}
				}
				if err := tr.Apply(ev); err != nil {
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				}
			}
			if run.mode == multiCommand {
				if batchLeft > 0 {
					batchLeft--
					continue
				}
				batchLeft = sim.rng.IntN(8)
			}
			if err := tr.EndCommand(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
			compareWithMatcher(t, sim.m, tr, step)
			for _, p := range capture.packets {
				mbo.packet(t, p)
				client.HandlePacket(p)
			}
			mbo.compare(t, tr, step)
			capture.packets = capture.packets[:0]
			compareClient(t, client, tr, step)
			resting = max(resting, tr.Stats().OrdersHeld)
		}
		for _, d := range tr.Instruments() {
			st, _ := tr.State(d.ID)
			trades += int(st.Volume)
		}
		cs := client.Stats()
		if cs.Snapshots != 1 || rec.retransmits != 0 || cs.Gaps != 0 || cs.Inconsistencies != 0 {
			t.Fatalf("seed %d: a loss-free feed needed recovery: %+v", seed, cs)
		}
		// The stream must have exercised the book: trades and a deep book.
		if trades == 0 || resting < 20 || triggered == 0 || cascades == 0 || refills == 0 || uncrosses == 0 || interruptions == 0 {
			t.Fatalf("seed %d: weak stream: volume %d, at most %d resting orders, %d stops elected, %d cascades, %d iceberg refills, %d uncrosses that traded, %d volatility interruptions",
				seed, trades, resting, triggered, cascades, refills, uncrosses, interruptions)
		}
		t.Logf("seed %d mode %d: %d commands, %d events, %d messages, volume %d, max resting %d, %d stops elected, %d cascades, %d iceberg refills, %d uncrosses, %d interruptions",
			seed, run.mode, commands, tr.Stats().EventsApplied, tr.Stats().MessagesQueued, trades, resting, triggered, cascades, refills, uncrosses, interruptions)
	}
}
