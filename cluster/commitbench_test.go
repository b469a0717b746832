package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fixvenue/fixvenue/journal"
)

// commitJournal is what both sides of BenchmarkCommitLatency append to: a
// single node's journal.Writer (durable at its fdatasync) and a leader's
// cluster.Journal (durable when a quorum of three has it on disk).
type commitJournal interface {
	Append(seq uint64, payload []byte) error
	Flush() error
}

// Bounds of the commit benchmark's load loop.
const (
	commitBenchQueueMax = 1 << 16 // commands waiting for the journal goroutine
	commitBenchBatchMax = 4096    // commands per batch, as the pipeline's journal stage
)

// BenchmarkCommitLatency measures commit latency on one node against three
// nodes on loopback, in one run: rounds alternate (1 node, 3 nodes, 1 node,
// ...) at each rate, an open loop sends commands at their intended times,
// a journal goroutine takes whatever is waiting as one batch (group
// commit), appends and flushes it, and each command's latency runs from its
// intended time to its batch being durable (fdatasync on one node, a quorum
// on disk for three). The three journals share one disk, and the Raft
// tick is the venue's default (50 ms). Run it once:
//
//	go test -run '^$' -bench CommitLatency -benchtime 1x ./cluster/
//
// FIXVENUE_COMMIT_ROUNDS (3) and FIXVENUE_COMMIT_SECONDS (2) set the rounds
// per side and the seconds per round.
func BenchmarkCommitLatency(b *testing.B) {
	rounds, seconds := envInt("FIXVENUE_COMMIT_ROUNDS", 3), envInt("FIXVENUE_COMMIT_SECONDS", 2)
	for _, rate := range []int{1000, 5000, 10000} {
		b.Run("rate="+strconv.Itoa(rate), func(b *testing.B) {
			nodes := startTCPClusterTick(b, 0xBE7C, DefaultTickInterval) // the venue's 50 ms tick
			l, next := waitLeader(b, nodes)
			three := NewJournal(l.runner, l.node, next, nil)
			one, err := journal.Open(filepath.Join(b.TempDir(), "single"), journal.Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer one.Close()
			h1, h3 := newCommitHist(), newCommitHist()
			flow1, flow3 := newOrderFlow(1), newOrderFlow(1)
			seq1, seq3 := one.NextSeq(), next
			for range rounds {
				seq1 = commitLoad(b, one, flow1, seq1, rate, seconds, h1)
				seq3 = commitLoad(b, three, flow3, seq3, rate, seconds, h3)
			}
			p50, p99 := func(h *hdrhistogram.Histogram, q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1e3 },
				func(h *hdrhistogram.Histogram) float64 { return float64(h.ValueAtQuantile(99)) / 1e3 }
			b.ReportMetric(p50(h1, 50), "p50-1node-µs")
			b.ReportMetric(p99(h1), "p99-1node-µs")
			b.ReportMetric(p50(h3, 50), "p50-3node-µs")
			b.ReportMetric(p99(h3), "p99-3node-µs")
			b.ReportMetric(p50(h3, 50)/p50(h1, 50), "p50-ratio")
			b.ReportMetric(p99(h3)/p99(h1), "p99-ratio")
			b.Logf("rate %d/s, %d rounds of %d s per side: 1 node p50 %.0f µs p99 %.0f µs (%d commands); 3 nodes p50 %.0f µs p99 %.0f µs (%d commands)",
				rate, rounds, seconds, p50(h1, 50), p99(h1), h1.TotalCount(), p50(h3, 50), p99(h3), h3.TotalCount())
		})
	}
}

func newCommitHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(60*time.Second), 3) }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// commitLoad sends rate commands per second for seconds into j and records
// each one's latency; it returns the next seq.
func commitLoad(b *testing.B, j commitJournal, flow *orderFlow, seq uint64, rate, seconds int, h *hdrhistogram.Histogram) uint64 {
	total := rate * seconds
	interval := time.Second / time.Duration(rate)
	queue := make(chan time.Time, commitBenchQueueMax)
	start := time.Now()
	go func() {
		defer close(queue)
		for k := range total {
			intended := start.Add(time.Duration(k) * interval)
			if d := time.Until(intended); d > 0 {
				time.Sleep(d)
			}
			queue <- intended
		}
	}()
	batch := make([]time.Time, 0, commitBenchBatchMax)
	for first := range queue {
		batch = append(batch[:0], first)
	drain:
		for len(batch) < commitBenchBatchMax {
			select {
			case t, ok := <-queue:
				if !ok {
					break drain
				}
				batch = append(batch, t)
			default:
				break drain
			}
		}
		for range batch {
			if err := j.Append(seq, flow.next(b, seq)); err != nil {
				b.Fatal(err)
			}
			seq++
		}
		if err := j.Flush(); err != nil {
			b.Fatal(fmt.Errorf("flush at seq %d: %w", seq, err))
		}
		now := time.Now()
		for _, t := range batch {
			_ = h.RecordValue(int64(now.Sub(t)))
		}
	}
	return seq
}
