package feedclient

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// scriptFeed is a small in-process publisher for the client's tests: it
// keeps a reference model of the books (price levels), writes random but
// valid feed messages that describe its changes, and acts as the client's
// Recoverer (retransmission from a bounded window, snapshots of the model).
type scriptFeed struct {
	t       testing.TB
	rng     *rand.Rand
	b       *packet.Builder
	out     [][]byte // packets written by the last step
	packets [][]byte // every sequenced packet, in order
	books   map[uint32]*modelBook
	timeNs  int64

	windowPackets  int  // retransmission keeps this many recent packets
	failRetransmit bool // the exchange fails (network error)
	failSnapshot   bool
	retransmits    int
	snapshots      int
}

type modelBook struct {
	id                   uint32
	bids, asks           []Level
	rptSeq               uint64
	status               mdsbe.TradingStatus
	lastPx, lastQty, vol int64
}

var scriptInstruments = []uint32{1, 2, 3}

func newScriptFeed(t testing.TB, seed uint64) *scriptFeed {
	f := &scriptFeed{t: t, rng: rand.New(rand.NewPCG(seed, 99)), books: map[uint32]*modelBook{},
		timeNs: 1_700_000_000_000_000_000, windowPackets: 1 << 30}
	b, err := packet.NewBuilder(packet.BuilderConfig{Channel: ChannelDefault, Sequenced: true, Sink: f})
	if err != nil {
		t.Fatal(err)
	}
	f.b = b
	for _, id := range scriptInstruments {
		f.books[id] = &modelBook{id: id, status: mdsbe.TradingStatusOpen}
	}
	return f
}

// WritePacket implements packet.Sink.
func (f *scriptFeed) WritePacket(pkt []byte, _ uint64, _ int) error {
	p := append([]byte(nil), pkt...)
	f.out = append(f.out, p)
	f.packets = append(f.packets, p)
	return nil
}

func (f *scriptFeed) nextSeq() uint64 { return f.b.NextSeq() }

// step writes 1 to 12 random messages and returns the packets completed.
func (f *scriptFeed) step() [][]byte {
	f.out = f.out[:0]
	f.timeNs += 1000
	for n := 1 + f.rng.IntN(12); n > 0; n-- {
		f.randomMessage()
	}
	if err := f.b.Flush(); err != nil {
		f.t.Fatal(err)
	}
	return append([][]byte(nil), f.out...)
}

// bookMessage writes a message of type *M, length bytes, about mb's
// instrument and numbered with its rptSeq; set writes the rest.
func bookMessage[M any, P interface {
	*M
	WrapEncode(buf []byte, off int) error
	SetInstrumentID(uint32)
	SetRptSeq(uint64)
}](f *scriptFeed, length int, mb *modelBook, set func(P)) {
	buf, off, err := f.b.Reserve(length, f.timeNs)
	if err != nil {
		f.t.Fatal(err)
	}
	m := P(new(M))
	if err := m.WrapEncode(buf, off); err != nil {
		f.t.Fatal(err)
	}
	m.SetInstrumentID(mb.id)
	m.SetRptSeq(mb.rptSeq)
	set(m)
}

func (f *scriptFeed) randomMessage() {
	mb := f.books[scriptInstruments[f.rng.IntN(len(scriptInstruments))]]
	mb.rptSeq++
	switch r := f.rng.IntN(100); {
	case r < 8:
		f.trade(mb)
	case r < 10:
		mb.status = mdsbe.TradingStatus(1 + f.rng.IntN(3))
		bookMessage(f, mdsbe.InstrumentStatusEncodedLength, mb, func(m *mdsbe.InstrumentStatus) { m.SetStatus(mb.status) })
	case r < 25:
		bookMessage(f, mdsbe.OrderAddedEncodedLength, mb, func(m *mdsbe.OrderAdded) {
			m.SetSide(mdsbe.SideBuy)
			m.SetOrderID(uint64(f.rng.IntN(1000)))
		})
	default:
		f.levelUpdate(mb)
	}
}

func (f *scriptFeed) trade(mb *modelBook) {
	mb.lastPx, mb.lastQty = int64(100+f.rng.IntN(100)), int64(1+f.rng.IntN(50))
	mb.vol += mb.lastQty
	bookMessage(f, mdsbe.TradeEncodedLength, mb, func(m *mdsbe.Trade) {
		m.SetAggressorSide(mdsbe.SideSell)
		m.SetTradeID(uint64(mb.rptSeq))
		m.SetPriceTicks(mb.lastPx)
		m.SetQty(mb.lastQty)
		m.SetVolume(mb.vol)
	})
}

// levelUpdate changes one level of the model and publishes it.
func (f *scriptFeed) levelUpdate(mb *modelBook) {
	side, levels, bid := mdsbe.SideBuy, &mb.bids, true
	if f.rng.IntN(2) == 1 {
		side, levels, bid = mdsbe.SideSell, &mb.asks, false
	}
	ls := *levels
	var action mdsbe.UpdateAction
	var i int
	r := f.rng.IntN(100)
	switch {
	case len(ls) == 0 || r < 40:
		px := int64(100 + f.rng.IntN(100))
		if !bid {
			px += 200 // asks above bids: the book never crosses
		}
		for i = 0; i < len(ls) && better(bid, ls[i].PriceTicks, px); i++ {
		}
		if i < len(ls) && ls[i].PriceTicks == px {
			action = mdsbe.UpdateActionChange
		} else {
			action = mdsbe.UpdateActionNew
			ls = append(ls, Level{})
			copy(ls[i+1:], ls[i:])
		}
		count := 1 + f.rng.IntN(4)
		ls[i] = Level{PriceTicks: px, Qty: int64(count + f.rng.IntN(100)), OrderCount: count}
	case r < 70:
		i = f.rng.IntN(len(ls))
		action = mdsbe.UpdateActionChange
		count := 1 + f.rng.IntN(4)
		ls[i].Qty, ls[i].OrderCount = int64(count+f.rng.IntN(100)), count
	default:
		i = f.rng.IntN(len(ls))
		action = mdsbe.UpdateActionDelete
	}
	bookMessage(f, mdsbe.PriceLevelUpdateEncodedLength, mb, func(m *mdsbe.PriceLevelUpdate) {
		m.SetSide(side)
		m.SetAction(action)
		m.SetLevelNum(uint32(i + 1))
		m.SetPriceTicks(ls[i].PriceTicks)
		if action != mdsbe.UpdateActionDelete {
			m.SetQty(ls[i].Qty)
			m.SetOrderCount(uint32(ls[i].OrderCount))
		}
	})
	if action == mdsbe.UpdateActionDelete {
		ls = append(ls[:i], ls[i+1:]...)
	}
	*levels = ls
}

// heartbeat returns an unsequenced heartbeat packet.
func (f *scriptFeed) heartbeat() []byte {
	var out []byte
	sink := sinkFunc(func(pkt []byte) { out = append([]byte(nil), pkt...) })
	b, _ := packet.NewBuilder(packet.BuilderConfig{Channel: ChannelDefault, Sink: sink})
	buf, off, _ := b.Reserve(mdsbe.HeartbeatEncodedLength, f.timeNs)
	var m mdsbe.Heartbeat
	_ = m.WrapEncode(buf, off)
	m.SetNextSeq(f.nextSeq())
	_ = b.Flush()
	return out
}

type sinkFunc func(pkt []byte)

func (s sinkFunc) WritePacket(pkt []byte, _ uint64, _ int) error { s(pkt); return nil }

// Retransmit implements Recoverer from the packets kept.
func (f *scriptFeed) Retransmit(fromSeq uint64, count uint32, fn func([]byte) error) (mdsbe.RetransmitRejectReason, error) {
	f.retransmits++
	if f.failRetransmit {
		return 0, errScripted
	}
	oldest := len(f.packets) - f.windowPackets
	if oldest < 0 {
		oldest = 0
	}
	if oldest >= len(f.packets) || fromSeq < seqOf(f.packets[oldest]) {
		return mdsbe.RetransmitRejectReasonTooOld, nil
	}
	end := fromSeq + uint64(count)
	if end > f.nextSeq() {
		return mdsbe.RetransmitRejectReasonInvalidRange, nil
	}
	for _, p := range f.packets[oldest:] {
		first := seqOf(p)
		last := first + uint64(binary.LittleEndian.Uint16(p[2:]))
		if last > fromSeq && first < end {
			if err := fn(p); err != nil {
				return 0, err
			}
		}
	}
	return 0, nil
}

func seqOf(pkt []byte) uint64 { return binary.LittleEndian.Uint64(pkt[8:]) }

type scriptError string

func (e scriptError) Error() string { return string(e) }

const errScripted = scriptError("scripted recovery failure")

// Snapshot implements Recoverer: the model as the real service encodes it,
// one order per unit of orderCount.
func (f *scriptFeed) Snapshot(id uint32, fn func([]byte) error) (mdsbe.SnapshotRejectReason, error) {
	f.snapshots++
	if f.failSnapshot {
		return 0, errScripted
	}
	var pkts [][]byte
	sink := sinkFunc(func(pkt []byte) { pkts = append(pkts, append([]byte(nil), pkt...)) })
	b, _ := packet.NewBuilder(packet.BuilderConfig{Channel: ChannelDefault, BytesMax: 16 << 10, Sink: sink})
	lastSeq := f.nextSeq() - 1
	put := func(n int) (buf []byte, off int) {
		buf, off, err := b.Reserve(n, f.timeNs)
		if err != nil {
			f.t.Fatal(err)
		}
		return buf, off
	}
	buf, off := put(mdsbe.SnapshotStartEncodedLength)
	var st mdsbe.SnapshotStart
	_ = st.WrapEncode(buf, off)
	st.SetLastSeq(lastSeq)
	st.SetInstrumentCount(uint32(len(scriptInstruments)))
	for _, iid := range scriptInstruments {
		mb := f.books[iid]
		buf, off = put(mdsbe.InstrumentDefinitionEncodedLength)
		var d mdsbe.InstrumentDefinition
		_ = d.WrapEncode(buf, off)
		d.SetInstrumentID(iid)
		d.SetTickMantissa(5)
		d.SetTickExponent(-2)
		d.SetStatus(mb.status)
		_ = d.SetSymbolString("SYM" + string(rune('0'+iid)))
		type entry struct {
			side    mdsbe.Side
			px, qty int64
		}
		var entries []entry
		for _, s := range []struct {
			side   mdsbe.Side
			levels []Level
		}{{mdsbe.SideBuy, mb.bids}, {mdsbe.SideSell, mb.asks}} {
			for _, l := range s.levels {
				for k := 0; k < l.OrderCount; k++ {
					q := int64(1)
					if k == 0 {
						q = l.Qty - int64(l.OrderCount-1)
					}
					entries = append(entries, entry{s.side, l.PriceTicks, q})
				}
			}
		}
		buf, off = put(mdsbe.SnapshotEntriesEncodedLength + len(entries)*mdsbe.SnapshotEntriesEntriesBlockLength)
		var m mdsbe.SnapshotEntries
		_ = m.WrapEncode(buf, off)
		m.SetInstrumentID(iid)
		m.SetStatus(mb.status)
		m.SetRptSeq(mb.rptSeq)
		m.SetLastTradePriceTicks(mb.lastPx)
		m.SetLastTradeQty(mb.lastQty)
		m.SetVolume(mb.vol)
		g, err := m.EntriesCount(len(entries))
		if err != nil {
			f.t.Fatal(err)
		}
		for i, e := range entries {
			en := g.Entry(i)
			en.SetOrderID(uint64(i + 1))
			en.SetSide(e.side)
			en.SetPriceTicks(e.px)
			en.SetQty(e.qty)
		}
	}
	buf, off = put(mdsbe.SnapshotEndEncodedLength)
	var end mdsbe.SnapshotEnd
	_ = end.WrapEncode(buf, off)
	end.SetLastSeq(lastSeq)
	_ = b.Flush()
	for _, p := range pkts {
		if err := fn(p); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

func (f *scriptFeed) Close() error { return nil }

// compareModel fails unless the client's books equal the model.
func compareModel(t testing.TB, c *Client, f *scriptFeed) {
	t.Helper()
	if c.NextSeq() != f.nextSeq() {
		t.Fatalf("client at seq %d, feed at %d (stats %+v)", c.NextSeq(), f.nextSeq(), c.Stats())
	}
	for _, id := range scriptInstruments {
		mb, b := f.books[id], c.Book(id)
		if b == nil {
			if mb.rptSeq != 0 {
				t.Fatalf("no book for instrument %d", id)
			}
			continue
		}
		if b.RptSeq != mb.rptSeq || b.Status != mb.status || b.Volume != mb.vol || b.LastTradeQty != mb.lastQty ||
			b.LastTradePriceTicks != mb.lastPx {
			t.Fatalf("instrument %d: client %+v model %+v", id, *b, *mb)
		}
		if !equalLevels(b.Bids, mb.bids) || !equalLevels(b.Asks, mb.asks) {
			t.Fatalf("instrument %d levels:\nclient %v %v\nmodel  %v %v", id, b.Bids, b.Asks, mb.bids, mb.asks)
		}
	}
}

func equalLevels(a, b []Level) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// fakeClock is a settable clock for gap timers.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) advance(d time.Duration) { c.now = c.now.Add(d) }
