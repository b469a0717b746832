package console

import (
	"sync"

	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Bounds of the tape.
const (
	// TradesKept is how many last trades each instrument's page lists.
	TradesKept = 50
	// ChartPointsMax is how many trades the price chart of an instrument
	// draws: the last ChartPointsMax since start.
	ChartPointsMax = 2048
	// OperatorResultsKept is how many operator commands the Operations
	// page lists.
	OperatorResultsKept = 100
)

// Trade is one trade on the tape.
type Trade struct {
	TimeNs     int64
	PriceTicks int64
	Qty        int64
	Aggressor  venue.Side
}

// OperatorRecord is an operator command as the journal recorded it (from
// its OperatorResult event).
type OperatorRecord struct {
	Seq        uint64
	TimeNs     int64
	Action     venue.OperatorActionType
	Reason     venue.RejectReason
	Session    uint16
	Instrument uint32
	Count      uint32
	Operator   string
}

// chartPoint is one trade of the price chart.
type chartPoint struct {
	timeNs, priceTicks int64
}

// instrumentTape is what the tape keeps of one instrument: fixed rings,
// allocated at start.
type instrumentTape struct {
	trades      [TradesKept]Trade
	tradesN     int // trades recorded since start
	chart       []chartPoint
	chartN      int
	firstTicks  int64 // the first trade since start (0: none)
	highTicks   int64
	lowTicks    int64
	statusTimes int64 // last status change, event time
}

// tape is the console's consumer of committed events: it keeps the trades,
// the chart points and the operator commands the pages show. Every other
// figure comes from the ops Monitor and the market data depth cache, which
// are also built from events.
type tape struct {
	mu      sync.Mutex
	byID    map[uint32]*instrumentTape // fixed at construction
	ops     [OperatorResultsKept]OperatorRecord
	opsN    int
	events  int64
	lastErr error
}

func newTape(ids []uint32) *tape {
	t := &tape{byID: make(map[uint32]*instrumentTape, len(ids))}
	for _, id := range ids {
		t.byID[id] = &instrumentTape{chart: make([]chartPoint, ChartPointsMax)}
	}
	return t
}

// run consumes committed events until WaitFor fails (the venue stops).
func (t *tape) run(src marketdata.EventSource) error {
	next := src.Next()
	for {
		avail, err := src.WaitFor(next)
		if err != nil {
			return err
		}
		t.mu.Lock()
		for s := next; s <= avail; s++ {
			t.apply(src.Slot(s))
		}
		t.mu.Unlock()
		src.Release(avail)
		next = avail + 1
	}
}

// apply records one event (t.mu held). It does not allocate.
func (t *tape) apply(ev []byte) {
	t.events++
	tid, err := venue.TemplateIDOf(ev, 0)
	if err != nil {
		return
	}
	switch tid {
	case venue.InstrumentAddedTemplateID:
		var e venue.InstrumentAdded
		if e.WrapDecode(ev, 0) == nil && e.Reason() == venue.RejectReasonNone && t.byID[e.InstrumentID()] == nil {
			t.byID[e.InstrumentID()] = &instrumentTape{chart: make([]chartPoint, ChartPointsMax)}
		}
	case venue.FillTemplateID:
		var e venue.Fill
		if e.WrapDecode(ev, 0) != nil || e.Aggressor() != venue.BooleanTypeTrue {
			return // one trade gives two fills: the aggressor's is the trade
		}
		in := t.byID[e.InstrumentID()]
		if in == nil {
			return
		}
		px := e.LastPriceTicks()
		in.trades[in.tradesN%TradesKept] = Trade{TimeNs: e.TimestampNs(), PriceTicks: px, Qty: e.LastQty(), Aggressor: e.Side()}
		in.tradesN++
		in.chart[in.chartN%ChartPointsMax] = chartPoint{timeNs: e.TimestampNs(), priceTicks: px}
		in.chartN++
		if in.firstTicks == 0 {
			in.firstTicks, in.highTicks, in.lowTicks = px, px, px
		}
		in.highTicks, in.lowTicks = max(in.highTicks, px), min(in.lowTicks, px)
	case venue.OperatorResultTemplateID:
		var e venue.OperatorResult
		if e.WrapDecode(ev, 0) != nil {
			return
		}
		r := &t.ops[t.opsN%OperatorResultsKept]
		*r = OperatorRecord{Seq: e.CauseSeq(), TimeNs: e.TimestampNs(), Action: e.Action(), Reason: e.Reason(),
			Session: e.FilterSessionIdx(), Instrument: e.InstrumentID(), Count: e.Count()}
		r.Operator = string(trimNul(e.Operator())) // one small string per operator command, off the order path
		t.opsN++
	}
}

func trimNul(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// instrumentCopy is a copy of one instrument's tape for a page.
type instrumentCopy struct {
	Trades                          []Trade // newest first
	Chart                           []chartPoint
	TradesSinceStart                int
	FirstTicks, HighTicks, LowTicks int64
}

// instrument copies one instrument's tape (false: unknown instrument).
func (t *tape) instrument(id uint32) (instrumentCopy, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in := t.byID[id]
	if in == nil {
		return instrumentCopy{}, false
	}
	c := instrumentCopy{TradesSinceStart: in.tradesN, FirstTicks: in.firstTicks, HighTicks: in.highTicks, LowTicks: in.lowTicks}
	for i := 0; i < min(in.tradesN, TradesKept); i++ {
		c.Trades = append(c.Trades, in.trades[(in.tradesN-1-i)%TradesKept])
	}
	n := min(in.chartN, ChartPointsMax)
	c.Chart = make([]chartPoint, 0, n)
	for i := in.chartN - n; i < in.chartN; i++ {
		c.Chart = append(c.Chart, in.chart[i%ChartPointsMax])
	}
	return c, true
}

// tradesSinceStart is the number of trades of an instrument since start.
func (t *tape) tradesSinceStart(id uint32) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if in := t.byID[id]; in != nil {
		return in.tradesN
	}
	return 0
}

// operatorRecords copies the operator commands kept, newest first.
func (t *tape) operatorRecords() []OperatorRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]OperatorRecord, 0, min(t.opsN, OperatorResultsKept))
	for i := 0; i < min(t.opsN, OperatorResultsKept); i++ {
		out = append(out, t.ops[(t.opsN-1-i)%OperatorResultsKept])
	}
	return out
}
