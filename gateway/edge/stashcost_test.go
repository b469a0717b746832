package edge

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// TestStashCostCoversQuickFIX: stashCost is at least what QuickFIX/Go keeps
// of a message it stashes ahead of a gap (its parse without a dictionary,
// as the venue's sessions read, held in a map), for a Heartbeat, an order
// and a long Text, and not more than three times it, so that the bound
// stays one of memory.
func TestStashCostCoversQuickFIX(t *testing.T) {
	for _, c := range []struct{ name, extra string }{
		{"heartbeat", ""},
		{"order", "11=ORDER123456\x0155=ACME\x0154=1\x0138=100\x0140=2\x0144=100.25\x0159=0\x0160=20261208-00:45:06.462\x011=ACCOUNT1\x0121=1\x01"},
		{"long text", "58=" + strings.Repeat("x", 1000) + "\x01"},
	} {
		const n = 20000
		raws := make([][]byte, n)
		for i := range raws {
			body := fmt.Sprintf("35=0\x0149=CLIENT1\x0156=VENUE\x0134=%d\x0152=20261208-00:45:06.462\x01%s", i+10, c.extra)
			raws[i] = fixwire.AppendMessage(nil, "FIX.4.4", []byte(body))
		}
		fields := bytes.Count(raws[0], []byte{1}) - 3 // after BodyLength, before CheckSum
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		stash := make(map[int]*quickfix.Message, n)
		for i, r := range raws {
			m := quickfix.NewMessage()
			if err := quickfix.ParseMessage(m, bytes.NewBuffer(bytes.Clone(r))); err != nil {
				t.Fatal(err)
			}
			stash[i] = m
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(stash)
		held := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
		cost := float64(stashCost(len(raws[0]), fields))
		t.Logf("%s: %d bytes, %d fields: QuickFIX/Go holds %.0f bytes, stashCost %.0f", c.name, len(raws[0]), fields, held, cost)
		if cost < held || cost > 3*held {
			t.Errorf("%s: stashCost %.0f for QuickFIX/Go's %.0f bytes", c.name, cost, held)
		}
	}
}
