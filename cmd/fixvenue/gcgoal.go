package main

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// boundHeapGoal has the collector run once the heap has grown headroom
// bytes past its live size, not the runtime's default of the live size
// again (README, "Memory"). Most of the venue's live heap is its pools,
// allocated at start for the configured bounds (orders_max, clordids_max,
// the rings): about 1.2 GB with the defaults. At the default the first
// collection came once another 1.2 GB of short-lived messages had been
// allocated, each page of it new to the process: three page faults an
// order for the first twelve seconds at 10,000 orders/s, and a resident
// heap twice what the venue uses (docs/benchmarks.md, "Heap headroom").
//
// It sets GOGC once, from the live heap after start, so the headroom grows
// with the live heap over the day. GOGC in the environment is left alone,
// and the headroom is never more than the runtime's default.
func boundHeapGoal(headroom int64, log *slog.Logger) {
	if headroom == 0 {
		return
	}
	if v, ok := os.LookupEnv("GOGC"); ok {
		log.Info("engine.gc_headroom_bytes not applied: GOGC is set in the environment", "GOGC", v)
		return
	}
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 || sample[0].Value.Uint64() == 0 {
		return
	}
	live := int64(sample[0].Value.Uint64())
	percent := int(min(100, (headroom*100+live-1)/live)) // rounded up: at least headroom
	debug.SetGCPercent(percent)
	log.Info("heap goal bounded", "live_bytes", live, "headroom_bytes", min(headroom, live), "gogc", percent)
}
