package spec

import (
	"os"
	"testing"

	"github.com/quickfixgo/quickfix/datadictionary"
)

func TestWriteFIX44Parses(t *testing.T) {
	p, err := WriteFIX44(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dd, err := datadictionary.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := dd.Messages["D"]; !ok {
		t.Fatal("dictionary has no NewOrderSingle")
	}
	if b, _ := os.ReadFile(p); len(b) != len(FIX44()) {
		t.Fatal("written dictionary differs from the embedded one")
	}
}
