package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
)

// learnInstruments sets s.instruments after replay: the configured
// instruments, then those the journal (or the snapshot it continues) added
// with AddInstrument commands, read once from the matcher before it runs.
// The configuration itself stays as loaded: the matcher, the feed and the
// export's shadow matcher are built from it and learn the added instruments
// from the journal, as a replay must (docs/ARCHITECTURE.md, "Adding an
// instrument"). Everything built here from the list (gateway, control
// plane, console) learns later additions from the InstrumentAdded events.
func (s *Server) learnInstruments() { s.instruments = listedInstruments(s.cfg, s.matcher) }

// listedInstruments is the configured instruments and those a stopped
// matcher added.
func listedInstruments(cfg *config.Config, m *core.Matcher) []config.Instrument {
	list := append([]config.Instrument(nil), cfg.Instruments...)
	for _, a := range m.AddedInstruments() {
		list = append(list, config.Instrument{ID: a.ID, Symbol: a.Symbol, TickSize: a.Tick.String(),
			LotSize: a.LotSize, MinQty: a.MinQty, MaxQty: a.MaxQty,
			RefPrice:    string(decimal.FormatTicks(nil, a.RefPriceTicks, a.Tick)),
			BandPercent: a.BandPercent, Status: a.Status, Tick: a.Tick, RefPriceTicks: a.RefPriceTicks, Group: a.Group})
	}
	return list
}

// registerInstrumentMetrics exports how many instruments the venue lists
// and how many it may list (engine.instruments_max).
func (s *Server) registerInstrumentMetrics() {
	s.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_instruments",
		Help: "Instruments listed: the configured ones and those added while the venue ran."},
		func() float64 { return float64(s.gw.InstrumentCount()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_instruments_max",
			Help: "The bound of listed instruments (engine.instruments_max)."},
			func() float64 { return float64(s.matcher.InstrumentsMax()) }))
}

// instrumentListed reports whether the gateway and, with market data on,
// the FIX market data cache know an instrument (ops.Config.Listed).
func (s *Server) instrumentListed(id uint32, symbol string) bool {
	if !s.gw.Knows(id) {
		return false
	}
	if s.fixmd != nil {
		if _, ok := s.fixmd.Cache().Lookup(symbol); !ok {
			return false
		}
	}
	return true
}
