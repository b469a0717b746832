package marketdata

import (
	"math/rand/v2"
	"testing"
)

// TestOrderIndexAgainstMap runs random puts and removes on a small table,
// where probe runs are long and wrap around, and checks every lookup
// against a map.
func TestOrderIndexAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const capacity = 24 // 64 slots: at most half full
	x := newOrderIndex(capacity)
	ref := map[OrderID]orderIdx{}
	var keys []OrderID
	for step := 0; step < 200000; step++ {
		if len(keys) < capacity && (len(keys) == 0 || rng.IntN(2) == 0) {
			// Ids close together and far apart, as the venue's counters and
			// an adversary would produce.
			id := OrderID(1 + rng.Uint64N(200))
			if step%3 == 0 {
				id = OrderID(rng.Uint64() | 1)
			}
			if _, dup := ref[id]; dup {
				continue
			}
			v := orderIdx(rng.IntN(1000))
			x.put(id, v)
			ref[id] = v
			keys = append(keys, id)
		} else {
			i := rng.IntN(len(keys))
			id := keys[i]
			keys[i] = keys[len(keys)-1]
			keys = keys[:len(keys)-1]
			x.remove(id)
			delete(ref, id)
			x.remove(id) // removing an absent id is a no-op
		}
		if x.count != len(ref) {
			t.Fatalf("step %d: count %d, want %d", step, x.count, len(ref))
		}
		for _, id := range keys {
			if got := x.get(id); got != ref[id] {
				t.Fatalf("step %d: get(%d) = %d, want %d", step, id, got, ref[id])
			}
		}
		if got := x.get(OrderID(1 << 62)); got != noOrder {
			t.Fatalf("step %d: absent id found at %d", step, got)
		}
	}
}
