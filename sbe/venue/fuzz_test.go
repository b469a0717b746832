package venue_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/internal/sbetest"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// FuzzDecode wraps arbitrary bytes as every template, at two offsets, and
// calls every getter of each wrap that succeeded: nothing may panic, a
// refused wrap must leave the flyweight unwrapped,
// at most one template may accept the bytes, and an accepted message must fit
// in the buffer and agree with TemplateIDOf. Seeds are the golden messages,
// one blank message per template and the files under testdata/fuzz.
func FuzzDecode(f *testing.F) {
	f.Add(newOrderGolden)
	f.Add(fillGolden)
	f.Add(cancelRejectedGolden)
	for _, name := range slices.Sorted(maps.Keys(codecs)) {
		c := codecs[name]()
		buf := make([]byte, 256)
		if err := c.WrapEncode(buf, 0); err != nil {
			f.Fatal(err)
		}
		f.Add(buf[:c.EncodedLength()])
	}
	names := slices.Sorted(maps.Keys(codecs))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, off := range []int{0, 1} {
			accepted := 0
			for _, name := range names {
				c := codecs[name]()
				err := c.WrapDecode(data, off)
				if err != nil {
					if c.EncodedLength() != 0 {
						t.Fatalf("%s refused the bytes (%v) but is wrapped", name, err)
					}
					continue
				}
				if calls := sbetest.ReadAll(c); calls == 0 {
					t.Fatalf("%s: ReadAll called no getter", name)
				}
				accepted++
				if n := c.EncodedLength(); n < venue.MessageHeaderSize || off+n > len(data) {
					t.Fatalf("%s accepted at %d with EncodedLength %d in %d bytes", name, off, n, len(data))
				}
				id, err := venue.TemplateIDOf(data, off)
				if err != nil || venue.MessageName(id) != name {
					t.Fatalf("%s accepted but TemplateIDOf = %d (%q), %v", name, id, venue.MessageName(id), err)
				}
			}
			if accepted > 1 {
				t.Fatalf("%d templates accepted the same bytes at %d", accepted, off)
			}
		}
	})
}
