package fixclient

import (
	"errors"
	"fmt"
	"testing"
)

func TestBuildAndFrame(t *testing.T) {
	msg := Build(F(35, "D"), F(49, "A"), F(56, "B"), F(34, "2"), F(11, "x"))
	n, err := frameLength(append(msg, "8=FIX"...))
	if err != nil || n != len(msg) {
		t.Fatalf("frameLength = %d, %v; want %d", n, err, len(msg))
	}
	m, err := Parse(msg)
	if err != nil {
		t.Fatal(err)
	}
	if m.Type() != "D" || m.Get(11) != "x" || m.SeqNum() != 2 || m.Get(9) != "25" {
		t.Fatalf("parsed %s", m)
	}
	sum := 0
	for _, c := range msg[:len(msg)-7] {
		sum += int(c)
	}
	if got := m.Get(10); got != fmt.Sprintf("%03d", sum%256) {
		t.Fatalf("checksum %s, computed %d", got, sum%256)
	}
	for i := 0; i < len(msg); i++ {
		if n, err := frameLength(msg[:i]); n != 0 || err != nil {
			t.Fatalf("prefix of %d bytes: %d, %v", i, n, err)
		}
	}
	if _, err := frameLength([]byte("garbage")); !errors.Is(err, ErrFrame) {
		t.Fatalf("garbage framed: %v", err)
	}
}
