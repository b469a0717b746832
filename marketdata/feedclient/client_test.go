package feedclient

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

func newTestClient(t testing.TB, f *scriptFeed, clock *fakeClock, cb Callbacks) *Client {
	t.Helper()
	c, err := New(Config{Recoverer: f, Clock: clock.Now, GapTimeout: 10 * time.Millisecond, Callbacks: cb,
		RetransmitCountMax: 5000, ReorderPacketsMax: 64})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recorder keeps the recoveries a client reports.
type recorder struct{ recs []Recovery }

func (r *recorder) onRecovery(x Recovery) { r.recs = append(r.recs, x) }

func (r *recorder) last() Recovery { return r.recs[len(r.recs)-1] }

// newRecordingClient is newTestClient on a fake clock at 1 s, its
// recoveries recorded.
func newRecordingClient(t testing.TB, f *scriptFeed) (*Client, *fakeClock, *recorder) {
	t.Helper()
	clock := &fakeClock{now: time.Unix(1, 0)}
	rec := &recorder{}
	return newTestClient(t, f, clock, Callbacks{OnRecovery: rec.onRecovery}), clock, rec
}

// deliver hands the client packets in the order given.
func deliver(c *Client, packets [][]byte) {
	for _, p := range packets {
		c.HandlePacket(p)
	}
}

func TestInOrderFeed(t *testing.T) {
	f := newScriptFeed(t, 1)
	clock := &fakeClock{now: time.Unix(1, 0)}
	var books, trades, msgs int
	c := newTestClient(t, f, clock, Callbacks{
		OnBook:    func(*Book) { books++ },
		OnTrade:   func(*Book, Trade) { trades++ },
		OnMessage: func(uint64, uint16, []byte) { msgs++ },
	})
	firstCount := 0
	for i := 0; i < 2000; i++ {
		for _, p := range f.step() {
			if i == 0 { // the join's snapshot covers the first packets
				firstCount += int(p[2])
			}
			c.HandlePacket(p)
		}
		compareModel(t, c, f)
	}
	s := c.Stats()
	if s.Snapshots != 1 || s.Gaps != 0 || s.Retransmissions != 0 || s.Inconsistencies != 0 || s.Duplicates != 0 {
		t.Fatalf("in-order feed needed recovery: %+v", s)
	}
	if books == 0 || trades == 0 || uint64(msgs) != s.Messages || s.Messages+uint64(firstCount) != f.nextSeq()-1 {
		t.Fatalf("callbacks: %d books %d trades %d messages; stats %+v", books, trades, msgs, s)
	}
}

func TestGapRecoveredByRetransmission(t *testing.T) {
	f := newScriptFeed(t, 2)
	c, clock, rec := newRecordingClient(t, f)
	deliver(c, f.step())
	lost := f.step()
	next := f.step()
	from := seqOf(lost[0])
	deliver(c, next)
	if c.Stats().Reordered == 0 || c.Stats().Retransmissions != 0 {
		t.Fatalf("the gap was not held open: %+v", c.Stats())
	}
	clock.advance(5 * time.Millisecond)
	c.Poll()
	if f.retransmits != 0 {
		t.Fatal("recovery before GapTimeout")
	}
	clock.advance(5 * time.Millisecond)
	c.Poll()
	compareModel(t, c, f)
	last := rec.last()
	if last.Cause != CauseGap || last.Outcome != Retransmitted || last.FromSeq != from || last.Count != seqOf(next[0])-from {
		t.Fatalf("recovery %+v, want gap from %d", last, from)
	}
	if !c.InSync() {
		t.Fatal("not in sync after the retransmission")
	}
}

func TestLateReorderedPacketNeedsNoRecovery(t *testing.T) {
	f := newScriptFeed(t, 3)
	clock := &fakeClock{now: time.Unix(1, 0)}
	c := newTestClient(t, f, clock, Callbacks{})
	deliver(c, f.step())
	a, b := f.step(), f.step()
	deliver(c, b)
	deliver(c, a)
	deliver(c, b) // and a duplicate
	compareModel(t, c, f)
	if s := c.Stats(); s.Retransmissions != 0 || s.Snapshots != 1 || s.Duplicates == 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestRejectedRetransmissionFallsBackToSnapshot(t *testing.T) {
	f := newScriptFeed(t, 4)
	f.windowPackets = 2
	c, clock, rec := newRecordingClient(t, f)
	deliver(c, f.step())
	for i := 0; i < 5; i++ {
		f.step() // all lost, and more than the window holds
	}
	deliver(c, f.step())
	clock.advance(time.Second)
	c.Poll()
	compareModel(t, c, f)
	last := rec.last()
	if last.Outcome != Snapshotted || last.RetransmitReject != mdsbe.RetransmitRejectReasonTooOld {
		t.Fatalf("recovery %+v", last)
	}
}

func TestTailLossFoundByHeartbeat(t *testing.T) {
	f := newScriptFeed(t, 5)
	clock := &fakeClock{now: time.Unix(1, 0)}
	var inSync []bool
	c := newTestClient(t, f, clock, Callbacks{OnHeartbeat: func(_ uint64, ok bool) { inSync = append(inSync, ok) }})
	deliver(c, f.step())
	f.step() // lost, and the channel goes idle
	c.HandlePacket(f.heartbeat())
	compareModel(t, c, f)
	c.HandlePacket(f.heartbeat())
	if len(inSync) != 2 || !inSync[0] || !inSync[1] || c.Stats().Retransmissions != 1 {
		t.Fatalf("heartbeats in sync %v, stats %+v", inSync, c.Stats())
	}
}

func TestUnrecoveredGapIsReportedThenHealed(t *testing.T) {
	f := newScriptFeed(t, 6)
	c, clock, rec := newRecordingClient(t, f)
	deliver(c, f.step())
	f.step()
	f.failRetransmit, f.failSnapshot = true, true
	deliver(c, f.step())
	clock.advance(time.Second)
	c.Poll()
	last := rec.last()
	if last.Outcome != Unrecovered || last.Err == nil || c.InSync() || c.NextSeq() != 0 {
		t.Fatalf("recovery %+v, in sync %v", last, c.InSync())
	}
	f.failRetransmit, f.failSnapshot = false, false
	for _, p := range f.step() {
		c.HandlePacket(p) // too soon after the failure: held
	}
	clock.advance(time.Second)
	c.Poll()
	compareModel(t, c, f)
	if c.Stats().Unrecovered != 1 {
		t.Fatalf("stats %+v", c.Stats())
	}
}

func TestInconsistencyResynchronises(t *testing.T) {
	f := newScriptFeed(t, 7)
	c, _, rec := newRecordingClient(t, f)
	for i := 0; i < 50; i++ {
		deliver(c, f.step())
	}
	// The model moves on without telling: the next message's rptSeq jumps.
	f.books[1].rptSeq += 5
	f.books[1].bids = nil
	for i := 0; i < 50; i++ {
		deliver(c, f.step())
	}
	compareModel(t, c, f)
	found := false
	for _, r := range rec.recs {
		found = found || (r.Cause == CauseInconsistent && r.Outcome == Snapshotted)
	}
	if !found || c.Stats().Inconsistencies == 0 {
		t.Fatalf("no resynchronisation: %+v", rec.recs)
	}
}

// TestLossyDelivery is the client's loss test over a test transport: the
// packets of a long random feed are dropped, duplicated and reordered at
// several rates; the client must end with the model's books, every gap
// recovered (by retransmission or snapshot) and reported.
func TestLossyDelivery(t *testing.T) {
	for _, rate := range []struct {
		name               string
		drop, dup, reorder float64
		window             int
	}{
		{"clean", 0, 0, 0, 1 << 30},
		{"1% loss", 0.01, 0.01, 0.02, 1 << 30},
		{"5% loss", 0.05, 0.05, 0.10, 1 << 30},
		{"20% loss small window", 0.20, 0.05, 0.20, 8},
		{"50% loss", 0.50, 0.10, 0.30, 64},
	} {
		t.Run(rate.name, func(t *testing.T) {
			f := newScriptFeed(t, 42)
			f.windowPackets = rate.window
			c, clock, rec := newRecordingClient(t, f)
			rng := rand.New(rand.NewPCG(1, 2))
			var held [][]byte
			dropped := 0
			for i := 0; i < 3000; i++ {
				for _, p := range f.step() {
					switch x := rng.Float64(); {
					case x < rate.drop:
						dropped++
					case x < rate.drop+rate.reorder:
						held = append(held, p)
					default:
						c.HandlePacket(p)
						if rng.Float64() < rate.dup {
							c.HandlePacket(p)
						}
					}
				}
				if len(held) > 0 && rng.IntN(3) == 0 {
					k := rng.IntN(len(held))
					c.HandlePacket(held[k])
					held = append(held[:k], held[k+1:]...)
				}
				clock.advance(time.Duration(rng.IntN(4)) * time.Millisecond)
				c.Poll()
			}
			deliver(c, held)
			clock.advance(time.Second)
			c.HandlePacket(f.heartbeat())
			compareModel(t, c, f)
			s := c.Stats()
			var retransmitted, snapshotted int
			for _, r := range rec.recs {
				switch r.Outcome {
				case Retransmitted:
					retransmitted++
				case Snapshotted:
					snapshotted++
				default:
					t.Fatalf("unrecovered: %+v", r)
				}
			}
			if dropped > 0 && retransmitted+snapshotted < 2 {
				t.Fatalf("%d packets dropped but recoveries %+v", dropped, rec.recs)
			}
			t.Logf("dropped %d: %d retransmissions, %d snapshots (1 to join), stats %+v", dropped, retransmitted, snapshotted, s)
		})
	}
}

func TestAppendDecimal(t *testing.T) {
	cases := []struct {
		ticks, mantissa int64
		exponent        int8
		want            string
	}{
		{10025, 1, -2, "100.25"},
		{7, 1, -2, "0.07"},
		{-7, 1, -2, "-0.07"},
		{3, 5, -2, "0.15"},
		{2500, 1, -3, "2.500"},
		{12, 25, 0, "300"},
		{3, 1, 2, "300"},
		{0, 1, -2, "0.00"},
		{1 << 62, 4, 0, "18446744073709551616"},
		{-(1 << 62), 4, -2, "-184467440737095516.16"},
		{0, 1, 3, "0"},
	}
	for _, tc := range cases {
		if got := string(AppendDecimal(nil, tc.ticks, tc.mantissa, tc.exponent)); got != tc.want {
			t.Errorf("AppendDecimal(%d, %d, %d) = %q, want %q", tc.ticks, tc.mantissa, tc.exponent, got, tc.want)
		}
	}
}

// TestFullReorderBufferRecoversAtOnce: when held packets fill the buffer,
// the client recovers without waiting for GapTimeout.
func TestFullReorderBufferRecoversAtOnce(t *testing.T) {
	f := newScriptFeed(t, 8)
	clock := &fakeClock{now: time.Unix(1, 0)}
	c, err := New(Config{Recoverer: f, Clock: clock.Now, GapTimeout: time.Hour, ReorderPacketsMax: 4})
	if err != nil {
		t.Fatal(err)
	}
	deliver(c, f.step())
	f.step() // lost
	for i := 0; i < 10; i++ {
		deliver(c, f.step())
	}
	compareModel(t, c, f)
	if s := c.Stats(); s.Retransmissions == 0 || !c.InSync() {
		t.Fatalf("stats %+v", s)
	}
}

// TestReorderedHeartbeatIsNotARestart: a heartbeat overtaken on the way by
// the packets sent after it announces a sequence below the one the client
// expects; stamped before a packet it already has, it is out of date, not
// a feed numbering anew, and costs no snapshot. A heartbeat stamped later
// that announces less is one (the venue restarted on another data
// directory), and the client takes a snapshot.
func TestReorderedHeartbeatIsNotARestart(t *testing.T) {
	f := newScriptFeed(t, 11)
	c, _, rec := newRecordingClient(t, f)
	deliver(c, f.step())
	late := f.heartbeat()
	deliver(c, f.step())
	deliver(c, f.step())
	c.HandlePacket(late)
	compareModel(t, c, f)
	if s := c.Stats(); s.Snapshots != 1 || s.StaleHeartbeats != 1 || !c.InSync() {
		t.Fatalf("a reordered heartbeat: stats %+v, in sync %v", s, c.InSync())
	}
	// The same announcement stamped after the last packet: a feed that
	// went back.
	binary.LittleEndian.PutUint64(late[16:], uint64(f.timeNs+1000)) // the header's sendingTimeNs
	c.HandlePacket(late)
	compareModel(t, c, f)
	if s := c.Stats(); s.Snapshots != 2 || s.StaleHeartbeats != 1 || rec.last().Cause != CauseInconsistent {
		t.Fatalf("a later heartbeat announcing less: stats %+v, recoveries %+v", s, rec.recs)
	}
}

// TestSnapshotForgetsAStatusReason: a snapshot gives each instrument's status
// but not why it changed, so a book it replaces says no reason: it kept
// the reason of the last InstrumentStatus the client had applied, a
// volatility interruption for an instrument the snapshot shows open.
func TestSnapshotForgetsAStatusReason(t *testing.T) {
	f := newScriptFeed(t, 11)
	c, clock, _ := newRecordingClient(t, f)
	deliver(c, f.step())
	status := func(st mdsbe.TradingStatus, why mdsbe.StatusReason) [][]byte {
		mb := f.books[1]
		mb.rptSeq++
		mb.status = st
		bookMessage(f, mdsbe.InstrumentStatusEncodedLength, mb, func(m *mdsbe.InstrumentStatus) {
			m.SetStatus(st)
			m.SetReason(why)
		})
		if err := f.b.Flush(); err != nil {
			t.Fatal(err)
		}
		out := append([][]byte(nil), f.out...)
		f.out = f.out[:0]
		return out
	}
	deliver(c, status(mdsbe.TradingStatusVolatilityAuction, mdsbe.StatusReasonVolatilityInterruption))
	if b := c.Book(1); b.StatusReason != mdsbe.StatusReasonVolatilityInterruption {
		t.Fatalf("status reason %v after a volatility interruption", b.StatusReason)
	}
	status(mdsbe.TradingStatusOpen, mdsbe.StatusReasonNone) // lost
	f.windowPackets = 0                                     // and not retransmitted: a snapshot
	deliver(c, f.step())
	clock.advance(time.Second)
	c.Poll()
	b := c.Book(1)
	if c.Stats().Snapshots != 2 || b.Status != mdsbe.TradingStatusOpen || b.StatusReason != mdsbe.StatusReasonNone {
		t.Fatalf("after the snapshot: status %v, reason %v; stats %+v", b.Status, b.StatusReason, c.Stats())
	}
}

// TestHeartbeatOfALineBehind: with two lines, a line brings its packets and
// heartbeats in order, but may trail the other. Its heartbeat, stamped
// after a packet the other line already brought, announces less than the
// client expects and no less than it brought itself: the same numbering,
// counted stale, not a feed that went back (which a client of one line
// takes it for, and snapshots). Once the line has brought more than its
// heartbeat announces, the numbering did go back.
func TestHeartbeatOfALineBehind(t *testing.T) {
	for _, lines := range []int{1, 2} {
		f := newScriptFeed(t, 12)
		c, _, _ := newRecordingClient(t, f)
		c.lines = lines
		first := f.step()
		for _, p := range first {
			c.handleLine(p, 0)
			c.handleLine(p, 1)
		}
		hb := f.heartbeat() // sent on both lines after the first packets
		c.handleLine(hb, 0)
		ahead := f.step()
		for _, p := range ahead {
			c.handleLine(p, 0) // line A brings the next packets
		}
		binary.LittleEndian.PutUint64(hb[16:], uint64(f.timeNs+1000)) // stamped after them: the venue's clock ran on
		c.handleLine(hb, 1)                                           // line B's copy of the heartbeat, behind
		compareModel(t, c, f)
		s := c.Stats()
		if lines == 2 && (s.Snapshots != 1 || s.StaleHeartbeats != 1) {
			t.Fatalf("two lines: a heartbeat of the line behind resynced: %+v", s)
		}
		if lines == 1 && s.Snapshots != 2 {
			t.Fatalf("one line: a later heartbeat announcing less is a feed that went back: %+v", s)
		}
		if lines == 2 {
			for _, p := range ahead {
				c.handleLine(p, 1) // B catches up: duplicates
			}
			c.handleLine(hb, 1) // now behind what B itself brought
			if s := c.Stats(); s.Snapshots != 2 || s.Lines[1].Duplicates != uint64(len(first)+len(ahead)) {
				t.Fatalf("two lines: a heartbeat announcing less than its own line brought is a feed that went back: %+v", s)
			}
		}
	}
}

// twoLineClient is a recording client of f reading two lines, which has
// taken f's first packets from line A.
func twoLineClient(t *testing.T, f *scriptFeed) (*Client, *fakeClock) {
	t.Helper()
	c, clock, _ := newRecordingClient(t, f)
	c.lines = 2
	for _, p := range f.step() {
		c.handleLine(p, 0)
	}
	return c, clock
}

// TestHeartbeatOfALineThatBroughtNothingYet: with two lines, the first
// datagram the lagging line brings may be a heartbeat sent before the
// packets the other line brought since (its reader behind, on a loaded
// machine), stamped later than them when the venue's clock and its events'
// times differ. Its line brought nothing to measure it by: it is of the line
// behind, not a feed that numbers anew, which the other line's heartbeat
// would tell.
func TestHeartbeatOfALineThatBroughtNothingYet(t *testing.T) {
	f := newScriptFeed(t, 14)
	c, _ := twoLineClient(t, f)
	hb := f.heartbeat()
	for _, p := range f.step() {
		c.handleLine(p, 0) // line A brings the next packets
	}
	binary.LittleEndian.PutUint64(hb[16:], uint64(f.timeNs+1000))
	c.handleLine(hb, 1) // line B's first datagram
	compareModel(t, c, f)
	if s := c.Stats(); s.Snapshots != 1 || s.StaleHeartbeats != 1 {
		t.Fatalf("the first heartbeat of the line behind resynced: %+v", s)
	}
	c.handleLine(hb, 0) // the same on the line that brought more: a feed that went back
	if s := c.Stats(); s.Snapshots != 2 {
		t.Fatalf("a heartbeat announcing less than its own line brought did not resync: %+v", s)
	}
}

// TestTailLossOnOneLineWaitsForTheOther: with two lines, a heartbeat
// announcing messages the client lacks opens a gap that waits GapTimeout
// for the other line to bring them (one line recovers at once, as nothing
// can be in flight on it); the other line's packet closes it, and nothing
// is retransmitted.
func TestTailLossOnOneLineWaitsForTheOther(t *testing.T) {
	f := newScriptFeed(t, 13)
	c, clock := twoLineClient(t, f)
	tail := f.step() // lost on A
	c.handleLine(f.heartbeat(), 0)
	clock.advance(5 * time.Millisecond)
	c.Poll()
	if s := c.Stats(); s.Retransmissions != 0 || s.Gaps != 1 || c.InSync() {
		t.Fatalf("the tail lost on A: stats %+v, in sync %v", s, c.InSync())
	}
	for _, p := range tail {
		c.handleLine(p, 1)
	}
	clock.advance(time.Second)
	c.Poll()
	compareModel(t, c, f)
	if s := c.Stats(); s.Retransmissions != 0 || !c.InSync() {
		t.Fatalf("B brought the tail: stats %+v, in sync %v", s, c.InSync())
	}
}
