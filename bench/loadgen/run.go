package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fixvenue/fixvenue/bench/progress"
)

// Run timing.
const (
	// startLead is how long after the last Logon the schedule starts, so
	// every session's goroutines are running at time zero.
	startLead = 20 * time.Millisecond
	// logoutTimeout bounds the wait for the venue's Logout answer.
	logoutTimeout = 2 * time.Second
	// drainPoll is how often the end of the drain is checked.
	drainPoll = 5 * time.Millisecond
	// progressInterval is the period of the progress line.
	progressInterval = time.Second
	// signalGrace bounds how long a run whose venue went away (its Logons
	// refused, or every session closed) waits for its own context to end
	// before it reads as a failure. A Ctrl-C at a terminal reaches its
	// whole process group, a venue run beside the load too, and that
	// venue closing the sessions as it stops can reach the load before
	// the load's own signal handler has ended its context.
	signalGrace = 500 * time.Millisecond
)

// stoppedWithin reports whether ctx ends within d.
func stoppedWithin(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return true
	case <-t.C:
		return false
	}
}

// runner is the state of one run shared by its sessions.
type runner struct {
	cfg         Config
	plan        plan
	runID       string
	start       time.Time
	warmupEndNs int64
	sessions    []*session

	// One flag per order and per cancel. Order i is answered only on
	// session i mod sessions, so each byte has one writer.
	orderAnswered  []uint8
	cancelAnswered []uint8

	ordersSent, cancelsSent         atomic.Int64
	ordersAnswered, cancelsAnswered atomic.Int64
	ers, rejects                    atomic.Int64
	lagMaxNs                        atomic.Int64
	failed                          atomic.Int64
	stopping                        atomic.Bool
}

func (r *runner) sinceStartNs() int64 { return int64(time.Since(r.start)) }

func (r *runner) noteLag(ns int64) {
	for {
		old := r.lagMaxNs.Load()
		if ns <= old || r.lagMaxNs.CompareAndSwap(old, ns) {
			return
		}
	}
}

// Run logs on every session, sends the schedule open loop, waits for the
// answers (bounded by Drain), logs out and returns the figures. An error is
// returned only when the run could not start; failures of sessions during
// the run are reported in Result.SessionErrors, and their orders as lost.
// A run whose ctx ends before its schedule is sent and answered stops
// there, logs out and returns the figures so far, Result.Interrupted set.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, plan: newPlan(&cfg), runID: cfg.RunID}
	if r.runID == "" {
		r.runID = newRunID(time.Now())
	}
	r.warmupEndNs = int64(cfg.Warmup)
	r.orderAnswered = make([]uint8, r.plan.totalOrders)
	r.cancelAnswered = make([]uint8, r.plan.totalOrders)
	r.start = time.Now() // provisional: logon traffic is timed against it too
	for i := 0; i < cfg.Sessions; i++ {
		s, err := newSession(r, int64(i))
		if err != nil {
			return nil, err
		}
		r.sessions = append(r.sessions, s)
	}
	if err := r.logonAll(ctx); err != nil {
		for _, s := range r.sessions {
			if s.conn != nil {
				s.conn.Close()
			}
		}
		if stoppedWithin(ctx, signalGrace) {
			// Stopped while logging on (a Ctrl-C reaches a venue run
			// beside the load too, which refuses the Logons as it stops):
			// the run says it was interrupted with nothing sent, as one
			// stopped later says what it sent, not that it could not run.
			r.stopping.Store(true)
			return r.result(), nil
		}
		return nil, err
	}
	r.start = time.Now().Add(startLead)
	var receivers, senders sync.WaitGroup
	for _, s := range r.sessions {
		receivers.Add(1)
		go func() { defer receivers.Done(); s.runReceiver() }()
		senders.Add(1)
		go func() { defer senders.Done(); s.runSender() }()
	}
	stopProgress := r.startProgress()
	sendersDone := make(chan struct{})
	go func() { senders.Wait(); close(sendersDone) }()
	select {
	case <-sendersDone:
	case <-ctx.Done():
		r.stopping.Store(true)
		<-sendersDone
	}
	if r.drain(ctx) || r.failed.Load() == int64(len(r.sessions)) && stoppedWithin(ctx, signalGrace) {
		// Every session closed by a venue that a Ctrl-C stopped before
		// it reached the load (signalGrace) is an interrupted run too.
		r.stopping.Store(true)
	}
	stopProgress()
	var logouts sync.WaitGroup
	for _, s := range r.sessions {
		logouts.Add(1)
		go func() { defer logouts.Done(); s.logout(logoutTimeout) }()
	}
	logouts.Wait()
	receivers.Wait()
	return r.result(), nil
}

func (r *runner) logonAll(ctx context.Context) error {
	errs := make([]error, len(r.sessions))
	var wg sync.WaitGroup
	for i, s := range r.sessions {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.logon(ctx) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// drain waits until every order and cancel sent has its answer, or until
// Drain has passed since the later of the last due time and now. It says
// whether ctx ended the wait.
func (r *runner) drain(ctx context.Context) (interrupted bool) {
	lastDue := r.plan.dueNs(r.plan.totalOrders - 1 + cancelLagSlots*r.plan.sessions)
	deadline := max(lastDue, r.sinceStartNs()) + int64(r.cfg.Drain)
	for r.sinceStartNs() < deadline {
		if r.ordersAnswered.Load() >= r.ordersSent.Load() && r.cancelsAnswered.Load() >= r.cancelsSent.Load() ||
			r.failed.Load() == int64(len(r.sessions)) {
			return false
		}
		if ctx.Err() != nil {
			return true
		}
		r.heartbeatIdle()
		time.Sleep(drainPoll)
	}
	return false
}

// heartbeatIdle sends a Heartbeat on every session that has been silent
// for a heartbeat interval, as FIX asks of both sides.
func (r *runner) heartbeatIdle() {
	idleNs := int64(r.cfg.HeartBtIntS) * int64(time.Second)
	for _, s := range r.sessions {
		if s.failure() == nil && r.sinceStartNs()-s.lastWriteNs.Load() >= idleNs {
			if err := s.sendHeartbeat(nil); err != nil {
				s.fail(fmt.Errorf("heartbeat: %w", err))
			}
		}
	}
}

// startProgress prints a line each progressInterval; the returned func stops it.
func (r *runner) startProgress() func() {
	if r.cfg.Progress == nil {
		return func() {}
	}
	var lastSent, lastAnswered, lastERs int64
	return progress.Every(progressInterval, func() {
		sent, answered, ers := r.ordersSent.Load(), r.ordersAnswered.Load(), r.ers.Load()
		secs := progressInterval.Seconds()
		fmt.Fprintf(r.cfg.Progress, "load: %5.1fs  sent %d orders (%.0f/s)  answered %d (%.0f/s)  ERs %.0f/s  pending %d  send lag max %s  rejects %d  failed sessions %d\n",
			time.Since(r.start).Seconds(), sent, float64(sent-lastSent)/secs, answered, float64(answered-lastAnswered)/secs,
			float64(ers-lastERs)/secs, sent-answered, formatNs(r.lagMaxNs.Swap(0)), r.rejects.Load(), r.failed.Load())
		lastSent, lastAnswered, lastERs = sent, answered, ers
	})
}
