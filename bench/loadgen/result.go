package loadgen

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fixvenue/fixvenue/bench/hdrplot"
)

// Result holds the figures of one run. Latencies are from each order's due
// time (start + i/rate) to the first answer to it, so a venue that stalls
// shows the stall in every order due during it (no coordinated omission).
type Result struct {
	Addr         string  `json:"addr"`
	Sessions     int     `json:"sessions"`
	Mix          string  `json:"mix"`
	RateTarget   float64 `json:"rate_target_per_s"`
	DurationS    float64 `json:"duration_s"`
	WarmupS      float64 `json:"warmup_s"`
	RunID        string  `json:"run_id"`
	OrdersPlan   int64   `json:"orders_planned"`
	OrdersSent   int64   `json:"orders_sent"`
	CancelsSent  int64   `json:"cancels_sent"`
	OrdersUnsent int64   `json:"orders_unsent"`

	// Latency: order → its first ExecutionReport (or reject), after warm-up.
	Latency hdrplot.Summary `json:"latency"`
	// CancelLatency: cancel → its ExecutionReport or OrderCancelReject.
	CancelLatency hdrplot.Summary `json:"cancel_latency"`
	// SendLag: how late each send went out against its due time.
	SendLag hdrplot.Summary `json:"send_lag"`

	SendRate       float64          `json:"send_rate_orders_per_s"`
	MessageRate    float64          `json:"send_rate_messages_per_s"`
	ERs            int64            `json:"execution_reports"`
	ERRate         float64          `json:"execution_reports_per_s"`
	LostOrders     int64            `json:"lost_orders"`
	LostCancels    int64            `json:"lost_cancels"`
	RejectsTotal   int64            `json:"rejects_total"`
	Rejects        map[string]int64 `json:"rejects"`
	SeqGaps        int64            `json:"inbound_seq_gaps"`
	UnknownAnswers int64            `json:"unknown_answers"`
	ResendRequests int64            `json:"resend_requests"`
	Clamped        int64            `json:"clamped"`
	SessionErrors  []string         `json:"session_errors,omitempty"`
	// Interrupted: the run was stopped (its context ended) before its
	// schedule was sent and answered; the figures are those of the orders
	// it sent, and its unsent orders were not lost by the venue.
	Interrupted bool `json:"interrupted,omitempty"`

	latency *hdrhistogram.Histogram
}

// Histogram is the merged order latency histogram (nanoseconds).
func (r *Result) Histogram() *hdrhistogram.Histogram { return r.latency }

// Lost is the number of orders and cancels without an answer, and of the
// orders a run that was not interrupted failed to send.
func (r *Result) Lost() int64 {
	if r.Interrupted {
		return r.LostOrders + r.LostCancels
	}
	return r.LostOrders + r.LostCancels + r.OrdersUnsent
}

func (r *runner) result() *Result {
	c := &r.cfg
	res := &Result{
		Addr: c.Addr, Sessions: c.Sessions, Mix: c.Mix.String(), RateTarget: c.RatePerSecond,
		DurationS: c.Duration.Seconds(), WarmupS: c.Warmup.Seconds(), RunID: r.runID,
		OrdersPlan: r.plan.totalOrders, OrdersSent: r.ordersSent.Load(), CancelsSent: r.cancelsSent.Load(),
		Rejects: map[string]int64{}, Interrupted: r.stopping.Load(),
	}
	res.OrdersUnsent = res.OrdersPlan - res.OrdersSent
	res.LostOrders = res.OrdersSent - r.ordersAnswered.Load()
	res.LostCancels = res.CancelsSent - r.cancelsAnswered.Load()
	lat := hdrplot.NewHistogram(hdrplot.LowestNsFIX)
	cxl := hdrplot.NewHistogram(hdrplot.LowestNsFIX)
	lag := hdrplot.NewHistogram(hdrplot.LowestNsFIX)
	var ordersMeasured, ersMeasured, lastSendNs, lastERNs int64
	for _, s := range r.sessions {
		lat.Merge(s.latency)
		cxl.Merge(s.cancelLatency)
		lag.Merge(s.sendLag)
		for k, n := range s.rejects {
			res.Rejects[k] += *n
			res.RejectsTotal += *n
		}
		ordersMeasured += s.sent.ordersMeasured
		lastSendNs = max(lastSendNs, s.sent.lastSendNs)
		ersMeasured += s.recv.ersMeasured
		lastERNs = max(lastERNs, s.recv.lastERNs)
		res.ERs += s.recv.ers
		res.SeqGaps += s.recv.seqGaps
		res.UnknownAnswers += s.recv.unknownAnswers
		res.ResendRequests += s.recv.resendRequests
		res.Clamped += s.recv.clamped
		if err := s.failure(); err != nil {
			res.SessionErrors = append(res.SessionErrors, err.Error())
		}
	}
	res.latency = lat
	res.Latency, res.CancelLatency, res.SendLag = hdrplot.Summarize(lat), hdrplot.Summarize(cxl), hdrplot.Summarize(lag)
	// The achieved rate is measured as the offered one is: each order holds
	// one interval of the schedule, so the window runs from the first
	// measured order's due time to the write of the last plus its interval,
	// and N orders sent on time read as the offered rate. Ending at the last
	// write alone spans N-1 intervals, and read N/(N-1) times the offered
	// rate (10 orders at 10/s: 11/s achieved).
	if window := float64(lastSendNs-r.plan.dueNs(r.plan.warmupOrders)+int64(r.plan.intervalNs)) / 1e9; ordersMeasured > 0 && window > 0 {
		res.SendRate = float64(ordersMeasured) / window
		res.MessageRate = res.SendRate * float64(res.OrdersSent+res.CancelsSent) / float64(max(res.OrdersSent, 1))
	}
	if window := float64(lastERNs-r.warmupEndNs) / 1e9; window > 0 {
		res.ERRate = float64(ersMeasured) / window
	}
	return res
}

// formatNs prints nanoseconds with hdrplot's units.
func formatNs(ns int64) string { return hdrplot.FormatUs(float64(ns) / 1e3) }

// Print writes the result for people.
func (r *Result) Print(w io.Writer) {
	fmt.Fprintf(w, "fixvenue load: %d session(s), %s mix, %.0f orders/s offered for %s (warm-up %s) to %s, run %s\n",
		r.Sessions, r.Mix, r.RateTarget, time.Duration(r.DurationS*1e9), time.Duration(r.WarmupS*1e9), r.Addr, r.RunID)
	l := r.Latency
	fmt.Fprintf(w, "latency  order → first ExecutionReport, from due time (%d orders):\n", l.Count)
	fmt.Fprintf(w, "         p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		hdrplot.FormatUs(l.P50Us), hdrplot.FormatUs(l.P90Us), hdrplot.FormatUs(l.P99Us), hdrplot.FormatUs(l.P999Us), hdrplot.FormatUs(l.MaxUs))
	if c := r.CancelLatency; c.Count > 0 {
		fmt.Fprintf(w, "cancels  cancel → its answer (%d): p50 %s  p99 %s  max %s\n", c.Count,
			hdrplot.FormatUs(c.P50Us), hdrplot.FormatUs(c.P99Us), hdrplot.FormatUs(c.MaxUs))
	}
	fmt.Fprintf(w, "send     %.0f orders/s achieved (offered %.0f), %.0f messages/s; client send lag p50 %s  p99 %s  max %s\n",
		r.SendRate, r.RateTarget, r.MessageRate, hdrplot.FormatUs(r.SendLag.P50Us), hdrplot.FormatUs(r.SendLag.P99Us), hdrplot.FormatUs(r.SendLag.MaxUs))
	fmt.Fprintf(w, "answers  %d ExecutionReports (%.0f/s after warm-up); lost: %d orders, %d cancels", r.ERs, r.ERRate, r.LostOrders, r.LostCancels)
	if r.OrdersUnsent > 0 && r.Interrupted {
		fmt.Fprintf(w, "; interrupted with %d of %d orders sent", r.OrdersSent, r.OrdersPlan)
	} else if r.OrdersUnsent > 0 {
		fmt.Fprintf(w, ", %d orders never sent", r.OrdersUnsent)
	}
	fmt.Fprintln(w)
	if r.SeqGaps > 0 || r.UnknownAnswers > 0 || r.ResendRequests > 0 || r.Clamped > 0 {
		fmt.Fprintf(w, "session  inbound seq gaps %d, unknown answers %d, resend requests %d, latencies clamped at 60 s %d\n",
			r.SeqGaps, r.UnknownAnswers, r.ResendRequests, r.Clamped)
	}
	if r.RejectsTotal == 0 {
		fmt.Fprintln(w, "rejects  none")
	} else {
		fmt.Fprintf(w, "rejects  %d:\n", r.RejectsTotal)
		kinds := make([]string, 0, len(r.Rejects))
		for k := range r.Rejects {
			kinds = append(kinds, k)
		}
		sort.Slice(kinds, func(i, j int) bool {
			return r.Rejects[kinds[i]] > r.Rejects[kinds[j]] || r.Rejects[kinds[i]] == r.Rejects[kinds[j]] && kinds[i] < kinds[j]
		})
		for _, k := range kinds {
			fmt.Fprintf(w, "         %8d  %s\n", r.Rejects[k], k)
		}
	}
	for _, e := range r.SessionErrors {
		fmt.Fprintf(w, "error    %s\n", strings.TrimSpace(e))
	}
}
