package loadgen

import (
	"context"
	"errors"
	"fmt"
)

// RampStepsMax bounds the steps of a ramp.
const RampStepsMax = 64

// ErrInterrupted is the error of a ramp whose context ended before its
// last step did.
var ErrInterrupted = errors.New("interrupted")

// RampConfig steps the offered rate up from Base.RatePerSecond by StepRate
// until MaxRate, or until a step fails.
type RampConfig struct {
	Base     Config
	StepRate float64
	MaxRate  float64
	// P99MaxUs is the p99 a step must stay under to pass; a step also fails
	// with any lost answer, unsent order or failed session.
	P99MaxUs float64
}

// RampStep is one rate of a ramp.
type RampStep struct {
	Result *Result `json:"result"`
	Passed bool    `json:"passed"`
	Why    string  `json:"why,omitempty"`
}

// RampResult is the outcome of a ramp.
type RampResult struct {
	Steps []RampStep `json:"steps"`
	// HeldRate is the highest offered rate that passed with every lower
	// step passing too; 0 when the first step failed.
	HeldRate float64 `json:"held_rate_per_s"`
	P99MaxUs float64 `json:"p99_max_us"`
}

// Ramp runs one open-loop run per rate, in increasing order, and stops at
// the first step that fails. onStep, when not nil, sees every step as it
// ends, an interrupted one too (Why "interrupted"); a ramp whose ctx ends
// returns the steps it ran and an error wrapping ErrInterrupted. Each step
// logs on afresh and uses its own ClOrdID prefix. A ramp that could not run
// every step (Validate) is refused before the first.
func Ramp(ctx context.Context, rc RampConfig, onStep func(RampStep)) (*RampResult, error) {
	if err := rc.Validate(); err != nil {
		return nil, err
	}
	rates, _ := rc.Rates()
	out := &RampResult{P99MaxUs: rc.P99MaxUs}
	for i, rate := range rates {
		if ctx.Err() != nil {
			return out, fmt.Errorf("ramp interrupted before the step %.0f/s: %w", rate, ErrInterrupted)
		}
		cfg := rc.Base
		cfg.RatePerSecond = rate
		if cfg.RunID != "" {
			cfg.RunID = cfg.RunID[:runIDBytes-1] + string("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[i%36])
		}
		res, err := Run(ctx, cfg)
		if err != nil {
			return out, fmt.Errorf("ramp step %.0f/s: %w", rate, err)
		}
		step := RampStep{Result: res, Passed: true}
		switch {
		case res.Interrupted:
			step.Passed, step.Why = false, "interrupted"
		case len(res.SessionErrors) > 0:
			step.Passed, step.Why = false, "session failed: "+res.SessionErrors[0]
		case res.Lost() > 0:
			step.Passed, step.Why = false, fmt.Sprintf("%d answers lost", res.Lost())
		case res.Latency.P99Us > rc.P99MaxUs:
			step.Passed, step.Why = false, fmt.Sprintf("p99 %.0fµs over %.0fµs", res.Latency.P99Us, rc.P99MaxUs)
		}
		out.Steps = append(out.Steps, step)
		if onStep != nil {
			onStep(step)
		}
		if res.Interrupted {
			// Neither held nor failed: the rate held is the highest below
			// it, not the venue's, as when a step's error stops the ramp.
			return out, fmt.Errorf("ramp step %.0f/s: %w", rate, ErrInterrupted)
		}
		if !step.Passed {
			break
		}
		out.HeldRate = rate
	}
	return out, nil
}

// Validate refuses a ramp that could not run every one of its steps (its
// rates, or the run of its highest rate: Config.Validate), before any step
// runs: Ramp found a step beyond a bound only when it came to it, after
// the steps below it had loaded the venue.
func (rc *RampConfig) Validate() error {
	rates, err := rc.Rates()
	if err != nil {
		return err
	}
	// The bounds a rate meets (RateMax, OrdersPerRunMax) grow with it, and
	// an order to measure is one the slowest step must have: its first and
	// last steps answer for those between.
	for _, rate := range []float64{rates[0], rates[len(rates)-1]} {
		cfg := rc.Base
		cfg.RatePerSecond = rate
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("ramp step %.0f/s: %w", cfg.RatePerSecond, err)
		}
	}
	return nil
}

// Rates are the offered rates of the ramp's steps, lowest first: a ramp
// stopped by a failing step runs only those up to it.
func (rc *RampConfig) Rates() ([]float64, error) {
	start := rc.Base.RatePerSecond
	// Negated so that a NaN fails it (Config.Validate): a NaN start, step or
	// maximum made no step, and the ramp reported 0 orders/s held.
	if !(start > 0 && rc.StepRate > 0 && rc.MaxRate >= start && rc.P99MaxUs > 0) {
		return nil, errors.New("loadgen: a ramp needs a positive start rate, step and p99 bound, and a maximum at or above the start")
	}
	var rates []float64
	for r := start; r <= rc.MaxRate+1e-9; r += rc.StepRate {
		if len(rates) == RampStepsMax {
			return nil, fmt.Errorf("loadgen: the ramp has more than %d steps; raise the step", RampStepsMax)
		}
		rates = append(rates, r)
	}
	return rates, nil
}
