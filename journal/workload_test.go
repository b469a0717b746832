package journal_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// newMatcher is a matcher of matcherConfig, failing the test on error.
func newMatcher(t testing.TB) *core.Matcher {
	t.Helper()
	m, err := core.NewMatcher(matcherConfig())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// matcherConfig is a small venue: two instruments around 100.00.
func matcherConfig() core.Config {
	inst := func(id uint32, sym string) core.InstrumentConfig {
		return core.InstrumentConfig{ID: id, Symbol: sym, TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 1_000_000,
			RefPriceTicks: 10_000, BandPercent: 10}
	}
	return core.Config{OrdersMax: 20_000, ClOrdIDsMax: 200_000, SessionsMax: 8, LevelsPerSideMax: 4096,
		Instruments: []core.InstrumentConfig{inst(1, "AAA"), inst(2, "BBB")}}
}

// workload generates a deterministic stream of commands that trade,
// rest, cancel and replace, from a seed.
type workload struct {
	rng     *rand.Rand
	nextID  int
	ids     [8][]string // ClOrdIDs issued per session
	clockNs int64
}

func newWorkload(seed uint64) *workload {
	return &workload{rng: rand.New(rand.NewPCG(seed, 7)), clockNs: 1_780_000_000_000_000_000}
}

// next encodes command seq into buf and returns its bytes.
func (w *workload) next(t testing.TB, buf []byte, seq uint64) []byte {
	t.Helper()
	w.clockNs += int64(1 + w.rng.IntN(50_000))
	session := uint16(1 + w.rng.IntN(4))
	instrument := uint32(1 + w.rng.IntN(2))
	side := venue.SideBuy
	if w.rng.IntN(2) == 0 {
		side = venue.SideSell
	}
	o := cmdtest.Order{Seq: seq, TimestampNs: w.clockNs, Session: session, Instrument: instrument, Side: side}
	switch k := w.rng.IntN(100); {
	case k < 70 || len(w.ids[session]) == 0:
		if k < 5 {
			o.OrdType, o.TIF, o.Qty = venue.OrdTypeMarket, venue.TimeInForceIOC, int64(1+w.rng.IntN(100))
		} else {
			tif := venue.TimeInForceDay
			if k < 10 {
				tif = venue.TimeInForceIOC
			}
			w.setLimit(&o, tif)
		}
		o.ClOrdID, o.Account = w.newID(), fmt.Sprintf("acct%d", session)
		w.ids[session] = append(w.ids[session], o.ClOrdID)
		return cmdtest.NewOrder(t, buf, o)
	case k < 88:
		o.ClOrdID = w.newID()
		o.OrigClOrdID = w.pick(session)
		return cmdtest.Cancel(t, buf, o)
	case k < 97:
		w.setLimit(&o, venue.TimeInForceDay)
		o.ClOrdID, o.OrigClOrdID, o.Account = w.newID(), w.pick(session), fmt.Sprintf("acct%d", session)
		w.ids[session] = append(w.ids[session], o.ClOrdID)
		return cmdtest.Replace(t, buf, o)
	}
	return cmdtest.Encode(t, buf, func(m *venue.Tick) {
		m.SetSeq(seq)
		m.SetTimestampNs(w.clockNs)
	})
}

// setLimit makes o a limit order of tif at a random price near 100.00 for a
// random quantity.
func (w *workload) setLimit(o *cmdtest.Order, tif venue.TimeInForce) {
	o.OrdType, o.TIF = venue.OrdTypeLimit, tif
	o.PriceTicks = 10_000 + int64(w.rng.IntN(21)) - 10
	o.Qty = int64(1 + w.rng.IntN(100))
}

// machine applies commands: a core.Matcher, or a test's own state machine.
type machine interface {
	Apply(cmd []byte, sink core.EventSink) error
}

// applyAndAppend generates command seq into buf, applies it to m (its
// events into sink) and appends it to the journal j, as the venue does.
func (w *workload) applyAndAppend(t testing.TB, m machine, sink core.EventSink, j *journal.Writer, buf []byte, seq uint64) {
	t.Helper()
	cmd := w.next(t, buf, seq)
	if err := m.Apply(cmd, sink); err != nil {
		t.Fatalf("apply %d: %v", seq, err)
	}
	if err := j.Append(seq, cmd); err != nil {
		t.Fatal(err)
	}
}

// snapshotMachine is a machine that can write its state as a snapshot.
type snapshotMachine interface {
	machine
	WriteSnapshot(w io.Writer) error
}

// journalWithSnapshots journals n commands of workload seed into dir with
// cfg, applying each to m as it is generated (its events discarded), and
// after the command of each seq in snapAt makes the journal durable and
// writes m's snapshot: a snapshot is taken of durable commands only.
func journalWithSnapshots(t testing.TB, dir string, cfg journal.Config, m snapshotMachine, seed uint64, n int, snapAt ...uint64) {
	t.Helper()
	w := openWriter(t, dir, cfg)
	gen := newWorkload(seed)
	buf := make([]byte, 256)
	discard := core.NewBufferSink(64)
	for i := range uint64(n) {
		discard.Reset()
		gen.applyAndAppend(t, m, discard, w, buf, i)
		if slices.Contains(snapAt, i) {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if _, err := journal.WriteSnapshot(dir, i, m.WriteSnapshot, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// mustVerify is journal.Verify of dir with matcherConfig, failing the test
// on error.
func mustVerify(t testing.TB, dir string) journal.VerifyResult {
	t.Helper()
	res, err := journal.Verify(dir, matcherConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (w *workload) newID() string {
	w.nextID++
	return fmt.Sprintf("o%d", w.nextID)
}

func (w *workload) pick(session uint16) string {
	ids := w.ids[session]
	return ids[w.rng.IntN(len(ids))]
}

// writeWorkload journals n commands of workload seed into dir with cfg and
// returns the expected event hash, computed by applying the same commands
// to a matcher as they are generated.
func writeWorkload(t testing.TB, dir string, cfg journal.Config, seed uint64, n int) journal.VerifyResult {
	t.Helper()
	w := openWriter(t, dir, cfg)
	m := newMatcher(t)
	sink := journal.NewHashSink()
	gen := newWorkload(seed)
	buf := make([]byte, 256)
	for i := range n {
		gen.applyAndAppend(t, m, sink, w, buf, uint64(i))
		if i%64 == 63 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return journal.VerifyResult{Records: int64(n), LastSeq: int64(n) - 1, Events: sink.Events(),
		EventBytes: sink.Bytes(), EventsHash: sink.Sum64()}
}
