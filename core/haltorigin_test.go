package core

import (
	"bytes"
	"errors"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// haltOriginMatcher is propertyConfigs()[0]'s matcher (AAA 1 and BBB 2
// open, CCC 7 in its opening call) after an operator closed BBB and halted
// every instrument: each halted from where it was.
func haltOriginMatcher(t *testing.T) *Matcher {
	t.Helper()
	m, err := NewMatcher(propertyConfigs()[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range []operatorArgs{
		{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusClosed, instrument: 2},
		{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusHalted},
	} {
		a.seq = uint64(i + 1)
		if r, _ := operatorResult(t, m, a); r.Reason() != venue.RejectReasonNone {
			t.Fatalf("%+v: %s", a, r.Reason())
		}
	}
	return m
}

// wantHaltedFrom checks the status each instrument's halt interrupted (0:
// none known).
func wantHaltedFrom(t *testing.T, m *Matcher, when string, want map[uint32]venue.TradingStatus) {
	t.Helper()
	for id, w := range want {
		got, ok := m.HaltedFrom(id)
		if ok != (w != 0) || got != w {
			t.Errorf("%s: instrument %d halted from %v (known %v), want %v", when, id, got, ok, w)
		}
	}
}

// TestHaltRemembersWhereItWas: a halt keeps the status it interrupts, the
// closed instrument's Closed among them, so that a resume returns it there
// rather than opening it; a phase change that passes over the halt makes
// it forget (the group's phase says where it would be then), and leaving
// the halt does too. It changes no event: only the snapshot holds it.
func TestHaltRemembersWhereItWas(t *testing.T) {
	m := haltOriginMatcher(t)
	wantHaltedFrom(t, m, "halted", map[uint32]venue.TradingStatus{1: venue.TradingStatusOpen, 2: venue.TradingStatusClosed,
		7: venue.TradingStatusOpeningCall})
	seq := uint64(10)
	do := func(a operatorArgs, want venue.RejectReason) {
		t.Helper()
		a.seq, seq = seq, seq+1
		if r, _ := operatorResult(t, m, a); r.Reason() != want {
			t.Fatalf("%+v: %s, want %s", a, r.Reason(), want)
		}
	}
	// A halt of a halted instrument is refused and keeps the first's.
	do(operatorArgs{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusHalted, instrument: 2},
		venue.RejectReasonInvalidTransition)
	wantHaltedFrom(t, m, "halted again", map[uint32]venue.TradingStatus{2: venue.TradingStatusClosed})

	// A phase change of one instrument that leaves it halted.
	do(operatorArgs{action: venue.OperatorActionTypeSetPhaseStatus, status: venue.TradingStatusOpen, instrument: 1},
		venue.RejectReasonInstrumentHalted)
	wantHaltedFrom(t, m, "a phase change of AAA", map[uint32]venue.TradingStatus{1: 0, 2: venue.TradingStatusClosed,
		7: venue.TradingStatusOpeningCall})

	// Lifting the halt to where it was forgets it.
	do(operatorArgs{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusClosed, instrument: 2},
		venue.RejectReasonNone)
	if st, _ := m.TradingStatus(2); st != venue.TradingStatusClosed {
		t.Fatalf("BBB resumed to %v", st)
	}
	wantHaltedFrom(t, m, "BBB resumed", map[uint32]venue.TradingStatus{2: 0})

	// Halted again from Closed; then a phase change of every instrument,
	// which changes none of them (all halted), passes over every halt.
	do(operatorArgs{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusHalted, instrument: 2},
		venue.RejectReasonNone)
	wantHaltedFrom(t, m, "BBB halted again", map[uint32]venue.TradingStatus{2: venue.TradingStatusClosed})
	do(operatorArgs{action: venue.OperatorActionTypeSetPhaseStatus, status: venue.TradingStatusClosed},
		venue.RejectReasonInvalidTransition)
	wantHaltedFrom(t, m, "a phase change of all", map[uint32]venue.TradingStatus{1: 0, 2: 0, 7: 0})
}

// TestHaltOriginSnapshot: the status a halt interrupted survives a
// snapshot (version 8), so that a venue restarted from it resumes a
// closed instrument to Closed as the one stopped would have; a version 7
// snapshot, which did not keep it, still loads, every halt's origin not
// known (a resume then goes where it went before it was kept), and a
// snapshot that gives one to an instrument that is not halted is refused.
func TestHaltOriginSnapshot(t *testing.T) {
	m := haltOriginMatcher(t)
	snap := snapshotOf(t, m)
	r, err := NewMatcher(propertyConfigs()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ReadSnapshot(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	wantHaltedFrom(t, r, "restored", map[uint32]venue.TradingStatus{1: venue.TradingStatusOpen, 2: venue.TradingStatusClosed,
		7: venue.TradingStatusOpeningCall})
	if !bytes.Equal(snapshotOf(t, r), snap) {
		t.Fatal("the restored matcher writes another snapshot")
	}

	var v7 bytes.Buffer
	if err := m.writeSnapshot(&v7, snapshotVersionNoHaltOrigin); err != nil {
		t.Fatal(err)
	}
	if len(snap)-v7.Len() != len(propertyConfigs()[0].Instruments) {
		t.Fatalf("version 7 is %d bytes, version 8 %d: not a byte per instrument less", v7.Len(), len(snap))
	}
	old, err := NewMatcher(propertyConfigs()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := old.ReadSnapshot(bytes.NewReader(v7.Bytes())); err != nil {
		t.Fatalf("version 7: %v", err)
	}
	wantHaltedFrom(t, old, "restored from version 7", map[uint32]venue.TradingStatus{1: 0, 2: 0, 7: 0})
	for _, id := range []uint32{1, 2, 7} {
		if st, _ := old.TradingStatus(id); st != venue.TradingStatusHalted {
			t.Errorf("version 7: instrument %d is %v, want Halted", id, st)
		}
	}
	var again bytes.Buffer
	if err := old.writeSnapshot(&again, snapshotVersionNoHaltOrigin); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), v7.Bytes()) {
		t.Fatal("version 7 read back writes other bytes")
	}

	// AAA open, remembering a halt from Closed: refused.
	open, err := NewMatcher(propertyConfigs()[0])
	if err != nil {
		t.Fatal(err)
	}
	open.instruments[0].haltedFrom = venue.TradingStatusClosed
	if err := open.CheckInvariants(); err == nil {
		t.Fatal("the invariants pass an open instrument remembering a halt")
	}
	bad := snapshotOf(t, open)
	if err := r.ReadSnapshot(bytes.NewReader(bad)); !errors.Is(err, ErrSnapshot) {
		t.Fatalf("an open instrument remembering a halt: %v, want ErrSnapshot", err)
	}
}
