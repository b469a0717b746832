package fixtests_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/fixtests"
	"github.com/fixvenue/fixvenue/internal/fixcheck"
	"github.com/fixvenue/fixvenue/server"
)

// This file runs the conformance suite against the real venue, built in this
// process from the same configuration files as `make conformance`
// (scripts/conformance.sh), so that `make test` proves conformance too. The
// two QuickFIX heartbeat scripts (12 s and 34 s) run only with -long or
// FIXTESTS_LONG=1; -short skips the venue altogether.

// venueLogEnv set to 1 prints the venue's log, to see what the venue thought
// of a failing script.
const venueLogEnv = "FIXTESTS_VENUE_LOG"

// knownVenueFailures are scripts the venue fails today, each with the reason.
// They are run and reported, and the test fails when one of them starts to
// pass, so that this list never outlives the fault it records. Everything
// else must pass.
var knownVenueFailures = map[string]string{}

// venue is a venue running in the test process.
type venue struct {
	fixAddr, metricsAddr string
}

// startVenue starts the venue with fixtests/<configFile>, on ports the OS
// chooses and in a temporary data folder, and stops it when the test ends.
// QuickFIX/Go keeps sessions in a process-wide registry, so venues (and the
// QuickFIX/Go acceptors of the other tests) must not overlap in time.
func startVenue(t *testing.T, configFile string) venue {
	t.Helper()
	root, err := fixtests.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(filepath.Join(root, "fixtests", configFile))
	if err != nil {
		t.Fatalf("conformance configuration: %v", err)
	}
	cfg.Venue.DataDir = t.TempDir()
	cfg.FIX.Addr = "127.0.0.1:0"
	cfg.Metrics.Addr = "127.0.0.1:0"
	cfg.Admin.Addr = "127.0.0.1:0"
	cfg.MarketData.RecoveryAddr = "127.0.0.1:0"
	logTo := io.Discard
	if os.Getenv(venueLogEnv) != "" {
		logTo = os.Stderr
	}
	srv, err := server.New(cfg, server.Options{Logger: slog.New(slog.NewTextHandler(logTo, nil))})
	if err != nil {
		t.Fatalf("venue: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("venue start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("venue close: %v", err)
		}
	})
	return venue{fixAddr: srv.FIXAddr(), metricsAddr: srv.MetricsAddr()}
}

// scriptsDir returns fixtests/scripts/<name> as an absolute path.
func scriptsDir(t *testing.T, name string) string {
	t.Helper()
	root, err := fixtests.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "fixtests", "scripts", name)
}

// runAgainstVenue runs the selected scripts and checks the outcome: every
// script passes except the known venue failures, which must still fail.
func runAgainstVenue(t *testing.T, v venue, o fixtests.Options, wantAtLeast int) {
	t.Helper()
	var out bytes.Buffer
	o.Addr = v.fixAddr
	o.Setter = fixtests.HTTPSetter{Addr: v.metricsAddr}
	o.Check = fixcheck.Check // every answer is one a validating client accepts
	o.Out = &out
	sum, err := fixtests.RunDir(context.Background(), o)
	t.Logf("report:\n%s", out.String())
	if err != nil {
		t.Fatalf("RunDir: %v", err)
	}
	var unexpected, fixed []string
	for _, r := range sum.Results {
		_, known := knownVenueFailures[r.Name]
		switch {
		case !r.Passed && !known:
			unexpected = append(unexpected, r.Name)
		case r.Passed && known:
			fixed = append(fixed, r.Name)
		}
	}
	if len(unexpected) > 0 {
		t.Errorf("scripts failed against the venue: %s", strings.Join(unexpected, ", "))
	}
	if len(fixed) > 0 {
		t.Errorf("known venue failures now pass; remove them from knownVenueFailures: %s", strings.Join(fixed, ", "))
	}
	if len(sum.Results) < wantAtLeast {
		t.Errorf("%d scripts ran, want at least %d", len(sum.Results), wantAtLeast)
	}
	for _, r := range sum.Results {
		if reason, known := knownVenueFailures[r.Name]; known && !r.Passed {
			t.Logf("known venue failure %s: %s", r.Name, reason)
		}
	}
}

// TestVenueConformance runs, against one venue started from
// fixtests/conformance.toml: the QuickFIX session-layer scripts (all but the
// 14 that assume an echo application) and our session and venue scripts.
func TestVenueConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the venue and runs about 120 scripts (some 30 s); run without -short")
	}
	dirs := []string{scriptsDir(t, "session"), scriptsDir(t, "venue")}
	want := 14 + 40 // at least: the 14 echo situations, 40 venue scripts
	var skipEcho func(string) string
	qf, err := fixtests.QuickFIXDefsDir()
	switch _, statErr := os.Stat(qf); {
	case err != nil || statErr != nil:
		t.Logf("the QuickFIX scripts are missing (%v %v); set %s to run them too", err, statErr, fixtests.QuickFIXDefsEnv)
	default:
		dirs = append([]string{qf}, dirs...)
		skipEcho = fixtests.SkipQuickFIXEcho(qf)
		want += 45
		if !runLong() {
			want -= len(slowQuickFIXScripts)
		}
	}
	v := startVenue(t, "conformance.toml")
	runAgainstVenue(t, v, fixtests.Options{
		Dirs: dirs,
		Skip: skipEchoAndSlow(skipEcho),
	}, want)
}

// TestVenueExtraQuickFIXSuites runs the extra QuickFIX suites that need other
// session settings, each against a venue of its own started from
// fixtests/conformance-<suite>.toml; nextexpectedseqnum sets sequence numbers
// through the venue's test hook.
func TestVenueExtraQuickFIXSuites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the venue twice; run without -short")
	}
	qf := quickfixDefs(t)
	for _, tt := range []struct {
		suite   string
		scripts int
	}{
		{"nextexpectedseqnum", 4},
		{"lastseqnumprocessed", 1},
	} {
		t.Run(tt.suite, func(t *testing.T) {
			v := startVenue(t, "conformance-"+tt.suite+".toml")
			runAgainstVenue(t, v, fixtests.Options{Dirs: []string{filepath.Join(qf, "extra", tt.suite)}}, tt.scripts)
		})
	}
}
