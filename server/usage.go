package server

import (
	"sync/atomic"

	"github.com/fixvenue/fixvenue/core"
	"github.com/prometheus/client_golang/prometheus"
)

// engineUsage is the matcher's core.Usage and the time its next timer is
// due (core.Matcher.NextDueNs) as its thread last stored them, after each
// run of commands (pipeline.Config.AfterBatch). The metrics
// fixvenue_engine_usage and fixvenue_engine_limit, by bound, show an
// operator a bound coming (orders_max, clordids_max, stops) before orders
// are refused at it (docs/ARCHITECTURE.md, "Capacity"); the control plane's
// timer journals a Tick once the due time has come (ops.Config.TimersDue),
// or once the clock reads well before the last command's time
// (ops.Config.CommandTimeNs).
type engineUsage struct {
	orders, stops, clOrdIDs atomic.Int64
	nextDueNs               atomic.Int64
	commandTimeNs           atomic.Int64 // core.Matcher.CommandTimeNs
	limits                  core.Usage   // the bounds, fixed at start
}

// store is called on the matcher's thread (or before it runs).
func (u *engineUsage) store(m *core.Matcher) {
	v := m.Usage()
	u.orders.Store(int64(v.Orders))
	u.stops.Store(int64(v.Stops))
	u.clOrdIDs.Store(int64(v.ClOrdIDs))
	u.nextDueNs.Store(m.NextDueNs())
	u.commandTimeNs.Store(m.CommandTimeNs())
}

// load returns the usage as last stored, with the bounds.
func (u *engineUsage) load() core.Usage {
	v := u.limits
	v.Orders, v.Stops, v.ClOrdIDs = int(u.orders.Load()), int(u.stops.Load()), int(u.clOrdIDs.Load())
	return v
}

// register adds the gauges, from the matcher before it runs.
func (u *engineUsage) register(reg prometheus.Registerer, m *core.Matcher) {
	start := m.Usage()
	u.limits = start
	u.store(m)
	for _, b := range []struct {
		bound string
		used  *atomic.Int64
		limit int
	}{
		{"orders_max", &u.orders, start.OrdersMax},
		{"stops_max", &u.stops, start.StopsMax},
		{"clordids_max", &u.clOrdIDs, start.ClOrdIDsMax},
	} {
		labels := prometheus.Labels{"bound": b.bound}
		used, limit := b.used, float64(b.limit)
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_engine_usage", ConstLabels: labels,
				Help: "What the matcher holds of a bound: order slots (resting orders and waiting stops), waiting stops, ClOrdIDs remembered since the last end of day. At the bound new orders are refused (CapacityExceeded)."},
				func() float64 { return float64(used.Load()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_engine_limit", ConstLabels: labels,
				Help: "The matcher's bound (engine.orders_max, the stops' share of it, engine.clordids_max)."},
				func() float64 { return limit }))
	}
}
