package pipeharness

import (
	"runtime"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/bench/loadmix"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/internal/flowtest"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

func shortConfig() Config {
	return Config{RatePerSecond: 20_000, Duration: 200 * time.Millisecond, Warmup: 50 * time.Millisecond,
		Wait: ring.SpinPark, CommandSlots: 1 << 10, EventSlots: 1 << 12}
}

func runOK(t *testing.T, cfg Config) *Result {
	t.Helper()
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.LastErr != "" {
		t.Fatalf("run failed: %s", res.LastErr)
	}
	return res
}

// Every command published is completed, exactly the commands due after the
// warm-up are recorded, and the flow is valid (no reject events).
func TestRunCompletesEveryCommand(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
	}{
		{"journal off", func(*Config) {}},
		{"journal batch", func(c *Config) { c.Journal, c.JournalDir = true, t.TempDir() }},
		{"journal none, yield", func(c *Config) { c.Journal, c.Fsync, c.Wait = true, journal.PolicyNone, ring.SpinYield }},
		{"cross", func(c *Config) { c.Mix = loadmix.Cross }},
		{"mixed, spin pace", func(c *Config) { c.Mix, c.Pace = loadmix.Mixed, PaceSpin }},
		{"sleep pace, matcher unlocked", func(c *Config) { c.Pace, c.UnlockedMatcher = PaceSleep, true }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := shortConfig()
			c.edit(&cfg)
			res := runOK(t, cfg)
			if res.Commands != 5000 || res.Completed != res.Commands || res.NoEventCmds != 0 {
				t.Fatalf("published %d, completed %d, without events %d; want 5000 each and 0", res.Commands, res.Completed, res.NoEventCmds)
			}
			if res.Latency.Count != 4000 {
				t.Errorf("recorded %d latencies, want the 4000 commands due after the warm-up", res.Latency.Count)
			}
			if res.Rejected != 0 {
				t.Errorf("%d reject events: the order flow is invalid", res.Rejected)
			}
			if res.Latency.MaxUs <= 0 || res.Latency.P50Us > res.Latency.P99Us || res.Latency.P99Us > res.Latency.MaxUs {
				t.Errorf("incoherent latency summary %+v", res.Latency)
			}
			// A command is published at or after its due time, so its
			// latency from publication is never the larger of the two.
			f, l := res.FromPublication, res.Latency
			if f.Count != l.Count || f.MaxUs <= 0 || f.P50Us > l.P50Us || f.P99Us > l.P99Us || f.MaxUs > l.MaxUs {
				t.Errorf("latency from publication %+v does not fit under the latency from the due time %+v", f, l)
			}
		})
	}
}

func TestThroughputRun(t *testing.T) {
	cfg := shortConfig()
	cfg.RatePerSecond, cfg.Duration, cfg.Warmup = 0, 100*time.Millisecond, 0
	res := runOK(t, cfg)
	if !res.ClosedLoop || res.Commands == 0 || res.Completed != res.Commands || res.Throughput <= 0 {
		t.Fatalf("throughput run: %+v", res)
	}
}

// Procs sets GOMAXPROCS for the run only: the result reports the run's
// value, and the caller's is back afterwards. Every command still completes
// with the whole pipeline on one P.
func TestProcsSetsGOMAXPROCSForTheRun(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	cfg := shortConfig()
	cfg.Procs = 1
	if before == 1 {
		cfg.Procs = 2
	}
	res := runOK(t, cfg)
	if res.GOMAXPROCS != cfg.Procs || res.Completed != res.Commands || res.Commands == 0 {
		t.Fatalf("procs %d: result GOMAXPROCS %d, completed %d of %d", cfg.Procs, res.GOMAXPROCS, res.Completed, res.Commands)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Fatalf("GOMAXPROCS %d after the run, %d before", after, before)
	}
}

// With a tiny day, the producer inserts EndOfDay commands; they cause no
// events and the flow stays valid across them (live orders keep their
// ClOrdIDs, so their cancels still find them).
func TestEndOfDayInsertion(t *testing.T) {
	cfg := shortConfig()
	cfg.dayOrdersMax = 500
	res := runOK(t, cfg)
	// 5000 commands of which about 2500 are new orders: four or five days.
	if res.EndOfDays < 4 || res.Rejected != 0 || res.Completed != res.Commands {
		t.Fatalf("end-of-days %d, rejects %d, completed %d of %d", res.EndOfDays, res.Rejected, res.Completed, res.Commands)
	}
}

func TestConfigRefusals(t *testing.T) {
	for name, edit := range map[string]func(*Config){
		"negative rate":    func(c *Config) { c.RatePerSecond = -1 },
		"rate over max":    func(c *Config) { c.RatePerSecond = RateMax + 1 },
		"zero duration":    func(c *Config) { c.Duration = 0 },
		"negative warm-up": func(c *Config) { c.Warmup = -1 },
		"bad wait":         func(c *Config) { c.Wait = 99 },
		"bad mix":          func(c *Config) { c.Mix = 9 },
		"negative procs":   func(c *Config) { c.Procs = -1 },
	} {
		cfg := shortConfig()
		edit(&cfg)
		if _, err := Run(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The flow, applied straight to a matcher, keeps the book flat and never
// produces a reject, for every mix.
func TestFlowKeepsTheBookFlat(t *testing.T) {
	for _, mix := range []loadmix.Mix{loadmix.Passive, loadmix.Cross, loadmix.Mixed} {
		m, err := core.NewMatcher(core.Config{OrdersMax: ordersMax, ClOrdIDsMax: 1 << 16, SessionsMax: 1, LevelsPerSideMax: 4096,
			Instruments: []core.InstrumentConfig{{ID: instrumentID, Symbol: "ACME", TickSize: "0.01", LotSize: 1, MinQty: 1,
				MaxQty: 1_000_000, RefPriceTicks: refPriceTicks, BandPercent: 10}}})
		if err != nil {
			t.Fatal(err)
		}
		f := flow{mix: mix}
		sink := core.NewBufferSink(8)
		slot := make([]byte, 256)
		var live flowtest.Live[struct{}] // orders on the book
		restingMax := 0
		for j := int64(0); j < 10_000; j++ {
			f.encode(slot, j, uint64(j), j)
			sink.Reset()
			if err := m.Apply(slot, sink); err != nil {
				t.Fatalf("%s: command %d: %v", mix, j, err)
			}
			if sink.Len() == 0 {
				t.Fatalf("%s: command %d caused no event", mix, j)
			}
			for _, ev := range sink.All() {
				tid, err := live.Follow(ev, func(*venue.OrderAccepted) (struct{}, bool) { return struct{}{}, true }, nil)
				if err != nil {
					t.Fatalf("%s: command %d: %v", mix, j, err)
				}
				if tid == venue.OrderRejectedTemplateID || tid == venue.CancelRejectedTemplateID {
					t.Fatalf("%s: command %d rejected", mix, j)
				}
			}
			restingMax = max(restingMax, live.Len())
		}
		if restingMax > 2*cancelLagUnits+2 {
			t.Errorf("%s: up to %d orders rested; the book must stay flat", mix, restingMax)
		}
	}
}

func TestFlowEncodeDoesNotAllocate(t *testing.T) {
	f := flow{mix: loadmix.Mixed}
	slot := make([]byte, 256)
	j := int64(0)
	if a := testing.AllocsPerRun(1000, func() { f.encode(slot, j, uint64(j), j); j++ }); a != 0 {
		t.Errorf("%.1f allocations per command", a)
	}
}
