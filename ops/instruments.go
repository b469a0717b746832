package ops

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/core/pipeline"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Adding an instrument while the venue runs (README, "Adding an
// instrument"): POST /v1/instruments journals an AddInstrument command;
// the matcher lists the instrument and answers with InstrumentAdded, from
// which every part of the venue (gateway, market data, this control plane,
// the console) learns it.

// AddInstrumentRequest is the body of POST /v1/instruments.
type AddInstrumentRequest struct {
	Reason string `json:"reason"`
	// ID is the instrument's wire id; 0: one more than the highest listed
	// (after 4294967295, the lowest free id: freeInstrumentID).
	ID          uint32 `json:"id,omitempty"`
	Symbol      string `json:"symbol"`
	TickSize    string `json:"tick_size"`
	LotSize     int64  `json:"lot_size"`
	MinQty      int64  `json:"min_qty"`
	MaxQty      int64  `json:"max_qty"`
	RefPrice    string `json:"ref_price"`
	BandPercent int64  `json:"band_percent"`
	// Status is open (the default), halted or closed.
	Status string `json:"status,omitempty"`
	// Group is the schedule group; empty: the group its symbol falls in.
	Group string `json:"group,omitempty"`
}

// AddInstrumentResponse answers a successful POST /v1/instruments.
type AddInstrumentResponse struct {
	ActionResponse
	Instrument InstrumentInfo `json:"instrument"`
}

var addStatuses = map[string]venue.TradingStatus{"": venue.TradingStatusOpen, "open": venue.TradingStatusOpen,
	"halted": venue.TradingStatusHalted, "closed": venue.TradingStatusClosed}

// Instruments returns the listed instruments: the configured ones and
// those added, in the order they were listed.
func (o *Ops) Instruments() []config.Instrument {
	return append(append([]config.Instrument(nil), o.cfg.Instruments...), o.monitor.addedInstruments()...)
}

// Instrument finds a listed instrument by symbol.
func (o *Ops) Instrument(symbol string) (config.Instrument, bool) {
	return o.instrument(symbol)
}

func (o *Ops) instrument(symbol string) (config.Instrument, bool) {
	if in, ok := o.bySymbol[symbol]; ok {
		return in, true
	}
	return o.monitor.addedInstrument(symbol)
}

// groupOf returns the schedule group of an instrument.
func (o *Ops) groupOf(in *config.Instrument) (int, error) {
	if in.Group == "" {
		return o.cfg.Schedule.GroupOf(in.Symbol)
	}
	for g, grp := range o.cfg.Schedule.Groups {
		if grp.Name == in.Group {
			return g, nil
		}
	}
	return 0, fmt.Errorf("%s: schedule group %q: %w", in.Symbol, in.Group, config.ErrNoGroup)
}

// checkAdd validates a request; it returns the instrument to add, or the
// HTTP status, code and reason of a refusal. Everything the matcher would
// refuse is checked here too, so that a refusal says precisely why; the
// matcher checks again (it is the one that decides, in command order).
func (o *Ops) checkAdd(req *AddInstrumentRequest) (core.AddedInstrument, venue.TradingStatus, int, string, string) {
	a := core.AddedInstrument{ID: req.ID, Symbol: req.Symbol, LotSize: req.LotSize, MinQty: req.MinQty, MaxQty: req.MaxQty,
		BandPercent: req.BandPercent, Group: req.Group}
	bad := func(code, format string, args ...any) (core.AddedInstrument, venue.TradingStatus, int, string, string) {
		return a, 0, http.StatusBadRequest, code, fmt.Sprintf(format, args...)
	}
	conflict := func(code, format string, args ...any) (core.AddedInstrument, venue.TradingStatus, int, string, string) {
		return a, 0, http.StatusConflict, code, fmt.Sprintf(format, args...)
	}
	listed := o.Instruments()
	var err error
	switch {
	case strings.TrimSpace(req.Reason) == "":
		return bad("no_reason", "give a reason: it is journaled with the action")
	case len(req.Reason) > venue.OperatorReasonLength || strings.IndexFunc(req.Reason, nonPrintable) >= 0:
		return bad("bad_reason", "reason must be at most %d printable ASCII characters", venue.OperatorReasonLength)
	case config.DotSegment(req.Symbol):
		return bad("bad_symbol", "symbol %q cannot be named in a URL path (a browser reads it as the current or the parent path), so the console and this API could not reach it", req.Symbol)
	case !config.ValidSymbol(req.Symbol) || strings.EqualFold(req.Symbol, AllInstruments):
		return bad("bad_symbol", "symbol %q must be 1 to %d printable ASCII characters without space or '=' (and not %q in any case: "+
			"ALL in FIX and all here mean every instrument)", req.Symbol, venue.SymbolLength, AllInstruments)
	}
	// ParseTick takes at most decimal.MaxScale fractional digits (as a
	// configured [[instrument]] does): the refusal names that bound.
	if a.Tick, err = decimal.ParseTick(req.TickSize); err != nil {
		return bad("bad_tick_size", "tick_size %q is not a positive decimal with at most %d decimal places", req.TickSize, decimal.MaxScale)
	}
	if a.RefPriceTicks, err = config.RefPriceTicks(req.RefPrice, req.TickSize, a.Tick); err != nil {
		return bad("bad_price", "ref_price %v", err)
	}
	status, ok := addStatuses[req.Status]
	switch {
	case req.LotSize <= 0 || req.MinQty <= 0 || req.MaxQty < req.MinQty:
		return bad("bad_quantity", "need lot_size > 0 and 0 < min_qty <= max_qty, have %d, %d, %d", req.LotSize, req.MinQty, req.MaxQty)
	case req.MinQty%req.LotSize != 0 || req.MaxQty%req.LotSize != 0:
		return bad("bad_quantity", "min_qty %d and max_qty %d must be multiples of lot_size %d", req.MinQty, req.MaxQty, req.LotSize)
	case req.BandPercent <= 0 || req.BandPercent >= 100:
		return bad("bad_band", "band_percent %d is outside (0, 100)", req.BandPercent)
	case !ok:
		return bad("bad_status", "status %q: open, halted or closed", req.Status)
	case req.Group != "" && !o.cfg.Schedule.Enabled:
		return bad("unknown_group", "group %q: the venue has no schedule ([schedule] enabled)", req.Group)
	}
	a.Status = status
	if o.cfg.Schedule.Enabled {
		in := config.Instrument{Symbol: a.Symbol, Group: a.Group}
		if _, err := o.groupOf(&in); err != nil {
			return bad("unknown_group", "%v: name one of the [[schedule.group]] names", err)
		}
	}
	if req.ID == 0 {
		a.ID = freeInstrumentID(listed)
	}
	if o.cfg.ExportOn && config.SubjectToken(a.Symbol) == config.NoInstrumentToken {
		return conflict("subject_collision", "symbol %q would share its event subjects with the events of no instrument (...orders.%s)",
			a.Symbol, config.NoInstrumentToken)
	}
	for _, in := range listed {
		if in.Symbol == a.Symbol {
			return conflict("duplicate_instrument", "symbol %q is listed already (id %d)", a.Symbol, in.ID)
		}
		if in.ID == a.ID {
			return conflict("duplicate_instrument", "id %d is listed already (%s)", a.ID, in.Symbol)
		}
		// A consumer of one instrument's subject would get the other's
		// events too (eventstream/doc.go, "Messages").
		if o.cfg.ExportOn && config.SubjectToken(in.Symbol) == config.SubjectToken(a.Symbol) {
			return conflict("subject_collision", "symbol %q would share its event subjects with %s (id %d): export turns '.', '*' and '>' into '_', "+
				"both are ...orders.%s", a.Symbol, in.Symbol, in.ID, config.SubjectToken(a.Symbol))
		}
	}
	if len(listed) >= o.cfg.Matcher.InstrumentsMax() {
		return conflict("instruments_full", "%d instruments are listed, engine.instruments_max is %d", len(listed), o.cfg.Matcher.InstrumentsMax())
	}
	if reason := o.boundsRefusal(&a, req); reason != "" {
		return a, 0, http.StatusUnprocessableEntity, "invalid_instrument", reason + " (nothing changed)"
	}
	return a, status, 0, "", ""
}

// boundsRefusal says which of the matcher's bounds an addition passes, ""
// when none: max_qty against the engine's bounds, the band's width against
// the price levels a book side holds, max_qty at the band's top against the
// largest order notional, in the order the matcher checks them
// (core.InstrumentConfig). The matcher refuses each as InvalidInstrument,
// which cannot say which, so the answer listed all three.
func (o *Ops) boundsRefusal(a *core.AddedInstrument, req *AddInstrumentRequest) string {
	levelsMax, qtyMax := o.cfg.Matcher.AddBounds()
	low, high := core.BandTicks(a.RefPriceTicks, a.BandPercent)
	switch {
	case a.MaxQty > qtyMax:
		return fmt.Sprintf("max_qty %d is above %d, (2^63-1) / (engine.orders_max + clordids_max + 1), which keeps a level's depth and the day's volume within int64",
			a.MaxQty, qtyMax)
	case high-low+1 > int64(levelsMax):
		return fmt.Sprintf("band_percent %d around ref_price %s spans %d ticks of tick_size %s, more than the %d price levels a side of a book holds (a narrower band or a coarser tick_size)",
			a.BandPercent, req.RefPrice, high-low+1, req.TickSize, levelsMax)
	case a.MaxQty > core.MaxQtyAt(high):
		return fmt.Sprintf("max_qty %d at the band's top (%d ticks of tick_size %s) puts an order's notional above %d, the largest (price ticks x quantity, as the largest risk limit): max_qty at most %d",
			a.MaxQty, high, req.TickSize, int64(core.OrderNotionalMax), core.MaxQtyAt(high))
	}
	return ""
}

// freeInstrumentID is the id of an addition that names none: one more
// than the highest listed or, when that is the largest uint32 (an operator
// gave it), the lowest id none has. The id wrapped to 0 there, and every
// addition without an id was refused until one was given. Chosen from the
// listed instruments and journaled in the command, it is the same on a
// replay and on a cluster's followers.
func freeInstrumentID(listed []config.Instrument) uint32 {
	highest := uint32(0)
	for _, in := range listed {
		highest = max(highest, in.ID)
	}
	if highest < math.MaxUint32 {
		return highest + 1
	}
	used := make(map[uint32]bool, len(listed))
	for _, in := range listed {
		used[in.ID] = true
	}
	// At most len(listed) ids are used, so one of the first len(listed)+1 is free.
	id := uint32(1)
	for used[id] {
		id++
	}
	return id
}

func (o *Ops) handleAddInstrument(w http.ResponseWriter, r *http.Request) {
	var req AddInstrumentRequest
	if !o.decodeBody(w, r, &req) {
		return
	}
	a, _, status, code, reason := o.checkAdd(&req)
	if status != 0 {
		refuse(w, status, code, "%s", reason)
		return
	}
	operator := operatorOf(r)
	res, err := o.AddInstrument(&a, operator, req.Reason)
	switch {
	case err != nil || res.Reason != venue.RejectReasonNone:
		o.answerAdd(w, operator, res, err)
	default:
		in, _ := o.instrument(a.Symbol)
		writeJSON(w, http.StatusOK, AddInstrumentResponse{ActionResponse: ActionResponse{Seq: res.Seq, Action: addInstrumentAction,
			Operator: operator, Result: "done", Count: 1}, Instrument: o.instrumentInfo(in)})
	}
}

// addInstrumentAction names the action in answers, logs and metrics.
const addInstrumentAction = "AddInstrument"

func (o *Ops) answerAdd(w http.ResponseWriter, operator string, r Result, err error) {
	switch {
	case err != nil:
		o.answer(w, operator, r, err, nil)
	case r.Reason == venue.RejectReasonDuplicateInstrument:
		writeJSON(w, http.StatusConflict, apiError{Error: "the id or symbol was listed meanwhile (nothing changed)", Code: "duplicate_instrument", Seq: r.Seq})
	case r.Reason == venue.RejectReasonCapacityExceeded:
		writeJSON(w, http.StatusConflict, apiError{Error: "the instrument table is full: engine.instruments_max (nothing changed)", Code: "instruments_full", Seq: r.Seq})
	case r.Reason == venue.RejectReasonInvalidInstrument:
		// checkAdd refused what passes a bound, naming it (boundsRefusal).
		writeJSON(w, http.StatusUnprocessableEntity, apiError{Error: "refused by the matcher as invalid reference data, though it passed the admin API's checks (nothing changed)",
			Code: "invalid_instrument", Seq: r.Seq})
	default:
		writeJSON(w, http.StatusUnprocessableEntity, apiError{Error: "refused by the matcher: " + r.Reason.String(), Code: "refused", Seq: r.Seq})
	}
}

// AddInstrument journals an AddInstrument command, waits until it is
// applied and durable, and returns its result (Reason None: listed).
func (o *Ops) AddInstrument(a *core.AddedInstrument, operator, reason string) (Result, error) {
	r, err := o.submit(func(slot []byte, cmdSeq uint64) error {
		return core.EncodeAddInstrument(slot, cmdSeq, o.stampNs(), a, operator, reason)
	})
	if err != nil {
		return r, err
	}
	if r.Reason == venue.RejectReasonNone && !o.awaitListed(a.ID, a.Symbol) {
		return r, ErrTimeout
	}
	if o.metrics != nil {
		o.metrics.actions.WithLabelValues(addInstrumentAction, resultName(r.Reason)).Inc()
	}
	o.log.Info("operator command", "seq", r.Seq, "action", addInstrumentAction, "operator", operator, "reason", reason,
		"result", resultName(r.Reason), "instrument", a.ID, "symbol", a.Symbol)
	return r, nil
}

// submit claims a command slot, has encode write the command of sequence
// cmdSeq into it, publishes it and waits until it is applied and durable
// (awaitKeeping). Should encode fail (the callers check lengths first, so a bug),
// the slot is still published, as a Tick: a claimed slot cannot be given
// back.
func (o *Ops) submit(encode func(slot []byte, cmdSeq uint64) error) (Result, error) {
	r, _, err := o.submitKeeping(encode, false)
	return r, err
}

// submitKeeping is submit; with keep, a wait that times out returns late,
// which gives the command's result once applied (awaitKeeping).
func (o *Ops) submitKeeping(encode func(slot []byte, cmdSeq uint64) error, keep bool) (r Result, late <-chan Result, err error) {
	cmdSeq, wait, err := o.publishCommand(encode, true)
	if err != nil {
		return Result{Seq: cmdSeq}, nil, err
	}
	return o.awaitKeeping(cmdSeq, wait, keep)
}

// publishCommand claims a command slot, has encode write the command of
// sequence cmdSeq into it and publishes it; with expect, wait then gives
// its result. Should encode fail, the slot is published as a Tick (submit).
func (o *Ops) publishCommand(encode func(slot []byte, cmdSeq uint64) error, expect bool) (cmdSeq uint64, wait <-chan Result, err error) {
	p := o.cfg.Pipeline
	seq, slot, err := p.Claim()
	if errors.Is(err, pipeline.ErrHalted) {
		return 0, nil, err
	}
	if err != nil {
		return 0, nil, fmt.Errorf("%w (%v)", ErrBusy, err)
	}
	cmdSeq = p.SeqBase() + uint64(seq)
	if expect {
		wait = o.monitor.waiters.Expect(cmdSeq)
	}
	if err := encode(slot, cmdSeq); err != nil {
		var t venue.Tick
		_ = t.WrapEncode(slot, 0)
		t.SetSeq(cmdSeq)
		t.SetTimestampNs(o.stampNs())
		p.Commands.Publish(seq)
		if expect {
			o.monitor.waiters.Forget(cmdSeq)
		}
		return cmdSeq, nil, err
	}
	if o.commandWatch != nil {
		o.commandWatch(slot)
	}
	p.Commands.Publish(seq)
	return cmdSeq, wait, nil
}

// awaitKeeping waits for the result of command seq and for it to be
// durable; with keep, a wait that times out (ErrTimeout) returns late,
// which gives the command's result once the matcher has applied it (at
// once when it had: the command not yet durable).
func (o *Ops) awaitKeeping(cmdSeq uint64, wait <-chan Result, keep bool) (r Result, late <-chan Result, err error) {
	timeout := o.cfg.Admin.CallTimeout.Duration
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r = <-wait:
	case <-timer.C:
		if keep {
			return Result{Seq: cmdSeq}, wait, ErrTimeout
		}
		o.monitor.waiters.Forget(cmdSeq)
		return Result{Seq: cmdSeq}, nil, ErrTimeout
	case <-o.stop:
		o.monitor.waiters.Forget(cmdSeq)
		return Result{Seq: cmdSeq}, nil, ErrStopping
	}
	if !o.cfg.Pipeline.WaitDurableOrEnd(int64(cmdSeq), timeout) {
		if err := o.cfg.Pipeline.Err(); err != nil {
			// The venue halted with the command applied but not durable (a
			// cluster leader deposed meanwhile: another node may still
			// commit it), so its fate is unknown; say so, and why.
			return r, nil, fmt.Errorf("%w (%v)", ErrUnconfirmed, err)
		}
		if keep {
			applied := make(chan Result, 1)
			applied <- r
			late = applied
		}
		return r, late, ErrTimeout
	}
	return r, nil, nil
}

// awaitListed waits (admin.call_timeout at most) until Config.Listed
// reports the instrument known: the gateway and market data learn it from
// the same event as the Monitor, on their own goroutines.
func (o *Ops) awaitListed(id uint32, symbol string) bool {
	if o.cfg.Listed == nil {
		return true
	}
	deadline := time.Now().Add(o.cfg.Admin.CallTimeout.Duration)
	for !o.cfg.Listed(id, symbol) {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-o.stop:
			return false
		case <-time.After(time.Millisecond):
		}
	}
	return true
}

// addedList is the monitor's record of the instruments added since start.
type addedList struct {
	list     []config.Instrument
	bySymbol map[string]int
}

// applyInstrumentAdded (m.mu held) lists an added instrument and answers
// the call waiting for it.
func (m *Monitor) applyInstrumentAdded(e *venue.InstrumentAdded) {
	r := Result{Seq: e.CauseSeq(), Reason: e.Reason(), Count: 0}
	if r.Reason == venue.RejectReasonNone && m.instruments[e.InstrumentID()] == nil {
		r.Count = 1
		tick := decimal.Tick{Mantissa: e.TickMantissa(), Scale: int(e.TickScale())}
		in := config.Instrument{ID: e.InstrumentID(), Symbol: string(e.Symbol()), TickSize: tick.String(), LotSize: e.LotSize(),
			MinQty: e.MinQty(), MaxQty: e.MaxQty(), RefPrice: string(decimal.FormatTicks(nil, e.RefPriceTicks(), tick)),
			BandPercent: e.BandPercent(), Status: e.Status(), Tick: tick, RefPriceTicks: e.RefPriceTicks(), Group: string(e.Group())}
		m.instruments[in.ID] = &instrumentView{status: in.Status, refPriceTicks: in.RefPriceTicks, bandPercent: in.BandPercent,
			bandLowTicks: e.BandLowTicks(), bandHighTicks: e.BandHighTicks(), bids: map[int64]int64{}, asks: map[int64]int64{}}
		if m.added.bySymbol == nil {
			m.added.bySymbol = map[string]int{}
		}
		m.added.bySymbol[in.Symbol] = len(m.added.list)
		m.added.list = append(m.added.list, in)
		if m.onAdded != nil {
			m.onAdded(in)
		}
	}
	m.waiters.Deliver(r.Seq, r)
}

func (m *Monitor) addedInstruments() []config.Instrument {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]config.Instrument(nil), m.added.list...)
}

func (m *Monitor) addedInstrument(symbol string) (config.Instrument, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.added.bySymbol[symbol]
	if !ok {
		return config.Instrument{}, false
	}
	return m.added.list[i], true
}
