package marketdata

import (
	"bytes"
	"errors"
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
		"instrument id": func() []byte { c := append([]byte(nil), good...); c[28]++; return c }(),
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
		if !bytes.Equal(again.Bytes(), state) {
			t.Fatalf("a loaded state writes back differently (%d bytes, was %d)", again.Len(), len(state))
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
