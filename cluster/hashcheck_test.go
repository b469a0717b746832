package cluster

import (
	"errors"
	"testing"
)

func TestHashCheckEitherOrder(t *testing.T) {
	h := NewHashCheck()
	if err := h.Own(10, 0xA); err != nil {
		t.Fatal(err)
	}
	if err := h.Leader(10, 0xA); err != nil {
		t.Fatal(err)
	}
	if err := h.Leader(20, 0xB); err != nil {
		t.Fatal(err)
	}
	if err := h.Own(20, 0xB); err != nil {
		t.Fatal(err)
	}
	if h.Checked.Load() != 2 {
		t.Fatalf("checked %d", h.Checked.Load())
	}
	if err := h.Leader(30, 0xC); err != nil {
		t.Fatal(err)
	}
	if err := h.Own(30, 0xD); !errors.Is(err, ErrDiverged) {
		t.Fatalf("mismatch: %v", err)
	}
	// Points whose partner never comes are dropped, oldest first.
	for seq := uint64(100); seq < 100+2*checkPointsMax; seq++ {
		_ = h.Own(seq, seq)
	}
	if len(h.own) > checkPointsMax {
		t.Fatalf("%d points held", len(h.own))
	}
	if _, _, ok, err := decodeCheck(EncodeCheck(7, 9)); !ok || err != nil {
		t.Fatal("check entry does not round-trip")
	}
	b := EncodeCheck(7, 9)
	b[12] ^= 1
	if _, _, ok, err := decodeCheck(b); !ok || err == nil {
		t.Fatal("a damaged check entry was accepted")
	}
}
