package ops

import "testing"

// BenchmarkOpenOrdersOf is GET /v1/sessions/{comp_id}/orders's walk at
// the default engine.orders_max: a million open orders over 16 sessions,
// one session's 65,536 listed (the first 1000 by OrderID). The monitor's
// lock is held for the walk (docs/benchmarks.md, "Other settings measured
// and left").
func BenchmarkOpenOrdersOf(b *testing.B) {
	m := newMonitor(nil)
	for i := uint64(1); i <= 1<<20; i++ {
		m.orders[i] = restingOrder{session: uint16(i % 16), leavesQty: 1}
		m.bySession[uint16(i%16)]++
	}
	b.ResetTimer()
	for range b.N {
		if list, total := m.OpenOrdersOf(3, OpenOrdersMaxListed); len(list) != OpenOrdersMaxListed || total != 1<<16 {
			b.Fatalf("%d listed of %d", len(list), total)
		}
	}
}
