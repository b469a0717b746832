package server

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
)

// unracedTests are this package's tests that skip themselves under the race
// detector (skipUnderRace): load runs, which the detector slows past their
// pace, and allocation counts, which its bookkeeping inflates. make test runs
// this package's other tests in its race pass alone, where they run with more
// checks than without it, and only these in its first pass
// (scripts/test.sh, unracedOnlyEnv): running every test of the package in
// both passes took about seven minutes of CI, on two CPUs, for nothing the
// race pass does not check.
var unracedTests = []string{
	"TestAllocationsPerOrder",
	"TestMassStatusOfManyOrdersStartsAtOnce",
}

// unracedOnlyEnv, set to 1, limits a run of this package to unracedTests.
const unracedOnlyEnv = "FIXVENUE_TEST_UNRACED_ONLY"

// skipUnderRace skips t under the race detector. A test not listed in
// unracedTests fails instead, in every build: make test would run it in
// neither of its passes.
func skipUnderRace(t *testing.T, why string) {
	t.Helper()
	if !slices.Contains(unracedTests, t.Name()) {
		t.Fatalf("%s skips itself under the race detector but is not in unracedTests: make test's first pass would not run it either", t.Name())
	}
	if raceEnabled {
		t.Skip(why)
	}
}

// selectUnracedOnly, with unracedOnlyEnv set, runs only unracedTests (from
// TestMain, before the tests run).
func selectUnracedOnly() error {
	if os.Getenv(unracedOnlyEnv) != "1" {
		return nil
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	return flag.Set("test.run", "^("+strings.Join(unracedTests, "|")+")$")
}
