package console

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Bounds of the tape.
const (
	// TradesKept is how many last trades of the day each instrument's page
	// lists.
	TradesKept = 50
	// ChartPointsMax is how many trades the price chart of an instrument
	// draws: the day's last ChartPointsMax.
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
	Aggressor  venue.Side // 0: an auction's uncross, which has none
}

// OperatorRecord is an operator command as the journal recorded it (from
// its OperatorResult event, an AddInstrument's InstrumentAdded, or a risk
// command's RiskControlResult).
type OperatorRecord struct {
	Seq        uint64
	TimeNs     int64
	Action     venue.OperatorActionType
	Reason     venue.RejectReason
	Session    uint16
	Instrument uint32
	Count      uint32 // a kill: the orders it cancelled
	// Operator is who acted: from the result event, or for a risk
	// command, whose RiskControlResult names none, from the command
	// (Command); empty in a record of a command the tape was not shown.
	Operator string
	// Account is a MassCancel's account filter (empty: any account), from
	// the command (Command): its OperatorResult names none.
	Account string
	// OrderID is a CancelOrder's order (0: none found); Session and
	// Instrument are then its own.
	OrderID uint64
	// Status is the status a SetTradingStatus set (a halt, a resume's
	// or a close's), from the command (Command): its OperatorResult
	// names none, and without it a halt and its resume read alike.
	Status venue.TradingStatus
	// RefTicks and BandPercent are the reference price and band a
	// SetPriceBand set: from its result when done, which names the band
	// now in force; from the command (Command) when refused, whose result
	// names none, so that its row says what was asked.
	RefTicks, BandPercent int64
	// Unnoted says that what only the command says (a risk command's
	// Operator, a MassCancel's Account, a SetTradingStatus's Status, a
	// refused SetPriceBand's band) is unknown, and the row says so rather
	// than show none: the tape had no note of the command when its result
	// came (not shown it, or pushed out: notesKept), or the record was
	// restored from a state saved by an older build, which did not keep it
	// (state.go; nor a SetPriceBand's band, done or not).
	Unnoted bool
	Risk    RiskRecord
}

// RiskRecord is what a RiskControlResult says of an operator's kill,
// reset or limit change, or of an automatic kill (Action ActionRisk).
type RiskRecord struct {
	Action  venue.RiskAction // Kill, Reset, SetLimit or AutoKill
	Scope   venue.RiskScope
	Limit   venue.RiskLimit // SetLimit; AutoKill: the rule that tripped it
	Result  venue.RiskResult
	Value   int64 // SetLimit: the new value (core.RiskLimitRemove: removed); refused: the figure in the way
	Account string
}

// Actions of an OperatorRecord of an operator's command other than an
// OperatorCommand, so values OperatorActionType does not use:
// ActionAddInstrument for an AddInstrument, ActionRisk for a RiskControl
// or RiskSetLimit (a kill switch turned on or off, a limit changed).
const (
	ActionAddInstrument venue.OperatorActionType = 255
	ActionRisk          venue.OperatorActionType = 254
)

// chartPoint is one trade of the price chart.
type chartPoint struct {
	timeNs, priceTicks int64
}

// instrumentTape is what the tape keeps of one instrument's day: fixed
// rings, allocated at start.
type instrumentTape struct {
	trades     [TradesKept]Trade
	tradesN    int64 // trades of the day
	chart      []chartPoint
	chartN     int64
	firstTicks int64 // the day's first trade (0: none)
	highTicks  int64
	lowTicks   int64
	volume     int64 // quantity traded in the day
	// refTicks is the reference price the change is measured from: the
	// previous close or the last SetPriceBand's, whichever came later (0:
	// neither seen); refIsClose says it is the previous close.
	refTicks   int64
	refIsClose bool
	closeTicks int64 // the last trade of the last day that traded (0: none seen)
}

// Tape is the console's consumer of committed events: it keeps each
// instrument's trades of the day, the chart points, the day's volume and
// the operator commands the pages show. The day starts at the last
// EndOfDay the events carry. Every other figure comes from the ops
// Monitor and the market data depth cache, which are also built from
// events.
//
// A restart rebuilds it as the feed is rebuilt (doc.go "Restarts"): the
// venue hands it the events of the replayed journal (Replay), after the
// state saved with the snapshot the replay starts from (Restore).
type Tape struct {
	mu       sync.Mutex
	byID     map[uint32]*instrumentTape // the configured instruments, then those added (InstrumentAdded, Restore)
	ops      [OperatorResultsKept]OperatorRecord
	opsN     int64
	dayNs    int64 // time of the last EndOfDay (0: none seen)
	events   int64
	replayed int64 // events handed by Replay

	// snapPoint is the command after which the state is to be captured
	// (0: none), as for the feed (marketdata.Feed.SnapshotAt).
	snapPoint atomic.Uint64
	capture   func(seq uint64, write func(io.Writer) error) error

	// notes are what the operator commands shown to Command say that
	// their result events do not, until those events come (notesMu).
	notesMu sync.Mutex
	notes   [notesKept]commandNote
	notesN  int
}

// notesKept bounds the operator commands Command keeps a note of until
// their results come: a start-up's or a follower's replay shows one at a
// time, the admin API as many as its calls under way, and it has at most
// one call on each connection it holds (HTTP/1.1: the admin listener
// serves no HTTP/2), admin.console.streams_max + ops.AdminConnsBeyondStreams
// connections, so this many at the largest streams_max. A note is pushed
// out only when more commands await their results: calls that outlived
// admin.call_timeout and left their commands behind. Its row then says
// that its operator or account is unknown (OperatorRecord.Unnoted). A
// note never answered (the venue halted first) is pushed out in turn.
const notesKept = config.ConsoleStreamsLimit + ops.AdminConnsBeyondStreams

// commandNote is what an operator's command says that its result event
// does not: a MassCancel's account filter, a risk command's operator, a
// SetTradingStatus's status, a refused SetPriceBand's reference price and
// band.
type commandNote struct {
	kept        bool // false: an empty place (a journal's first command is seq 0)
	seq         uint64
	operator    string
	account     string
	status      venue.TradingStatus
	refTicks    int64
	bandPercent int64
}

// NewTape makes the tape of the instruments ids. capture, if set, is
// handed the tape's state (state.go) at the points SnapshotAt asks for.
func NewTape(ids []uint32, capture func(seq uint64, write func(io.Writer) error) error) *Tape {
	t := &Tape{byID: make(map[uint32]*instrumentTape, len(ids)), capture: capture}
	for _, id := range ids {
		t.byID[id] = &instrumentTape{chart: make([]chartPoint, ChartPointsMax)}
	}
	return t
}

// Command looks at a command before its events are handed to the tape
// (valid only during the call): where an operator's command is journaled
// (the admin API, before it publishes the command), and before the
// matcher applies one in a replay (a start-up's, a cluster follower's).
// It keeps what the command's result event lacks: a MassCancel's account
// filter, a SetTradingStatus's status, a SetPriceBand's reference price
// and band, the operator of a kill switch's or a limit's change. Any other
// command is passed over without a copy.
func (t *Tape) Command(cmd []byte) {
	tid, err := venue.TemplateIDOf(cmd, 0)
	if err != nil {
		return
	}
	var n commandNote
	switch tid {
	case venue.OperatorCommandTemplateID:
		c, ok := core.DecodeOperatorCommand(cmd) // a record of an earlier build too
		if !ok {
			return
		}
		switch c.Action() {
		case venue.OperatorActionTypeMassCancel:
			n = commandNote{kept: true, seq: c.Seq(), account: string(trimNul(c.Account()))}
		case venue.OperatorActionTypeSetTradingStatus:
			n = commandNote{kept: true, seq: c.Seq(), status: c.Status()}
		case venue.OperatorActionTypeSetPriceBand:
			n = commandNote{kept: true, seq: c.Seq(), refTicks: c.RefPriceTicks(), bandPercent: c.BandPercent()}
		default:
			return
		}
	case venue.RiskControlTemplateID:
		var c venue.RiskControl
		if c.WrapDecode(cmd, 0) != nil || (c.Action() != venue.RiskActionKill && c.Action() != venue.RiskActionReset) {
			return
		}
		n = commandNote{kept: true, seq: c.Seq(), operator: string(trimNul(c.Operator()))}
	case venue.RiskSetLimitTemplateID:
		var c venue.RiskSetLimit
		if c.WrapDecode(cmd, 0) != nil {
			return
		}
		n = commandNote{kept: true, seq: c.Seq(), operator: string(trimNul(c.Operator()))}
	default:
		return
	}
	t.notesMu.Lock()
	t.notes[t.notesN%notesKept] = n
	t.notesN++
	t.notesMu.Unlock()
}

// note takes the note Command kept of command seq (false: none).
func (t *Tape) note(seq uint64) (commandNote, bool) {
	t.notesMu.Lock()
	defer t.notesMu.Unlock()
	for i := range t.notes {
		if n := t.notes[i]; n.kept && n.seq == seq {
			t.notes[i] = commandNote{}
			return n, true
		}
	}
	return commandNote{}, false
}

// Replay records the event of a command applied before Run: a replayed
// one at start-up, or one a cluster follower applied as it committed.
func (t *Tape) Replay(ev []byte) {
	t.mu.Lock()
	t.apply(ev)
	t.replayed++
	t.mu.Unlock()
}

// SnapshotAt asks for the tape's state after command seq: the venue calls
// it when it captures the matcher's snapshot of seq. The tape captures its
// state just before it applies the first event of a later command, when it
// has applied every event up to seq and none after.
func (t *Tape) SnapshotAt(seq uint64) { t.snapPoint.Store(seq) }

// Run consumes committed events until WaitFor fails (the venue stops).
// Console.Run runs it; a venue without the console runs it for the admin
// API's day figures (DayFigures).
func (t *Tape) Run(src marketdata.EventSource) error {
	next := src.Next()
	for {
		avail, err := src.WaitFor(next)
		if err != nil {
			return err
		}
		t.mu.Lock()
		for s := next; s <= avail; s++ {
			t.applyCommitted(src.Slot(s))
		}
		t.mu.Unlock()
		src.Release(avail)
		next = avail + 1
	}
}

// applyCommitted records a committed event (t.mu held), after capturing
// the state asked for when the event is the first of a later command.
func (t *Tape) applyCommitted(ev []byte) {
	if p := t.snapPoint.Load(); p != 0 && venue.CauseSeqOf(ev) > p {
		t.captureState(p)
	}
	t.apply(ev)
}

// CaptureAtStop captures the state a SnapshotAt asked for and no event of
// a later command has triggered yet, as marketdata.Feed.CaptureAtStop does:
// only once every event is applied and none will follow.
func (t *Tape) CaptureAtStop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.snapPoint.Load(); p != 0 {
		t.captureState(p)
	}
}

// captureState hands the state to capture (t.mu held). A failure costs
// only this snapshot's state: the venue then starts from an older one, or
// from the whole journal.
func (t *Tape) captureState(seq uint64) {
	t.snapPoint.CompareAndSwap(seq, 0)
	if t.capture != nil {
		_ = t.capture(seq, t.writeState)
	}
}

// apply records one event (t.mu held). It does not allocate, but for the
// operator's name of an operator command and the account of a risk command.
func (t *Tape) apply(ev []byte) {
	t.events++
	tid, err := venue.TemplateIDOf(ev, 0)
	if err != nil {
		return
	}
	switch tid {
	case venue.InstrumentAddedTemplateID:
		var e venue.InstrumentAdded
		if e.WrapDecode(ev, 0) != nil {
			return
		}
		if e.Reason() == venue.RejectReasonNone && t.byID[e.InstrumentID()] == nil {
			t.byID[e.InstrumentID()] = &instrumentTape{chart: make([]chartPoint, ChartPointsMax)}
		}
		// A listing is an operator's command like a halt: the journal list
		// shows it (README "Adding an instrument").
		var count uint32
		if e.Reason() == venue.RejectReasonNone {
			count = 1
		}
		t.operatorRecord(OperatorRecord{Seq: e.CauseSeq(), TimeNs: e.TimestampNs(), Action: ActionAddInstrument, Reason: e.Reason(),
			Session: ops.AnySession, Instrument: e.InstrumentID(), Count: count}, e.Operator())
	case venue.FillTemplateID:
		var e venue.Fill
		if e.WrapDecode(ev, 0) != nil {
			return
		}
		// One trade gives two fills: the aggressor's is the trade; an
		// uncross has no aggressor, and its buy side's fill is the trade.
		var aggressor venue.Side
		switch {
		case e.Aggressor() == venue.BooleanTypeTrue:
			aggressor = e.Side()
		case e.Auction() != venue.BooleanTypeTrue || e.Side() != venue.SideBuy:
			return
		}
		if in := t.byID[e.InstrumentID()]; in != nil {
			in.add(Trade{TimeNs: e.TimestampNs(), PriceTicks: e.LastPriceTicks(), Qty: e.LastQty(), Aggressor: aggressor})
		}
	case venue.OperatorResultTemplateID:
		var e venue.OperatorResult
		if e.WrapDecode(ev, 0) != nil {
			return
		}
		t.operatorResult(&e)
	case venue.RiskControlResultTemplateID:
		var e venue.RiskControlResult
		if e.WrapDecode(ev, 0) != nil {
			return
		}
		// An operator's kill, reset or limit change is journaled like a
		// halt, and listed with them; so is an automatic kill (a limit
		// tripped), which no operator made and whose row says so: before,
		// nothing on the pages said why a switch was on. The periodic
		// utilisation report is not listed. The result names no operator:
		// the command does (Command).
		switch e.Action() {
		case venue.RiskActionAutoKill:
			if e.Result() != venue.RiskResultApplied {
				return
			}
			t.operatorRecord(OperatorRecord{Seq: e.CauseSeq(), TimeNs: e.TimestampNs(), Action: ActionRisk, Session: e.SessionIdx(),
				Count: e.CancelledCount(), Risk: RiskRecord{Action: e.Action(), Scope: e.Scope(), Limit: e.Limit(), Result: e.Result(),
					Account: string(trimNul(e.Account()))}}, nil)
		case venue.RiskActionKill, venue.RiskActionReset, venue.RiskActionSetLimit:
			n, noted := t.note(e.CauseSeq())
			t.operatorRecord(OperatorRecord{Seq: e.CauseSeq(), TimeNs: e.TimestampNs(), Action: ActionRisk, Session: e.SessionIdx(),
				Instrument: e.InstrumentID(), Count: e.CancelledCount(), Unnoted: !noted, Risk: RiskRecord{Action: e.Action(), Scope: e.Scope(),
					Limit: e.Limit(), Result: e.Result(), Value: e.Value(), Account: string(trimNul(e.Account()))}}, []byte(n.operator))
		}
	}
}

func (in *instrumentTape) add(tr Trade) {
	in.trades[in.tradesN%TradesKept] = tr
	in.tradesN++
	in.chart[in.chartN%ChartPointsMax] = chartPoint{timeNs: tr.TimeNs, priceTicks: tr.PriceTicks}
	in.chartN++
	in.volume += tr.Qty
	px := tr.PriceTicks
	if in.firstTicks == 0 {
		in.firstTicks, in.highTicks, in.lowTicks = px, px, px
	}
	in.highTicks, in.lowTicks = max(in.highTicks, px), min(in.lowTicks, px)
}

// newDay forgets the day's trades. A day that traded closes at its last
// trade, which becomes the reference price, as on an exchange; after a day
// without trades the reference price in force stays.
func (in *instrumentTape) newDay() {
	if in.tradesN > 0 {
		in.closeTicks = in.trades[(in.tradesN-1)%TradesKept].PriceTicks
		in.refTicks, in.refIsClose = in.closeTicks, true
	}
	in.tradesN, in.chartN, in.firstTicks, in.highTicks, in.lowTicks, in.volume = 0, 0, 0, 0, 0, 0
}

// operatorResult records an operator command; an EndOfDay done starts a
// new day, a SetPriceBand done sets the reference price.
func (t *Tape) operatorResult(e *venue.OperatorResult) {
	done := e.Reason() == venue.RejectReasonNone
	switch {
	case done && e.Action() == venue.OperatorActionTypeEndOfDay:
		t.dayNs = e.TimestampNs()
		for _, in := range t.byID {
			in.newDay()
		}
	case done && e.Action() == venue.OperatorActionTypeSetPriceBand:
		if in := t.byID[e.InstrumentID()]; in != nil {
			in.refTicks, in.refIsClose = e.RefPriceTicks(), false
		}
	}
	r := OperatorRecord{Seq: e.CauseSeq(), TimeNs: e.TimestampNs(), Action: e.Action(), Reason: e.Reason(),
		Session: e.FilterSessionIdx(), Instrument: e.InstrumentID(), Count: e.Count(), OrderID: e.OrderID()}
	if e.Action() == venue.OperatorActionTypeMassCancel {
		// The result names no account filter: the command does (Command).
		n, noted := t.note(e.CauseSeq())
		r.Account, r.Unnoted = n.account, !noted
	}
	if e.Action() == venue.OperatorActionTypeSetTradingStatus {
		// Nor the status it set: the command does (Command).
		n, noted := t.note(e.CauseSeq())
		r.Status, r.Unnoted = n.status, !noted
	}
	if e.Action() == venue.OperatorActionTypeSetPriceBand {
		// A refused one's result names no band: the command does.
		n, noted := t.note(e.CauseSeq())
		r.RefTicks, r.BandPercent, r.Unnoted = n.refTicks, n.bandPercent, !noted
		if done {
			r.RefTicks, r.BandPercent, r.Unnoted = e.RefPriceTicks(), e.BandPercent(), false
		}
	}
	t.operatorRecord(r, e.Operator())
}

// operatorRecord keeps r, with the operator's name from its event.
func (t *Tape) operatorRecord(r OperatorRecord, operator []byte) {
	r.Operator = string(trimNul(operator)) // one small string per operator command, off the order path
	t.ops[t.opsN%OperatorResultsKept] = r
	t.opsN++
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
	TradesOfDay, Volume             int64
	FirstTicks, HighTicks, LowTicks int64
	LastTicks, LastQty              int64 // the day's last trade (LastQty 0: none)
	RefTicks                        int64 // 0: no previous close nor SetPriceBand seen
	RefIsClose                      bool  // RefTicks is the previous close
	CloseTicks                      int64 // the previous close (0: none seen)
	DayNs                           int64 // the last EndOfDay (0: none seen)
}

// instrument copies one instrument's tape (false: unknown instrument).
func (t *Tape) instrument(id uint32) (instrumentCopy, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in := t.byID[id]
	if in == nil {
		return instrumentCopy{}, false
	}
	c := in.summary()
	c.DayNs = t.dayNs
	for i := int64(0); i < min(in.tradesN, TradesKept); i++ {
		c.Trades = append(c.Trades, in.trades[(in.tradesN-1-i)%TradesKept])
	}
	n := min(in.chartN, ChartPointsMax)
	c.Chart = make([]chartPoint, 0, n)
	for i := in.chartN - n; i < in.chartN; i++ {
		c.Chart = append(c.Chart, in.chart[i%ChartPointsMax])
	}
	return c, true
}

func (in *instrumentTape) summary() instrumentCopy {
	c := instrumentCopy{TradesOfDay: in.tradesN, Volume: in.volume, FirstTicks: in.firstTicks, HighTicks: in.highTicks,
		LowTicks: in.lowTicks, RefTicks: in.refTicks, RefIsClose: in.refIsClose, CloseTicks: in.closeTicks}
	if in.tradesN > 0 {
		last := in.trades[(in.tradesN-1)%TradesKept]
		c.LastTicks, c.LastQty = last.PriceTicks, last.Qty
	}
	return c
}

// DayFigures gives an instrument's figures of the day to the admin API
// (ops.DaySource), the same the pages show.
func (t *Tape) DayFigures(id uint32) ops.DayFigures {
	d := t.daySummary(id)
	return ops.DayFigures{LastPriceTicks: d.LastTicks, LastQty: d.LastQty, Volume: d.Volume, Trades: d.TradesOfDay,
		PrevCloseTicks: d.CloseTicks}
}

// daySummary is an instrument's figures of the day without its lists.
func (t *Tape) daySummary(id uint32) instrumentCopy {
	t.mu.Lock()
	defer t.mu.Unlock()
	if in := t.byID[id]; in != nil {
		return in.summary()
	}
	return instrumentCopy{}
}

// operatorRecords copies the operator commands kept, newest first.
func (t *Tape) operatorRecords() []OperatorRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]OperatorRecord, 0, min(t.opsN, OperatorResultsKept))
	for i := int64(0); i < min(t.opsN, OperatorResultsKept); i++ {
		out = append(out, t.ops[(t.opsN-1-i)%OperatorResultsKept])
	}
	return out
}
