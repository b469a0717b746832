package ops

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/internal/httpbound"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/fixvenue/fixvenue/schedule"
)

// metrics are the control plane's Prometheus metrics (the Grafana
// dashboard's operations row).
type metrics struct {
	actions        *prometheus.CounterVec
	transitions    *prometheus.CounterVec
	phase          *prometheus.GaugeVec
	nextTransition prometheus.Gauge
	archivedSegs   prometheus.Counter
	archiveFails   prometheus.Counter
}

func newMetrics(o *Ops, reg *prometheus.Registry) *metrics {
	m := &metrics{
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fixvenue_operator_actions_total",
			Help: "Operator commands (admin API and schedule) applied and durable, by action and result (done; InvalidTransition: nothing changed, the instrument in that status already, as at a first start); a command whose call timed out (the schedule's too) counts once applied."}, []string{"action", "result"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fixvenue_schedule_transitions_total",
			Help: "Scheduled transitions run, by kind; caught_up=true for those run at start for time the venue was down."}, []string{"kind", "caught_up"}),
		phase: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "fixvenue_schedule_phase",
			Help: "Each schedule group's phase as last set (by the schedule, at start or by /v1/phase): 1 pre-open (the opening call), 2 open, 3 close, 5 closing call."}, []string{"group"}),
		nextTransition: prometheus.NewGauge(prometheus.GaugeOpts{Name: "fixvenue_schedule_next_transition_timestamp_seconds",
			Help: "When the next scheduled transition runs (Unix seconds)."}),
		archivedSegs: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_journal_archived_segments_total",
			Help: "Journal segments moved to the archive at end of day since start."}),
		archiveFails: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_journal_archive_failures_total",
			Help: "Ends of day whose archiving of journal segments failed (the report's archive_error says why; the segments stay live, and the next end of day tries again)."}),
	}
	// Every series exists from the start, at zero, so that dashboards and
	// alerts see an action or a transition that never happened.
	for _, a := range []venue.OperatorActionType{venue.OperatorActionTypeSetTradingStatus, venue.OperatorActionTypeEndOfDay,
		venue.OperatorActionTypeMassCancel, venue.OperatorActionTypeSessionLogout, venue.OperatorActionTypeSessionDisable,
		venue.OperatorActionTypeSessionEnable, venue.OperatorActionTypeSetPriceBand, venue.OperatorActionTypeSetPhaseStatus,
		venue.OperatorActionTypeCancelOrder} {
		m.actions.WithLabelValues(a.String(), resultName(venue.RejectReasonNone))
	}
	for _, k := range []schedule.Kind{schedule.PreOpen, schedule.Open, schedule.Close, schedule.EndOfDay, schedule.ClosingCall} {
		m.transitions.WithLabelValues(k.String(), "false")
		m.transitions.WithLabelValues(k.String(), "true")
	}
	archiveDir := filepath.Join(o.journalDir(), journal.ArchiveDirName)
	closed := func(why string, n func(*httpbound.Counts) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_admin_connections_closed_total",
			Help: "Connections the admin listener closed at its bound (admin.console.streams_max + 64): evicted, the one that had " +
				"waited longest for a request, to admit a new one; refused, a new one while every one was serving a request.",
			ConstLabels: prometheus.Labels{"why": why}}, func() float64 {
			if c := o.conns.Load(); c != nil {
				return float64(n(c))
			}
			return 0
		})
	}
	reg.MustRegister(closed("evicted", (*httpbound.Counts).Evicted), closed("refused", (*httpbound.Counts).Refused))
	reg.MustRegister(m.actions, m.transitions, m.phase, m.nextTransition, m.archivedSegs, m.archiveFails,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_journal_archive_bytes",
			Help: "Bytes in the journal archive (compressed segments)."}, func() float64 { return float64(dirBytes(archiveDir)) }))
	for _, in := range o.cfg.Instruments {
		registerStatusGauge(o, reg, in)
	}
	m.actions.WithLabelValues(addInstrumentAction, resultName(venue.RejectReasonNone))
	// An instrument added while the venue runs gets its gauge then (the
	// monitor calls this under its lock; the gauge reads it only when
	// scraped).
	o.monitor.onAdded = func(in config.Instrument) { registerStatusGauge(o, reg, in) }
	return m
}

func registerStatusGauge(o *Ops, reg *prometheus.Registry, in config.Instrument) {
	id := in.ID
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_instrument_trading_status",
		Help:        "Trading status of each instrument: 1 open, 2 halted, 3 closed.",
		ConstLabels: prometheus.Labels{"symbol": in.Symbol, "instrument_id": strconv.FormatUint(uint64(id), 10)}},
		func() float64 {
			st, _ := o.monitor.Instrument(id)
			return float64(st.Status)
		}))
}

func (m *metrics) action(r Result) {
	m.actions.WithLabelValues(r.Action.String(), resultName(r.Reason)).Inc()
}

// resultName names an operator command's result in the metrics and the
// log as the admin API's answer does: "done" when it was applied, else the
// matcher's reason (InvalidTransition: nothing changed).
func resultName(r venue.RejectReason) string {
	if r == venue.RejectReasonNone {
		return "done"
	}
	return r.String()
}

func (m *metrics) transition(k schedule.Kind, caughtUp bool) {
	m.transitions.WithLabelValues(k.String(), strconv.FormatBool(caughtUp)).Inc()
}

func (m *metrics) archived(res journal.ArchiveResult, err error) {
	m.archivedSegs.Add(float64(res.Segments))
	if err != nil {
		m.archiveFails.Inc()
	}
}

// dirBytes sums the sizes of the regular files in dir (0 when it is absent).
func dirBytes(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}
