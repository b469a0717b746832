package core

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/fixvenue/fixvenue/sbe"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Errors returned by Apply. Each means that the command was not applied and
// no event was written.
var (
	// ErrUnknownTemplate: the header names a template that is not a command.
	ErrUnknownTemplate = errors.New("core: not a command template")
	// ErrInvalidCommand: an operator command (SetTradingStatus) names an
	// unknown instrument or an invalid status. Client commands never get it:
	// they are answered with reject events.
	ErrInvalidCommand = errors.New("core: operator command names an unknown instrument or invalid value")
)

// Matcher is the venue's matching engine: a deterministic state machine fed
// one command at a time by one goroutine. See the package documentation.
type Matcher struct {
	instruments []instrument
	instrByID   instrumentIndex
	pool        orderPool
	index       clOrdIndex
	gtd         gtdHeap
	sessions    []orderList // each session's live orders, by OrderID
	all         orderList   // every live order, by OrderID
	ordersMax   int
	stopsMax    int // bound of stopsWaiting (Config.StopsMax)
	// stopsWaiting counts the untriggered stops of all instruments.
	stopsWaiting int
	stpModes     map[[venue.AccountLength]byte]venue.StpMode

	// Identity counters: the last OrderID, ExecID and TradeID handed out.
	lastOrderID uint64
	lastExecID  uint64
	lastTradeID uint64

	qty quantityLedger

	risk riskState
	// widen holds an older command widened to today's block (widened).
	widen [venue.MessageHeaderSize + max(venue.RiskSetLimitBlockLength, venue.RiskControlBlockLength,
		venue.OperatorCommandBlockLength)]byte

	// The command being applied.
	sink     EventSink
	causeSeq uint64
	nowNs    int64

	// Hints for the commands shown to Prefetch; never read by Apply.
	prefetches prefetchQueue

	// When builds with the invariants tag check next (see checkAfterApply).
	invariantsDue invariantSchedule

	// listing holds the instruments added by commands (addinstrument.go);
	// last, so that the fields every command uses keep their places.
	listing instrumentListing
	// Auctions (auction.go): the ids of the instruments whose book holds a
	// call's orders (at most one entry per instrument), the command time at
	// which runAuctionTimers has work (math.MaxInt64: none) and the
	// throttle of AuctionIndicative.
	calls                []uint32
	timerDueNs           int64
	indicativeIntervalNs int64

	// decoded holds the client command being applied. Each decode writes
	// every field of its struct, so reusing it costs nothing, where a local
	// would be zeroed first on every command (10 to 23 instructions;
	// docs/benchmarks.md, "Instruction counts per part").
	decoded struct {
		newOrder newOrderCmd
		cancel   cancelCmd
		replace  replaceCmd
	}
}

// quantityLedger counts quantity so that the invariant "nothing is created or
// lost" can be checked: ordered = filled + cancelled + resting leaves, where
// filled counts both sides of every trade.
type quantityLedger struct {
	orderedQty   int64
	filledQty    int64
	cancelledQty int64
}

// NewMatcher validates the configuration and allocates all the matcher's
// memory: nothing is allocated afterwards while applying commands.
func NewMatcher(cfg Config) (*Matcher, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m := &Matcher{
		instruments:          make([]instrument, len(cfg.Instruments), cfg.instrumentsMax()),
		listing:              newInstrumentListing(&cfg),
		pool:                 newOrderPool(cfg.OrdersMax + 1),
		index:                newClOrdIndex(cfg.ClOrdIDsMax),
		sessions:             make([]orderList, cfg.SessionsMax),
		all:                  newOrderList(),
		ordersMax:            cfg.OrdersMax,
		stopsMax:             cfg.stopsMax(),
		stpModes:             make(map[[venue.AccountLength]byte]venue.StpMode, len(cfg.AccountStpModes)),
		prefetches:           newPrefetchQueue(),
		risk:                 newRiskState(&cfg),
		calls:                make([]uint32, 0, cfg.instrumentsMax()),
		timerDueNs:           math.MaxInt64,
		indicativeIntervalNs: cfg.IndicativeIntervalNs,
	}
	m.gtd = newGTDHeap(cfg.OrdersMax+1, m.pool.orders)
	ids := make([]uint32, len(cfg.Instruments))
	for i := range cfg.Instruments {
		m.instruments[i] = newInstrument(&cfg.Instruments[i])
		ids[i] = cfg.Instruments[i].ID
		m.listing.symbols[cfg.Instruments[i].Symbol] = uint16(i)
	}
	m.instrByID = newInstrumentIndex(ids, cfg.instrumentsMax())
	for i := range m.instruments {
		if m.instruments[i].auction.phase != 0 { // configured to start in a call
			m.joinCalls(&m.instruments[i])
		}
	}
	for i := range m.sessions {
		m.sessions[i] = newOrderList()
	}
	for account, mode := range cfg.AccountStpModes {
		var key [venue.AccountLength]byte
		copy(key[:], account)
		m.stpModes[key] = mode
	}
	return m, nil
}

// Apply applies one command: cmd holds an SBE command (header and block) at
// offset 0, possibly followed by unused bytes of its ring slot. Events go to
// sink, each with the command's seq as causeSeq and its timestampNs.
//
// Before the command itself, every GTD order whose expireTimeNs is earlier
// than the command's timestampNs expires. Apply returns an error only when
// the bytes are not a command it can decode (or an operator command that
// names nothing it knows); then the state is unchanged and no event is
// written. Invalid client requests are answered with reject events instead.
func (m *Matcher) Apply(cmd []byte, sink EventSink) error {
	// Dispatch on the template id; each command's decoding checks the
	// schema id with the rest of the header (WrapDecode's errors, in its
	// order), so it is not tested twice.
	if len(cmd) < venue.MessageHeaderSize {
		return sbe.ErrShortBuffer
	}
	templateID := binary.LittleEndian.Uint16(cmd[2:4])
	m.sink = sink
	var err error
	switch templateID { // the order flow first, tested in this order (fewer than four cases: no binary search)
	case venue.NewOrderTemplateID:
		err = m.applyNewOrder(cmd)
	case venue.ReplaceOrderTemplateID:
		err = m.applyReplace(cmd)
	case venue.CancelOrderTemplateID:
		err = m.applyCancel(cmd)
	default:
		err = m.applyOther(templateID, cmd)
		if m.risk.pending > 0 {
			// An operator's command that opens an instrument runs the stops
			// a closing uncross elected (changeStatus), and their fills may
			// trip an automatic kill: carried out at the end of that command
			// too (package documentation, "Risk"), not at some later order.
			m.riskRunPendingKills()
		}
	}
	if len(m.calls) != 0 { // a command that was not applied changed nothing: it publishes nothing
		m.refreshIndicatives()
	}
	m.sink = nil
	if invariantsEnabled {
		m.checkAfterApply(templateID)
	}
	return err
}

// applyOther applies the commands other than the order flow's (Apply).
func (m *Matcher) applyOther(templateID uint16, cmd []byte) error {
	var err error
	switch templateID {
	case venue.MassCancelTemplateID:
		return m.applyMassCancel(cmd)
	case venue.OrderStatusRequestTemplateID:
		return m.applyStatusRequest(cmd)
	case venue.SessionDisconnectedTemplateID:
		return m.applySessionDisconnected(cmd)
	case venue.SetTradingStatusTemplateID:
		return m.applySetTradingStatus(cmd)
	case venue.EndOfDayTemplateID:
		return m.applyEndOfDay(cmd)
	case venue.OperatorCommandTemplateID:
		return m.applyOperatorCommand(cmd)
	case venue.OperatorCancelOrderTemplateID:
		return m.applyOperatorCancelOrder(cmd)
	case venue.AddInstrumentTemplateID:
		return m.applyAddInstrument(cmd)
	case venue.RiskSetLimitTemplateID:
		return m.applyRiskSetLimit(cmd)
	case venue.RiskControlTemplateID:
		return m.applyRiskControl(cmd)
	case venue.SnapshotTemplateID:
		var c venue.Snapshot
		if err = c.WrapDecode(cmd, 0); err == nil {
			m.begin(c.Seq(), c.TimestampNs())
		}
	case venue.TickTemplateID:
		var c venue.Tick
		if err = c.WrapDecode(cmd, 0); err == nil {
			m.begin(c.Seq(), c.TimestampNs())
		}
	default:
		err = ErrUnknownTemplate
		if _, e := venue.TemplateIDOf(cmd, 0); e != nil {
			err = e // another schema's message
		}
	}
	return err
}

// begin starts applying a decoded command: it sets the event context and
// expires the GTD orders whose time has passed, then runs the auction
// timers that are due (auction.go). It is small enough to be inlined.
func (m *Matcher) begin(seq uint64, timestampNs int64) {
	m.causeSeq = seq
	back := timestampNs < m.nowNs-ClockStepBackNs
	m.nowNs = timestampNs
	if len(m.gtd.items) > 0 || timestampNs >= m.timerDueNs || back {
		m.runTimers(back)
	}
}

// runTimers is the rare part of begin; back: the command's time is more
// than ClockStepBackNs earlier than the one before's (clockWentBack).
func (m *Matcher) runTimers(back bool) {
	if back && len(m.calls) != 0 {
		m.clockWentBack()
	}
	if len(m.gtd.items) > 0 {
		m.expireGTD()
	}
	if m.nowNs >= m.timerDueNs {
		m.runAuctionTimers()
	}
}

func (m *Matcher) applyReplace(cmd []byte) error {
	w, ok := venue.DecodeReplaceOrder(cmd)
	if !ok {
		var refused venue.ReplaceOrder
		return refused.WrapDecode(cmd, 0) // the reason
	}
	c := &m.decoded.replace // decode writes every field
	c.decode(w)
	m.begin(c.seq, c.timestampNs)
	m.replaceOrder(c)
	if m.risk.pending > 0 { // a breach or a fill tripped an automatic kill (risk.go)
		m.riskRunPendingKills()
	}
	return nil
}

func (m *Matcher) applyMassCancel(cmd []byte) error {
	var c venue.MassCancel
	if err := c.WrapDecode(cmd, 0); err != nil {
		return err
	}
	m.begin(c.Seq(), c.TimestampNs())
	m.massCancel(&c)
	return nil
}

func (m *Matcher) applyStatusRequest(cmd []byte) error {
	var c venue.OrderStatusRequest
	if err := c.WrapDecode(cmd, 0); err != nil {
		return err
	}
	m.begin(c.Seq(), c.TimestampNs())
	m.statusRequest(&c)
	return nil
}

func (m *Matcher) applySessionDisconnected(cmd []byte) error {
	var c venue.SessionDisconnected
	if err := c.WrapDecode(cmd, 0); err != nil {
		return err
	}
	m.begin(c.Seq(), c.TimestampNs())
	if c.CancelOnDisconnect() == venue.BooleanTypeTrue && int(c.SessionIdx()) < len(m.sessions) {
		m.cancelSessionDayOrders(c.SessionIdx())
	}
	return nil
}

func (m *Matcher) applySetTradingStatus(cmd []byte) error {
	var c venue.SetTradingStatus
	if err := c.WrapDecode(cmd, 0); err != nil {
		return err
	}
	ii, ok := m.instrByID.lookup(c.InstrumentID())
	if !ok || !c.Status().Valid() {
		return ErrInvalidCommand
	}
	m.begin(c.Seq(), c.TimestampNs())
	m.changeStatus(&m.instruments[ii], c.Status(), false) // the command has no flags: as it always did
	return nil
}

func (m *Matcher) applyEndOfDay(cmd []byte) error {
	var c venue.EndOfDay
	if err := c.WrapDecode(cmd, 0); err != nil {
		return err
	}
	m.begin(c.Seq(), c.TimestampNs())
	m.endOfDay()
	return nil
}

// instrumentOf returns the instrument of an order.
func (m *Matcher) instrumentOf(o *order) *instrument {
	return &m.instruments[o.instrument]
}

// stpModeOf resolves an order's self-trade prevention mode.
func (m *Matcher) stpModeOf(o *order) venue.StpMode {
	if o.stpMode != venue.StpModeDefault {
		return o.stpMode
	}
	if mode, ok := m.stpModes[o.account]; ok {
		return mode
	}
	return venue.StpModeCancelResting
}
