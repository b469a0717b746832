package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/server"
)

func cmdServe(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "configuration file (TOML); default: the embedded demo configuration")
	dataDir := fs.String("data", "", "data directory (overrides venue.data_dir)")
	fixAddr := fs.String("fix-addr", "", "FIX listen address (overrides fix.addr)")
	metricsAddr := fs.String("metrics-addr", "", "Prometheus listen address (overrides metrics.addr; \"off\" disables)")
	mdAddr := fs.String("md-addr", "", "market data UDP destination (overrides marketdata.feed_addr)")
	mdRecovery := fs.String("md-recovery-addr", "", "market data recovery TCP address (overrides marketdata.recovery_addr)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	printConfig := fs.Bool("print-default-config", false, "print the embedded default configuration and exit")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (written at shutdown)")
	traceFile := fs.String("trace", "", "write a runtime execution trace of the whole run to this file (large: for short runs)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *printConfig {
		os.Stdout.Write(config.Default())
		return 0
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue serve: --log-level: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)

	cfg, err := config.Load(*cfgPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue serve: %v\n", err)
		return 2
	}
	if *dataDir != "" {
		cfg.Venue.DataDir = *dataDir
	}
	if *fixAddr != "" {
		cfg.FIX.Addr = *fixAddr
	}
	switch *metricsAddr {
	case "":
	case "off":
		cfg.Metrics.Addr = ""
	default:
		cfg.Metrics.Addr = *metricsAddr
	}
	if *mdAddr != "" {
		cfg.MarketData.FeedAddr = *mdAddr
	}
	if *mdRecovery != "" {
		cfg.MarketData.RecoveryAddr = *mdRecovery
	}

	stopProfiles, err := startProfiles("fixvenue serve", *cpuProfile, *traceFile)
	if err != nil {
		return 2
	}
	defer stopProfiles()
	srv, err := server.New(cfg, server.Options{Logger: log})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue serve: %v\n", err)
		return 1
	}
	if err := srv.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue serve: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "fixvenue: FIX 4.4 on %s (TargetCompID %s, SenderCompID %s…%s); metrics on http://%s/metrics; Ctrl-C to stop\n",
		srv.FIXAddr(), cfg.Venue.SenderCompID, cfg.Sessions[0].CompID, cfg.Sessions[len(cfg.Sessions)-1].CompID, srv.MetricsAddr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	got := <-sig
	log.Info("shutting down", "signal", got.String())
	if err := srv.Close(); err != nil {
		log.Error("shutdown", "err", err)
		return 1
	}
	return 0
}
