package fixwire

import (
	"testing"

	"github.com/quickfixgo/quickfix"
)

func tagOf(n int) quickfix.Tag { return quickfix.Tag(n) }

// fuzzMessageBytesMax keeps the prefix check below cheap.
const fuzzMessageBytesMax = 512

// FuzzFrame feeds arbitrary bytes to Frame and the Iterator, as a peer
// could send them, and wraps them as a body with AppendMessage. Frame must
// never panic or read out of bounds; a frame it accepts lies within the
// input and the bound, and every shorter prefix of it asks for more bytes;
// the Iterator's fields tile the message; a built message frames whole and
// carries a right CheckSum.
func FuzzFrame(f *testing.F) {
	f.Add(fix("8=FIX.4.4|9=49|35=0|34=2|49=ISLD|52=20261130-10:11:12.345|56=TW|10=162|"))
	f.Add(fix("8=FIX.4.4|9=5|35=0|10=12|x"))
	f.Add(fix("8=FIX.4.4|9=99999|"))
	f.Add(fix("8=FIX.4.4|9=19|35=0|95=3|96=a|b|10=000|"))
	f.Add([]byte("8=\x019="))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := Frame(b, fuzzMessageBytesMax)
		switch {
		case err != nil && n != 0:
			t.Fatalf("n=%d with error %v", n, err)
		case n < 0 || n > len(b) || n > fuzzMessageBytesMax:
			t.Fatalf("n=%d for %d bytes", n, len(b))
		case n > 0:
			msg := b[:n]
			if _, ok := StatedCheckSum(msg); !ok {
				t.Fatalf("accepted frame without a trailer: %q", msg)
			}
			for i := range n {
				if k, err := Frame(msg[:i], fuzzMessageBytesMax); k != 0 || err != nil {
					t.Fatalf("prefix of %d bytes of an accepted frame: %d, %v", i, k, err)
				}
			}
			checkTiling(t, msg)
		}
		checkTiling(t, b)
		built := AppendMessage(nil, "FIX.4.4", b)
		if k, err := Frame(built, len(built)); k != len(built) || err != nil {
			t.Fatalf("built message: Frame = %d, %v", k, err)
		}
		if err := VerifyCheckSum(built); err != nil {
			t.Fatalf("built message: %v", err)
		}
	})
}

// checkTiling walks b's fields: each starts where the previous one ended,
// and a walk without error ends at the end of b.
func checkTiling(t *testing.T, b []byte) {
	it := NewIterator(b)
	pos := 0
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		if f.Start != pos || f.End <= f.Start || f.End > len(b) || b[f.End-1] != SOH {
			t.Fatalf("field %d at [%d,%d) after %d in %q", f.Tag, f.Start, f.End, pos, b)
		}
		pos = f.End
	}
	if it.Err() == nil && pos != len(b) {
		t.Fatalf("walk stopped at %d of %d without an error", pos, len(b))
	}
}
