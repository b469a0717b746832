#!/usr/bin/env bash
# FIX conformance suite against the real venue (`make conformance` runs `make build` first).
#
# Starts bin/fixvenue with fixtests/conformance.toml on OS-chosen loopback ports and a fresh
# temporary data directory, runs through fixtests' runner (fixtests/cmd/fixconform):
#   - the QuickFIX FIX 4.4 server scripts from $FIXVENUE_QUICKFIX_DEFS (default
#     ../shared/conformance/quickfix-fix44 next to the repository), minus the 14 that assume
#     QuickFIX's echo application;
#   - our scripts: fixtests/scripts/session (the 14 echo situations, the venue's way) and
#     fixtests/scripts/venue;
# then stops it, and does the same for the extra QuickFIX suites that need other session
# settings (extra/nextexpectedseqnum, extra/lastseqnumprocessed), each in a venue of its own.
# The QuickFIX scripts are read where they lie, never copied; when their folder is missing
# the run says so and skips only them.
#
# The last line is "N passed, M failed" over all runs; the exit status is 0 only when every
# script passed. Each venue start and each run is bounded in time (CONFORMANCE_RUN_TIMEOUT,
# seconds, per run; default 300).
set -uo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
bin=${FIXVENUE_BIN:-bin/fixvenue}
qf=${FIXVENUE_QUICKFIX_DEFS:-$root/../shared/conformance/quickfix-fix44}
export FIXVENUE_QUICKFIX_DEFS=$qf
run_timeout=${CONFORMANCE_RUN_TIMEOUT:-300}
VENUE_BIN=$bin
VENUE_START_TIMEOUT=30
. scripts/lib/venue.sh

if [ ! -x "$bin" ]; then
	echo "conformance: $bin is missing; run make build (or make conformance)" >&2
	exit 2
fi

venue_workdir conformance
tmp=$venue_work

# start_venue NAME CONFIG: starts a venue, sets fix_addr and metrics_addr from its ready file.
start_venue() {
	local name=$1 config=$2
	venue_start "$tmp/$name.log" --config "$config" --data "$tmp/$name-data" \
		--fix-addr 127.0.0.1:0 --metrics-addr 127.0.0.1:0 --md-recovery-addr 127.0.0.1:0 || return 1
	fix_addr=$venue_fix_addr
	metrics_addr=$venue_metrics_addr
	echo "== venue $name: FIX on $fix_addr, test hook on $metrics_addr ($config)"
}

fixconform=$tmp/fixconform
if ! go build -o "$fixconform" ./fixtests/cmd/fixconform; then
	echo "conformance: cannot build the runner" >&2
	exit 2
fi

passed=0
failed=0
broken=0

# run_scripts NAME ARGS...: runs the runner, prints its report, adds up its summary line.
run_scripts() {
	local name=$1 out=$tmp/$1.out
	shift
	timeout --kill-after=10 "$run_timeout" "$fixconform" -addr "$fix_addr" -hook-addr "$metrics_addr" "$@" >"$out" 2>&1
	local status=$?
	cat "$out"
	local line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
	if [ -z "$line" ] || [ "$status" -gt 1 ]; then
		echo "conformance: run $name did not complete (exit $status)" >&2
		broken=$((broken + 1))
	fi
	if [ -n "$line" ]; then
		passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
		failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
	fi
}

if [ ! -d "$qf" ]; then
	echo "The QuickFIX scripts are missing from $qf: set FIXVENUE_QUICKFIX_DEFS to a folder holding" \
		"them (QuickFIX/Go's _test/definitions/server/fix44). Only they are skipped."
fi

if start_venue main fixtests/conformance.toml; then
	run_scripts main -skip-echo -scripts "$qf,fixtests/scripts/session,fixtests/scripts/venue"
	venue_stop
else
	broken=$((broken + 1))
fi

for suite in nextexpectedseqnum lastseqnumprocessed; do
	[ -d "$qf/extra/$suite" ] || continue
	if start_venue "$suite" "fixtests/conformance-$suite.toml"; then
		run_scripts "$suite" -scripts "$qf/extra/$suite"
		venue_stop
	else
		broken=$((broken + 1))
	fi
done

echo
echo "$passed passed, $failed failed"
if [ "$failed" -gt 0 ] || [ "$broken" -gt 0 ] || [ "$passed" -eq 0 ]; then
	exit 1
fi
exit 0
