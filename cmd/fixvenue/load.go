package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fixvenue/fixvenue/bench/hdrplot"
	"github.com/fixvenue/fixvenue/bench/loadgen"
	"github.com/fixvenue/fixvenue/bench/loadmix"
)

func cmdLoad(args []string) int {
	d := loadgen.DefaultConfig()
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: fixvenue load [options]\n\nOpen-loop FIX 4.4 load: order i is due at start+i/rate; latency runs from that due time to its first ExecutionReport.\n\n"+loadExitStatus+"\noptions:\n")
		fs.PrintDefaults()
	}
	addr := fs.String("addr", d.Addr, "venue FIX address")
	sessions := fs.Int("sessions", d.Sessions, "number of FIX sessions")
	first := fs.Int("first", d.FirstSession, "number of the first session's CompID")
	prefix := fs.String("sender-prefix", d.SenderPrefix, "SenderCompID prefix (sessions are PREFIX<first>…)")
	target := fs.String("target", d.TargetCompID, "TargetCompID (the venue)")
	password := fs.String("password", "", "Password (554) sent on Logon")
	rate := fs.Float64("rate", d.RatePerSecond, "offered NewOrderSingle per second over all sessions (the start rate with --ramp)")
	duration := fs.Duration("duration", d.Duration, "measured duration of the schedule")
	warmup := fs.Duration("warmup", d.Warmup, "unrecorded warm-up before it")
	drain := fs.Duration("drain", d.Drain, "how long to wait for answers after the last due time")
	mix := fs.String("mix", d.Mix.String(), "passive | cross | mixed")
	symbol := fs.String("symbol", d.Symbol, "instrument symbol")
	price := fs.String("price", d.Price, "price of crossing orders (inside the instrument's band)")
	spread := fs.String("spread", d.Spread, "passive orders rest at price-spread (buys) and price+spread (sells)")
	qty := fs.Int64("qty", d.Qty, "order quantity")
	heartbeat := fs.Int("heartbeat", d.HeartBtIntS, "HeartBtInt in seconds")
	ramp := fs.Bool("ramp", false, "step the rate up by --ramp-step to --ramp-max and report the highest rate held")
	rampStep := fs.Float64("ramp-step", 0, "rate step of --ramp (default: the start rate)")
	rampMax := fs.Float64("ramp-max", 0, "highest rate of --ramp (default: 10 steps)")
	p99Max := fs.Duration("p99-max", 5*time.Millisecond, "p99 a run (or ramp step) must stay under to hold; a single run that does not hold exits with status 3")
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	hgrm := fs.String("hgrm", "", "write the latency distribution to this .hgrm file (ramp: one file per step, FILE-<rate>.hgrm)")
	svg := fs.String("svg", "", "write an SVG percentile plot (ramp: one line per step)")
	label := fs.String("label", "", "title of the plot")
	quiet := fs.Bool("quiet", false, "no progress line on stderr")
	consoleStreams := fs.Int("console-streams", 0, "hold this many web console event streams open during the run, as that many browsers would")
	consoleURL := fs.String("console-url", "http://127.0.0.1:9465/stream/book-ACME", "the console stream --console-streams opens")
	if exit, done := parseFlags(fs, args, os.Stdout, os.Stderr); done {
		return exit
	}
	if !*ramp && (flagSet(fs, "ramp-step") || flagSet(fs, "ramp-max")) {
		// A single run at --rate would have ignored them: the operator
		// meant a ramp and would read one run's verdict as the ramp's.
		fmt.Fprintln(os.Stderr, "fixvenue load: --ramp-step and --ramp-max step a --ramp: give --ramp, or leave them out for one run at --rate")
		return 2
	}
	m, err := loadmix.Parse(*mix)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixvenue load:", err)
		return 2
	}
	cfg := loadgen.Config{Addr: *addr, Sessions: *sessions, FirstSession: *first, SenderPrefix: *prefix, TargetCompID: *target,
		Password: *password, RatePerSecond: *rate, Duration: *duration, Warmup: *warmup, Drain: *drain, Mix: m,
		Symbol: *symbol, Price: *price, Spread: *spread, Qty: *qty, HeartBtIntS: *heartbeat, LogonTimeout: d.LogonTimeout}
	if !*quiet {
		cfg.Progress = os.Stderr
	}
	if *consoleStreams < 0 || *consoleStreams > consoleStreamsMax {
		fmt.Fprintf(os.Stderr, "fixvenue load: --console-streams %d is outside [0, %d]\n", *consoleStreams, consoleStreamsMax)
		return 2
	}
	if !(*p99Max > 0) {
		// A run is held when its p99 is under --p99-max: with none above
		// zero no run could hold, and a single run exited 3 after it had
		// loaded the venue for nothing (a ramp refused it).
		fmt.Fprintf(os.Stderr, "fixvenue load: --p99-max must be positive, got %v\n", *p99Max)
		return 2
	}
	out := loadOutput{json: *jsonOut, hgrm: *hgrm, svg: *svg, label: *label, p99MaxUs: float64(*p99Max) / 1e3}
	rc := loadgen.RampConfig{Base: cfg, StepRate: *rampStep, MaxRate: *rampMax, P99MaxUs: out.p99MaxUs}
	if rc.StepRate == 0 {
		rc.StepRate = cfg.RatePerSecond
	}
	if rc.MaxRate == 0 {
		rc.MaxRate = cfg.RatePerSecond + 9*rc.StepRate
	}
	// Options no run can take (a rate, a session count, a quantity out of
	// bounds) are a usage error, said before anything is dialled: the run
	// refused them too, as a run that failed (exit 1).
	validate := cfg.Validate
	if *ramp {
		validate = rc.Validate
	}
	if err := validate(); err != nil {
		fmt.Fprintln(os.Stderr, "fixvenue load:", err)
		return 2
	}
	// The files are written at the end of the run: a path that cannot be
	// written is said now, not after minutes of load whose figures it then
	// lost.
	outputs := []outputFile{{"hgrm", *hgrm}, {"svg", *svg}}
	if *ramp && *hgrm != "" {
		rates, _ := rc.Rates() // validated above
		outputs = outputs[1:]
		for _, r := range rates {
			outputs = append(outputs, outputFile{"hgrm", stepFile(*hgrm, r)})
		}
	}
	if err := checkOutputs(outputs...); err != nil {
		fmt.Fprintln(os.Stderr, "fixvenue load:", err)
		return 2
	}
	ctx, stop := interruptible()
	defer stop()
	if *consoleStreams > 0 {
		cl := startConsoleStreams(ctx, *consoleURL, *consoleStreams)
		defer func() { fmt.Fprintln(os.Stderr, cl.Stop()) }()
	}
	if *ramp {
		return out.ramp(ctx, rc)
	}
	res, err := loadgen.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixvenue load:", err)
		return 1
	}
	return out.single(res)
}

// duplicateSignalWindow is how soon after the first a signal is the same
// Ctrl-C delivered again: the terminal signals the whole process group,
// and timeout(1), which the bench scripts run the load under with
// --foreground, forwards its own copy to the load too.
const duplicateSignalWindow = 500 * time.Millisecond

// interruptible returns a context that the first SIGINT or SIGTERM ends,
// which stops the run (it logs its sessions out and prints what it
// measured); one more, past duplicateSignalWindow, ends the process at
// once, as it would without the handler. Ended by the copy timeout(1)
// forwards, the load left no figures (bench-fix.sh's result was empty).
// stop ends the handling.
func interruptible() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var first time.Time
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				switch {
				case first.IsZero():
					first = time.Now()
					cancel()
				case time.Since(first) >= duplicateSignalWindow:
					signal.Reset(sig)
					if s, ok := sig.(syscall.Signal); ok {
						_ = syscall.Kill(os.Getpid(), s)
					}
					return
				}
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// loadExitStatus is the exit status part of load's usage (doc.go, README).
const loadExitStatus = `Exit status: 0 for a run that held its rate, and for a ramp that ran to the step it could not
hold or to --ramp-max; 3 for a run that completed without holding it (answers lost, a session
failed, every order refused, or p99 over --p99-max); 1 for one that could not run, and for a run
or ramp that a signal or (a ramp) a step's error stopped, which prints what it measured without a
verdict; 2 for options no run can take, or an --hgrm or --svg file that cannot be written, said
before anything is dialled.
`

// loadOutput writes what a load run produced.
type loadOutput struct {
	json             bool
	hgrm, svg, label string
	p99MaxUs         float64
}

// exitNotHeld is the exit status of a run that completed but did not hold
// the rate: answers lost, a session failed, or p99 over --p99-max.
const exitNotHeld = 3

func (o loadOutput) single(res *loadgen.Result) int {
	if o.json {
		printJSON(os.Stdout, res)
	} else {
		res.Print(os.Stdout)
	}
	// Written before the verdict: a run interrupted still shows (and keeps)
	// the figures of what it sent.
	if code := o.writeFiles(res); code != 0 {
		return code
	}
	if res.Interrupted {
		// Stopped by a signal, the run has no verdict: it said NOT HELD,
		// exit 3, its unsent orders counted as lost.
		if !o.json {
			fmt.Fprintf(os.Stdout, "verdict  none: interrupted with %d of %d orders sent\n", res.OrdersSent, res.OrdersPlan)
		}
		return 1
	}
	// A run whose every order was refused measured no order path.
	var orderRejects int64
	for k, n := range res.Rejects {
		if strings.HasPrefix(k, "ExecutionReport 103=") {
			orderRejects += n
		}
	}
	allRefused := res.OrdersSent > 0 && orderRejects >= res.OrdersSent
	if res.Lost() > 0 || len(res.SessionErrors) > 0 || res.Latency.P99Us > o.p99MaxUs || allRefused {
		if !o.json {
			fmt.Fprintf(os.Stdout, "verdict  NOT HELD (lost %d, failed sessions %d, p99 %s against --p99-max %s, %d of %d orders refused)\n",
				res.Lost(), len(res.SessionErrors), hdrplot.FormatUs(res.Latency.P99Us), hdrplot.FormatUs(o.p99MaxUs), orderRejects, res.OrdersSent)
		}
		return exitNotHeld
	}
	if !o.json {
		fmt.Fprintf(os.Stdout, "verdict  held (nothing lost, p99 under %s)\n", hdrplot.FormatUs(o.p99MaxUs))
	}
	return 0
}

// writeFiles writes the --hgrm and --svg files of a single run; it returns
// 1 when one could not be written, said on stderr.
func (o loadOutput) writeFiles(res *loadgen.Result) int {
	if o.hgrm != "" {
		if err := hdrplot.WriteHgrmFile(o.hgrm, res.Histogram()); err != nil {
			fmt.Fprintln(os.Stderr, "fixvenue load:", err)
			return 1
		}
	}
	if o.svg != "" {
		if err := o.writeSVG([]*loadgen.Result{res}); err != nil {
			fmt.Fprintln(os.Stderr, "fixvenue load:", err)
			return 1
		}
	}
	return 0
}

func (o loadOutput) ramp(ctx context.Context, rc loadgen.RampConfig) int {
	rr, err := loadgen.Ramp(ctx, rc, func(s loadgen.RampStep) {
		verdict := "held"
		if s.Result.Interrupted {
			verdict = "interrupted"
		} else if !s.Passed {
			verdict = "FAILED: " + s.Why
		}
		if !o.json {
			s.Result.Print(os.Stdout)
			fmt.Fprintf(os.Stdout, "step     %.0f orders/s %s\n\n", s.Result.RateTarget, verdict)
		}
		if o.hgrm != "" {
			if err := hdrplot.WriteHgrmFile(stepFile(o.hgrm, s.Result.RateTarget), s.Result.Histogram()); err != nil {
				fmt.Fprintln(os.Stderr, "fixvenue load:", err)
			}
		}
	})
	interrupted := errors.Is(err, loadgen.ErrInterrupted)
	if err != nil && (!interrupted || rr == nil || len(rr.Steps) == 0) {
		fmt.Fprintln(os.Stderr, "fixvenue load:", err)
		if rr == nil || len(rr.Steps) == 0 {
			return 1
		}
	}
	// A ramp that a step's error or a signal stopped shows the steps it
	// ran, and exits 1: the rate it held is the highest below the stop, not
	// the venue's (interrupted, it exited 0 with that rate, the step it
	// stopped shown FAILED with its unsent orders as answers lost).
	switch {
	case o.json:
		printJSON(os.Stdout, rr)
	case interrupted:
		at := len(rr.Steps) // the step the signal stopped, or the one it kept from starting
		if !rr.Steps[at-1].Result.Interrupted {
			at++
		}
		fmt.Fprintf(os.Stdout, "ramp: interrupted at step %d; highest rate held before it with p99 ≤ %s and nothing lost: %.0f orders/s\n",
			at, hdrplot.FormatUs(rr.P99MaxUs), rr.HeldRate)
	case err != nil:
		fmt.Fprintf(os.Stdout, "ramp: stopped by the error above at step %d; highest rate held before it with p99 ≤ %s and nothing lost: %.0f orders/s\n",
			len(rr.Steps)+1, hdrplot.FormatUs(rr.P99MaxUs), rr.HeldRate)
	default:
		fmt.Fprintf(os.Stdout, "ramp: highest rate held with p99 ≤ %s and nothing lost: %.0f orders/s\n", hdrplot.FormatUs(rr.P99MaxUs), rr.HeldRate)
	}
	if o.svg != "" {
		results := make([]*loadgen.Result, 0, len(rr.Steps))
		for _, s := range rr.Steps {
			results = append(results, s.Result)
		}
		if err := o.writeSVG(results); err != nil {
			fmt.Fprintln(os.Stderr, "fixvenue load:", err)
			return 1
		}
	}
	if err != nil {
		return 1
	}
	return 0
}

// stepFile turns "x.hgrm" into "x-5000.hgrm".
func stepFile(path string, rate float64) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + strconv.FormatFloat(rate, 'f', -1, 64) + ext
}

func (o loadOutput) writeSVG(results []*loadgen.Result) error {
	if len(results) > hdrplot.SeriesMax {
		results = results[len(results)-hdrplot.SeriesMax:]
	}
	series := make([]hdrplot.Series, 0, len(results))
	for _, r := range results {
		series = append(series, hdrplot.Series{Label: fmt.Sprintf("%.0f orders/s (p99 %s, lost %d)", r.RateTarget, hdrplot.FormatUs(r.Latency.P99Us), r.Lost()),
			Points: hdrplot.Distribution(r.Histogram())})
	}
	title := o.label
	if title == "" {
		r := results[0]
		title = fmt.Sprintf("fixvenue load: %d session(s), %s, order → first ExecutionReport", r.Sessions, r.Mix)
	}
	return writeSVGFile(o.svg, hdrplot.PlotConfig{Title: title, Subtitle: "latency from each order's due time (open loop); " + time.Now().UTC().Format("2006-01-02")}, series)
}

// outputFile is a file a run writes once it ends, and the flag naming it.
type outputFile struct{ flag, path string }

// checkOutputs tries each file a run will write (a path "" is none) before
// the run starts, and names the first that cannot be written with its flag.
// A file there is opened for writing and left as it is; one that is not is
// created and removed again, so that a run that then fails leaves nothing.
func checkOutputs(files ...outputFile) error {
	for _, o := range files {
		if o.path == "" {
			continue
		}
		f, err := os.OpenFile(o.path, os.O_WRONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			if f, err = os.OpenFile(o.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666); err == nil {
				f.Close()
				err = os.Remove(o.path)
			}
		} else if err == nil {
			err = f.Close()
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("--%s %s cannot be written: %w", o.flag, o.path, err)
		}
	}
	return nil
}

func writeSVGFile(path string, cfg hdrplot.PlotConfig, series []hdrplot.Series) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := hdrplot.WriteSVG(f, cfg, series); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
