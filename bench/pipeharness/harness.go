package pipeharness

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fixvenue/fixvenue/bench/hdrplot"
	"github.com/fixvenue/fixvenue/bench/loadmix"
	"github.com/fixvenue/fixvenue/bench/pace"
	"github.com/fixvenue/fixvenue/bench/progress"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/pipeline"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Bounds and sizes.
const (
	// RateMax bounds the offered rate, commands per second.
	RateMax = 50_000_000
	// ProcsMax bounds Config.Procs: each P costs the runtime memory and
	// every stop of the world, so that GOMAXPROCS 32768 took 17 s and
	// 900 MB for a 200 ms run, and more grew without a limit; the harness
	// measures a handful of goroutines, which this many Ps already exceed.
	ProcsMax = 1024
	// commandsMax stops a run whatever its duration (a max-throughput run
	// at tens of millions of commands a second would otherwise run on).
	commandsMax = 1 << 31
	// ordersMax and clOrdIDsMax size the matcher: the flow keeps at most
	// 2·cancelLagUnits+passiveLevels·2 orders resting, and an EndOfDay is
	// inserted before the ClOrdIDs of the day reach dayOrdersMax.
	ordersMax    = 1 << 16
	clOrdIDsMax  = 1 << 20
	dayOrdersMax = clOrdIDsMax - ordersMax
	// Ring sizes, as in the default venue configuration.
	commandSlotsDefault = 1 << 16
	eventSlotsDefault   = 1 << 18
	claimTimeout        = 50 * time.Millisecond
	// stopTimeout bounds the drain at the end of a run.
	stopTimeout = 30 * time.Second
	// sleepSlackNs: with pace "sleep" or "yield", the producer waits for a
	// command due sooner than this on the clock, in a loop, rather than in a
	// sleep that would overshoot anyway.
	sleepSlackNs = 20_000
	// Durable-wait backoff of the stand-in consumer, as in the gateway.
	durableSpinTries  = 64
	durableYieldTries = 256
	durableSleep      = 20 * time.Microsecond
)

// Pace is how the producer waits for a command's due time.
type Pace uint8

const (
	// PaceYield, the default, yields the processor once after publishing,
	// then sleeps until the next command is due, yielding it again at every
	// check of the short waits on the clock (runtime.Gosched). The
	// goroutine a publication wakes is queued on the producer's processor
	// and runs as soon as the producer lets go of it, as it does behind a
	// gateway goroutine, which blocks on its socket after publishing.
	PaceYield Pace = iota
	// PaceSleep is PaceYield whose short waits loop on the clock without
	// yielding: the goroutine its publication woke waits until another
	// processor steals it (tens of microseconds here), which no producer of
	// the venue does to the matcher.
	PaceSleep
	PaceSpin // spin on the clock, long waits too: on time, but burns a core
)

// paceNames are the names of the Paces, in order: their one text form.
var paceNames = [...]string{PaceYield: "yield", PaceSleep: "sleep", PaceSpin: "spin"}

func (p Pace) String() string {
	if int(p) < len(paceNames) {
		return paceNames[p]
	}
	return "Pace(" + strconv.Itoa(int(p)) + ")"
}

// MarshalText writes the Pace's name.
func (p Pace) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads "yield", "sleep" or "spin"; on error p is unchanged.
func (p *Pace) UnmarshalText(b []byte) error {
	for i, name := range paceNames {
		if string(b) == name {
			*p = Pace(i)
			return nil
		}
	}
	return fmt.Errorf("pipeharness: unknown pace %q (yield, sleep or spin)", b)
}

// Config describes one run.
type Config struct {
	// RatePerSecond is the offered rate of commands; 0 publishes as fast
	// as the ring takes them (a throughput run).
	RatePerSecond float64
	Duration      time.Duration
	Warmup        time.Duration
	Wait          ring.WaitStrategy
	Journal       bool
	// JournalDir receives the journal; empty means a temporary directory
	// removed at the end.
	JournalDir string
	// Fsync is the journal's policy when Journal is on.
	Fsync journal.Policy
	Mix   loadmix.Mix // passive: resting orders, each cancelled cancelLagUnits later; cross: a resting buy and a sell that trades with it; mixed: both in turn
	Pace  Pace
	// UnlockedMatcher runs the matcher goroutine without LockOSThread
	// (pipeline.Config.UnlockedMatcher).
	UnlockedMatcher bool
	// CommandSlots and EventSlots size the rings (0: venue defaults).
	CommandSlots, EventSlots int
	// Procs, when positive, is GOMAXPROCS for the run; Run restores the
	// previous value before it returns. 0 leaves it alone (the runtime's
	// default is one P per CPU). On a two-CPU virtual machine one P keeps
	// the pipeline's hand-offs on one thread (see doc.go).
	Procs int
	// Progress receives a line each second; nil: silent.
	Progress io.Writer

	// dayOrdersMax overrides the EndOfDay threshold (tests); 0: dayOrdersMax.
	dayOrdersMax int64
}

// Result holds the figures of one run.
type Result struct {
	RateTarget  float64 `json:"rate_target_per_s"`
	Wait        string  `json:"wait"`
	LockedOS    bool    `json:"matcher_thread_locked"`
	Journal     string  `json:"journal"`
	Mix         string  `json:"mix"`
	Pace        string  `json:"pace"`
	DurationS   float64 `json:"duration_s"`
	WarmupS     float64 `json:"warmup_s"`
	Commands    int64   `json:"commands"`
	Completed   int64   `json:"completed"`
	EndOfDays   int64   `json:"end_of_days"`
	Rejected    int64   `json:"rejected_events"`
	ClaimsBusy  int64   `json:"claims_busy"`
	Clamped     int64   `json:"clamped"`
	ClosedLoop  bool    `json:"closed_loop"`
	SendRate    float64 `json:"send_rate_per_s"`
	Throughput  float64 `json:"throughput_per_s"`
	NumCPU      int     `json:"num_cpu"`
	GOMAXPROCS  int     `json:"gomaxprocs"`
	LastErr     string  `json:"error,omitempty"`
	NoEventCmds int64   `json:"commands_without_events"`

	Latency hdrplot.Summary `json:"latency"`
	SendLag hdrplot.Summary `json:"send_lag"`
	// FromPublication is the latency of the same commands from their
	// publication instead of their due time: the pipeline's own part,
	// without the producer's lateness (which is in SendLag). Open loop it is
	// never above Latency, quantile by quantile.
	FromPublication hdrplot.Summary `json:"latency_from_publication"`

	latency *hdrhistogram.Histogram
}

// Histogram is the latency histogram (nanoseconds).
func (r *Result) Histogram() *hdrhistogram.Histogram { return r.latency }

// harness is one run's state.
type harness struct {
	cfg      Config
	start    time.Time
	baseNs   int64 // start as Unix nanoseconds: timestampNs = baseNs + due
	warmupNs int64
	pipe     *pipeline.Pipeline
	jw       *journal.Writer
	flow     flow

	published, completed atomic.Int64
	failed               atomic.Pointer[error]

	// producer-owned
	sendLag           *hdrhistogram.Histogram
	eods, busy        int64
	measuredSent      int64
	lastPublishNs     int64
	newOrdersSinceEOD int64

	// publishedAtNs holds, at publishedIndex(cmdSeq), when the command was
	// published (nanoseconds since start), written by the producer before
	// the publication and read by the consumer after it has seen the
	// command's events. It holds more entries than commands can be in flight
	// (in the command ring, or with events in the event ring), so an entry
	// is not reused before it is read; atomics keep a lapped slot a wrong
	// number rather than a data race.
	publishedAtNs   []atomic.Int64
	publishedAtMask uint64

	// consumer-owned
	latency           *hdrhistogram.Histogram
	fromPublication   *hdrhistogram.Histogram
	measuredCompleted int64
	lastSeenNs        int64
	rejected, clamped int64
}

func (h *harness) sinceStartNs() int64 { return int64(time.Since(h.start)) }

func (c *Config) validate() error {
	switch {
	case !(c.RatePerSecond >= 0 && c.RatePerSecond <= RateMax):
		// Negated so that NaN fails it: a NaN rate ran as 0, as fast as
		// possible, under a rate the user did not ask for.
		return fmt.Errorf("pipeharness: rate %g outside [0, %d]", c.RatePerSecond, RateMax)
	case c.Duration <= 0 || c.Warmup < 0:
		return errors.New("pipeharness: duration must be positive and warm-up not negative")
	case !c.Wait.Valid():
		return errors.New("pipeharness: unknown wait strategy")
	case c.Mix > loadmix.Mixed:
		return errors.New("pipeharness: unknown mix")
	case c.Procs < 0:
		return fmt.Errorf("pipeharness: procs %d is negative", c.Procs)
	case c.Procs > ProcsMax:
		return fmt.Errorf("pipeharness: procs %d is more than %d", c.Procs, ProcsMax)
	}
	return nil
}

// Run builds a matcher, a journal (when on) and the pipeline, runs the
// schedule, drains and returns the figures.
func Run(cfg Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.CommandSlots = cmp.Or(cfg.CommandSlots, commandSlotsDefault)
	cfg.EventSlots = cmp.Or(cfg.EventSlots, eventSlotsDefault)
	cfg.dayOrdersMax = cmp.Or(cfg.dayOrdersMax, dayOrdersMax)
	if cfg.Procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.Procs))
	}
	h := &harness{cfg: cfg, warmupNs: int64(cfg.Warmup), flow: flow{mix: cfg.Mix},
		sendLag: hdrplot.NewHistogram(hdrplot.LowestNsPipeline), latency: hdrplot.NewHistogram(hdrplot.LowestNsPipeline),
		fromPublication: hdrplot.NewHistogram(hdrplot.LowestNsPipeline)}
	inFlightMax := uint64(cfg.CommandSlots + cfg.EventSlots + 1)
	h.publishedAtNs = make([]atomic.Int64, 1<<bits.Len64(inFlightMax))
	h.publishedAtMask = uint64(len(h.publishedAtNs) - 1)
	cleanup, err := h.build()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	barrier, own := h.pipe.AddEventConsumer()
	h.start = time.Now()
	h.baseNs = h.start.UnixNano()
	h.pipe.Start()
	var consumer sync.WaitGroup
	consumer.Add(1)
	go func() { defer consumer.Done(); h.consume(barrier, own) }()
	stopProgress := h.startProgress()
	h.produce()
	stopErr := h.pipe.Stop(stopTimeout)
	consumer.Wait()
	stopProgress()
	res := h.result()
	if stopErr != nil {
		res.LastErr = stopErr.Error()
	}
	if e := h.failed.Load(); e != nil {
		res.LastErr = (*e).Error()
	}
	return res, nil
}

// build opens the journal (when on), the matcher and the pipeline; the
// returned func closes and removes what it opened.
func (h *harness) build() (func(), error) {
	m, err := core.NewMatcher(core.Config{OrdersMax: ordersMax, ClOrdIDsMax: clOrdIDsMax, SessionsMax: 1, LevelsPerSideMax: 4096,
		Instruments: []core.InstrumentConfig{{ID: instrumentID, Symbol: "ACME", TickSize: "0.01", LotSize: 1, MinQty: 1,
			MaxQty: 1_000_000, RefPriceTicks: refPriceTicks, BandPercent: 10}}})
	if err != nil {
		return nil, err
	}
	cleanup := func() {}
	var jr pipeline.Journal
	var seqBase uint64
	if h.cfg.Journal {
		dir := h.cfg.JournalDir
		if dir == "" {
			if dir, err = os.MkdirTemp("", "fixvenue-pipeharness-*"); err != nil {
				return nil, err
			}
			tmp := dir
			cleanup = func() { os.RemoveAll(tmp) }
		}
		jw, err := journal.Open(dir, journal.Config{Policy: h.cfg.Fsync})
		if err != nil {
			cleanup()
			return nil, err
		}
		h.jw, jr, seqBase = jw, jw, jw.NextSeq()
		removeDir := cleanup
		cleanup = func() { jw.Close(); removeDir() }
	}
	p, err := pipeline.New(pipeline.Config{Matcher: m, Journal: jr, SeqBase: seqBase,
		CommandSlots: h.cfg.CommandSlots, EventSlots: h.cfg.EventSlots, Wait: h.cfg.Wait, ClaimTimeout: claimTimeout,
		PrefetchDistance: core.PrefetchDistance, UnlockedMatcher: h.cfg.UnlockedMatcher, OnFail: func(err error) { h.failed.CompareAndSwap(nil, &err) }})
	if err != nil {
		cleanup()
		return nil, err
	}
	h.pipe = p
	return cleanup, nil
}

// produce publishes the schedule.
func (h *harness) produce() {
	endNs := int64(h.cfg.Warmup + h.cfg.Duration)
	var intervalNs float64
	total := int64(commandsMax)
	if h.cfg.RatePerSecond > 0 {
		intervalNs = 1e9 / h.cfg.RatePerSecond
		total = min(total, int64(h.cfg.RatePerSecond*(h.cfg.Warmup+h.cfg.Duration).Seconds()))
	}
	yielded := true // whether the producer has yielded since it last published
	for j := int64(0); j < total; {
		if h.failed.Load() != nil {
			return
		}
		now := h.sinceStartNs()
		if intervalNs == 0 { // throughput run: due is now
			if now >= endNs {
				return
			}
			if !h.publish(j, now, now) {
				return
			}
			j++
			continue
		}
		due := int64(float64(j) * intervalNs)
		if wait := due - now; wait > 0 {
			switch {
			case h.cfg.Pace == PaceYield && !yielded:
				// Let what the last publication woke run before this
				// thread sleeps: the sleep below holds the processor, and
				// with one P nothing else would run until it ends.
				runtime.Gosched()
				yielded = true
			case h.cfg.Pace != PaceSpin && wait > sleepSlackNs:
				pace.Sleep(time.Duration(wait))
			case h.cfg.Pace == PaceYield:
				runtime.Gosched()
			}
			continue
		}
		if !h.publish(j, due, now) {
			return
		}
		j++
		yielded = false
	}
}

// publish claims a slot (retrying through back-pressure), encodes command j
// and publishes it; it reports false when the pipeline has stopped.
func (h *harness) publish(j, dueNs, nowNs int64) bool {
	if h.newOrdersSinceEOD >= h.cfg.dayOrdersMax {
		seq, slot, ok := h.claim()
		if !ok {
			return false
		}
		endOfDay(slot, h.pipe.SeqBase()+uint64(seq), h.baseNs+dueNs)
		h.commit(seq)
		h.eods++
		h.newOrdersSinceEOD = 0
	}
	seq, slot, ok := h.claim()
	if !ok {
		return false
	}
	if h.flow.encode(slot, j, h.pipe.SeqBase()+uint64(seq), h.baseNs+dueNs) {
		h.newOrdersSinceEOD++
	}
	h.lastPublishNs = h.commit(seq)
	h.published.Add(1)
	hdrplot.Record(h.sendLag, nowNs-dueNs)
	if dueNs >= h.warmupNs {
		h.measuredSent++
	}
	return true
}

// commit notes when command slot seq is published (for the latency from
// publication), publishes it and returns that instant.
func (h *harness) commit(seq int64) int64 {
	publishNs := h.sinceStartNs()
	h.publishedAtNs[uint64(seq)&h.publishedAtMask].Store(publishNs)
	h.pipe.Commands.Publish(seq)
	return publishNs
}

// claim takes a command slot; a full ring is back-pressure, so it retries
// (the schedule slips, and the latency shows it) until the pipeline fails.
func (h *harness) claim() (int64, []byte, bool) {
	for {
		seq, slot, err := h.pipe.Commands.Claim()
		if err == nil {
			return seq, slot, true
		}
		if !errors.Is(err, ring.ErrBusy) || h.failed.Load() != nil {
			return 0, nil, false
		}
		h.busy++
	}
}

// consume is the stand-in outbound consumer.
func (h *harness) consume(barrier *ring.Barrier, own *ring.Sequence) {
	events := h.pipe.Events
	durable := h.pipe.Durable()
	next := own.Load() + 1
	var pendingCause uint64
	var pendingTs, pendingSeen int64
	havePending := false
	for {
		avail, err := barrier.WaitFor(next)
		if err != nil {
			break
		}
		for ; next <= avail; next++ {
			slot := events.Slot(next)
			cause, ts := venue.CauseSeqOf(slot), venue.TimestampNsOf(slot)
			if h.cfg.Journal {
				waitDurable(durable, int64(cause))
			}
			now := h.sinceStartNs()
			if !havePending || cause != pendingCause {
				if havePending {
					h.record(pendingCause, pendingTs, pendingSeen)
				}
				pendingCause, pendingTs, havePending = cause, ts, true
			}
			pendingSeen = now
			if tid, err := venue.TemplateIDOf(slot, 0); err == nil && (tid == venue.OrderRejectedTemplateID || tid == venue.CancelRejectedTemplateID) {
				h.rejected++
			}
		}
		own.Store(avail)
	}
	if havePending {
		h.record(pendingCause, pendingTs, pendingSeen)
	}
}

// record closes command cause: its last event was seen at seenNs.
func (h *harness) record(cause uint64, timestampNs, seenNs int64) {
	h.completed.Add(1)
	dueNs := timestampNs - h.baseNs
	if dueNs < h.warmupNs {
		return
	}
	h.measuredCompleted++
	h.lastSeenNs = max(h.lastSeenNs, seenNs)
	if hdrplot.Record(h.latency, seenNs-dueNs) {
		h.clamped++
	}
	publishNs := h.publishedAtNs[(cause-h.pipe.SeqBase())&h.publishedAtMask].Load()
	hdrplot.Record(h.fromPublication, seenNs-publishNs)
}

// waitDurable blocks until command seq cause is durable, backing off from
// spinning to yielding to short sleeps like the gateway's outbound.
func waitDurable(durable *ring.Sequence, cause int64) {
	for i := 0; durable.Load() < cause; i++ {
		switch {
		case i < durableSpinTries:
		case i < durableYieldTries:
			runtime.Gosched()
		default:
			time.Sleep(durableSleep)
		}
	}
}

func (h *harness) startProgress() func() {
	if h.cfg.Progress == nil {
		return func() {}
	}
	var lastPub, lastDone int64
	return progress.Every(time.Second, func() {
		pub, comp := h.published.Load(), h.completed.Load()
		fmt.Fprintf(h.cfg.Progress, "pipeline: %5.1fs  published %d (%d/s)  completed %d (%d/s)  in flight %d\n",
			time.Since(h.start).Seconds(), pub, pub-lastPub, comp, comp-lastDone, pub-comp)
		lastPub, lastDone = pub, comp
	})
}

func (h *harness) result() *Result {
	c := &h.cfg
	jr := "off"
	if c.Journal {
		jr = c.Fsync.String()
	}
	res := &Result{RateTarget: c.RatePerSecond, Wait: c.Wait.String(), LockedOS: !c.UnlockedMatcher, Journal: jr, Mix: c.Mix.String(), Pace: c.Pace.String(),
		DurationS: c.Duration.Seconds(), WarmupS: c.Warmup.Seconds(), Commands: h.published.Load(), Completed: h.completed.Load(),
		EndOfDays: h.eods, Rejected: h.rejected, ClaimsBusy: h.busy, Clamped: h.clamped, ClosedLoop: c.RatePerSecond == 0,
		NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), latency: h.latency,
		Latency: hdrplot.Summarize(h.latency), SendLag: hdrplot.Summarize(h.sendLag),
		FromPublication: hdrplot.Summarize(h.fromPublication)}
	res.NoEventCmds = res.Commands - res.Completed
	if w := float64(h.lastPublishNs-h.warmupNs) / 1e9; w > 0 {
		res.SendRate = float64(h.measuredSent) / w
	}
	if w := float64(h.lastSeenNs-h.warmupNs) / 1e9; w > 0 {
		res.Throughput = float64(h.measuredCompleted) / w
	}
	return res
}
