package gateway

import (
	"fmt"
	"github.com/fixvenue/fixvenue/internal/await"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Instrument is what the gateway knows of an instrument: how to name it and
// how to turn FIX prices into ticks.
type Instrument struct {
	ID     uint32
	Symbol string
	Tick   decimal.Tick
	// Lot, MinQty and MaxQty are published in SecurityList answers; the matcher enforces them.
	LotSize, MinQty, MaxQty int64
	// BandLowTicks and BandHighTicks are the price band's edges (both
	// allowed; 0 and 0 when unknown): published in SecurityList answers and
	// named in the Text of a reject for a price outside them; an operator's
	// band change (OperatorResult of SetPriceBand) keeps them current.
	BandLowTicks, BandHighTicks int64
	// Status is the instrument's trading status when the gateway starts
	// (after replay); TradingStatusChanged events keep it current.
	Status venue.TradingStatus
}

// SessionConfig describes one FIX session the venue accepts.
type SessionConfig struct {
	ID                      quickfix.SessionID // SenderCompID is the venue's, TargetCompID the client's
	CancelOnDisconnect      bool
	OrdersPerSecondReject   int
	CancelsPerSecondReject  int
	MessagesPerSecondLogout int
	// OpenOrdersMax bounds the session's open orders (openbound.go); 0: no
	// bound of its own.
	OpenOrdersMax int
	// DropCopy, when set, makes this a drop-copy session (dropcopy.go).
	DropCopy *DropCopyGrant
	// Validator, when set, checks each message before FromApp and FromAdmin
	// in place of QuickFIX/Go's RejectInvalidMessage (TakeOverValidation).
	Validator *Validator
	// Accounts are the Accounts (1) the session's orders may name; nil: any
	// account no session lists (accounts.go).
	Accounts []string
	// LogonLatencyMax is the session's MaxLatency when QuickFIX/Go checks
	// SendingTime (CheckLatency), else 0: CheckLogon refuses a Logon whose
	// SendingTime is that far from the clock, which QuickFIX/Go would
	// answer by closing without a word.
	LogonLatencyMax time.Duration
}

// Config configures a Gateway.
type Config struct {
	Instruments []Instrument
	Sessions    []SessionConfig // a session's index in this slice is its sessionIdx in commands
	// OutboundQueueMax bounds the messages waiting for one session's connection;
	// past it the session is disconnected (its client is not reading).
	// A single command can put many answers in one session's queue at once
	// (a mass cancel answers every resting order of the session, faster than
	// any connection takes them), so the bound must exceed the largest such
	// burst a client may cause: DefaultOutboundQueueMax. A client that stops
	// reading is caught earlier by the FIX edge's outbound byte limit.
	OutboundQueueMax int
	// WriteWait bounds how long the sender waits for the connection to report a
	// written message before sending the next one anyway. It must be long: a
	// short fallback (100 ms was measured) lets a loaded venue hand QuickFIX/Go
	// messages while its writers are still busy, which is exactly what starts
	// QuickFIX/Go's send-path spin, and the venue collapses (3 of 3 runs at
	// 16 sessions and 15,000 orders/s, against 0 of 3 with 5 s). A connection
	// that stays unwritable that long is closed by the edge's write timeout.
	WriteWait time.Duration
	Logger    *slog.Logger
	Metrics   *Metrics
	// SeqBase is the command seq of command ring sequence 0 (pipeline.SeqBase).
	SeqBase uint64
	// StoppingText is the Text (58) of the Logout each session gets when the
	// venue stops (ShuttingDownText when empty): a cluster's leader names
	// the nodes that take over.
	StoppingText string
	// OnSessionEnd, when set, is called after a session logged out or dropped.
	OnSessionEnd func(sessionIdx uint16)
	// Now returns the current time in Unix nanoseconds (tests may fix it).
	Now func() int64
	// OpenOrdersMax bounds the open-order view that answers
	// OrderMassStatusRequest: the matcher's OrdersMax, as the view mirrors
	// its books (DefaultOpenOrdersMax when 0).
	OpenOrdersMax int
	// EndedClOrdIDsMax bounds the ClOrdIDs of the day's ended orders the
	// view remembers, so that a cancel or replace the gateway refuses
	// naming one names the order (openorders.go): the matcher's
	// ClOrdIDsMax, which bounds the day's ClOrdIDs it remembers
	// (DefaultEndedClOrdIDsMax when 0).
	EndedClOrdIDsMax int
	// OpenView, when set, is the open-order view kept from the events a
	// cluster's follower applied (NewOpenView): the gateway takes it as it
	// is instead of a new one that Seed would fill from the books
	// (openorders.go). Its bound is its own (NewOpenView's max).
	OpenView *OpenView
	// ReplayEvents, when set, lets drop-copy sessions ask for the reports of
	// a period beyond their FIX store (dropcopyreplay.go).
	ReplayEvents ReplayEvents
	// NoReplayText is the Text of a request refused for want of
	// ReplayEvents (default: the venue does not replay reports).
	NoReplayText string
	// EventRingSlots is the event ring's size, which bounds, with the
	// command ring's, how far outbound's answers lag the commands
	// published (postonly.go); 0: eight times the command ring's.
	EventRingSlots int
	// CatchingUp, when set, reports whether the trading day's schedule is
	// running transitions as a catch-up, stamped with the times they were
	// due (ops.Ops.CatchingUp): a message that would be journaled (an
	// order, cancel, replace, mass cancel, status request) is refused then,
	// to be sent again (CatchingUpText), so that no command stamped with
	// the clock lands among them.
	CatchingUp func() bool
	// MarketDateEnd, when set, is when a local market date ends, for a GTD
	// order's ExpireDate (432): the schedule's end of day on that date in
	// its time zone (schedule.Plan.DateEnd). Unset: the date's end in UTC.
	MarketDateEnd func(year int, month time.Month, day int) time.Time
	// Currency is the venue's currency (ISO 4217): an order naming another
	// in Currency (15) is refused, and SecurityList entries carry it.
	// Empty: Currency is not checked ("Currency and settlement" in doc.go).
	Currency string
	// OrderToER, when set, records for each answer to a client's message
	// the nanoseconds from its arrival to its hand-over to the session
	// (after durability), in the venue's HdrHistograms (package latency);
	// only the answers of a command a FIX message caused (roundtrip.go).
	OrderToER LatencyRecorder
	// NextSenderSeqNum, when set, returns the MsgSeqNum the venue will give
	// the next message of a session (its FIX store's), so that a
	// ResendRequest from beyond it is refused instead of left unanswered
	// (app.go, checkResendRequest).
	NextSenderSeqNum func(quickfix.SessionID) (int, bool)
}

// LatencyRecorder takes one latency in nanoseconds without allocating
// (latency.Recorder).
type LatencyRecorder interface {
	Record(ns int64)
}

// DefaultOpenOrdersMax is the open-order view's bound when the configuration
// gives none.
const DefaultOpenOrdersMax = 1 << 20

// DefaultEndedClOrdIDsMax is the bound on the ended orders' ClOrdIDs the
// view remembers when the configuration gives none: the matcher's default
// ClOrdIDsMax (engine.clordids_max).
const DefaultEndedClOrdIDsMax = 1 << 22

// Gateway turns FIX messages into commands and events into FIX messages.
type Gateway struct {
	cfg       Config
	started   atomic.Bool // Start ran
	log       *slog.Logger
	commands  *ring.Ring
	sessions  []*session
	bySession map[quickfix.SessionID]*session
	metrics   *Metrics
	breach    lastBreach // the last RiskBreach (outbound goroutine only; risk.go)
	// replay marks a gateway that renders reports again from the journal
	// (a drop-copy replay, the reports lost at a crash): what it sees
	// happened before, and it logs none of it as news (autoKilled).
	replay    bool
	riskMu    sync.Mutex // guards riskSeen
	riskSeen  riskSeen   // what the admin API shows of risk (risk.go)
	riskWaits await.Waits[int64, RiskResult]
	execSeq   atomic.Uint64 // gateway-local ExecIDs for rejects that never reach the matcher
	// execEpoch is the start time of this gateway (ms, base 36), the prefix of
	// its ExecIDs: read once in New, so that importing the package reads no clock.
	execEpoch string
	// dispatched is the causeSeq of the last event outbound handed to a session.
	dispatched atomic.Int64
	// held are answers built by outbound and not yet handed over (outbound's
	// goroutine only; at most buildAheadMax).
	held []heldAnswer
	// er is outbound's one ExecutionReport builder, reused for every report.
	er erBuilder
	// halt is what clients are told once the venue halted (nil: trading).
	halt  atomic.Pointer[string]
	extra map[string]ExtraHandler
	// stopping, once set by BeginStop, is how every logout waits for the
	// answers to reach the stores at shutdown (stop.go).
	stopping atomic.Pointer[stopDrain]
	// replayBusy is set while a drop-copy replay runs (one at a time:
	// dropcopyreplay.go).
	replayBusy atomic.Bool
	// replaying counts the drop-copy replays whose last AQ is not queued
	// yet: a stop waits for them (awaitStopDrain).
	replaying atomic.Int32
	// copyAccounts are the drop-copy sessions granted each account (nil: none).
	copyAccounts map[string][]*session
	// listedAccounts are the accounts some session lists (accounts.go; nil:
	// none), each refused to the sessions that do not.
	listedAccounts map[string]bool
	// rejectEchoes are what the rejects of the orders published echo of
	// them (postonly.go).
	rejectEchoes *rejectEchoes
	// fixCommands are the seqs of the commands inbound published from FIX
	// messages, whose answers alone outbound measures (roundtrip.go).
	fixCommands *fixCommands
	// monoBase is the instant monoNs counts from.
	monoBase time.Time
	// boundOrders are the seqs of the orders counted in their session's
	// ordersInFlight, and boundDone the sessions whose in-flight count the
	// next handOver lowers, one per order answered (openbound.go).
	boundOrders *fixCommands
	boundDone   []uint16
	// open is the open-order view (openorders.go); openHeld are its changes
	// from the events of the chunk outbound is building (outbound's
	// goroutine only), applied in handOver.
	open     *openOrders
	openHeld []openChange
	// statusHeld are trading status changes waiting for handOver.
	statusHeld []statusChange
	// dayStartNs is the command time of the last end of day written into
	// the ring or applied (0: none known): a possible resend sent before it
	// is refused (possresend.go, SetDayStart).
	dayStartNs atomic.Int64

	// instruments is the listed instruments (instruments.go).
	instruments atomic.Pointer[instrumentTable]
	// interruption is the Text of the TradingSessionStatus that follows a
	// VolatilityInterruption (outbound only; tradingstatus.go).
	interruption struct {
		instrumentID uint32
		text         string
	}
	// uncross is the instrument and call phase of the last AuctionUncrossed,
	// whose trades follow it (outbound only); active until the status change
	// that ends the call, which follows its trades and cancels.
	uncross struct {
		instrumentID uint32
		phase        venue.TradingStatus
		active       bool
	}
}

// session is the gateway's state for one FIX session.
type session struct {
	idx uint16
	cfg SessionConfig
	// arrived is the monotonic time (Gateway.monoNs) its goroutine took its
	// last application message at: the start of the round trip of the
	// command it publishes (roundtrip.go).
	arrived  atomic.Int64
	mu       sync.Mutex // guards the throttles; QuickFIX/Go calls FromApp from one goroutine per session, but admin paths may race
	orders   slidingWindow
	cancels  slidingWindow
	messages slidingWindow
	resends  slidingWindow // ResendRequests (ResendRequestsPerSecondMax), since the logon
	// overRate: the session went over its message rate and is being
	// logged out (Application's arrived); until it logs on again.
	overRate atomic.Bool
	// loggingOut: the venue has logged the session out (logOut): FromApp
	// takes no application message from it until it logs on again.
	loggingOut atomic.Bool
	loggedOn   atomic.Bool
	// everLoggedOn: the session has logged on since the gateway was built
	// (LoggedOnSinceStart).
	everLoggedOn atomic.Bool
	// conn is the connection the session logged on over, loggedOutConn the
	// one it last logged out of (Pacer.WriteDone's channel is each
	// connection's own); QuickFIX/Go's goroutine of the session alone uses
	// them (OnLogon, OnLogout).
	conn, loggedOutConn <-chan struct{}
	out                 *sender
	// route is the session's drop-copy routing (dropcopy.go), nil when no
	// drop-copy session is granted it.
	route *copyRoute
	// accounts are the Accounts its orders may name (accounts.go), nil when
	// it lists none.
	accounts map[string]bool
	// rejects and throttleHits count since start the session's rejected
	// orders and cancels and its throttles' refusals (SessionRates).
	rejects, throttleHits atomic.Int64
	// statusReqs are OrdStatusReqIDs waiting for their answer (bounded by statusReqsMax; guarded by mu).
	statusReqs []statusReq
	// changeAsks are what the session's latest cancels and replaces asked,
	// by command seq, to name in a refusal the field that is not the
	// order's (mismatch.go; guarded by mu).
	changeAsks [changeAsksMax]changeAsk
	// lastCmd is the seq of the last command this session published that is
	// answered on the session (-1: none). SessionDisconnected is not: it may
	// produce no event, and an answer must not wait for one that never comes.
	lastCmd atomic.Int64
	// massStatusBusy is set while a mass status streams its reports: one at
	// a time per session.
	massStatusBusy atomic.Bool
	// ordersInFlight are the session's orders counted against its
	// OpenOrdersMax that inbound published and whose accept or reject the
	// open-order view has not taken yet (openbound.go).
	ordersInFlight atomic.Int64
	// boundResends are the possible resends asked of the matcher at the
	// bound, waiting for its answer (openbound.go; guarded by mu, at most
	// boundResendsMax), boundResendsN their number, read without the lock.
	boundResends  []boundResend
	boundResendsN atomic.Int32
}

// DefaultOutboundQueueMax is the default bound of a session's outbound queue:
// room for the answers to a mass cancel of 65,536 resting orders (a channel
// of pointers, 512 KiB per session).
const DefaultOutboundQueueMax = 1 << 16

// New builds a gateway that publishes commands into the given ring.
func New(cfg Config, commands *ring.Ring) (*Gateway, error) {
	if len(cfg.Sessions) == 0 || len(cfg.Sessions) > 0xFFFE {
		return nil, fmt.Errorf("gateway: %d sessions, want 1..65534", len(cfg.Sessions))
	}
	if cfg.OutboundQueueMax <= 0 {
		cfg.OutboundQueueMax = DefaultOutboundQueueMax
	}
	if cfg.WriteWait <= 0 {
		cfg.WriteWait = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = func() int64 { return time.Now().UnixNano() }
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics(nil)
	}
	if cfg.OpenOrdersMax <= 0 {
		cfg.OpenOrdersMax = DefaultOpenOrdersMax
	}
	if cfg.EndedClOrdIDsMax <= 0 {
		cfg.EndedClOrdIDsMax = DefaultEndedClOrdIDsMax
	}
	commandSlots := 0
	if commands != nil { // nil: a gateway that renders only (tests)
		commandSlots = commands.Slots()
	}
	eventSlots := cfg.EventRingSlots
	if eventSlots <= 0 {
		eventSlots = 8 * commandSlots
	}
	open := newOpenOrders(len(cfg.Sessions), cfg.OpenOrdersMax)
	open.endedMax = cfg.EndedClOrdIDsMax
	g := &Gateway{
		cfg: cfg, log: cfg.Logger, commands: commands, metrics: cfg.Metrics,
		bySession:    map[quickfix.SessionID]*session{},
		open:         open,
		rejectEchoes: newRejectEchoes(commandSlots + eventSlots),
		fixCommands:  newFixCommands(commandSlots+eventSlots, true),
		boundOrders:  newFixCommands(commandSlots+eventSlots, false),
		monoBase:     time.Now(),
	}
	if cfg.OpenView != nil {
		if len(cfg.OpenView.v.bySession) != len(cfg.Sessions) {
			return nil, fmt.Errorf("gateway: an open-order view of %d sessions for %d sessions", len(cfg.OpenView.v.bySession), len(cfg.Sessions))
		}
		g.open = cfg.OpenView.v
	}
	g.dispatched.Store(-1)
	g.riskSeen.rounds = [2]int64{-1, -1}
	g.execEpoch = strconv.FormatInt(time.Now().UnixMilli(), 36)
	g.held = make([]heldAnswer, 0, buildAheadMax)
	g.instruments.Store(newInstrumentTable(cfg.Instruments))
	for i, sc := range cfg.Sessions {
		s := &session{idx: uint16(i), cfg: sc}
		s.lastCmd.Store(-1)
		s.orders.limit = sc.OrdersPerSecondReject
		s.cancels.limit = sc.CancelsPerSecondReject
		s.messages.limit = sc.MessagesPerSecondLogout
		s.resends.limit = ResendRequestsPerSecondMax
		s.out = newSender(sc.ID, cfg.OutboundQueueMax, cfg.WriteWait, g)
		g.sessions = append(g.sessions, s)
		g.bySession[sc.ID] = s
	}
	g.wireDropCopy()
	g.wireAccounts()
	return g, nil
}

// Halt makes the gateway refuse every new order from now on, after a
// fail-stop of the venue. reason is what clients are told, a short phrase
// such as "journal failure": FIX clients are not shown file names or
// internal errors (operators read the cause from pipeline.Err). Every
// logged-on session gets an unsolicited TradingSessionStatus for the
// venue, halted, whose Text says that orders without an answer are in
// doubt until the venue is back (docs/ARCHITECTURE.md, "A venue that
// failed"). Only the first call counts; it may come from any goroutine.
func (g *Gateway) Halt(reason string) {
	if reason == "" {
		reason = "internal failure"
	}
	if !g.halt.CompareAndSwap(nil, &reason) {
		return
	}
	for _, s := range g.sessions {
		if !s.loggedOn.Load() {
			continue
		}
		s.out.enqueue(haltStatus(reason))
	}
}

// haltStatus is the unsolicited TradingSessionStatus of a halted venue,
// which every session gets at the halt, or at its logon after it (OnLogon).
func haltStatus(reason string) *quickfix.Message {
	text := "venue halted: " + reason + "; new orders are refused. An order sent before this message without an answer " +
		"may or may not have been recorded: once the venue is back, an OrderMassStatusRequest lists the orders it holds"
	m := tradingSessionStatus("", venueTradingSessionID, tradSesHalted, text)
	m.Body.SetString(tag.UnsolicitedIndicator, string(fixYes))
	return m
}

// halted returns what clients are told about a halt ("" while trading).
func (g *Gateway) halted() string {
	if h := g.halt.Load(); h != nil {
		return *h
	}
	return ""
}

// SessionIndex returns the command session index of a FIX session.
func (g *Gateway) SessionIndex(id quickfix.SessionID) (uint16, bool) {
	s, ok := g.bySession[id]
	if !ok {
		return 0, false
	}
	return s.idx, true
}

// Start starts the per-session senders.
func (g *Gateway) Start() {
	g.started.Store(true)
	for _, s := range g.sessions {
		go s.out.run()
	}
}

// Stop stops the per-session senders, if Start started them.
func (g *Gateway) Stop() {
	if !g.started.Load() {
		return
	}
	for _, s := range g.sessions {
		s.out.stop()
	}
}

// SetPacer installs what tells senders that a message reached the connection.
func (g *Gateway) SetPacer(p Pacer) {
	for _, s := range g.sessions {
		s.out.pacer = p
	}
}

// ExtraHandler handles an application message type the gateway itself does not
// (market data requests, for instance). It returns a reject to send, or nil.
type ExtraHandler func(sessionIdx uint16, m *quickfix.Message) quickfix.MessageRejectError

// Handle registers a handler for one more message type; call before Start.
func (g *Gateway) Handle(msgType string, h ExtraHandler) {
	if g.extra == nil {
		g.extra = map[string]ExtraHandler{}
	}
	g.extra[msgType] = h
}

func (g *Gateway) extraHandler(msgType string) ExtraHandler { return g.extra[msgType] }

// Send queues a message for a session through its paced sender.
func (g *Gateway) Send(sessionIdx uint16, m *quickfix.Message) {
	if s := g.sessionOf(sessionIdx); s != nil {
		s.out.enqueue(m)
	}
}

// MarketDataBacklogged reports whether a session has so much waiting for
// its client that market data refreshes must wait (fixmd.Backlog): more
// than a small window of its outbound queue in use (massStatusWindowMax, a
// quarter of the queue when that is less, as a mass status keeps), or its
// connection's outbound buffer past half full (Backlogger). fixmd then
// holds its refreshes and sends their net change once the client has read,
// so a client that reads slower than the book changes keeps a bounded
// queue and is not disconnected for market data it could not read (each
// queued full refresh of a deep book holds tens of kilobytes).
func (g *Gateway) MarketDataBacklogged(sessionIdx uint16) bool {
	s := g.sessionOf(sessionIdx)
	if s == nil {
		return false
	}
	o := s.out
	if o.queue.len() >= max(1, min(massStatusWindowMax, o.queue.max/4)) {
		return true
	}
	b, _ := o.pacer.(Backlogger)
	return b != nil && b.Backlogged(o.id)
}
