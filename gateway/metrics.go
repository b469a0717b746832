package gateway

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the gateway's Prometheus instruments (names prefixed fixvenue_).
type Metrics struct {
	orders, cancels, replaces prometheus.Counter
	busy, throttled           prometheus.Counter
	openBound                 prometheus.Counter
	execReports               prometheus.Counter
	reportsNew                prometheus.Counter
	trades                    prometheus.Counter
	rejects                   *prometheus.CounterVec
	roundTrip                 prometheus.Histogram
	loggedOn                  prometheus.Gauge
	outboundDropped           prometheus.Counter
	resent                    prometheus.Counter
	durableWaitNs             prometheus.Histogram
	eventAge                  prometheus.Histogram
	clientRejects             prometheus.Counter
	dropCopyMetrics
	risk *riskMetrics
}

// NewMetrics creates the instruments and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		orders:   prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_orders_total", Help: "NewOrderSingle messages turned into commands."}),
		cancels:  prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_cancels_total", Help: "OrderCancelRequest messages turned into commands."}),
		replaces: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_replaces_total", Help: "OrderCancelReplaceRequest messages turned into commands."}),
		busy:     prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_command_ring_busy_total", Help: "Requests refused because the command ring stayed full past the claim timeout."}),
		throttled: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_throttled_total",
			Help: "Requests refused by a session throttle."}),
		openBound: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_open_order_bound_rejects_total",
			Help: "Orders refused at their session's bound on open orders (open_orders_max): before any command, or a possible resend once the matcher has answered that it does not know its ClOrdID."}),
		execReports: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_execution_reports_total", Help: "ExecutionReports handed to sessions."}),
		reportsNew: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_execution_reports_new_total",
			Help: "ExecutionReports built in a new message because the session had no sent one to reuse: a session's first, or a backlog of reports deeper than the free list's bound."}),
		trades: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_trades_total", Help: "Trades (counted once per trade)."}),
		rejects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fixvenue_rejects_total",
			Help: "Rejected orders and cancels by reason."}, []string{"reason"}),
		roundTrip: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fixvenue_order_round_trip_seconds",
			Help:    "From a FIX message's arrival to each answer of its command (its reports, the fills of the orders it traded with) being handed to a session; the reports no FIX message caused (an operator's, the schedule's, an end of day's, a cancel on disconnect's) are not in it.",
			Buckets: prometheus.ExponentialBuckets(10e-6, 2, 18)}),
		loggedOn: prometheus.NewGauge(prometheus.GaugeOpts{Name: "fixvenue_sessions_logged_on", Help: "FIX sessions logged on."}),
		outboundDropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_outbound_overflow_disconnects_total",
			Help: "Sessions disconnected because their outbound queue overflowed (client not reading)."}),
		durableWaitNs: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fixvenue_outbound_durable_wait_seconds",
			Help:    "How long outbound waited for an event's command to become durable.",
			Buckets: prometheus.ExponentialBuckets(1e-6, 2, 20)}),
		eventAge: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fixvenue_outbound_event_age_seconds",
			Help:    "Age of the last event of each batch outbound takes from the event ring (FIX arrival → outbound sees the event), before the durability wait.",
			Buckets: prometheus.ExponentialBuckets(1e-6, 2, 24)}),
		resent: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_resent_messages_total",
			Help: "Stored messages sent again for ResendRequests (PossDupFlag Y; market data, gap-filled instead, not counted)."}),
		clientRejects: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_client_business_rejects_total",
			Help: "BusinessMessageRejects (35=j) clients sent of the venue's messages (taken, not answered; logged at debug)."}),
		risk: newRiskMetrics(),
	}
	if reg != nil {
		reg.MustRegister(m.risk.collectors()...)
		reg.MustRegister(m.orders, m.cancels, m.replaces, m.busy, m.throttled, m.openBound, m.execReports, m.reportsNew, m.trades,
			m.rejects, m.roundTrip, m.loggedOn, m.outboundDropped, m.resent, m.durableWaitNs, m.eventAge, m.clientRejects)
	}
	m.dropCopyMetrics = newDropCopyMetrics(reg)
	return m
}
