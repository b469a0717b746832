package journal_test

import (
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/journal"
)

// benchDir is where benchmarks put their files: JOURNAL_BENCH_DIR when set
// (to measure a particular disk), else a temporary directory.
func benchDir(b *testing.B) string {
	if d := os.Getenv("JOURNAL_BENCH_DIR"); d != "" {
		dir, err := os.MkdirTemp(d, "journal-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return b.TempDir()
}

// reportPercentiles sorts samples and reports p50 and p99 under name.
func reportPercentiles(b *testing.B, samplesNs []int64, name string) {
	if len(samplesNs) == 0 {
		return
	}
	slices.Sort(samplesNs)
	b.ReportMetric(float64(samplesNs[len(samplesNs)/2]), name+"-p50-ns")
	b.ReportMetric(float64(samplesNs[len(samplesNs)*99/100]), name+"-p99-ns")
}

// BenchmarkFdatasync is the floor for group commit: one small pwrite and
// one fdatasync into a preallocated file, as a flush of one record does.
func BenchmarkFdatasync(b *testing.B) {
	f, err := os.Create(benchDir(b) + "/raw")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	const fileBytes = 64 << 20
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, fileBytes); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	rec := make([]byte, 128)
	samples := make([]int64, 0, 4096)
	off := int64(0)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if _, err := f.WriteAt(rec, off); err != nil {
			b.Fatal(err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
		if len(samples) < cap(samples) {
			samples = append(samples, time.Since(t0).Nanoseconds())
		}
		off = (off + int64(len(rec))) % fileBytes
	}
	reportPercentiles(b, samples, "sync")
}

// BenchmarkGroupCommit drives Writer.Run from the command ring and
// measures, per command, the time from Publish to the durable sequence
// covering it. "outstanding=1" has one producer that waits for each
// command to be durable (the latency of a lone commit, to compare with
// BenchmarkFdatasync); "producers=4" publishes as fast as the ring allows
// (throughput; records/fsync shows the batching).
func BenchmarkGroupCommit(b *testing.B) {
	b.Run("outstanding=1", func(b *testing.B) { benchGroupCommit(b, 1, true) })
	b.Run("producers=4", func(b *testing.B) { benchGroupCommit(b, 4, false) })
}

func benchGroupCommit(b *testing.B, producers int, waitEach bool) {
	n := b.N + 1 // seq 0 warms up: it creates the segment (fallocate and two fsyncs)
	publishedNs := make([]int64, n)
	durableNs := make([]int64, n)
	start := time.Now()
	var durableAt atomic.Int64 // filled by OnFlush, read by nobody but the flush itself
	syncNs := make([]int64, 0, n)
	w, err := journal.Open(benchDir(b), journal.Config{ZeroFill: os.Getenv("JOURNAL_BENCH_ZEROFILL") != "", OnFlush: func(fi journal.FlushInfo) {
		now := time.Since(start).Nanoseconds()
		syncNs = append(syncNs, fi.FsyncNs)
		for s := durableAt.Load() + 1; s <= fi.DurableSeq; s++ {
			durableNs[s] = now
		}
		durableAt.Store(fi.DurableSeq)
	}})
	if err != nil {
		b.Fatal(err)
	}
	durableAt.Store(-1)
	cr := newCommandRing(b, 1<<14)
	done := make(chan error, 1)
	go func() { done <- w.Run(cr.r, cr.barrier, cr.own) }()
	cr.publish(b, 0)
	for w.Durable() < 0 {
		time.Sleep(10 * time.Microsecond)
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	per := (b.N + producers - 1) / producers
	for p := range producers {
		count := max(0, min(per, b.N-p*per))
		wg.Go(func() {
			for range count {
				seq, slot, err := cr.r.Claim()
				if err != nil {
					b.Error(err)
					return
				}
				encodeNewOrder(b, slot, uint64(seq))
				publishedNs[seq] = time.Since(start).Nanoseconds()
				cr.r.Publish(seq)
				if waitEach {
					for w.Durable() < seq {
						time.Sleep(2 * time.Microsecond)
					}
				}
			}
		})
	}
	wg.Wait()
	for w.Durable() < int64(n-1) {
		time.Sleep(10 * time.Microsecond)
	}
	b.StopTimer()
	cr.barrier.Alert()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	st := w.Stats().Snapshot()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	lat := make([]int64, 0, b.N)
	for i := 1; i < n; i++ {
		lat = append(lat, durableNs[i]-publishedNs[i])
	}
	reportPercentiles(b, lat, "commit")
	reportPercentiles(b, syncNs[1:], "fsync")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(st.Records-1)/float64(max(st.Fsyncs-1, 1)), "records/fsync")
}

// replayFixture is one journal of real commands shared by the replay benchmarks.
var replayFixture struct {
	once    sync.Once
	dir     string
	records int
}

const replayRecords = 200_000

func replayJournal(b *testing.B) (string, int) {
	replayFixture.once.Do(func() {
		dir, err := os.MkdirTemp(os.Getenv("JOURNAL_BENCH_DIR"), "journal-replay-")
		if err != nil {
			b.Fatal(err)
		}
		w, err := journal.Open(dir, journal.Config{Policy: journal.PolicyNone})
		if err != nil {
			b.Fatal(err)
		}
		gen := newWorkload(42)
		buf := make([]byte, 256)
		for i := range uint64(replayRecords) {
			if err := w.Append(i, gen.next(b, buf, i)); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		replayFixture.dir, replayFixture.records = dir, replayRecords
	})
	if replayFixture.dir == "" {
		b.Fatal("replay fixture failed")
	}
	return replayFixture.dir, replayFixture.records
}

// BenchmarkReplay reads a 200,000-command journal from the page cache:
// "scan" checks every frame and returns the records (the journal's own
// cost); "matcher" also applies each command to a fresh matcher and hashes
// every event (what start-up and `journal verify` do). One op is one
// whole journal; records/s is the figure to compare with the 1,000,000/s
// target.
func BenchmarkReplay(b *testing.B) {
	dir, n := replayJournal(b)
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			r, err := journal.NewReader(dir, journal.ReaderOptions{})
			if err != nil {
				b.Fatal(err)
			}
			got := 0
			for _, err := range r.All() {
				if err != nil {
					b.Fatal(err)
				}
				got++
			}
			r.Close()
			if got != n {
				b.Fatalf("%d records", got)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("matcher", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			m, err := core.NewMatcher(matcherConfig())
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			res, err := journal.Replay(dir, m, journal.NewHashSink(), journal.ReplayOptions{})
			if err != nil || res.Records != int64(n) {
				b.Fatalf("%+v %v", res, err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
}
