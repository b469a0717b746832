package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fixvenue/fixvenue/console"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/latency"
	"github.com/fixvenue/fixvenue/marketdata"
)

// This file wires the web console (package console) onto the admin
// address, and rotates the venue's latency histograms (package latency).

// buildConsole creates the console and its event consumer, or the tape's
// alone when the console is off, and makes the admin API report the day
// from the tape (ops.DaySource), the figures the console shows; the
// pipeline must exist and not yet run.
func (s *Server) buildConsole() error {
	if s.tape != nil {
		s.ops.SetDaySource(s.tape)
		s.ops.SetCommandWatch(s.tape.Command) // the account of a mass cancel, as its result names none
	}
	a := s.cfg.Admin
	if !a.Enabled() || !a.Console.Enabled {
		if s.tape != nil {
			s.tapeEvents = s.committedEvents() // the admin API's day figures, without the console
		}
		return nil
	}
	cc := console.Config{Settings: a.Console, Ops: s.ops, Events: s.committedEvents(), Tape: s.tape, OrderToER: s.orderToER,
		OrderToFeed: s.orderToFeed, SecureCookies: a.TLSCertFile != "", Logger: s.log}
	if s.fixmd != nil {
		cc.Depth = s.fixmd.Cache()
	}
	c, err := console.New(cc)
	if err != nil {
		return err
	}
	s.console = c
	s.ops.SetConsole(c)
	s.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_console_streams",
			Help: "Console event streams open (at most admin.console.streams_max)."},
			func() float64 { open, _ := c.Streams(); return float64(open) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_console_streams_dropped_total",
			Help: "Console event streams closed because the browser did not read them."},
			func() float64 { _, dropped := c.Streams(); return float64(dropped) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_console_streams_refused_total",
			Help: "Console event streams refused (503) because admin.console.streams_max were open."},
			func() float64 { return float64(c.StreamsRefused()) }))
	return nil
}

// buildTape makes the console's tape before the replay, which rebuilds it
// (Server.replay), and its state's snapshotter: the state is saved beside
// every snapshot, periodic or end of day, so that a restart from any of them
// has the day's trades. The admin API reports the day from it too, so it is
// kept whenever the admin API is on, with the console or without. A new
// leader of a cluster takes the tape its replica kept (Replica.Tape).
func (s *Server) buildTape() error {
	if !s.cfg.Admin.Enabled() {
		return nil
	}
	if err := os.MkdirAll(s.consoleStateDir(), 0o755); err != nil {
		return fmt.Errorf("console state: %w", err)
	}
	// One more than the journal keeps, as for the feed's state.
	snaps, err := journal.NewSnapshotter(journal.SnapshotterConfig{Dir: s.consoleStateDir(), Keep: journal.DefaultSnapshotsKept + 1,
		Durable: s.journal.DurableSequence(), Logger: s.log.With("state", "console"), Sync: s.opts.JournalSync})
	if err != nil {
		return err
	}
	s.consoleSnaps = snaps
	ids := make([]uint32, 0, len(s.cfg.Instruments))
	for _, in := range s.cfg.Instruments {
		ids = append(ids, in.ID)
	}
	s.tape = console.NewTape(ids, snaps.Capture)
	return nil
}

// consoleStateDir holds the console tape's state saved with each snapshot
// (console/state.go), in the journal's snapshot file format, named by the
// same seq.
func (s *Server) consoleStateDir() string { return filepath.Join(s.cfg.Venue.DataDir, "consolestate") }

// startConsole runs the console's consumer and the latency rotation.
func (s *Server) startConsole() {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		latency.Run(s.stopLatency, s.orderToER, s.orderToFeed)
	}()
	run := func() error { return s.console.Run() }
	switch {
	case s.console == nil && s.tape == nil:
		return
	case s.console == nil:
		run = func() error { return s.tape.Run(s.tapeEvents) }
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := run(); err != nil && !errors.Is(err, marketdata.ErrFeedClosed) && !s.closing.Load() {
			s.log.Error("console: event consumer stopped", "err", err)
		}
	}()
}

// Console exposes the web console (tests); nil when it is off.
func (s *Server) Console() *console.Console { return s.console }
