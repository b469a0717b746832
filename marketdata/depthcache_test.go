package marketdata

import (
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestDepthCacheFollowsTheFeed: the gateway's cache holds the top levels
// after each batch and is told which instrument changed.
func TestDepthCacheFollowsTheFeed(t *testing.T) {
	var mu sync.Mutex
	var notified []InstrumentID
	cache, err := NewDepthCache(simTrackerDefs(), 2, func(id InstrumentID) {
		mu.Lock()
		notified = append(notified, id)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	conn := udpSink(t)
	defer conn.Close()
	s := newFeedScenario(t, conn, func(c *FeedConfig) { c.Listener = cache })
	day := venue.TimeInForceDay
	s.order(venue.SideBuy, 1000, 4, day)
	s.order(venue.SideBuy, 1001, 6, day)
	s.order(venue.SideBuy, 999, 1, day)
	s.order(venue.SideSell, 1003, 2, day)
	s.order(venue.SideSell, 1001, 1, venue.TimeInForceIOC) // trades 1 @ 10.01

	var d Depth
	if err := cache.Depth(1, 0, &d); err != nil {
		t.Fatal(err)
	}
	wantBids := []Level{{PriceTicks: 1001, Qty: 5, OrderCount: 1}, {PriceTicks: 1000, Qty: 4, OrderCount: 1}}
	wantAsks := []Level{{PriceTicks: 1003, Qty: 2, OrderCount: 1}}
	if !reflect.DeepEqual(d.Bids, wantBids) || !reflect.DeepEqual(d.Asks, wantAsks) {
		t.Fatalf("depth %+v", d)
	}
	if d.State.LastTradeQty != 1 || d.State.LastTradePriceTicks != 1001 || d.State.Volume != 1 || d.NextSeq != 12 {
		t.Fatalf("state %+v next %d", d.State, d.NextSeq)
	}
	if err := cache.Depth(1, 1, &d); err != nil || len(d.Bids) != 1 {
		t.Fatalf("depth 1: %+v %v", d, err)
	}
	if err := cache.Depth(1, 3, &d); !errors.Is(err, ErrDepthTooLarge) {
		t.Fatalf("depth beyond the cache: %v", err)
	}
	if err := cache.Depth(99, 1, &d); !errors.Is(err, ErrUnknownInstrument) {
		t.Fatalf("unknown instrument: %v", err)
	}
	if def, ok := cache.Lookup("GLOBEX"); !ok || def.ID != 2 {
		t.Fatalf("lookup: %+v %v", def, ok)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notified) != 5 {
		t.Fatalf("notified %v, want one per command", notified)
	}
}

func TestAppendLevelChanges(t *testing.T) {
	l := func(px, qty int64) Level { return Level{PriceTicks: px, Qty: qty, OrderCount: 1} }
	cases := []struct {
		name       string
		bid        bool
		prev, cur  []Level
		wantAction []UpdateActionKind
		wantPrice  []int64
	}{
		{"same", true, []Level{l(10, 1)}, []Level{l(10, 1)}, nil, nil},
		{"change", true, []Level{l(10, 1)}, []Level{l(10, 2)}, []UpdateActionKind{UpdateChange}, []int64{10}},
		{"new best bid", true, []Level{l(10, 1)}, []Level{l(11, 1), l(10, 1)}, []UpdateActionKind{UpdateNew}, []int64{11}},
		{"best bid gone", true, []Level{l(11, 1), l(10, 1)}, []Level{l(10, 1)}, []UpdateActionKind{UpdateDelete}, []int64{11}},
		{"ask replaced", false, []Level{l(10, 1), l(12, 1)}, []Level{l(11, 1), l(12, 3)},
			[]UpdateActionKind{UpdateDelete, UpdateNew, UpdateChange}, []int64{10, 11, 12}},
		{"from empty", false, nil, []Level{l(5, 1), l(6, 1)}, []UpdateActionKind{UpdateNew, UpdateNew}, []int64{5, 6}},
		{"to empty", true, []Level{l(5, 1), l(4, 1)}, nil, []UpdateActionKind{UpdateDelete, UpdateDelete}, []int64{5, 4}},
		{"level falls off the top", true, []Level{l(9, 1), l(8, 1)}, []Level{l(10, 1), l(9, 1)},
			[]UpdateActionKind{UpdateDelete, UpdateNew}, []int64{8, 10}},
	}
	for _, tc := range cases {
		got := AppendLevelChanges(nil, tc.bid, tc.prev, tc.cur)
		if len(got) != len(tc.wantAction) {
			t.Fatalf("%s: %+v", tc.name, got)
		}
		for i := range got {
			if got[i].Action != tc.wantAction[i] || got[i].Level.PriceTicks != tc.wantPrice[i] {
				t.Fatalf("%s: change %d is %+v", tc.name, i, got[i])
			}
		}
	}
}
