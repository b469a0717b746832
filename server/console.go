package server

import (
	"errors"

	"github.com/fixvenue/fixvenue/console"
	"github.com/fixvenue/fixvenue/latency"
	"github.com/fixvenue/fixvenue/marketdata"
)

// This file wires the web console (package console) onto the admin
// address, and rotates the venue's latency histograms (package latency).

// buildConsole creates the console and its event consumer; the pipeline
// must exist and not yet run.
func (s *Server) buildConsole() error {
	a := s.cfg.Admin
	if !a.Enabled() || !a.Console.Enabled {
		return nil
	}
	cc := console.Config{Settings: a.Console, Ops: s.ops, Events: s.committedEvents(), OrderToER: s.orderToER,
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
	return nil
}

// startConsole runs the console's consumer and the latency rotation.
func (s *Server) startConsole() {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		latency.Run(s.stopLatency, s.orderToER, s.orderToFeed)
	}()
	if s.console == nil {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.console.Run(); err != nil && !errors.Is(err, marketdata.ErrFeedClosed) && !s.closing.Load() {
			s.log.Error("console: event consumer stopped", "err", err)
		}
	}()
}

// Console exposes the web console (tests); nil when it is off.
func (s *Server) Console() *console.Console { return s.console }
