package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/gateway/fixmd"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/marketdata"
)

// buildFeed creates the market data feed from the configuration.
func (s *Server) buildFeed() error {
	cfg := s.cfg
	tc := marketdata.TrackerConfig{OrdersMax: cfg.Engine.OrdersMax}
	for _, in := range cfg.Instruments {
		def, err := marketdata.NewInstrumentDef(in.ID, in.Symbol, in.Tick, in.LotSize, in.Status)
		if err != nil {
			return fmt.Errorf("marketdata instrument %s: %w", in.Symbol, err)
		}
		tc.Instruments = append(tc.Instruments, def)
		// Levels per side cover the whole price band.
		band := in.RefPriceTicks*in.BandPercent/100*2 + 2
		if int(band) > tc.LevelsMax {
			tc.LevelsMax = int(band)
		}
	}
	md, err := newFixMD(s, tc.Instruments)
	if err != nil {
		return err
	}
	s.fixmd = md
	f, err := marketdata.NewFeed(marketdata.FeedConfig{Tracker: tc, FeedAddr: cfg.MarketData.FeedAddr, Listener: md.cache,
		HeartbeatInterval: cfg.MarketData.HeartbeatInterval.Duration,
		Recovery:          marketdata.RecoveryConfig{Addr: cfg.MarketData.RecoveryAddr}})
	if err != nil {
		return err
	}
	s.feed = f
	return nil
}

// fixMD is FIX market data on the order sessions (gateway/fixmd) with the
// depth cache that the feed keeps current for it.
type fixMD struct {
	*fixmd.Handler
	cache *marketdata.DepthCache
}

func newFixMD(_ *Server, defs []marketdata.InstrumentDef) (*fixMD, error) {
	h, err := fixmd.New(defs)
	if err != nil {
		return nil, err
	}
	return &fixMD{Handler: h, cache: h.Cache()}, nil
}

// replayWithFeed replays the whole journal into the matcher and hands each
// command's events to the feed, so that the feed's books and sequence numbers
// are exactly those it had before the restart.
func (s *Server) replayWithFeed() (int64, error) {
	r, err := journal.NewReader(filepath.Join(s.cfg.Venue.DataDir, "journal"), journal.ReaderOptions{Logger: s.log})
	if err != nil {
		return 0, err
	}
	defer r.Close()
	sink := core.NewBufferSink(256)
	var events [][]byte
	var n int64
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		sink.Reset()
		if err := s.matcher.Apply(rec.Payload, sink); err != nil {
			return n, fmt.Errorf("command seq %d (%s at %d): %w", rec.Seq, rec.Segment, rec.Offset, err)
		}
		events = events[:0]
		for i := 0; i < sink.Len(); i++ {
			events = append(events, sink.Event(i))
		}
		if len(events) > 0 {
			if err := s.feed.ApplyBatch(events); err != nil {
				return n, err
			}
		}
		n++
	}
}

// startFeed consumes the event ring (behind durability) and serves heartbeats
// and recovery.
func (s *Server) startFeed() {
	barrier, own := s.pipe.AddEventConsumer()
	p := s.pipe
	src := marketdata.RingSource{Ring: p.Events, Barrier: barrier, Sequence: own,
		CommandsReady: func() int64 {
			applied := int64(p.SeqBase()) + p.MatcherSequence()
			if d := p.Durable().Load(); d < applied {
				return d
			}
			return applied
		},
		Durable: p.Durable().Load}
	ctx, cancel := context.WithCancel(context.Background())
	s.stopFeed = cancel
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		if err := s.feed.Run(src); err != nil && !errors.Is(err, context.Canceled) && !s.closing.Load() {
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
	s.log.Info("market data feed", "udp", s.feed.FeedAddr().String(), "recovery", s.feed.RecoveryAddr().String())
}
