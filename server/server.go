package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/quickfixgo/quickfix"
	qfconfig "github.com/quickfixgo/quickfix/config"

	"github.com/fixvenue/fixvenue/cluster"
	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/console"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/pipeline"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/gateway/edge"
	"github.com/fixvenue/fixvenue/gateway/fixmd"
	"github.com/fixvenue/fixvenue/gateway/fixstore"
	"github.com/fixvenue/fixvenue/gateway/spec"
	"github.com/fixvenue/fixvenue/internal/httpbound"
	"github.com/fixvenue/fixvenue/internal/periodic"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/latency"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/ops"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/fixvenue/fixvenue/schedule"
)

// Options adjust a Server beyond its configuration (tests and tools).
type Options struct {
	Logger *slog.Logger
	// Listen creates the FIX listener (default: the FIX edge).
	Listen func(addr string) (net.Listener, error)
	// JournalSync replaces the journal's fdatasync (tests inject slow syncs).
	JournalSync journal.SyncFunc
	// StoreSyncInterval is the FIX message store's group fsync interval
	// (default: the configuration's journal.fix_store_sync).
	StoreSyncInterval time.Duration
	// StoreAllocate replaces the FIX message stores' block reservation
	// (tests fail it as a full disk would; fixstore.Options.Allocate).
	StoreAllocate func(f *os.File, size int64) error
	// Replica, when set, is a cluster node's state at the moment it starts
	// to lead: the server takes its matcher and journal instead of
	// replaying its own (server/cluster.go).
	Replica *Replica
	// Now is the venue's clock (tests; nil: time.Now): the schedule runs a
	// transition once it reads the transition's time, and the control
	// plane's commands, the periodic snapshot and risk report and the admin
	// API's risk commands carry its time, so that the journal's times and
	// the matcher's timers follow one clock. The FIX edge reads the wall
	// clock (its throttles and the FIX times clients compare with theirs).
	Now func() time.Time
	// FIXWallClock, when set, is the wall clock the FIX gateway reads in
	// place of time.Now (tests step it: the order round trip is timed by
	// the monotonic clock, gateway/roundtrip.go).
	FIXWallClock func() time.Time
	// Inherited are a cluster node's listening sockets that the process it
	// replaced handed over (ClusterNode.PrepareRestart), by name
	// (InheritedAdmin, InheritedStatus): used when they listen at the
	// configured address, else closed.
	Inherited map[string]net.Listener
}

// Server is one running venue.
type Server struct {
	cfg     *config.Config
	opts    Options
	log     *slog.Logger
	matcher *core.Matcher
	journal venueJournal
	// dirLock holds the data directory (nil on a cluster leader: its node holds it).
	dirLock  *dataDirLock
	pipe     *pipeline.Pipeline
	gw       *gateway.Gateway
	acceptor *quickfix.Acceptor
	// acceptorRunning: the acceptor's sessions run (Start got that far, or
	// a cluster's follower started it); only then may Close stop it.
	acceptorRunning atomic.Bool
	stores          *fixstore.Factory
	registry        *prometheus.Registry
	metricsL        net.Listener
	metricsS        *http.Server
	fixL            net.Listener
	edge            *edge.Listener
	stopSync        chan struct{}
	wg              sync.WaitGroup
	replayed        int64
	// replayedEndOfDayNs is the command time of the last end of day the
	// start's replay applied (0: none): the schedule takes its trading day
	// as ended though its record may not say so (ops.Config.EndOfDayNs).
	replayedEndOfDayNs int64
	// replayedSchedule is what the start's replay found of the schedule's
	// progress (nil without a schedule): the phases file with the phase
	// changes of the replayed commands over it, and the groups' places in
	// their day those commands show (ops.Config.Phases, Groups).
	replayedSchedule *scheduleProgress
	// lostReports are the replayed events whose ExecutionReports (or
	// copies) the sessions' stores lack, redelivered by Start
	// (lostreports.go); nil when none.
	lostReports *gateway.LostReports
	// storesLost names, by CompID, the sessions whose FIX store the start
	// found missing though they ran before (keepLostReports): their
	// Logons without a reset are refused (checkSeqNums).
	storesLost map[string]bool
	snaps      *journal.Snapshotter
	// matcherThread is how the matcher runs and why (config.Engine.MatcherThread).
	matcherThread config.MatcherThread
	// mdSnaps writes the feed's state beside each snapshot (see mdStateDir).
	mdSnaps *journal.Snapshotter
	// tape is the console's, rebuilt by the replay; consoleSnaps writes its
	// state beside each snapshot (see consoleStateDir).
	tape         *console.Tape
	tapeEvents   marketdata.EventSource // the tape's events when the console is off
	consoleSnaps *journal.Snapshotter
	stopSnaps    chan struct{}
	// snapEvents is the event ring's cursor when the matcher applied the
	// last Snapshot command (captureSnapshot): runSnapshots journals the
	// next one once an event follows it.
	snapEvents atomic.Int64
	// stall is what the stall watch found (stall.go).
	stall stallWatch
	// fixServing is set once FIX logons are taken (after the schedule's
	// catch-up): /readyz waits for it.
	fixServing atomic.Bool
	// fixRefusal, once set (RefuseLogons), gives the Text of the Logout
	// that refuses every later Logon.
	fixRefusal  atomic.Pointer[func() string]
	feed        *marketdata.Feed
	fixmd       *fixmd.Handler
	stopFeed    func()
	closing     atomic.Bool
	feedStopped atomic.Bool      // the feed's Run ended on an error (fixvenue_md_stopped)
	ops         *ops.Ops         // the control plane (server/admin.go)
	sessCtl     *sessionControl  // operator logout and disable of sessions
	console     *console.Console // the web console on the admin address (server/console.go)
	// riskMu, one per risk subject ("session:C" or "account:A", made for a
	// checked subject only), makes a kill's or a reset's check of the kill
	// switch and its journaled change one step (risk.go).
	riskMu     map[string]*sync.Mutex
	riskMuLock sync.Mutex // guards riskMu
	// disabled are the disabled sessions as the replay left them (nil on a
	// cluster leader, whose follower kept them): see replay.
	disabled *disabledSessions
	// logonGateway is s.gw for the FIX edge's Logon gate (listenEdge, whose
	// CheckLogon may run before s.gw is set).
	logonGateway atomic.Pointer[gateway.Gateway]
	// snapshotsFrom is the first seq whose snapshots a start may load
	// (termsRecord.SnapshotsFrom).
	snapshotsFrom uint64
	// refusedOnReplay is what the start's replay refused under the
	// configured terms without their record (nil: a start with it).
	refusedOnReplay *refusedOnReplay
	// orderToER and orderToFeed are the venue's own latency histograms
	// (package latency), rotated by a goroutine between Start and Close.
	orderToER, orderToFeed *latency.Recorder
	stopLatency            chan struct{}
	export                 *exportState
	// instruments are the configured instruments and those the journal
	// added, as they were after replay (server/instruments.go).
	instruments []config.Instrument
	usage       engineUsage // the matcher's bounds in use (usage.go)
	// periodic counts the periodic commands claimed (risk reports,
	// periodic snapshots), so that a report is journaled only after
	// another command (runRiskReports).
	periodic periodicClaims
	// outbound is the gateway's outbound consumer's event sequence.
	outbound *ring.Sequence

	closeOnce sync.Once
}

// MatcherConfig translates the venue configuration for the matcher.
func MatcherConfig(cfg *config.Config) core.Config {
	mc := core.Config{OrdersMax: cfg.Engine.OrdersMax, ClOrdIDsMax: cfg.Engine.ClOrdIDsMax, SessionsMax: len(cfg.Sessions),
		InstrumentsMax: cfg.InstrumentsMax()}
	for _, in := range cfg.Instruments {
		mc.Instruments = append(mc.Instruments, core.InstrumentConfig{ID: in.ID, Symbol: in.Symbol, TickSize: in.TickSize,
			LotSize: in.LotSize, MinQty: in.MinQty, MaxQty: in.MaxQty, RefPriceTicks: in.RefPriceTicks,
			BandPercent: in.BandPercent, Status: in.Status,
			VolatilityBandTicks: in.VolatilityBandTicks, VolatilityAuctionNs: int64(in.VolatilityAuction.Duration),
			CallExtension: in.ExtendsCalls()})
	}
	mc.IndicativeIntervalNs = int64(cfg.Engine.IndicativeInterval.Duration)
	mc.Risk = matcherRisk(cfg)
	return mc
}

// JournalConfig translates the venue configuration for the journal.
func JournalConfig(cfg *config.Config) journal.Config {
	return journal.Config{SegmentBytes: cfg.Journal.SegmentBytes, Policy: cfg.Journal.Fsync}
}

// New recovers state and prepares every part; Start begins serving.
func New(cfg *config.Config, opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.StoreSyncInterval <= 0 {
		opts.StoreSyncInterval = cfg.Journal.FIXStoreSync.Duration
	}
	s := &Server{cfg: cfg, opts: opts, log: opts.Logger, registry: prometheus.NewRegistry(), stopSync: make(chan struct{}),
		orderToER: latency.New("order to ExecutionReport"), orderToFeed: latency.New("order to feed"), stopLatency: make(chan struct{})}
	if opts.Replica != nil {
		// The cluster node made and holds the data directory (StartCluster).
		return s.newOnReplica(opts.Replica)
	}
	// What the configuration names outside it is checked before the data
	// directory is touched.
	if err := checkTLSFiles(cfg); err != nil {
		return nil, err
	}
	if err := checkMatcherCPU(cfg); err != nil {
		return nil, err
	}
	lock, err := lockDataDir(cfg.Venue.DataDir)
	if err != nil {
		return nil, err
	}
	served := false
	defer func() {
		if !served {
			lock.release()
		}
	}()
	if err := checkDataDirFiles(cfg.Venue.DataDir); err != nil {
		return nil, err
	}
	s.dirLock = lock
	terms, err := checkTermsRecord(cfg, true, false)
	if err != nil {
		return nil, err
	}
	m, err := core.NewMatcher(MatcherConfig(cfg))
	if err != nil {
		return nil, err
	}
	s.matcher = m
	jc := JournalConfig(cfg)
	jc.Logger = s.log
	jc.Sync = opts.JournalSync
	jc.OnFlush = s.journalFlushMetrics()
	jc.DurableBefore, jc.DurableEvidence = durableBefore(filepath.Join(cfg.Venue.DataDir, "journal"), terms)
	w, err := journal.Open(filepath.Join(cfg.Venue.DataDir, "journal"), jc)
	if err != nil {
		return nil, err
	}
	s.journal = w
	if cfg.MarketData.Enabled {
		if err := s.buildFeed(); err != nil {
			s.journal.Close()
			return nil, err
		}
	}
	if err := s.buildTape(); err != nil {
		s.closeRecovered()
		return nil, err
	}
	if err := s.replay(terms); err != nil {
		s.closeRecovered()
		return nil, err
	}
	if err := s.buildServing(); err != nil {
		s.closeRecovered()
		return nil, err
	}
	served = true
	return s, nil
}

// closeRecovered closes what New opened before serving (journal, feed,
// console snapshots) when a later step of New fails.
func (s *Server) closeRecovered() {
	s.journal.Close()
	if s.feed != nil {
		s.feed.Close()
	}
	if s.consoleSnaps != nil {
		s.consoleSnaps.Close()
	}
}

// buildServing builds what serves clients and operators on a recovered
// matcher and journal: the pipeline, the FIX sessions, the control plane,
// the event export and the console. A cluster's new leader builds the same
// on its replica's state (newOnReplica).
func (s *Server) buildServing() error {
	s.learnInstruments()
	if err := s.buildPipeline(); err != nil {
		return err
	}
	var err error
	if s.sessCtl, err = s.newSessionControl(); err != nil {
		return err
	}
	var resting []core.OrderView
	if r := s.opts.Replica; r == nil || r.Open == nil || r.Resting == nil {
		resting = s.bookOrders()
	}
	if err := s.buildSessions(resting); err != nil {
		return err
	}
	if err := s.buildOps(resting); err != nil {
		return err
	}
	s.ops.SetSessionControl(s.sessCtl)
	s.ops.SetRisk(s) // risk.go
	// The trading day began at the last end of day, replayed or recorded
	// (a start from the end of day's own snapshot replays none), or, on a
	// cluster's new leader, applied by its follower, which replays nothing
	// and has no report of its own: a possible resend sent before it is
	// refused (gateway/doc.go, "Possible resends").
	s.gw.SetDayStart(s.ops.DayStartNs())
	if r := s.opts.Replica; r != nil {
		s.gw.SetDayStart(r.EndOfDayNs)
	}
	// The matcher does not run yet: its figures are those of the last
	// command applied, the one before the pipeline's first.
	s.gw.SeedRisk(s.matcher.RiskLimitsNow(), int64(s.pipe.SeqBase())-1)
	if err := s.buildExport(); err != nil {
		return err
	}
	return s.buildConsole()
}

// replay applies every journaled command to the fresh matcher before any
// session is accepted, from the newest snapshot the journal can continue.
// Market data never reads engine state: its books, statistics and sequence
// numbers are rebuilt from the feed's own state saved with that snapshot
// and the events of the commands after it; the console's tape (the day's
// trades) is rebuilt the same way from its own state. A snapshot without
// the state of each of them is passed over; with none, the whole journal
// is replayed. The disabled sessions take the disables and enables of the
// replayed commands, so that a disable made durable just before a crash
// holds even if the crash came before its file was written. The terms
// record's update (terms, from checkTermsRecord) is written once the replay
// has succeeded, and a change of the matcher's bounds in it is verified
// first.
func (s *Server) replay(terms *termsUpdate) error {
	start := time.Now()
	opts := journal.ReplayOptions{Logger: s.log, UseSnapshot: true, RefuseSnapshotAhead: true}
	var err error
	if s.disabled, err = newDisabledSessions(s.cfg, false); err != nil {
		return err
	}
	lost, highest, err := s.lostReportsCollector()
	if err != nil {
		return err
	}
	sink := &replaySink{feed: s.feed, tape: s.tape, disabled: s.disabled, configured: configuredInstruments(s.cfg), lost: lost}
	if terms != nil {
		sink.added = addedInstruments(s.cfg, terms.newInstruments)
	}
	if terms != nil && terms.unrecorded {
		sink.refused = newRefusedOnReplay(s.cfg)
	}
	if s.cfg.Schedule.Enabled {
		sink.schedule = replayedSchedule(s.cfg)
	}
	if terms != nil && len(terms.replaced) > 0 {
		s.log.Warn("configured terms: the journal holds no command yet, so the configured terms replace the recorded ones",
			"changes", strings.Join(terms.replaced, "; "))
	}
	if terms != nil && terms.snapshotsPredate() {
		// A snapshot lists the instruments of its day by position (the
		// matcher's, the feed's, the console's) and holds per-session
		// state for its day's sessions: one written before an instrument
		// or a session was configured does not fit. The journal, archive
		// included, replays under the new terms until a snapshot has them.
		// Without a record, the terms the snapshots were taken under are
		// unknown: one taken under another band would not load, or would
		// load that band and the orders it kept, where the configured
		// terms were to be replayed.
		terms.record.SnapshotsFrom = s.journal.NextSeq()
		if terms.unrecorded {
			s.log.Warn("configured terms: no record of the terms the journal was written under (moved aside, or never written): "+
				"replaying the whole journal, archive included, under the configured terms, as its snapshots may have been taken under others",
				"record", terms.path)
		} else {
			s.log.Info("configured instruments or sessions added: replaying the whole journal, archive included, as the snapshots predate them",
				"instruments", strings.Join(terms.newInstruments, ","), "sessions", strings.Join(terms.newSessions, ","))
		}
	}
	if terms != nil {
		s.snapshotsFrom = terms.record.SnapshotsFrom
	}
	if err := useSideStates(&opts, s.sideStates(), s.snapshotsFrom); err != nil {
		return err
	}
	if terms != nil && terms.record.JournalNextSeq > s.journal.NextSeq() {
		return fmt.Errorf("replay: the journal in %s ends before seq %d, and when the venue last started or stopped cleanly it held "+
			"every command before seq %d, durably: records are missing (the journal's volume not mounted, a segment lost, a partial "+
			"restore, or a restore from a backup older than that). Restore them; to start from the journal as it is, losing those commands, "+
			"move %s aside", filepath.Join(s.cfg.Venue.DataDir, "journal"), s.journal.NextSeq(), terms.record.JournalNextSeq, terms.path)
	}
	if terms != nil && len(terms.recorded) > 0 {
		if err := s.verifyBoundChange(terms, opts); err != nil {
			return err
		}
	}
	res, err := journal.Replay(filepath.Join(s.cfg.Venue.DataDir, "journal"), commandTap{s.matcher, lost, s.tape, sink.schedule}, sink, opts)
	if err == nil {
		err = sink.err
	}
	if err == nil && s.feed != nil {
		err = s.feed.EndReplay()
	}
	if errors.Is(err, journal.ErrSegmentsMissing) && res.Snapshot == nil && s.snapshotsFrom > 0 {
		// The snapshots that would spare the archive were passed over:
		// say why, as the journal's error names only what is missing.
		why := fmt.Sprintf("snapshots_from in %s", filepath.Join(s.cfg.Venue.DataDir, termsRecordFile))
		switch {
		case terms != nil && terms.unrecorded:
			why = fmt.Sprintf("%s, the record of the terms they were taken under, is missing", terms.path)
		case terms != nil && terms.snapshotsPredate():
			why = "the configuration adds instruments or sessions"
		}
		return fmt.Errorf("replay: %w; the start replays the journal from its first command, archive included, as no snapshot "+
			"before seq %d is loaded: they may predate the configured terms (%s)", err, s.snapshotsFrom, why)
	}
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	s.replayed, s.replayedEndOfDayNs, s.replayedSchedule = res.Records, sink.endOfDayNs, sink.schedule
	s.refusedOnReplay = sink.refused
	record := filepath.Join(s.cfg.Venue.DataDir, termsRecordFile)
	if terms != nil {
		record = terms.path
	}
	if err := s.storeAhead(highest, sink.refused, record); err != nil {
		return err
	}
	ran := 0 // the sessions that ran on this journal before, each with its FIX store
	if terms != nil && (res.Snapshot != nil || res.Records > 0) {
		ran = terms.recordedSessions
	}
	unrecorded := ""
	if terms != nil && terms.unrecorded {
		unrecorded = terms.path
	}
	s.keepLostReports(lost, ran, unrecorded)
	if terms != nil && s.cfg.Journal.Fsync == journal.PolicyBatch && terms.record.JournalNextSeq != s.journal.NextSeq() {
		terms.record.JournalNextSeq, terms.dirty = s.journal.NextSeq(), true
	}
	if terms != nil && terms.dirty {
		if err := terms.write(); err != nil {
			return err
		}
	}
	if res.Snapshot != nil {
		s.log.Info("snapshot loaded", "file", res.Snapshot.Path, "seq", res.Snapshot.Seq)
	}
	s.log.Info("journal replayed", "commands", res.Records, "next_seq", s.journal.NextSeq(), "took", time.Since(start).String())
	s.refusedOnReplay.log(s.log)
	return nil
}

// sideState is a state saved beside each snapshot by a consumer of events
// (the feed, the console's tape), in the journal's snapshot file format,
// named by the snapshot's seq.
type sideState struct {
	what    string
	dir     string
	restore func(io.Reader) error
}

// snapshotMetrics are the figures of the snapshots snaps returns: the
// journal's snapshotter first (nil: none, journal.snapshot_interval unset),
// then those of the states kept beside its snapshots, whose failures count
// too (snapshotFailures); named with prefix, whose ending each help's first
// sentence ("" for the venue's).
func snapshotMetrics(prefix, whose string, snaps func() []*journal.Snapshotter) []prometheus.Collector {
	last := func() float64 {
		if sn := snaps(); sn[0] != nil {
			return float64(sn[0].Stats().LastSeq.Load())
		}
		return -1
	}
	taken := func() float64 {
		if sn := snaps(); sn[0] != nil {
			return float64(sn[0].Stats().Taken.Load())
		}
		return 0
	}
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: prefix + "snapshots_total", Help: "Journal snapshots published since start" + whose + "."}, taken),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: prefix + "snapshot_failures_total",
			Help: "Snapshots that failed (capture, write or durability wait) since start" + whose + ": the journal's, or a state saved beside one " +
				"(market data, console), without which a start passes that snapshot over; see the log for why."},
			func() float64 { return float64(snapshotFailures(snaps())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: prefix + "snapshot_last_seq", Help: "Command seq of the last journal snapshot published since start" + whose + " (-1: none)."}, last),
	}
}

// snapshotFailures counts the snapshots that failed, the journal's and
// those of the states kept beside them: a journal snapshot written without
// its market data or console state is one a start passes over, and when
// every one lacks it (its directory refusing writes) the venue replays its
// whole journal at the next start, while the journal's own counters showed
// every snapshot taken.
func snapshotFailures(all []*journal.Snapshotter) int64 {
	var n int64
	for _, snaps := range all {
		if snaps != nil {
			n += snaps.Stats().Failed.Load()
		}
	}
	return n
}

// sideStates are the states this venue keeps beside its snapshots.
func (s *Server) sideStates() []sideState {
	var states []sideState
	if s.feed != nil {
		states = append(states, sideState{"market data state", s.mdStateDir(), s.feed.Restore})
	}
	if s.tape != nil {
		states = append(states, sideState{"console state", s.consoleStateDir(), s.tape.Restore})
	}
	return states
}

// sideStateFiles lists each state's files by snapshot seq.
func sideStateFiles(states []sideState) ([]map[uint64]string, error) {
	have := make([]map[uint64]string, len(states))
	for i, st := range states {
		files, err := journal.ListSnapshots(st.dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.what, err)
		}
		have[i] = make(map[uint64]string, len(files))
		for _, f := range files {
			have[i][f.Seq] = f.Path
		}
	}
	return have, nil
}

// sideStatesAt reports whether every state has a valid file for seq.
func sideStatesAt(have []map[uint64]string, seq uint64) bool {
	for i := range have {
		if have[i][seq] == "" {
			return false
		}
		if _, err := journal.CheckSnapshot(have[i][seq]); err != nil {
			return false
		}
	}
	return true
}

// usableSnapshot is the newest journal snapshot at or before seq that a
// start would load: valid, with every side state beside it (ops.Config.
// UsableSnapshot). A side state is written at the first event of a later
// command (or at a stop), so right after an end of day its snapshot is
// usually not usable yet, and end of day archives only up to an older one.
func (s *Server) usableSnapshot(seq uint64) (uint64, bool) {
	dir := filepath.Join(s.cfg.Venue.DataDir, "journal")
	snaps, err := journal.ListSnapshots(dir)
	if err != nil {
		return 0, false
	}
	have, err := sideStateFiles(s.sideStates())
	if err != nil {
		return 0, false
	}
	for _, sf := range snaps { // newest first
		if sf.Seq > seq || !loadable(have, s.snapshotsFrom, sf.Seq) {
			continue
		}
		if _, err := journal.CheckSnapshot(sf.Path); err == nil {
			return sf.Seq, true
		}
	}
	return 0, false
}

// loadable reports whether a start may load the journal's snapshot of seq:
// not one from before from (termsRecord.SnapshotsFrom), and one every side
// state has a valid file for.
func loadable(have []map[uint64]string, from, seq uint64) bool {
	return seq >= from && sideStatesAt(have, seq)
}

// useSideStates makes the replay start only from a loadable snapshot, and
// load each state with it.
func useSideStates(opts *journal.ReplayOptions, states []sideState, from uint64) error {
	have, err := sideStateFiles(states)
	if err != nil {
		return err
	}
	opts.SnapshotUsable = func(seq uint64) bool {
		if loadable(have, from, seq) {
			return true
		}
		if seq < from && opts.Logger != nil {
			// Not for want of a state: the journal's own line cannot say.
			opts.Logger.Info("snapshot passed over: taken before sessions or instruments were added to the configuration, which it "+
				"does not hold (the start replays the whole journal, archive included, until a snapshot is taken under them)",
				"seq", seq, "snapshots_from", from)
		}
		if seq >= from && opts.Logger != nil {
			// Say which state is missing or damaged: passing over a
			// snapshot costs the start a longer replay.
			for i, st := range states {
				switch f := have[i][seq]; {
				case f == "":
					opts.Logger.Info("snapshot passed over: no "+st.what+" beside it (written at the first command after the snapshot)", "seq", seq, "dir", st.dir)
				default:
					if _, err := journal.CheckSnapshot(f); err != nil {
						opts.Logger.Warn("snapshot passed over: its "+st.what+" is damaged", "seq", seq, "file", f, "err", err)
					}
				}
			}
		}
		return false
	}
	opts.SnapshotLoaded = func(sf journal.SnapshotFile) error {
		for i, st := range states {
			if _, err := journal.ReadSnapshot(have[i][sf.Seq], st.restore); err != nil {
				return fmt.Errorf("%s %s (remove it to rebuild from the whole journal): %w", st.what, have[i][sf.Seq], err)
			}
		}
		return nil
	}
	return nil
}

// commandTap is the matcher of the start-up replay, which shows the lost
// reports' collector each command before the matcher applies it (a
// rebuilt reject of a post-only order reads its command: gateway's
// postonly.go), and the console's tape (what an operator command's result
// does not say: console.Tape.Command). It keeps the matcher's other
// methods (ReadSnapshot).
type commandTap struct {
	*core.Matcher
	lost     *gateway.LostReports
	tape     *console.Tape     // nil: the admin API is off
	schedule *scheduleProgress // nil: no schedule
}

func (c commandTap) Apply(cmd []byte, sink core.EventSink) error {
	c.lost.Command(cmd)
	if c.tape != nil {
		c.tape.Command(cmd)
	}
	if c.schedule != nil {
		c.schedule.Command(cmd)
	}
	return c.Matcher.Apply(cmd, sink)
}

// replaySink hands the events of replayed commands to the feed (see
// marketdata.Feed.Replay), to the console's tape and to the disabled
// sessions, so that the feed's books, statistics and sequence numbers, the
// day's trades the console shows and the sessions refused after a start are
// those the same journal produced before it. The matcher cannot take an
// error from a sink, so the first one is kept and stops the start-up after
// the command that caused it.
type replaySink struct {
	feed     *marketdata.Feed // nil: market data is off
	tape     *console.Tape    // nil: the console is off
	disabled *disabledSessions
	// schedule takes the phase changes (nil: no schedule), as the
	// disabled sessions take the disables.
	schedule *scheduleProgress
	// configured are the configured instruments' symbols by id, for
	// addedAgain; added those new to the configuration at this start, for
	// changedBeforeConfigured.
	configured, added map[uint32]string
	lost              *gateway.LostReports
	// refused counts the orders the configured terms refused, on a start
	// without the terms record (nil on any other).
	refused *refusedOnReplay
	// endOfDayNs is the command time of the last end of day replayed (0:
	// none), for the schedule (ops.Config.EndOfDayNs).
	endOfDayNs int64
	slot       [core.EventSlotMin]byte
	err        error
}

func (k *replaySink) Claim() []byte { return k.slot[:] }

func (k *replaySink) Commit() {
	if k.feed != nil && k.err == nil {
		k.err = k.feed.Replay(k.slot[:])
	}
	if k.tape != nil {
		k.tape.Replay(k.slot[:])
	}
	if err := k.disabled.Event(k.slot[:]); err != nil && k.err == nil {
		k.err = err
	}
	if k.schedule != nil {
		k.schedule.Event(k.slot[:])
	}
	if err := addedAgain(k.configured, k.slot[:]); err != nil && k.err == nil {
		k.err = err
	}
	if err := changedBeforeConfigured(k.added, k.slot[:]); err != nil && k.err == nil {
		k.err = err
	}
	k.lost.Event(k.slot[:])
	if k.refused != nil {
		k.refused.Event(k.slot[:])
	}
	if r, ok := operatorResultOf(k.slot[:]); ok && r.Action() == venue.OperatorActionTypeEndOfDay && r.Reason() == venue.RejectReasonNone {
		k.endOfDayNs = max(k.endOfDayNs, r.TimestampNs())
	}
}

// addedAgain refuses a journal that adds an instrument the configuration
// now lists too (an [[instrument]] written for one the admin API added,
// before the journal was reset): the replayed AddInstrument is refused as
// a duplicate, and the orders it was added for would be checked against
// the configured terms instead of its own, or vanish. The admin API never
// journals an addition of a configured instrument, so a duplicate of one
// on replay is always this.
func addedAgain(configured map[uint32]string, ev []byte) error {
	if id, err := venue.TemplateIDOf(ev, 0); err != nil || id != venue.InstrumentAddedTemplateID {
		return nil
	}
	var a venue.InstrumentAdded
	if a.WrapDecode(ev, 0) != nil || a.Reason() != venue.RejectReasonDuplicateInstrument {
		return nil
	}
	sym := string(a.Symbol())
	for id, symbol := range configured {
		if id == a.InstrumentID() || symbol == sym {
			return fmt.Errorf("instrument id %d (%s) is configured, and the journal adds instrument id %d (%s) at seq %d (AddInstrument): "+
				"its commands would be replayed under the configured terms. An instrument the admin API added is configured only "+
				"once the journal is reset (README, \"Adding an instrument\"); remove that [[instrument]] to start",
				id, symbol, a.InstrumentID(), sym, a.CauseSeq())
		}
	}
	return nil
}

// changedBeforeConfigured refuses a journal that changes the status of an
// instrument new to the configuration. None of its commands could name it
// (the gateway and the admin API knew no such symbol), so the change comes
// from one command for every instrument (an operator's halt or close of
// all), which ran before it was configured: replayed, it changes the new
// instrument too, which then starts halted or closed, and gives events the
// venue never gave (the feed's sequence numbers move past those it sent).
func changedBeforeConfigured(added map[uint32]string, ev []byte) error {
	if len(added) == 0 {
		return nil
	}
	if id, err := venue.TemplateIDOf(ev, 0); err != nil || id != venue.TradingStatusChangedTemplateID {
		return nil
	}
	var c venue.TradingStatusChanged
	if c.WrapDecode(ev, 0) != nil {
		return nil
	}
	sym, ok := added[c.InstrumentID()]
	if !ok {
		return nil
	}
	return fmt.Errorf("instrument id %d (%s) is new to the configuration, and the journal changes every instrument's status at seq %d "+
		"(an operator's halt or close of all, before %s was configured): replayed, it would change %s's too, which it did not, and give "+
		"events the venue never gave. Remove that [[instrument]] to start, and list it through the admin API (README, \"Adding an instrument\")",
		c.InstrumentID(), sym, c.CauseSeq(), sym, sym)
}

// configuredInstruments maps the configured instruments' ids to symbols.
func configuredInstruments(cfg *config.Config) map[uint32]string {
	out := make(map[uint32]string, len(cfg.Instruments))
	for _, in := range cfg.Instruments {
		out[in.ID] = in.Symbol
	}
	return out
}

// addedInstruments maps the ids of the configured instruments named in
// symbols (those new to the terms record) to their symbols; nil for none.
func addedInstruments(cfg *config.Config, symbols []string) map[uint32]string {
	var out map[uint32]string
	for _, in := range cfg.Instruments {
		if slices.Contains(symbols, in.Symbol) {
			if out == nil {
				out = map[uint32]string{}
			}
			out[in.ID] = in.Symbol
		}
	}
	return out
}

// mdStateDir holds the market-data feed's state saved with each snapshot,
// in the journal's snapshot file format, named by the same seq.
func (s *Server) mdStateDir() string { return filepath.Join(s.cfg.Venue.DataDir, "mdstate") }

func (s *Server) buildPipeline() error {
	s.matcherThread = s.cfg.Engine.MatcherThread(config.UsableCPUs())
	mt := s.matcherThread
	p, err := pipeline.New(pipeline.Config{
		Matcher: s.pipelineMatcher(), Journal: s.journal, SeqBase: s.journal.NextSeq(),
		CommandSlots: s.cfg.Engine.CommandRingSlots, EventSlots: s.cfg.Engine.EventRingSlots,
		Wait: mt.Wait, ClaimTimeout: s.cfg.Engine.ClaimTimeout.Duration, Logger: s.log,
		PrefetchDistance: core.PrefetchDistance, UnlockedMatcher: !mt.Locked, PinMatcher: mt.Pinned, MatcherCPU: mt.CPU,
		OnSnapshot: s.captureSnapshot,
		AfterBatch: func() { s.usage.store(s.matcher) },
		OnFail: func(err error) {
			if s.gw != nil {
				s.gw.Halt(haltReason(err))
			}
			if r := s.opts.Replica; r != nil && r.OnHalt != nil {
				r.OnHalt(err)
			}
		},
	})
	if err != nil {
		return err
	}
	s.pipe = p
	if r := s.opts.Replica; r != nil && r.Snaps != nil {
		// The follower's, whose snapshot in flight this one's start would
		// have removed (ClusterNode.snapshot).
		s.snaps = r.Snaps
		return nil
	}
	if takesSnapshots(s.cfg) {
		snaps, err := journal.NewSnapshotter(journal.SnapshotterConfig{Dir: filepath.Join(s.cfg.Venue.DataDir, "journal"),
			Durable: s.journal.DurableSequence(), Logger: s.log, Sync: s.opts.JournalSync})
		if err != nil {
			return err
		}
		s.snaps = snaps
	}
	return nil
}

// takesSnapshots reports whether the journal gets Snapshot commands: every
// snapshot_interval, and at an end of day (the schedule's, or an
// operator's) even when no periodic ones are taken.
func takesSnapshots(cfg *config.Config) bool {
	return cfg.Journal.SnapshotInterval.Duration > 0 || cfg.Schedule.Enabled || (cfg.Admin.Enabled() && cfg.Admin.OperatorTokens() > 0)
}

// haltReason is what FIX clients are told about a fail-stop: the part that
// failed, never the cause itself (a file name, an errno), which goes to the
// log, the admin API's status and /readyz (docs/ARCHITECTURE.md, "A venue
// that failed").
func haltReason(err error) string {
	switch {
	case errors.Is(err, cluster.ErrLostLeadership):
		return "this node lost the cluster's leadership"
	case errors.Is(err, pipeline.ErrJournal):
		return "journal failure"
	case errors.Is(err, pipeline.ErrMatcher):
		return "matcher failure"
	case errors.Is(err, fixstore.ErrFailed):
		return "FIX session store failure"
	}
	return "internal failure"
}

// sessionEnded drops what a session held beyond its orders (market data subscriptions).
func (s *Server) sessionEnded(idx uint16) {
	if s.fixmd != nil {
		s.fixmd.SessionEnded(idx)
	}
}

// captureSnapshot runs on the matcher goroutine after a Snapshot command: the
// state is copied to memory there, and written, synced and published by the
// snapshotter's goroutine once the command is durable.
func (s *Server) captureSnapshot(seq uint64) {
	// Every event before the command is published (pipeline: a command's
	// events before the next command), none after it yet.
	s.snapEvents.Store(s.pipe.Events.Cursor())
	if r := s.opts.Replica; r != nil && r.OnSnapshot != nil {
		r.OnSnapshot(seq)
	}
	if s.snaps == nil {
		return
	}
	if err := s.snaps.Capture(seq, s.matcher.WriteSnapshot); err != nil {
		s.log.Warn("snapshot not taken", "seq", seq, "err", err)
		return
	}
	if s.feed != nil {
		s.feed.SnapshotAt(seq)
	}
	if s.tape != nil && s.consoleSnaps != nil {
		s.tape.SnapshotAt(seq)
	}
}

// captureAtStop has the feed and the console's tape capture the state of a
// snapshot that no later command's event has asked them for yet, once the
// pipeline has drained (every event consumed): without it, the snapshot of
// a venue stopped right after taking one (an end of day, then the night)
// lacks their state, and the next start passes it over for an older one or
// the whole journal, archive included. A venue halted by a part outside
// the pipeline (a FIX store) drains as a running one does
// (pipeline.Pipeline.Sound), and captures too.
func (s *Server) captureAtStop() {
	if s.feed != nil {
		s.feed.CaptureAtStop()
	}
	if s.tape != nil && s.consoleSnaps != nil {
		s.tape.CaptureAtStop()
	}
}

// runSnapshots journals a Snapshot command every interval when the matcher
// published an event since the last one: an idle venue writes none
// (README, "Operating the venue"), nor does one whose commands since have
// no event (a session's disconnect). The journal keeps two snapshots
// (journal.DefaultSnapshotsKept), and the event export's catch-up after a
// restart or a failover starts from the newest one before the stream's
// last event (eventstream/doc.go): two taken after commands without events
// both followed that event, the one before it was removed, and the
// catch-up replayed the journal from its first command. A start replays
// the commands without events after the newest snapshot instead, which
// costs it little. A journaled risk report counts by its events.
func (s *Server) runSnapshots(interval time.Duration) {
	// published is the event ring's cursor when the last Snapshot command
	// was published: until the matcher applies it (snapEvents), a tick
	// finding no event since then journals no second one.
	published := s.pipe.Events.Cursor()
	s.snapEvents.Store(published)
	held := false
	s.every(interval, "snapshot command", func() {
		events := s.pipe.Events.Cursor()
		if events == published || events == s.snapEvents.Load() {
			return
		}
		// An end of day takes its own snapshot: one taken while it runs
		// would hold the same state, and have the end of day's skipped
		// (one is while another is written) and journaled again.
		if s.ops.EndOfDayRunning() {
			return
		}
		// A start from a snapshot after an end of day the schedule's record
		// does not hold (a full disk) would not know the day ended, nor
		// one after a disable the disabled sessions' file lacks that the
		// session is disabled; without it, the start replays those
		// commands (ops.Ops.SnapshotGate).
		release, err := s.ops.SnapshotGate()
		if err != nil {
			if !held {
				s.log.Warn("periodic snapshot held back until the records a start reads beside it are written", "err", err)
			}
			held = true
			return
		} else if held {
			held = false
			s.log.Info("periodic snapshots resume: the records a start reads beside them are written")
		}
		_, ok := s.publish("snapshot command", func(slot []byte, seq uint64) {
			var c venue.Snapshot
			_ = c.WrapEncode(slot, 0)
			c.SetSeq(seq)
			c.SetTimestampNs(s.opts.Now().UnixNano())
			c.SetSnapshotID(seq)
		})
		release()
		if ok {
			published = events
		}
	})
}

// every calls do every interval until the server stops its periodic
// commands (stopSnaps), except while the schedule catches up
// (ops.Ops.CatchingUp: at start, or once a clock stepped ahead): the
// catch-up's commands carry the times their transitions were due, and a
// periodic command stamped with the clock among them would have the
// journal's times go backwards and run the matcher's timers (a GTD expiry)
// before transitions due earlier (docs/ARCHITECTURE.md, "Operations: the
// control plane and the trading day"). A period that ends during a
// catch-up is skipped; what names the command in the log.
func (s *Server) every(interval time.Duration, what string, do func()) {
	said := false
	periodic.Run(s.stopSnaps, interval, func(time.Time) {
		if !s.ops.CatchingUp() {
			do()
			return
		}
		if !said {
			said = true
			s.log.Info(what + " waits for the schedule's catch-up")
		}
	})
}

// publish claims a command slot for a periodic command (counted in
// s.periodic), has encode write the command of sequence seq into it and
// publishes it, and returns the slot's ring sequence. A ring that stays
// full skips the command with a warning naming what: the periodic
// commands are tried again next period.
func (s *Server) publish(what string, encode func(slot []byte, seq uint64)) (int64, bool) {
	seq, slot, err := s.periodic.claim(s.pipe)
	if err != nil {
		if !errors.Is(err, pipeline.ErrHalted) { // a halt was logged once, as it came
			s.log.Warn(what+" not journaled", "err", err)
		}
		return 0, false
	}
	encode(slot, s.pipe.SeqBase()+uint64(seq))
	s.pipe.Commands.Publish(seq)
	return seq, true
}

// periodicClaims counts the periodic commands claimed on the command
// ring, so that those others claimed are known without reading the ring:
// the ring's cursor is the highest sequence claimed by any producer, and
// a claim and its count are made under one lock, which others reads them
// under too.
type periodicClaims struct {
	mu sync.Mutex
	n  int64
}

// claim claims a command slot for a periodic command and counts it.
func (p *periodicClaims) claim(pipe *pipeline.Pipeline) (int64, []byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	seq, slot, err := pipe.Claim()
	if err == nil {
		p.n++
	}
	return seq, slot, err
}

// others returns how many commands other than the periodic ones were
// claimed since the pipeline started.
func (p *periodicClaims) others(pipe *pipeline.Pipeline) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return pipe.Commands.Cursor() + 1 - p.n
}

func (s *Server) buildSessions(resting []core.OrderView) error {
	cfg := s.cfg
	gcfg := gateway.Config{OutboundQueueMax: cfg.FIX.OutboundQueueMax, WriteWait: cfg.FIX.WriteTimeout.Duration,
		Logger: s.log, OnSessionEnd: s.sessionEnded,
		Metrics: gateway.NewMetrics(s.registry), SeqBase: s.pipe.SeqBase(), OrderToER: s.orderToER,
		NextSenderSeqNum: func(id quickfix.SessionID) (int, bool) {
			// s.stores is set below, before the acceptor reads a message.
			if st, ok := s.stores.Lookup(id); ok {
				return st.NextSenderMsgSeqNum(), true
			}
			return 0, false
		}}
	if s.opts.Replica != nil {
		gcfg.StoppingText = s.opts.Replica.StoppingText
	}
	// The replay reads the journal from its first command: a single
	// venue's, and a cluster replica's unless it caught up from a Raft
	// snapshot (it holds no command before it). A drop-copy client logs on
	// to a new leader with a reset, as every client does, so the copies
	// the old leader had not delivered are found only by this replay.
	if base, err := cluster.StartsFromSnapshot(filepath.Join(cfg.Venue.DataDir, "journal")); err != nil {
		return err
	} else if base {
		gcfg.NoReplayText = "this cluster node caught up from a Raft snapshot and holds no report before it: it replays none"
	} else {
		gcfg.ReplayEvents = s.replayEvents
	}
	gcfg.EventRingSlots = cfg.Engine.EventRingSlots
	if wall := s.opts.FIXWallClock; wall != nil {
		gcfg.Now = func() int64 { return wall().UnixNano() }
	}
	gcfg.Currency = cfg.Venue.Currency
	if cfg.Schedule.Enabled {
		gcfg.MarketDateEnd = schedule.New(cfg.Schedule).DateEnd
		// The control plane is built after the gateway, and before a FIX
		// message comes.
		gcfg.CatchingUp = func() bool { return s.ops.CatchingUp() }
	}
	for _, in := range s.instruments {
		// The matcher is not running yet: its band and status (after replay) are read here once.
		low, high, _ := s.matcher.Band(in.ID)
		status, _ := s.matcher.TradingStatus(in.ID)
		gcfg.Instruments = append(gcfg.Instruments, gateway.Instrument{ID: in.ID, Symbol: in.Symbol, Tick: in.Tick,
			LotSize: in.LotSize, MinQty: in.MinQty, MaxQty: in.MaxQty, BandLowTicks: low, BandHighTicks: high, Status: status})
	}
	// The listener is bound before QuickFIX/Go is configured: QuickFIX/Go routes
	// a connection to a session by the port it arrived on, so it must be told the
	// real port even when the configuration asks for port 0.
	var fixL net.Listener
	var err error
	if s.opts.Listen != nil {
		fixL, err = s.opts.Listen(cfg.FIX.Addr)
	} else {
		fixL, err = s.listenEdge()
	}
	if err != nil {
		return fmt.Errorf("fix.addr: %w", err)
	}
	s.fixL = fixL
	var settings *quickfix.Settings
	var validators []*gateway.Validator
	if r := s.opts.Replica; r != nil && r.FIX != nil {
		validators = r.FIX.validators
	} else if settings, validators, err = quickfixSettings(cfg, fixL.Addr().String()); err != nil {
		return err
	}
	for i := range cfg.Sessions {
		sc := &cfg.Sessions[i]
		id := sessionID(cfg, sc)
		ord, cxl, msg := cfg.Throttles(sc)
		gcfg.Sessions = append(gcfg.Sessions, gateway.SessionConfig{ID: id, CancelOnDisconnect: cfg.CancelOnDisconnect(sc),
			OrdersPerSecondReject: ord, CancelsPerSecondReject: cxl, MessagesPerSecondLogout: msg, OpenOrdersMax: cfg.OpenOrdersMax(sc),
			DropCopy: dropCopyGrant(sc),
			Accounts: sc.Accounts, Validator: validators[i], LogonLatencyMax: logonLatencyMax(cfg.QuickFIXSettings(sc))})
	}
	gcfg.OpenOrdersMax = cfg.Engine.OrdersMax
	gcfg.EndedClOrdIDsMax = cfg.Engine.ClOrdIDsMax
	if r := s.opts.Replica; r != nil && r.Open != nil && r.Resting != nil {
		gcfg.OpenView = r.Open // kept by the follower: no walk of the books (cluster.go, standbyViews)
	}
	gw, err := gateway.New(gcfg, s.pipe.Commands)
	if err != nil {
		return err
	}
	s.gw = gw
	s.logonGateway.Store(gw)
	if gcfg.OpenView == nil {
		s.seedOpenOrders(resting)
	}
	if s.edge != nil {
		gw.SetPacer(edgePacer{s.edge})
	}
	if s.fixmd != nil {
		s.fixmd.Attach(gw)
		gw.Handle("V", s.fixmd.Handle)
	} else {
		gw.Handle("V", fixmd.Off(gw))
	}
	if r := s.opts.Replica; r != nil && r.FIX != nil {
		// A cluster's new leader takes the acceptor its follower started
		// (server/clusterfix.go, standbyFIX); Start hands it the application
		// and the listener.
		s.stores, s.acceptor = r.FIX.stores, r.FIX.acceptor
		s.acceptorRunning.Store(true)
	} else {
		if s.stores, err = fixstore.NewFactory(fixstore.Options{Dir: filepath.Join(cfg.Venue.DataDir, "fixstore"), Logger: s.log,
			Allocate: s.opts.StoreAllocate, FileBytesMax: cfg.Journal.FIXStoreBytesMax}); err != nil {
			return err
		}
		if s.acceptor, err = quickfix.NewAcceptor(gw.Application(), s.stores, settings, slogLogFactory{log: s.log, arrivals: gw.Arrivals()}); err != nil {
			return fmt.Errorf("quickfix acceptor: %w", err)
		}
		s.acceptor.SetNewListenerCallback(func(string, *tls.Config) (net.Listener, error) { return s.fixL, nil })
	}
	// A store the disk refuses halts the venue (docs/ARCHITECTURE.md, "A venue
	// that failed"), on a goroutine of its own: the hook runs under the
	// store's lock, and halting queues a status message for every session,
	// that one included.
	s.stores.OnFail(func(err error) { go s.pipe.Halt(err) })
	s.stores.ResendWhile(gw.ResendGoesOn)
	s.stores.AfterResend(gw.ResendEnded)
	s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.registerCoreMetrics()
	s.registerInstrumentMetrics()
	return nil
}

// sessionID is the QuickFIX/Go session of a configured session.
func sessionID(cfg *config.Config, sc *config.Session) quickfix.SessionID {
	return quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: cfg.VenueCompID(sc), TargetCompID: sc.CompID}
}

// logonLatencyMax is the SendingTime accuracy QuickFIX/Go holds a session's
// Logons to with these settings (its session factory's defaults: CheckLatency
// on, MaxLatency 120 seconds), 0 when it checks none
// (gateway.SessionConfig.LogonLatencyMax).
func logonLatencyMax(settings map[string]string) time.Duration {
	ss := quickfix.NewSessionSettings()
	for k, v := range settings {
		ss.Set(k, v)
	}
	if ss.HasSetting(qfconfig.CheckLatency) {
		if on, err := ss.BoolSetting(qfconfig.CheckLatency); err != nil || !on {
			return 0
		}
	}
	if !ss.HasSetting(qfconfig.MaxLatency) {
		return 120 * time.Second
	}
	n, err := ss.IntSetting(qfconfig.MaxLatency)
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// quickfixSettings configures QuickFIX/Go for the configured sessions on
// the FIX listener's address: QuickFIX/Go routes a connection to a session
// by the port it arrived on, so it must be the bound port.
func quickfixSettings(cfg *config.Config, addr string) (*quickfix.Settings, []*gateway.Validator, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("fix.addr: %w", err)
	}
	settings := quickfix.NewSettings()
	settings.GlobalSettings().Set("SocketAcceptHost", host)
	settings.GlobalSettings().Set("SocketAcceptPort", port)
	dict, err := spec.WriteFIX44(filepath.Join(cfg.Venue.DataDir, "spec"))
	if err != nil {
		return nil, nil, err
	}
	validators := make([]*gateway.Validator, len(cfg.Sessions))
	for i := range cfg.Sessions {
		sc := &cfg.Sessions[i]
		id := sessionID(cfg, sc)
		ss := quickfix.NewSessionSettings()
		ss.Set("BeginString", id.BeginString)
		ss.Set("SenderCompID", id.SenderCompID)
		ss.Set("TargetCompID", id.TargetCompID)
		for k, v := range cfg.QuickFIXSettings(sc) {
			ss.Set(k, v)
		}
		// QuickFIX/Go's dictionary checks move to the gateway, which makes
		// them without allocating; QuickFIX/Go then has no dictionary to
		// parse with (gateway/validate.go).
		if validators[i], err = gateway.TakeOverValidation(ss, dict); err != nil {
			return nil, nil, fmt.Errorf("session[%d] (%s): %w", i, sc.CompID, err)
		}
		if _, err := settings.AddSession(ss); err != nil {
			return nil, nil, fmt.Errorf("session[%d] (%s): %w", i, sc.CompID, err)
		}
	}
	return settings, validators, nil
}

// Start begins serving: pipeline, outbound, FIX acceptor, metrics.
func (s *Server) Start() error {
	barrier, own := s.pipe.AddEventConsumer()
	s.outbound = own
	if s.feed != nil {
		s.startFeed()
	}
	s.pipe.Start()
	s.startExportTap()
	s.gw.Start()
	s.redeliverLostReports()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.gw.RunOutbound(s.pipe.Events, barrier, own, s.pipe)
	}()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.stores.RunSyncer(s.opts.StoreSyncInterval, s.stopSync)
	}()
	s.startConsole()
	s.stopSnaps = make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.watchDurable(s.stopSnaps)
	}()
	if s.snaps != nil && s.cfg.Journal.SnapshotInterval.Duration > 0 {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.runSnapshots(s.cfg.Journal.SnapshotInterval.Duration)
		}()
	}
	if unlisted := s.cfg.UnlistedAccounts(); len(unlisted) > 0 {
		s.log.Warn("accounts with risk limits or a drop copy that no session lists in its accounts: any session may name them (README, \"Accounts\")",
			"accounts", unlisted)
	}
	if s.cfg.Risk != nil {
		if s.cfg.Risk.ControlToken != "" {
			s.log.Warn("risk.control_token is not used: risk calls are on the admin API (fixvenue admin risk, [[admin.token]])")
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.runRiskReports(s.cfg.Risk.ReportEvery())
		}()
	}
	if s.cfg.Metrics.Addr != "" {
		l, err := net.Listen("tcp", s.cfg.Metrics.Addr)
		if err != nil {
			s.Close()
			return fmt.Errorf("metrics.addr: %w", err)
		}
		s.metricsL = l
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
		if s.cfg.Metrics.TestHooks {
			mux.HandleFunc("/test/seqnums", s.handleSetSeqNums)
			s.log.Warn("test hooks enabled: POST /test/seqnums can change sequence numbers")
		}
		s.metricsS = statusServer(ops.CrossOrigin(ops.LoopbackNames(l, mux)))
		// A scraper keeps a connection or two: connections that send no
		// request hold nothing without bound (internal/httpbound).
		httpbound.Bound(s.metricsS, ops.AdminConnsBeyondStreams)
		go s.metricsS.Serve(l)
	}
	s.startExport()
	if err := s.ops.Start(func() bool { return !s.closing.Load() && s.fixServing.Load() }); err != nil {
		s.Close()
		return err
	}
	// The schedule first runs the transitions it missed while the venue was
	// down: an order taken before would trade in, or expire with, the phases
	// of a day long over (README, "The trading day").
	if !s.ops.WaitCaughtUp() {
		return errors.New("stopped while the schedule caught up")
	}
	if r := s.opts.Replica; r != nil && r.FIX != nil {
		r.FIX.serve(s.gw.Application(), s.fixL)
	} else if err := s.acceptor.Start(); err != nil {
		s.Close()
		return fmt.Errorf("fix.addr: %w", err)
	} else {
		s.acceptorRunning.Store(true)
	}
	s.fixServing.Store(true)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.cancelAbsentSessions(s.cfg.FIX.CancelGrace.Duration)
	}()
	s.log.Info("fixvenue serving", "fix", s.FIXAddr(), "metrics", s.MetricsAddr(), "sender_comp_id", s.cfg.Venue.SenderCompID,
		"sessions", len(s.cfg.Sessions), "instruments", len(s.instruments), "data", s.cfg.Venue.DataDir,
		"fsync", s.cfg.Journal.Fsync, "wait", s.matcherThread.Wait, "matcher_thread_locked", s.matcherThread.Locked, "matcher_thread", s.matcherThread.Reason)
	return nil
}

// AbortStart ends a Start that waits for the schedule's catch-up (a stop
// signal during it): Start then returns an error, and Close stops the rest.
func (s *Server) AbortStart() { s.ops.Close() }

// ShutdownAdmin stops the admin API once the calls in flight are answered,
// waiting at most timeout (ops.Ops.Shutdown).
func (s *Server) ShutdownAdmin(timeout time.Duration) {
	if s.ops != nil {
		s.ops.Shutdown(timeout)
	}
}

// cancelAbsentSessions applies cancel-on-disconnect across a start: a crash
// (or a failover: the old leader's sessions) journaled no disconnect, so
// after grace every cancel-on-disconnect session that has not logged on and
// has DAY orders gets a journaled SessionDisconnected, which cancels them
// as a disconnect would have. A session without one is passed over: after
// a clean stop the orders are gone already, and the command would change
// nothing, yet be journaled at every start, and have a risk report and a
// snapshot follow it (README, "Cancel on disconnect"). Whether it is
// journaled is decided before it is claimed, from the gateway's view of
// the open orders, which holds every order of a session that has not
// logged on since the start.
func (s *Server) cancelAbsentSessions(grace time.Duration) {
	select {
	case <-time.After(grace):
	case <-s.stopSnaps:
		return
	}
	for i := range s.cfg.Sessions {
		idx := uint16(i)
		if s.pipe.Err() != nil {
			return // halted: nothing can be journaled (a deposed leader, a failed disk)
		}
		if !s.cfg.CancelOnDisconnect(&s.cfg.Sessions[i]) || s.gw.LoggedOn(idx) || !s.gw.HasDayOrders(idx) {
			continue
		}
		if err := s.gw.Disconnected(idx, time.Second); err != nil {
			s.log.Error("could not journal cancel-on-disconnect after the start", "session", s.cfg.Sessions[i].CompID, "err", err)
		}
	}
}

// FIXAddr is the address FIX clients connect to.
func (s *Server) FIXAddr() string {
	if s.fixL != nil {
		return s.fixL.Addr().String()
	}
	return s.cfg.FIX.Addr
}

// MetricsAddr is the Prometheus address, or "" when metrics are off.
func (s *Server) MetricsAddr() string {
	if s.metricsL != nil {
		return s.metricsL.Addr().String()
	}
	return ""
}

// FeedAddr is where the market data feed is sent, or "" when market data is off.
func (s *Server) FeedAddr() string {
	if s.feed != nil {
		return s.feed.FeedAddr().String()
	}
	return ""
}

// RecoveryAddr is the market data recovery service's address, or "" when
// market data is off.
func (s *Server) RecoveryAddr() string {
	if s.feed != nil {
		return s.feed.RecoveryAddr().String()
	}
	return ""
}

// Replayed is the number of journaled commands applied at start-up.
func (s *Server) Replayed() int64 { return s.replayed }

// Gateway exposes the gateway (tests).
func (s *Server) Gateway() *gateway.Gateway { return s.gw }

// Pipeline exposes the pipeline (tests).
func (s *Server) Pipeline() *pipeline.Pipeline { return s.pipe }

// stopDrainMax bounds each wait of a stop for the answers to reach the
// sessions' stores (gateway.Gateway.BeginStop).
const stopDrainMax = 5 * time.Second

// Close shuts down in order: sessions (once their answers are stored),
// rings, journal, stores; a journal closed with every record durable has
// its end recorded in the terms record (recordJournalEnd).
func (s *Server) Close() error {
	var errs []error
	s.closeOnce.Do(func() {
		if s.ops != nil {
			s.ops.Close() // no operator or schedule command after this
		}
		if s.console != nil {
			s.console.Close()
		}
		close(s.stopLatency)
		switch {
		case s.acceptorRunning.Load():
			// Every answer reaches its session's store before QuickFIX/Go
			// forgets the sessions (gateway/stop.go): those of the commands
			// journaled so far, then at each logout the stop causes those of
			// its disconnect command (cancel-on-disconnect).
			s.gw.BeginStop(s.pipe.Drained, stopDrainMax)
			s.acceptor.Stop() // logs sessions out; their disconnect commands are journaled
		case s.acceptor != nil:
			// Never started (a Start that failed before it, or no Start):
			// QuickFIX/Go's Stop would wait for session loops that never
			// ran. Its sessions are only registered, for the process.
			for i := range s.cfg.Sessions {
				_ = quickfix.UnregisterSession(sessionID(s.cfg, &s.cfg.Sessions[i]))
			}
		}
		s.closing.Store(true)
		if s.stopSnaps != nil {
			close(s.stopSnaps)
		}
		pipeErr := s.pipe.Stop(10 * time.Second)
		if pipeErr != nil {
			errs = append(errs, pipeErr)
		} else if s.pipe.Sound() {
			s.captureAtStop()
		}
		s.gw.Stop()
		if s.feed != nil {
			s.stopFeed()
			s.feed.Close()
			s.fixmd.Stop()
		}
		close(s.stopSync)
		s.wg.Wait()
		if s.ops != nil {
			s.ops.Wait()
		}
		if s.stores != nil {
			if err := s.stores.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		s.stopExport()
		if s.snaps != nil {
			s.snaps.Close()
		}
		if s.mdSnaps != nil {
			s.mdSnaps.Close()
		}
		if s.consoleSnaps != nil {
			s.consoleSnaps.Close()
		}
		if err := s.journal.Close(); err != nil {
			errs = append(errs, err)
		} else if pipeErr == nil {
			s.recordJournalEnd()
		}
		s.dirLock.release() // after the last write to the directory
		if s.metricsS != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			s.metricsS.Shutdown(ctx)
			cancel()
		}
		s.log.Info("fixvenue stopped", "last_durable_seq", strconv.FormatInt(s.pipe.Durable().Load(), 10))
	})
	return errors.Join(errs...)
}

// journalFlushMetrics registers the journal's flush histograms and returns
// the hook that feeds them (called on the journal goroutine after each flush).
func (s *Server) journalFlushMetrics() func(journal.FlushInfo) {
	fsyncs := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fixvenue_journal_fsync_seconds",
		Help:    "Time in fdatasync per journal flush (group commit).",
		Buckets: prometheus.ExponentialBuckets(25e-6, 2, 14)})
	batch := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fixvenue_journal_flush_records",
		Help:    "Commands made durable by one journal flush.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 14)})
	s.registry.MustRegister(fsyncs, batch)
	return func(fi journal.FlushInfo) {
		if fi.FsyncNs > 0 {
			fsyncs.Observe(float64(fi.FsyncNs) / 1e9)
		}
		batch.Observe(float64(fi.Records))
	}
}

func (s *Server) registerCoreMetrics() {
	p := s.pipe
	mt := s.matcherThread
	cpu := ""
	if mt.Pinned {
		cpu = strconv.Itoa(mt.CPU)
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "fixvenue_matcher_thread_info",
		Help:        "How the matcher runs (always 1): locked to its OS thread or not, its wait strategy, the CPU it is pinned to, and why.",
		ConstLabels: prometheus.Labels{"locked": strconv.FormatBool(mt.Locked), "wait": mt.Wait.String(), "cpu": cpu, "reason": mt.Reason}})
	info.Set(1)
	s.usage.register(s.registry, s.matcher) // the matcher does not run yet
	s.registry.MustRegister(s.refusedOnReplay.metrics()...)
	s.registry.MustRegister(info,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_data_dir_free_bytes",
			Help: "Space left on the data directory's file system; when the disk refuses a write of the journal or a FIX store the venue halts."},
			func() float64 { return dataDirFreeBytes(s.cfg.Venue.DataDir) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_halted",
			Help: "1 once the venue has failed-stop (journal or matcher failure): every order is refused until it is restarted; the cause is in the log and the admin API's status."},
			func() float64 {
				if p.Err() != nil {
					return 1
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_command_ring_occupancy", Help: "Commands published but not yet applied by the matcher."},
			func() float64 { return float64(p.Commands.Cursor() - p.MatcherSequence()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_journal_durable_lag", Help: "Commands published but not yet durable."},
			func() float64 { return float64(int64(p.SeqBase()) + p.Commands.Cursor() - p.Durable().Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_journal_durable_seq", Help: "Last durable command sequence."},
			func() float64 { return float64(p.Durable().Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_journal_stalled_seconds",
			Help: "How long commands have waited with none made durable (0 while the journal keeps up): a disk that stops completing writes shows here, its orders unanswered, while fixvenue_halted stays 0."},
			func() float64 { return time.Duration(s.stall.stalledNs.Load()).Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_matcher_parks_total", Help: "Times the matcher parked waiting for commands since start; each ends with a wake-up of its thread (an OS hand-off when it is locked), with more than one P once per journal batch at most."},
			func() float64 { return float64(p.MatcherParks()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_events_total", Help: "Events written by the matcher since start."},
			func() float64 { return float64(p.EventsPublished()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_fix_store_fsyncs_total", Help: "FIX session store files fdatasynced (once per journal.fix_store_sync for each store written)."},
			func() float64 { return float64(s.stores.Syncs()) }),
	)
	// Snapshots only shorten a start, so a failing one stops nothing:
	// these are how it is noticed (docs/ARCHITECTURE.md, "The path of an order", Snapshots).
	s.registry.MustRegister(snapshotMetrics("fixvenue_", "", func() []*journal.Snapshotter {
		return []*journal.Snapshotter{s.snaps, s.mdSnaps, s.consoleSnaps}
	})...)
}
