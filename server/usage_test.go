package server

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/ops"
)

// TestEngineUsageMetrics: the matcher's bounds and what it holds of them
// are on /metrics: five resting orders and a waiting stop hold six order
// slots, one stop and six ClOrdIDs; a cancel frees a slot and takes a
// ClOrdID (its own, which names the cancelled order for the day).
func TestEngineUsageMetrics(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()), Options{})
	c := logon(t, s, "CLIENT1", true)
	for i := range 5 {
		id := fmt.Sprintf("rest%d", i)
		sendOrder(t, c, order{id: id, side: "1", qty: "3", px: "99.00", tif: "1"})
		expectER(t, c, map[int]string{11: id, 150: "0"})
	}
	sendOrder(t, c, order{id: "stop1", side: "2", qty: "2", typ: "3", tif: "1", extra: []fixclient.Field{fixclient.F(99, "95.00")}})
	expectER(t, c, map[int]string{11: "stop1", 150: "0"})
	usage := func(want map[string]float64) {
		t.Helper()
		deadline := time.Now().Add(readWait)
		for {
			m, wrong := scrape(t, s), ""
			for name, v := range want {
				if got := metricstest.Float(t, m, name); got != v {
					wrong += fmt.Sprintf("%s = %v, want %v; ", name, got, v)
				}
			}
			if wrong == "" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal(wrong)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	usage(map[string]float64{
		`fixvenue_engine_usage{bound="orders_max"}`: 6, `fixvenue_engine_limit{bound="orders_max"}`: 4096,
		`fixvenue_engine_usage{bound="stops_max"}`: 1, `fixvenue_engine_limit{bound="stops_max"}`: 4096,
		`fixvenue_engine_usage{bound="clordids_max"}`: 6, `fixvenue_engine_limit{bound="clordids_max"}`: 16384,
	})
	if err := c.Send("F", fixclient.F(11, "cxl0"), fixclient.F(41, "rest0"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, time.Now().UTC().Format("20060102-15:04:05.000"))); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "cxl0", 150: "4"})
	usage(map[string]float64{`fixvenue_engine_usage{bound="orders_max"}`: 5, `fixvenue_engine_usage{bound="stops_max"}`: 1,
		`fixvenue_engine_usage{bound="clordids_max"}`: 7})
	// The admin API's status says the same.
	var st ops.StatusInfo
	if code := adminCall(t, s, "GET", "/v1/status", aliceToken, "", &st); code != 200 {
		t.Fatalf("status: %d", code)
	}
	want := []ops.CapacityInfo{{Bound: "orders_max", Used: 5, Limit: 4096}, {Bound: "stops_max", Used: 1, Limit: 4096},
		{Bound: "clordids_max", Used: 7, Limit: 16384}}
	if !slices.Equal(st.Capacity, want) {
		t.Fatalf("status capacity %+v, want %+v", st.Capacity, want)
	}
}
