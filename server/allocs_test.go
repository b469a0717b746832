package server

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/bench/loadgen"
	"github.com/fixvenue/fixvenue/internal/metricstest"
)

// allocsPerOrderMax bounds the allocations of one order over FIX (a
// NewOrderSingle and its cancel in, two ExecutionReports out), almost all of
// them QuickFIX/Go's per-message work (docs/benchmarks.md, "The FIX path
// against its floor"): 238 before sent reports were reused, 193 since (a burst beyond a
// session's free list of reused reports allocates new ones), 137 since the
// gateway validates messages in place of QuickFIX/Go (gateway/validate.go),
// 133 since the durability wait reuses its wake token (core/pipeline), 118
// since QuickFIX/Go's sessions parse without a dictionary (gateway/validate.go).
const allocsPerOrderMax = 135

// newReportAllocsMax is what one ExecutionReport built in a new message may
// allocate beyond a reused one (gateway TestReusedReportAllocations: about
// 25). A session's free list of sent reports is bounded, so a backlog deeper
// than it (a machine that starves the venue or the client for a while)
// builds reports in new messages: the run is allowed that much for each one
// the venue counted, so only the per-message work is held to the bound.
const newReportAllocsMax = 30

// TestAllocationsPerOrder counts the allocations of the venue and the load
// generator in this process over a paced passive load on real TCP sessions:
// the load generator's send and receive path allocates nothing
// (TestHotPathDoesNotAllocate), so the count is the venue's, plus the
// sessions' logons spread over the orders. Allocation counts do not depend
// on the machine's load, unlike the timings this test never asserts, but for
// the reports a backlog builds in new messages (newReportAllocsMax), which the
// venue counts.
func TestAllocationsPerOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2.5 s load run")
	}
	skipUnderRace(t, "a 2.5 s load run, counted without the race detector")
	cfg := testConfig(t, t.TempDir(), "")
	s := startServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	lc := loadgen.DefaultConfig()
	lc.Addr, lc.TargetCompID, lc.Sessions, lc.RatePerSecond = s.FIXAddr(), cfg.Venue.SenderCompID, 2, 2000
	lc.Duration, lc.Warmup, lc.Drain = 2*time.Second, 500*time.Millisecond, 5*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := loadgen.Run(ctx, lc)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	// Every answer arrives, once, with no gap in the venue's sequence
	// numbers, whether outbound or the session's sender goroutine sent it.
	// The only refusals are the back-pressure of a full command ring
	// (a machine so loaded that the journal's syncs stall), each order's
	// then its cancel's: answers all the same.
	busy, unknown := res.Rejects["ExecutionReport 103=99: system busy, try again"], res.Rejects["OrderCancelReject 102=1: unknown order"]
	if busy > 0 {
		t.Logf("%d orders refused as the command ring was full (system busy)", busy)
	}
	if res.OrdersSent < 4000 || res.LostOrders+res.LostCancels+res.OrdersUnsent != 0 || res.RejectsTotal != busy+unknown || unknown > busy ||
		res.SeqGaps != 0 || res.UnknownAnswers != 0 || res.ERs != res.OrdersSent+res.CancelsSent-unknown {
		t.Fatalf("load run: %d orders and %d cancels sent, %d ExecutionReports, lost %d orders and %d cancels, %d unsent, %d rejects %v, %d sequence gaps, %d unknown answers",
			res.OrdersSent, res.CancelsSent, res.ERs, res.LostOrders, res.LostCancels, res.OrdersUnsent, res.RejectsTotal, res.Rejects, res.SeqGaps, res.UnknownAnswers)
	}
	newReports, err := strconv.ParseFloat(metricstest.Value(t, scrape(t, s), "fixvenue_execution_reports_new_total"), 64)
	if err != nil {
		t.Fatal(err)
	}
	per := float64(after.Mallocs-before.Mallocs) / float64(res.OrdersSent)
	limit := allocsPerOrderMax + newReports*newReportAllocsMax/float64(res.OrdersSent)
	t.Logf("%.1f allocations per order over %d orders (%d ExecutionReports, %.0f of them in new messages)", per, res.OrdersSent, res.ERs, newReports)
	if per > limit {
		t.Fatalf("%.1f allocations per order, want at most %.1f (%d, and %d for each of the %.0f reports built in new messages)",
			per, limit, allocsPerOrderMax, newReportAllocsMax, newReports)
	}
}
