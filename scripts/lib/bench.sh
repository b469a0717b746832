# The set-up the benchmark scripts share. Sourced, not run, from the
# repository root:
#
#   . scripts/lib/bench.sh
#   bench_bin SCRIPT
#       Sets BIN (default bin/fixvenue); when it is not built, says so on
#       stderr, naming SCRIPT, and exits 1.
#   bench_out NAME
#       Sets stamp (the UTC time, e.g. 20260102T030405Z) and OUT (default
#       docs/bench/NAME/$stamp), and makes the directory OUT.
#   bench_machine
#       Prints the CPU model, the CPU count, the kernel and the Go version.
#   bench_loadavg
#       Prints the 1, 5 and 15 minute load averages ("unknown" without /proc).
#   bench_venue NAME
#       For a script that runs venues and load against them (after bench_bin):
#       sources venue.sh, with VENUE_BIN=$BIN and VENUE_START_TIMEOUT=$START_TIMEOUT,
#       and duration.sh; makes the work directory and the traps (venue_workdir
#       NAME), its path in work; sets limit, the bound in seconds of one load
#       run: DURATION+WARMUP+DRAIN plus RUN_GRACE.

bench_bin() {
	BIN=${BIN:-bin/fixvenue}
	[ -x "$BIN" ] || { echo "$1: $BIN not built (make build)" >&2; exit 1; }
}

bench_out() {
	stamp=$(date -u +%Y%m%dT%H%M%SZ)
	OUT=${OUT:-docs/bench/$1/$stamp}
	mkdir -p "$OUT"
}

bench_machine() {
	echo "$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), nproc $(nproc), kernel $(uname -r), $(go version | cut -d' ' -f3)"
}

bench_loadavg() {
	cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown
}

bench_venue() {
	VENUE_BIN=$BIN
	VENUE_START_TIMEOUT=$START_TIMEOUT
	. scripts/lib/venue.sh
	. scripts/lib/duration.sh
	venue_workdir "$1"
	work=$venue_work
	limit=$(($(duration_sum_s "$DURATION" "$WARMUP" "$DRAIN") + RUN_GRACE))
}
