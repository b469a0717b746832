package spec

import (
	"bytes"
	"os"
	"path/filepath"
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

// TestFIX44IsQuickFIXs: the embedded dictionary is the one stock QuickFIX
// clients validate against, byte for byte, when that one is beside the
// worktree (../shared/quickfix/FIX44.xml). An edition of its own had
// dropped PutOrCall (201) and UnderlyingPutOrCall (315), so an order naming
// an option got a session Reject instead of the venue's answer, and put
// MarketDataRequest's NoTradingSessions, ApplQueueAction and ApplQueueMax
// in each NoRelatedSym entry, so a request giving them before its entries
// got one too (doc.go).
func TestFIX44IsQuickFIXs(t *testing.T) {
	shared, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "quickfix", "FIX44.xml"))
	if err != nil {
		t.Skipf("QuickFIX's FIX44.xml is not beside the worktree: %v", err)
	}
	if !bytes.Equal(shared, FIX44()) {
		t.Fatal("gateway/spec/FIX44.xml differs from QuickFIX's FIX44.xml: copy it over, never edit it")
	}
}

// TestFIX44Placements pins, without QuickFIX's copy, the fields a
// difference from it once broke: where each is defined decides whether a
// stock client's message passes the session layer.
func TestFIX44Placements(t *testing.T) {
	dd, err := datadictionary.ParseSrc(bytes.NewReader(FIX44()))
	if err != nil {
		t.Fatal(err)
	}
	has := func(fields []*datadictionary.FieldDef, tag int) *datadictionary.FieldDef {
		for _, f := range fields {
			if f.Tag() == tag {
				return f
			}
		}
		return nil
	}
	for _, c := range []struct {
		component string
		tag       int
	}{{"Instrument", 201}, {"UnderlyingInstrument", 315}} {
		if has(dd.ComponentTypes[c.component].Fields(), c.tag) == nil {
			t.Errorf("component %s has no tag %d", c.component, c.tag)
		}
	}
	v := dd.Messages["V"]
	for _, tag := range []int{386, 815, 812} {
		if _, ok := v.Fields[tag]; !ok {
			t.Errorf("MarketDataRequest has no tag %d of its own", tag)
		}
		if has(v.Fields[146].Fields, tag) != nil {
			t.Errorf("MarketDataRequest's NoRelatedSym has tag %d", tag)
		}
	}
	for _, mt := range []string{"D", "F", "G", "H", "AF", "q", "x", "V"} {
		if _, ok := dd.Messages[mt].Tags[201]; !ok {
			t.Errorf("message %s does not take PutOrCall (201)", mt)
		}
	}
}
