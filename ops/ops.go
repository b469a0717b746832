package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/pipeline"
	"github.com/fixvenue/fixvenue/internal/durable"
	"github.com/fixvenue/fixvenue/internal/httpbound"
	"github.com/fixvenue/fixvenue/internal/httpdrain"
	"github.com/fixvenue/fixvenue/internal/periodic"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/fixvenue/fixvenue/schedule"
)

// Operator names used by the venue itself in OperatorCommands.
const (
	OperatorSchedule = "schedule"
)

// SessionControl is what operations need of the gateway's sessions.
type SessionControl interface {
	// SessionState returns a session's connection state.
	SessionState(idx uint16) SessionState
	// Logout ends a session's connection (its client may log on again).
	Logout(idx uint16)
	// SetDisabled refuses (or again accepts) a session's logons; a disabled
	// session that is logged on is logged out.
	SetDisabled(idx uint16, disabled bool)
	// ClOrdIDs returns the ClOrdID each of the session's orders has ("" for
	// one the gateway does not know as open).
	ClOrdIDs(idx uint16, orderIDs []uint64) []string
}

// SessionState is a session's connection state as the gateway knows it.
type SessionState struct {
	LoggedOn bool
	// LoggingOut: logged on, and the venue has sent the session a Logout
	// (its connection closes in a moment).
	LoggingOut bool
	Disabled   bool
	Address    string
	// NextSenderSeq and NextTargetSeq are the next outgoing and expected
	// incoming MsgSeqNum (0 when unknown).
	NextSenderSeq, NextTargetSeq int
	// Counts over the last second, as the session's throttles see them.
	MessagesPerSecond, OrdersPerSecond, CancelsPerSecond int
	// Rejects (orders and cancels) and ThrottleHits count since start.
	Rejects, ThrottleHits int64
}

// Session names one configured FIX session.
type Session struct {
	Idx    uint16
	CompID string
	// DropCopy: a drop-copy session, which has no orders and no risk figures
	// (a cancel or a risk call naming it is refused).
	DropCopy bool
	// OpenOrdersMax is its bound on open orders (config.OpenOrdersMax; 0: none).
	OpenOrdersMax int
}

// Config wires Ops into a venue.
type Config struct {
	Admin       config.Admin
	Schedule    config.Schedule
	Instruments []config.Instrument
	Sessions    []Session
	// ExportOn is set when the venue exports its events: an instrument
	// listed at runtime must not share its event subjects with a listed one.
	ExportOn bool
	// DataDir is the venue's data directory: the journal is DataDir/journal,
	// the schedule's progress DataDir/schedule.state.
	DataDir  string
	Pipeline *pipeline.Pipeline
	// Matcher is read once, in New, before the pipeline starts (its
	// statuses and resting orders seed the Monitor).
	Matcher *core.Matcher
	// Resting, when set, is the live orders as the caller read them from
	// Matcher (core.Matcher.OpenOrders over Instruments), so
	// that New does not walk the books a second time; nil: New walks them.
	Resting []core.OrderView
	// Standby, when set, is the resting orders a cluster's follower kept
	// from the events it applied (NewStandbyResting): New takes them as
	// they are, without reading the books.
	Standby *StandbyResting
	// Snapshots returns the snapshotter's counters; nil when snapshots are off.
	Snapshots *journal.SnapshotterStats
	// SessionControl is the gateway (set before Start; nil disables the session calls).
	SessionControl SessionControl
	// Listed, when set, reports whether the parts that serve clients (the
	// gateway, FIX market data) know an instrument: an addition is answered
	// once they do, so a client told of it can use it at once.
	Listed func(id uint32, symbol string) bool
	// KeepJournal leaves every journal segment in place at end of day: a
	// cluster replica's segments move to the archive at its start, before
	// the checkpoint it restores (cluster/doc.go, "Archive"), not at an end
	// of day, whose snapshot holds the matcher's state alone.
	KeepJournal bool
	// Replica is set on a cluster node: the group phases an operator set are
	// not kept in PhasesFile, as a node that leads again would read the ones
	// of its own last term, older than its predecessors'.
	Replica bool
	// EndOfDayNs is the command time of the last end of day the start's
	// replay of the journal applied (0: none): the trading day it ended
	// (schedule.Plan.EndedBy) has ended, though schedule.state may not say
	// so (a stop between the command's durability and the record, or a
	// call that timed out): the schedule runs none of its transitions.
	EndOfDayNs int64
	// ReplicatedEndOfDay, on a cluster's new leader, is the last end of day
	// its follower applied: run by another node, whose end_of_day.json this
	// node lacks. GET /v1/status gives it when it is newer than the
	// node's own report (of a day it led), else that one would be
	// reported, or none.
	ReplicatedEndOfDay *EndOfDayReport
	// EndOfDayStamped, when set, is told an end of day's command time as
	// its command is written into the ring, before it is published: the
	// FIX gateway judges possible resends by it from then on
	// (gateway.Gateway.SetDayStart), not once the result comes back, so
	// that one taken meanwhile, sequenced after the end of day, is not
	// judged by the day before and booked again.
	EndOfDayStamped func(ns int64)
	// Phases, on a cluster's new leader, is each group's phase as last set
	// (by the schedule or /v1/phase), by group name, as its follower saw
	// the commands: where a resume takes a halted instrument, as PhasesFile
	// gives it to a single venue. On a single venue it is PhasesFile with
	// the phase changes of the commands the start's replay applied after
	// its snapshot over it, so that a change made durable whose file write
	// failed (a full disk, a crash before it) holds; PhasesFile is written
	// with it where it differs.
	Phases map[string]venue.TradingStatus
	// Groups, on a single venue, are the groups' places in their day that
	// operators' phase changes among the commands the start's replay
	// applied after its snapshot set (those no transition of the group
	// followed), by group name, taken over schedule.state's and written to
	// it: a change made durable whose record was not written is not lost
	// (an early close that the day's closing call would reopen). A
	// transition not recorded runs again.
	Groups map[string]GroupRun
	// UsableSnapshot, when set, gives the newest snapshot at or before seq
	// that a start can use (the states kept beside snapshots, such as the
	// market-data feed's, are there too): end of day archives only the
	// segments that one makes unnecessary, so that a start never needs the
	// archive. Nil: seq's own snapshot.
	UsableSnapshot func(seq uint64) (uint64, bool)
	Sync           journal.SyncFunc
	Logger         *slog.Logger
	Registry       *prometheus.Registry
	// TimersDue, when set, reads the command time from which a command runs
	// one of the matcher's timers (core.Matcher.NextDueNs, as the matcher's
	// thread last stored it): the timer journals a Tick once it has come.
	TimersDue func() int64
	// CommandTimeNs, when set, reads the time of the last command the
	// matcher applied (core.Matcher.CommandTimeNs, as its thread last
	// stored it): with a timer waiting, a clock that reads more than
	// core.ClockStepBackNs before it (stepped back) has the timer journal a Tick,
	// which bounds the matcher's auction timers by the clock's time.
	CommandTimeNs func() int64
	// Usage, when set, reads what the matcher holds of its bounds, for
	// /v1/status (docs/ARCHITECTURE.md, "Capacity").
	Usage func() core.Usage
	// Stalled, when set, says for /v1/status how long commands have waited
	// with none made durable ("" while the journal keeps up).
	Stalled func() string
	// RefusedAtStart is what the start's replay refused under the
	// configured terms without their record, for /v1/status (nil:
	// nothing, or a start with the record).
	RefusedAtStart *RefusedAtStartInfo
	// Recorded, when set, says why a record the venue keeps in its data
	// directory beside the schedule's is behind its journal (the sessions
	// an operator disabled, on a full disk), writing it again first; nil
	// error: written. A start reads such a record and replays only the
	// commands after its snapshot, so a snapshot waits until the record
	// holds what the commands before it did (SnapshotHeldBack).
	Recorded func() error
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// Listener, when set, is where the admin API accepts connections
	// (TLS is added as admin configures it) instead of binding admin.addr:
	// a cluster node's socket, which outlives this venue (a view of it,
	// whose Close leaves it open). The API then answers each call on a
	// connection of its own (no keep-alive), so that when the node loses
	// the leadership no idle connection is closed under a call being sent
	// (docs/ARCHITECTURE.md, "Losing leadership").
	Listener net.Listener
	// LostLeadership, on a cluster node, is the error a halt wraps when
	// the node lost the leadership (cluster.ErrLostLeadership): a call is
	// then refused 503 not_leader, as the node that restarts answers it.
	LostLeadership error
	// Leader, on a cluster node, says which node leads and its admin
	// address (as ops.Follower's leader): a deposed node's 503 not_leader
	// names them. Nil: not said.
	Leader func() (text, adminAddr string)
}

// Ops is the venue's control plane: the admin API, the trading day, and
// the Monitor they read. Every change it makes is an OperatorCommand in
// the command ring, so it is journaled, replayed and in the audit trail.
type Ops struct {
	cfg      Config
	log      *slog.Logger
	monitor  *Monitor
	plan     *schedule.Plan
	bySymbol map[string]config.Instrument
	byCompID map[string]Session
	metrics  *metrics
	// conns counts what the admin listener's bound on connections closed
	// (listen; nil before).
	conns atomic.Pointer[httpbound.Counts]
	ready atomic.Bool
	// caughtUp is closed with ready set: the schedule has run the
	// transitions it missed (or there is none).
	caughtUp    chan struct{}
	catchUpOnce sync.Once
	// catchUpAtNs is, while the schedule runs a transition it missed, the
	// time the transition was due (0 otherwise): the commands the control
	// plane journals then carry it (stampNs), so that the matcher applies the
	// transition as at its time, before a GTD order that expired later in
	// the downtime is expired (README, "The trading day").
	catchUpAtNs atomic.Int64
	// catchingUp is set while the schedule runs transitions as a catch-up
	// (at start, or late once a clock stepped ahead): CatchingUp.
	catchingUp atomic.Bool
	// changeMu is held shared by an operator's change, from its check of
	// CatchingUp to its answer, and alone by a catch-up (catchUp): a
	// catch-up a clock stepped ahead starts once the changes in flight are
	// journaled, and none lands among its commands (a /v1/phase of several
	// instruments was stamped, from the catch-up's start on, with the time
	// of a transition due before it was made). A change that finds it
	// taken or awaited is refused as during the catch-up.
	changeMu sync.RWMutex
	// eodPublished are the schedule's end-of-day commands, by reason, that
	// were published but timed out (the schedule's goroutine only): a retry
	// waits for the one published rather than sending another.
	eodPublished map[string]uint64
	eodMu        sync.Mutex // one end of day at a time (schedule and operator)
	// stateMu guards the schedule's progress as schedule.state records it:
	// the last transition run (saved, savedWhat; savedOK once one is) and
	// endedDay, the last trading day whose end of day ran, the schedule's
	// or an operator's (scheduleState.EndedDay). The schedule's goroutine
	// moves the transition; an operator's end of day, on an API call's
	// goroutine, moves the day.
	stateMu   sync.Mutex
	saved     schedule.Transition
	savedWhat string
	savedOK   bool
	endedDay  string
	// endedDayWritten is endedDay as schedule.state last had it (read or
	// written): a snapshot waits until they agree (endedDayRecorded).
	endedDayWritten string
	// stateUnsaved: the progress changed since schedule.state last took
	// it (a write refused, a full disk; or the start's replay found
	// groups further on, Config.Groups): a snapshot waits until it is
	// written (endedDayRecorded).
	stateUnsaved bool
	// endingDay is the trading day of an end of day published and not yet
	// answered (endOfDay): the matcher may have applied it, so a snapshot
	// taken now may hold it while endedDay does not (endedDayRecorded).
	endingDay string
	// endOfDayRunning is set while an end of day runs, from before its
	// command is published until its snapshot and archive are done
	// (endOfDay): EndOfDayRunning.
	endOfDayRunning atomic.Bool
	groupsRun       map[string]GroupRun // scheduleState.Groups
	// awaited are the end of days published whose call timed out (a
	// journal slower than admin.call_timeout), with the trading day each
	// ends: once durable and applied they are recorded as a call answered
	// done is (settleEndOfDays), and meanwhile no other end of day is
	// sent (awaitEndOfDays).
	awaited []awaitedEndOfDay
	// awaitedDone are the awaited end of days found durable and applied
	// whose snapshot and archive have yet to run (archiveAwaited, woken by
	// archiveSignal), as after a call answered done.
	awaitedDone   []awaitedEndOfDay
	archiveSignal chan struct{}
	// awaitedActions are the session actions published whose call timed
	// out, carried out once durable and applied (settleSessionActions).
	awaitedActions []awaitedAction
	// awaitedPhases are the operators' phase changes whose call timed out
	// once all their commands were published, recorded once the last is
	// durable and applied (settlePhaseChanges, phaseMu held).
	awaitedPhases []awaitedPhase
	// awaitedChanges are the schedule's status changes whose call timed
	// out, counted and logged once durable and applied
	// (settleStatusChanges).
	awaitedChanges []awaitedStatusChange
	awaitedSignal  chan struct{} // wakes recordAwaited
	// sessionMu, one per session, makes a session action's check of the
	// session's state and its journaled change one step: two disables at
	// once were both journaled and answered done. Per session, so that a
	// slow action delays no other session's.
	sessionMu map[uint16]*sync.Mutex
	// recordGate makes a periodic snapshot's check of the records kept
	// beside it and its command one step against the session disables and
	// enables, which hold it (read) from before their command is published
	// until their record is written or known behind (SnapshotGate): a
	// snapshot published between a disable's command and its record's
	// failed write held the disable while the file lacked it.
	recordGate sync.RWMutex
	// phaseMu orders phase changes (the schedule's and /v1/phase) with
	// resumes, which return a halted instrument to its group's phase:
	// phases[g] is group g's status as last set (phaseKnown[g]).
	phaseMu    sync.Mutex
	phases     []venue.TradingStatus
	phaseKnown []bool
	// phasesFileMu orders the writes of PhasesFile; phasesUnsaved is what
	// the last of them failed to put there (a full disk), written again
	// before a snapshot (phasesRecorded); nil: the file holds the phases.
	phasesFileMu  sync.Mutex
	phasesUnsaved []byte
	lastEOD       atomic.Pointer[EndOfDayReport]

	listener net.Listener
	loopback bool         // the listener is on a loopback address: reads need no token
	console  http.Handler // served on the admin address beside the API (SetConsole)
	risk     Risk         // the venue's pre-trade risk (SetRisk; nil: off)
	day      DaySource    // the day's trades (SetDaySource); nil: none reported
	serverMu sync.Mutex   // orders listen's start of server with Close
	server   *http.Server // serverMu
	// track counts the server's connections when it serves on
	// Config.Listener, for Shutdown.
	track  *httpdrain.Tracker
	stop   chan struct{}
	wg     sync.WaitGroup
	closed sync.Once

	// commandWatch is shown each command submit journals
	// (SetCommandWatch); nil: none.
	commandWatch func(cmd []byte)
}

// New builds the control plane and registers its event consumer. Call it
// after the journal was replayed and before the pipeline starts.
func New(cfg Config) (*Ops, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Pipeline == nil || cfg.Matcher == nil {
		return nil, errors.New("ops: Pipeline and Matcher are required")
	}
	o := &Ops{cfg: cfg, log: cfg.Logger, bySymbol: map[string]config.Instrument{}, byCompID: map[string]Session{}, caughtUp: make(chan struct{}),
		eodPublished: map[string]uint64{}, sessionMu: map[uint16]*sync.Mutex{},
		awaitedSignal: make(chan struct{}, 1), archiveSignal: make(chan struct{}, 1), stop: make(chan struct{})}
	for _, in := range cfg.Instruments {
		o.bySymbol[in.Symbol] = in
	}
	for _, s := range cfg.Sessions {
		o.byCompID[s.CompID] = s
		o.sessionMu[s.Idx] = &sync.Mutex{}
	}
	o.monitor = newMonitor(instrumentSeeds(cfg.Matcher, cfg.Instruments))
	switch {
	case cfg.Standby != nil && o.monitor.takeResting(cfg.Standby.m):
	case cfg.Resting != nil:
		o.monitor.restViews(cfg.Resting)
	default:
		o.monitor.restBooks(cfg.Matcher, cfg.Instruments)
	}
	if cfg.Registry != nil {
		// Before the phases are loaded: each sets its group's phase gauge.
		o.metrics = newMetrics(o, cfg.Registry)
	}
	o.loadLastEndOfDay()
	if r := cfg.ReplicatedEndOfDay; r != nil {
		if last := o.lastEOD.Load(); last == nil || last.CommandUnixNs < r.CommandUnixNs {
			kept := *r
			o.lastEOD.Store(&kept)
			o.saveLastEndOfDay(&kept)
		}
	}
	if cfg.Schedule.Enabled {
		o.plan = schedule.New(cfg.Schedule)
		if !cfg.Replica {
			o.loadPhases()
		}
		changed := false
		for g, grp := range cfg.Schedule.Groups {
			if st, ok := cfg.Phases[grp.Name]; ok {
				changed = changed || g >= len(o.phaseKnown) || !o.phaseKnown[g] || o.phases[g] != st
				o.notePhase(g, st)
			}
		}
		if changed && !cfg.Replica && cfg.DataDir != "" {
			// The journal holds a phase change the file lacks.
			o.log.Warn("schedule: the journal holds phase changes the phases file lacks (where a resume takes a halted instrument); recording them", "file", PhasesFile)
			if err := o.savePhases(o.encodePhases()); err != nil {
				o.log.Error("schedule: phases not saved (written again before the next snapshot, which waits for it)", "file", PhasesFile, "err", err)
			}
		}
		o.warnUnscheduled()
	}
	barrier, own := cfg.Pipeline.AddEventConsumer()
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		// Waits for the first event; the pipeline's Stop alerts the barrier.
		o.monitor.run(cfg.Pipeline.Events, barrier, own)
	}()
	return o, nil
}

// warnUnscheduled says which configured instruments no schedule group
// covers (no group lists them and none takes every other): the schedule
// never moves them, so they keep their status through nights, weekends and
// holidays, and only the end of day reaches them. That may be meant (an
// instrument that trades around the clock), but a group list that left one
// out by mistake showed nowhere (README, "Operating the venue").
func (o *Ops) warnUnscheduled() {
	var none []string
	for _, in := range o.cfg.Instruments {
		if _, err := o.groupOf(&in); err != nil {
			none = append(none, in.Symbol)
		}
	}
	if len(none) > 0 {
		o.log.Warn("schedule: instruments in no schedule group keep their status around the clock; "+
			"list them in a group, or add a group with instruments = [] for every other",
			"instruments", strings.Join(none, ","))
	}
}

// Monitor returns the control plane's view of the market.
func (o *Ops) Monitor() *Monitor { return o.monitor }

// SetConsole serves h (the web console) on the admin address for every
// path outside /v1/, /healthz and /readyz. Call it before Start.
func (o *Ops) SetConsole(h http.Handler) { o.console = h }

// DayFigures are an instrument's figures of the trading day, which starts
// at the last EndOfDay the journal holds (package console, "The day and
// restarts"), so that they survive restarts and a cluster's failover.
type DayFigures struct {
	// LastPriceTicks and LastQty are the day's last trade (LastQty 0: no
	// trade yet today).
	LastPriceTicks, LastQty int64
	Volume, Trades          int64
	// PrevCloseTicks is the last trade of the last day that traded (0:
	// none in the journal).
	PrevCloseTicks int64
}

// DaySource gives the day's figures of an instrument: the console's tape,
// the one consumer of committed events that keeps the day.
type DaySource interface {
	DayFigures(instrumentID uint32) DayFigures
}

// SetDaySource makes GET /v1/instruments report the day's trades from d,
// the same figures the console shows. Call it before Start.
func (o *Ops) SetDaySource(d DaySource) { o.day = d }

// SetCommandWatch hands w each command the admin API's operator calls
// journal (OperatorCommand, AddInstrument), before it is published: the
// console's tape keeps from it what the command's result event does not
// say (console.Tape.Command). Call it before Start.
func (o *Ops) SetCommandWatch(w func(cmd []byte)) { o.commandWatch = w }

// CanOperate reports whether an operator token is configured (without
// one, every change is refused).
func (o *Ops) CanOperate() bool { return o.cfg.Admin.OperatorTokens() > 0 }

// Sessions returns the configured sessions.
func (o *Ops) Sessions() []Session { return o.cfg.Sessions }

// SessionState returns a session's connection state (zero without session control).
func (o *Ops) SessionState(idx uint16) SessionState {
	if o.cfg.SessionControl == nil {
		return SessionState{}
	}
	return o.cfg.SessionControl.SessionState(idx)
}

// SetSessionControl connects the gateway (built after New).
func (o *Ops) SetSessionControl(sc SessionControl) { o.cfg.SessionControl = sc }

// Start opens the admin listener and starts the trading day. The schedule
// first catches up on the transitions missed while the venue was down;
// /readyz answers ready once that is done and fixReady reports true.
func (o *Ops) Start(fixReady func() bool) error {
	if o.stopping() {
		return ErrStopping // closed before it started (a stop during the server's start)
	}
	if o.plan == nil {
		// Nothing to catch up on: ready before the admin API takes a
		// change, which it refuses until then (refuseCatchingUp).
		o.setReady()
	}
	if o.cfg.Admin.Enabled() {
		if err := o.listen(fixReady); err != nil {
			return err
		}
	}
	o.wg.Add(3)
	go func() {
		defer o.wg.Done()
		o.runAuctionTimer()
	}()
	go func() {
		defer o.wg.Done()
		o.recordAwaited()
	}()
	go func() {
		defer o.wg.Done()
		o.archiveAwaited()
	}()
	if o.plan == nil {
		return nil
	}
	last, found, err := o.loadScheduleState()
	if err == nil {
		o.endDayReplayed()
	}
	if err != nil {
		// Without the record the start cannot know which transitions it
		// missed: bringing every group to its phase now would skip an end
		// of day among them, and DAY orders would trade into the next day
		// (docs/ARCHITECTURE.md, "Operations: the control plane and the
		// trading day").
		return fmt.Errorf("schedule: the record of the last transition run is unreadable (%w): the transitions missed "+
			"while the venue was down cannot be known, and an end of day among them would be skipped; restore the file, "+
			"or move it aside to bring every group to its phase now as a first start does", err)
	}
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		o.runSchedule(last, found)
	}()
	return nil
}

// setReady marks the schedule caught up.
func (o *Ops) setReady() {
	o.ready.Store(true)
	o.endCatchUp()
}

// endCatchUp closes caughtUp once: at setReady, or when the schedule ends
// without it (the venue halted), so that a start does not wait for ever.
func (o *Ops) endCatchUp() { o.catchUpOnce.Do(func() { close(o.caughtUp) }) }

// CaughtUp is closed once the schedule has run the transitions it missed
// while the venue was down (at once without a schedule), or has stopped
// on a halted venue. The server takes
// FIX logons only then: orders accepted before would trade in, or expire
// with, the phases of a day long over (README, "The trading day").
func (o *Ops) CaughtUp() <-chan struct{} { return o.caughtUp }

// stampNs is the timestamp of a command the control plane journals: the
// clock's, or during the schedule's catch-up the time of the transition it
// runs (catchUpAtNs), so that the matcher's timers (GTD expiries, auction
// ends) due after it fire after it, as they would have had the venue been
// up. Nothing else is journaled during the catch-up: the admin API refuses
// an operator's change then (refuseCatchingUp), and the server's periodic
// commands wait for CaughtUp, so that no command stamped with the clock
// lands among the catch-up's, stamped in the past.
func (o *Ops) stampNs() int64 {
	now := o.cfg.Now().UnixNano()
	if at := o.catchUpAtNs.Load(); at != 0 && at < now {
		return at
	}
	return now
}

// CatchingUp reports whether the schedule is running transitions as a
// catch-up, stamped with the times they were due: at start (CaughtUp not
// yet closed), or once a clock stepped ahead found several due at once.
// Nothing stamped with the clock is to be journaled meanwhile: the admin
// API refuses changes, the server's periodic commands wait and the FIX
// gateway refuses orders (docs/ARCHITECTURE.md, "Operations: the control plane
// and the trading day").
func (o *Ops) CatchingUp() bool { return !closed(o.caughtUp) || o.catchingUp.Load() }

// closed reports whether ch is closed (it never carries a value).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// WaitCaughtUp waits for CaughtUp; false when Close comes first.
func (o *Ops) WaitCaughtUp() bool {
	select {
	case <-o.caughtUp:
	case <-o.stop:
	}
	return !o.stopping() // a schedule that stopped ends its catch-up too
}

// auctionTimerPeriod is how often the auction timer looks whether one of
// the matcher's timers is due.
const auctionTimerPeriod = 50 * time.Millisecond

// runAuctionTimer journals a Tick command once one of the matcher's timers
// is due (TimersDue: a volatility auction's end, an indicative uncross the
// throttle held back, a resting GTD order's ExpireTime), so that the
// matcher uncrosses, publishes or expires without waiting for other
// traffic: the end is a journaled command, and a replay ends it at the
// same place ("Auctions" in core/doc.go). It stops with Close.
func (o *Ops) runAuctionTimer() {
	periodic.Run(o.stop, auctionTimerPeriod, func(time.Time) {
		if o.CatchingUp() {
			// The catch-up's commands carry the missed transitions' times
			// (stampNs): a Tick at the clock's time now would expire the
			// GTD orders due since, before the transitions that came first.
			return
		}
		if now := o.cfg.Now().UnixNano(); o.cfg.TimersDue != nil && o.timersDue(now, o.cfg.TimersDue()) {
			o.tick(now)
		}
	})
}

// timersDue reports whether a Tick stamped now runs one of the matcher's
// timers, whose next is due at due: now has come to it, or the clock reads
// more than core.ClockStepBackNs before the last command's time with a
// timer waiting. A wall clock stepped back (an NTP step, an operator's date
// command) would otherwise leave a volatility auction, and an indicative
// the throttle holds, waiting on an idle venue until the clock came back
// to their times, hours later maybe; the Tick's earlier time bounds them
// (core: a volatility auction ends at most its length after it).
func (o *Ops) timersDue(now, due int64) bool {
	if now >= due {
		return true
	}
	return due != math.MaxInt64 && o.cfg.CommandTimeNs != nil && now < o.cfg.CommandTimeNs()-core.ClockStepBackNs
}

// tick publishes a Tick command stamped nowNs; a full ring skips it (the
// next period tries again).
func (o *Ops) tick(nowNs int64) {
	p := o.cfg.Pipeline
	seq, slot, err := p.Claim()
	if errors.Is(err, pipeline.ErrHalted) {
		return // a halted venue runs no auction
	}
	if err != nil {
		o.log.Warn("auction timer: command ring full; trying again next period", "err", err)
		return
	}
	var c venue.Tick
	_ = c.WrapEncode(slot, 0)
	c.SetSeq(p.SeqBase() + uint64(seq))
	c.SetTimestampNs(nowNs)
	p.Commands.Publish(seq)
}

// Halted returns the fail-stop that halted the venue (a journal, matcher or
// FIX store failure), nil while it trades: /readyz, the status call and the
// console show it.
func (o *Ops) Halted() error { return o.cfg.Pipeline.Err() }

// Addr is the admin API's address ("" when off).
func (o *Ops) Addr() string {
	if o.listener == nil {
		return ""
	}
	return o.listener.Addr().String()
}

// Close stops the admin API and the schedule. Call it before the pipeline
// stops: no command is published afterwards.
func (o *Ops) Close() {
	o.closed.Do(func() {
		close(o.stop)
		o.serverMu.Lock()
		srv := o.server
		o.serverMu.Unlock()
		if srv != nil {
			_ = srv.Close()
		}
	})
}

// Shutdown stops the admin API once the calls it took are answered,
// waiting at most timeout, then closes what is left (event streams). A
// cluster leader deposed by a leadership transfer calls it before it
// restarts, having closed Config.Listener (the node's socket then answers
// as a deposed node's, docs/ARCHITECTURE.md, "Losing leadership"), so that
// every call it took gets its answer instead of a closed connection.
// http.Server.Shutdown is not enough: it drops a request it reads after
// it began (httpdrain).
func (o *Ops) Shutdown(timeout time.Duration) {
	o.serverMu.Lock()
	srv := o.server
	o.serverMu.Unlock()
	if srv == nil {
		return
	}
	if o.track != nil {
		_ = o.listener.Close()
		if c, ok := o.console.(interface{ Close() }); ok {
			c.Close() // its event streams end, as they never would
		}
		httpdrain.Drain(srv, o.track, time.Now().Add(timeout))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if srv.Shutdown(ctx) != nil {
		_ = srv.Close()
	}
}

// Wait waits for the control plane's goroutines (after the pipeline stopped).
func (o *Ops) Wait() { o.wg.Wait() }

// journalDir is where the journal lives.
func (o *Ops) journalDir() string { return filepath.Join(o.cfg.DataDir, "journal") }

// Action is one OperatorCommand to publish.
type Action struct {
	Kind       venue.OperatorActionType
	Status     venue.TradingStatus
	Session    uint16 // massCancelAnySession for any
	Instrument uint32 // 0 for all
	Account    string
	// RefPriceTicks and BandPercent: SetPriceBand.
	RefPriceTicks, BandPercent int64
	Operator                   string
	Reason                     string
}

// AnySession in Action.Session matches every session (MassCancel).
const AnySession = 0xFFFF

// Errors of Do.
var (
	ErrBusy     = errors.New("the command ring stayed full; try again")
	ErrTimeout  = errors.New("the command was published but not applied and durable in time")
	ErrStopping = errors.New("the venue is stopping")
	// ErrUnconfirmed: the venue halted after the command was published and
	// before it was durable (README, "A venue that failed"; a cluster
	// leader that lost the leadership, "Cluster: three replicas").
	ErrUnconfirmed = errors.New("the venue halted before the command was durable: it may or may not have taken effect; " +
		"check the venue's state (a cluster's new leader) before repeating it")
)

// Do publishes an action as an OperatorCommand, waits until it is applied
// and durable, and returns its result. A refused action (Result.Reason not
// None) changed nothing; it is journaled all the same.
func (o *Ops) Do(a Action) (Result, error) {
	r, _, err := o.do(a, false)
	return r, err
}

// doLate is Do, except that a call that times out (ErrTimeout) keeps the
// command's result coming: late gives it once the matcher has applied the
// command (an awaited phase change, end of day or session action reads it
// once its command is durable and applied, and counts it: appliedResult).
func (o *Ops) doLate(a Action) (r Result, late <-chan Result, err error) { return o.do(a, true) }

func (o *Ops) do(a Action, keep bool) (Result, <-chan Result, error) {
	return o.submitAction(a.encode(o.stampFor(a)), keep, a.Kind, a.Operator, a.Reason)
}

// submitAction submits an operator's command (encode writes it), waits
// for its result as submitKeeping does, and counts and logs it: do's
// OperatorCommand, CancelOrder's OperatorCancelOrder.
func (o *Ops) submitAction(encode func(slot []byte, cmdSeq uint64) error, keep bool, kind venue.OperatorActionType,
	operator, reason string) (Result, <-chan Result, error) {
	r, late, err := o.submitKeeping(encode, keep)
	if err != nil {
		return r, late, err
	}
	if o.metrics != nil {
		o.metrics.action(r)
	}
	attrs := []any{"seq", r.Seq, "action", kind.String(), "operator", operator, "reason", reason, "result", resultName(r.Reason), "count", r.Count}
	if kind == venue.OperatorActionTypeCancelOrder {
		attrs = append(attrs, "order_id", r.OrderID, "session", r.Session)
	}
	o.log.Info("operator command", attrs...)
	return r, nil, nil
}

// publish publishes an action as an OperatorCommand and returns its seq
// without waiting for it: the matcher applies it once the journal has it,
// as any command published (a phase change whose call timed out publishes
// the rest of its group's so: handlePhase). With expect, result gives its
// result once the matcher has applied it.
func (o *Ops) publish(a Action, expect bool) (seq uint64, result <-chan Result, err error) {
	seq, result, err = o.publishCommand(a.encode(o.stampFor(a)), expect)
	if err == nil {
		o.log.Info("operator command published, not awaited", "seq", seq, "action", a.Kind.String(), "operator", a.Operator,
			"reason", a.Reason, "instrument", a.Instrument)
	}
	return seq, result, err
}

// stampFor is the stamp of a's command: stampNs, and for an end of day
// also told to Config.EndOfDayStamped.
func (o *Ops) stampFor(a Action) func() int64 {
	if a.Kind != venue.OperatorActionTypeEndOfDay || o.cfg.EndOfDayStamped == nil {
		return o.stampNs
	}
	return func() int64 {
		ns := o.stampNs()
		o.cfg.EndOfDayStamped(ns)
		return ns
	}
}

// encode is the encoder of a's OperatorCommand for submit, stamped with
// stampNs.
func (a Action) encode(stampNs func() int64) func(slot []byte, cmdSeq uint64) error {
	return func(slot []byte, cmdSeq uint64) error {
		var c venue.OperatorCommand
		_ = c.WrapEncode(slot, 0)
		c.SetSeq(cmdSeq)
		c.SetTimestampNs(stampNs())
		c.SetAction(a.Kind)
		c.SetStatus(a.Status)
		c.SetFilterSessionIdx(a.Session)
		c.SetInstrumentID(a.Instrument)
		// Lengths were checked by the caller; a longer value would be cut by
		// the flyweight's error, which would leave the field empty.
		_ = c.SetAccountString(a.Account)
		_ = c.SetOperatorString(a.Operator)
		_ = c.SetReasonString(a.Reason)
		c.SetRefPriceTicks(a.RefPriceTicks)
		c.SetBandPercent(a.BandPercent)
		if a.Kind == venue.OperatorActionTypeSetTradingStatus || a.Kind == venue.OperatorActionTypeSetPhaseStatus {
			// A call that a status moves to the other call uncrosses first
			// (core's changeStatus); the records of earlier builds lack it.
			c.SetFlags(venue.OperatorFlagsUncrossBetweenCalls)
		}
		return nil
	}
}

// EndOfDayReport says what an end of day did.
type EndOfDayReport struct {
	Seq          uint64 `json:"seq"`
	Expired      uint32 `json:"expired_orders"`
	SnapshotSeq  int64  `json:"snapshot_seq"` // -1: no snapshot (journal.snapshot_interval = 0s, or it failed)
	ArchivedSegs int    `json:"archived_segments"`
	// ArchivedThrough is the snapshot the archived segments lie before: the
	// end of day's own, or an older one when the states beside the end of
	// day's are not written yet (-1: nothing could be archived).
	ArchivedThrough int64 `json:"archived_through_seq"`
	// NotArchived says why nothing was archived (ArchivedThrough -1): the
	// end of day's snapshot is usually not yet one a start would load, and
	// without it the answer's snapshot seq seemed to contradict "nothing".
	NotArchived     string `json:"not_archived,omitempty"`
	ArchivedRaw     int64  `json:"archived_raw_bytes"`
	ArchivedGzip    int64  `json:"archived_compressed_bytes"`
	ArchiveError    string `json:"archive_error,omitempty"`
	SnapshotError   string `json:"snapshot_error,omitempty"`
	CompletedUnixNs int64  `json:"completed_unix_ns"`
	// CommandUnixNs is the end of day command's time, when the trading day
	// after it began (0 in a report written before it was kept): a start
	// from the end of day's snapshot, which replays no end of day, reads it
	// here (DayStartNs).
	CommandUnixNs int64 `json:"command_unix_ns,omitempty"`
}

// DayStartNs is the command time of the last end of day, as the start's
// replay or the last end of day's report has it (0: none known): the
// gateway refuses a possible resend sent before it (gateway/doc.go,
// "Possible resends").
func (o *Ops) DayStartNs() int64 {
	ns := o.cfg.EndOfDayNs
	if last := o.lastEOD.Load(); last != nil {
		ns = max(ns, last.CommandUnixNs)
	}
	return ns
}

// snapshotWaitMax bounds how long end of day waits for its snapshot file.
const snapshotWaitMax = 60 * time.Second

// EndOfDay runs the end-of-day sequence: the EndOfDay command (DAY orders
// expire, the day's ClOrdIDs are forgotten), then a Snapshot command, and
// once that snapshot is on disk, the archiving of the journal segments it
// makes unnecessary. The snapshot and the archive only shorten start-up:
// when either fails, the day has still ended, and the report says why.
//
// With a schedule, it ends a trading day: an operator's the one of the last
// transition due (schedule.Plan.EndedBy, as a cluster's follower names it:
// the day in progress, or before the day's first transition the last one), and the schedule then runs none of that day's transitions, its end
// of day included (docs/ARCHITECTURE.md, "Operations: the control plane and
// the trading day").
func (o *Ops) EndOfDay(operator, reason string) (Result, EndOfDayReport, error) {
	return o.endOfDay(operator, reason, "")
}

// errDayEnded refuses an end of day of a trading day that ended already:
// the schedule's after an operator's, or an operator's after either.
var errDayEnded = errors.New("the trading day has ended already")

// endOfDay is EndOfDay of the trading day day (the schedule's: "" names
// the day of an operator's). One runs at a time, so the schedule's sees
// whether an operator's ended its day first.
func (o *Ops) endOfDay(operator, reason, day string) (Result, EndOfDayReport, error) {
	o.eodMu.Lock()
	defer o.eodMu.Unlock()
	rep := EndOfDayReport{SnapshotSeq: -1, ArchivedThrough: -1}
	if day == "" && o.plan != nil {
		// An operator's ends the trading day of the last transition due;
		// a second one would expire that day's orders and forget its
		// ClOrdIDs and risk figures again.
		day, _ = o.plan.EndedBy(o.cfg.Now())
	}
	if r, err := o.awaitEndOfDays(o.cfg.Admin.CallTimeout.Duration); err != nil {
		// An end of day sent before is not known done yet: another would
		// end its day twice if it is (docs/ARCHITECTURE.md, "Operations:
		// the control plane and the trading day").
		return r, rep, err
	}
	if ended, _ := o.dayEnded(day); day != "" && ended {
		return Result{}, rep, fmt.Errorf("%w: %s", errDayEnded, day)
	}
	o.endOfDayRunning.Store(true)
	defer o.endOfDayRunning.Store(false)
	o.setEndingDay(day)
	r, late, err := o.doLate(Action{Kind: venue.OperatorActionTypeEndOfDay, Operator: operator, Reason: reason})
	rep.Seq, rep.Expired, rep.CommandUnixNs = r.Seq, r.Count, r.TimestampNs
	if errors.Is(err, ErrTimeout) {
		// Published: the matcher applies it once the journal has it, and
		// it ends the day then, however this call ended; its snapshot and
		// archive follow (archiveAwaited).
		o.awaitEndOfDay(r.Seq, day, late)
	}
	done := err == nil && r.Reason == venue.RejectReasonNone
	if done && day != "" {
		o.endDay(day)
	}
	// Awaited or ended (or refused): a snapshot goes by the record from here.
	o.setEndingDay("")
	if !done {
		return r, rep, err
	}
	o.snapshotAndArchive(&rep)
	return r, rep, nil
}

// EndOfDayRunning reports whether an end of day runs, its snapshot still
// to come: the server's periodic snapshot waits, rather than take one of
// the state the end of day's own snapshot is about to hold (and have that
// one skipped, as one is while another is written, and journaled again).
func (o *Ops) EndOfDayRunning() bool { return o.endOfDayRunning.Load() }

// snapshotAndArchive is the step after an end of day rep.Seq, durable and
// applied (eodMu held): a Snapshot command, then, once its file is
// published, the archiving of the journal segments a start no longer
// needs. It fills rep in and keeps it as the last end of day's report.
// Neither is done while the day's end is not in schedule.state, or another
// record is behind the journal (SnapshotHeldBack): a start from that
// snapshot would not know the day ended, or what the record lacks.
func (o *Ops) snapshotAndArchive(rep *EndOfDayReport) {
	if err := o.SnapshotHeldBack(); err != nil {
		// A start from a snapshot after the end of day would not know the
		// day ended; without it, the start replays the end of day.
		rep.SnapshotError = "not taken: " + err.Error() + "; a start replays the journal from the snapshot before, the end of day included"
		rep.NotArchived = "no snapshot was written"
		o.log.Error("end of day: no snapshot, journal not archived: a record a start reads beside it is not written", "err", err)
	} else {
		o.snapshotThenArchive(rep)
	}
	rep.CompletedUnixNs = o.cfg.Now().UnixNano()
	kept := *rep
	o.lastEOD.Store(&kept)
	o.saveLastEndOfDay(&kept)
	o.log.Info("end of day", "seq", rep.Seq, "expired", rep.Expired, "snapshot_seq", rep.SnapshotSeq,
		"archived_segments", rep.ArchivedSegs, "archived_bytes", rep.ArchivedGzip)
}

// LastEndOfDayFile, in the data directory, keeps the last end of day's
// report, so that /v1/status gives it after a restart: the morning's
// operator, who restarted the venue overnight, asks whether the night's
// end of day ran, and what it archived (README, "Operating the venue").
const LastEndOfDayFile = "end_of_day.json"

// saveLastEndOfDay writes rep to LastEndOfDayFile. A failure is logged,
// not fatal: the report is what an operator reads, nothing a start needs.
func (o *Ops) saveLastEndOfDay(rep *EndOfDayReport) {
	if o.cfg.DataDir == "" {
		return
	}
	b, _ := json.Marshal(rep)
	if err := durable.WriteFile(filepath.Join(o.cfg.DataDir, LastEndOfDayFile), b, 0o640); err != nil {
		o.log.Warn("end of day: its report not saved; /v1/status gives it until the next start", "file", LastEndOfDayFile, "err", err)
	}
}

// loadLastEndOfDay takes the report LastEndOfDayFile keeps, if any. One
// unreadable is logged and left: it is a report, and the next end of day
// writes it again.
func (o *Ops) loadLastEndOfDay() {
	if o.cfg.DataDir == "" {
		return
	}
	path := filepath.Join(o.cfg.DataDir, LastEndOfDayFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	var rep EndOfDayReport
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil {
		o.log.Warn("end of day: the last one's report not read; /v1/status gives none until the next end of day", "file", path, "err", err)
		return
	}
	o.lastEOD.Store(&rep)
}

// snapshotThenArchive is snapshotAndArchive's snapshot and archive.
func (o *Ops) snapshotThenArchive(rep *EndOfDayReport) {
	snapSeq, err := o.snapshot()
	if err != nil {
		rep.SnapshotError = err.Error()
		rep.NotArchived = "no snapshot was written"
		o.log.Warn("end of day: no snapshot, journal not archived", "err", err)
	} else if rep.SnapshotSeq = int64(snapSeq); o.cfg.KeepJournal {
		rep.NotArchived = "a cluster node moves its segments to the archive at its start, before the checkpoint it restores"
	} else {
		through, ok := snapSeq, true
		if o.cfg.UsableSnapshot != nil {
			through, ok = o.cfg.UsableSnapshot(snapSeq)
		}
		if !ok {
			// The side states beside snapshots are written at the first
			// event of a later command (docs/ARCHITECTURE.md, "End of
			// day"): right after the first end of day, no snapshot has them.
			rep.NotArchived = fmt.Sprintf("snapshot %d is not one a start would load until the states kept beside it are written "+
				"(at the next command's first event, or at a stop), and no older snapshot is; the next end of day archives up to it", snapSeq)
		}
		if ok {
			rep.ArchivedThrough = int64(through)
			res, err := journal.ArchiveSegments(o.journalDir(), through, o.cfg.Sync)
			rep.ArchivedSegs, rep.ArchivedRaw, rep.ArchivedGzip = res.Segments, res.RawBytes, res.CompressedBytes
			if err != nil {
				rep.ArchiveError = err.Error()
				o.log.Error("end of day: journal archive failed", "err", err)
			}
			if o.metrics != nil {
				o.metrics.archived(res, err)
			}
		}
	}
}

// snapshot journals a Snapshot command and waits until its file is
// published. The periodic snapshot may be in flight: then the capture is
// skipped and the command is journaled again.
func (o *Ops) snapshot() (uint64, error) {
	stats := o.cfg.Snapshots
	if stats == nil {
		return 0, errors.New("snapshots are off (journal.snapshot_interval = \"0s\")")
	}
	p := o.cfg.Pipeline
	deadline := time.Now().Add(snapshotWaitMax)
	for attempt := 0; attempt < 3; attempt++ {
		skipped, failed := stats.Skipped.Load(), stats.Failed.Load()
		seq, slot, err := p.Claim()
		if err != nil {
			return 0, fmt.Errorf("snapshot command: %w", err)
		}
		cmdSeq := p.SeqBase() + uint64(seq)
		var c venue.Snapshot
		_ = c.WrapEncode(slot, 0)
		c.SetSeq(cmdSeq)
		c.SetTimestampNs(o.stampNs())
		c.SetSnapshotID(cmdSeq)
		p.Commands.Publish(seq)
		for stats.LastSeq.Load() < int64(cmdSeq) {
			if stats.Skipped.Load() != skipped {
				break // a periodic snapshot was being written: try again
			}
			if stats.Failed.Load() != failed {
				return 0, fmt.Errorf("snapshot %d failed (see the log)", cmdSeq)
			}
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("snapshot %d not written within %s", cmdSeq, snapshotWaitMax)
			}
			select {
			case <-o.stop:
				return 0, ErrStopping
			case <-time.After(5 * time.Millisecond):
			}
		}
		if stats.LastSeq.Load() >= int64(cmdSeq) {
			return cmdSeq, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, errors.New("snapshot skipped three times: another snapshot was always in flight")
}
