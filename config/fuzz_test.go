package config

import (
	"os"
	"reflect"
	"testing"
)

// FuzzParse reads arbitrary text as a configuration file. Whatever the
// text, Parse never panics; a configuration it accepts is within its
// bounds, reads the same again, and answers every question the venue's
// start asks of it. Seeds are the repository's configuration files.
func FuzzParse(f *testing.F) {
	f.Add(Default())
	for _, path := range []string{"../deploy/cluster/node1.toml", "../fixtests/conformance.toml", "../interop/quickfixcpp/venue.toml"} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("[[session]]\ncomp_id = \"C%d\"\nrange = [1, 3]\n[session.quickfix]\nResetOnLogon = \"Y\"\n"))
	f.Add([]byte("[[instrument]]\nid = 9\nsymbol = \"X\"\ntick_size = \"0.5\"\nref_price = \"10\"\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		c, err := Parse(text, "fuzz.toml")
		if err != nil {
			if c != nil {
				t.Fatal("an error with a configuration")
			}
			return
		}
		if n := len(c.Sessions); n < 1 || n > SessionsMax {
			t.Fatalf("accepted %d sessions", n)
		}
		if n := len(c.Instruments); n < 1 || n > InstrumentsMax || c.InstrumentsMax() < n {
			t.Fatalf("accepted %d instruments (instruments_max %d)", n, c.InstrumentsMax())
		}
		seen := map[string]bool{}
		for i := range c.Sessions {
			s := &c.Sessions[i]
			if seen[s.CompID] || len(s.Range) != 0 {
				t.Fatalf("session %d %q: repeated or not expanded", i, s.CompID)
			}
			seen[s.CompID] = true
			_ = c.QuickFIXSettings(s)
			_, _, _ = c.Throttles(s)
			_ = c.CancelOnDisconnect(s)
		}
		for _, cpus := range []int{1, 2, 64} {
			_ = c.Engine.MatcherThread(cpus)
		}
		again, err := Parse(text, "fuzz.toml")
		if err != nil || !reflect.DeepEqual(c, again) {
			t.Fatalf("read again: %v, or another configuration", err)
		}
	})
}
