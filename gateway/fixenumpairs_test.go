package gateway

import (
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestFixEnumTablesReadWhatTheyWrite checks that every engine Side, OrdType
// and TimeInForce has a FIX value in its table, that reading the value
// written gives the engine value back, and that other values are refused.
func TestFixEnumTablesReadWhatTheyWrite(t *testing.T) {
	for v := range 256 {
		if s := venue.Side(v); s.Valid() {
			if got, ok := parseSide([]byte(sideOf(s))); !ok || got != s {
				t.Errorf("Side %s: wrote %q, read %v %v", s, sideOf(s), got, ok)
			}
		}
		if o := venue.OrdType(v); o.Valid() {
			if got, ok := parseOrdType([]byte(ordTypeOf(o))); !ok || got != o {
				t.Errorf("OrdType %s: wrote %q, read %v %v", o, ordTypeOf(o), got, ok)
			}
		}
		if tif := venue.TimeInForce(v); tif.Valid() {
			if got, ok := parseTIF([]byte(timeInForceOf(tif))); !ok || got != tif {
				t.Errorf("TimeInForce %s: wrote %q, read %v %v", tif, timeInForceOf(tif), got, ok)
			}
		}
	}
	for _, bad := range []string{"", "5", "12", "A"} {
		if _, ok := parseSide([]byte(bad)); ok {
			t.Errorf("Side %q read", bad)
		}
		if _, ok := parseOrdType([]byte(bad)); ok {
			t.Errorf("OrdType %q read", bad)
		}
		if _, ok := parseTIF([]byte(bad)); ok && bad != "" {
			t.Errorf("TimeInForce %q read", bad)
		}
	}
	if got, ok := parseTIF(nil); !ok || got != venue.TimeInForceDay {
		t.Errorf("absent TimeInForce read as %v %v, want Day", got, ok)
	}
}
