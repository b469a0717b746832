package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/gateway/fixmd"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/latency"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/prometheus/client_golang/prometheus"
)

// buildFeed creates the market data feed from the configuration.
func (s *Server) buildFeed() error {
	// Snapshots come from snapshot_interval, and also from an end of day
	// (the schedule's, or an operator's) without one: the feed's state goes
	// beside every one, or the start passes the snapshot over.
	if err := os.MkdirAll(s.mdStateDir(), 0o755); err != nil {
		return fmt.Errorf("market data state: %w", err)
	}
	// One more than the journal keeps, so the newest snapshot's state is
	// there even while the next one is being written.
	var err error
	if s.mdSnaps, err = journal.NewSnapshotter(journal.SnapshotterConfig{Dir: s.mdStateDir(), Keep: journal.DefaultSnapshotsKept + 1,
		Durable: s.journal.DurableSequence(), Logger: s.log.With("state", "market data"), Sync: s.opts.JournalSync}); err != nil {
		return err
	}
	capture := s.mdSnaps.Capture
	if _, port, _ := net.SplitHostPort(s.cfg.MarketData.FeedAddr); port == "0" {
		// A destination, not a listener: the system picks no port for it.
		s.log.Warn("marketdata.feed_addr has port 0: the UDP feed goes nowhere (receivers listen on the port it names); "+
			"FIX market data and the recovery service still work", "feed_addr", s.cfg.MarketData.FeedAddr)
	}
	if s.fixmd, s.feed, err = newFeed(s.cfg, s.orderToFeed, capture, false); err != nil {
		return err
	}
	s.registerFeedMetrics()
	return nil
}

// registerFeedMetrics exports the feed's and its recovery service's counters,
// and whether the feed stopped on an error: a stopped feed still sends
// heartbeats with its last sequence number and serves its last books, so its
// receivers see a quiet feed in sync while the venue trades on.
func (s *Server) registerFeedMetrics() {
	counter := func(name, help string, v func(marketdata.FeedStats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(v(s.feed.Stats())) })
	}
	s.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_md_next_seq", Help: "Sequence number of the feed's next message."},
			func() float64 { return float64(s.feed.Stats().NextSeq) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_md_stopped",
			Help: "1 once the feed stopped on an error (see the log): its receivers get heartbeats and its last books, no new messages."},
			func() float64 {
				if s.feedStopped.Load() {
					return 1
				}
				return 0
			}),
		// The publisher counts its heartbeats apart from its packets
		// (marketdata.FeedStats): the packets are the sequenced ones.
		counter("fixvenue_md_packets_sent_total", "Feed packets of sequenced messages sent (heartbeats are fixvenue_md_heartbeats_total).",
			func(f marketdata.FeedStats) uint64 { return f.PacketsSent }),
		counter("fixvenue_md_bytes_sent_total", "Bytes of the feed packets of sequenced messages sent (heartbeats not included).",
			func(f marketdata.FeedStats) uint64 { return f.BytesSent }),
		counter("fixvenue_md_send_errors_total", "Feed datagrams the socket refused, on either line (receivers recover them).", func(f marketdata.FeedStats) uint64 { return f.SendErrors }),
		counter("fixvenue_md_line_b_packets_sent_total", "Feed packets of sequenced messages sent on the B line (marketdata.feed_b_addr; 0 without one).",
			func(f marketdata.FeedStats) uint64 { return f.LineBPacketsSent }),
		counter("fixvenue_md_heartbeats_total", "Feed heartbeats sent.", func(f marketdata.FeedStats) uint64 { return f.HeartbeatsSent }),
		counter("fixvenue_md_recovery_connections_total", "Recovery connections accepted.", func(f marketdata.FeedStats) uint64 { return f.Recovery.ConnsAccepted }),
		counter("fixvenue_md_recovery_connections_refused_total", "Recovery connections closed at once: marketdata.recovery connections bound reached and none idle, or a standby's feed.",
			func(f marketdata.FeedStats) uint64 { return f.Recovery.ConnsRefused + f.Recovery.StandbyRefused }),
		counter("fixvenue_md_recovery_connections_evicted_total", "Idle recovery connections closed to admit a new one at the bound.", func(f marketdata.FeedStats) uint64 { return f.Recovery.ConnsEvicted }),
		counter("fixvenue_md_retransmits_total", "Retransmission requests answered in full.", func(f marketdata.FeedStats) uint64 { return f.Recovery.Retransmits }),
		counter("fixvenue_md_retransmits_rejected_total", "Retransmission requests refused (rate limit, too many messages, invalid range, older than the window).", func(f marketdata.FeedStats) uint64 { return f.Recovery.RetransmitsRejected }),
		counter("fixvenue_md_snapshots_total", "Book snapshots served.", func(f marketdata.FeedStats) uint64 { return f.Recovery.Snapshots }),
		counter("fixvenue_md_snapshots_rejected_total", "Book snapshot requests refused (rate limit, unknown instrument, too large).", func(f marketdata.FeedStats) uint64 { return f.Recovery.SnapshotsRejected }),
		counter("fixvenue_md_recovery_accept_errors_total", "Accepts of the recovery listener that failed (out of file descriptors or the like), each tried again after a pause.",
			func(f marketdata.FeedStats) uint64 { return f.Recovery.AcceptErrors }),
		counter("fixvenue_md_recovery_protocol_errors_total", "Recovery connections closed for a malformed request.", func(f marketdata.FeedStats) uint64 { return f.Recovery.ProtocolErrors }),
		// FIX market data on the order sessions: its bound is per session
		// (fixmd.SubscriptionsMax), and a client refused at it sees only
		// its own MarketDataRequestReject.
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_fix_md_subscriptions",
			Help: "FIX market data subscriptions open, of every session (each at most " + strconv.Itoa(fixmd.SubscriptionsMax) + ")."},
			func() float64 { return float64(s.fixmd.Stats().Subscriptions) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_fix_md_subscriptions_refused_total",
			Help: "FIX market data subscription requests refused (281=2): their session would pass its " + strconv.Itoa(fixmd.SubscriptionsMax) + " subscriptions."},
			func() float64 { return float64(s.fixmd.Stats().Refused) }),
	)
}

// newFeed builds the FIX market data handler and the feed from the
// configuration; capture, when set, saves the feed's state at snapshots.
// A standby feed (a cluster follower's) starts in replay mode, and sends
// nothing until it leads, but the B line with marketdata.feed_b_from =
// "followers" (ClusterNode.appliedBatch).
func newFeed(cfg *config.Config, orderToFeed *latency.Recorder, capture func(uint64, func(io.Writer) error) error, standby bool) (*fixmd.Handler, *marketdata.Feed, error) {
	tc, err := trackerConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	md, err := fixmd.New(tc.Instruments)
	if err != nil {
		return nil, nil, err
	}
	f, err := marketdata.NewFeed(marketdata.FeedConfig{Tracker: tc, FeedAddr: cfg.MarketData.FeedAddr, FeedBAddr: cfg.MarketData.FeedBAddr,
		BLineFromStandby: cfg.MarketData.FeedBFrom == config.FeedBFromFollowers, Standby: standby,
		Listener: md.Cache(), CaptureState: capture,
		HeartbeatInterval: cfg.MarketData.HeartbeatInterval.Duration, OrderToFeed: orderToFeed,
		Recovery: marketdata.RecoveryConfig{Addr: cfg.MarketData.RecoveryAddr}})
	switch {
	case errors.Is(err, marketdata.ErrFeedAddr):
		// Named by the key that sets it, as a listener's error is
		// (fix.addr, metrics.addr, …): the feed's words named no key.
		return nil, nil, fmt.Errorf("marketdata.feed_addr: %w", err)
	case errors.Is(err, marketdata.ErrFeedBAddr):
		return nil, nil, fmt.Errorf("marketdata.feed_b_addr: %w", err)
	case errors.Is(err, marketdata.ErrRecoveryListen):
		return nil, nil, fmt.Errorf("marketdata.recovery_addr: %w", err)
	case err != nil:
		return nil, nil, err
	}
	return md, f, nil
}

// trackerConfig is the market data tracker of the configuration: a feed's,
// or a cluster's FeedState.
func trackerConfig(cfg *config.Config) (marketdata.TrackerConfig, error) {
	tc := marketdata.TrackerConfig{OrdersMax: cfg.Engine.OrdersMax, InstrumentsMax: cfg.InstrumentsMax()}
	for _, in := range cfg.Instruments {
		def, err := marketdata.NewInstrumentDef(in.ID, in.Symbol, in.Tick, in.LotSize, in.Status)
		if err != nil {
			return tc, fmt.Errorf("marketdata instrument %s: %w", in.Symbol, err)
		}
		tc.Instruments = append(tc.Instruments, def)
		// Levels per side cover the whole price band.
		band := in.RefPriceTicks*in.BandPercent/100*2 + 2
		if int(band) > tc.LevelsMax {
			tc.LevelsMax = int(band)
		}
	}
	return tc, nil
}

// committedEvents adds an event-ring consumer that is handed the events of
// durable, completely applied commands only (marketdata.RingSource): the
// feed and the console read the stream behind durability.
func (s *Server) committedEvents() marketdata.RingSource {
	barrier, own := s.pipe.AddEventConsumer()
	p := s.pipe
	return marketdata.RingSource{Ring: p.Events, Barrier: barrier, Sequence: own,
		CommandsReady: func() int64 {
			applied := int64(p.SeqBase()) + p.MatcherSequence()
			if d := p.Durable().Load(); d < applied {
				return d
			}
			return applied
		},
		Durable: p.Durable().Load}
}

// startFeed consumes the event ring (behind durability) and serves heartbeats
// and recovery.
func (s *Server) startFeed() {
	src := s.committedEvents()
	ctx, cancel := context.WithCancel(context.Background())
	s.stopFeed = cancel
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		if err := s.feed.Run(src); err != nil && !errors.Is(err, context.Canceled) && !s.closing.Load() {
			s.feedStopped.Store(true)
			s.log.Error("market data feed stopped", "err", err)
		}
	}()
	go func() {
		defer s.wg.Done()
		if err := s.feed.Serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Error("market data recovery service stopped", "err", err)
		}
	}()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.fixmd.Run()
	}()
	lineB := "none"
	switch {
	case s.cfg.MarketData.FeedBAddr == "":
	case s.cfg.MarketData.FeedBFrom == config.FeedBFromFollowers:
		lineB = s.cfg.MarketData.FeedBAddr + " (from the followers)"
	default:
		lineB = s.feed.FeedBAddr().String()
	}
	s.log.Info("market data feed", "udp", s.feed.FeedAddr().String(), "line_b", lineB, "recovery", s.feed.RecoveryAddr().String())
}
