package console

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/latency"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The views are what the pages and their streams show, encoded as JSON.
// Prices are decimal strings formatted from ticks; the chart's points
// carry ticks (integers) and the browser only scales them to pixels.

// LadderLevels is how many price levels per side the depth ladder shows.
const LadderLevels = 15

type marketRow struct {
	Symbol    string `json:"symbol"`
	Status    string `json:"status"`
	Last      string `json:"last"`
	LastQty   int64  `json:"lastQty"`
	Change    string `json:"change"`
	ChangePct string `json:"changePct"`
	Up        int    `json:"up"`       // 1 up, -1 down, 0 unchanged or no trade
	Ref       string `json:"ref"`      // the price the change is measured from
	RefLabel  string `json:"refLabel"` // what Ref is: "previous close", "reference price", "first trade"
	Volume    int64  `json:"volume"`   // of the day
	Trades    int64  `json:"trades"`   // of the day
	Bid       string `json:"bid"`
	BidQty    int64  `json:"bidQty"`
	Ask       string `json:"ask"`
	AskQty    int64  `json:"askQty"`
}

type marketView struct {
	Instruments []marketRow `json:"instruments"`
}

func price(ticks int64, in config.Instrument) string {
	return string(decimal.FormatTicks(nil, ticks, in.Tick))
}

func (c *Console) marketRow(in config.Instrument) marketRow {
	mon, _ := c.cfg.Ops.Monitor().Instrument(in.ID)
	day := c.tape.daySummary(in.ID)
	// The day's figures, last trade included, are the tape's alone: after
	// an end of day the row shows no last trade but the previous close,
	// like the trades list and the chart (doc.go, "The day and restarts").
	row := marketRow{Symbol: in.Symbol, Trades: day.TradesOfDay, Volume: day.Volume, LastQty: day.LastQty}
	if d, ok := c.top(in); ok {
		// The feed's view: only durable commands, like everything that leaves the venue.
		row.Status = d.State.Status.String()
		if len(d.Bids) > 0 {
			row.Bid, row.BidQty = price(d.Bids[0].PriceTicks, in), d.Bids[0].Qty
		}
		if len(d.Asks) > 0 {
			row.Ask, row.AskQty = price(d.Asks[0].PriceTicks, in), d.Asks[0].Qty
		}
	} else {
		// Market data off: the ops Monitor's view (events, not yet durable ones excluded).
		row.Status = mon.Status.String()
		if mon.BidQty > 0 {
			row.Bid, row.BidQty = price(mon.BidTicks, in), mon.BidQty
		}
		if mon.AskQty > 0 {
			row.Ask, row.AskQty = price(mon.AskTicks, in), mon.AskQty
		}
	}
	ref, label := refTicks(day, mon, in)
	row.Ref, row.RefLabel = price(ref, in), label
	if day.LastQty > 0 {
		row.Last = price(day.LastTicks, in)
		row.Change, row.ChangePct, row.Up = change(day.LastTicks, ref, in)
	}
	return row
}

// top copies the best levels and the state of an instrument from the
// market data depth cache (false: market data is off).
func (c *Console) top(in config.Instrument) (marketdata.Depth, bool) {
	var d marketdata.Depth
	if c.cfg.Depth == nil {
		return d, false
	}
	err := c.cfg.Depth.Depth(marketdata.InstrumentID(in.ID), 1, &d)
	return d, err == nil
}

// refTicks is the price a change is measured from, and its label: the
// previous close or the last SetPriceBand's reference price, whichever the
// tape saw last; else the Monitor's (the reference of the band in force,
// the configured one or the centre of one an operator set); else the day's
// first trade; else the configured reference price.
func refTicks(day instrumentCopy, st ops.InstrumentState, in config.Instrument) (int64, string) {
	switch {
	case day.RefTicks > 0 && day.RefIsClose:
		return day.RefTicks, "previous close"
	case day.RefTicks > 0:
		return day.RefTicks, "reference price"
	case st.RefPriceTicks > 0:
		return st.RefPriceTicks, "reference price"
	case day.FirstTicks > 0:
		return day.FirstTicks, "first trade"
	}
	return in.RefPriceTicks, "reference price"
}

// change formats last − ref, in price and in percent (two decimals, from
// integers: basis points of a hundredth).
func change(last, ref int64, in config.Instrument) (string, string, int) {
	d := last - ref
	sign, up := "+", 1
	switch {
	case d < 0:
		sign, up, d = "-", -1, -d
	case d == 0:
		sign, up = "", 0
	}
	pct := ""
	if ref > 0 {
		bp := (d*10000 + ref/2) / ref // hundredths of a percent
		pct = fmt.Sprintf("%s%d.%02d%%", sign, bp/100, bp%100)
	}
	return sign + price(d, in), pct, up
}

func (c *Console) marketView() marketView {
	v := marketView{Instruments: make([]marketRow, 0, len(c.bySymbol))}
	for _, in := range c.cfg.Ops.Instruments() {
		v.Instruments = append(v.Instruments, c.marketRow(in))
	}
	return v
}

type levelView struct {
	Price  string `json:"price"`
	Qty    int64  `json:"qty"`
	Orders int    `json:"orders"`
}

type tradeView struct {
	Time  string `json:"time"`
	Price string `json:"price"`
	Qty   int64  `json:"qty"`
	Side  string `json:"side"` // the aggressor's
}

type chartView struct {
	// Points are [unix milliseconds, price ticks] of the last trades.
	Points [][2]int64 `json:"points"`
	// TickSize scales ticks to prices for the axis labels.
	Low, High, First, Last string
	LowTicks, HighTicks    int64
	// DayStart is when the day began (the last end of day, UTC); "" when
	// the journal holds none.
	DayStart string `json:"dayStart"`
}

type bookView struct {
	marketRow
	MarketData bool        `json:"marketData"` // false: market data is off, no ladder
	FeedSeq    uint64      `json:"feedSeq"`
	Bids       []levelView `json:"bids"`
	Asks       []levelView `json:"asks"`
	Tape       []tradeView `json:"tape"` // the last trades, newest first
	Chart      chartView   `json:"chart"`
}

func (c *Console) bookView(in config.Instrument) bookView {
	v := bookView{marketRow: c.marketRow(in), Bids: []levelView{}, Asks: []levelView{}, Tape: []tradeView{}}
	if c.cfg.Depth != nil {
		var d marketdata.Depth
		if err := c.cfg.Depth.Depth(marketdata.InstrumentID(in.ID), LadderLevels, &d); err == nil {
			v.MarketData, v.FeedSeq = true, d.NextSeq
			for _, l := range d.Bids {
				v.Bids = append(v.Bids, levelView{Price: price(l.PriceTicks, in), Qty: l.Qty, Orders: l.OrderCount})
			}
			for _, l := range d.Asks {
				v.Asks = append(v.Asks, levelView{Price: price(l.PriceTicks, in), Qty: l.Qty, Orders: l.OrderCount})
			}
		}
	}
	t, _ := c.tape.instrument(in.ID)
	var newest int64
	if len(t.Trades) > 0 {
		newest = t.Trades[0].TimeNs
	}
	for _, tr := range t.Trades {
		side := "buy"
		switch tr.Aggressor {
		case venue.SideSell:
			side = "sell"
		case 0:
			side = "auction"
		}
		v.Tape = append(v.Tape, tradeView{Time: tapeTime(tr.TimeNs, newest), Price: price(tr.PriceTicks, in),
			Qty: tr.Qty, Side: side})
	}
	v.Chart.Points = make([][2]int64, 0, len(t.Chart))
	for _, p := range t.Chart {
		v.Chart.Points = append(v.Chart.Points, [2]int64{p.timeNs / 1e6, p.priceTicks})
	}
	if t.DayNs > 0 {
		v.Chart.DayStart = time.Unix(0, t.DayNs).UTC().Format("2006-01-02 15:04:05")
	}
	if len(t.Chart) > 0 {
		v.Chart.Low, v.Chart.High, v.Chart.LowTicks, v.Chart.HighTicks = price(t.LowTicks, in), price(t.HighTicks, in), t.LowTicks, t.HighTicks
		v.Chart.First, v.Chart.Last = price(t.FirstTicks, in), price(t.Chart[len(t.Chart)-1].priceTicks, in)
	}
	return v
}

type sessionRow struct {
	CompID            string  `json:"compId"`
	LoggedOn          bool    `json:"loggedOn"`
	Disabled          bool    `json:"disabled"`
	Address           string  `json:"address"`
	NextSenderSeq     int     `json:"nextSenderSeq"`
	NextTargetSeq     int     `json:"nextTargetSeq"`
	MessagesPerSecond int     `json:"messagesPerSecond"`
	OrdersPerSecond   int     `json:"ordersPerSecond"`
	CancelsPerSecond  int     `json:"cancelsPerSecond"`
	RejectsPerSecond  float64 `json:"rejectsPerSecond"`
	Rejects           int64   `json:"rejects"`
	ThrottleHits      int64   `json:"throttleHits"`
	OpenOrders        int     `json:"openOrders"`
	// OpenOrdersMax is the session's bound on its open orders
	// (open_orders_max; 0: none, or a drop-copy session): /sessions shows
	// the open orders against it, so that an operator sees a session near
	// having its orders refused.
	OpenOrdersMax int `json:"openOrdersMax"`
	// DropCopy: a drop-copy session enters no orders, so it has no kill
	// switch and /operations offers no Kill or Reset (the API refuses them).
	DropCopy bool `json:"dropCopy"`
	// Killed: the session's kill switch is on; /operations says so and
	// offers Reset, not Kill (a kill of a killed session is refused).
	Killed bool `json:"killed"`
}

type sessionsView struct {
	Sessions []sessionRow `json:"sessions"`
	LoggedOn int          `json:"loggedOn"`
}

// rateSampler turns the sessions' reject counts into rates over the time
// between two updates.
type rateSampler struct {
	mu   sync.Mutex
	last map[uint16]rateSample // one per configured session
}

type rateSample struct {
	at      time.Time
	rejects int64
	rate    float64
}

// rateSampleMaxAge is the oldest sample a rate is measured from. The
// sampler runs when a page is viewed or streamed: a sample from the last
// viewer, hours before, gave the rejects of that whole time averaged over
// it as a rate now (80 rejects of one second, 20 s before, read as 3.6 a
// second). Such a sample is only a start, as the first is, and the next
// update, half a second later, measures.
const rateSampleMaxAge = 5 * time.Second

func (r *rateSampler) rejectRate(idx uint16, rejects int64, now time.Time) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev, ok := r.last[idx]
	if ok && now.Sub(prev.at) < 500*time.Millisecond {
		return prev.rate // too soon to measure: keep the last rate
	}
	rate := 0.0
	if ok && rejects >= prev.rejects && now.Sub(prev.at) <= rateSampleMaxAge {
		rate = float64(rejects-prev.rejects) / now.Sub(prev.at).Seconds()
	}
	r.last[idx] = rateSample{at: now, rejects: rejects, rate: rate}
	return rate
}

func (c *Console) sessionsView() sessionsView {
	now := c.cfg.Now()
	sessions := c.cfg.Ops.Sessions()
	killed := c.cfg.Ops.KilledSessions()
	v := sessionsView{Sessions: make([]sessionRow, 0, len(sessions))}
	for _, s := range sessions {
		st := c.cfg.Ops.SessionState(s.Idx)
		row := sessionRow{CompID: s.CompID, LoggedOn: st.LoggedOn, Disabled: st.Disabled, Address: st.Address,
			NextSenderSeq: st.NextSenderSeq, NextTargetSeq: st.NextTargetSeq, MessagesPerSecond: st.MessagesPerSecond,
			OrdersPerSecond: st.OrdersPerSecond, CancelsPerSecond: st.CancelsPerSecond, Rejects: st.Rejects,
			ThrottleHits: st.ThrottleHits, OpenOrders: c.cfg.Ops.Monitor().SessionOrders(s.Idx), OpenOrdersMax: s.OpenOrdersMax,
			RejectsPerSecond: c.rates.rejectRate(s.Idx, st.Rejects, now), DropCopy: s.DropCopy, Killed: killed[s.CompID]}
		if st.LoggedOn {
			v.LoggedOn++
		}
		v.Sessions = append(v.Sessions, row)
	}
	return v
}

type curvePoint struct {
	Percentile float64 `json:"p"`
	Micros     float64 `json:"us"`
}

type distributionView struct {
	Count int64        `json:"count"`
	P50   string       `json:"p50"`
	P99   string       `json:"p99"`
	P999  string       `json:"p999"`
	Max   string       `json:"max"`
	Curve []curvePoint `json:"curve"`
}

type latencySeries struct {
	Name       string           `json:"name"`
	Measured   bool             `json:"measured"`
	LastMinute distributionView `json:"lastMinute"`
	SinceStart distributionView `json:"sinceStart"`
	Clamped    int64            `json:"clamped"`
}

type latencyView struct {
	Series []latencySeries `json:"series"`
	At     string          `json:"at"`
}

func micros(ns int64) string { return strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64) + " µs" }

func distribution(d latency.Distribution) distributionView {
	v := distributionView{Count: d.Count, Curve: []curvePoint{}}
	if d.Count == 0 {
		return v
	}
	v.P50, v.P99, v.P999, v.Max = micros(d.P50Ns), micros(d.P99Ns), micros(d.P999Ns), micros(d.MaxNs)
	for i, p := range latency.Percentiles {
		v.Curve = append(v.Curve, curvePoint{Percentile: p, Micros: float64(d.CurveNs[i]) / 1e3})
	}
	return v
}

func (c *Console) latencyView() latencyView {
	v := latencyView{}
	var at int64
	for _, r := range []struct {
		name string
		rec  *latency.Recorder
	}{{"order to ExecutionReport", c.cfg.OrderToER}, {"order to market data feed", c.cfg.OrderToFeed}} {
		s := latencySeries{Name: r.name, LastMinute: distribution(latency.Distribution{}), SinceStart: distribution(latency.Distribution{})}
		if r.rec != nil {
			sum := r.rec.Summary()
			s.Measured, s.Clamped = true, sum.Clamped
			s.LastMinute, s.SinceStart = distribution(sum.LastMinute), distribution(sum.SinceStart)
			at = max(at, sum.AtUnixNs)
		}
		v.Series = append(v.Series, s)
	}
	if at > 0 {
		v.At = time.Unix(0, at).UTC().Format("15:04:05")
	}
	return v
}

type operatorRow struct {
	Seq      uint64 `json:"seq"`
	Time     string `json:"time"`
	Action   string `json:"action"`
	Target   string `json:"target"`
	Result   string `json:"result"`
	Count    uint32 `json:"count"`
	Operator string `json:"operator"`
}

type statusRow struct {
	Symbol string `json:"symbol"`
	Status string `json:"status"`
	// Auction, in a volatility auction: what it is and when it uncrosses
	// ("closing call extension until 16:32:00"); UncrossTo, in a call,
	// where the Uncross (the admin API's resume) takes the instrument.
	Auction   string `json:"auction,omitempty"`
	UncrossTo string `json:"uncrossTo,omitempty"`
}

type operationsView struct {
	Instruments []statusRow   `json:"instruments"`
	Sessions    []sessionRow  `json:"sessions"`
	Journal     []operatorRow `json:"journal"`
	CanOperate  bool          `json:"canOperate"` // an operator token is configured
	Notice      string        `json:"notice"`
}

func (c *Console) operationsView() operationsView {
	v := operationsView{Instruments: []statusRow{}, Journal: []operatorRow{}, Sessions: c.sessionsView().Sessions}
	byID := map[uint32]config.Instrument{}
	for _, in := range c.cfg.Ops.Instruments() {
		st, _ := c.cfg.Ops.Monitor().Instrument(in.ID)
		row := statusRow{Symbol: in.Symbol, Status: st.Status.String()}
		if core.IsCall(st.Status) {
			row.UncrossTo = st.UncrossTo().String()
		}
		if st.AuctionEndNs != 0 {
			row.Auction = ops.AuctionKind(st.AuctionOf) + " until " + time.Unix(0, st.AuctionEndNs).UTC().Format(time.TimeOnly)
		}
		v.Instruments = append(v.Instruments, row)
		byID[in.ID] = in
	}
	bySession := map[uint16]string{}
	for _, s := range c.cfg.Ops.Sessions() {
		bySession[s.Idx] = s.CompID
	}
	for _, r := range c.tape.operatorRecords() {
		// With its date: the list spans days (the last OperatorResultsKept
		// commands), and a halt of yesterday read as one of today.
		row := operatorRow{Seq: r.Seq, Time: time.Unix(0, r.TimeNs).UTC().Format(time.DateTime), Action: r.Action.String(),
			Result: "done", Count: r.Count, Operator: operatorOf(r)}
		if r.Action == ActionAddInstrument {
			row.Action = "AddInstrument" // the admin API's name of the action
		}
		if r.Reason != venue.RejectReasonNone {
			row.Result = "refused: " + r.Reason.String()
		}
		row.Target = target(r, bySession, byID)
		if r.Action == ActionRisk {
			row.Action, row.Target, row.Result = riskColumns(r, bySession, byID)
		}
		v.Journal = append(v.Journal, row)
	}
	v.CanOperate = c.cfg.Ops.CanOperate()
	if !v.CanOperate {
		v.Notice = "No operator token is configured ([[admin.token]] in the configuration): every action is refused."
	}
	return v
}

// What the journal list shows of what only a command says when the tape
// does not know it (OperatorRecord.Unnoted).
const (
	operatorUnknown = "(unknown)"
	// operatorAutomatic is the operator of an automatic kill: the venue's
	// own, by the rule the row's target names.
	operatorAutomatic = "automatic"
	accountUnknown    = "account filter unknown"
	statusUnknown     = "status unknown"
	bandUnknown       = "band unknown"
)

// operatorOf is who acted: the venue for an automatic kill, else the
// operator the record names. A risk command's the tape had no note of, or
// restored from a state of an older build (OperatorRecord.Unnoted), is
// said to be unknown, not shown as none (the page's note says where to
// read it).
func operatorOf(r OperatorRecord) string {
	switch {
	case r.Action == ActionRisk && r.Risk.Action == venue.RiskActionAutoKill:
		return operatorAutomatic
	case r.Operator == "":
		return operatorUnknown
	}
	return r.Operator
}

// target names what an operator command acted on, of the instruments
// byID (the console's, by id).
func target(r OperatorRecord, bySession map[uint16]string, byID map[uint32]config.Instrument) string {
	switch r.Action {
	case ActionAddInstrument:
		if name := byID[r.Instrument].Symbol; name != "" && r.Reason == venue.RejectReasonNone {
			return name
		}
		// Refused: the id may be another instrument's (a duplicate).
		return fmt.Sprintf("instrument id %d", r.Instrument)
	case venue.OperatorActionTypeSessionLogout, venue.OperatorActionTypeSessionDisable, venue.OperatorActionTypeSessionEnable:
		return bySession[r.Session]
	case venue.OperatorActionTypeCancelOrder:
		if r.OrderID == 0 {
			if name := bySession[r.Session]; name != "" {
				return "no such order of session " + name
			}
			return "no such order"
		}
		return fmt.Sprintf("order %d of session %s in %s", r.OrderID, bySession[r.Session], byID[r.Instrument].Symbol)
	case venue.OperatorActionTypeSetTradingStatus:
		// The status it set: a halt, a resume (open, a call or closed) and
		// a close are one action, which alone read alike.
		name := byID[r.Instrument].Symbol
		if name == "" {
			name = "all"
		}
		if r.Unnoted {
			return name + ", " + statusUnknown
		}
		return name + " → " + r.Status.String()
	case venue.OperatorActionTypeSetPriceBand:
		// The band it set (a refused one: asked for), its reference price
		// as the pages show prices.
		in, ok := byID[r.Instrument]
		name := in.Symbol
		if !ok {
			name = fmt.Sprintf("instrument id %d", r.Instrument)
		}
		if r.Unnoted {
			return name + ", " + bandUnknown
		}
		ref := strconv.FormatInt(r.RefTicks, 10) + " ticks" // no tick size to scale them by
		if ok {
			ref = price(r.RefTicks, in)
		}
		return fmt.Sprintf("%s → reference price %s, band %d%%", name, ref, r.BandPercent)
	case venue.OperatorActionTypeMassCancel:
		var parts []string
		if r.Session != ops.AnySession {
			parts = append(parts, "session "+bySession[r.Session])
		}
		if r.Instrument != 0 {
			parts = append(parts, byID[r.Instrument].Symbol)
		}
		if r.Account != "" {
			parts = append(parts, "account "+r.Account)
		}
		if r.Unnoted {
			// Its account filter is unknown (OperatorRecord.Unnoted): "all"
			// would say it had none.
			if len(parts) == 0 {
				return accountUnknown
			}
			return strings.Join(parts, " ") + ", " + accountUnknown
		}
		if len(parts) == 0 {
			return "all"
		}
		return strings.Join(parts, " ")
	}
	if name := byID[r.Instrument].Symbol; name != "" {
		return name
	}
	return "all"
}

// riskColumns gives a kill switch's or a limit's row its action, target
// and result, in the admin API's terms: a limit by its name in the
// configuration, a removed one "none" (core.RiskLimitRemove); an automatic
// kill's, the rule that tripped it.
func riskColumns(r OperatorRecord, bySession map[uint16]string, byID map[uint32]config.Instrument) (action, target, result string) {
	k := r.Risk
	action = map[venue.RiskAction]string{venue.RiskActionKill: "Kill", venue.RiskActionReset: "Reset", venue.RiskActionSetLimit: "SetLimit",
		venue.RiskActionAutoKill: "AutoKill"}[k.Action]
	target = "session " + bySession[r.Session]
	if k.Scope == venue.RiskScopeAccount {
		target = "account " + k.Account
	}
	if k.Action == venue.RiskActionAutoKill {
		// The rule that tripped it, by its name in the configuration; its
		// event carries no figure (gateway.AutoKill), GET /v1/risk and the
		// venue's log say what is known of it.
		return action, target + ": " + ops.RiskLimitNames[k.Limit] + " reached", "done"
	}
	result = "done"
	if k.Result != venue.RiskResultApplied {
		result = "refused: " + k.Result.String()
		if k.Value != 0 {
			result += fmt.Sprintf(" (figure %d)", k.Value)
		}
	}
	if k.Action != venue.RiskActionSetLimit {
		return action, target, result
	}
	target += ": " + ops.RiskLimitNames[k.Limit]
	if name := byID[r.Instrument].Symbol; r.Instrument != 0 {
		if name == "" {
			name = fmt.Sprintf("instrument id %d", r.Instrument)
		}
		target += " in " + name
	}
	if k.Result == venue.RiskResultApplied {
		value := strconv.FormatInt(k.Value, 10)
		if k.Value == core.RiskLimitRemove {
			value = gateway.LimitNone
		}
		target += " = " + value
	}
	return action, target, result
}

// tapeTime is a trade's time on the book page's tape, in UTC: the time of
// day for a trade on the newest trade's date, with its date for one
// before. The day runs from one end of day to the next, which may cross
// midnight (or a venue may run days without an end of day): by its time
// alone, yesterday's 23:59 read as the latest trade.
func tapeTime(tsNs, newestNs int64) string {
	at, newest := time.Unix(0, tsNs).UTC(), time.Unix(0, newestNs).UTC()
	if y, m, d := at.Date(); y != newest.Year() || m != newest.Month() || d != newest.Day() {
		return at.Format("2006-01-02 15:04:05.000")
	}
	return at.Format("15:04:05.000")
}
