package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestRefusedOnReplayCountsTermsRefusals: the start's count takes the new
// orders refused for a reason the configured terms decide, by instrument
// (an added instrument by its symbol, an unknown one by its id), names
// only the first refusedListed of them, and leaves out refusals the terms
// do not decide (a duplicate ClOrdID refuses the same under any terms).
func TestRefusedOnReplayCountsTermsRefusals(t *testing.T) {
	r := newRefusedOnReplay(testConfig(t, t.TempDir(), ""))
	var added venue.InstrumentAdded
	ev := make([]byte, 512)
	if err := added.WrapEncode(ev, 0); err != nil {
		t.Fatal(err)
	}
	added.SetInstrumentID(9)
	if err := added.SetSymbol([]byte("NEWCO")); err != nil {
		t.Fatal(err)
	}
	r.Event(ev)
	reject := func(seq uint64, session uint16, instr uint32, reason venue.RejectReason) {
		var o venue.OrderRejected
		b := make([]byte, venue.OrderRejectedEncodedLength)
		if err := o.WrapEncode(b, 0); err != nil {
			t.Fatal(err)
		}
		o.SetCauseSeq(seq)
		o.SetSessionIdx(session)
		o.SetInstrumentID(instr)
		o.SetReason(reason)
		if err := o.SetClOrdID([]byte(fmt.Sprintf("c%d", seq))); err != nil {
			t.Fatal(err)
		}
		r.Event(b)
	}
	for seq := range uint64(refusedListed + 5) {
		reject(seq, 1, 1, venue.RejectReasonPriceOutOfBand)
	}
	reject(100, 0, 9, venue.RejectReasonQtyNotLotMultiple)
	reject(101, 0, 77, venue.RejectReasonUnknownInstrument)
	reject(102, 0, 1, venue.RejectReasonDuplicateClOrdID)
	reject(103, 0, 2, venue.RejectReasonInstrumentHalted)
	if r.total != refusedListed+7 || r.byInstr["ACME"] != refusedListed+5 || r.byInstr["NEWCO"] != 1 || r.byInstr["id 77"] != 1 ||
		len(r.byInstr) != 3 {
		t.Fatalf("counted %d, by instrument %v", r.total, r.byInstr)
	}
	info := r.info()
	if len(info.First) != refusedListed || info.First[0] != "seq 0 CLIENT2 ClOrdID c0 ACME PriceOutOfBand" {
		t.Fatalf("named: %q", info.First)
	}
	if strings.Contains(strings.Join(info.First, ";"), "c100") {
		t.Fatalf("named past the first %d: %q", refusedListed, info.First)
	}
	if (*refusedOnReplay)(nil).info() != nil || newRefusedOnReplay(testConfig(t, t.TempDir(), "")).info() != nil {
		t.Fatal("a start that refused nothing reports refusals")
	}
}
