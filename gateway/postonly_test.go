package gateway

import "testing"

// TestRejectEchoesRoundTrip: what is noted under a seq is read back under
// it, flags and values alike, and nothing under another seq of its slot.
func TestRejectEchoesRoundTrip(t *testing.T) {
	r := newRejectEchoes(4)
	cases := []orderEcho{
		{postOnly: true},
		{gtd: true, expireNs: -1},
		{stop: true, stopPxTicks: 10_050},
		{postOnly: true, gtd: true, expireNs: 1 << 62, stop: true, stopPxTicks: -3},
		{iceberg: true, maxFloorQty: 7},
		{postOnly: true, gtd: true, expireNs: 5, iceberg: true, maxFloorQty: 1 << 40},
	}
	for i, e := range cases {
		seq := uint64(1<<40 + i)
		r.note(seq, e)
		if got := r.get(seq); got != e {
			t.Errorf("seq %d: got %+v, want %+v", seq, got, e)
		}
		if got := r.get(seq + 4); got.noted() {
			t.Errorf("seq %d, the slot of %d: got %+v, want nothing", seq+4, seq, got)
		}
	}
	r.note(5, orderEcho{postOnly: true})
	if got := r.get(1); got.noted() {
		t.Errorf("seq 1 after seq 5 took its slot: got %+v", got)
	}
}
