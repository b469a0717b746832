package marketdata

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/marketdata/packet"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// seqMessages collects each sequenced message with its number.
type seqMessages struct{ bySeq map[uint64][]byte }

func (c *seqMessages) WritePacket(pkt []byte, _ uint64, _ int) error {
	var r packet.Reader
	if err := r.Reset(pkt); err != nil {
		return err
	}
	seq := r.Seq
	for msg, ok := r.Next(); ok; msg, ok = r.Next() {
		c.bySeq[seq] = append([]byte(nil), msg...)
		seq++
	}
	return nil
}

func newStateTracker(t *testing.T) (*Tracker, *packet.Builder, *seqMessages) {
	t.Helper()
	out := &seqMessages{bySeq: map[uint64][]byte{}}
	b, err := packet.NewBuilder(packet.BuilderConfig{Channel: 1, Sequenced: true, Sink: out})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTracker(TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024}, b)
	if err != nil {
		t.Fatal(err)
	}
	return tr, b, out
}

// TestStateContinuesTheFeed saves a tracker's state at several command
// boundaries of a random stream, restores it into a fresh tracker, and
// feeds both the rest of the stream: every later message, with its
// sequence number, and the final books and statistics must be the same.
func TestStateContinuesTheFeed(t *testing.T) {
	events := recordEvents(t, 91, 4000)
	for _, cut := range []int{1, len(events) / 3, len(events) / 2, len(events) - 1} {
		// Cut on a command boundary: the next event starts another command.
		for cut < len(events)-1 && venue.CauseSeqOf(events[cut]) == venue.CauseSeqOf(events[cut-1]) {
			cut++
		}
		full, fullB, fullOut := newStateTracker(t)
		var state bytes.Buffer
		var stateSeq uint64
		for i, ev := range events {
			if i == cut {
				if err := full.EndCommand(); err != nil {
					t.Fatal(err)
				}
				stateSeq = fullB.NextSeq()
				if err := full.writeState(&state, stateSeq); err != nil {
					t.Fatal(err)
				}
			}
			if err := full.Apply(ev); err != nil {
				t.Fatal(err)
			}
		}
		restored, rb, restoredOut := newStateTracker(t)
		next, err := restored.readState(bytes.NewReader(state.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if next != stateSeq {
			t.Fatalf("cut %d: restored next seq %d, saved %d", cut, next, stateSeq)
		}
		if err := rb.Restart(next); err != nil {
			t.Fatal(err)
		}
		for _, ev := range events[cut:] {
			if err := restored.Apply(ev); err != nil {
				t.Fatalf("cut %d: %v", cut, err)
			}
		}
		for _, tr := range []*Tracker{full, restored} {
			if err := tr.EndCommand(); err != nil {
				t.Fatal(err)
			}
		}
		_ = fullB.Flush()
		_ = rb.Flush()
		if fullB.NextSeq() != rb.NextSeq() || len(restoredOut.bySeq) != int(rb.NextSeq()-stateSeq) {
			t.Fatalf("cut %d: next seq %d vs %d, %d messages after the state", cut, fullB.NextSeq(), rb.NextSeq(), len(restoredOut.bySeq))
		}
		for seq, msg := range restoredOut.bySeq {
			if !bytes.Equal(msg, fullOut.bySeq[seq]) {
				t.Fatalf("cut %d: message %d differs after the restore", cut, seq)
			}
		}
		var again bytes.Buffer
		if err := restored.writeState(&again, rb.NextSeq()); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := full.writeState(&want, fullB.NextSeq()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Bytes(), want.Bytes()) {
			t.Fatalf("cut %d: the final states differ", cut)
		}
	}
}

// TestStateRefusesDamage: a truncated state, trailing bytes, another
// configuration's instruments and a tracker that already holds orders are
// all refused.
func TestStateRefusesDamage(t *testing.T) {
	tr, b, _ := newStateTracker(t)
	for _, ev := range recordEvents(t, 5, 300) {
		if err := tr.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.EndCommand(); err != nil {
		t.Fatal(err)
	}
	var state bytes.Buffer
	if err := tr.writeState(&state, b.NextSeq()); err != nil {
		t.Fatal(err)
	}
	good := state.Bytes()
	if tr.index.count == 0 {
		t.Fatal("no resting order: the test checks nothing")
	}
	cases := map[string][]byte{
		"truncated":     good[:len(good)-5],
		"trailing":      append(append([]byte(nil), good...), 0),
		"magic":         append([]byte("XXXXXXXX"), good[8:]...),
		"instrument id": func() []byte { c := append([]byte(nil), good...); c[36]++; return c }(),
	}
	for name, bad := range cases {
		fresh, _, _ := newStateTracker(t)
		if _, err := fresh.readState(bytes.NewReader(bad)); !errors.Is(err, ErrBadState) {
			t.Errorf("%s: err = %v, want ErrBadState", name, err)
		}
	}
	if _, err := tr.readState(bytes.NewReader(good)); err == nil {
		t.Error("restore into a tracker that holds orders was accepted")
	}
}

// FuzzReadState: a feed state file of any bytes is refused or loaded, never
// a panic, and a loaded one writes back to the same bytes.
func FuzzReadState(f *testing.F) {
	tr, b, _ := newStateTracker(&testing.T{})
	for _, ev := range recordEvents(&testing.T{}, 3, 200) {
		_ = tr.Apply(ev)
	}
	_ = tr.EndCommand()
	var good bytes.Buffer
	_ = tr.writeState(&good, b.NextSeq())
	f.Add(good.Bytes())
	f.Add(stateAsVersion05(&testing.T{}, good.Bytes(), len(simTrackerDefs())))
	f.Add([]byte(stateMagic))
	f.Fuzz(func(t *testing.T, state []byte) {
		fresh, _, _ := newStateTracker(t)
		next, err := fresh.readState(bytes.NewReader(state))
		if err != nil {
			return
		}
		var again bytes.Buffer
		if err := fresh.writeState(&again, next); err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(state, []byte(stateMagic)) {
			if !bytes.Equal(again.Bytes(), state) {
				t.Fatalf("a loaded state writes back differently (%d bytes, was %d)", again.Len(), len(state))
			}
			return
		}
		// An older version writes back in the current one, which loads
		// and writes back the same.
		upgraded, _, _ := newStateTracker(t)
		if _, err := upgraded.readState(bytes.NewReader(again.Bytes())); err != nil {
			t.Fatalf("an older state writes back one this build refuses: %v", err)
		}
		var third bytes.Buffer
		if err := upgraded.writeState(&third, next); err != nil || !bytes.Equal(third.Bytes(), again.Bytes()) {
			t.Fatalf("an upgraded state writes back differently (%v)", err)
		}
	})
}

// TestStateKeepsTheIndicative: a state saved during a call keeps the call's
// last indicative uncross, which FIX market data serves (269=A); without it
// a start from a snapshot showed none until the book changed the result.
func TestStateKeepsTheIndicative(t *testing.T) {
	s := newScenario(t)
	s.status(venue.TradingStatusOpeningCall)
	s.order(venue.SideBuy, 1010, 5, venue.TimeInForceDay)
	s.order(venue.SideSell, 1000, 3, venue.TimeInForceDay)
	if err := s.tr.EndCommand(); err != nil {
		t.Fatal(err)
	}
	want, err := s.tr.State(1)
	if err != nil || !want.Indicative.Active || want.Indicative.MatchedQty != 3 {
		t.Fatalf("no indicative in the call: %+v, %v", want.Indicative, err)
	}
	var state bytes.Buffer
	if err := s.tr.writeState(&state, 1); err != nil {
		t.Fatal(err)
	}
	restored, _, _ := newStateTracker(t)
	if _, err := restored.readState(bytes.NewReader(state.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got, _ := restored.State(1); got.Indicative != want.Indicative {
		t.Fatalf("restored indicative %+v, want %+v", got.Indicative, want.Indicative)
	}
}

// TestStateReadsVersion04: a state of the version before the refills'
// public ids (a feed that showed a refill under the order's OrderID) loads
// with every order under its OrderID, as receivers saw it, and the refill
// count at 0, so the next refill takes RefillIDBase+1; it writes back in
// the current version. A current state whose public ids are not among those
// handed out, or an old one that claims one, is refused.
func TestStateReadsVersion04(t *testing.T) {
	s := newScenario(t)
	s.record = true
	s.iceberg(venue.SideSell, 1005, 10, 3)
	s.order(venue.SideSell, 1006, 4, venue.TimeInForceDay)
	var state bytes.Buffer
	if err := s.tr.writeState(&state, 7); err != nil {
		t.Fatal(err)
	}
	cur := state.Bytes()
	// Version 04 is version 05 without the refill count (and, here, with
	// no order refilled).
	old := append([]byte(stateMagic04), stateAsVersion05(t, cur, len(simTrackerDefs()))[8:24]...)
	old = append(old, stateAsVersion05(t, cur, len(simTrackerDefs()))[32:]...)
	restored, b, out := newStateTracker(t)
	next, err := restored.readState(bytes.NewReader(old))
	if err != nil || next != 7 {
		t.Fatalf("version 04: next %d, %v", next, err)
	}
	var again bytes.Buffer
	if err := restored.writeState(&again, next); err != nil || !bytes.Equal(again.Bytes(), cur) {
		t.Fatalf("a version 04 state writes back differently (%v)", err)
	}
	if err := b.Restart(next); err != nil {
		t.Fatal(err)
	}
	// A buy of the iceberg's whole slice: the refill takes the first id.
	cut := len(s.events)
	s.order(venue.SideBuy, 1005, 3, venue.TimeInForceDay)
	for _, ev := range s.events[cut:] {
		if err := restored.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := restored.EndCommand(); err != nil {
		t.Fatal(err)
	}
	_ = b.Flush()
	var added []string
	for seq := next; seq < b.NextSeq(); seq++ {
		if d := describe(out.bySeq[seq]); strings.HasPrefix(d, "added") {
			added = append(added, d)
		}
	}
	if want := fmt.Sprintf("added #%d Sell 3@1005", uint64(RefillIDBase)+1); len(added) != 1 || !strings.HasPrefix(added[0], want) {
		t.Fatalf("after a version 04 state the refill is %v, want %s", added, want)
	}

	var refilled bytes.Buffer
	if err := restored.writeState(&refilled, b.NextSeq()); err != nil {
		t.Fatal(err)
	}
	good := refilled.Bytes()
	// The refilled slice is the first ask of the first instrument: its
	// flags follow the header (36 bytes), the instrument's own 65, the
	// bids' count and the asks' and the slice's id, price and quantity.
	flagsAt := 36 + 65 + 4 + 4 + 24
	if good[flagsAt] != stateFlagIceberg|stateFlagRefilled {
		t.Fatalf("flags %#x at %d: the test reads the wrong byte", good[flagsAt], flagsAt)
	}
	for name, bad := range map[string][]byte{
		"public id not handed out": func() []byte { c := bytes.Clone(good); c[flagsAt+1]++; return c }(),
		"public id below the refills'": func() []byte {
			c := bytes.Clone(good)
			binary.LittleEndian.PutUint64(c[flagsAt+1:], uint64(RefillIDBase))
			return c
		}(),
		"public id in version 04": func() []byte {
			v05 := stateAsVersion05(t, good, len(simTrackerDefs()))
			return append(append([]byte(stateMagic04), v05[8:24]...), v05[32:]...)
		}(),
	} {
		fresh, _, _ := newStateTracker(t)
		if _, err := fresh.readState(bytes.NewReader(bad)); !errors.Is(err, ErrBadState) {
			t.Errorf("%s: err = %v, want ErrBadState", name, err)
		}
	}
}

// stateAsVersion05 returns a current state as version 05 wrote it: without
// each indicative's phase. configured is how many instruments the tracker
// was configured with (those after are added ones, with their definition).
func stateAsVersion05(t testing.TB, cur []byte, configured int) []byte {
	t.Helper()
	const header = 36
	if len(cur) < header || string(cur[:8]) != stateMagic {
		t.Fatalf("not a version %s state", stateMagic[6:])
	}
	old := append([]byte(stateMagic05), cur[8:header]...)
	at := header
	take := func(n int) []byte {
		if at+n > len(cur) {
			t.Fatalf("state truncated at %d", at)
		}
		at += n
		return cur[at-n : at]
	}
	n := int(binary.LittleEndian.Uint32(cur[header-4:]))
	for i := 0; i < n; i++ {
		if i >= configured {
			old = append(old, take(16+8+1+8+1+4)...) // the added instrument's definition
		}
		// id, status, rptSeq, last trade, volume and the indicative without
		// its phase, which the next byte is.
		old = append(old, take(4+1+8+8+8+8+1+8+8+1+8+1)...)
		take(1)
		for range 2 {
			count := take(4)
			old = append(old, count...)
			for k := uint32(0); k < binary.LittleEndian.Uint32(count); k++ {
				o := take(8 + 8 + 8 + 1)
				old = append(old, o...)
				if o[24]&stateFlagRefilled != 0 {
					old = append(old, take(8)...)
				}
			}
		}
	}
	if at != len(cur) {
		t.Fatalf("%d bytes after the last instrument", len(cur)-at)
	}
	return old
}

// TestStateReadsVersion05: a state of the version before the indicative's
// phase loads with the phase taken from the instrument's status, which the
// feed that wrote it put in a snapshot, and writes back in the current
// version; outside a call it is the same state less the phases. An
// indicative whose phase is not a status, a phase without an indicative,
// and an old indicative on an instrument whose status is none, are refused.
func TestStateReadsVersion05(t *testing.T) {
	tc := callPhaseCases[0] // a closing call extended into a volatility auction
	s := newScenarioOf(t, tc.instrument())
	tc.run(s)
	var state bytes.Buffer
	if err := s.tr.writeState(&state, 9); err != nil {
		t.Fatal(err)
	}
	cur := state.Bytes()
	old := stateAsVersion05(t, cur, len(simTrackerDefs()))
	if len(old) != len(cur)-len(simTrackerDefs()) {
		t.Fatalf("version 05 is %d bytes, current %d", len(old), len(cur))
	}
	restored, _, _ := newStateTracker(t)
	next, err := restored.readState(bytes.NewReader(old))
	if err != nil || next != 9 {
		t.Fatalf("version 05: next %d, %v", next, err)
	}
	want, _ := s.tr.State(1)
	want.Indicative.Phase = venue.TradingStatusVolatilityAuction // the status, as that feed snapshot it
	if got, _ := restored.State(1); got.Indicative != want.Indicative {
		t.Fatalf("version 05 indicative %+v, want %+v", got.Indicative, want.Indicative)
	}
	var again bytes.Buffer
	if err := restored.writeState(&again, next); err != nil {
		t.Fatal(err)
	}
	if back := stateAsVersion05(t, again.Bytes(), len(simTrackerDefs())); !bytes.Equal(back, old) {
		t.Fatal("a version 05 state writes back other than with a phase added")
	}

	// The phase is the indicative's last byte: it follows the header, the
	// instrument's id, status, rptSeq, last trade, volume and the rest of
	// the indicative.
	phaseAt := 36 + 64
	if cur[phaseAt] != byte(venue.TradingStatusClosingCall) {
		t.Fatalf("phase %d at %d: the test reads the wrong byte", cur[phaseAt], phaseAt)
	}
	statusAt := 36 + 4
	quiet, _, _ := newStateTracker(t)
	var none bytes.Buffer
	if err := quiet.writeState(&none, 1); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"phase not a status":          func() []byte { c := bytes.Clone(cur); c[phaseAt] = 0; return c }(),
		"phase without an indicative": func() []byte { c := bytes.Clone(none.Bytes()); c[phaseAt] = 5; return c }(),
		"version 05 with no status": func() []byte {
			c := bytes.Clone(cur)
			c[statusAt] = 0
			return stateAsVersion05(t, c, len(simTrackerDefs()))
		}(),
	} {
		fresh, _, _ := newStateTracker(t)
		if _, err := fresh.readState(bytes.NewReader(bad)); !errors.Is(err, ErrBadState) {
			t.Errorf("%s: err = %v, want ErrBadState", name, err)
		}
	}
}
