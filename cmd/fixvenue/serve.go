package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
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
	adminAddr := fs.String("admin-addr", "", "admin API and console listen address (overrides admin.addr; \"off\" disables)")
	mdAddr := fs.String("md-addr", "", "market data UDP destination (overrides marketdata.feed_addr)")
	mdRecovery := fs.String("md-recovery-addr", "", "market data recovery TCP address (overrides marketdata.recovery_addr)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	printConfig := fs.Bool("print-default-config", false, "print the embedded default configuration and exit")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (written at shutdown)")
	traceFile := fs.String("trace", "", "write a runtime execution trace of the whole run to this file (large: for short runs)")
	memProfile := fs.String("memprofile", "", "write the allocations of the whole run (pprof allocs profile, sampled) to this file at shutdown")
	readyFile := fs.String("ready-file", "", "once serving, write the bound addresses and the pid to this file as JSON (atomically; removed at a clean stop)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: fixvenue serve [options]\n\nRuns the venue until SIGINT or SIGTERM.\n\noptions:\n")
		fs.PrintDefaults()
	}
	if exit, done := parseFlags(fs, args, os.Stdout, os.Stderr); done {
		return exit
	}
	if *printConfig {
		// Printed into the file a configuration starts from
		// (> venue.toml): a write cut short by a full disk left a partial
		// configuration behind an exit 0.
		if _, err := os.Stdout.Write(config.Default()); err != nil {
			fmt.Fprintf(os.Stderr, "fixvenue serve: --print-default-config: %v\n", err)
			return 1
		}
		return 0
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue serve: --log-level: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)

	cfg := loadConfig("serve", *cfgPath)
	if cfg == nil {
		return 2
	}
	if *dataDir != "" {
		cfg.Venue.DataDir = *dataDir
	}
	if *fixAddr != "" {
		cfg.FIX.Addr = *fixAddr
	}
	overrideAddr(&cfg.Metrics.Addr, *metricsAddr)
	if overrideAddr(&cfg.Admin.Addr, *adminAddr) {
		if errs := cfg.Admin.Validate(); len(errs) > 0 {
			fmt.Fprintf(os.Stderr, "fixvenue serve: --admin-addr: %v\n", errors.Join(errs...))
			return 2
		}
	}
	if *mdAddr != "" {
		cfg.MarketData.FeedAddr = *mdAddr
	}
	if *mdRecovery != "" {
		cfg.MarketData.RecoveryAddr = *mdRecovery
	}
	// The flags' addresses are checked as the configuration's are, before
	// the data directory is touched (the admin API's by its Validate,
	// above). A listener the server then cannot bind is named by its key
	// (fix.addr: …); an address a flag gave is named by the flag (flagOf),
	// which is where the operator looks, not in a file that may not hold
	// the key at all.
	flagOf := map[string]string{}
	for _, f := range []struct{ key, flag, addr string }{{"fix.addr", "--fix-addr", *fixAddr},
		{"metrics.addr", "--metrics-addr", *metricsAddr}, {"admin.addr", "--admin-addr", *adminAddr},
		{"marketdata.feed_addr", "--md-addr", *mdAddr}, {"marketdata.recovery_addr", "--md-recovery-addr", *mdRecovery}} {
		if f.addr == "" || f.addr == "off" {
			continue
		}
		flagOf[f.key] = f.flag
		check := config.CheckAddr
		switch f.flag {
		case "--admin-addr":
			continue
		case "--md-addr":
			check = config.CheckFeedAddr
		}
		if err := check(f.flag, f.addr); err != nil {
			fmt.Fprintf(os.Stderr, "fixvenue serve: %v\n", err)
			return 2
		}
	}
	if err := cfg.Metrics.CheckTestHooks(); err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue serve: %v (after --metrics-addr)\n", err)
		return 2
	}
	if err := cfg.CheckListeners(); err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue serve: %v (after the address flags)\n", err)
		return 2
	}
	if *readyFile != "" {
		if err := checkReadyFile(*readyFile); err != nil {
			fmt.Fprintf(os.Stderr, "fixvenue serve: --ready-file: %v\n", err)
			return 2
		}
	}

	stopProfiles, err := startProfiles("fixvenue serve", *cpuProfile, *traceFile)
	if err == nil && *memProfile != "" {
		stopCPU := stopProfiles
		stopProfiles = func() { stopCPU(); writeAllocsProfile("fixvenue serve", *memProfile) }
	}
	if err != nil {
		return 2
	}
	defer stopProfiles()
	if cfg.Cluster.Enabled() {
		if *fixAddr != "" {
			// Clients are sent to the peers' fix_addr, so a node listens
			// there and nowhere else.
			fmt.Fprintf(os.Stderr, "fixvenue serve: --fix-addr: a cluster node's FIX address is its [[cluster.peer]] fix_addr\n")
			return 2
		}
		return serveCluster(cfg, log, *readyFile, flagOf)
	}
	srv, err := server.New(cfg, server.Options{Logger: log})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue serve: %s\n", flagNamed(err, flagOf))
		return 1
	}
	// A stop is taken during the start too: the schedule's catch-up of
	// missed transitions runs before FIX opens, for as long as it takes.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	started := make(chan error, 1)
	go func() { started <- srv.Start() }()
	select {
	case err := <-started:
		if err != nil {
			fmt.Fprintf(os.Stderr, "fixvenue serve: %s\n", flagNamed(err, flagOf))
			return 1
		}
	case got := <-sig:
		log.Info("shutting down during the start", "signal", got.String())
		srv.AbortStart()
		<-started
		if err := srv.Close(); err != nil {
			log.Error("shutdown", "err", err)
			return 1
		}
		return 0
	}
	boundHeapGoal(cfg.Engine.GCHeadroomBytes, log)
	metrics := "metrics off"
	if a := srv.MetricsAddr(); a != "" {
		metrics = "metrics on http://" + a + "/metrics"
	}
	fmt.Fprintf(os.Stderr, "fixvenue: FIX 4.4 on %s (TargetCompID %s, SenderCompID %s…%s); %s; Ctrl-C to stop\n",
		srv.FIXAddr(), cfg.Venue.SenderCompID, cfg.Sessions[0].CompID, cfg.Sessions[len(cfg.Sessions)-1].CompID, metrics)
	if a := srv.AdminAddr(); a != "" && cfg.Admin.Console.Enabled {
		fmt.Fprintf(os.Stderr, "fixvenue: console on http://%s/ (admin API on the same address)\n", a)
	}
	if *readyFile != "" {
		ready := readyInfo{PID: os.Getpid(), FIXAddr: srv.FIXAddr(), MetricsAddr: srv.MetricsAddr(), AdminAddr: srv.AdminAddr(),
			FeedAddr: srv.FeedAddr(), RecoveryAddr: srv.RecoveryAddr()}
		if n := srv.EmbeddedNATS(); n != nil {
			ready.NATSURL = n.URL()
		}
		if err := writeReadyFile(*readyFile, ready); err != nil {
			fmt.Fprintf(os.Stderr, "fixvenue serve: --ready-file: %v\n", err)
			srv.Close()
			return 1
		}
		defer os.Remove(*readyFile)
	}

	got := <-sig
	log.Info("shutting down", "signal", got.String())
	if err := srv.Close(); err != nil {
		log.Error("shutdown", "err", err)
		return 1
	}
	return 0
}

// flagNamed is err's text with the configuration key it begins with
// replaced by the flag that gave that key's address (flagOf: key to flag,
// for the flags given).
func flagNamed(err error, flagOf map[string]string) string {
	text := err.Error()
	for key, flag := range flagOf {
		if rest, ok := strings.CutPrefix(text, key+": "); ok {
			return flag + ": " + rest
		}
	}
	return text
}

// overrideAddr applies a listener's address flag to its configured address:
// "" keeps the configuration's, "off" turns the listener off, anything else
// replaces it (and then the result is true: the caller validates it).
func overrideAddr(addr *string, flag string) (replaced bool) {
	switch flag {
	case "":
		return false
	case "off":
		*addr = ""
		return false
	default:
		*addr = flag
		return true
	}
}

// readyInfo is what --ready-file holds once the venue serves: the addresses
// it bound (ports chosen by the OS included; "" for what is off) and its pid.
type readyInfo struct {
	PID          int    `json:"pid"`
	FIXAddr      string `json:"fix_addr"`
	MetricsAddr  string `json:"metrics_addr"`
	AdminAddr    string `json:"admin_addr"`
	FeedAddr     string `json:"feed_addr"`
	RecoveryAddr string `json:"recovery_addr"`
	NATSURL      string `json:"nats_url,omitempty"`    // the embedded NATS server's
	StatusAddr   string `json:"status_addr,omitempty"` // a cluster node's /cluster/status
}

// checkReadyFile checks, before the data directory is touched, that the
// ready file can be written at path as writeReadyFile writes it: its
// directory exists and takes a new file, and path is not a directory. A
// path naming a directory, or a directory that takes no file, was found
// out only once the venue served, which then stopped.
func checkReadyFile(path string) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// writeReadyFile writes r as one line of JSON to path atomically: into a
// temporary file beside it, then renamed, so that a reader that sees the
// file sees all of it.
func writeReadyFile(path string, r readyInfo) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
