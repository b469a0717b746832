package gateway

import (
	"fmt"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// BenchmarkOpenOrdersLifecycle: what the view costs outbound for one order
// entered and ended (cancelled), in a session of 200,000 such orders a
// day, with the day's ended orders remembered for a refusal naming one
// (ended) and without (endedMax 0, past the bound at once).
func BenchmarkOpenOrdersLifecycle(b *testing.B) {
	const orders = 200_000
	ids := make([]string, orders)
	for i := range ids {
		ids[i] = fmt.Sprintf("CL-%08d", i)
	}
	for _, endedMax := range []int{DefaultEndedClOrdIDsMax, 0} {
		b.Run(fmt.Sprintf("endedMax=%d", endedMax), func(b *testing.B) {
			var v *openOrders
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%orders == 0 {
					b.StopTimer()
					v = newOpenOrders(1, orders)
					v.endedMax = endedMax
					b.StartTimer()
				}
				o := withClOrdID(uint64(i+1), ids[i%orders])
				v.apply([]openChange{{kind: openEntered, order: o}})
				v.apply([]openChange{{kind: openEnded, order: o, status: venue.OrdStatusCancelled}})
			}
		})
	}
}
