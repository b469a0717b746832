package fixclient

import (
	"testing"

	"github.com/fixvenue/fixvenue/internal/fixwire"
)

func TestBuildAndParse(t *testing.T) {
	msg := Build(F(35, "D"), F(49, "A"), F(56, "B"), F(34, "2"), F(11, "x"))
	if n, err := fixwire.Frame(append(msg, "8=FIX"...), MessageBytesMax); err != nil || n != len(msg) {
		t.Fatalf("Frame = %d, %v; want %d", n, err, len(msg))
	}
	if err := fixwire.VerifyCheckSum(msg); err != nil {
		t.Fatal(err)
	}
	m, err := Parse(msg)
	if err != nil {
		t.Fatal(err)
	}
	if m.Type() != "D" || m.Get(11) != "x" || m.SeqNum() != 2 || m.Get(9) != "25" || m.Get(8) != "FIX.4.4" {
		t.Fatalf("parsed %s", m)
	}
	if _, err := Parse([]byte("35=D\x01garbage\x01")); err == nil {
		t.Fatal("a field without = parsed")
	}
}
