package edge

import (
	"net/netip"
	"testing"
	"time"
)

func TestTokenBucket(t *testing.T) {
	r := Rate{PerSecond: 2, Burst: 3}
	b := newTokenBucket(r, 0)
	for i := range 3 {
		if !b.take(r, 0) {
			t.Fatalf("take %d of the burst refused", i)
		}
	}
	if b.take(r, 0) {
		t.Fatal("took past the burst")
	}
	if !b.take(r, int64(500*time.Millisecond)) {
		t.Fatal("no token after half a second at 2/s")
	}
	if b.take(r, int64(500*time.Millisecond)) {
		t.Fatal("two tokens after half a second at 2/s")
	}
	if b.full(r, int64(time.Second)) {
		t.Fatal("full after one more second (needs 1.5 s)")
	}
	if !b.full(r, int64(10*time.Second)) {
		t.Fatal("not full after ten seconds")
	}
	// Refill never exceeds the burst.
	for i := range 3 {
		if !b.take(r, int64(10*time.Second)) {
			t.Fatalf("take %d after refill refused", i)
		}
	}
	if b.take(r, int64(10*time.Second)) {
		t.Fatal("refill went past the burst")
	}
}

func TestSourceTableBound(t *testing.T) {
	r := Rate{PerSecond: 1, Burst: 2}
	tab := newSourceTable(2, r, r)
	a, b, c := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")
	sa := tab.get(a, 0)
	sa.conns++
	sb := tab.get(b, 0)
	sb.conns++
	if tab.get(c, 0) != nil {
		t.Fatal("table grew past its bound")
	}
	// b leaves, but its logon bucket is not full: it is remembered.
	sb.conns--
	sb.logons.take(r, 0)
	tab.release(b, 0)
	if tab.get(c, 0) != nil {
		t.Fatal("forgot an address whose logon attempts still count")
	}
	// Once the bucket has refilled, b is forgotten to make room.
	if tab.get(c, int64(time.Second)) == nil {
		t.Fatal("no room after the idle address refilled")
	}
	if _, ok := tab.entries[b]; ok {
		t.Fatal("idle, refilled address still tracked")
	}
	if tab.get(a, int64(time.Second)) != sa {
		t.Fatal("lost an address with a connection")
	}
	// An address that connected and left at once is remembered while its
	// accepts still count.
	sc := tab.get(c, int64(time.Second))
	sc.accepts.take(r, int64(time.Second))
	tab.release(c, int64(time.Second))
	if _, ok := tab.entries[c]; !ok {
		t.Fatal("forgot an address whose accepts still count")
	}
}

func TestCompIDTableBound(t *testing.T) {
	r := Rate{PerSecond: 1, Burst: 1}
	tab := newCompIDTable(2)
	for _, id := range []string{"A", "B"} {
		if ok, tracked := tab.take([]byte(id), r, 0); !ok || !tracked {
			t.Fatalf("%s: ok=%v tracked=%v", id, ok, tracked)
		}
	}
	if ok, _ := tab.take([]byte("A"), r, 0); ok {
		t.Fatal("A took twice with a burst of one")
	}
	if _, tracked := tab.take([]byte("C"), r, 0); tracked {
		t.Fatal("table grew past its bound")
	}
	if ok, tracked := tab.take([]byte("C"), r, int64(time.Second)); !ok || !tracked {
		t.Fatal("no room once the others refilled")
	}
	if len(tab.entries) > 2 {
		t.Fatalf("%d entries", len(tab.entries))
	}
}
