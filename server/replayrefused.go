package server

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/prometheus/client_golang/prometheus"
)

// refusedListed is how many refused orders the start's log names one by
// one; the rest are counted.
const refusedListed = 10

// refusedOnReplay counts the journaled new orders a start without the
// terms record refused for a reason the configured terms decide (README,
// "Changing configured terms"). Such a start replays the whole journal
// under terms it cannot compare with those the journal was written under,
// and an order those took and these refuse leaves no trace: its owner was
// told it was accepted, and after the start it is gone, with no report to
// anyone. The journal holds the requests, not their answers, so an order
// refused when it was entered, for such a reason, is counted too. It only
// reads the replay's events: the replay's events are the configured
// terms' own, and nothing is emitted that the replay did not give.
type refusedOnReplay struct {
	symbols  map[uint32]string // instrument ids, configured and added on replay
	sessions []string          // CompIDs by session index
	total    int
	byInstr  map[string]int
	listed   []refusedOrder
}

// refusedOrder is one order the replay refused, as the log names it.
type refusedOrder struct {
	seq                                  uint64
	session, clOrdID, instrument, reason string
}

func (o refusedOrder) String() string {
	return fmt.Sprintf("seq %d %s ClOrdID %s %s %s", o.seq, o.session, o.clOrdID, o.instrument, o.reason)
}

func newRefusedOnReplay(cfg *config.Config) *refusedOnReplay {
	r := &refusedOnReplay{symbols: configuredInstruments(cfg), byInstr: map[string]int{}}
	for i := range cfg.Sessions {
		r.sessions = append(r.sessions, cfg.Sessions[i].CompID)
	}
	return r
}

// termsRefusal reports whether a new order's reject reason is one the
// configured terms decide: the instrument's band, lot and quantity bounds
// (and whether it is configured at all), the matcher's bounds and the risk
// limits. Reasons that come from the request alone (a duplicate ClOrdID,
// an unsupported characteristic) or from what the journal did (a halt, a
// call) refuse the same under any terms.
func termsRefusal(r venue.RejectReason) bool {
	switch r {
	case venue.RejectReasonUnknownInstrument, venue.RejectReasonPriceOutOfBand, venue.RejectReasonQtyNotLotMultiple,
		venue.RejectReasonQtyOutOfRange, venue.RejectReasonMaxFloorNotLotMultiple, venue.RejectReasonCapacityExceeded,
		venue.RejectReasonRiskLimitExceeded:
		return true
	}
	return false
}

// Event takes one event of the replay.
func (r *refusedOnReplay) Event(ev []byte) {
	id, err := venue.TemplateIDOf(ev, 0)
	if err != nil {
		return
	}
	switch id {
	case venue.InstrumentAddedTemplateID:
		var a venue.InstrumentAdded
		if a.WrapDecode(ev, 0) == nil && a.Reason() == venue.RejectReasonNone {
			r.symbols[a.InstrumentID()] = string(a.Symbol())
		}
	case venue.OrderRejectedTemplateID:
		var o venue.OrderRejected
		if o.WrapDecode(ev, 0) != nil || !termsRefusal(o.Reason()) {
			return
		}
		instr, ok := r.symbols[o.InstrumentID()]
		if !ok {
			instr = fmt.Sprintf("id %d", o.InstrumentID())
		}
		session := fmt.Sprintf("session %d", o.SessionIdx())
		if int(o.SessionIdx()) < len(r.sessions) {
			session = r.sessions[o.SessionIdx()]
		}
		r.total++
		r.byInstr[instr]++
		if len(r.listed) < refusedListed {
			r.listed = append(r.listed, refusedOrder{seq: o.CauseSeq(), session: session, clOrdID: string(o.ClOrdID()),
				instrument: instr, reason: o.Reason().String()})
		}
	}
}

// log says what the replay refused, when it refused anything.
func (r *refusedOnReplay) log(log *slog.Logger) {
	if r == nil || r.total == 0 {
		return
	}
	by := make([]string, 0, len(r.byInstr))
	for _, in := range slices.Sorted(maps.Keys(r.byInstr)) {
		by = append(by, fmt.Sprintf("%s=%d", in, r.byInstr[in]))
	}
	first := make([]string, len(r.listed))
	for i, o := range r.listed {
		first[i] = o.String()
	}
	log.Warn("configured terms: replayed without the record of the terms the journal was written under, the configured terms "+
		"refused recorded orders (band, lot, quantity bounds, capacity, risk limits, or an instrument no longer configured): "+
		"each that was accepted when entered is gone, and its owner was not told (one refused when entered too counts here)",
		"orders", r.total, "by_instrument", strings.Join(by, ","), "first", strings.Join(first, "; "))
}

// info is what /v1/status says of it (nil: nothing refused, or a start
// with the record).
func (r *refusedOnReplay) info() *ops.RefusedAtStartInfo {
	if r == nil || r.total == 0 {
		return nil
	}
	in := &ops.RefusedAtStartInfo{Orders: r.total, ByInstrument: maps.Clone(r.byInstr)}
	for _, o := range r.listed {
		in.First = append(in.First, o.String())
	}
	return in
}

// metrics are the figures of what the start's replay refused, on /metrics.
func (r *refusedOnReplay) metrics() []prometheus.Collector {
	total := 0
	byInstr := map[string]int{}
	if r != nil {
		total, byInstr = r.total, r.byInstr
	}
	vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "fixvenue_start_refused_orders_by_instrument",
		Help: "Journaled new orders the start's replay refused under the configured terms, by instrument (see fixvenue_start_refused_orders)."},
		[]string{"instrument"})
	for in, n := range byInstr {
		vec.WithLabelValues(in).Set(float64(n))
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "fixvenue_start_refused_orders",
		Help: "Journaled new orders the start's replay refused for a reason the configured terms decide, when it started without the " +
			"record of the terms the journal was written under (terms.json moved aside): an order accepted then and refused now is " +
			"gone without a report to its owner; the log names them. 0 after any other start."})
	g.Set(float64(total))
	return []prometheus.Collector{g, vec}
}
