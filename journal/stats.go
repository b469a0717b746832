package journal

import "sync/atomic"

// Stats counts what the writer did. The writer goroutine updates it; any
// goroutine may read it (through Writer.Stats) to export metrics. Counters
// only grow, so a scraper computes rates from differences.
type Stats struct {
	Records         atomic.Int64 // records appended
	PayloadBytes    atomic.Int64 // payload bytes appended (frames excluded)
	Flushes         atomic.Int64 // flushes that wrote at least one record
	Fsyncs          atomic.Int64 // fdatasync calls for flushes
	FsyncNsTotal    atomic.Int64 // time spent in those calls
	FsyncNsMax      atomic.Int64 // the slowest of them
	FsyncNsLast     atomic.Int64 // the most recent of them
	BatchRecordsMax atomic.Int64 // the largest flush, in records
	Spills          atomic.Int64 // writes forced by a full write buffer before a flush
	SegmentsCreated atomic.Int64 // segments created (the first one and every roll)
	Failures        atomic.Int64 // fail-stop events (at most 1 per writer; summed across restarts by the exporter)
}

// StatsSnapshot is a plain copy of Stats at one moment.
type StatsSnapshot struct {
	Records         int64
	PayloadBytes    int64
	Flushes         int64
	Fsyncs          int64
	FsyncNsTotal    int64
	FsyncNsMax      int64
	FsyncNsLast     int64
	BatchRecordsMax int64
	Spills          int64
	SegmentsCreated int64
	Failures        int64
}

// Snapshot copies the counters (each one atomically; not all at one instant).
func (s *Stats) Snapshot() StatsSnapshot {
	return StatsSnapshot{
		Records:         s.Records.Load(),
		PayloadBytes:    s.PayloadBytes.Load(),
		Flushes:         s.Flushes.Load(),
		Fsyncs:          s.Fsyncs.Load(),
		FsyncNsTotal:    s.FsyncNsTotal.Load(),
		FsyncNsMax:      s.FsyncNsMax.Load(),
		FsyncNsLast:     s.FsyncNsLast.Load(),
		BatchRecordsMax: s.BatchRecordsMax.Load(),
		Spills:          s.Spills.Load(),
		SegmentsCreated: s.SegmentsCreated.Load(),
		Failures:        s.Failures.Load(),
	}
}

// FlushInfo describes one completed flush, for Config.OnFlush.
type FlushInfo struct {
	Records      int   // records made durable by this flush
	PayloadBytes int   // their payload bytes
	FsyncNs      int64 // time in fdatasync (0 under PolicyNone)
	DurableSeq   int64 // the durable sequence after the flush
}

// storeMax raises a to v if v is larger. Only the writer goroutine stores,
// so a plain load/compare/store is race-free.
func storeMax(a *atomic.Int64, v int64) {
	if v > a.Load() {
		a.Store(v)
	}
}
