package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fixvenue/fixvenue/bench/hdrplot"
	"github.com/fixvenue/fixvenue/bench/loadgen"
	"github.com/fixvenue/fixvenue/bench/loadmix"
	"github.com/fixvenue/fixvenue/bench/pipeharness"
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/journal"
)

func benchUsage(w io.Writer) {
	fmt.Fprint(w, `usage: fixvenue bench <harness> [options]

harnesses:
  pipeline  open-loop in-process pipeline: command ring → journal ∥ matcher → event ring → outbound stand-in
  plot      draw .hgrm files as one SVG percentile plot (fixvenue bench plot --out F [--title T] LABEL=FILE.hgrm ...)
  echo      a trivial raw-FIX venue that answers every order at once, to calibrate load (fixvenue bench echo --addr A);
            with --journal DIR it answers each order only once it is durable in a journal there (the floor of a durable venue)
  table     print JSON results of "load --json" or "bench pipeline --json" as a Markdown table (fixvenue bench table FILE.json ...)

Run "fixvenue bench <harness> -h" for a harness's options.
`)
}

func cmdBench(args []string) int {
	if len(args) == 0 {
		benchUsage(os.Stderr)
		return 2
	}
	if asksHelp(args[0]) {
		benchUsage(os.Stdout)
		return 0
	}
	switch args[0] {
	case "pipeline":
		return cmdBenchPipeline(args[1:])
	case "plot":
		return cmdBenchPlot(args[1:])
	case "table":
		return cmdBenchTable(args[1:])
	case "echo":
		return cmdBenchEcho(args[1:])
	}
	if msg := unknownCommand("fixvenue bench", args, []string{"pipeline", "plot", "table", "echo"}); strings.HasPrefix(args[0], "-") {
		fmt.Fprint(os.Stderr, msg)
	} else {
		fmt.Fprintf(os.Stderr, "fixvenue bench: unknown harness %q\n\n", args[0])
	}
	benchUsage(os.Stderr)
	return 2
}

func cmdBenchPipeline(args []string) int {
	fs := flag.NewFlagSet("bench pipeline", flag.ContinueOnError)
	rate := fs.Float64("rate", 100_000, "offered commands per second; 0: as fast as possible (throughput)")
	duration := fs.Duration("duration", 10*time.Second, "measured duration")
	warmup := fs.Duration("warmup", 2*time.Second, "unrecorded warm-up")
	var cfg pipeharness.Config
	fs.TextVar(&cfg.Wait, "wait", ring.SpinPark, "wait strategy of the rings: spin | yield | park | spinpark")
	journalOn := fs.String("journal", "off", "on | off")
	fs.TextVar(&cfg.Fsync, "fsync", journal.PolicyBatch, "journal policy when on: batch | none")
	journalDir := fs.String("journal-dir", "", "journal directory (default: a temporary one, removed afterwards)")
	mix := fs.String("mix", "passive", "passive | cross | mixed")
	fs.TextVar(&cfg.Pace, "pace", pipeharness.PaceYield, "producer pacing: yield (sleep until due; short waits on the clock yield the processor, as a gateway goroutine gives it up after publishing) | sleep (short waits loop on the clock without yielding) | spin")
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	hgrm := fs.String("hgrm", "", "write the latency distribution to this .hgrm file")
	svg := fs.String("svg", "", "write an SVG percentile plot of this run")
	quiet := fs.Bool("quiet", false, "no progress line on stderr")
	lockOS := fs.Bool("lock-os-thread", false, "lock the matcher goroutine to its OS thread (unset: locked, as the venue does)")
	procs := fs.Int("procs", 0, fmt.Sprintf("GOMAXPROCS for the run, at most %d (0: leave it, one P per CPU unless the GOMAXPROCS variable says otherwise)", pipeharness.ProcsMax))
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	traceFile := fs.String("trace", "", "write a runtime execution trace of the run to this file (large: for short runs)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: fixvenue bench pipeline [options]\n\noptions:\n")
		fs.PrintDefaults()
	}
	if exit, done := parseFlags(fs, args, os.Stdout, os.Stderr); done {
		return exit
	}
	engine := config.Engine{WaitStrategy: config.WaitSetting{Strategy: cfg.Wait}}
	if flagSet(fs, "lock-os-thread") {
		engine.LockOSThread = lockOS
	}
	*lockOS = engine.MatcherThread(config.UsableCPUs()).Locked // the venue's rule
	// Written at the end of the run: a path that cannot be written is said
	// before it, not after the figures are measured.
	if err := checkOutputs(outputFile{"hgrm", *hgrm}, outputFile{"svg", *svg}); err != nil {
		return benchFail(err)
	}
	stopProfiles, err := startProfiles("fixvenue bench pipeline", *cpuProfile, *traceFile)
	if err != nil {
		return 2
	}
	defer stopProfiles()
	cfg.RatePerSecond, cfg.Duration, cfg.Warmup, cfg.JournalDir = *rate, *duration, *warmup, *journalDir
	cfg.UnlockedMatcher, cfg.Procs = !*lockOS, *procs
	switch *journalOn {
	case "on":
		cfg.Journal = true
	case "off":
	default:
		return benchFail(fmt.Errorf("--journal %q: on or off", *journalOn))
	}
	if cfg.Mix, err = loadmix.Parse(*mix); err != nil {
		return benchFail(err)
	}
	if !*quiet {
		cfg.Progress = os.Stderr
	}
	res, err := pipeharness.Run(cfg)
	if err != nil {
		return benchFail(err)
	}
	if *jsonOut {
		printJSON(os.Stdout, res)
	} else {
		printPipeline(os.Stdout, res)
	}
	if *hgrm != "" {
		if err := hdrplot.WriteHgrmFile(*hgrm, res.Histogram()); err != nil {
			return benchFail(err)
		}
	}
	if *svg != "" {
		title := fmt.Sprintf("fixvenue pipeline: wait %s, journal %s, %s", res.Wait, res.Journal, res.Mix)
		series := []hdrplot.Series{{Label: pipelineLabel(res), Points: hdrplot.Distribution(res.Histogram())}}
		if err := writeSVGFile(*svg, hdrplot.PlotConfig{Title: title, Subtitle: "due time → last event seen by the outbound stand-in; " + time.Now().UTC().Format("2006-01-02")}, series); err != nil {
			return benchFail(err)
		}
	}
	if res.LastErr != "" {
		return 1
	}
	return 0
}

func pipelineLabel(r *pipeharness.Result) string {
	if r.ClosedLoop {
		return fmt.Sprintf("max rate (%.0f/s)", r.Throughput)
	}
	return fmt.Sprintf("%.0f/s (p99 %s)", r.RateTarget, hdrplot.FormatUs(r.Latency.P99Us))
}

func benchFail(err error) int {
	fmt.Fprintln(os.Stderr, "fixvenue bench:", err)
	return 2
}

func printPipeline(w io.Writer, r *pipeharness.Result) {
	offered := fmt.Sprintf("%.0f commands/s offered", r.RateTarget)
	if r.ClosedLoop {
		offered = "as fast as possible"
	}
	locked := "locked"
	if !r.LockedOS {
		locked = "unlocked"
	}
	fmt.Fprintf(w, "fixvenue bench pipeline: %s, wait %s, matcher thread %s, journal %s, %s mix, pace %s, %s (warm-up %s); %d CPUs, GOMAXPROCS %d\n",
		offered, r.Wait, locked, r.Journal, r.Mix, r.Pace, time.Duration(r.DurationS*1e9), time.Duration(r.WarmupS*1e9), r.NumCPU, r.GOMAXPROCS)
	l := r.Latency
	what := "due time → last event seen by the outbound stand-in"
	if r.ClosedLoop {
		what = "publication → last event (closed loop: a throughput run, not an open-loop latency)"
	}
	fmt.Fprintf(w, "latency  %s (%d commands):\n", what, l.Count)
	fmt.Fprintf(w, "         p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		hdrplot.FormatUs(l.P50Us), hdrplot.FormatUs(l.P90Us), hdrplot.FormatUs(l.P99Us), hdrplot.FormatUs(l.P999Us), hdrplot.FormatUs(l.MaxUs))
	if !r.ClosedLoop {
		f := r.FromPublication
		fmt.Fprintf(w, "         from publication (the producer's lateness left out): p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
			hdrplot.FormatUs(f.P50Us), hdrplot.FormatUs(f.P90Us), hdrplot.FormatUs(f.P99Us), hdrplot.FormatUs(f.P999Us), hdrplot.FormatUs(f.MaxUs))
	}
	fmt.Fprintf(w, "send     %.0f commands/s published; producer send lag p50 %s  p99 %s  max %s\n",
		r.SendRate, hdrplot.FormatUs(r.SendLag.P50Us), hdrplot.FormatUs(r.SendLag.P99Us), hdrplot.FormatUs(r.SendLag.MaxUs))
	fmt.Fprintf(w, "done     %.0f commands/s completed; %d commands, %d without events, %d rejected events, %d end-of-days, %d busy claims\n",
		r.Throughput, r.Commands, r.NoEventCmds, r.Rejected, r.EndOfDays, r.ClaimsBusy)
	if r.LastErr != "" {
		fmt.Fprintf(w, "error    %s\n", r.LastErr)
	}
}

// cmdBenchPlot draws several .hgrm files as one plot, one line per file.
func cmdBenchPlot(args []string) int {
	fs := flag.NewFlagSet("bench plot", flag.ContinueOnError)
	out := fs.String("out", "", "SVG file to write")
	title := fs.String("title", "fixvenue latency", "plot title")
	subtitle := fs.String("subtitle", "", "second line under the title")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: fixvenue bench plot --out FILE.svg [--title T] [--subtitle S] [LABEL=]FILE.hgrm ...\n\noptions:\n")
		fs.PrintDefaults()
	}
	files, exit, done := parseArgs(fs, args, os.Stdout, os.Stderr)
	if done {
		return exit
	}
	if *out == "" || len(files) == 0 {
		fs.Usage()
		return 2
	}
	var series []hdrplot.Series
	for _, arg := range files {
		label, path, ok := strings.Cut(arg, "=")
		if !ok {
			label, path = strings.TrimSuffix(filepath.Base(arg), ".hgrm"), arg
		}
		f, err := os.Open(path)
		if err != nil {
			return benchFail(err)
		}
		pts, err := hdrplot.ReadHgrm(f)
		f.Close()
		if err != nil {
			return benchFail(fmt.Errorf("%s: %w", path, err))
		}
		series = append(series, hdrplot.Series{Label: label, Points: pts})
	}
	if err := writeSVGFile(*out, hdrplot.PlotConfig{Title: *title, Subtitle: *subtitle}, series); err != nil {
		return benchFail(err)
	}
	return 0
}

// cmdBenchTable prints saved JSON results as Markdown table rows, one per
// file, with a header for each kind of result.
func cmdBenchTable(args []string) int {
	// No options: the flag set answers -h and refuses a mistyped option
	// instead of reading it as a file name ("--" before a file named -x).
	fs := flag.NewFlagSet("bench table", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: fixvenue bench table FILE.json ...\n\nprints the results of \"load --json\" or \"bench pipeline --json\" as Markdown table rows, one per file\n")
	}
	files, exit, done := parseArgs(fs, args, os.Stdout, os.Stderr)
	if done {
		return exit
	}
	if len(files) == 0 {
		fs.Usage()
		return 2
	}
	us := hdrplot.FormatUs
	lastKind := ""
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			return benchFail(err)
		}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(b, &probe); err != nil {
			return benchFail(fmt.Errorf("%s: %w", path, err))
		}
		kind := ""
		_, sessions := probe["sessions"]
		_, rate := probe["rate_target_per_s"]
		if _, ok := probe["wait"]; ok {
			kind = "pipeline"
		} else if sessions && rate {
			kind = "load"
		} else {
			// Any other JSON object decoded as a load result of zeros and
			// was printed as a row of them, exit 0.
			return benchFail(fmt.Errorf("%s: not the result of one run of load --json or bench pipeline --json (a ramp's has its runs under \"steps\")", path))
		}
		if kind != lastKind {
			if kind == "pipeline" {
				fmt.Println("| wait | journal | Ps | offered/s | sent/s | p50 | p90 | p99 | p99.9 | max | completed/s | send lag p99 |")
				fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
			} else {
				fmt.Println("| sessions | mix | offered/s | sent/s | p50 | p90 | p99 | p99.9 | max | ERs/s | lost | rejects | send lag p99 |")
				fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
			}
			lastKind = kind
		}
		if kind == "pipeline" {
			var r pipeharness.Result
			if err := json.Unmarshal(b, &r); err != nil {
				return benchFail(fmt.Errorf("%s: %w", path, err))
			}
			offered := fmt.Sprintf("%.0f", r.RateTarget)
			if r.ClosedLoop {
				offered = "max"
			}
			l := r.Latency
			fmt.Printf("| %s | %s | %d | %s | %.0f | %s | %s | %s | %s | %s | %.0f | %s |\n", r.Wait, r.Journal, r.GOMAXPROCS, offered, r.SendRate,
				us(l.P50Us), us(l.P90Us), us(l.P99Us), us(l.P999Us), us(l.MaxUs), r.Throughput, us(r.SendLag.P99Us))
			continue
		}
		var r loadgen.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return benchFail(fmt.Errorf("%s: %w", path, err))
		}
		l := r.Latency
		fmt.Printf("| %d | %s | %.0f | %.0f | %s | %s | %s | %s | %s | %.0f | %d | %d | %s |\n", r.Sessions, r.Mix, r.RateTarget, r.SendRate,
			us(l.P50Us), us(l.P90Us), us(l.P99Us), us(l.P999Us), us(l.MaxUs), r.ERRate, r.Lost(), r.RejectsTotal, us(r.SendLag.P99Us))
	}
	return 0
}

// cmdBenchEcho serves the calibration venue until interrupted.
func cmdBenchEcho(args []string) int {
	fs := flag.NewFlagSet("bench echo", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:9879", "listen address")
	sender := fs.String("sender", "VENUE", "the echo venue's SenderCompID")
	dir := fs.String("journal", "", "journal every order and cancel in this directory (group commit, fdatasync) and answer each only once it is durable")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: fixvenue bench echo [options]\n\noptions:\n")
		fs.PrintDefaults()
	}
	if exit, done := parseFlags(fs, args, os.Stdout, os.Stderr); done {
		return exit
	}
	if strings.TrimSpace(*addr) == "" {
		// net.Listen takes "" as every interface on a port the OS chooses:
		// an echo venue beyond loopback nobody asked for.
		fmt.Fprintln(os.Stderr, "fixvenue bench echo: --addr is empty")
		return 2
	}
	var w *journal.Writer
	if *dir != "" {
		var err error
		if w, err = journal.Open(*dir, journal.Config{PayloadBytesMax: journal.PayloadBytesLimit}); err != nil {
			return benchFail(err)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		if w != nil {
			w.Close()
		}
		return benchFail(err)
	}
	var e *loadgen.Echo
	if w != nil {
		e = loadgen.NewDurableEcho(ln, *sender, w)
		fmt.Fprintf(os.Stderr, "fixvenue: durable echo venue on %s (answers every order once it is durable in %s; no matching); Ctrl-C to stop\n", e.Addr(), *dir)
	} else {
		e = loadgen.NewEcho(ln, *sender)
		fmt.Fprintf(os.Stderr, "fixvenue: echo venue on %s (answers every order at once; no matching, no journal); Ctrl-C to stop\n", e.Addr())
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	if err := e.Close(); err != nil {
		return benchFail(err)
	}
	return 0
}

// flagSet says whether the command line gave flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
