package eventstream

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the exporter's Prometheus instruments.
type metrics struct {
	connected  prometheus.Gauge
	errors     prometheus.Counter
	events     prometheus.Counter
	ackedEvent prometheus.Gauge
	catchUps   prometheus.Counter
	catchingUp prometheus.Gauge
	lag        prometheus.GaugeFunc
	// doneSeq is the seq of the last command whose events the stream has
	// all acknowledged (-1: none); commands without events count as soon
	// as the ones before them do.
	doneSeq atomic.Int64
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		connected: prometheus.NewGauge(prometheus.GaugeOpts{Name: "fixvenue_export_connected",
			Help: "1 while the event exporter is connected to NATS and continuing the stream."}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_export_errors_total",
			Help: "Event export interruptions (NATS unreachable, publish failed, a stream it cannot continue)."}),
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_export_events_total",
			Help: "Events the stream acknowledged since start."}),
		ackedEvent: prometheus.NewGauge(prometheus.GaugeOpts{Name: "fixvenue_export_event_seq",
			Help: "Event sequence of the last event the stream acknowledged."}),
		catchingUp: prometheus.NewGauge(prometheus.GaugeOpts{Name: "fixvenue_export_catching_up",
			Help: "1 while the exporter rebuilds events from the journal with a matcher of its own, 0 while it follows the venue's events."}),
		catchUps: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_export_catchups_total",
			Help: "Times the exporter rebuilt events from the journal with a matcher of its own (a restart, a stream behind the tap, events the tap dropped)."}),
	}
	m.doneSeq.Store(-1)
	if reg != nil {
		reg.MustRegister(m.connected, m.errors, m.events, m.ackedEvent, m.catchUps, m.catchingUp)
	}
	return m
}
